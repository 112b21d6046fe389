"""measure.py's --wait-steady: it waits on the CPU probes alone, and render.py says what it found."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import measure  # noqa: E402
import render  # noqa: E402


def probes(monkeypatch, speeds, trips):
    """Makes the probes return the given speeds and round trips, one per call, in order."""
    speeds, trips = iter(speeds), iter(trips)
    monkeypatch.setattr(measure, "cpu_speeds", lambda bench, nproc: next(speeds))
    monkeypatch.setattr(measure, "round_trip_ns", lambda binary: next(trips))
    monkeypatch.setattr(measure, "log", lambda *args: None)


def test_waits_until_the_cpus_agree_and_the_round_trip_is_short(monkeypatch):
    probes(monkeypatch,
           [{"0": 2.0, "1": 2.3}, {"0": 2.0, "1": 2.1}, {"0": 2.0, "1": 2.1}],  # 1.15x, then 1.05x
           [200.0, 500.0, 200.0])
    s = measure.wait_steady("bench", "round_trip", 2, limit_s=60, pause_s=0)
    assert s["steady"]
    assert [p["round_trip_ns"] for p in s["probes"]] == [200.0, 500.0, 200.0]
    sentence = render.steady_sentence({"benchmarks": s})
    assert "before the benchmarks, steady after" in sentence and "(3 probes)" in sentence
    assert "CPU 1 2.10 ms, round trip 200 ns" in sentence


def test_gives_up_at_the_limit_and_says_so(monkeypatch):
    probes(monkeypatch, [{"0": 2.0, "1": 3.0}] * 5, [200.0] * 5)
    s = measure.wait_steady("bench", "round_trip", 2, limit_s=0, pause_s=0)
    assert not s["steady"] and len(s["probes"]) == 1
    assert "still not steady" in render.steady_sentence({"documents": s})


def test_one_cpu_without_a_round_trip_is_steady(monkeypatch):
    probes(monkeypatch, [{"0": 2.0}], [None])
    s = measure.wait_steady("bench", None, 1, limit_s=60, pause_s=0)
    assert s["steady"] and len(s["probes"]) == 1
    assert "steady at once (CPU 0 2.00 ms)" in render.steady_sentence({"documents": s})
    assert render.steady_sentence({}) == ""
