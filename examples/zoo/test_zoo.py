"""The zoo's documents plan as intended: every good model is ok, and every
broken variant shows the mistake it was built to show.

    SHARDPLAN_LIBRARY=... /usr/bin/python3 -m pytest -q examples/zoo/test_zoo.py
"""
import importlib
import os
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "..", "bindings", "python"))

sys.path.insert(0, os.path.join(HERE, "..", "..", "tools", "reference"))

import json  # noqa: E402

import plan_differential  # noqa: E402  (the independent model of planner-v1)
import planner_reference  # noqa: E402
import shardplan  # noqa: E402
import shardplan.torch as exporter  # noqa: E402

# script -> the diagnostic codes its broken variant must show (errors and
# warnings; every variant also has the info unplanned-parameters or not).
BROKEN = {
    "llama3_8b": {"empty-shard"},
    "qwen3_30b_a3b": {"empty-shard", "unused-template-rule"},
    "mixtral_8x7b": {"shared-conflict"},
    "deepseek_v3": {"unused-template-rule"},
}


def document(script, broken):
    module = importlib.import_module(script)
    model, extras = module.build_broken() if broken else module.build()
    extras = dict(extras)
    mesh = extras.pop("mesh")
    return exporter.export(model, mesh, **extras)


def planned(script, broken):
    return shardplan.plan(json.dumps(document(script, broken)))


@pytest.mark.parametrize("script", sorted(BROKEN))
def test_the_model_plans_ok(script):
    with planned(script, broken=False) as result:
        assert result.ok, [str(d) for d in result.diagnostics]
        assert {d.severity.name.lower() for d in result.diagnostics} <= {"info"}
        assert result.memory is not None and 0 < result.memory.max_bytes < result.memory.unsharded_bytes


@pytest.mark.parametrize("script", sorted(BROKEN))
def test_the_broken_variant_shows_its_mistake(script):
    with planned(script, broken=True) as result:
        codes = {d.code for d in result.diagnostics if d.severity.name.lower() != "info"}
        assert codes == BROKEN[script], [str(d) for d in result.diagnostics]


@pytest.mark.parametrize("broken", [False, True])
@pytest.mark.parametrize("script", sorted(BROKEN))
def test_the_independent_model_agrees(script, broken):
    """The published plans, planned by the engine and by the spec's model
    (tools/reference/planner_reference.py): same verdict, diagnostics, plan,
    provenance, memory and communication."""
    doc = document(script, broken)
    with shardplan.plan(json.dumps(doc)) as result:
        got = json.loads(result.json)
    assert plan_differential.compare(planner_reference.run_document(doc), got) is None
