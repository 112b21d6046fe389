"""Training memory (sp_result_training) and the builder's training section
(sp_builder_set_training), library 0.9."""

import ctypes
import json

import pytest

import shardplan
from shardplan import ErrorCode, ShardplanError, Training, _capi
from conftest import golden_text
from test_plan import PLANNED

# A mesh dp=2 x tp=4, zero 0 with a float32 master copy and selective recompute: 0.39 GiB on
# every device, over the 384 MiB of device_memory (its .pass twin gives 512 MiB).
EXCEEDS = "exceeds-device-memory.fail"
CATEGORIES = ("params", "grads", "master", "optimizer", "gathered", "activations", "total")


def test_struct_layout_matches_the_header():
    # sp_training: a uint64, a pointer and a size_t, nine uint64, a double, a pointer, a size_t.
    pointer, size_t = ctypes.sizeof(ctypes.c_void_p), ctypes.sizeof(ctypes.c_size_t)
    assert pointer == size_t == 8  # LP64, as the offsets below
    offsets = [getattr(_capi.sp_training, name).offset for name, _ in _capi.sp_training._fields_]
    assert offsets == [8 * k for k in range(15)]
    assert _capi.sp_training.mean_total_bytes.offset == 96
    assert ctypes.sizeof(_capi.sp_training) == 120


def test_training_equals_the_result_json():
    text = golden_text(EXCEEDS)
    with shardplan.plan(text) as result:
        assert not result.ok
        assert [d.code for d in result.diagnostics] == ["exceeds-device-memory"]
        assert result.diagnostics[0].pointer == "/training/device_memory"
        training = result.training
        assert isinstance(training, Training)
        want = result.to_dict()["memory"]["training"]
        worst = want["worst"]
        assert training.worst_device == worst["device"] == 0
        assert training.worst_coordinates == tuple(worst["coordinates"].values()) == (0, 0)
        assert list(worst["coordinates"]) == list(json.loads(text)["mesh"]) == ["dp", "tp"]
        for key in CATEGORIES:
            assert getattr(training, key) == worst[key], key
        assert training.total == 423624704 > 384 * 2**20
        assert training.total == sum(getattr(training, key) for key in CATEGORIES[:-1])
        assert training.max_total_bytes == want["max_total_bytes"]
        assert training.min_total_bytes == want["min_total_bytes"]
        assert training.mean_total_bytes == want["mean_total_bytes"]
        assert training.per_device_total_bytes == tuple(want["per_device_total_bytes"])
        assert len(training.per_device_total_bytes) == 8 == result.memory.devices
        assert training.per_device_total_bytes[training.worst_device] == training.max_total_bytes
        # The JSON's form: coordinates keyed by mesh axis, given the axes; else a list.
        assert training.to_dict(axes=["dp", "tp"]) == want
        assert training.to_dict()["worst"]["coordinates"] == [0, 0]
        with pytest.raises(ValueError):
            training.to_dict(axes=["dp"])
        assert repr(training).startswith("Training(worst_device=0, worst_coordinates=(0, 0), ")


def test_the_pass_twin_fits():
    with shardplan.plan(golden_text("exceeds-device-memory.pass")) as result:
        assert result.ok
        training = result.training
        assert training.max_total_bytes == 423624704 <= 512 * 2**20
        assert training.to_dict(axes=["dp", "tp"]) == result.to_dict()["memory"]["training"]


def test_a_result_without_a_training_section_has_none():
    # Planned, with memory, but no training section.
    with shardplan.plan(PLANNED) as result:
        assert result.ok and result.memory is not None
        assert result.training is None
        assert "training" not in result.to_dict()["memory"]
    # A training section, but no plan made: checked, or not a valid document.
    with shardplan.check(golden_text(EXCEEDS)) as checked:
        assert checked.training is None and checked.memory is None
    with shardplan.plan("{not json") as bad:
        assert bad.training is None


@pytest.mark.parametrize("dp", [16384, 16385, 2**22 + 1])
def test_large_meshes(dp):
    # per_device_total_bytes is listed up to 65,536 devices; training is absent past 2^24.
    document = json.loads(golden_text(EXCEEDS))
    document["mesh"]["dp"] = dp
    with shardplan.plan(json.dumps(document)) as result:
        training, devices = result.training, dp * 4
        if devices > 2**24:
            assert training is None
            return
        assert training.total == training.max_total_bytes == 423624704
        assert training.to_dict(axes=["dp", "tp"]) == result.to_dict()["memory"]["training"]
        if devices <= 65536:
            assert training.per_device_total_bytes == (423624704,) * devices
            assert repr(training).endswith(f"423624704, ... {devices} devices))")
        else:
            assert training.per_device_total_bytes is None
            assert training.to_dict()["per_device_total_bytes"] is None


def test_values_are_copied_out():
    result = shardplan.plan(golden_text(EXCEEDS))
    training = result.training
    assert result.training is training  # read once
    result.close()
    assert training.total == 423624704 and len(training.per_device_total_bytes) == 8
    with pytest.raises(shardplan.ClosedHandleError):
        result.training


def test_builder_set_training():
    builder = shardplan.Builder().add_axis("dp", 4).add_module("root", "Model").set_root("root")
    # Refused at the call, leaving nothing.
    with pytest.raises(ShardplanError) as info:
        builder.set_training({"zero": 4})
    assert info.value.code is ErrorCode.INVALID_ARGUMENT
    assert info.value.message == "'zero' must be an integer from 0 to 3 (at /training/zero)"
    with pytest.raises(ShardplanError, match=r"expected an object, got an array \(at /training\)"):
        builder.set_training("[]")
    with pytest.raises(TypeError):
        builder.set_training(["zero", 3])
    assert "training" not in json.loads(builder.to_json())
    # Once: a dict (or JSON text), then the second call is refused.
    assert builder.set_training({"zero": 3, "shard_axes": ["dp"]}) is builder
    with pytest.raises(ShardplanError) as info:
        builder.set_training("{}")
    assert info.value.code is ErrorCode.INVALID_ARGUMENT
    assert info.value.message == "the document already has a training section"
    section = json.loads(builder.to_json())["training"]
    assert section["zero"] == 3 and section["shard_axes"] == ["dp"]
    with builder.build() as document, document.check() as result:
        assert result.ok
    # A shard axis the mesh lacks is the build's invalid-document, as the parser says it.
    other = shardplan.Builder().add_module("root").set_root("root").set_training(b'{"shard_axes": ["dp"]}')
    with other, other.build() as document, document.check() as result:
        assert [d.code for d in result.diagnostics] == ["invalid-document"]
        assert "shard axis 'dp' is not a mesh axis" in result.diagnostics[0].message


def test_builder_training_plans_as_its_json():
    from test_builder import build_from

    text = golden_text(EXCEEDS)
    with build_from(json.loads(text)) as builder, builder.build() as document:
        with document.plan() as built:
            assert built.json == shardplan.plan(text).json
            assert built.training == shardplan.plan(text).training
        assert json.loads(builder.to_json())["training"]["zero"] == 0


def test_a_library_older_than_0_9(monkeypatch):
    # A library of the same ABI older than 0.9 lacks both functions (_capi.declare stubs them).
    for name in ("sp_result_training", "sp_builder_set_training"):
        monkeypatch.setattr(_capi.lib, name, _capi._missing_function(name, "/old/libshardplan.so"))
    with shardplan.plan(PLANNED) as result:
        with pytest.raises(NotImplementedError, match="sp_result_training"):
            result.training
    with shardplan.Builder() as builder:
        with pytest.raises(NotImplementedError, match="sp_builder_set_training"):
            builder.set_training({"zero": 1})
