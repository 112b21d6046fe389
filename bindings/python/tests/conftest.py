"""Shared paths and helpers; puts this checkout's package first on sys.path.

Run from the repository root:
    SHARDPLAN_LIBRARY=/path/to/libshardplan.so python3 -m pytest -q bindings/python/tests
(without SHARDPLAN_LIBRARY the package loads <repo>/bazel-bin/capi/libshardplan.so).
"""

import json
import sys
from pathlib import Path

import pytest

BINDING_DIR = Path(__file__).resolve().parent.parent  # bindings/python
REPO_ROOT = BINDING_DIR.parent.parent
CONFORMANCE = BINDING_DIR / ".." / ".." / "tests" / "conformance"
HEADER = REPO_ROOT / "capi" / "include" / "shardplan" / "shardplan.h"
GOLDEN = REPO_ROOT / "tests" / "golden" / "cases"

sys.path.insert(0, str(BINDING_DIR))


def case_text(name: str) -> str:
    return (CONFORMANCE / "cases" / f"{name}.json").read_text(encoding="utf-8")


def expected(name: str) -> dict:
    return json.loads((CONFORMANCE / "expected" / f"{name}.json").read_text(encoding="utf-8"))


def golden_text(name: str) -> str:
    """tests/golden/cases/<name>.json, e.g. golden_text("unknown-axis.typo.fail")."""
    return (GOLDEN / f"{name}.json").read_text(encoding="utf-8")


@pytest.fixture
def tiny_llama() -> str:
    return case_text("000-tiny-llama")
