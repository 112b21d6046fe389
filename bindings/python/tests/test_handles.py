"""Handles: with blocks, close(), finalizers, closed-handle use, threads."""

import gc
import threading
import weakref

import pytest

import shardplan
from shardplan import ClosedHandleError, ErrorCode, ShardplanError
from conftest import case_text


def assert_closed(fn):
    with pytest.raises(ClosedHandleError) as info:
        fn()
    assert isinstance(info.value, ShardplanError) and isinstance(info.value, ValueError)
    assert info.value.code is ErrorCode.NULL_ARGUMENT


def test_with_block_closes_the_document(tiny_llama):
    with shardplan.parse(tiny_llama) as document:
        assert not document.closed
    assert document.closed
    assert_closed(document.check)
    assert_closed(lambda: document.is_valid)
    assert_closed(lambda: document.__enter__())
    document.close()  # closing twice does nothing
    assert "closed" in repr(document)


def test_results_outlive_their_document(tiny_llama):
    document = shardplan.parse(tiny_llama)
    result = document.check()
    document.close()
    assert result.ok and "owned" in result.to_dict()
    with result:
        pass
    for use in (lambda: result.ok, lambda: result.json, lambda: result.diagnostics,
                lambda: result.diagnostic(0), result.diagnostic_count):
        assert_closed(use)


def test_closed_layout_and_builder():
    layout = shardplan.Layout()
    layout.close()
    assert_closed(lambda: layout.declare("params"))
    builder = shardplan.Builder().add_module("m")
    assert_closed(lambda: builder.add_provider("", layout))  # a closed layout argument
    builder.close()
    assert_closed(lambda: builder.add_axis("tp", 2))
    assert_closed(builder.to_json)
    assert_closed(builder.build)


def test_finalizer_frees_unreferenced_handles(tiny_llama):
    objects = [shardplan.parse(tiny_llama), shardplan.Layout(), shardplan.Builder()]
    objects.append(objects[0].check())
    finalizers = [o._finalizer for o in objects]
    refs = [weakref.ref(o) for o in objects]
    assert all(f.alive for f in finalizers)
    del objects
    gc.collect()
    assert all(r() is None for r in refs)
    assert not any(f.alive for f in finalizers)


def test_close_frees_at_once(tiny_llama):
    document = shardplan.parse(tiny_llama)
    document.close()
    assert not document._finalizer.alive


def test_documents_are_checked_concurrently():
    text = case_text("001-multiple-owners")
    with shardplan.parse(text) as document:
        want = document.check(threads=1).json
        results, errors = [], []

        def work():
            try:
                for _ in range(5):
                    results.append(document.check(threads=2).json)
            except Exception as e:  # pragma: no cover - reported below
                errors.append(e)

        threads = [threading.Thread(target=work) for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert not errors and results == [want] * 40


def test_close_during_checks_never_frees_a_handle_in_use(tiny_llama):
    for _ in range(20):
        document = shardplan.parse(tiny_llama)
        outcomes = []

        def work():
            try:
                for _ in range(10):
                    outcomes.append(document.check(threads=1).ok)
            except ClosedHandleError:
                outcomes.append("closed")

        threads = [threading.Thread(target=work) for _ in range(4)]
        for t in threads:
            t.start()
        document.close()
        for t in threads:
            t.join()
        assert set(outcomes) <= {True, "closed"}
        assert not document._finalizer.alive
