"""ctypes declarations of the shardplan C ABI (capi/include/shardplan/shardplan.h).

Everything here is private: the public API is in ``shardplan/__init__.py``.
Importing this module finds and loads ``libshardplan.so`` (see
``find_library``), declares every function of the header with its argtypes and
restype, and refuses a library whose ``sp_abi_version()`` is not the one these
declarations describe (``_check_abi``).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
from ctypes import (
    POINTER,
    Structure,
    c_char,
    c_char_p,
    c_double,
    c_int,
    c_int64,
    c_size_t,
    c_uint32,
    c_uint64,
)
from pathlib import Path
from typing import Callable, List, Optional, Sequence, Tuple

from ._version import ABI_VERSION, __version__

#: The environment variable naming the full path of libshardplan.so.
LIBRARY_ENV = "SHARDPLAN_LIBRARY"
LIBRARY_NAME = "libshardplan.so"
BUILD_COMMAND = "bazel build //capi:libshardplan.so"


class LibraryError(ImportError):
    """libshardplan.so could not be found or loaded, or has the wrong ABI."""


# ---- Types ------------------------------------------------------------------


class sp_str(Structure):
    """``sp_str``: ``size`` bytes at ``data``; data NULL means absent (outputs)."""

    _fields_ = [("data", POINTER(c_char)), ("size", c_size_t)]


class sp_parse_options(Structure):
    _fields_ = [
        ("max_paths", c_uint64),
        ("max_fqn_bytes", c_uint64),
        ("max_json_depth", c_uint32),
    ]


class sp_check_options(Structure):
    _fields_ = [("threads", c_uint32)]


# Enums are C ints (sp_error_code, sp_severity, sp_port).
sp_error_code = c_int
sp_severity = c_int
sp_port = c_int


class sp_diagnostic(Structure):
    _fields_ = [
        ("code", sp_str),
        ("severity", sp_severity),
        ("message", sp_str),
        ("fqn", sp_str),
        ("parameter", sp_str),
        ("pointer", sp_str),
    ]


class sp_fix_operation(Structure):
    """``sp_fix_operation``: one RFC 6902 operation; from and value NULL when absent."""

    _fields_ = [
        ("op", sp_str),
        ("path", sp_str),
        ("from_", sp_str),  # C's `from`, a keyword in Python
        ("value", sp_str),  # JSON text
    ]


class sp_diagnostic_group(Structure):
    """``sp_diagnostic_group``: ``num_listed`` diagnostic indexes at ``listed``."""

    _fields_ = [
        ("code", sp_str),
        ("severity", sp_severity),
        ("pointer", sp_str),
        ("count", c_size_t),
        ("listed", POINTER(c_size_t)),  # owned by the result
        ("num_listed", c_size_t),
    ]


class sp_memory(Structure):
    """``sp_memory``: six scalars, then the per-device array and its length."""

    _fields_ = [
        ("devices", c_uint64),
        ("unsharded_bytes", c_uint64),
        ("max_bytes", c_uint64),
        ("min_bytes", c_uint64),
        ("mean_bytes", c_double),
        ("max_device", c_uint64),
        ("per_device_bytes", POINTER(c_uint64)),  # NULL beyond 65,536 devices
        ("num_devices_listed", c_size_t),
    ]


class sp_training(Structure):
    """``sp_training`` (library 0.9): the worst device (its coordinates, one per
    mesh axis), its seven categories, then the totals over devices."""

    _fields_ = [
        ("worst_device", c_uint64),
        ("worst_coordinates", POINTER(c_uint64)),  # num_axes values, mesh order
        ("num_axes", c_size_t),
        ("params", c_uint64),
        ("grads", c_uint64),
        ("master", c_uint64),
        ("optimizer", c_uint64),
        ("gathered", c_uint64),
        ("activations", c_uint64),
        ("total", c_uint64),
        ("max_total_bytes", c_uint64),
        ("min_total_bytes", c_uint64),
        ("mean_total_bytes", c_double),
        ("per_device_total_bytes", POINTER(c_uint64)),  # NULL beyond 65,536 devices
        ("num_devices_listed", c_size_t),
    ]


class sp_plan_entry(Structure):
    _fields_ = [("fqn", sp_str), ("provenance", sp_str)]


class sp_communication(Structure):
    _fields_ = [
        ("fqn", sp_str),
        ("port", sp_str),
        ("axis", sp_str),
        ("from_", sp_str),  # C's `from`, a keyword in Python
        ("to", sp_str),
        ("collective", sp_str),
    ]


class sp_owner(Structure):
    _fields_ = [
        ("fqn", sp_str),
        ("kind", sp_str),
        ("native_request", c_size_t),  # SIZE_MAX unless kind is "native"
        ("native_pattern", sp_str),
        ("layout", sp_str),
        ("pointer", sp_str),
    ]


class sp_owned_parameter(Structure):
    _fields_ = [
        ("name", sp_str),
        ("canonical", sp_str),
        ("owner", c_size_t),
        ("placements", sp_str),
    ]


class sp_parallel_spec(Structure):
    _fields_ = [
        ("binding_kind", sp_str),
        ("axes", POINTER(sp_str)),
        ("num_axes", c_size_t),
    ]


# Opaque handles: distinct pointer types, so that a document can never be
# passed where a result is expected.
class sp_error(Structure):
    pass


class sp_document(Structure):
    pass


class sp_result(Structure):
    pass


class sp_layout(Structure):
    pass


class sp_builder(Structure):
    pass


sp_error_p = POINTER(sp_error)
sp_document_p = POINTER(sp_document)
sp_result_p = POINTER(sp_result)
sp_layout_p = POINTER(sp_layout)
sp_builder_p = POINTER(sp_builder)

# ---- Declarations: name -> (restype, argtypes), in header order -------------

_E = sp_error_p
SIGNATURES = {
    # Versions
    "sp_abi_version": (c_uint32, []),
    "sp_version_string": (c_char_p, []),
    # Errors
    "sp_error_code_of": (sp_error_code, [sp_error_p]),
    "sp_error_message": (c_char_p, [sp_error_p]),
    "sp_error_delete": (None, [sp_error_p]),
    # Documents
    "sp_document_parse": (_E, [sp_str, POINTER(sp_parse_options), POINTER(sp_document_p)]),
    "sp_document_is_valid": (_E, [sp_document_p, POINTER(c_int)]),
    "sp_document_delete": (None, [sp_document_p]),
    # Checking
    "sp_document_check": (_E, [sp_document_p, POINTER(sp_check_options), POINTER(sp_result_p)]),
    "sp_result_ok": (_E, [sp_result_p, POINTER(c_int)]),
    "sp_result_diagnostic_count": (_E, [sp_result_p, POINTER(c_size_t)]),
    "sp_result_diagnostic": (_E, [sp_result_p, c_size_t, POINTER(sp_diagnostic)]),
    "sp_result_diagnostic_help": (_E, [sp_result_p, c_size_t, POINTER(sp_str)]),
    "sp_result_diagnostic_fix_count": (_E, [sp_result_p, c_size_t, POINTER(c_size_t)]),
    "sp_result_diagnostic_fix": (
        _E,
        [sp_result_p, c_size_t, c_size_t, POINTER(sp_fix_operation)],
    ),
    "sp_result_group_count": (_E, [sp_result_p, POINTER(c_size_t)]),
    "sp_result_group": (_E, [sp_result_p, c_size_t, POINTER(sp_diagnostic_group)]),
    "sp_result_json": (_E, [sp_result_p, POINTER(sp_str)]),
    "sp_result_delete": (None, [sp_result_p]),
    # Planning
    "sp_document_plan": (_E, [sp_document_p, POINTER(sp_check_options), POINTER(sp_result_p)]),
    "sp_result_memory": (_E, [sp_result_p, POINTER(sp_memory), POINTER(c_int)]),
    "sp_result_training": (_E, [sp_result_p, POINTER(sp_training), POINTER(c_int)]),
    "sp_result_plan_entry_count": (_E, [sp_result_p, POINTER(c_size_t)]),
    "sp_result_plan_entry": (_E, [sp_result_p, c_size_t, POINTER(sp_plan_entry)]),
    "sp_result_communication_count": (_E, [sp_result_p, POINTER(c_size_t)]),
    "sp_result_communication": (_E, [sp_result_p, c_size_t, POINTER(sp_communication)]),
    # Owners and owned parameters
    "sp_result_owner_count": (_E, [sp_result_p, POINTER(c_size_t)]),
    "sp_result_owner": (_E, [sp_result_p, c_size_t, POINTER(sp_owner)]),
    "sp_result_owned_parameter_count": (_E, [sp_result_p, POINTER(c_size_t)]),
    "sp_result_owned_parameter": (_E, [sp_result_p, c_size_t, POINTER(sp_owned_parameter)]),
    # Layouts
    "sp_layout_create": (_E, [POINTER(sp_layout_p)]),
    "sp_layout_delete": (None, [sp_layout_p]),
    "sp_layout_declare": (_E, [sp_layout_p, sp_port]),
    "sp_layout_add_entry": (_E, [sp_layout_p, sp_port, sp_str]),
    "sp_layout_set_placement": (_E, [sp_layout_p, sp_port, sp_str, sp_str, sp_str]),
    "sp_layout_set_out_names": (_E, [sp_layout_p, POINTER(sp_str), c_size_t]),
    "sp_layout_set_legacy_field": (_E, [sp_layout_p, sp_str]),
    # Builder
    "sp_builder_create": (_E, [POINTER(sp_builder_p)]),
    "sp_builder_delete": (None, [sp_builder_p]),
    "sp_builder_add_axis": (_E, [sp_builder_p, sp_str, c_int64]),
    "sp_builder_add_parameter": (_E, [sp_builder_p, sp_str, POINTER(c_int64), c_size_t, sp_str]),
    "sp_builder_set_parameter_blocks": (_E, [sp_builder_p, sp_str, POINTER(c_int64), c_size_t]),
    "sp_builder_add_module": (_E, [sp_builder_p, sp_str, sp_str]),
    "sp_builder_add_forward_arg": (_E, [sp_builder_p, sp_str, sp_str]),
    "sp_builder_add_child": (_E, [sp_builder_p, sp_str, sp_str, sp_str]),
    "sp_builder_add_module_param": (_E, [sp_builder_p, sp_str, sp_str, sp_str]),
    "sp_builder_set_module_parallel": (_E, [sp_builder_p, sp_str, POINTER(sp_parallel_spec)]),
    "sp_builder_set_family": (_E, [sp_builder_p, sp_str, c_int, sp_layout_p]),
    "sp_builder_set_family_cached": (
        _E,
        [sp_builder_p, sp_str, sp_layout_p, POINTER(sp_parallel_spec)],
    ),
    "sp_builder_set_root": (_E, [sp_builder_p, sp_str]),
    "sp_builder_add_provider": (_E, [sp_builder_p, sp_str, sp_layout_p]),
    "sp_builder_add_native": (
        _E,
        [sp_builder_p, POINTER(sp_str), c_size_t, sp_layout_p, POINTER(sp_parallel_spec)],
    ),
    "sp_builder_declare_plan": (_E, [sp_builder_p]),
    "sp_builder_add_plan_entry": (_E, [sp_builder_p, sp_str, sp_layout_p]),
    "sp_builder_add_template": (_E, [sp_builder_p, sp_str, sp_str, POINTER(c_size_t)]),
    "sp_builder_add_template_rule": (_E, [sp_builder_p, c_size_t, sp_str, sp_str]),
    "sp_builder_add_override": (_E, [sp_builder_p, sp_str, sp_layout_p]),
    "sp_builder_set_pipeline": (_E, [sp_builder_p, sp_str]),
    "sp_builder_add_pipeline_module": (
        _E,
        [sp_builder_p, sp_str, POINTER(sp_str), c_size_t, POINTER(sp_str), c_size_t],
    ),
    "sp_builder_set_training": (_E, [sp_builder_p, sp_str]),
    "sp_builder_to_json": (_E, [sp_builder_p, POINTER(sp_str)]),
    "sp_builder_build": (_E, [sp_builder_p, POINTER(sp_parse_options), POINTER(sp_document_p)]),
}
del _E

# ---- Finding and loading the library ----------------------------------------

_PACKAGE_DIR = Path(__file__).resolve().parent

#: The installed library's soname: its major version is the C ABI version.
SONAME = f"{LIBRARY_NAME}.{ABI_VERSION}"
#: The names a library shipped inside the package may have: a wheel built by
#: the in-tree backend ships ``libshardplan.so.1``; one copied into a source
#: tree's ``shardplan/`` by hand is usually ``libshardplan.so``.
BUNDLED_NAMES = (SONAME, LIBRARY_NAME)
WHEEL_COMMAND = "pip install ./bindings/python"


def _source_repo_root(package_dir: Path) -> Optional[Path]:
    """<repo> when the package is <repo>/bindings/python/shardplan, else None."""
    python_dir = package_dir.parent
    if python_dir.name == "python" and python_dir.parent.name == "bindings":
        return python_dir.parent.parent
    return None


def candidate_paths(
    env: Optional[dict] = None,
    package_dir: Optional[Path] = None,
    repo_root: Optional[Path] = None,
) -> List[Tuple[str, Path]]:
    """The file locations searched, in order, as (description, path) pairs.

    1. ``$SHARDPLAN_LIBRARY`` when set (then it is the only candidate);
    2. the library shipped inside the package directory (``libshardplan.so.1``,
       as a wheel built by ``pip install ./bindings/python`` has it, then
       ``libshardplan.so``);
    3. ``<repo>/bazel-bin/capi/libshardplan.so`` of the source tree this
       package lies in, when it is ``<repo>/bindings/python/shardplan``
       (running from the checkout, or an editable install).
    The installed library is tried after these, by soname (``system_library``).
    """
    env = os.environ if env is None else env
    package_dir = _PACKAGE_DIR if package_dir is None else Path(package_dir)
    if repo_root is None:
        repo_root = _source_repo_root(package_dir)
    explicit = env.get(LIBRARY_ENV)
    if explicit:
        return [("$" + LIBRARY_ENV, Path(explicit))]
    candidates = [("package directory", package_dir / name) for name in BUNDLED_NAMES]
    if repo_root is not None:
        candidates.append(("source tree", Path(repo_root) / "bazel-bin" / "capi" / LIBRARY_NAME))
    return candidates


def _loads(name: str) -> bool:
    """Whether the dynamic loader finds and loads ``name`` (a soname)."""
    try:
        ctypes.CDLL(name)
    except OSError:
        return False
    return True


def system_library(name: str = "shardplan") -> Optional[str]:
    """The installed library (``tools/install.sh``, a .deb): its soname
    ``libshardplan.so.1`` when the dynamic loader finds it (``LD_LIBRARY_PATH``,
    the ``ldconfig`` cache, the system's directories), else what
    ``ctypes.util.find_library("shardplan")`` finds, else None."""
    soname = f"lib{name}.so.{ABI_VERSION}"
    if _loads(soname):
        return soname
    return ctypes.util.find_library(name)


def find_library(
    env: Optional[dict] = None,
    package_dir: Optional[Path] = None,
    repo_root: Optional[Path] = None,
    system_lookup: Callable[[str], Optional[str]] = system_library,
) -> str:
    """The path (or soname) of libshardplan.so to load; LibraryError if none."""
    env = os.environ if env is None else env
    candidates = candidate_paths(env, package_dir, repo_root)
    for _, path in candidates:
        if path.is_file():
            return str(path)
    if env.get(LIBRARY_ENV):
        raise LibraryError(
            f"{LIBRARY_ENV} is set to {env[LIBRARY_ENV]!r}, which is not a file. "
            f"Point it at a built libshardplan.so ({BUILD_COMMAND}, from the "
            "repository root, writes bazel-bin/capi/libshardplan.so), or unset it."
        )
    found = system_lookup("shardplan")
    if found:
        return found
    tried = "\n".join(f"  - {what}: {path}" for what, path in candidates)
    raise LibraryError(
        "cannot find libshardplan.so, the shardplan C library. Install the package "
        f"with the library inside it ({WHEEL_COMMAND} from a checkout builds it), "
        "install the library (tools/install.sh, then ldconfig), or build it from the "
        f"repository root with\n    {BUILD_COMMAND}\nand set {LIBRARY_ENV} to the "
        "full path of the built file (bazel-bin/capi/libshardplan.so). Tried:\n"
        f"{tried}\n  - soname {SONAME} (LD_LIBRARY_PATH, the ldconfig cache): not found"
        "\n  - ctypes.util.find_library('shardplan'): not found"
    )


def _check_abi(found: int, path: Optional[str] = None) -> None:
    """Refuses a library whose ABI version is not ``ABI_VERSION``."""
    if found != ABI_VERSION:
        where = f" at {path}" if path else ""
        raise LibraryError(
            f"incompatible libshardplan{where}: it has C ABI version {found}, but the "
            f"Python binding shardplan {__version__} needs ABI version {ABI_VERSION}. "
            f"Rebuild the library from the same source tree ({BUILD_COMMAND}) or "
            "install the matching binding."
        )


def _missing_function(name: str, path: str) -> Callable:
    def missing(*args):
        raise NotImplementedError(
            f"{path} does not export {name}: the library predates this function "
            f"(added within C ABI version {ABI_VERSION}); rebuild it ({BUILD_COMMAND})"
        )

    missing.__name__ = name
    return missing


def declare(cdll, path: str = "libshardplan.so") -> Tuple[str, ...]:
    """Sets argtypes and restype of every header function on ``cdll``.

    Functions are only ever added within one ABI version, so a library of
    the right ABI built before one was added lacks it: the missing functions
    are replaced by stubs raising NotImplementedError when called, and their
    names returned.
    """
    missing = []
    for name, (restype, argtypes) in SIGNATURES.items():
        try:
            fn = getattr(cdll, name)
        except AttributeError:
            setattr(cdll, name, _missing_function(name, path))
            missing.append(name)
            continue
        fn.restype = restype
        fn.argtypes = argtypes
    return tuple(missing)


def load(path: str) -> ctypes.CDLL:
    """Loads the library at ``path`` and checks its ABI version."""
    try:
        cdll = ctypes.CDLL(path)
    except OSError as e:
        hint = ""
        if "libtbb" in str(e):
            hint = " It needs oneTBB's runtime library (Debian and Ubuntu: apt install libtbb12)."
        raise LibraryError(
            f"cannot load {path}: {e}.{hint} Rebuild it ({BUILD_COMMAND}) or point "
            f"{LIBRARY_ENV} at a working libshardplan.so."
        ) from e
    # Check the ABI before trusting any other declaration.
    abi = getattr(cdll, "sp_abi_version", None)
    if abi is None:
        raise LibraryError(f"{path} does not export sp_abi_version: not a libshardplan")
    abi.restype, abi.argtypes = c_uint32, []
    _check_abi(int(abi()), path)
    return cdll


LIBRARY_PATH = find_library()
lib = load(LIBRARY_PATH)
#: Header functions the loaded library does not export (see ``declare``).
MISSING = declare(lib, LIBRARY_PATH)

# ---- Helpers shared by the wrappers -----------------------------------------


def encode(value, what: str = "string") -> bytes:
    """A str (UTF-8) or bytes-like value as bytes."""
    if isinstance(value, str):
        return value.encode("utf-8")
    if isinstance(value, bytes):
        return value
    if isinstance(value, (bytearray, memoryview)):
        return bytes(value)
    raise TypeError(f"{what} must be str or bytes, not {type(value).__name__}")


def make_str(data: bytes) -> sp_str:
    """An input sp_str viewing ``data``; keep ``data`` alive during the call."""
    return sp_str(ctypes.cast(c_char_p(data), POINTER(c_char)), len(data))


def make_str_array(values: Sequence[bytes]):
    """A non-NULL ``sp_str[]`` (one spare slot, so that an empty list is not NULL)."""
    array = (sp_str * max(1, len(values)))()
    for i, value in enumerate(values):
        array[i] = make_str(value)
    return array


def read_bytes(s: sp_str) -> Optional[bytes]:
    """An output sp_str copied out; None when absent (data NULL)."""
    if not s.data:
        return None
    return ctypes.string_at(s.data, s.size)


def read_text(s: sp_str) -> Optional[str]:
    raw = read_bytes(s)
    return None if raw is None else raw.decode("utf-8", errors="replace")
