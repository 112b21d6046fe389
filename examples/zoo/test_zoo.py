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
    "llama4_scout": {"empty-shard"},
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


# The model whose published plans each script's good document pastes (hf_plans/).
PUBLISHED = {
    "llama3_8b": "llama",
    "qwen3_30b_a3b": "qwen3_moe",
    "mixtral_8x7b": "mixtral",
    "deepseek_v3": "deepseek_v3",
    "llama4_scout": "llama4",
}


@pytest.mark.parametrize("script", sorted(PUBLISHED))
def test_the_templates_and_pipeline_are_the_published_plans_unchanged(script):
    """Every rule of every template is the published plan's, key and style
    unchanged and in its order; the only keys left out are those of layouts a
    module owns (self_attn) and those the script names as matching nothing in
    its checkpoint (DENSE_MLP_RULES); the pipeline is base_model_pp_plan."""
    zoo = importlib.import_module("zoo_common")
    unmatched = getattr(importlib.import_module(script), "DENSE_MLP_RULES", ())
    doc = document(script, broken=False)
    model = PUBLISHED[script]
    for template in doc["templates"]:
        attribute = {"tp": "base_model_tp_plan", "ep": "base_model_ep_plan"}[template["axis"]]
        published = zoo.published_plan(zoo.TRANSFORMERS_5, model, attribute)
        kept = [key for key in published if key in template["rules"]]
        assert list(template["rules"].items()) == [(key, published[key]) for key in kept]
        assert all(".self_attn." in key or key in unmatched for key in published if key not in template["rules"])
    try:
        pp = zoo.published_plan(zoo.TRANSFORMERS_5, model, "base_model_pp_plan")
    except FileNotFoundError:  # Llama 4 publishes none
        assert "pipeline" not in doc
        return
    assert doc["pipeline"] == {"prefix": "model", "modules": {k: [list(i), list(o)] for k, (i, o) in pp.items()}}


def apply_fixes(doc, result, code):
    """`doc` with the fix of every `code` diagnostic applied (JSON Patch
    "replace" operations)."""
    doc = json.loads(json.dumps(doc))
    for d in result.diagnostics:
        if d.code != code:
            continue
        for op in d.fix:
            assert op.op == "replace"
            *parents, last = [t.replace("~1", "/").replace("~0", "~") for t in op.path.split("/")[1:]]
            node = doc
            for token in parents:
                node = node[int(token)] if isinstance(node, list) else node[token]
            node[last] = json.loads(op.value)
    return doc


@pytest.mark.parametrize("script", ["llama3_8b", "qwen3_30b_a3b"])
def test_a_4x_plan_and_its_5x_twin_plan_the_same(script):
    """transformers 4.57's published plan (the base model's and the head's,
    pasted unchanged, the head no longer the adapter's) and its twin, each
    4.x name renamed as legacy-style-name's fix says: byte-identical plan,
    memory, communication and collectives."""
    zoo = importlib.import_module("zoo_common")
    model = PUBLISHED[script]
    doc = document(script, broken=False)
    del doc["providers"]["sharding"]["lm_head"]
    drop = ("layers.*.self_attn.",)
    doc["templates"] = [
        zoo.hf_template("tp", zoo.published_plan(zoo.TRANSFORMERS_4, model, "base_model_tp_plan"), drop=drop),
        zoo.hf_template("tp", zoo.published_plan(zoo.TRANSFORMERS_4, model, "_tp_plan"), prefix=""),
    ]
    with shardplan.plan(json.dumps(doc)) as result:
        assert [d.code for d in result.diagnostics if d.code == "legacy-style-name"] == ["legacy-style-name"]
        old = json.loads(result.json)
        twin = apply_fixes(doc, result, "legacy-style-name")
    with shardplan.plan(json.dumps(twin)) as result:
        assert "legacy-style-name" not in {d.code for d in result.diagnostics}
        new = json.loads(result.json)
    for key in ("plan", "memory", "communication", "collectives"):
        assert json.dumps(old[key]) == json.dumps(new[key]), key
    assert old["plan"]["modules"]["lm_head"]["params"] == {"weight": {"tp": "S(-2)"}}
    if script == "llama3_8b":
        # The renames are transformers 5's own: the twin is 5.15's published plan.
        assert twin["templates"] == [
            zoo.hf_template("tp", zoo.published_plan(zoo.TRANSFORMERS_5, model, "base_model_tp_plan"), drop=drop),
            zoo.hf_template("tp", zoo.published_plan(zoo.TRANSFORMERS_5, model, "_tp_plan"), prefix=""),
        ]


@pytest.mark.parametrize("release", ["4.57.6", "5.15.0"])
@pytest.mark.parametrize("script", sorted(PUBLISHED))
def test_every_published_plan_pastes_unchanged(script, release):
    """Each tp and ep plan the model's family publishes in either release,
    pasted whole (no key left out) as the only template: the engine takes
    every style name, the rules are the file's, and nothing is an error
    (rules for modules of the other release's structure match nothing, and
    rules for owned layouts are skipped: warnings)."""
    zoo = importlib.import_module("zoo_common")
    model = PUBLISHED[script]
    pasted = 0
    for axis, attribute in (("tp", "base_model_tp_plan"), ("ep", "base_model_ep_plan")):
        try:
            published = zoo.published_plan(release, model, attribute)
        except FileNotFoundError:
            continue
        doc = document(script, broken=False)
        if axis not in doc["mesh"]:
            doc["mesh"][axis] = 2
        doc["templates"] = [zoo.hf_template(axis, published)]
        assert list(doc["templates"][0]["rules"].items()) == list(published.items())
        with shardplan.plan(json.dumps(doc)) as result:
            assert not [str(d) for d in result.diagnostics if d.severity.name.lower() == "error"]
        pasted += 1
    assert pasted >= 1
