"""instructions.py counts the whole of a phase's call, its lambdas included.

Needs valgrind and a core_benchmark build, named by SHARDPLAN_BENCH
(tools/test.sh builds //bench:core_benchmark and sets it).
"""

import os
import queue
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import instructions  # noqa: E402


def calls_to(out, function):
    """The calls callgrind recorded, in the counted part of the run, to the
    functions whose names contain `function`."""
    names, total, callee = {}, 0, None
    for line in out.read_text().splitlines():
        m = re.match(r"c?fn=\((\d+)\)(?: (.*))?$", line)
        if m:
            if m.group(2):
                names[m.group(1)] = m.group(2)
            callee = names.get(m.group(1)) if line.startswith("cfn=") else None
        elif line.startswith("calls=") and callee is not None and function in callee:
            total += int(line.split("=")[1].split()[0])
    return total


def test_counts_the_plan_checks_lambdas(tmp_path):
    # ValidatePlan resolves each entry's FQN inside the lambdas it hands to
    # ScanThenApply. A --toggle-collect pattern that also matched the
    # lambdas turned the count off there: no call to Resolve was recorded,
    # and 3.2M of the plan check's 37.1M instructions (100k parameters) were.
    bench = os.environ["SHARDPLAN_BENCH"]
    cpus = queue.Queue()
    cpus.put(min(os.sched_getaffinity(0)))
    out = tmp_path / "plan.out"
    total = instructions.count(bench, "PlanCheck", "generic/params:1000", out, cpus)
    # One entry per owner: the generic model's thousand parameters each
    # have an owner.
    assert calls_to(out, "ModuleTree::Resolver::Resolve(") >= 1000
    assert total > 0
