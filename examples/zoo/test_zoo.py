"""The zoo's documents plan as intended: every good model is ok, every
broken variant shows the mistake it was built to show, and every training
setup has its verdict (fits, or the memory error or warning naming the change
that would fit), in the library, in the CLI and in docs/planning.md.

    SHARDPLAN_LIBRARY=... /usr/bin/python3 -m pytest -q examples/zoo/test_zoo.py

The CLI's checks run the shardplan CLI at $SHARDPLAN_CLI, else the checkout's
bazel-bin/cli/shardplan (they fail when there is none).
"""
import importlib
import os
import subprocess
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
import training_differential  # noqa: E402  (the independent model of training-v1)
import training_reference  # noqa: E402

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


# ---------------------------------------------------------------------------
# Training: the model descriptions and the training setups (README.md, "Training setups")

# Each script's CONFIG described for the activations (shardplan.torch.model_description),
# written out by hand from the published config.json values.
DESCRIPTIONS = {
    "llama3_8b": {
        "hidden_size": 4096, "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 128,
        "intermediate_size": 14336, "gated_mlp": True, "num_hidden_layers": 32, "vocab_size": 128256,
    },
    "qwen3_30b_a3b": {
        "hidden_size": 2048, "num_attention_heads": 32, "num_key_value_heads": 4, "head_dim": 128,
        "intermediate_size": 6144, "gated_mlp": True, "num_hidden_layers": 48, "vocab_size": 151936,
        "num_experts": 128, "num_experts_per_tok": 8, "moe_intermediate_size": 768,
        "num_shared_experts": 0, "first_k_dense_replace": 0,
    },
    "mixtral_8x7b": {
        "hidden_size": 4096, "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 128,
        "intermediate_size": 14336, "gated_mlp": True, "num_hidden_layers": 32, "vocab_size": 32000,
        "num_experts": 8, "num_experts_per_tok": 2, "moe_intermediate_size": 14336,
        "num_shared_experts": 0, "first_k_dense_replace": 0,
    },
    "deepseek_v3": {
        # MLA: Q and K heads of 128 + 64, V and output heads of 128; one head size of
        # (192 + 128) / 2 keeps the same bytes.
        "hidden_size": 7168, "num_attention_heads": 128, "num_key_value_heads": 128, "head_dim": 160,
        "intermediate_size": 18432, "gated_mlp": True, "num_hidden_layers": 61, "vocab_size": 129280,
        "num_experts": 256, "num_experts_per_tok": 8, "moe_intermediate_size": 2048,
        "num_shared_experts": 1, "first_k_dense_replace": 3,
    },
    "llama4_scout": {
        # The dense MLP (intermediate_size_mlp) of no layer here; experts and the shared
        # expert of intermediate_size.
        "hidden_size": 5120, "num_attention_heads": 40, "num_key_value_heads": 8, "head_dim": 128,
        "intermediate_size": 16384, "gated_mlp": True, "num_hidden_layers": 48, "vocab_size": 202048,
        "num_experts": 16, "num_experts_per_tok": 1, "moe_intermediate_size": 8192,
        "num_shared_experts": 1, "first_k_dense_replace": 0,
    },
}


@pytest.mark.parametrize("script", sorted(DESCRIPTIONS))
def test_the_config_describes_the_model(script):
    module = importlib.import_module(script)
    assert exporter.model_description(module.CONFIG) == DESCRIPTIONS[script]
    # The model keeps its config, as transformers' do: activations without a model
    # description are described from it.
    model, extras = module.build()
    assert model.config is module.CONFIG
    doc = exporter.export(model, extras["mesh"], training={"activations": {"seq_len": 4096}})
    assert doc["training"]["model"] == DESCRIPTIONS[script]


# (script, setup) -> the verdict: None (fits: neither exceeds-device-memory nor
# near-device-memory), or (code, the change its message names first, its new total).
TRAINING_VERDICTS = {
    ("llama3_8b", "fsdp"): None,
    ("llama3_8b", "fsdp-selective"): ("near-device-memory", "recompute 'full'", "26.81 GiB"),
    ("llama3_8b", "fsdp-broken"): ("exceeds-device-memory", "zero 1", "62.16 GiB"),
    ("deepseek_v3", "train"): None,
    ("deepseek_v3", "train-selective"): ("exceeds-device-memory", "recompute 'full'", "17.27 GiB"),
}
# The worst device's training total of each setup, in GiB (README.md's table).
TRAINING_TOTALS = {
    ("llama3_8b", "fsdp"): "26.81",
    ("llama3_8b", "fsdp-selective"): "67.81",
    ("llama3_8b", "fsdp-broken"): "140.69",
    ("deepseek_v3", "train"): "17.27",
    ("deepseek_v3", "train-selective"): "128.43",
}
MEMORY_CODES = ("exceeds-device-memory", "near-device-memory")


def training_document(script, setup):
    module = importlib.import_module(script)
    model, extras = module.TRAINING[setup]()
    extras = dict(extras)
    mesh = extras.pop("mesh")
    return exporter.export(model, mesh, **extras)


def test_every_training_setup_has_a_verdict():
    scripts = {script for script, _ in TRAINING_VERDICTS}
    for script in scripts:
        module = importlib.import_module(script)
        assert set(module.TRAINING) == set(module.TRAINING_SETUPS)
        assert {setup for s, setup in TRAINING_VERDICTS if s == script} == set(module.TRAINING_SETUPS)
    zoo = importlib.import_module("zoo_common")
    with_training = {script for script, _ in zoo.MODELS if hasattr(importlib.import_module(script), "TRAINING")}
    assert with_training == scripts


@pytest.mark.parametrize("script, setup", sorted(TRAINING_VERDICTS))
def test_the_training_setup_has_its_verdict(script, setup):
    doc = training_document(script, setup)
    assert "model" in doc["training"]  # described from the model's config
    with shardplan.plan(json.dumps(doc)) as result:
        memory = [d for d in result.diagnostics if d.code in MEMORY_CODES]
        others = {d.code for d in result.diagnostics if d.severity.name.lower() != "info"} - set(MEMORY_CODES)
        got = result.to_dict()
    assert not others, got["diagnostics"]
    worst = got["memory"]["training"]["worst"]
    assert f"{worst['total'] / 2**30:.2f}" == TRAINING_TOTALS[script, setup]
    verdict = TRAINING_VERDICTS[script, setup]
    if verdict is None:
        assert memory == [], [str(d) for d in memory]
        assert got["ok"] and worst["total"] <= 0.8 * 80 * 2**30
    else:
        code, change, total = verdict
        assert [d.code for d in memory] == [code]
        assert f"it would fit with: {change} ({total})" in memory[0].message, memory[0].message
        assert got["ok"] == (code != "exceeds-device-memory")
    # The spec's independent model (tools/reference/training_reference.py) agrees: the same
    # totals per category and device, the same verdict and message.
    assert training_differential.compare(training_reference.run_document(doc), got, "plan") is None


def cli_path():
    path = os.environ.get("SHARDPLAN_CLI") or os.path.join(HERE, "..", "..", "bazel-bin", "cli", "shardplan")
    return path if os.access(path, os.X_OK) else None


@pytest.mark.parametrize("script, setup", sorted(TRAINING_VERDICTS))
def test_the_cli_prints_the_training_verdict(script, setup, tmp_path):
    """`shardplan plan` on the setup's document, as README.md and docs/planning.md show it:
    exit status 1 when it exceeds the device's memory, the verdict's message, the worst
    device's total."""
    cli = cli_path()
    assert cli is not None, "no shardplan CLI: set SHARDPLAN_CLI or build //cli:shardplan"
    path = tmp_path / f"{setup}.json"
    path.write_text(exporter.dumps(training_document(script, setup)))
    run = subprocess.run([cli, "plan", "--color", "never", str(path)], capture_output=True, text=True, timeout=120)
    verdict = TRAINING_VERDICTS[script, setup]
    assert run.returncode == (1 if verdict and verdict[0] == "exceeds-device-memory" else 0), run.stdout + run.stderr
    lines = run.stdout.splitlines()
    [total_line] = [line for line in lines if line.startswith("      total ")]
    assert total_line.split()[1:3] == [TRAINING_TOTALS[script, setup], "GiB"], total_line
    verdicts = [line for line in lines if line.startswith(("error[", "warning[")) and "device-memory]" in line]
    if verdict is None:
        assert verdicts == []
    else:
        code, change, total = verdict
        severity = "error" if code == "exceeds-device-memory" else "warning"
        assert len(verdicts) == 1 and verdicts[0].startswith(f"{severity}[{code}]: ")
        assert f"it would fit with: {change} ({total})" in verdicts[0]


def docs_verdicts():
    """(command, output shown) of every block of docs/planning.md's "The zoo's verdicts"."""
    import re

    with open(os.path.join(HERE, "..", "..", "docs", "planning.md"), encoding="utf-8") as f:
        text = f.read()
    section = text[text.index("### The zoo's verdicts\n"):]
    section = section[:section.index("\n### ", 1)]
    blocks = re.findall(r"```\n(.*?)```", section, re.S)
    return [tuple(body[2:].split("\n", 1)) for body in blocks if body.startswith("$ ")]


def test_the_docs_show_the_verdicts_as_the_cli_prints_them(tmp_path):
    """docs/planning.md's commands, run on the setups' documents written to a temporary
    folder (the commands name examples/zoo/out/): the output shown, byte for byte."""
    cli = cli_path()
    assert cli is not None, "no shardplan CLI: set SHARDPLAN_CLI or build //cli:shardplan"
    commands = docs_verdicts()
    names = dict(importlib.import_module("zoo_common").MODELS)  # script -> document name
    shown = [command.split()[2] for command, _ in commands]
    assert sorted(shown) == sorted(f"examples/zoo/out/{names[script]}-{setup}.json"
                                   for script, setup in TRAINING_VERDICTS)  # every setup, once
    for script, setup in TRAINING_VERDICTS:
        (tmp_path / f"{names[script]}-{setup}.json").write_text(exporter.dumps(training_document(script, setup)))
    for command, output in commands:
        command = command.replace("bazel-bin/cli/shardplan", cli).replace("examples/zoo/out/", f"{tmp_path}/")
        run = subprocess.run(["bash", "-c", command], capture_output=True, text=True, timeout=120)
        assert run.stderr == "", command
        assert run.stdout == output, command
