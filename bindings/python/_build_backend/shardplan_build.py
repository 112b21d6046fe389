"""An in-tree PEP 517 / PEP 660 build backend for the shardplan Python binding.

Standard library only, with no build requirements, so that
``pip install ./bindings/python`` works offline: pip's build isolation has
nothing to download. It packs the pure-Python package ``shardplan/`` into a
``py3-none-any`` wheel (plus an sdist and editable wheels).

A libshardplan.so found in ``shardplan/`` (or given with
``pip install --config-settings library=/path/to/libshardplan.so ...``) is
shipped inside the wheel, which is then tagged for this platform.
"""

from __future__ import annotations

import base64
import csv
import gzip
import hashlib
import io
import os
import re
import sysconfig
import tarfile
import time
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent  # bindings/python
NAME = "shardplan"
PACKAGE = "shardplan"
LIBRARY = "libshardplan.so"
SUMMARY = "Check distributed-training sharding plans: Python binding (ctypes) of the shardplan C ABI"
REQUIRES_PYTHON = ">=3.8"
# Files of the sdist besides the package; tests read the repository's
# conformance cases, so they only run from a source checkout.
SDIST_EXTRA = ["pyproject.toml", "README.md", "_build_backend", "tests"]


def _version() -> str:
    text = (ROOT / PACKAGE / "_version.py").read_text(encoding="utf-8")
    match = re.search(r'^__version__ = "([^"]+)"$', text, re.M)
    if not match:
        raise RuntimeError("shardplan/_version.py has no __version__ line")
    return match.group(1)


VERSION = _version()
DIST_INFO = f"{NAME}-{VERSION}.dist-info"


def _timestamp() -> tuple:
    epoch = int(os.environ.get("SOURCE_DATE_EPOCH", "315532800"))  # 1980-01-01
    return time.gmtime(max(epoch, 315532800))[:6]


def _metadata() -> str:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    return (
        "Metadata-Version: 2.1\n"
        f"Name: {NAME}\n"
        f"Version: {VERSION}\n"
        f"Summary: {SUMMARY}\n"
        f"Requires-Python: {REQUIRES_PYTHON}\n"
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


def _package_files():
    """(archive name, path) of every file of the package, sorted."""
    for path in sorted((ROOT / PACKAGE).rglob("*")):
        rel = path.relative_to(ROOT)
        if path.is_dir() or "__pycache__" in rel.parts or path.suffix in (".pyc", ".pyo"):
            continue
        yield rel.as_posix(), path


def _library(config_settings) -> Path | None:
    """The libshardplan.so to ship, if any."""
    wanted = (config_settings or {}).get("library")
    if wanted:
        path = Path(wanted).expanduser().resolve()
        if not path.is_file():
            raise FileNotFoundError(f"config setting library={wanted!r}: no such file")
        return path
    return None


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

    def finish(self, tag: str, purelib: bool) -> None:
        self.add(f"{DIST_INFO}/METADATA", _metadata().encode("utf-8"))
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


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    target = Path(metadata_directory) / DIST_INFO
    target.mkdir(parents=True, exist_ok=True)
    purelib = _library(config_settings) is None and not (ROOT / PACKAGE / LIBRARY).is_file()
    tag = "py3-none-any" if purelib else f"py3-none-{_platform_tag()}"
    (target / "METADATA").write_text(_metadata(), encoding="utf-8")
    (target / "WHEEL").write_text(_wheel_file(tag, purelib), encoding="utf-8")
    return DIST_INFO


def prepare_metadata_for_build_editable(metadata_directory, config_settings=None):
    target = Path(metadata_directory) / DIST_INFO
    target.mkdir(parents=True, exist_ok=True)
    (target / "METADATA").write_text(_metadata(), encoding="utf-8")
    (target / "WHEEL").write_text(_wheel_file("py3-none-any", True), encoding="utf-8")
    return DIST_INFO


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    library = _library(config_settings)
    shipped = library is not None or (ROOT / PACKAGE / LIBRARY).is_file()
    tag = f"py3-none-{_platform_tag()}" if shipped else "py3-none-any"
    filename = f"{NAME}-{VERSION}-{tag}.whl"
    writer = _WheelWriter(Path(wheel_directory) / filename)
    for name, path in _package_files():
        if library is not None and name == f"{PACKAGE}/{LIBRARY}":
            continue  # replaced by the configured one
        writer.add(name, path.read_bytes(), executable=os.access(path, os.X_OK))
    if library is not None:
        writer.add(f"{PACKAGE}/{LIBRARY}", library.read_bytes(), executable=True)
    writer.finish(tag, purelib=not shipped)
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

    files = [(n, p) for n, p in _package_files() if not n.endswith(".so")]
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
