#!/usr/bin/python3
"""A stand-in for `shardplan check --format json DOC`, built on the reference model.

Only for testing differential.py's plumbing. With FAKE_CLI_BREAK=1 it corrupts some results
(messages of every 7th byte-length document, owned_names order is kept sorted) so mismatches can
be seen.
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import shardplan_reference as ref  # noqa: E402


def main(argv):
    if len(argv) != 4 or argv[0] != "check" or argv[1:3] != ["--format", "json"]:
        print("usage: fake_cli.py check --format json DOC", file=sys.stderr)
        return 2
    path = argv[3]
    res = ref.run_file(path)
    out = {"schema": "shardplan.result.v1", "ok": res["ok"], "diagnostics": []}
    if res["ok"]:
        out["owned"] = res["owned"]
        out["owned"]["owned_names"].reverse()          # order must not matter
    else:
        out["diagnostics"].append({"code": res["error"]["code"], "severity": "error",
                                   "message": res["error"]["message"], "fqn": None,
                                   "parameter": None, "pointer": None})
    out["diagnostics"].append({"code": "unplanned-parameters", "severity": "info",
                               "message": "x", "fqn": None, "parameter": None, "pointer": None})
    if os.environ.get("FAKE_CLI_BREAK") and os.path.getsize(path) % 7 == 0:
        if res["ok"]:
            out["ok"] = False
        else:
            out["diagnostics"][0]["message"] += "!"
    print(json.dumps(out))
    return 1 if not res["ok"] else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
