"""shardplan.torch: the exported document is what torch itself reports.

Every model is expanded from the exported document (root -> children, every
path, shared modules at each of their paths) and compared with
``named_modules(remove_duplicate=False)``, the parameter full names with
``named_parameters(remove_duplicate=False)`` and the identities (which names
share one module or parameter id) with the torch objects.
"""

import inspect
import json
import os
import re
import subprocess
import sys
from collections import defaultdict

import pytest
import torch
from torch import nn

import shardplan
import shardplan.torch as st
from conftest import BINDING_DIR, REPO_ROOT
from tests_helper_module import MESH, TP_TEMPLATE, TinyGPT, embedding_provider

TESTS_DIR = BINDING_DIR / "tests"


# ---------------------------------------------------------------------------
# Models


class Shared(nn.Module):
    """One Linear at two places (and inside a Sequential), one LayerNorm reused."""

    def __init__(self):
        super().__init__()
        lin = nn.Linear(4, 4, device="meta")
        self.first = lin
        self.stack = nn.Sequential(nn.Linear(4, 4, device="meta"), lin, nn.ReLU())
        self.norm = nn.LayerNorm(4, device="meta")
        self.again = nn.ModuleDict({"norm": self.norm, "lin": lin})

    def forward(self, x):
        return self.again["norm"](self.stack(self.first(x)))


class VarArgs(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(3, 3, device="meta")
        self.kw = KwOnly()

    def forward(self, x, *args, scale=1.0, **kwargs):
        return self.kw(self.proj(x) * scale)


class KwOnly(nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(3, device="meta"))

    def forward(self, hidden, /, mask=None, *, cache=None, **extra):
        return hidden * self.weight


class ArgsOnly(nn.Module):
    def forward(self, *inputs):
        return inputs


FAMILY_LAYOUT = {
    "params": {
        "q.weight": {"tp": "S(0)"},
        "q.bias": {"tp": "S(0)"},
        "o.weight": {"tp": "S(1)"},
        "o.bias": {"tp": "R"},
    },
    "in_src": {"hidden_states": {"tp": "R"}},
    "in_dst": {"hidden_states": {"tp": "R"}},
    "out_src": {"output": {"tp": "P"}},
    "out_dst": {"output": {"tp": "R"}},
}


class FamilyAttention(nn.Module):
    """Declares itself: a tp family member with its own layout."""

    def __init__(self, dim=8):
        super().__init__()
        self.q = nn.Linear(dim, dim, device="meta")
        self.o = nn.Linear(dim, dim, device="meta")

    def forward(self, hidden_states):
        return self.o(self.q(hidden_states))

    def parallel_module_spec(self):
        return {
            "parallel": {"binding_kind": "tp", "axes": ["tp"]},
            "family": {"parallel": True, "sharding": FAMILY_LAYOUT},
        }


class NotAMember(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(2, 2, device="meta")

    def parallel_module_spec(self):
        return {"parallel": None}


class FamilyModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(10, 8, device="meta")
        self.attn = FamilyAttention()
        self.other = NotAMember()
        self.norm = nn.LayerNorm(8, device="meta")

    def forward(self, ids):
        return self.norm(self.attn(self.embed(ids)))


class WithBuffers(nn.Module):
    def __init__(self):
        super().__init__()
        self.bn = nn.BatchNorm1d(4, device="meta")  # running_mean, running_var, num_batches_tracked
        self.register_buffer("table", torch.zeros(5, device="meta"))
        self.register_buffer("scratch", torch.zeros(2, device="meta"), persistent=False)
        self.scale = nn.Parameter(torch.ones(4, device="meta"))

    def forward(self, x):
        return self.bn(x) * self.scale


class Holes(nn.Module):
    """None entries in _parameters and _modules, registered between others."""

    def __init__(self):
        super().__init__()
        self.b = nn.Parameter(torch.empty(2, device="meta"))
        self.register_parameter("missing", None)
        self.a = nn.Parameter(torch.empty(3, device="meta"))
        self.z = nn.Linear(2, 2, bias=False, device="meta")
        self.add_module("gone", None)
        self.y = nn.Linear(2, 2, device="meta")

    def forward(self, x):
        return x


class Dtypes(nn.Module):
    def __init__(self):
        super().__init__()
        meta = {"device": "meta"}
        self.f32 = nn.Parameter(torch.empty(2, **meta))
        self.f16 = nn.Parameter(torch.empty(2, dtype=torch.float16, **meta))
        self.bf16 = nn.Parameter(torch.empty(2, dtype=torch.bfloat16, **meta))
        self.i8 = nn.Parameter(torch.empty(2, dtype=torch.int8, **meta), requires_grad=False)
        self.i32 = nn.Parameter(torch.empty(2, dtype=torch.int32, **meta), requires_grad=False)
        self.i64 = nn.Parameter(torch.empty(2, dtype=torch.int64, **meta), requires_grad=False)
        self.flag = nn.Parameter(torch.empty(2, dtype=torch.bool, **meta), requires_grad=False)


def transformer():
    return nn.Transformer(
        d_model=16, nhead=2, num_encoder_layers=2, num_decoder_layers=1,
        dim_feedforward=32, device="meta",
    )


MODELS = {
    "transformer": transformer,
    "gpt": TinyGPT,
    "gpt-bfloat16": lambda: TinyGPT(dtype=torch.bfloat16),
    "gpt-cpu": lambda: TinyGPT(device="cpu"),
    "shared": Shared,
    "varargs": VarArgs,
    "family": FamilyModel,
    "buffers": WithBuffers,
    "holes": Holes,
    "dtypes": Dtypes,
    "nested-shared": lambda: nn.Sequential(Shared(), Shared()),
}


# ---------------------------------------------------------------------------
# What torch reports, and what the document says


def torch_parameters(model):
    """named_parameters(remove_duplicate=False); torch 1.13 has no such argument,
    so there it is spelled out the way later versions compute it."""
    if "remove_duplicate" in inspect.signature(model.named_parameters).parameters:
        return list(model.named_parameters(remove_duplicate=False))
    return [
        (f"{path}.{name}" if path else name, tensor)
        for path, module in model.named_modules(remove_duplicate=False)
        for name, tensor in module._parameters.items()
        if tensor is not None
    ]


def expand(doc):
    """[(path, module id)] and [(full name, parameter id)] over every path."""
    paths, params = [], []

    def visit(path, mid):
        paths.append((path, mid))
        entry = doc["modules"][mid]
        for name, pid in entry.get("params", {}).items():
            params.append((f"{path}.{name}" if path else name, pid))
        for name, child in entry.get("children", {}).items():
            visit(f"{path}.{name}" if path else name, child)

    # named_modules lists a module's own parameters before its children's,
    # so parameters are collected in named_modules order per module.
    visit("", doc["root"])
    by_module = defaultdict(list)
    for name, pid in params:
        by_module[name.rpartition(".")[0]].append((name, pid))
    ordered = [p for path, _ in paths for p in by_module.pop(path, [])]
    return paths, ordered


def groups(pairs):
    """The partition of names by key: sorted tuples of names sharing a key."""
    out = defaultdict(list)
    for name, key in pairs:
        out[key].append(name)
    return sorted(tuple(v) for v in out.values())


def assert_matches_torch(model, doc, ids=True):
    paths, params = expand(doc)
    modules = list(model.named_modules(remove_duplicate=False))
    assert [p for p, _ in paths] == [p for p, _ in modules]
    assert groups(paths) == groups((p, id(m)) for p, m in modules)
    for (path, mid), (_, module) in zip(paths, modules):
        assert doc["modules"][mid]["type"] == type(module).__name__, path

    tensors = torch_parameters(model)
    assert [n for n, _ in params] == [n for n, _ in tensors]
    assert groups(params) == groups((n, id(t)) for n, t in tensors)
    for (name, pid), (_, tensor) in zip(params, tensors):
        info = doc["parameters"][pid]
        assert info["shape"] == list(tensor.shape), name
        assert info["dtype"] == str(tensor.dtype).replace("torch.", ""), name
    if not ids:
        return
    # Every parameter id is a tensor's first full name; every module id a first path.
    first_names = {}
    for name, tensor in tensors:
        first_names.setdefault(id(tensor), name)
    assert sorted(doc["parameters"]) == sorted(first_names.values())
    first_paths = {}
    for path, module in modules:
        first_paths.setdefault(id(module), path or st.ROOT_ID)
    assert sorted(doc["modules"]) == sorted(first_paths.values())
    assert doc["root"] == st.ROOT_ID


@pytest.mark.parametrize("name", sorted(MODELS))
def test_paths_parameters_and_identities_are_torchs(name):
    model = MODELS[name]()
    doc = st.export(model, MESH)
    assert_matches_torch(model, doc)
    assert list(doc) == ["schema", "mesh", "parameters", "root", "modules"]
    assert doc["schema"] == "shardplan.v1" and doc["mesh"] == {"dp": 2, "tp": 2}
    with shardplan.parse(json.dumps(doc)) as parsed:
        assert parsed.is_valid
    with st.check(model, MESH) as result:
        assert result.ok, result.diagnostics


def test_tied_embedding_is_one_parameter():
    model = TinyGPT()
    assert model.lm_head.weight is model.wte.weight
    doc = st.export(model, MESH)
    assert doc["modules"]["lm_head"]["params"] == {"weight": "wte.weight"}
    assert doc["modules"]["wte"]["params"] == {"weight": "wte.weight"}
    assert "lm_head.weight" not in doc["parameters"]
    assert doc["parameters"]["wte.weight"] == {"shape": [64, 16], "dtype": "float32"}


def test_shared_module_is_one_module_at_its_first_path():
    model = Shared()
    doc = st.export(model, MESH)
    root = doc["modules"]["<root>"]
    assert root["children"] == {"first": "first", "stack": "stack", "norm": "norm", "again": "again"}
    assert doc["modules"]["stack"]["children"] == {"0": "stack.0", "1": "first", "2": "stack.2"}
    assert doc["modules"]["again"]["children"] == {"norm": "norm", "lin": "first"}
    assert list(doc["modules"]) == ["<root>", "first", "stack", "stack.0", "stack.2", "norm", "again"]
    assert list(doc["parameters"]) == [
        "first.weight", "first.bias", "stack.0.weight", "stack.0.bias", "norm.weight", "norm.bias",
    ]


def test_root_id_is_unique_even_against_a_child_named_root():
    model = nn.Module()
    model.add_module("<root>", nn.Linear(2, 2, device="meta"))
    doc = st.export(model, MESH)
    assert doc["root"] == "<root>"
    assert doc["modules"]["<root>"]["children"] == {"<root>": "<root>#2"}
    assert doc["modules"]["<root>#2"]["params"] == {"weight": "<root>.weight", "bias": "<root>.bias"}
    assert_matches_torch(model, doc, ids=False)


def test_forward_signatures():
    doc = st.export(VarArgs(), MESH)
    assert doc["modules"]["<root>"]["forward"] == ["x", "*args", "scale", "**kwargs"]
    assert doc["modules"]["kw"]["forward"] == ["hidden", "mask", "cache", "**extra"]
    assert doc["modules"]["proj"]["forward"] == ["input"]
    assert st.export(ArgsOnly(), MESH)["modules"]["<root>"]["forward"] == ["*inputs"]
    # A container's forward is torch's _forward_unimplemented(*input).
    seq = st.export(nn.ModuleList([nn.ReLU()]), MESH)
    assert seq["modules"]["<root>"]["forward"] == ["*input"]
    # A forward set on the instance is the one torch calls, and is not cached per class.
    patched = nn.Sequential(nn.Linear(2, 2, device="meta"), nn.Linear(2, 2, device="meta"))
    patched[1].forward = lambda hidden, *rest: hidden
    doc = st.export(patched, MESH)["modules"]
    assert doc["0"]["forward"] == ["input"] and doc["1"]["forward"] == ["hidden", "*rest"]
    tx = st.export(transformer(), MESH)["modules"]
    assert tx["<root>"]["forward"][:2] == ["src", "tgt"]
    assert tx["encoder.layers.0.self_attn"]["forward"][:3] == ["query", "key", "value"]


def test_a_forward_taking_kwargs_accepts_any_input_name():
    providers = {"sharding": {"kw": {"params": {"weight": {}}, "in_src": {"anything": {}}, "in_dst": {"anything": {}}}}}
    with st.check(VarArgs(), MESH, providers=providers) as result:
        assert result.ok, result.diagnostics


def test_a_module_cycle_is_exported_and_refused_by_the_engine():
    model = nn.Sequential(nn.Sequential())
    model[0].add_module("back", model)  # named_modules(remove_duplicate=False) would not end
    doc = st.export(model, MESH)
    assert doc["modules"]["0"]["children"] == {"back": "<root>"}
    with st.check(model, MESH) as result:
        assert [d.code for d in result.diagnostics] == ["invalid-document"]


def test_registration_order_and_none_entries():
    doc = st.export(Holes(), MESH)
    root = doc["modules"]["<root>"]
    assert root["params"] == {"b": "b", "a": "a"}
    assert root["children"] == {"z": "z", "y": "y"}
    assert "params" not in doc["modules"]["<root>"]["children"]
    assert doc["modules"]["z"]["params"] == {"weight": "z.weight"}
    assert "children" not in doc["modules"]["z"]


def test_buffers_are_not_exported():
    doc = st.export(WithBuffers(), MESH)
    assert list(doc["parameters"]) == ["scale", "bn.weight", "bn.bias"]
    assert doc["modules"]["bn"]["params"] == {"weight": "bn.weight", "bias": "bn.bias"}
    assert doc["modules"]["bn"]["type"] == "BatchNorm1d"
    assert "table" not in json.dumps(doc) and "running_mean" not in json.dumps(doc)


def test_dtypes():
    doc = st.export(Dtypes(), MESH)
    assert {k: v["dtype"] for k, v in doc["parameters"].items()} == {
        "f32": "float32", "f16": "float16", "bf16": "bfloat16", "i8": "int8",
        "i32": "int32", "i64": "int64", "flag": "bool",
    }
    bf16 = st.export(TinyGPT(dtype=torch.bfloat16), MESH)
    assert {v["dtype"] for v in bf16["parameters"].values()} == {"bfloat16"}
    # dtype=: floating-point parameters as model.to(dtype) would cast them.
    cast = st.export(Dtypes(), MESH, dtype=torch.bfloat16)
    assert {k: v["dtype"] for k, v in cast["parameters"].items()} == {
        "f32": "bfloat16", "f16": "bfloat16", "bf16": "bfloat16", "i8": "int8",
        "i32": "int32", "i64": "int64", "flag": "bool",
    }
    assert st.export(TinyGPT(), MESH, dtype="float16") == st.export(TinyGPT(dtype=torch.float16), MESH)
    with pytest.raises(ValueError, match="int8: only floating-point"):
        st.export(TinyGPT(), MESH, dtype=torch.int8)
    with pytest.raises(ValueError, match="float64 cannot be written"):
        st.export(nn.Linear(2, 2, dtype=torch.float64, device="meta"), MESH)
    # ... unless exported as another dtype
    assert st.export(nn.Linear(2, 2, dtype=torch.float64, device="meta"), MESH, dtype="float32")


def test_bfloat16_memory_is_half_of_float32():
    kwargs = dict(providers=embedding_provider(), templates=[TP_TEMPLATE])
    with st.plan(TinyGPT(), MESH, **kwargs) as f32, st.plan(TinyGPT(dtype=torch.bfloat16), MESH, **kwargs) as bf16:
        assert f32.ok and bf16.ok
        assert bf16.memory.unsharded_bytes * 2 == f32.memory.unsharded_bytes
        assert bf16.memory.max_bytes * 2 == f32.memory.max_bytes


def test_meta_and_cpu_models_export_the_same_document():
    torch.manual_seed(0)
    assert st.export(TinyGPT(device="cpu"), MESH) == st.export(TinyGPT(device="meta"), MESH)
    assert next(TinyGPT().parameters()).is_meta


@pytest.mark.filterwarnings("ignore:Lazy modules are a new feature")
def test_lazy_parameters_have_no_shape():
    model = nn.Sequential(nn.LazyLinear(4))
    doc = st.export(model, MESH)
    assert doc["parameters"]["0.weight"] == {"dtype": "float32"}
    with shardplan.parse(json.dumps(doc)) as parsed:
        assert parsed.is_valid


def test_family_declaration_is_copied_and_owns():
    doc = st.export(FamilyModel(), MESH)
    attn = doc["modules"]["attn"]
    assert attn["parallel"] == {"binding_kind": "tp", "axes": ["tp"]}
    assert attn["family"] == {"parallel": True, "sharding": FAMILY_LAYOUT}
    assert list(attn) == ["type", "forward", "children", "parallel", "family"]
    assert doc["modules"]["other"]["parallel"] is None and "family" not in doc["modules"]["other"]
    assert "parallel" not in doc["modules"]["embed"]
    with st.check(FamilyModel(), MESH) as result:
        assert result.ok, result.diagnostics
        owned = result.to_dict()["owned"]
        assert list(owned["specs"]) == ["attn"]
        assert owned["parallel"] == {"attn": {"binding_kind": "tp", "axes": ["tp"]}}
        assert owned["owned_names"] == ["attn.o.bias", "attn.o.weight", "attn.q.bias", "attn.q.weight"]


def test_family_declaration_errors():
    class Bad(nn.Module):
        def parallel_module_spec(self):
            return {"family": {}, "sharding": {}}

    with pytest.raises(ValueError, match="unknown keys \\['sharding'\\]"):
        st.export(Bad(), MESH)

    class NotJson(nn.Module):
        def parallel_module_spec(self):
            return {"parallel": object()}

    with pytest.raises(TypeError, match="JSON data"):
        st.export(NotJson(), MESH)


def test_gpt_check_and_plan_with_tp_template_and_tied_embedding():
    kwargs = dict(providers=embedding_provider(), templates=[TP_TEMPLATE])
    with st.check(TinyGPT(), MESH, **kwargs) as checked:
        assert checked.ok, checked.diagnostics
        owned = checked.to_dict()["owned"]
        assert owned["aliases"] == [["wte.weight", "lm_head.weight"]]
        assert checked.memory is None
    with st.plan(TinyGPT(), MESH, threads=1, **kwargs) as planned:
        assert planned.ok, planned.diagnostics
        assert [d.code for d in planned.diagnostics] == ["unplanned-parameters"]
        entries = {e.fqn: e.provenance for e in planned.plan_entries}
        assert entries["wte"] == "owned:model"
        assert entries["h.1.attn.c_attn"] == "template:tp:h.*.attn.c_attn"
        assert entries["h.0.mlp.c_proj"] == "template:tp:h.*.mlp.c_proj"
        layouts = planned.to_dict()["plan"]["modules"]
        assert layouts["h.0.attn.c_attn"]["params"] == {"weight": {"tp": "S(-2)"}, "bias": {"tp": "S(-1)"}}
        assert layouts["h.0.attn.c_proj"]["params"] == {"weight": {"tp": "S(-1)"}, "bias": {"tp": "R"}}
        assert planned.to_dict()["collectives"] == {"all_reduce": {"tp": 4}}
        # Every tensor once: the tied embedding is counted once.
        unique = {id(p): p.numel() * 4 for p in TinyGPT().parameters()}
        assert planned.memory.unsharded_bytes == sum(unique.values())


def test_conflicting_tied_embedding_is_a_shared_conflict():
    providers = embedding_provider(embed="S(0)", head="S(1)")
    for run in (st.check, st.plan):
        with run(TinyGPT(), MESH, providers=providers) as result:
            assert not result.ok
            [d] = [d for d in result.diagnostics if str(d.severity) == "error"]
            assert (d.code, d.fqn, d.parameter) == ("shared-conflict", "lm_head", "lm_head.weight")
            assert d.pointer == "/providers/sharding/lm_head/params/weight"


def test_overrides_and_native_requests_pass_through():
    native = [{"match": ["ln_f"], "parallel": None,
               "sharding": {"params": {"weight": {"tp": "R"}, "bias": {"tp": "R"}},
                            "in_src": {"input": {}}, "in_dst": {"input": {}}}}]
    providers = dict(embedding_provider(), native=native)
    overrides = {"h.0.mlp.c_fc": {"params": {"weight": {"tp": "R"}}, "in_src": {}, "in_dst": {}}}
    doc = st.export(TinyGPT(), MESH, providers=providers, templates=[TP_TEMPLATE], overrides=overrides)
    assert list(doc)[-3:] == ["providers", "templates", "overrides"]
    assert doc["providers"]["native"] == native and doc["overrides"] == overrides
    with st.plan(TinyGPT(), MESH, providers=providers, templates=[TP_TEMPLATE], overrides=overrides) as r:
        assert r.ok, r.diagnostics
        entries = {e.fqn: e.provenance for e in r.plan_entries}
        assert entries["ln_f"] == "owned:native" and entries["h.0.mlp.c_fc"] == "override"
    # The arguments are copied, not shared.
    doc["providers"]["native"].clear()
    assert native


def test_blocks_by_any_path():
    blocks = {"h.0.attn.c_attn.weight": [8, 1], "lm_head.weight": [1, 16]}
    doc = st.export(TinyGPT(), MESH, blocks=blocks)
    assert doc["parameters"]["h.0.attn.c_attn.weight"]["blocks"] == [8, 1]
    assert doc["parameters"]["wte.weight"]["blocks"] == [1, 16]  # lm_head.weight is wte.weight
    with pytest.raises(ValueError, match="one parameter with different blocks"):
        st.export(TinyGPT(), MESH, blocks={"wte.weight": [2, 1], "lm_head.weight": [4, 1]})
    with pytest.raises(ValueError, match="no submodule 'h.9'"):
        st.export(TinyGPT(), MESH, blocks={"h.9.attn.c_attn.weight": [8, 1]})
    with pytest.raises(ValueError, match="names no parameter"):
        st.export(TinyGPT(), MESH, blocks={"h.0.attn.weight": [8, 1]})
    # The planner counts units: 48 rows in blocks of 8 (6 units) over tp=4 is uneven.
    with st.plan(TinyGPT(), "tp=4", templates=[TP_TEMPLATE],
                 blocks={"h.0.attn.c_attn.weight": [8, 1]}) as r:
        assert [d.code for d in r.diagnostics if d.code.endswith("-shard")] == ["uneven-shard"]
        assert r.diagnostics[0].parameter == "h.0.attn.c_attn.weight"


def test_mesh_forms():
    assert st.export(nn.ReLU(), "dp=8, tp=4")["mesh"] == {"dp": 8, "tp": 4}
    assert list(st.export(nn.ReLU(), {"tp": 4, "dp": 8})["mesh"]) == ["tp", "dp"]
    assert st.export(nn.ReLU(), [("ep", 2)])["mesh"] == {"ep": 2}
    for bad in ("dp", "dp=x", "dp=0", "dp=2,dp=2", "=2", ""):
        with pytest.raises(ValueError):
            st.export(nn.ReLU(), bad)
    with pytest.raises(TypeError):
        st.export(nn.ReLU(), 8)
    with pytest.raises(TypeError, match="torch.nn.Module"):
        st.export({"not": "a model"}, MESH)


def test_importing_shardplan_does_not_import_torch():
    code = "import sys, shardplan; print('torch' in sys.modules, 'shardplan.torch' in sys.modules)"
    run = subprocess.run([sys.executable, "-c", code], env=cli_env(), cwd=TESTS_DIR,
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == ["False", "False"]


# ---------------------------------------------------------------------------
# The command line


def cli_env():
    env = dict(os.environ, SHARDPLAN_LIBRARY=shardplan.library_path())
    env["PYTHONPATH"] = os.pathsep.join([str(BINDING_DIR)] + [p for p in [env.get("PYTHONPATH")] if p])
    return env


def cli(*args, cwd=TESTS_DIR):
    return subprocess.run(
        ["/usr/bin/python3", "-m", "shardplan.torch", *map(str, args)],
        cwd=cwd, env=cli_env(), capture_output=True, text=True, timeout=120,
    )


def test_cli_writes_the_document(tmp_path):
    out = tmp_path / "gpt.json"
    run = cli("tests_helper_module:factory", "--mesh", MESH, "--out", out)
    assert run.returncode == 0, run.stderr
    assert run.stdout == f"{out}: 24 modules, 28 parameters\n"
    expected = st.export(TinyGPT(), MESH, providers=embedding_provider(), templates=[TP_TEMPLATE])
    assert json.loads(out.read_text()) == expected
    assert out.read_text() == st.dumps(expected)
    # {, schema, mesh, parameters: {, one line each, }, root, modules: {, one line each, },
    # providers, templates, }
    assert st.dumps(expected).count("\n") == 4 + 28 + 3 + 24 + 4


def test_cli_plan_prints_the_plan_summary(tmp_path):
    out = tmp_path / "gpt.json"
    run = cli("tests_helper_module:factory", "--mesh", MESH, "--out", out, "--plan")
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert lines[0].startswith("info[unplanned-parameters]: 11 parameters are declared by no plan entry")
    assert lines[1] == f"  --> {out}"
    assert lines[2] == f"{out}: ok: 2 owners, 2 owned parameter names, 1 alias"
    assert re.fullmatch(r"memory per device \(4 devices\): min [\d.]+ KiB, mean [\d.]+ KiB, "
                        r"max [\d.]+ KiB \(device 0\); unsharded 31.75 KiB", lines[3])
    assert lines[4] == "collectives: all_reduce@tp x4"
    assert lines[5] == "plan:"
    assert lines[6:9] == [
        "  wte  weight  tp=S(0)  [owned:model]",
        "  lm_head  (no parameters)  [owned:model]",
        "  h.0.attn.c_attn  weight  tp=S(-2)  [template:tp:h.*.attn.c_attn]",
    ]
    assert len(lines) == 6 + 2 + 16
    with st.plan(TinyGPT(), MESH, providers=embedding_provider(), templates=[TP_TEMPLATE]) as r:
        assert run.stdout == st.report(r, str(out))


def test_cli_check_conflict_exits_1(tmp_path):
    out = tmp_path / "bad.json"
    run = cli("tests_helper_module:factory_conflict", "--out", out, "--check")  # mesh from the extras
    assert run.returncode == 1, run.stderr
    assert run.stdout == (
        "error[shared-conflict]: shared parameter 'lm_head.weight' has conflicting layouts\n"
        f"  --> {out}:/providers/sharding/lm_head/params/weight\n"
        f"{out}: 1 error\n"
    )
    assert json.loads(out.read_text())["mesh"] == {"dp": 2, "tp": 2}


def test_cli_files_replace_the_extras(tmp_path):
    providers = tmp_path / "providers.json"
    providers.write_text(json.dumps(embedding_provider()))
    templates = tmp_path / "templates.json"
    templates.write_text(json.dumps([TP_TEMPLATE]))
    blocks = tmp_path / "blocks.json"
    blocks.write_text(json.dumps({"lm_head.weight": [4, 1]}))
    out = tmp_path / "doc.json"
    run = cli("tests_helper_module:factory_conflict", "--mesh", "tp=4", "--providers", providers,
              "--templates", templates, "--blocks", blocks, "--dtype", "bfloat16", "--out", out, "--check")
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout.endswith(f"{out}: ok: 2 owners, 2 owned parameter names, 1 alias\n")
    doc = json.loads(out.read_text())
    assert doc == st.export(TinyGPT(), "tp=4", providers=embedding_provider(), templates=[TP_TEMPLATE],
                            blocks={"wte.weight": [4, 1]}, dtype=torch.bfloat16)


def test_cli_loads_a_file_path(tmp_path):
    out = tmp_path / "doc.json"
    run = cli(TESTS_DIR / "tests_helper_module.py:bare_model", "--mesh", MESH, "--out", out, cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert json.loads(out.read_text()) == st.export(TinyGPT(), MESH)


@pytest.mark.parametrize("args, message", [
    (["tests_helper_module:bare_model", "--out", "x.json"], "no mesh"),
    (["tests_helper_module:nothing", "--mesh", MESH, "--out", "x.json"], "cannot load"),
    (["no_such_module:f", "--mesh", MESH, "--out", "x.json"], "No module named 'no_such_module'"),
    (["tests_helper_module:bare_model", "--mesh", "dp", "--out", "x.json"], "cannot export: mesh"),
    (["tests_helper_module", "--mesh", MESH, "--out", "x.json"], "expected MODULE:FACTORY"),
    (["tests_helper_module:bare_model", "--mesh", MESH], "--out"),
    (["tests_helper_module:bare_model", "--mesh", MESH, "--out", "x.json", "--check", "--plan"], "not allowed"),
])
def test_cli_usage_errors_exit_2(monkeypatch, capsys, args, message):
    monkeypatch.chdir(TESTS_DIR)  # in this process: main() is what python -m shardplan.torch runs
    try:
        status = st.main(args)
    except SystemExit as exit:  # argparse's usage errors
        status = exit.code
    assert status == 2
    assert message in capsys.readouterr().err
    assert not (TESTS_DIR / "x.json").exists()


def test_cli_runs_as_a_module_and_shows_its_usage():
    run = cli("--help")
    assert run.returncode == 0, run.stderr
    assert run.stdout.startswith("usage: python -m shardplan.torch [-h] [--mesh MESH]")
    assert "FACTORY() returns the model" in run.stdout


# ---------------------------------------------------------------------------
# docs/pytorch.md


def docs_commands():
    """(command, output shown) of every block of docs/pytorch.md that starts with "$ "."""
    text = (REPO_ROOT / "docs" / "pytorch.md").read_text()
    blocks = re.findall(r"```(\w*)\n(.*?)```", text, re.S)
    return [tuple(body[2:].split("\n", 1)) for _, body in blocks if body.startswith("$ ")]


def test_docs_example_is_example_torch_py():
    text = (REPO_ROOT / "docs" / "pytorch.md").read_text()
    code = re.search(r"```python\n(import shardplan.torch\n.*?)```", text, re.S).group(1)
    assert code == (BINDING_DIR / "example_torch.py").read_text()
    lines = [l for l in code.splitlines() if l and not l.startswith(("import", "from"))]
    assert len(lines) == 5


def test_docs_outputs_are_current(tmp_path):
    commands = docs_commands()
    assert len(commands) == 5
    # "python3" in the docs is the Python running these tests (Debian's, with torch).
    (tmp_path / "python3").symlink_to(sys.executable)
    env = dict(cli_env(), PATH=f"{tmp_path}{os.pathsep}{os.environ.get('PATH', '')}")
    for command, shown in commands:  # in order: later ones read what earlier ones wrote
        run = subprocess.run(["bash", "-c", command], cwd=REPO_ROOT, env=env,
                             capture_output=True, text=True, timeout=120)
        assert run.stderr == "", command
        assert run.stdout == shown, command


# ---------------------------------------------------------------------------
# templates="auto" and pipeline="auto": the model's own Hugging Face plans


class TinyHfModel(nn.Module):
    """A transformers-like causal LM: the base model under ``model``, its
    plans in ``config`` and the head's in the class, as transformers 4.57
    spells them."""

    base_model_prefix = "model"
    _tp_plan = {"lm_head": "colwise_rep"}
    _pp_plan = {"lm_head": (["hidden_states"], ["logits"])}

    class Base(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed_tokens = nn.Embedding(64, 8, device="meta")
            self.layers = nn.ModuleList(nn.Linear(8, 8, device="meta") for _ in range(2))
            self.norm = nn.LayerNorm(8, device="meta")

        def forward(self, input_ids, attention_mask=None, **kwargs):
            raise NotImplementedError

    def __init__(self, ep_plan=None):
        super().__init__()
        self.config = type("Config", (), {})()
        self.config.base_model_tp_plan = {"layers.*": "colwise"}
        self.config.base_model_pp_plan = {
            "embed_tokens": (["input_ids"], ["inputs_embeds"]),
            "layers": (["input"], ["hidden_states"]),
            "norm": (["hidden_states"], ["hidden_states"]),
        }
        if ep_plan is not None:
            self.config.base_model_ep_plan = ep_plan
        self.model = TinyHfModel.Base()
        self.lm_head = nn.Linear(8, 64, bias=False, device="meta")

    def forward(self, input_ids, attention_mask=None, labels=None, **kwargs):
        raise NotImplementedError


def test_auto_templates_are_the_models_own_plans():
    doc = st.export(TinyHfModel(), "tp=2", templates="auto")
    assert doc["templates"] == [
        {"axis": "tp", "prefix": "model", "rules": {"layers.*": "colwise"}},
        {"axis": "tp", "rules": {"lm_head": "colwise_rep"}},
    ]
    # The expert plan goes on 'ep', only where the mesh has that axis.
    model = TinyHfModel(ep_plan={"layers.*": "grouped_gemm"})
    assert [t["axis"] for t in st.export(model, "tp=2", templates="auto")["templates"]] == ["tp", "tp"]
    assert [t["axis"] for t in st.export(model, "ep=2,tp=2", templates="auto")["templates"]] == ["tp", "tp", "ep"]
    with st.plan(TinyHfModel(), "tp=2", templates="auto") as r:
        assert r.ok, [str(d) for d in r.diagnostics]
        # colwise_rep is transformers 4.x's colwise_gather_output: planned as it, with the rename as a fix.
        legacy = [d for d in r.diagnostics if d.code == "legacy-style-name"]
        assert len(legacy) == 1 and legacy[0].fix[0].value == '"colwise_gather_output"'
        assert r.to_dict()["plan"]["modules"]["lm_head"]["params"] == {"weight": {"tp": "S(-2)"}}


def test_auto_pipeline_is_the_models_own_pp_plan():
    doc = st.export(TinyHfModel(), "tp=2", pipeline="auto")
    assert doc["pipeline"] == {"modules": {
        "model.embed_tokens": [["input_ids"], ["inputs_embeds"]],
        "model.layers": [["input"], ["hidden_states"]],
        "model.norm": [["hidden_states"], ["hidden_states"]],
        "lm_head": [["hidden_states"], ["logits"]],
    }}
    with st.check(TinyHfModel(), "tp=2", pipeline="auto") as r:
        assert not [str(d) for d in r.diagnostics if d.code.startswith("pipeline-")]


def test_auto_without_a_plan_says_what_is_missing():
    with pytest.raises(ValueError, match="no Hugging Face plan"):
        st.export(TinyGPT(), MESH, templates="auto")
    with pytest.raises(ValueError, match="base_model_pp_plan"):
        st.export(TinyGPT(), MESH, pipeline="auto")
    with pytest.raises(ValueError, match="'auto'"):
        st.export(TinyGPT(), MESH, templates="tp")


# ---------------------------------------------------------------------------
# training=: the document's training section, and model_description(config)

# The values of each published config.json that describe the model (with its
# model_type and hidden_act), as the Hugging Face Hub publishes them.
PUBLISHED_CONFIGS = {
    # https://huggingface.co/meta-llama/Meta-Llama-3-8B/blob/main/config.json
    "Llama-3-8B": {
        "architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_act": "silu",
        "hidden_size": 4096, "intermediate_size": 14336, "num_attention_heads": 32,
        "num_hidden_layers": 32, "num_key_value_heads": 8, "vocab_size": 128256,
        "max_position_embeddings": 8192, "rope_theta": 500000.0, "tie_word_embeddings": False,
        "torch_dtype": "bfloat16",
    },
    # https://huggingface.co/Qwen/Qwen3-30B-A3B/blob/main/config.json
    "Qwen3-30B-A3B": {
        "architectures": ["Qwen3MoeForCausalLM"], "model_type": "qwen3_moe", "hidden_act": "silu",
        "decoder_sparse_step": 1, "head_dim": 128, "hidden_size": 2048, "intermediate_size": 6144,
        "mlp_only_layers": [], "moe_intermediate_size": 768, "norm_topk_prob": True,
        "num_attention_heads": 32, "num_experts": 128, "num_experts_per_tok": 8,
        "num_hidden_layers": 48, "num_key_value_heads": 4, "vocab_size": 151936,
        "tie_word_embeddings": False, "torch_dtype": "bfloat16",
    },
    # https://huggingface.co/mistralai/Mixtral-8x7B-v0.1/blob/main/config.json
    "Mixtral-8x7B": {
        "architectures": ["MixtralForCausalLM"], "model_type": "mixtral", "hidden_act": "silu",
        "hidden_size": 4096, "intermediate_size": 14336, "num_attention_heads": 32,
        "num_experts_per_tok": 2, "num_hidden_layers": 32, "num_key_value_heads": 8,
        "num_local_experts": 8, "vocab_size": 32000, "tie_word_embeddings": False,
        "torch_dtype": "bfloat16",
    },
    # https://huggingface.co/deepseek-ai/DeepSeek-V3/blob/main/config.json
    "DeepSeek-V3": {
        "architectures": ["DeepseekV3ForCausalLM"], "model_type": "deepseek_v3", "hidden_act": "silu",
        "first_k_dense_replace": 3, "hidden_size": 7168, "intermediate_size": 18432,
        "kv_lora_rank": 512, "moe_intermediate_size": 2048, "moe_layer_freq": 1, "n_group": 8,
        "n_routed_experts": 256, "n_shared_experts": 1, "num_attention_heads": 128,
        "num_experts_per_tok": 8, "num_hidden_layers": 61, "num_key_value_heads": 128,
        "q_lora_rank": 1536, "qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "topk_group": 4,
        "v_head_dim": 128, "vocab_size": 129280, "tie_word_embeddings": False,
        "torch_dtype": "bfloat16",
    },
}

# What each describes, written out by hand from the values above.
DESCRIPTIONS = {
    "Llama-3-8B": {
        "hidden_size": 4096, "num_attention_heads": 32, "num_key_value_heads": 8,
        "head_dim": 128,  # not in config.json: 4096 / 32, transformers' default
        "intermediate_size": 14336, "gated_mlp": True, "num_hidden_layers": 32, "vocab_size": 128256,
    },
    "Qwen3-30B-A3B": {
        "hidden_size": 2048, "num_attention_heads": 32, "num_key_value_heads": 4, "head_dim": 128,
        "intermediate_size": 6144, "gated_mlp": True, "num_hidden_layers": 48, "vocab_size": 151936,
        "num_experts": 128, "num_experts_per_tok": 8, "moe_intermediate_size": 768,
        "num_shared_experts": 0,
        "first_k_dense_replace": 0,  # decoder_sparse_step 1, mlp_only_layers []: every layer MoE
    },
    "Mixtral-8x7B": {
        "hidden_size": 4096, "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 128,
        "intermediate_size": 14336, "gated_mlp": True, "num_hidden_layers": 32, "vocab_size": 32000,
        "num_experts": 8, "num_experts_per_tok": 2,
        "moe_intermediate_size": 14336,  # the experts are intermediate_size wide
        "num_shared_experts": 0, "first_k_dense_replace": 0,
    },
    "DeepSeek-V3": {
        "hidden_size": 7168, "num_attention_heads": 128, "num_key_value_heads": 128,
        "head_dim": 160,  # MLA: Q and K heads of 128 + 64, V and output heads of 128: (192 + 128) / 2
        "intermediate_size": 18432, "gated_mlp": True, "num_hidden_layers": 61, "vocab_size": 129280,
        "num_experts": 256, "num_experts_per_tok": 8, "moe_intermediate_size": 2048,
        "num_shared_experts": 1, "first_k_dense_replace": 3,
    },
}


class Config:
    """A config object as transformers' configs are: attributes."""

    def __init__(self, **values):
        self.__dict__.update(values)


@pytest.mark.parametrize("name", sorted(PUBLISHED_CONFIGS))
def test_model_description_of_published_configs(name):
    config = PUBLISHED_CONFIGS[name]
    assert st.model_description(config) == DESCRIPTIONS[name]
    assert list(st.model_description(config)) == list(DESCRIPTIONS[name])  # docs/planning.md's order
    assert st.model_description(Config(**config)) == DESCRIPTIONS[name]


def test_model_description_of_mla_ignores_transformers_rotary_head_dim():
    # transformers' DeepseekV3Config sets head_dim = qk_rope_head_dim (64), for the rotary
    # embedding; the description's head size is MLA's mean head, 160.
    config = Config(**PUBLISHED_CONFIGS["DeepSeek-V3"], head_dim=64)
    assert st.model_description(config)["head_dim"] == 160
    odd = dict(PUBLISHED_CONFIGS["DeepSeek-V3"], v_head_dim=127, num_key_value_heads=1)
    assert st.model_description(odd)["head_dim"] == 160  # (192 + 127) / 2 rounded up
    assert st.model_description(odd)["num_key_value_heads"] == 128  # one K and V per query head


def test_model_description_counts_the_dense_layers():
    qwen = PUBLISHED_CONFIGS["Qwen3-30B-A3B"]
    assert st.model_description(dict(qwen, mlp_only_layers=[0, 1, 2]))["first_k_dense_replace"] == 3
    # Every other layer sparse: 24 dense layers (not the first ones: only their number is kept).
    assert st.model_description(dict(qwen, decoder_sparse_step=2))["first_k_dense_replace"] == 24
    assert st.model_description(dict(qwen, decoder_sparse_step=2, mlp_only_layers=[1, 2]))[
        "first_k_dense_replace"] == 25
    deepseek = PUBLISHED_CONFIGS["DeepSeek-V3"]
    assert st.model_description(dict(deepseek, moe_layer_freq=2))["first_k_dense_replace"] == 32  # 0-2, 3, 5, ...
    assert st.model_description(dict(deepseek, first_k_dense_replace=0))["first_k_dense_replace"] == 0
    # No experts: a dense model, whatever else the config says.
    dense = st.model_description(dict(qwen, num_experts=0))
    assert "num_experts" not in dense and "first_k_dense_replace" not in dense


def test_model_description_of_llama4_and_qwen2_moe_and_text_configs():
    # meta-llama/Llama-4-Scout-17B-16E's text_config: 16 routed experts of 8192 and a shared
    # one in every layer; the dense layers' MLP is intermediate_size_mlp.
    text = {"model_type": "llama4_text", "hidden_size": 5120, "intermediate_size": 8192,
            "intermediate_size_mlp": 16384, "num_attention_heads": 40, "num_key_value_heads": 8,
            "head_dim": 128, "num_hidden_layers": 48, "num_local_experts": 16, "num_experts_per_tok": 1,
            "interleave_moe_layer_step": 1, "vocab_size": 202048}
    want = {"hidden_size": 5120, "num_attention_heads": 40, "num_key_value_heads": 8, "head_dim": 128,
            "intermediate_size": 16384, "gated_mlp": True, "num_hidden_layers": 48, "vocab_size": 202048,
            "num_experts": 16, "num_experts_per_tok": 1, "moe_intermediate_size": 8192,
            "num_shared_experts": 1, "first_k_dense_replace": 0}
    assert st.model_description(text) == want
    assert st.model_description({"model_type": "llama4", "text_config": text}) == want
    assert st.model_description(dict(text, interleave_moe_layer_step=2))["first_k_dense_replace"] == 24
    assert st.model_description(dict(text, moe_layers=[1, 3]))["first_k_dense_replace"] == 46
    # Qwen/Qwen1.5-MoE-A2.7B: a shared expert 4 routed experts wide.
    qwen2 = {"model_type": "qwen2_moe", "hidden_size": 2048, "intermediate_size": 5632,
             "moe_intermediate_size": 1408, "shared_expert_intermediate_size": 5632,
             "num_attention_heads": 16, "num_key_value_heads": 16, "num_hidden_layers": 24,
             "num_experts": 60, "num_experts_per_tok": 4, "decoder_sparse_step": 1,
             "mlp_only_layers": [], "vocab_size": 151936}
    assert st.model_description(qwen2)["num_shared_experts"] == 4
    assert st.model_description(qwen2)["head_dim"] == 128
    with pytest.raises(ValueError, match="not a multiple of moe_intermediate_size 1408"):
        st.model_description(dict(qwen2, shared_expert_intermediate_size=5000))


def test_model_description_gated_mlp_and_errors():
    neox = {"model_type": "gpt_neox", "hidden_size": 2048, "intermediate_size": 8192,
            "num_attention_heads": 16, "num_hidden_layers": 24, "vocab_size": 50304}
    assert st.model_description(neox)["gated_mlp"] is False
    assert st.model_description(dict(neox, model_type=None))["gated_mlp"] is True
    with pytest.raises(ValueError, match="the config has no 'hidden_size', 'num_attention_heads', "
                                         "'num_hidden_layers', 'intermediate_size'$"):
        st.model_description({"n_embd": 768, "n_head": 12, "n_layer": 12, "vocab_size": 50257})
    with pytest.raises(ValueError, match="'num_hidden_layers' is not an integer"):
        st.model_description(dict(neox, num_hidden_layers="24"))
    mixtral = dict(PUBLISHED_CONFIGS["Mixtral-8x7B"])
    del mixtral["num_experts_per_tok"]
    with pytest.raises(ValueError, match="the config has 8 experts but no 'num_experts_per_tok'"):
        st.model_description(mixtral)


LLAMA_TINY = {"model_type": "llama", "hidden_size": 16, "intermediate_size": 64, "num_attention_heads": 4,
              "num_key_value_heads": 2, "num_hidden_layers": 2, "vocab_size": 64}


def with_config(model, config=LLAMA_TINY):
    model.config = Config(**config)
    return model


def test_training_section_describes_the_model_from_its_config():
    training = {"zero": 3, "activations": {"seq_len": 128}, "device_memory": "1GiB"}
    doc = st.export(with_config(TinyGPT()), MESH, training=training)
    assert doc["training"] == {"zero": 3, "activations": {"seq_len": 128},
                               "model": st.model_description(LLAMA_TINY), "device_memory": "1GiB"}
    assert list(doc["training"]) == ["zero", "activations", "model", "device_memory"]
    assert list(doc)[-1] == "training"
    assert training == {"zero": 3, "activations": {"seq_len": 128}, "device_memory": "1GiB"}  # not changed
    # A model given is kept; without activations no model is needed.
    given = dict(training, model={"hidden_size": 8, "num_attention_heads": 2, "intermediate_size": 8,
                                  "num_hidden_layers": 1, "vocab_size": 8})
    assert st.export(with_config(TinyGPT()), MESH, training=given)["training"] == given
    assert st.export(TinyGPT(), MESH, training={"zero": 1})["training"] == {"zero": 1}
    assert st.export(TinyGPT(), MESH, training={"activations": None})["training"] == {"activations": None}


def test_training_without_a_config_says_what_to_pass():
    with pytest.raises(ValueError, match=r"no Hugging Face config \(model.config\).*pass training\['model'\]"):
        st.export(TinyGPT(), MESH, training={"activations": {"seq_len": 128}})
    with pytest.raises(ValueError, match=r"cannot describe the model: the config has no 'num_attention_heads', "
                                         r"'num_hidden_layers', 'vocab_size', 'intermediate_size'; pass"):
        st.export(with_config(TinyGPT(), {"hidden_size": 16}), MESH, training={"activations": {"seq_len": 8}})
    with pytest.raises(TypeError, match="training must be a dict"):
        st.export(TinyGPT(), MESH, training="zero=3")


def test_plan_with_training_counts_the_memory_and_gives_the_verdict():
    kwargs = dict(providers=embedding_provider(), templates=[TP_TEMPLATE])
    fits = {"zero": 3, "master_dtype": "float32", "fsdp_units": ["h.*"],
            "activations": {"seq_len": 64}, "device_memory": "1MiB"}
    with st.plan(with_config(TinyGPT()), MESH, training=fits, **kwargs) as r:
        assert r.ok and not [d.code for d in r.diagnostics if d.code.endswith("device-memory")]
        training = r.to_dict()["memory"]["training"]
        assert training["worst"]["activations"] > 0 and training["worst"]["gathered"] > 0
        text = st.report(r, "gpt.json", fits["device_memory"])
    lines = text.splitlines()
    start = lines.index(next(l for l in lines if l.startswith("training memory per device: ")))
    assert lines[start + 1] == "  worst: device 0 (dp=0, tp=0) of 1.00 MiB"
    assert [l.split()[1] for l in lines[start + 2:start + 8]] == [
        "params", "grads", "master", "optimizer", "gathered", "activations"]
    assert re.fullmatch(r"      total +[\d.]+ KiB  \(\d+% of device_memory\)", lines[start + 8])
    assert re.fullmatch(r"    \[[#=+%~*]*\.*\]", lines[start + 9]) and len(lines[start + 9]) == 56
    assert lines[start + 10].startswith("collectives: ")
    # Zero 0 needs 161344 bytes a device, zero 1 134752, zero 2 125888.
    tight = dict(fits, zero=0, device_memory=130000)
    with st.plan(with_config(TinyGPT()), MESH, training=tight, **kwargs) as r:
        assert not r.ok
        [error] = [d for d in r.diagnostics if d.code == "exceeds-device-memory"]
        assert "needs 0.00 GiB (161344 bytes) for training, more than device_memory" in error.message
        assert "it would fit with: zero 2 (" in error.message
    with st.check(with_config(TinyGPT()), MESH, training=tight, **kwargs) as r:
        assert "memory" not in r.to_dict() or r.to_dict()["memory"] is None  # check: no plan, no memory


def test_cli_training_from_json_text_and_file(tmp_path):
    model = {"hidden_size": 16, "num_attention_heads": 4, "intermediate_size": 64,
             "num_hidden_layers": 2, "vocab_size": 64}
    training = {"zero": 3, "fsdp_units": ["h.*"], "activations": {"seq_len": 64}, "model": model,
                "device_memory": "1MiB"}
    out = tmp_path / "gpt.json"
    run = cli("tests_helper_module:factory", "--mesh", MESH, "--training", json.dumps(training),
              "--out", out, "--plan")
    assert run.returncode == 0, run.stderr
    assert json.loads(out.read_text())["training"] == training
    with st.plan(TinyGPT(), MESH, providers=embedding_provider(), templates=[TP_TEMPLATE],
                 training=training) as r:
        assert run.stdout == st.report(r, str(out), "1MiB")
    assert "  worst: device 0 (dp=0, tp=0) of 1.00 MiB\n" in run.stdout
    path = tmp_path / "training.json"
    path.write_text(json.dumps(dict(training, device_memory="16KiB")))
    run = cli("tests_helper_module:factory", "--mesh", MESH, "--training", path, "--out", out, "--plan")
    assert run.returncode == 1, run.stderr
    assert "error[exceeds-device-memory]: device 0 (dp=0, tp=0) needs" in run.stdout
    # No model and no config: exit 2, saying what to pass.
    del training["model"]
    run = cli("tests_helper_module:factory", "--mesh", MESH, "--training", json.dumps(training), "--out", out)
    assert run.returncode == 2
    assert "cannot export: training has 'activations' but no 'model'" in run.stderr
    run = cli("tests_helper_module:factory", "--mesh", MESH, "--training", "{not json", "--out", out)
    assert run.returncode == 2 and "cannot read" in run.stderr


def test_cli_training_describes_a_factory_models_config(tmp_path):
    (tmp_path / "configured.py").write_text(
        "from tests_helper_module import TinyGPT\n"
        "from types import SimpleNamespace\n"
        f"CONFIG = SimpleNamespace(**{LLAMA_TINY!r})\n"
        "def build():\n"
        "    model = TinyGPT()\n"
        "    model.config = CONFIG\n"
        "    return model, {'mesh': 'dp=2,tp=2', 'training': {'activations': {'seq_len': 64}}}\n"
    )
    out = tmp_path / "doc.json"
    env_path = os.pathsep.join([str(TESTS_DIR), str(BINDING_DIR)])
    run = subprocess.run(["/usr/bin/python3", "-m", "shardplan.torch", str(tmp_path / "configured.py:build"),
                          "--out", str(out)], cwd=tmp_path, env=dict(cli_env(), PYTHONPATH=env_path),
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert json.loads(out.read_text())["training"] == {"activations": {"seq_len": 64},
                                                        "model": st.model_description(LLAMA_TINY)}


def test_report_training_lines_are_the_cli_s(tmp_path):
    """The training lines of report() are those the shardplan CLI prints for the same document."""
    cli_path = os.environ.get("SHARDPLAN_CLI") or str(REPO_ROOT / "bazel-bin" / "cli" / "shardplan")
    if not os.access(cli_path, os.X_OK):
        pytest.skip("no shardplan CLI (set SHARDPLAN_CLI or build //cli:shardplan)")
    training = {"zero": 2, "master_dtype": "float32", "activations": {"seq_len": 64},
                "device_memory": "100KiB", "headroom": 0.5}
    doc = st.export(with_config(TinyGPT()), MESH, providers=embedding_provider(), templates=[TP_TEMPLATE],
                    training=training)
    path = tmp_path / "doc.json"
    path.write_text(st.dumps(doc))
    run = subprocess.run([cli_path, "plan", "--color", "never", str(path)], capture_output=True, text=True,
                         timeout=60)

    def section(text):
        lines = text.splitlines()
        start = next(i for i, l in enumerate(lines) if l.startswith("training memory"))
        end = next(i for i, l in enumerate(lines) if l.startswith("collectives"))
        return lines[start:end]

    with shardplan.plan(st.dumps(doc)) as r:
        assert section(run.stdout) == section(st.report(r, str(path), "100KiB"))
