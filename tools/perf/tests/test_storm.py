"""storm.py's pure parts: the storm document, /usr/bin/time's output, the diagnostics counted from
the text summary or the result JSON, and the bounds; render.py's section from them."""

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import render  # noqa: E402
import storm  # noqa: E402


def test_the_storm_widens_the_one_native_match():
    valid = b'{"providers":{"native":[{"match":["blocks.*.w*"],"sharding":{}}]},"x":"blocks.*.w*"}'
    assert storm.make_storm(valid) == b'{"providers":{"native":[{"match":["blocks.*"],"sharding":{}}]},"x":"blocks.*.w*"}'


@pytest.mark.parametrize("text", [b'{"match":["other"]}', b'{"match":["blocks.*.w*"],"match":["blocks.*.w*"]}'])
def test_the_storm_needs_the_match_exactly_once(text):
    with pytest.raises(ValueError, match="once"):
        storm.make_storm(text)


def test_reads_time_output():
    assert storm.parse_time("2.21 584320\n") == (2.21, 584320 * 1024)
    # A failing command: /usr/bin/time says so on a line of its own first.
    assert storm.parse_time("Command exited with non-zero status 1\n1.80 700000\n") == (1.8, 700000 * 1024)
    with pytest.raises(ValueError):
        storm.parse_time("")
    with pytest.raises(ValueError):
        storm.parse_time("Command terminated by signal 9\n")


def test_counts_the_summary_line():
    s = storm.parse_summary("/tmp/s.json: 126 errors (100 overlapping-communication, 13 unknown-forward-input, "
                            "13 unknown-parameter)\n")
    assert s == {"total": 126, "errors": 126, "warnings": 0,
                 "by_code": {"overlapping-communication": 100, "unknown-forward-input": 13, "unknown-parameter": 13}}
    # One diagnostic: no per-code counts.
    assert storm.parse_summary("d.json: 1 error")["total"] == 1
    # An earlier CLI: errors and warnings only.
    assert storm.parse_summary("d.json: 1250000 errors, 2 warnings")["total"] == 1250002
    ok = storm.parse_summary("d.json: ok: 100 owners, 100 owned parameter names, 0 aliases")
    assert ok["total"] == 0 and ok["by_code"] == {}
    warned = storm.parse_summary("d.json: ok: 1 owner, 1 owned parameter name, 1 alias, 2 warnings (2 shadowed-rule); "
                                 "failed: warnings are errors (--werror)")
    assert warned["total"] == 2 and warned["warnings"] == 2
    assert storm.parse_summary("error[x]: something") is None


def diagnostic(i, code):
    return {"code": code, "severity": "error", "message": f"m {i} \"groups\":[", "fqn": f"b.{i}",
            "parameter": None, "pointer": "/p"}


def test_counts_the_result_json():
    listed = [diagnostic(0, "a"), diagnostic(1, "a")]
    doc = {"schema": "shardplan.result.v1", "diagnostics": listed, "ok": False,
           "groups": [{"code": "a", "severity": "error", "pointer": "/p", "count": 100, "listed": [0, 1]},
                      {"code": "b", "severity": "error", "pointer": "/q", "count": 13, "listed": []}],
           "counts": {"a": 100, "b": 13}}
    data = json.dumps(doc, separators=(",", ":")).encode() + b"\n"
    assert storm.json_counts(data) == {"total": 113, "listed": 2, "by_code": {"a": 100, "b": 13}}
    # Without groups (an earlier CLI), every diagnostic is listed.
    old = json.dumps({"ok": False, "diagnostics": listed + [diagnostic(2, "b")]}, separators=(",", ":")).encode()
    assert storm.json_counts(old) == {"total": 3, "listed": 3, "by_code": {"a": 2, "b": 1}}


def test_last_line_of_a_file(tmp_path):
    p = tmp_path / "out"
    p.write_text("x" * 100000 + "\nerror[a]: m\nd.json: 3 errors (3 a)\n")
    assert storm.last_line(p) == "d.json: 3 errors (3 a)"


def medians(wall, rss, out=100):
    return {"wall_s": wall, "time_e_s": wall, "rss_bytes": rss, "stdout_bytes": out}


def test_bounds_and_verdicts():
    doc = 200_000_000
    cases = {"valid-text": {"1": medians(2.0, 580_000_000), "0": medians(1.2, 600_000_000)},
             "storm-text": {"1": medians(1.8, 700_000_000, 2000), "0": medians(4.0, 590_000_000, 2000)},
             "storm-json-all": {"1": medians(9.0, 2_000_000_000, 300_000_000)}}
    bounds, other = storm.compute_bounds(doc, cases)
    by_key = {b["key"]: b for b in bounds}
    assert list(by_key) == ["rss_ratio_1", "time_ratio_1", "rss_ratio_0", "time_ratio_0", "text_bytes",
                            "json_rss_ratio_1", "json_time_ratio_1"]
    assert by_key["rss_ratio_1"]["measured"] == pytest.approx(3.5) and not by_key["rss_ratio_1"]["met"]
    assert by_key["rss_ratio_0"]["measured"] == pytest.approx(2.95) and by_key["rss_ratio_0"]["met"]
    assert by_key["time_ratio_1"]["measured"] == pytest.approx(0.9) and by_key["time_ratio_1"]["met"]
    assert by_key["time_ratio_0"]["measured"] == pytest.approx(4.0 / 1.2) and not by_key["time_ratio_0"]["met"]
    assert by_key["text_bytes"]["measured"] == 2000 and by_key["text_bytes"]["met"]
    assert render.verdict(by_key["rss_ratio_1"])[0] == "**missed**"
    assert render.verdict(by_key["time_ratio_1"])[0] == "**met**"
    # The JSON of every diagnostic is streamed, so it has the same bounds.
    assert by_key["json_rss_ratio_1"]["measured"] == pytest.approx(10.0) and not by_key["json_rss_ratio_1"]["met"]
    assert by_key["json_time_ratio_1"]["measured"] == pytest.approx(4.5) and not by_key["json_time_ratio_1"]["met"]
    assert other == []
    cases["storm-json50"] = {"0": medians(1.5, 590_000_000, 4000)}
    assert storm.compute_bounds(doc, cases)[1] == [{"case": "storm-json50", "threads": "0", "rss_ratio": 2.95,
                                                    "time_ratio": 1.25, "stdout_bytes": 4000}]


def test_limits_are_inclusive_but_the_output_must_be_under_1_mb():
    doc = 100
    at = {"valid-text": {"1": medians(1.0, 100)}, "storm-text": {"1": medians(3.0, 300, 1_000_000)}}
    by_key = {b["key"]: b for b in storm.compute_bounds(doc, at)[0]}
    assert by_key["rss_ratio_1"]["met"] and by_key["time_ratio_1"]["met"]
    assert not by_key["text_bytes"]["met"]


def test_render_skips_or_renders_the_section():
    lines = []
    doc = 200_000_000
    cases = {"valid-text": {"1": medians(2.0, 580_000_000)}, "storm-text": {"1": medians(1.8, 700_000_000, 2000)}}
    bounds, other = storm.compute_bounds(doc, cases)
    x = {"command": "python3 tools/perf/storm.py", "measured_at": "now", "commit": "abc", "before_commit": None,
         "runs": 3, "machine": {"cpu_model": "cpu", "cores": 2, "memory_gib": 8.0, "kernel": "k",
                                "loadavg_start": ["1", "1", "1"], "loadavg_end": ["1", "1", "1"]},
         "documents": {"valid": {"bytes": doc + 3, "gen_model": "--kind generic", "match": "m"},
                       "storm": {"bytes": doc, "match": "n"}},
         "cases": {cid: {"what": cid, "document": cid.split("-")[0], "by_code": {"a": 5},
                         "median": {t: dict(r, exit_code=1, diagnostics=5, listed=None) for t, r in c.items()}}
                   for cid, c in cases.items()},
         "bounds": bounds, "other_ratios": other}
    render.render_storm(lines.append, x, {"cpu_model": "cpu", "kernel": "k"})
    page = "\n".join(lines)
    assert "## 10. Diagnostic storm" in page and "the machine of section 1" in page
    assert "| storm, default text, 1 thread: peak RSS / document | ≤ 3.00x | 3.50x | **missed** |" in page
    assert "| storm, default text: output | < 1 MB | 2,000 B | **met** |" in page
