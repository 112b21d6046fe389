"""shardplan: check sharding plans from Python, over the shardplan C ABI.

    >>> import shardplan
    >>> with shardplan.parse(text) as doc, doc.check() as result:
    ...     for d in result.diagnostics:
    ...         print(d.code, d.message)
    >>> with shardplan.plan(text) as planned:   # shardplan plan: templates, memory
    ...     print(planned.memory.max_bytes, planned.communication)
    ...     print(planned.training)    # with a training section: training memory

Importing the package loads libshardplan.so: ``$SHARDPLAN_LIBRARY`` if set,
else the one shipped in this package's directory (a wheel built by
``pip install ./bindings/python`` has it), else the source tree's
``bazel-bin/capi/libshardplan.so`` (build it with
``bazel build //capi:libshardplan.so``), else the installed one by its soname
``libshardplan.so.1``. A missing or incompatible library raises ImportError
(LibraryError).

``python -m shardplan check|plan [OPTIONS] DOC...`` is the command line
(``_cli.py``); ``example_path()`` names the example documents shipped with
the package.

Handles (Document, Result, Layout, Builder) free their C objects on
``close()``, at the end of a ``with`` block, or when collected; a closed
handle raises ClosedHandleError (a ShardplanError and a ValueError).
"""

from __future__ import annotations

from pathlib import Path as _Path

from . import _capi
from ._builder import Builder, Layout, ParallelSpec, Port
from ._capi import LibraryError, _check_abi  # _check_abi: the load-time ABI check, for tests
from ._document import (
    Communication,
    Diagnostic,
    DiagnosticGroup,
    Document,
    FixOperation,
    Memory,
    PlanEntry,
    Result,
    Severity,
    Training,
    check,
    parse,
    plan,
)
from ._errors import ClosedHandleError, ErrorCode, ShardplanError
from ._version import ABI_VERSION, __version__


def abi_version() -> int:
    """The C ABI version of the loaded library (``sp_abi_version()``)."""
    return int(_capi.lib.sp_abi_version())


def library_version() -> str:
    """The loaded library's release, "MAJOR.MINOR.PATCH" (``sp_version_string()``)."""
    return _capi.lib.sp_version_string().decode("ascii", errors="replace")


def library_path() -> str:
    """The path (or name) libshardplan.so was loaded from."""
    return _capi.LIBRARY_PATH


#: The example documents shipped in the package (``shardplan/examples/``; a
#: checkout's ``examples/``).
EXAMPLES = ("tiny-llama-broken.json", "tiny-llama.json", "tiny-plan.json")


def example_path(name: str = "tiny-llama-broken.json") -> str:
    """The path of an example document shipped with the package (one of
    ``EXAMPLES``): ``shardplan/examples/NAME`` of an installed wheel, else the
    checkout's ``examples/NAME`` when running from the source tree.

    >>> shardplan.check(open(shardplan.example_path()).read()).ok
    False
    """
    if name not in EXAMPLES:
        raise ValueError(f"no example document {name!r}; the examples are {', '.join(EXAMPLES)}")
    here = _Path(__file__).resolve().parent
    candidates = [here / "examples" / name]
    repo = _capi._source_repo_root(here)
    if repo is not None:
        candidates.append(repo / "examples" / name)
    for path in candidates:
        if path.is_file():
            return str(path)
    raise FileNotFoundError(f"{name}: not shipped with this package (looked in {', '.join(map(str, candidates))})")


__all__ = [
    "ABI_VERSION",
    "Builder",
    "ClosedHandleError",
    "Communication",
    "Diagnostic",
    "DiagnosticGroup",
    "Document",
    "EXAMPLES",
    "ErrorCode",
    "FixOperation",
    "Layout",
    "LibraryError",
    "Memory",
    "ParallelSpec",
    "PlanEntry",
    "Port",
    "Result",
    "Severity",
    "ShardplanError",
    "Training",
    "__version__",
    "abi_version",
    "check",
    "example_path",
    "library_path",
    "library_version",
    "parse",
    "plan",
]
