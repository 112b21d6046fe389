"""Help, fixes and groups of diagnostics (sp_result_diagnostic_help/_fix, sp_result_group).

Each value read through the C ABI is checked against a literal (what
`bazel-bin/cli/shardplan check --format json` prints for the golden document)
and against the result's own JSON (sp_result_json, the same bytes).
"""

import copy
import ctypes
import json

import pytest

import shardplan
from shardplan import (
    Diagnostic,
    DiagnosticGroup,
    ErrorCode,
    FixOperation,
    Severity,
    ShardplanError,
    _capi,
)
from conftest import GOLDEN, case_text, golden_text

TYPOS = sorted(p.name[: -len(".fail.json")] for p in GOLDEN.glob("*.typo.fail.json"))
GLOB = "overlapping-communication.glob.fail"


def test_struct_layouts_match_the_header():
    size_t = ctypes.sizeof(ctypes.c_size_t)
    pointer = ctypes.sizeof(ctypes.c_void_p)
    # sp_fix_operation: four sp_str.
    assert ctypes.sizeof(_capi.sp_fix_operation) == 8 * size_t
    assert _capi.sp_fix_operation.from_.offset == 4 * size_t
    assert _capi.sp_fix_operation.value.offset == 6 * size_t
    # sp_diagnostic_group: code, the (padded) severity, pointer, count, listed, num_listed.
    assert _capi.sp_diagnostic_group.pointer.offset == 3 * size_t
    assert _capi.sp_diagnostic_group.count.offset == 5 * size_t
    assert _capi.sp_diagnostic_group.listed.offset == 6 * size_t
    assert _capi.sp_diagnostic_group.num_listed.offset == 6 * size_t + pointer
    assert ctypes.sizeof(_capi.sp_diagnostic_group) == 7 * size_t + pointer


# ---- help and fix -------------------------------------------------------------


def test_typo_cases_are_there():
    assert {"unknown-axis.typo", "unknown-module.typo", "parallel-unknown-axis.typo"} <= set(TYPOS)


def test_move_fix_of_a_misspelt_axis():
    with shardplan.check(golden_text("unknown-axis.typo.fail")) as result:
        [d] = result.diagnostics
        data = result.to_dict()
    assert d.code == "unknown-axis"
    assert d.help == "did you mean 'dp'? (the mesh's axes are 'dp', 'tp')"
    assert d.fix == (
        FixOperation(
            op="move",
            path="/providers/sharding/proj/params/weight/dp",
            from_="/providers/sharding/proj/params/weight/pd",
        ),
    )
    [op] = d.fix
    assert op.value is None
    assert op.to_dict() == {
        "op": "move",
        "from": "/providers/sharding/proj/params/weight/pd",
        "path": "/providers/sharding/proj/params/weight/dp",
    }
    # What the CLI and sp_result_json print.
    [want] = data["diagnostics"]
    assert want["help"] == d.help
    assert want["fix"] == [op.to_dict()]
    assert d.to_dict() == want


def test_replace_fix_value_is_json_text():
    with shardplan.check(golden_text("parallel-unknown-axis.typo.fail")) as result:
        [d] = result.diagnostics
        [want] = result.to_dict()["diagnostics"]
    assert d.help == "did you mean 'tp'? (the mesh's axes are 'tp')"
    [op] = d.fix
    assert op == FixOperation("replace", "/modules/linear/parallel/axes/0", None, '"tp"')
    assert op.from_ is None
    assert op.to_dict() == {"op": "replace", "path": "/modules/linear/parallel/axes/0", "value": "tp"}
    assert want["fix"] == [op.to_dict()] and want["help"] == d.help
    assert str(op) == 'replace /modules/linear/parallel/axes/0 = "tp"'


def test_a_diagnostic_without_help_or_fix():
    with shardplan.check(golden_text("unknown-parameter.typo.fail")) as result:
        typo, omitted = result.diagnostics
        data = result.to_dict()
    assert typo.code == "unknown-parameter" and typo.help == "did you mean 'proj.weight'?"
    assert [op.to_dict() for op in typo.fix] == [
        {
            "op": "move",
            "from": "/providers/sharding/proj/params/weigth",
            "path": "/providers/sharding/proj/params/weight",
        }
    ]
    assert omitted.code == "omitted-parameters"
    assert omitted.help is None and omitted.fix == ()
    assert "help" not in omitted.to_dict() and "fix" not in omitted.to_dict()
    assert data["diagnostics"] == [typo.to_dict(), omitted.to_dict()]


@pytest.mark.parametrize("name", TYPOS)
def test_typo_diagnostics_equal_the_result_json(name):
    with shardplan.check(golden_text(name + ".fail")) as result:
        diagnostics = result.diagnostics
        data = result.to_dict()
    assert data["diagnostics"] == [d.to_dict() for d in diagnostics]
    assert diagnostics[0].help and diagnostics[0].fix
    for d, want in zip(diagnostics, data["diagnostics"]):
        assert d.help == want.get("help")
        assert [op.to_dict() for op in d.fix] == want.get("fix", [])


def _unescape(token):
    return token.replace("~1", "/").replace("~0", "~")


def _parent(document, pointer):
    """(container, last key) of RFC 6901 `pointer` in `document`."""
    *head, last = [_unescape(t) for t in pointer.split("/")[1:]]
    node = document
    for token in head:
        node = node[int(token)] if isinstance(node, list) else node[token]
    return node, (int(last) if isinstance(node, list) else last)


def apply_patch(document, fix):
    """`document` with the RFC 6902 operations of `fix` ("move", "replace") applied."""
    document = copy.deepcopy(document)
    for op in fix:
        container, key = _parent(document, op.path)
        if op.op == "move":
            source, source_key = _parent(document, op.from_)
            value = source.pop(source_key)
            container[key] = value
        elif op.op == "replace":
            assert key in container or isinstance(container, list)
            container[key] = json.loads(op.value)
        else:
            raise AssertionError(f"unexpected op {op.op}")
    return document


@pytest.mark.parametrize("name", TYPOS)
def test_the_fix_gives_the_twin_and_removes_the_finding(name):
    text = golden_text(name + ".fail")
    with shardplan.check(text) as result:
        first = result.diagnostic(0)
    fixed = apply_patch(json.loads(text), first.fix)
    assert fixed == json.loads(golden_text(name + ".pass"))
    with shardplan.check(json.dumps(fixed)) as after:
        assert first.code not in {d.code for d in after.diagnostics}
        assert after.ok


def test_fix_of_an_over_wide_glob_is_the_same_for_each_module():
    with shardplan.check(golden_text(GLOB)) as result:
        overlapping = [d for d in result.diagnostics if d.code == "overlapping-communication"]
    assert len(overlapping) == 6
    [op] = overlapping[0].fix
    assert op.op == "replace" and op.path == "/providers/native/0/match"
    assert json.loads(op.value) == ["layers.*.mlp.experts.[0-9]"]
    assert overlapping[0].help.startswith("'layers.*.mlp.experts.*' also matches")
    assert all(d.fix == overlapping[0].fix and d.help == overlapping[0].help for d in overlapping)


def test_conformance_cases_without_fix_its():
    # The conformance errors have no help and no fix; their JSON carries neither.
    for name in ("001-multiple-owners", "005-native-overlaps-family"):
        with shardplan.check(case_text(name)) as result:
            for d in result.diagnostics:
                assert d.help is None and d.fix == ()


def test_diagnostics_stay_comparable_and_hashable():
    with shardplan.check(golden_text("unknown-axis.typo.fail")) as result:
        assert result.diagnostic(0) == result.diagnostics[0] == result.diagnostic(-1)
        assert len({result.diagnostic(0), result.diagnostics[0]}) == 1
    plain = Diagnostic("c", Severity.ERROR, "m")  # the fields added in 0.7 default to absent
    assert plain.help is None and plain.fix == ()


def test_a_library_without_help_and_fix(monkeypatch):
    # A library of the same ABI older than 0.7 lacks the functions: no help, no fix.
    missing = _capi.MISSING + ("sp_result_diagnostic_help", "sp_result_diagnostic_fix_count",
                               "sp_result_diagnostic_fix")
    monkeypatch.setattr(_capi, "MISSING", missing)
    with shardplan.check(golden_text("unknown-axis.typo.fail")) as result:
        [d] = result.diagnostics
    assert d.code == "unknown-axis" and d.help is None and d.fix == ()


# ---- groups -------------------------------------------------------------------


def test_groups_of_an_over_wide_glob():
    with shardplan.check(golden_text(GLOB)) as result:
        groups = result.groups
        diagnostics = result.diagnostics
        data = result.to_dict()
        assert result.group_count() == len(groups) == 9
        assert result.group(0) == groups[0] and result.group(-1) == groups[-1]
    assert groups[0] == DiagnosticGroup(
        code="overlapping-communication",
        severity=Severity.ERROR,
        pointer="/providers/native/0/parallel",
        count=6,
        listed=(0, 1, 2, 3, 4, 5),
    )
    assert [(g.code, g.count, g.listed) for g in groups] == [
        ("overlapping-communication", 6, (0, 1, 2, 3, 4, 5)),
        ("unknown-forward-input", 6, (6, 7, 8, 9, 10, 11)),
        ("nested-duplicate", 2, (12, 27)),
        ("nested-duplicate", 2, (13, 28)),
        ("nested-duplicate", 2, (14, 29)),
        ("unknown-parameter", 6, (15, 19, 23, 30, 34, 38)),
        ("unknown-parameter", 6, (16, 20, 24, 31, 35, 39)),
        ("unknown-parameter", 6, (17, 21, 25, 32, 36, 40)),
        ("omitted-parameters", 6, (18, 22, 26, 33, 37, 41)),
    ]
    assert groups[2].pointer == "/providers/native/0/sharding/params/gate_proj.weight"
    # What sp_result_json (and the CLI) print.
    assert data["groups"] == [g.to_dict() for g in groups]
    # Every diagnostic in exactly one group, with the group's code and pointer.
    listed = sorted(i for g in groups for i in g.listed)
    assert listed == list(range(len(diagnostics))) == list(range(42))
    for g in groups:
        assert g.count == len(g.listed)
        for i in g.listed:
            assert (diagnostics[i].code, diagnostics[i].pointer) == (g.code, g.pointer)
            assert diagnostics[i].severity is g.severity is Severity.ERROR
    # Groups come in the order of their first diagnostic.
    assert [g.listed[0] for g in groups] == sorted(g.listed[0] for g in groups)


@pytest.mark.parametrize("name", TYPOS)
def test_typo_groups_equal_the_result_json(name):
    with shardplan.check(golden_text(name + ".fail")) as result:
        groups = result.groups
        data = result.to_dict()
    assert data["groups"] == [g.to_dict() for g in groups]
    assert groups[0].listed == (0,) and groups[0].count == 1


def test_groups_of_an_ok_result_and_a_planned_warning():
    with shardplan.check(case_text("000-tiny-llama")) as result:
        assert result.ok and result.groups == [] and result.group_count() == 0
        with pytest.raises(ShardplanError) as info:
            result.group(0)
        assert info.value.code is ErrorCode.OUT_OF_RANGE
    uneven = """
    {"schema": "shardplan.v1", "mesh": {"tp": 4},
     "parameters": {"w": {"shape": [5, 1], "dtype": "bfloat16"}},
     "root": "model",
     "modules": {"model": {"children": {"proj": "lin"}},
                 "lin": {"type": "Linear", "forward": ["x"], "params": {"weight": "w"}}},
     "templates": [{"axis": "tp", "rules": {"proj": "colwise"}}]}
    """
    with shardplan.plan(uneven) as planned:
        [g] = planned.groups
        assert g.code == "uneven-shard" and g.severity is Severity.WARNING
        assert g.listed == (0,) and planned.to_dict()["groups"] == [g.to_dict()]


def test_group_index_out_of_range():
    with shardplan.check(golden_text("unknown-parameter.typo.fail")) as result:
        count = result.group_count()
        assert count == 2
        assert result.group(-count) == result.groups[0]
        for index in (count, count + 1, 2**64, -count - 1):
            with pytest.raises(ShardplanError) as info:
                result.group(index)
            assert info.value.code is ErrorCode.OUT_OF_RANGE
            assert "out of range" in info.value.message
        with pytest.raises(TypeError):
            result.group("0")


def test_groups_of_a_closed_result():
    result = shardplan.check(golden_text("unknown-axis.typo.fail"))
    result.close()
    for use in (lambda: result.groups, lambda: result.group(0), result.group_count):
        with pytest.raises(shardplan.ClosedHandleError):
            use()
