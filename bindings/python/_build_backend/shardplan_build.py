"""An in-tree PEP 517 / PEP 660 build backend for the shardplan Python binding.

Standard library only, with no build requirements, so that
``pip install ./bindings/python`` works offline: pip's build isolation has
nothing to download. It packs the package ``shardplan/``, the C library
``libshardplan.so`` and the example documents into a wheel (plus an sdist and
editable wheels).

The wheel ships the library as ``shardplan/libshardplan.so.1`` (the soname's
major version is the C ABI version) and is tagged for this platform
(``py3-none-linux_x86_64``, ``Root-Is-Purelib: false``). Which library, by
the ``library`` config setting (``pip install --config-settings library=...``):

- ``auto`` (the default): a ``libshardplan.so`` (or ``.so.1``) copied into
  ``shardplan/``; else, in a checkout with Bazel on PATH, the library built
  from the repository root with ``bazel build -c opt //capi:libshardplan.so``
  (``--symlink_prefix=/``: the checkout's ``bazel-bin`` link is left alone);
  else the installed one that ``pkg-config --variable=libdir shardplan``
  names (``tools/install.sh``, a .deb; ``PKG_CONFIG_PATH`` is honoured).
  When none is found the build fails, saying what it tried.
- ``bazel`` or ``pkg-config``: only that way;
- ``none``: no library, a ``py3-none-any`` wheel (the package then loads
  ``$SHARDPLAN_LIBRARY``, a checkout's or the installed library);
- a path: that file.

The library is checked before it is shipped: its ``sp_abi_version()`` must
be the ABI version of ``shardplan/_version.py``. It needs oneTBB's runtime
(Debian's libtbb12) where it runs; the wheel's metadata says so
(``Requires-External``).
"""

from __future__ import annotations

import base64
import csv
import ctypes
import gzip
import hashlib
import io
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import time
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent  # bindings/python
REPO = ROOT.parent.parent  # the repository root, when ROOT is a checkout's bindings/python
NAME = "shardplan"
PACKAGE = "shardplan"
LIBRARY = "libshardplan.so"
BAZEL_TARGET = "//capi:libshardplan.so"
# The example documents shipped as shardplan/examples/NAME (shardplan.EXAMPLES).
EXAMPLES = ("tiny-llama-broken.json", "tiny-llama.json", "tiny-plan.json")
# What the shipped library needs at run time besides the C and C++ runtimes.
REQUIRES_EXTERNAL = ["libtbb12"]
SUMMARY = "Check distributed-training sharding plans: Python binding (ctypes) of the shardplan C ABI"
REQUIRES_PYTHON = ">=3.8"
# Files of the sdist besides the package; tests read the repository's
# conformance cases, so they only run from a source checkout.
SDIST_EXTRA = ["pyproject.toml", "README.md", "_build_backend", "tests"]


def _version_file(pattern: str, what: str) -> str:
    text = (ROOT / PACKAGE / "_version.py").read_text(encoding="utf-8")
    match = re.search(pattern, text, re.M)
    if not match:
        raise RuntimeError(f"shardplan/_version.py has no {what} line")
    return match.group(1)


VERSION = _version_file(r'^__version__ = "([^"]+)"$', "__version__")
ABI_VERSION = int(_version_file(r"^ABI_VERSION = ([0-9]+)$", "ABI_VERSION"))
# The name of the library in the wheel: its soname.
BUNDLED = f"{LIBRARY}.{ABI_VERSION}"
DIST_INFO = f"{NAME}-{VERSION}.dist-info"


def _timestamp() -> tuple:
    epoch = int(os.environ.get("SOURCE_DATE_EPOCH", "315532800"))  # 1980-01-01
    return time.gmtime(max(epoch, 315532800))[:6]


def _metadata(shipped: bool = False) -> str:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    external = "".join(f"Requires-External: {name}\n" for name in REQUIRES_EXTERNAL) if shipped else ""
    return (
        "Metadata-Version: 2.1\n"
        f"Name: {NAME}\n"
        f"Version: {VERSION}\n"
        f"Summary: {SUMMARY}\n"
        f"Requires-Python: {REQUIRES_PYTHON}\n"
        f"{external}"
        "Classifier: Programming Language :: Python :: 3\n"
        "Classifier: Operating System :: POSIX :: Linux\n"
        "Description-Content-Type: text/markdown\n"
        "\n" + readme
    )


def _wheel_file(tag: str, purelib: bool) -> str:
    return (
        "Wheel-Version: 1.0\n"
        f"Generator: shardplan_build ({VERSION})\n"
        f"Root-Is-Purelib: {'true' if purelib else 'false'}\n"
        f"Tag: {tag}\n"
    )


def _is_library(rel: Path) -> bool:
    """A C library copied into the package (shipped as BUNDLED, not as is)."""
    return len(rel.parts) == 2 and rel.name.startswith(LIBRARY)


def _package_files():
    """(archive name, path) of every file of the package, sorted: the
    sources, and the example documents (from a checkout's examples/ when the
    package has none, as an sdist has them)."""
    files = {}
    for path in sorted((ROOT / PACKAGE).rglob("*")):
        rel = path.relative_to(ROOT)
        if path.is_dir() or "__pycache__" in rel.parts or path.suffix in (".pyc", ".pyo"):
            continue
        if _is_library(rel):
            continue
        files[rel.as_posix()] = path
    for name in EXAMPLES:
        archive = f"{PACKAGE}/examples/{name}"
        if archive not in files and (REPO / "examples" / name).is_file():
            files[archive] = REPO / "examples" / name
    return sorted(files.items())


def _log(message: str) -> None:
    """A line of the build's log (pip shows it with -v, or when the build fails)."""
    print(f"shardplan_build: {message}", file=sys.stderr, flush=True)


def _setting(config_settings) -> str:
    value = (config_settings or {}).get("library") or "auto"
    if isinstance(value, list):  # given more than once: the last one counts
        value = value[-1]
    return str(value)


def _clean_environment() -> dict:
    """The environment for Bazel and pkg-config: pip's build environment's
    own PATH entries and Python variables left out, so that Bazel sees the
    environment a build from the shell has (no repository rule reruns)."""
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join(
        d for d in env.get("PATH", "").split(os.pathsep) if d and "pip-build-env-" not in d
    )
    for name in ("PYTHONPATH", "PYTHONNOUSERSITE", "PYTHONHOME"):
        env.pop(name, None)
    return env


def _bazel_library(tried: list) -> Path | None:
    """Builds the library with Bazel when ROOT is a checkout's bindings/python."""
    if not ((REPO / "WORKSPACE").is_file() and (REPO / "capi" / "BUILD").is_file()):
        tried.append(f"bazel: {REPO} is not a shardplan checkout (no WORKSPACE and capi/BUILD)")
        return None
    env = _clean_environment()
    bazel = shutil.which("bazel", path=env["PATH"]) or shutil.which("bazelisk", path=env["PATH"])
    if bazel is None:
        tried.append("bazel: not on PATH")
        return None
    command = [bazel, "build", "-c", "opt", "--symlink_prefix=/", BAZEL_TARGET]
    _log(f"building the library: (cd {REPO} && {' '.join(command)})")
    try:  # Bazel's output goes to the build's log (pip -v shows it)
        log = sys.stderr.fileno()
    except (AttributeError, OSError, ValueError):  # a stream without a file (a test's capture)
        log = None
    built = subprocess.run(command, cwd=REPO, env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=log)
    if built.returncode != 0:
        tried.append(f"bazel: `{' '.join(command)}` failed (exit status {built.returncode}; its output is above)")
        return None
    info = subprocess.run(
        [bazel, "info", "-c", "opt", "bazel-bin"], cwd=REPO, env=env, stdin=subprocess.DEVNULL,
        capture_output=True, text=True,
    )
    library = Path(info.stdout.strip()) / "capi" / LIBRARY
    if info.returncode != 0 or not library.is_file():
        tried.append(f"bazel: built, but `bazel info -c opt bazel-bin` gives no {library}: {info.stderr[-500:]}")
        return None
    return library


def _pkg_config_library(tried: list) -> Path | None:
    """The installed library, in the libdir that pkg-config names."""
    env = _clean_environment()
    tool = shutil.which("pkg-config", path=env["PATH"]) or shutil.which("pkgconf", path=env["PATH"])
    if tool is None:
        tried.append("pkg-config: not on PATH")
        return None
    found = subprocess.run(
        [tool, "--variable=libdir", NAME], env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True
    )
    libdir = found.stdout.strip()
    where = f"PKG_CONFIG_PATH={env.get('PKG_CONFIG_PATH', '')!r}"
    if found.returncode != 0 or not libdir:
        tried.append(f"pkg-config: no package '{NAME}' ({where}): {found.stderr.strip()[-300:]}")
        return None
    for name in (BUNDLED, LIBRARY):
        if (Path(libdir) / name).is_file():
            _log(f"taking the installed library: {Path(libdir) / name} (pkg-config, libdir={libdir})")
            return (Path(libdir) / name).resolve()
    tried.append(f"pkg-config: libdir {libdir} ({where}) has neither {BUNDLED} nor {LIBRARY}")
    return None


def _check_library(path: Path) -> None:
    """Refuses a file that is no shared library, or a library of another C
    ABI version than the package's."""
    with open(path, "rb") as f:
        if f.read(4) != b"\x7fELF":
            raise RuntimeError(f"{path} is not a shared library (no ELF header)")
    try:
        cdll = ctypes.CDLL(str(path))
    except OSError as e:  # e.g. oneTBB's runtime is missing here: not this wheel's fault
        _log(f"warning: cannot load {path} to check its ABI version: {e}")
        return
    abi = getattr(cdll, "sp_abi_version", None)
    if abi is None:
        raise RuntimeError(f"{path} does not export sp_abi_version: not a libshardplan")
    abi.restype, abi.argtypes = ctypes.c_uint32, []
    found = int(abi())
    if found != ABI_VERSION:
        raise RuntimeError(
            f"{path} has C ABI version {found}, but the binding shardplan {VERSION} needs {ABI_VERSION}"
        )


def _library(config_settings) -> Path | None:
    """The libshardplan.so to ship (see the module's doc), or None for a pure wheel."""
    setting = _setting(config_settings)
    if setting == "none":
        return None
    tried: list = []
    library = None
    if setting not in ("auto", "bazel", "pkg-config"):
        library = Path(setting).expanduser().resolve()
        if not library.is_file():
            raise FileNotFoundError(f"config setting library={setting!r}: no such file")
    if library is None and setting == "auto":
        copied = [ROOT / PACKAGE / name for name in (BUNDLED, LIBRARY)]
        library = next((path.resolve() for path in copied if path.is_file()), None)
        if library is not None:
            _log(f"shipping the library copied into the package: {library}")
    if library is None and setting in ("auto", "bazel"):
        library = _bazel_library(tried)
    if library is None and setting in ("auto", "pkg-config"):
        library = _pkg_config_library(tried)
    if library is None:
        raise RuntimeError(
            "shardplan_build: no libshardplan.so to ship in the wheel. Tried:\n"
            + "".join(f"  - {line}\n" for line in tried)
            + "Build from a shardplan checkout with Bazel on PATH, install the library "
            "(tools/install.sh; then pkg-config finds it, or set PKG_CONFIG_PATH), pass "
            "--config-settings library=/path/to/libshardplan.so, or build a wheel without the "
            "library with --config-settings library=none."
        )
    _check_library(library)
    return library


class _WheelWriter:
    """Writes a wheel: files, then the .dist-info with METADATA, WHEEL, RECORD."""

    def __init__(self, path: Path) -> None:
        self.zip = zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED)
        self.records = []
        self.stamp = _timestamp()

    def add(self, name: str, data: bytes, executable: bool = False) -> None:
        info = zipfile.ZipInfo(name, self.stamp)
        info.external_attr = (0o755 if executable else 0o644) << 16
        info.compress_type = zipfile.ZIP_DEFLATED
        self.zip.writestr(info, data)
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
        self.records.append((name, f"sha256={digest.decode('ascii')}", str(len(data))))

    def finish(self, tag: str, purelib: bool, metadata: str | None = None) -> None:
        self.add(f"{DIST_INFO}/METADATA", (metadata or _metadata()).encode("utf-8"))
        self.add(f"{DIST_INFO}/WHEEL", _wheel_file(tag, purelib).encode("utf-8"))
        record = f"{DIST_INFO}/RECORD"
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerows(self.records)
        writer.writerow((record, "", ""))
        info = zipfile.ZipInfo(record, self.stamp)
        info.external_attr = 0o644 << 16
        info.compress_type = zipfile.ZIP_DEFLATED
        self.zip.writestr(info, out.getvalue().encode("utf-8"))
        self.zip.close()


def _platform_tag() -> str:
    return re.sub(r"[^A-Za-z0-9]", "_", sysconfig.get_platform())


# ---- PEP 517 hooks ----------------------------------------------------------


def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def get_requires_for_build_editable(config_settings=None):
    return []


def _shipping(config_settings) -> bool:
    """Whether the wheel ships the library: always, unless library=none."""
    return _setting(config_settings) != "none"


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    target = Path(metadata_directory) / DIST_INFO
    target.mkdir(parents=True, exist_ok=True)
    shipped = _shipping(config_settings)
    tag = f"py3-none-{_platform_tag()}" if shipped else "py3-none-any"
    (target / "METADATA").write_text(_metadata(shipped), encoding="utf-8")
    (target / "WHEEL").write_text(_wheel_file(tag, not shipped), encoding="utf-8")
    return DIST_INFO


def prepare_metadata_for_build_editable(metadata_directory, config_settings=None):
    target = Path(metadata_directory) / DIST_INFO
    target.mkdir(parents=True, exist_ok=True)
    (target / "METADATA").write_text(_metadata(), encoding="utf-8")
    (target / "WHEEL").write_text(_wheel_file("py3-none-any", True), encoding="utf-8")
    return DIST_INFO


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    library = _library(config_settings)
    shipped = library is not None
    tag = f"py3-none-{_platform_tag()}" if shipped else "py3-none-any"
    filename = f"{NAME}-{VERSION}-{tag}.whl"
    writer = _WheelWriter(Path(wheel_directory) / filename)
    for name, path in _package_files():
        writer.add(name, path.read_bytes(), executable=os.access(path, os.X_OK))
    if library is not None:
        writer.add(f"{PACKAGE}/{BUNDLED}", library.read_bytes(), executable=True)
    writer.finish(tag, purelib=not shipped, metadata=_metadata(shipped))
    return filename


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    """PEP 660: a wheel whose .pth puts this source directory on sys.path."""
    filename = f"{NAME}-{VERSION}-py3-none-any.whl"
    writer = _WheelWriter(Path(wheel_directory) / filename)
    writer.add(f"__editable__.{NAME}-{VERSION}.pth", (str(ROOT) + "\n").encode("utf-8"))
    writer.finish("py3-none-any", purelib=True)
    return filename


def build_sdist(sdist_directory, config_settings=None):
    base = f"{NAME}-{VERSION}"
    filename = f"{base}.tar.gz"
    mtime = max(int(os.environ.get("SOURCE_DATE_EPOCH", "315532800")), 0)

    def add(tar: tarfile.TarFile, name: str, data: bytes, mode: int = 0o644) -> None:
        info = tarfile.TarInfo(f"{base}/{name}")
        info.size, info.mode, info.mtime = len(data), mode, mtime
        info.uid = info.gid = 0
        info.uname = info.gname = ""
        tar.addfile(info, io.BytesIO(data))

    files = list(_package_files())  # the examples included, the library never
    for extra in SDIST_EXTRA:
        path = ROOT / extra
        candidates = sorted(path.rglob("*")) if path.is_dir() else [path]
        for item in candidates:
            rel = item.relative_to(ROOT)
            if item.is_file() and "__pycache__" not in rel.parts and item.suffix != ".pyc":
                files.append((rel.as_posix(), item))
    with open(Path(sdist_directory) / filename, "wb") as raw, gzip.GzipFile(
        filename="", mode="wb", fileobj=raw, mtime=mtime
    ) as gz, tarfile.open(fileobj=gz, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for name, path in sorted(files):
            mode = 0o755 if os.access(path, os.X_OK) else 0o644
            add(tar, name, path.read_bytes(), mode)
        add(tar, "PKG-INFO", _metadata().encode("utf-8"))
    return filename
