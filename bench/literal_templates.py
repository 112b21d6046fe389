#!/usr/bin/env python3
"""Adds a template of literal rules to a DeepSeek-like document, as generated plans spell them:
one rule per expert projection, e.g. "layers.3.mlp.experts.17.gate_proj": "colwise".

    bazel-bin/bench/gen_model --kind deepseek --out /tmp/ds.json
    python3 bench/literal_templates.py /tmp/ds.json /tmp/ds-templates.json          # 20 x 256 rules
    bazel-bin/cli/shardplan plan /tmp/ds-templates.json

By default the experts keep their native owner, so every rule is the warning
template-skipped-owned; --unowned-experts drops the native requests that own experts first, so the
rules fill the plan instead. The rules cover layers --first-layer .. --first-layer + --layers - 1,
experts 0 .. --experts - 1, each of --projections, on mesh axis --axis.
"""
import argparse
import json
import sys


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("input", help="a shardplan.v1 document ('-' for standard input)")
    ap.add_argument("output", help="where to write the document with the template ('-' for standard output)")
    ap.add_argument("--first-layer", type=int, default=3)
    ap.add_argument("--layers", type=int, default=20)
    ap.add_argument("--experts", type=int, default=256)
    ap.add_argument("--projections", default="gate_proj", help="comma-separated expert children")
    ap.add_argument("--style", default="colwise")
    ap.add_argument("--axis", default="tp")
    ap.add_argument("--unowned-experts", action="store_true")
    args = ap.parse_args()

    with (sys.stdin if args.input == "-" else open(args.input)) as f:
        doc = json.load(f)
    if args.unowned_experts:
        native = doc.get("providers", {}).get("native", [])
        native[:] = [r for r in native if not any(".experts." in m for m in r["match"])]
    rules = {}
    for layer in range(args.first_layer, args.first_layer + args.layers):
        for expert in range(args.experts):
            for proj in args.projections.split(","):
                rules[f"layers.{layer}.mlp.experts.{expert}.{proj}"] = args.style
    doc["templates"] = [{"axis": args.axis, "rules": rules}]
    with (sys.stdout if args.output == "-" else open(args.output, "w")) as f:
        json.dump(doc, f, separators=(",", ":"))


if __name__ == "__main__":
    main()
