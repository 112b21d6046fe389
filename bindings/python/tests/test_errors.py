"""sp_error surfaces as ShardplanError with the right code; findings are diagnostics."""

import pickle

import pytest

import shardplan
from shardplan import ErrorCode, Port, ShardplanError
from conftest import case_text


def test_bad_placement_is_invalid_argument():
    with shardplan.Layout() as layout:
        with pytest.raises(ShardplanError) as info:
            layout.set_placement(Port.PARAMS, "weight", "tp", "Shard(0)")
    assert info.value.code is ErrorCode.INVALID_ARGUMENT
    assert "Shard(0)" in info.value.message
    assert "INVALID_ARGUMENT" in str(info.value)


def test_axis_placed_twice_is_invalid_argument():
    layout = shardplan.Layout().set_placement("params", "w", "tp", "S(0)")
    with pytest.raises(ShardplanError) as info:
        layout.set_placement("params", "w", "tp", "R")
    assert info.value.code == ErrorCode.INVALID_ARGUMENT


def test_duplicate_mesh_axis_is_invalid_argument():
    with shardplan.Builder() as builder:
        builder.add_axis("tp", 2)
        with pytest.raises(ShardplanError) as info:
            builder.add_axis("tp", 4)
    assert info.value.code is ErrorCode.INVALID_ARGUMENT
    assert info.value.message == "duplicate mesh axis 'tp'"


def test_other_builder_refusals_are_invalid_argument():
    builder = shardplan.Builder()
    for call in (
        lambda: builder.add_axis("dp", 0),
        lambda: builder.add_parameter("p", [-1]),
        lambda: builder.add_module("m").add_module("m"),
        lambda: builder.set_family_cached("m", {"params": {}}),  # not a family member
    ):
        with pytest.raises(ShardplanError) as info:
            call()
        assert info.value.code is ErrorCode.INVALID_ARGUMENT, info.value


def test_diagnostic_index_out_of_range():
    with shardplan.check(case_text("001-multiple-owners")) as result:
        count = len(result.diagnostics)
        assert result.diagnostic(-1) == result.diagnostics[-1]
        assert result.diagnostic(-count) == result.diagnostics[0]
        for index in (count, count + 1, 2**64, -count - 1):
            with pytest.raises(ShardplanError) as info:
                result.diagnostic(index)
            assert info.value.code is ErrorCode.OUT_OF_RANGE
            assert "out of range" in info.value.message
        with pytest.raises(TypeError):
            result.diagnostic("0")


@pytest.mark.parametrize("text", ["{bad", "", "[]", b'{"schema": "shardplan.v1\xff"}'])
def test_malformed_document_is_one_invalid_document_diagnostic(text):
    with shardplan.parse(text) as document:
        assert document.is_valid is False
        with document.check() as result:
            assert result.ok is False
            [diagnostic] = result.diagnostics
    assert diagnostic.code == "invalid-document"
    assert diagnostic.severity is shardplan.Severity.ERROR
    assert diagnostic.fqn is None and diagnostic.parameter is None
    assert diagnostic.pointer == ""
    assert diagnostic.to_dict()["severity"] == "error"


@pytest.mark.parametrize(
    "limit", [{"max_paths": 2}, {"max_fqn_bytes": 5}, {"max_json_depth": 2}]
)
def test_parse_limits(tiny_llama, limit):
    assert shardplan.check(tiny_llama).ok
    result = shardplan.check(tiny_llama, **limit)
    assert [d.code for d in result.diagnostics] == ["invalid-document"]
    assert shardplan.check(tiny_llama, max_paths=None, max_fqn_bytes=0).ok  # defaults


def test_bad_option_values_are_python_errors(tiny_llama):
    with pytest.raises(ValueError):
        shardplan.parse(tiny_llama, max_paths=-1)
    with pytest.raises(ValueError):
        shardplan.parse(tiny_llama, max_json_depth=2**32)
    with pytest.raises(TypeError):
        shardplan.parse(tiny_llama, max_paths="10")
    with pytest.raises(TypeError):
        shardplan.parse(42)
    with shardplan.parse(tiny_llama) as document:
        with pytest.raises(ValueError):
            document.check(threads=-1)
        with pytest.raises(TypeError):
            document.check(threads=1.5)


def test_error_object():
    error = ShardplanError(2, "boom")
    assert error.code is ErrorCode.INVALID_ARGUMENT and error.message == "boom"
    assert str(error) == "boom [INVALID_ARGUMENT]"
    assert ShardplanError(42, "future").code == 42  # an unknown code stays an int
    copy = pickle.loads(pickle.dumps(error))
    assert (copy.code, copy.message) == (error.code, error.message)
    closed = pickle.loads(pickle.dumps(shardplan.ClosedHandleError("document")))
    assert closed.message == "the document is closed"
