"""The three conformance cases every binding runs, read from the repository."""

import json

import pytest

import shardplan
from conftest import case_text, expected

CASES = ["000-tiny-llama", "001-multiple-owners", "005-native-overlaps-family"]


@pytest.mark.parametrize("name", CASES)
def test_conformance_case(name):
    want = expected(name)
    with shardplan.parse(case_text(name)) as document, document.check() as result:
        assert document.is_valid
        if want["ok"]:
            assert result.ok is True
            assert result.diagnostics == []
            assert result.diagnostic_count() == 0
            got = json.loads(result.json)
            assert got["schema"] == "shardplan.result.v1"
            assert got["ok"] is True and got["diagnostics"] == []
            assert got["owned"]["owned_names"] == want["owned"]["owned_names"]
            assert got["owned"]["aliases"] == want["owned"]["aliases"]
            assert result.to_dict() == got
        else:
            assert result.ok is False
            first = result.diagnostics[0]
            assert first.code == want["error"]["code"]
            assert first.message == want["error"]["message"]
            assert first.severity is shardplan.Severity.ERROR
            assert result.diagnostic(0) == first


@pytest.mark.parametrize("name", CASES)
def test_result_json_matches_diagnostics(name):
    result = shardplan.check(case_text(name))
    data = result.to_dict()
    assert data["ok"] == result.ok
    assert data["diagnostics"] == [d.to_dict() for d in result.diagnostics]
    if not result.ok:
        assert "owned" not in data


@pytest.mark.parametrize("name", CASES)
def test_threads_do_not_change_the_result(name):
    with shardplan.parse(case_text(name)) as document:
        results = {document.check(threads=n).json for n in (0, 1, 2, 7)}
    assert len(results) == 1


def test_bytes_and_str_parse_alike():
    text = case_text("001-multiple-owners")
    assert shardplan.check(text).json == shardplan.check(text.encode("utf-8")).json
    assert shardplan.check(bytearray(text.encode("utf-8"))).json == shardplan.check(text).json
