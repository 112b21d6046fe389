"""The builder: models built with it check exactly like their JSON twins."""

import json

import pytest

import shardplan
from shardplan import ParallelSpec, Port, _capi
from conftest import CONFORMANCE, REPO_ROOT, case_text

TWIN = {
    "schema": "shardplan.v1",
    "mesh": {"tp": 2},
    "parameters": {"w": {"shape": [4, 4]}},
    "root": "root",
    "modules": {
        "root": {"children": {"lin": "lin"}},
        "lin": {"forward": ["x"], "params": {"weight": "w"}},
    },
    "providers": {
        "sharding": {"lin": {"params": {"weight": {"tp": "S(0)"}}, "in_src": {"x": {}}, "in_dst": {"x": {}}}}
    },
}


def small_model(placement="S(0)"):
    builder = shardplan.Builder()
    builder.add_axis("tp", 2)
    builder.add_parameter("w", [4, 4])
    builder.add_module("root")
    builder.add_child("root", "lin", "lin")
    builder.add_module("lin")
    builder.add_forward_arg("lin", "x")
    builder.add_module_param("lin", "weight", "w")
    builder.set_root("root")
    with shardplan.Layout() as layout:
        layout.set_placement(Port.PARAMS, "weight", "tp", placement)
        layout.add_entry(Port.IN_SRC, "x")
        layout.add_entry(Port.IN_DST, "x")
        builder.add_provider("lin", layout)
    return builder


def test_small_model_equals_its_json_twin():
    with small_model() as builder, builder.build() as document:
        built = document.check().json
    twin = shardplan.check(json.dumps(TWIN)).json
    assert built == twin
    result = json.loads(built)
    assert result["ok"] is True
    assert result["owned"]["owned_names"] == ["lin.weight"]


def test_failing_model_equals_its_twin_and_points_into_to_json():
    builder = small_model(placement="P")  # a partial parameter
    text = builder.to_json()
    result = builder.build().check()
    assert result.json == shardplan.check(text).json
    twin = json.loads(json.dumps(TWIN))
    twin["providers"]["sharding"]["lin"]["params"]["weight"]["tp"] = "P"
    assert result.json == shardplan.check(json.dumps(twin)).json
    [d] = result.diagnostics
    assert (d.code, d.fqn, d.parameter) == ("partial-parameter", "lin", "lin.weight")
    assert d.pointer.startswith("/providers/sharding/lin/params/weight")


def test_builder_stays_usable_after_build():
    builder = small_model()
    first = builder.build()
    builder.add_axis("dp", 2)
    second = builder.build()
    assert json.loads(builder.to_json())["mesh"] == {"tp": 2, "dp": 2}
    assert first.check().ok and second.check().ok


def test_dangling_reference_is_reported_at_build():
    builder = shardplan.Builder().add_module("root").add_child("root", "c", "missing").set_root("root")
    with builder.build() as document:
        assert not document.is_valid
        [d] = document.check().diagnostics
    assert d.code == "invalid-document"
    assert d.pointer == "/modules/root/children/c"
    node = json.loads(builder.to_json())
    for part in d.pointer.strip("/").split("/"):
        node = node[part]
    assert node == "missing"


def test_shapes_and_dtypes():
    builder = shardplan.Builder()
    builder.add_parameter("scalar", [])
    builder.add_parameter("unknown")
    builder.add_parameter("v", (3,), "bfloat16")
    assert json.loads(builder.to_json())["parameters"] == {
        "scalar": {"shape": []},
        "unknown": {},
        "v": {"shape": [3], "dtype": "bfloat16"},
    }


def test_layout_from_dict_and_ports():
    spec = {
        "params": {"w": {"dp": "R", "tp": "S(-1)"}},
        "in_src": {"x": {}},
        "in_dst": {"x": {"tp": "R"}},
        "out_src": None,
        "out_dst": {"y": {"tp": "R"}},
        "out_names": ["y"],
    }
    with shardplan.Layout.from_dict(spec) as layout:
        builder = shardplan.Builder().add_provider("", layout)
    provider = json.loads(builder.to_json())["providers"]["sharding"][""]
    assert provider["params"] == {"w": {"dp": "R", "tp": "S(-1)"}}
    assert provider["in_dst"] == {"x": {"tp": "R"}}
    assert provider["out_dst"] == {"y": {"tp": "R"}} and provider["out_names"] == ["y"]
    assert provider.get("out_src") is None
    shardplan.Layout.from_dict({"local_compute_fn": None}).close()  # null is absent
    with shardplan.Layout.from_dict({"params": {}, "local_compute_fn": "fn"}) as legacy:
        builder = shardplan.Builder().add_provider("", legacy)
    assert json.loads(builder.to_json())["providers"]["sharding"][""]["local_compute_fn"] is True
    with pytest.raises(shardplan.ShardplanError, match="unknown legacy field 'wrapper'"):
        shardplan.Layout().set_legacy_field("wrapper")
    with pytest.raises(ValueError, match="no key 'inputs'"):
        shardplan.Layout.from_dict({"inputs": {}})
    with pytest.raises(ValueError, match="unknown port"):
        shardplan.Layout().declare("inputs")
    with pytest.raises(TypeError):
        shardplan.Layout().set_out_names("y")  # a single string, not a list
    assert str(Port.IN_SRC) == "in_src"


def test_parallel_specs():
    assert ParallelSpec.coerce(("tp", ["tp"])) == ParallelSpec("tp", ("tp",))
    assert ParallelSpec.coerce({"binding_kind": "none"}) == ParallelSpec("none")
    with pytest.raises(TypeError):
        ParallelSpec("tp", "tp")
    builder = shardplan.Builder().add_module("m")
    builder.set_module_parallel("m", ParallelSpec("tp", ["tp", "dp"]))
    assert json.loads(builder.to_json())["modules"]["m"]["parallel"] == {
        "binding_kind": "tp", "axes": ["tp", "dp"]}
    builder.set_module_parallel("m", None)
    assert json.loads(builder.to_json())["modules"]["m"].get("parallel") is None


# ---- Every builder function: rebuild whole documents from their JSON --------


def build_from(doc):
    """Replays a shardplan.v1 document (a dict) through the builder."""
    b = shardplan.Builder()
    for axis, size in doc["mesh"].items():
        b.add_axis(axis, size)
    for pid, p in doc["parameters"].items():
        b.add_parameter(pid, p.get("shape"), p.get("dtype"))
        if "blocks" in p:
            b.set_parameter_blocks(pid, p["blocks"])
    for mid, m in doc["modules"].items():
        b.add_module(mid, m.get("type"))
    for mid, m in doc["modules"].items():
        for arg in m.get("forward", []):
            b.add_forward_arg(mid, arg)
        for name, child in m.get("children", {}).items():
            b.add_child(mid, name, child)
        for name, pid in m.get("params", {}).items():
            b.add_module_param(mid, name, pid)
        if m.get("parallel") is not None:
            b.set_module_parallel(mid, m["parallel"])
        family = m.get("family")
        if family is not None:
            b.set_family(mid, family.get("parallel", False), family.get("sharding"))
            cached = family.get("cached")
            if cached is not None:
                b.set_family_cached(mid, cached["sharding"], cached.get("parallel"))
    b.set_root(doc["root"])
    providers = doc.get("providers", {})
    for fqn, layout in providers.get("sharding", {}).items():
        b.add_provider(fqn, layout)
    for native in providers.get("native", []):
        b.add_native(native["match"], native["sharding"], native.get("parallel"))
    if "plan" in doc and "sp_builder_declare_plan" not in _capi.MISSING:
        b.declare_plan()
    for fqn, layout in doc.get("plan", {}).get("modules", {}).items():
        b.add_plan_entry(fqn, layout)
    for template in doc.get("templates", []):
        index = b.add_template(template["axis"], template.get("prefix", ""))
        for pattern, style in template["rules"].items():
            b.add_template_rule(index, pattern, style)
    for fqn, layout in doc.get("overrides", {}).items():
        b.add_override(fqn, layout)
    if "training" in doc:
        b.set_training(doc["training"])
    return b


ALL_CASES = sorted(p.stem for p in (CONFORMANCE / "cases").glob("*.json"))


@pytest.mark.parametrize("name", ALL_CASES)
def test_rebuilt_conformance_cases_check_alike(name):
    """Every conformance case replayed through the builder (legacy fields
    included) gives the same result bytes (diagnostic pointers included) as
    its JSON."""
    text = case_text(name)
    with build_from(json.loads(text)) as builder, builder.build() as document:
        built = document.check().json
    assert built == shardplan.check(text).json


@pytest.mark.parametrize(
    "path",
    ["examples/tiny-plan.json", "tests/golden/cases/exceeds-device-memory.fail.json",
     "tests/golden/cases/training-pattern-no-match.fail.json"],
)
def test_rebuilt_planner_documents_plan_alike(path):
    """Templates, overrides, blocks and the training section through the
    builder: the same plan (and training memory)."""
    text = (REPO_ROOT / path).read_text()
    with build_from(json.loads(text)) as builder, builder.build() as document:
        built = document.plan().json
        assert built == shardplan.parse(builder.to_json()).plan().json
    assert built == shardplan.parse(text).plan().json


@pytest.mark.parametrize("path", ["examples/tiny-llama.json", "examples/tiny-llama-broken.json"])
def test_rebuilt_examples_check_alike(path):
    doc = json.loads((REPO_ROOT / path).read_text())
    with build_from(doc) as builder:
        built = builder.build().check().json
        assert built == shardplan.check(builder.to_json()).json
    assert json.loads(built) == shardplan.check(json.dumps(doc)).to_dict()


def test_declare_plan():
    builder = small_model()
    if "sp_builder_declare_plan" in _capi.MISSING:
        with pytest.raises(NotImplementedError, match="sp_builder_declare_plan"):
            builder.declare_plan()
        pytest.skip("the loaded library predates sp_builder_declare_plan")
    assert "plan" not in json.loads(builder.to_json())
    builder.declare_plan()
    assert json.loads(builder.to_json())["plan"] == {"modules": {}}
    twin = dict(TWIN, plan={"modules": {}})
    assert builder.build().check().json == shardplan.check(json.dumps(twin)).json
