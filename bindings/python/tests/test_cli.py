"""`python -m shardplan check|plan`: the shardplan CLI's output and exit status.

The parity tests compare with the CLI of this checkout (``$SHARDPLAN_CLI``,
else ``<repo>/bazel-bin/cli/shardplan``; they fail when there is none) on every
example, conformance case and golden document, in-process (``_cli.run``).
tools/wheel_test.sh does the same from an installed wheel.
"""

import functools
import io
import os
import subprocess
import sys
from pathlib import Path

import pytest

import shardplan
from conftest import BINDING_DIR, CONFORMANCE, GOLDEN, REPO_ROOT
from shardplan import _cli
from shardplan._locate import locate_pointers


def _cli_path():
    path = os.environ.get("SHARDPLAN_CLI") or str(REPO_ROOT / "bazel-bin" / "cli" / "shardplan")
    return path if os.access(path, os.X_OK) else None


CLI = _cli_path()


def needs_cli(test):
    """Marks a test that compares with the CLI: it fails, rather than passes unseen, without one."""

    @functools.wraps(test)  # pytest reads the parameters of the wrapped test
    def run(*args, **kwargs):
        assert CLI is not None, "no shardplan CLI: set SHARDPLAN_CLI or bazel build //cli:shardplan"
        return test(*args, **kwargs)

    return run

DOCUMENTS = sorted(
    [*(REPO_ROOT / "examples").glob("*.json"), *(CONFORMANCE / "cases").glob("*.json"), *GOLDEN.glob("*.json")]
)


def run_python(*args, stdin=b""):
    """(stdout bytes, stderr text, exit status) of ``_cli.main`` in-process."""
    out = io.TextIOWrapper(io.BytesIO(), encoding="utf-8")
    err = io.StringIO()
    source = io.TextIOWrapper(io.BytesIO(stdin), encoding="utf-8")
    if args and args[0] in ("check", "plan"):
        status = _cli.run(args[0] == "plan", list(args[1:]), stdout=out, stderr=err, stdin=source)
    else:
        saved = sys.stdout, sys.stderr
        sys.stdout, sys.stderr = out, err
        try:
            status = _cli.main(list(args))
        finally:
            sys.stdout, sys.stderr = saved
    out.flush()
    return out.buffer.getvalue(), err.getvalue(), status


def run_cli(*args, stdin=b""):
    run = subprocess.run([CLI, *args], input=stdin, capture_output=True, timeout=120, cwd=os.getcwd(),
                         env={k: v for k, v in os.environ.items() if k != "NO_COLOR"})
    return run.stdout, run.stderr.decode("utf-8", "replace"), run.returncode


def relative(path: Path) -> str:
    return str(path.relative_to(REPO_ROOT))


# ---- Parity with the CLI ------------------------------------------------------------


@needs_cli
@pytest.mark.parametrize("command", ["check", "plan"])
@pytest.mark.parametrize("options", [
    ["--format", "json"],
    ["--format=json", "--max-diagnostics", "2"],
    [],
    ["--max-diagnostics=0"],
    ["--max-diagnostics", "4", "--werror"],
], ids=["json", "json-capped", "text", "text-all", "text-capped-werror"])
def test_every_document_gives_the_cli_s_bytes_and_status(command, options, monkeypatch):
    monkeypatch.chdir(REPO_ROOT)  # the CLI's path argument, as given, in the text
    differ = []
    for doc in DOCUMENTS:
        args = [command, *options, relative(doc)]
        want, got = run_cli(*args), run_python(*args)
        if (got[0], got[2]) != (want[0], want[2]):
            differ.append((doc.name, want, got))
    assert not differ, f"{len(differ)} of {len(DOCUMENTS)} differ; first: {differ[0]}"


@needs_cli
def test_several_documents_standard_input_and_colors(monkeypatch):
    monkeypatch.chdir(REPO_ROOT)
    broken = (REPO_ROOT / "examples" / "tiny-llama-broken.json").read_bytes()
    for args in (
        ["check", "examples/tiny-llama.json", "-", "examples/tiny-plan.json"],
        ["plan", "--format", "json", "-", "examples/tiny-plan.json"],
        ["check", "--color", "always", "-", "examples/tiny-plan.json"],
        ["plan", "--color=always", "--werror", "examples/tiny-plan.json"],
        ["check", "--threads", "1", "--max-paths", "100", "examples/tiny-llama.json"],
    ):
        want, got = run_cli(*args, stdin=broken), run_python(*args, stdin=broken)
        assert (got[0], got[2]) == (want[0], want[2]), args


@needs_cli
@pytest.mark.parametrize("args", [
    ["check"],
    ["check", "--format", "xml", "d.json"],
    ["check", "--format", "jsno", "d.json"],
    ["check", "--format"],
    ["check", "--max-diagnostics", "-1", "d.json"],
    ["check", "--color", "allways", "d.json"],
    ["check", "--max-paths", "0", "d.json"],
    ["check", "--threads", "x", "d.json"],
    ["check", "--werorr", "d.json"],
    ["check", "--bogus=1", "d.json"],
    ["chekc", "d.json"],
    [],
])
def test_usage_errors_are_the_cli_s(args):
    want, got = run_cli(*args), run_python(*args)
    assert got[2] == want[2] == 2 and got[0] == want[0] == b""
    # The first line says what is wrong, as the CLI says it; the usage that
    # follows names python -m shardplan.
    assert got[1].splitlines()[0] == want[1].splitlines()[0]
    assert "usage: python -m shardplan check" in got[1]


@needs_cli
def test_unreadable_documents_are_the_cli_s(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "dir").mkdir()
    for args in (["check", "missing.json"], ["check", "dir"], ["plan", "--format", "json", "missing.json", "dir"]):
        want, got = run_cli(*args), run_python(*args)
        assert got == want


@needs_cli
def test_version_and_help():
    want, got = run_cli("--version"), run_python("--version")
    assert got == want
    out, _, status = run_python("check", "--help")
    assert status == 0 and out.startswith(b"usage: python -m shardplan check")


def test_sarif_is_the_cli_s_alone():
    out, err, status = run_python("check", "--format", "sarif", "x.json")
    assert status == 2 and out == b"" and "--format sarif is the shardplan command line's alone" in err


def test_python_dash_m_from_another_directory(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("NO_COLOR")}
    env["PYTHONPATH"] = str(BINDING_DIR)
    env.setdefault("SHARDPLAN_LIBRARY", shardplan.library_path())
    example = shardplan.example_path()
    run = subprocess.run([sys.executable, "-m", "shardplan", "check", example], capture_output=True, text=True,
                         cwd=tmp_path, env=env, timeout=60)
    assert run.returncode == 1, run.stderr
    assert run.stdout.splitlines()[0] == "error[native-no-match]: native binding pattern 'layer.*.mlp' matched no module"
    assert run.stdout.splitlines()[1] == f"  --> {example}:255:19 at /providers/native/0/match/0"
    assert run.stdout.endswith(
        f"{example}: 4 errors (1 native-no-match, 1 ports-mismatch, 1 unknown-axis, 1 shared-conflict)\n")


def test_example_path():
    assert Path(shardplan.example_path()).name == "tiny-llama-broken.json"
    for name in shardplan.EXAMPLES:
        assert Path(shardplan.example_path(name)).read_bytes() == (REPO_ROOT / "examples" / name).read_bytes()
    with pytest.raises(ValueError, match="no example document"):
        shardplan.example_path("nope.json")


# ---- Pieces: the pointer locator, sizes, did you mean -------------------------------

MODEL = b"""{
  "model": {
    "layers": [
      {"name": "l0", "dims": [4, 8]},
      {"name": "l1"}
    ],
    "tp": 2
  }
}"""


def locate(text, pointer):
    return locate_pointers(text, [pointer])[0]


def test_locate_header_example_and_nesting():
    assert locate_pointers(b'{\n  "a": [1, 2]\n}', [b"/a/1", b"/b", b""]) == [(2, 12), None, (1, 1)]
    expected = {b"": (1, 1), b"/model": (2, 3), b"/model/layers": (3, 5), b"/model/layers/0": (4, 7),
                b"/model/layers/0/name": (4, 8), b"/model/layers/0/dims": (4, 22),
                b"/model/layers/0/dims/0": (4, 31), b"/model/layers/0/dims/1": (4, 34),
                b"/model/layers/1": (5, 7), b"/model/layers/1/name": (5, 8), b"/model/tp": (7, 5)}
    for pointer, at in expected.items():
        assert locate(MODEL, pointer) == at, pointer
    pointers = [b"/model/tp", b"/model", b"", b"/model/layers/0/dims/1", b"/model/nope", b"/model",
                b"/model/layers/0", b"/model/layers", b"/model/tp", b"/model/layers/1/name", b"x",
                b"/model/layers/0/dims"]
    assert locate_pointers(MODEL, pointers) == [(7, 5), (2, 3), (1, 1), (4, 34), None, (2, 3), (4, 7), (3, 5),
                                                (7, 5), (5, 8), None, (4, 22)]
    assert locate_pointers(MODEL, []) == []


def test_locate_compares_decoded_keys():
    text = (b'{\n "a/b": 1,\n "m~n": 2,\n "\\u0063\\u00E9": 3,\n "\\ud83d\\ude00": 4,\n'
            b' "q\\"u\\\\o\\/t\\n": 5,\n "~1": 6,\n "\\ud83d": 7,\n "": 8\n}')
    assert locate_pointers(text, [b"/a~1b", b"/m~0n", "/cé".encode(), "/😀".encode(), b'/q"u\\o~1t\n', b"/~01",
                                  b"/"]) == [(2, 2), (3, 2), (4, 2), (5, 2), (6, 2), (7, 2), (9, 2)]
    assert locate(b'{"\\b\\f\\r\\t\\"\\\\\\/": 1}', b'/\b\f\r\t"\\~1') == (1, 2)
    assert locate_pointers(text, [b"/a/b", b"/m~n", b"/\\u0063\\u00E9", b"/~1", b"/\xed\xa0\xbd"]) == [None] * 5


def test_locate_positions_and_failures():
    assert locate(b" \r\n\t [1]", b"") == (2, 3)
    assert locate(b"7", b"") == (1, 1)
    for text in (b"", b" \n ", b"\xef\xbb\xbf{}", b"x", b"}", b"True", b"'a'"):
        assert locate(text, b"") is None, text
    for pointer in (b"/nope", b"/model/nope", b"/model/layers/name", b"/model/tp/x", b"/model/layers/2",
                    b"/model/layers/01", b"/model/layers/-", b"/model/layers/+1", b"/model/layers/",
                    b"model", b"#/model", b"/model~2", b"/model~", b"~0", b" /model"):
        assert locate(MODEL, pointer) is None, pointer
    assert locate_pointers(b'{"0": 1, "01": 2, "-": 3}', [b"/0", b"/01", b"/-"]) == [(1, 2), (1, 10), (1, 19)]
    assert locate(b"[ [], [[] , 5 ] ]", b"/1/1") == (1, 13)
    # Columns count code points; \r\n is one line end.
    assert locate('{"é€😀": 1, "b": 2}'.encode(), b"/b") == (1, 12)
    assert locate('["😀",\n"x"]'.encode(), b"/1") == (2, 1)
    assert locate_pointers(b'{\r\n  "a": 1,\r\n  "b": [\r\n    true\r\n  ]\r\n}\r\n', [b"/a", b"/b", b"/b/0"]) == [
        (2, 3), (3, 3), (4, 5)]
    # The first of duplicate keys wins; strings with brackets are skipped.
    assert locate_pointers(b'{"a": {"x": 1}, "a": {"y": 2}, "b": 3, "b": 4}', [b"/a", b"/a/x", b"/a/y", b"/b"]) == [
        (1, 2), (1, 8), None, (1, 32)]
    text = b'{"s": "[{\\"}]\\\\", "t": ["]", "\\"[", {"k": "}\\\\\\""}], "u": "\\u005d\\"", "v": 1}'
    assert locate_pointers(text, [b"/t/2/k", b"/u", b"/v", b"/t/3"]) == [(1, 38), (1, 54), (1, 71), None]
    # An error before a value hides it; values started before one are found.
    for text in (b'{"a": 1 "b": 2}', b'{"a": tru, "b": 2}', b'{"a": "x\\q", "b": 2}', b'{"a": 01, "b": 2}',
                 b'{"a": 1., "b": 2}', b'{"a": [1}, "b": 2}', b'{a: 1, "b": 2}', b'{"a": [1, 2,], "b": 2}',
                 b'{"a": 1, "b":', b'{"a": "\\u12G4", "b": 2}', b'{"a": 1\x01, "b": 2}'):
        assert locate(text, b"/b") is None, text
    assert locate_pointers(b'{"a": [1, 2], "b": [3 4], "c": 5}', [b"/a/1", b"/b", b"/b/0", b"/b/1", b"/c"]) == [
        (1, 11), (1, 15), (1, 21), None, None]


def test_locate_deep_nesting_needs_no_deep_stack():
    depth = 20000
    closed = b"[" * depth + b"]" * depth
    assert locate_pointers(closed, [b"/0/0/0", b"/0/0/1", b"/1"]) == [(1, 4), None, None]
    assert locate_pointers(b"[" + closed + b", 1]", [b"/0/0", b"/1"]) == [(1, 3), (1, 2 * depth + 4)]
    assert locate(closed, b"/0" * (depth - 1)) == (1, depth)


def test_byte_sizes_as_the_engine_reads_them():
    assert _cli.byte_size("80GiB") == 80 * 2**30
    assert _cli.byte_size("1.5KB") == 1500 and _cli.byte_size("0.5KiB") == 512
    assert _cli.byte_size("0.0001KiB") is None  # rounds down to 0 bytes
    assert _cli.byte_size("0.5B") is None and _cli.byte_size("1.5B") == 1
    assert _cli.byte_size(12) == 12 and _cli.byte_size(0) is None and _cli.byte_size(True) is None
    for bad in ("80 GiB", "80gib", "GiB", ".5GiB", "5.GiB", "1" * 37 + "B", 2**63, 1.5):
        assert _cli.byte_size(bad) is None, bad


def test_did_you_mean():
    assert _cli.did_you_mean("jsno", ["text", "json", "sarif"]) == "; did you mean 'json'?"
    assert _cli.did_you_mean("xml", ["text", "json", "sarif"]) == ""
    assert _cli.did_you_mean("--werorr", _cli._OPTIONS) == "; did you mean '--werror'?"
