"""The ctypes declarations match the header; versions; the library lookup."""

import ctypes
import os
import re
import subprocess
import sys

import pytest

import shardplan
from shardplan import _capi
from conftest import BINDING_DIR, HEADER


def header_functions():
    """name -> number of parameters, for every SP_API function of the header."""
    text = re.sub(r"/\*.*?\*/", "", HEADER.read_text(), flags=re.S)
    functions = {}
    for match in re.finditer(r"SP_API\s+[^;]*?\b(sp_\w+)\s*\(([^)]*)\)\s*;", text):
        params = match.group(2).strip()
        functions[match.group(1)] = 0 if params == "void" else params.count(",") + 1
    return functions


def test_every_header_function_is_declared():
    functions = header_functions()
    assert len(functions) >= 35
    assert set(_capi.SIGNATURES) == set(functions)
    for name, arity in functions.items():
        restype, argtypes = _capi.SIGNATURES[name]
        assert len(argtypes) == arity, name
        fn = getattr(_capi.lib, name)
        if name in _capi.MISSING:  # an older library of the same ABI
            with pytest.raises(NotImplementedError, match=name):
                fn()
        else:
            assert fn.argtypes == argtypes and fn.restype == restype, name


def test_functions_missing_from_an_older_library_raise_when_called():
    class OldLibrary:
        pass

    old = OldLibrary()
    for name in _capi.SIGNATURES:
        if name != "sp_builder_declare_plan":
            setattr(old, name, lambda *args: None)
    assert _capi.declare(old, "/old/libshardplan.so") == ("sp_builder_declare_plan",)
    assert old.sp_result_ok.argtypes == _capi.SIGNATURES["sp_result_ok"][1]
    with pytest.raises(NotImplementedError, match="/old/libshardplan.so .*sp_builder_declare_plan"):
        old.sp_builder_declare_plan(None)


def test_struct_layouts_match_c():
    size_t = ctypes.sizeof(ctypes.c_size_t)
    assert ctypes.sizeof(_capi.sp_str) == 2 * size_t
    assert ctypes.sizeof(_capi.sp_parse_options) == 24
    assert ctypes.sizeof(_capi.sp_check_options) == 4
    assert ctypes.sizeof(_capi.sp_parallel_spec) == 4 * size_t
    assert _capi.sp_diagnostic.message.offset == 3 * size_t  # after code and padded severity


def test_versions():
    assert shardplan.abi_version() == 1 == shardplan.ABI_VERSION
    assert re.fullmatch(r"\d+\.\d+\.\d+", shardplan.library_version())
    assert re.fullmatch(r"\d+\.\d+\.\d+", shardplan.__version__)
    assert os.path.exists(shardplan.library_path())


def test_abi_check_accepts_the_expected_version():
    shardplan._check_abi(1)
    _capi._check_abi(_capi.ABI_VERSION, "/some/libshardplan.so")


@pytest.mark.parametrize("fake", [0, 2, 99])
def test_abi_check_refuses_another_version(fake):
    with pytest.raises(ImportError) as info:
        _capi._check_abi(fake, "/some/libshardplan.so")
    assert isinstance(info.value, shardplan.LibraryError)
    message = str(info.value)
    assert f"ABI version {fake}" in message and "ABI version 1" in message
    assert "/some/libshardplan.so" in message


def test_a_missing_onetbb_says_which_package_to_install(monkeypatch):
    def cdll(path):
        raise OSError("libtbb.so.12: cannot open shared object file: No such file or directory")

    monkeypatch.setattr(_capi.ctypes, "CDLL", cdll)
    with pytest.raises(shardplan.LibraryError, match=r"libtbb\.so\.12: cannot open.*apt install libtbb12"):
        _capi.load("/some/libshardplan.so.1")


def test_loading_refuses_a_library_of_another_abi(monkeypatch):
    # The real library (ABI 1) against a binding that pretends to need ABI 2.
    monkeypatch.setattr(_capi, "ABI_VERSION", 2)
    with pytest.raises(shardplan.LibraryError) as info:
        _capi.load(shardplan.library_path())
    message = str(info.value)
    assert "it has C ABI version 1" in message and "needs ABI version 2" in message
    assert shardplan.library_path() in message


# ---- Library lookup ---------------------------------------------------------


def _touch(path):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"")
    return path


def _no_system(name):
    return None


def test_lookup_prefers_the_environment(tmp_path):
    env_lib = _touch(tmp_path / "env" / "libshardplan.so")
    pkg = tmp_path / "pkg"
    _touch(pkg / "libshardplan.so")
    env = {"SHARDPLAN_LIBRARY": str(env_lib)}
    assert _capi.find_library(env, pkg, tmp_path, _no_system) == str(env_lib)


def test_lookup_env_naming_a_missing_file_is_an_error(tmp_path):
    pkg = tmp_path / "pkg"
    _touch(pkg / "libshardplan.so")
    env = {"SHARDPLAN_LIBRARY": str(tmp_path / "nope.so")}
    with pytest.raises(ImportError, match="SHARDPLAN_LIBRARY is set to .*nope.so"):
        _capi.find_library(env, pkg, tmp_path, _no_system)


def test_lookup_order_package_then_source_tree_then_system(tmp_path):
    pkg, repo = tmp_path / "pkg", tmp_path / "repo"
    pkg.mkdir()
    tree_lib = _touch(repo / "bazel-bin" / "capi" / "libshardplan.so")
    system = lambda name: "libshardplan.so.sys" if name == "shardplan" else None
    assert _capi.find_library({}, pkg, repo, system) == str(tree_lib)
    pkg_lib = _touch(pkg / "libshardplan.so")
    assert _capi.find_library({}, pkg, repo, system) == str(pkg_lib)
    pkg_lib.unlink()
    tree_lib.unlink()
    assert _capi.find_library({}, pkg, repo, system) == "libshardplan.so.sys"


def test_source_tree_is_only_searched_from_a_checkout(tmp_path):
    site = tmp_path / "lib" / "python3.11" / "site-packages" / "shardplan"
    assert _capi.candidate_paths({}, site) == [
        ("package directory", site / "libshardplan.so.1"),  # as a wheel ships it
        ("package directory", site / "libshardplan.so"),
    ]
    checkout = tmp_path / "repo" / "bindings" / "python" / "shardplan"
    paths = dict(_capi.candidate_paths({}, checkout))
    assert paths["source tree"] == tmp_path / "repo" / "bazel-bin" / "capi" / "libshardplan.so"


def test_lookup_prefers_the_soname_a_wheel_ships(tmp_path):
    pkg = tmp_path / "pkg"
    _touch(pkg / "libshardplan.so")
    shipped = _touch(pkg / "libshardplan.so.1")
    assert _capi.find_library({}, pkg, None, _no_system) == str(shipped)


def test_installed_library_is_found_by_its_soname(monkeypatch):
    loaded = []
    monkeypatch.setattr(_capi, "_loads", lambda name: loaded.append(name) or name == "libshardplan.so.1")
    monkeypatch.setattr(_capi.ctypes.util, "find_library", lambda name: pytest.fail("not needed"))
    assert _capi.system_library() == "libshardplan.so.1" and loaded == ["libshardplan.so.1"]
    # Not by the loader's search: ctypes.util.find_library (ldconfig -p, gcc, ld).
    monkeypatch.setattr(_capi, "_loads", lambda name: False)
    monkeypatch.setattr(_capi.ctypes.util, "find_library", lambda name: f"lib{name}.so.7")
    assert _capi.system_library() == "libshardplan.so.7"


def test_missing_library_says_how_to_build_it(tmp_path):
    with pytest.raises(ImportError) as info:
        _capi.find_library({}, tmp_path, tmp_path / "repo", _no_system)
    message = str(info.value)
    assert "bazel build //capi:libshardplan.so" in message
    assert "pip install ./bindings/python" in message and "tools/install.sh" in message
    assert "SHARDPLAN_LIBRARY" in message
    # What was tried, in order.
    tried = [line for line in message.splitlines() if line.startswith("  - ")]
    assert tried == [
        f"  - package directory: {tmp_path / 'libshardplan.so.1'}",
        f"  - package directory: {tmp_path / 'libshardplan.so'}",
        f"  - source tree: {tmp_path / 'repo' / 'bazel-bin' / 'capi' / 'libshardplan.so'}",
        "  - soname libshardplan.so.1 (LD_LIBRARY_PATH, the ldconfig cache): not found",
        "  - ctypes.util.find_library('shardplan'): not found",
    ]


def _import_with(library):
    env = dict(os.environ, SHARDPLAN_LIBRARY=str(library))
    return subprocess.run(
        [sys.executable, "-c", "import shardplan"],
        cwd=BINDING_DIR, env=env, capture_output=True, text=True, timeout=60,
    )


def test_import_fails_cleanly_without_the_library(tmp_path):
    run = _import_with(tmp_path / "missing" / "libshardplan.so")
    assert run.returncode != 0
    assert "shardplan._capi.LibraryError" in run.stderr
    assert "bazel build //capi:libshardplan.so" in run.stderr


def test_import_fails_cleanly_on_a_file_that_is_not_a_library(tmp_path):
    bogus = tmp_path / "libshardplan.so"
    bogus.write_text("not an ELF file")
    run = _import_with(bogus)
    assert run.returncode != 0
    assert "LibraryError: cannot load" in run.stderr
