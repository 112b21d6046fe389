"""README.md's examples are example*.py, and their outputs are the real ones."""

import os
import re
import subprocess
import sys

import pytest

import shardplan
from conftest import BINDING_DIR

EXAMPLES = ["example.py", "example_plan.py", "example_fix.py", "example_training.py"]


def readme_examples():
    """script name -> (the python block before its output block, the output shown)."""
    readme = (BINDING_DIR / "README.md").read_text()
    blocks = re.findall(r"```(\w*)\n(.*?)```", readme, re.S)
    examples = {}
    for i, (lang, body) in enumerate(blocks):
        shown = re.match(r"\$ cd bindings/python && python3 (\S+)\n", body)
        if shown:
            code = next(b for l, b in reversed(blocks[:i]) if l == "python")
            examples[shown.group(1)] = (code, body[shown.end():])
    return examples


def test_readme_shows_every_example():
    assert sorted(readme_examples()) == sorted(EXAMPLES)


@pytest.mark.parametrize("script", EXAMPLES)
def test_readme_example_and_output_are_current(script):
    code, shown = readme_examples()[script]
    assert code == (BINDING_DIR / script).read_text()
    assert len(code.splitlines()) <= 10
    env = dict(os.environ, SHARDPLAN_LIBRARY=shardplan.library_path())
    run = subprocess.run(
        [sys.executable, script], cwd=BINDING_DIR, env=env,
        capture_output=True, text=True, timeout=60,
    )
    assert run.returncode == 0, run.stderr
    assert shown == run.stdout
