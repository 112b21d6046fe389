#!/usr/bin/env python3
"""Documents built to defeat the engine, at growing sizes: how its time and
peak memory grow with them (docs/reliability.md, "No blow-ups").

Each family makes the document of size n, 2n and 4n (n: the family's unit,
below); the CLI checks or plans each one (`--threads 1`, output to
/dev/null) and the script prints user CPU time, peak RSS, the document's
size, and the growth of the time from one size to the next: about 2 for
work linear in the size, 4 for quadratic work.

    python3 tools/perf/adversarial.py CLI [--family NAME] [--scale K]

Families (n is multiplied by --scale):
  template-rules   n Linear modules and one template with a literal rule
                   for each (generated plans list every expert): plan
  native-globs     n Linear modules and one native request with a pattern
                   per module that starts with '*' (no literal prefix to
                   narrow the search): check
  native-requests  the same patterns, one native request each: check
  deep-tree        a chain of n modules (FQN bytes grow as n^2, up to the
                   FQN-bytes limit): check
  wide-module      one module with n parameters, each placed by a provider
                   layout: plan
  shared-paths     a chain of log2(n) modules, each holding the next twice:
                   n module paths from a tiny document (the path limit's
                   case): check
  huge-mesh        a mesh of log2(n) axes of size 2 (n devices) over a
                   model of 64 sharded parameters: plan
  fsdp-units       n Linear modules, each an FSDP unit (zero 3), sharded by
                   tp=4 on a mesh of 2^20 devices: plan
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile


def linear(i):
    return {"forward": ["x"], "params": {"weight": "w%d" % i}}


def model(n, extra_mesh=None):
    mesh = {"tp": 2}
    if extra_mesh:
        mesh = extra_mesh
    params = {"w%d" % i: {"shape": [64, 64], "dtype": "float32"} for i in range(n)}
    modules = {"root": {"children": {"layers": "layers"}}, "layers": {"children": {str(i): "l%d" % i for i in range(n)}}}
    for i in range(n):
        modules["l%d" % i] = {"children": {"proj": "p%d" % i}}
        modules["p%d" % i] = linear(i)
    return {"schema": "shardplan.v1", "mesh": mesh, "parameters": params, "modules": modules, "root": "root"}


LAYOUT = {"params": {"weight": {"tp": "S(0)"}}, "in_src": {"x": {"tp": "R"}}, "in_dst": {"x": {"tp": "R"}}}


def template_rules(n):
    doc = model(n)
    doc["templates"] = [{"axis": "tp", "rules": {"layers.%d.proj" % i: "colwise" for i in range(n)}}]
    return doc, "plan"


def native_globs(n):
    doc = model(n)
    doc["providers"] = {"native": [{"match": ["*.%d.proj" % i for i in range(n)], "sharding": LAYOUT}]}
    return doc, "check"


def native_requests(n):
    doc = model(n)
    doc["providers"] = {"native": [{"match": ["*.%d.proj" % i], "sharding": LAYOUT} for i in range(n)]}
    return doc, "check"


def deep_tree(n):
    modules = {"m%d" % i: {"children": {"c": "m%d" % (i + 1)}} for i in range(n)}
    modules["m%d" % n] = {"params": {"w": "w"}}
    doc = {"schema": "shardplan.v1", "mesh": {"tp": 2}, "parameters": {"w": {"shape": [4]}}, "modules": modules,
           "root": "m0"}
    return doc, "check"


def wide_module(n):
    params = {"w%d" % i: {"shape": [64, 64], "dtype": "bfloat16"} for i in range(n)}
    root = {"forward": ["x"], "params": {"p%d" % i: "w%d" % i for i in range(n)}}
    layout = {"params": {"p%d" % i: {"tp": "S(%d)" % (i % 2)} for i in range(n)}, "in_src": {"x": {}},
              "in_dst": {"x": {}}}
    doc = {"schema": "shardplan.v1", "mesh": {"tp": 2}, "parameters": params, "modules": {"r": root}, "root": "r",
           "providers": {"sharding": {"": layout}}}
    return doc, "plan"


def shared_paths(n):
    depth = max(1, n.bit_length() - 1)
    modules = {"m%d" % i: {"children": {"a": "m%d" % (i + 1), "b": "m%d" % (i + 1)}} for i in range(depth)}
    modules["m%d" % depth] = {}
    doc = {"schema": "shardplan.v1", "mesh": {"tp": 2}, "parameters": {}, "modules": modules, "root": "m0"}
    return doc, "check"


def huge_mesh(n):
    axes = max(1, n.bit_length() - 1)
    mesh = {"a%d" % k: 2 for k in range(axes)}
    doc = model(64, extra_mesh=mesh)
    doc["templates"] = [{"axis": "a%d" % k, "rules": {"layers.*.proj": "colwise"}} for k in range(min(axes, 2))]
    return doc, "plan"


def fsdp_units(n):
    doc = model(n, extra_mesh={"dp": 1 << 18, "tp": 4})
    doc["templates"] = [{"axis": "tp", "rules": {"layers.*.proj": "colwise"}}]
    doc["training"] = {"zero": 3, "fsdp_units": ["layers.*"]}
    return doc, "plan"


FAMILIES = {
    "template-rules": (template_rules, 4000),
    "native-globs": (native_globs, 4000),
    "native-requests": (native_requests, 4000),
    "deep-tree": (deep_tree, 4000),
    "wide-module": (wide_module, 20000),
    "shared-paths": (shared_paths, 1 << 20),
    "huge-mesh": (huge_mesh, 1 << 16),
    "fsdp-units": (fsdp_units, 4000),
}


def run(cli, path, command):
    """User CPU seconds and peak RSS in MiB of one CLI run."""
    with tempfile.NamedTemporaryFile() as stats:
        done = subprocess.run(["/usr/bin/time", "-f", "%U %S %M", "-o", stats.name, cli, command, "--threads", "1",
                               "--max-paths", "100000000", path], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        if done.returncode not in (0, 1):  # 1: the document has errors
            sys.exit("%s %s %s failed (%d): %s" % (cli, command, path, done.returncode, done.stderr.decode()[-500:]))
        user, system, rss_kb = open(stats.name).read().split()[-3:]
    return float(user) + float(system), int(rss_kb) / 1024


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("cli")
    parser.add_argument("--family", action="append", choices=sorted(FAMILIES))
    parser.add_argument("--scale", type=float, default=1.0)
    args = parser.parse_args()
    print("%-16s %9s %10s %9s %9s %7s" % ("family", "n", "doc KiB", "cpu s", "RSS MiB", "growth"))
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.family or FAMILIES:
            make, unit = FAMILIES[name]
            previous = None
            for k in (1, 2, 4):
                n = max(2, int(unit * args.scale)) * k
                doc, command = make(n)
                path = os.path.join(tmp, "%s-%d.json" % (name, n))
                with open(path, "w") as f:
                    json.dump(doc, f, separators=(",", ":"))
                seconds, rss = run(args.cli, path, command)
                growth = "%7.2f" % (seconds / previous) if previous and previous > 0.005 else "%7s" % "-"
                print("%-16s %9d %10.0f %9.3f %9.1f %s" % (name, n, os.path.getsize(path) / 1024, seconds, rss, growth))
                sys.stdout.flush()
                previous = seconds


if __name__ == "__main__":
    main()
