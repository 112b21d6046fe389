"""instructions.py counts the whole of a phase's call, its lambdas included.

Needs valgrind and a stages_benchmark build, named by SHARDPLAN_BENCH
(tools/test.sh builds //core:stages_benchmark and sets it).
"""

import os
import queue
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import instructions  # noqa: E402


def inclusive_cost(out, *parts):
    """The instructions callgrind counted in the functions whose names
    contain every one of `parts`, with those of the calls they made."""
    names, total, current = {}, 0, None
    for line in out.read_text().splitlines():
        m = re.match(r"(c?fn)=\((\d+)\)(?: (.*))?$", line)
        if m:
            if m.group(3):
                names[m.group(2)] = m.group(3)
            if m.group(1) == "fn":
                current = names.get(m.group(2), "")
            continue
        # Cost lines: "position cost", the line after "calls=" giving the
        # call's inclusive cost.
        fields = line.split()
        if len(fields) == 2 and re.match(r"^([+-]?\d+|\*)$", fields[0]) and fields[1].isdigit():
            if current is not None and all(p in current for p in parts):
                total += int(fields[1])
    return total


def test_counts_the_plan_checks_lambdas(tmp_path):
    # ValidatePlan resolves and checks each entry inside the lambdas it
    # hands to ScanThenApply. A --toggle-collect pattern that also matched
    # the lambdas turned the count off there: 3.2M of the plan check's 37.1M
    # instructions (100k parameters) were counted.
    bench = os.environ["SHARDPLAN_BENCH"]
    cpus = queue.Queue()
    cpus.put(min(os.sched_getaffinity(0)))
    out = tmp_path / "plan.out"
    total = instructions.count(bench, "PlanCheck", "generic/params:1000", out, cpus)
    # The lambda that resolves and checks the entries does most of the
    # work (its calls included, as builds inline them or not).
    assert total > 0
    assert inclusive_cost(out, "ValidatePlan(", "EntryCheck*)#1}::operator()") > total // 3
