"""README.md's example is example.py, and its output is the real one."""

import os
import re
import subprocess
import sys

import shardplan
from conftest import BINDING_DIR


def test_readme_example_and_output_are_current():
    readme = (BINDING_DIR / "README.md").read_text()
    blocks = re.findall(r"```(\w*)\n(.*?)```", readme, re.S)
    code = next(body for lang, body in blocks if lang == "python")
    assert code == (BINDING_DIR / "example.py").read_text()
    assert len(code.splitlines()) <= 10
    shown = next(body for lang, body in blocks if body.startswith("$ cd bindings/python"))
    env = dict(os.environ, SHARDPLAN_LIBRARY=shardplan.library_path())
    run = subprocess.run(
        [sys.executable, "example.py"], cwd=BINDING_DIR, env=env,
        capture_output=True, text=True, timeout=60,
    )
    assert run.returncode == 0, run.stderr
    assert shown.split("\n", 1)[1] == run.stdout
