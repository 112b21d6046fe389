"""`pip install ./bindings/python` works offline: in-tree backend, no build requirements.

Creates one virtual environment (with pip, from the standard library's
ensurepip) and installs the package into it several ways. About 10 s. The
wheels here ship the library this suite loads (``library=PATH``) or none
(``library=none``): the default, which builds it with ``bazel build -c opt``,
is tools/wheel_test.sh's (a fresh environment, run from /tmp).
"""

import base64
import csv
import hashlib
import io
import os
import subprocess
import sys
import sysconfig
import tarfile
import time
import zipfile
from pathlib import Path

import pytest

import shardplan
from conftest import BINDING_DIR

LIBRARY = shardplan.library_path()


@pytest.fixture(scope="module")
def venv(tmp_path_factory):
    root = tmp_path_factory.mktemp("venv")
    made = subprocess.run([sys.executable, "-m", "venv", str(root)], capture_output=True, text=True)
    if made.returncode != 0 or not (root / "bin" / "pip").exists():
        pytest.skip(f"cannot create a virtual environment with pip: {made.stderr[-500:]}")
    return root


def pip(venv, *args, timeout=120):
    # --disable-pip-version-check: pip's own look for a newer pip, not this package's build.
    command = [str(venv / "bin" / "pip"), "--disable-pip-version-check", *args]
    started = time.monotonic()
    run = subprocess.run(command, capture_output=True, text=True, timeout=timeout, cwd=venv)
    assert run.returncode == 0, run.stdout + run.stderr
    return run, time.monotonic() - started


def run_python(venv, code, library=LIBRARY):
    env = {k: v for k, v in os.environ.items() if k not in ("SHARDPLAN_LIBRARY", "PYTHONPATH")}
    if library:
        env["SHARDPLAN_LIBRARY"] = library
    run = subprocess.run(
        [str(venv / "bin" / "python"), "-c", code],
        capture_output=True, text=True, timeout=60, cwd=venv, env=env,
    )
    assert run.returncode == 0, run.stderr
    return run.stdout.split()


IMPORT = "import shardplan; print(shardplan.abi_version(), shardplan.__file__, shardplan.library_path())"
TORCH = """
import sys, shardplan
print("torch" in sys.modules)
try:
    import shardplan.torch
except ImportError as error:
    print("missing", *str(error).split()[:3])
else:
    print("present", shardplan.torch.ROOT_ID)
"""


def test_install_offline_and_import(venv):
    run, elapsed = pip(venv, "install", "--no-index", "--config-settings", f"library={LIBRARY}", str(BINDING_DIR))
    assert "Successfully installed shardplan-" in run.stdout
    abi, module, library = run_python(venv, IMPORT)
    assert abi == "1"
    assert Path(module).is_relative_to(venv) and library == LIBRARY
    # torch is optional: `import shardplan` never imports it, and shardplan.torch
    # says what it needs when the environment has no torch (this one has none
    # unless its Python's own site-packages do).
    assert run_python(venv, TORCH) in (["False", "missing", "shardplan.torch", "needs", "PyTorch"],
                                       ["False", "present", "<root>"])
    # The same without --no-index: nothing to download, so no network use.
    run, elapsed = pip(venv, "install", "--force-reinstall", "--config-settings", f"library={LIBRARY}",
                       str(BINDING_DIR), timeout=60)
    assert elapsed < 30, f"pip took {elapsed:.0f} s: did it try the network?"


def _check_record(wheel: Path):
    with zipfile.ZipFile(wheel) as z:
        names = z.namelist()
        [record] = [n for n in names if n.endswith(".dist-info/RECORD")]
        rows = list(csv.reader(io.StringIO(z.read(record).decode())))
        assert sorted(r[0] for r in rows) == sorted(names)
        for name, digest, size in rows:
            if name == record:
                assert digest == size == ""
                continue
            data = z.read(name)
            expected = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
            assert digest == "sha256=" + expected.decode() and int(size) == len(data)
        metadata = z.read(record.replace("RECORD", "METADATA")).decode()
        wheel_file = z.read(record.replace("RECORD", "WHEEL")).decode()
    return names, metadata, wheel_file


def test_wheel_is_well_formed(venv, tmp_path):
    pip(venv, "wheel", "--no-index", "--no-deps", "-w", str(tmp_path), "--config-settings", "library=none",
        str(BINDING_DIR))
    [wheel] = tmp_path.glob("*.whl")
    assert wheel.name == f"shardplan-{shardplan.__version__}-py3-none-any.whl"
    names, metadata, wheel_file = _check_record(wheel)
    assert "shardplan/__init__.py" in names and "shardplan/_capi.py" in names
    assert "shardplan/torch.py" in names and "shardplan/__main__.py" in names
    assert sorted(n for n in names if n.startswith("shardplan/examples/")) == sorted(
        f"shardplan/examples/{name}" for name in shardplan.EXAMPLES)
    headers = metadata.split("\n\n", 1)[0]  # the README follows
    assert "Requires-Dist" not in headers  # no dependencies: torch is optional
    assert "Requires-External" not in headers  # no library shipped
    assert not any("__pycache__" in n or ".so" in n for n in names)
    assert f"Version: {shardplan.__version__}\n" in metadata and "Name: shardplan\n" in metadata
    assert "Root-Is-Purelib: true" in wheel_file and "Tag: py3-none-any" in wheel_file


def test_wheel_shipping_the_library_loads_it_from_the_package(venv, tmp_path):
    pip(venv, "wheel", "--no-index", "--no-deps", "-w", str(tmp_path),
        "--config-settings", f"library={LIBRARY}", str(BINDING_DIR))
    [wheel] = tmp_path.glob("*.whl")
    platform = sysconfig.get_platform().replace("-", "_").replace(".", "_")
    assert wheel.name == f"shardplan-{shardplan.__version__}-py3-none-{platform}.whl"  # linux_x86_64
    names, metadata, wheel_file = _check_record(wheel)
    assert [n for n in names if ".so" in n] == ["shardplan/libshardplan.so.1"]  # its soname
    assert "Root-Is-Purelib: false" in wheel_file and f"Tag: py3-none-{platform}" in wheel_file
    assert "Requires-External: libtbb12\n" in metadata.split("\n\n", 1)[0]
    pip(venv, "install", "--no-index", "--force-reinstall", str(wheel))
    abi, module, library = run_python(venv, IMPORT, library=None)
    assert abi == "1"
    assert library == str(Path(module).parent / "libshardplan.so.1")
    pip(venv, "uninstall", "-y", "shardplan")


@pytest.mark.parametrize("given, says", [("nope.so", "no such file"), ("bogus.so", "not a shared library")])
def test_wheel_refuses_a_file_that_is_not_the_library(venv, tmp_path, given, says):
    (tmp_path / "bogus.so").write_bytes(b"not a library")
    command = [str(venv / "bin" / "pip"), "--disable-pip-version-check", "wheel", "--no-index", "--no-deps",
               "-w", str(tmp_path / "dist"), "--config-settings", f"library={tmp_path / given}",
               str(BINDING_DIR)]
    run = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert run.returncode != 0 and says in run.stdout + run.stderr
    assert not list(tmp_path.glob("dist/*.whl"))


def test_backend_without_a_library_says_what_it_tried(tmp_path, monkeypatch):
    backend = _backend()
    # Neither a checkout nor an installed library: bazel and pkg-config find nothing.
    monkeypatch.setattr(backend, "REPO", tmp_path / "not-a-checkout")
    monkeypatch.setenv("PKG_CONFIG_PATH", str(tmp_path))
    monkeypatch.setenv("PKG_CONFIG_LIBDIR", str(tmp_path))
    with pytest.raises(RuntimeError) as info:
        backend.build_wheel(str(tmp_path))
    message = str(info.value)
    assert "bazel: " in message and "is not a shardplan checkout" in message
    assert "pkg-config: " in message and "library=none" in message
    assert not list(tmp_path.glob("*.whl"))


def test_backend_examples_are_the_package_s():
    assert _backend().EXAMPLES == shardplan.EXAMPLES


def _backend():
    sys.path.insert(0, str(BINDING_DIR / "_build_backend"))
    try:
        import shardplan_build
    finally:
        sys.path.pop(0)
    return shardplan_build


def test_sdist_installs(venv, tmp_path):
    name = _backend().build_sdist(str(tmp_path))
    with tarfile.open(tmp_path / name) as tar:
        members = set(tar.getnames())
    base = f"shardplan-{shardplan.__version__}"
    for needed in ("PKG-INFO", "pyproject.toml", "README.md", "shardplan/__init__.py",
                   "shardplan/torch.py", "_build_backend/shardplan_build.py",
                   "shardplan/examples/tiny-llama-broken.json"):
        assert f"{base}/{needed}" in members
    assert not [m for m in members if ".so" in m]
    # Out of a checkout, the sdist's wheel ships the library it is given.
    pip(venv, "install", "--no-index", "--force-reinstall", "--config-settings", f"library={LIBRARY}",
        str(tmp_path / name))
    abi, module, library = run_python(venv, IMPORT, library=None)
    assert abi == "1" and Path(module).is_relative_to(venv)
    assert library == str(Path(module).parent / "libshardplan.so.1")
    example = run_python(venv, "import shardplan; print(shardplan.example_path())", library=None)
    assert example == [str(Path(module).parent / "examples" / "tiny-llama-broken.json")]


def test_editable_install_imports_the_checkout(venv):
    pip(venv, "install", "--no-index", "--force-reinstall", "-e", str(BINDING_DIR))
    abi, module, _ = run_python(venv, IMPORT)
    assert abi == "1"
    assert Path(module) == BINDING_DIR / "shardplan" / "__init__.py"
    pip(venv, "uninstall", "-y", "shardplan")
