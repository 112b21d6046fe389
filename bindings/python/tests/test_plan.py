"""Planning (sp_document_plan): plan entries, memory per device, communication."""

import ctypes
import json
import threading

import pytest

import shardplan
from shardplan import Communication, ErrorCode, Memory, PlanEntry, ShardplanError, _capi
from conftest import case_text

# tp templates plan up_proj (colwise) and down_proj (rowwise); embed is owned by its provider.
PLANNED = """
{"schema": "shardplan.v1", "mesh": {"dp": 2, "tp": 4},
 "parameters": {"emb": {"shape": [64, 8], "dtype": "bfloat16"}, "up": {"shape": [32, 8]},
                "down": {"shape": [8, 32]}},
 "root": "model",
 "modules": {"model": {"children": {"embed": "embed", "up_proj": "up", "down_proj": "down"}},
             "embed": {"type": "Embedding", "forward": ["input"], "params": {"weight": "emb"}},
             "up": {"type": "Linear", "forward": ["x"], "params": {"weight": "up"}},
             "down": {"type": "Linear", "forward": ["x"], "params": {"weight": "down"}}},
 "providers": {"sharding": {"embed": {"params": {"weight": {"tp": "S(0)"}},
                                      "in_src": {}, "in_dst": {}}}},
 "templates": [{"axis": "tp", "rules": {"up_proj": "colwise", "down_proj": "rowwise"}}]}
"""

ALL_REDUCE = Communication(
    fqn="down_proj", port="out:output", axis="tp", from_="P", to="R", collective="all_reduce"
)


def test_struct_layouts_match_the_header():
    # sp_memory: 4 uint64, a double, a uint64, then a pointer and a size_t (64 bytes on LP64).
    pointer, size_t = ctypes.sizeof(ctypes.c_void_p), ctypes.sizeof(ctypes.c_size_t)
    assert _capi.sp_memory.mean_bytes.offset == 32
    assert _capi.sp_memory.max_device.offset == 40
    assert _capi.sp_memory.per_device_bytes.offset == 48
    assert _capi.sp_memory.num_devices_listed.offset == 48 + pointer
    assert ctypes.sizeof(_capi.sp_memory) == 48 + pointer + size_t
    assert ctypes.sizeof(_capi.sp_plan_entry) == 4 * size_t
    assert ctypes.sizeof(_capi.sp_communication) == 12 * size_t
    assert _capi.sp_communication.from_.offset == 6 * size_t


def test_plan_entries_memory_and_communication():
    with shardplan.plan(PLANNED) as result:
        assert result.ok and result.diagnostics == []
        assert result.plan_entries == [
            PlanEntry("embed", "owned:model"),
            PlanEntry("up_proj", "template:tp:up_proj"),
            PlanEntry("down_proj", "template:tp:down_proj"),
        ]
        assert result.plan_entry_count() == 3
        assert result.plan_entry(1) == result.plan_entries[1]
        assert result.plan_entry(-1).fqn == "down_proj"

        memory = result.memory
        assert isinstance(memory, Memory)
        assert memory.devices == 8
        assert memory.unsharded_bytes == 3072 == 64 * 8 * 2 + 32 * 8 * 4 + 8 * 32 * 4
        assert len(memory.per_device_bytes) == 8
        assert memory.max_bytes == max(memory.per_device_bytes)
        assert memory.min_bytes == min(memory.per_device_bytes)
        assert memory.mean_bytes == sum(memory.per_device_bytes) / 8
        assert memory.per_device_bytes[memory.max_device] == memory.max_bytes
        # tp=4 shards every weight in four; dp replicates.
        assert memory.per_device_bytes == (768,) * 8

        assert ALL_REDUCE in result.communication
        assert result.communication_count() == len(result.communication) == 1
        assert result.communication_record(0) == ALL_REDUCE

        doc = result.to_dict()
        for key in ("plan", "provenance", "memory", "communication", "collectives"):
            assert key in doc, key
        assert doc["memory"] == memory.to_dict()
        assert doc["communication"] == [r.to_dict() for r in result.communication]
        assert doc["provenance"] == {e.fqn: [e.provenance] for e in result.plan_entries}
        assert list(doc["plan"]["modules"]) == [e.fqn for e in result.plan_entries]
        assert doc["collectives"] == {"all_reduce": {"tp": 1}}


def test_document_plan_equals_the_one_call_form():
    with shardplan.parse(PLANNED) as document:
        planned, checked = document.plan(threads=1), document.check()
    with planned, checked, shardplan.plan(PLANNED, threads=2) as again:
        assert planned.json == again.json
        # Checking the same document makes no plan.
        assert checked.ok
        assert "plan" not in checked.to_dict()


def test_a_checked_result_has_no_plan():
    for result in (shardplan.check(PLANNED), shardplan.check(case_text("000-tiny-llama"))):
        with result:
            assert result.memory is None
            assert result.plan_entry_count() == 0 and result.plan_entries == []
            assert result.communication_count() == 0 and result.communication == []
            for read in (result.plan_entry, result.communication_record):
                with pytest.raises(ShardplanError) as info:
                    read(0)
                assert info.value.code is ErrorCode.OUT_OF_RANGE


def test_index_out_of_range():
    with shardplan.plan(PLANNED) as result:
        for read, count in (
            (result.plan_entry, result.plan_entry_count()),
            (result.communication_record, result.communication_count()),
        ):
            assert read(-count) == read(0)
            for index in (count, count + 1, 2**64, -count - 1):
                with pytest.raises(ShardplanError) as info:
                    read(index)
                assert info.value.code is ErrorCode.OUT_OF_RANGE
                assert "out of range" in info.value.message
            with pytest.raises(TypeError):
                read("0")
            with pytest.raises(TypeError):
                read(True)


def test_plan_findings_are_diagnostics():
    # A template on an axis the mesh lacks, and malformed JSON: results, not errors.
    broken = json.loads(PLANNED)
    broken["templates"][0]["axis"] = "ep"
    with shardplan.plan(json.dumps(broken)) as result:
        assert not result.ok
        assert result.diagnostics[0].code == "invalid-document"
        assert result.memory is None and result.plan_entries == [] and result.communication == []
    with shardplan.plan("{not json") as result:
        assert [d.code for d in result.diagnostics] == ["invalid-document"]
        assert result.memory is None and result.plan_entries == []


def test_a_document_with_its_own_plan_is_checked():
    # A given plan is checked as sp_document_check does (no plan is made).
    builder = shardplan.Builder().add_axis("tp", 2).add_parameter("w", [4, 4])
    builder.add_module("root").add_child("root", "lin", "lin").set_root("root")
    builder.add_module("lin").add_forward_arg("lin", "x").add_module_param("lin", "weight", "w")
    builder.add_plan_entry("lin", {"params": {"weight": {"tp": "S(0)"}}})
    with builder, builder.build() as document, document.plan() as planned, document.check() as checked:
        assert planned.json == checked.json
        assert planned.memory is None and planned.plan_entries == []


def test_values_are_copied_out():
    result = shardplan.plan(PLANNED)
    entries, records, memory = result.plan_entries, result.communication, result.memory
    entries.clear()  # a new list each time
    assert len(result.plan_entries) == 3
    result.close()
    assert memory.devices == 8 and records == [ALL_REDUCE]
    for read in (
        lambda: result.memory,
        lambda: result.plan_entries,
        lambda: result.communication,
        lambda: result.plan_entry(0),
    ):
        with pytest.raises(shardplan.ClosedHandleError):
            read()


def test_plan_options_are_checked_before_c():
    with pytest.raises(ValueError):
        shardplan.plan(PLANNED, threads=-1)
    with pytest.raises(TypeError):
        shardplan.plan(PLANNED, threads="4")
    with shardplan.parse(PLANNED) as document:
        document.close()
        with pytest.raises(shardplan.ClosedHandleError):
            document.plan()


@pytest.mark.parametrize("dp", [16384, 16385, 2**22 + 1])
def test_large_meshes(dp):
    # per_device_bytes is listed up to 65,536 devices; memory is absent past 2^24.
    document = json.loads(PLANNED)
    document["mesh"]["dp"] = dp
    with shardplan.plan(json.dumps(document)) as result:
        assert result.ok and len(result.plan_entries) == 3
        memory, devices = result.memory, dp * 4
        if devices > 2**24:
            assert memory is None and "memory" in result.to_dict()
            return
        assert memory.devices == devices and memory.max_bytes == 768
        assert result.to_dict()["memory"] == memory.to_dict()
        if devices <= 65536:
            assert memory.per_device_bytes == (768,) * devices
            assert repr(memory).endswith(f"768, ... {devices} devices))")  # not 65,536 numbers
        else:
            assert memory.per_device_bytes is None
            assert "per_device_bytes" not in memory.to_dict()


def test_a_document_is_planned_and_checked_concurrently():
    with shardplan.parse(PLANNED) as document:
        want = {"plan": document.plan(threads=1).json, "check": document.check(threads=1).json}
        results, errors = [], []

        def work(kind):
            try:
                for _ in range(5):
                    with getattr(document, kind)(threads=2) as result:
                        results.append((kind, result.json, result.communication))
            except Exception as e:  # pragma: no cover - reported below
                errors.append(e)

        threads = [threading.Thread(target=work, args=(k,)) for k in ["plan", "check"] * 4]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert not errors and len(results) == 40
    for kind, text, records in results:
        assert text == want[kind]
        assert records == ([ALL_REDUCE] if kind == "plan" else [])
