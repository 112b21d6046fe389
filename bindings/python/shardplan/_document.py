"""Documents, check results and diagnostics."""

from __future__ import annotations

import ctypes
import dataclasses
import enum
import json as _json
from typing import Any, Dict, List, Optional, Union

from . import _capi
from ._capi import lib
from ._errors import ErrorCode, ShardplanError, call
from ._handle import SharedHandle

Text = Union[str, bytes, bytearray, memoryview]

_UINT32_MAX = 2**32 - 1
_UINT64_MAX = 2**64 - 1
_SIZE_MAX = 2 ** (8 * ctypes.sizeof(ctypes.c_size_t)) - 1


class Severity(enum.IntEnum):
    """``sp_severity``; ``str()`` gives the result JSON's spelling ("error")."""

    ERROR = 0
    WARNING = 1
    INFO = 2

    def __str__(self) -> str:
        return self.name.lower()


@dataclasses.dataclass(frozen=True)
class Diagnostic:
    """One finding of a check (``sp_diagnostic``), copied out of the result.

    ``fqn``, ``parameter`` and ``pointer`` are None when absent; the root
    module's FQN is ``""``.
    """

    code: str
    severity: Severity
    message: str
    fqn: Optional[str] = None
    parameter: Optional[str] = None
    pointer: Optional[str] = None

    def to_dict(self) -> Dict[str, Any]:
        """The diagnostic as in the result JSON (severity as "error", ...)."""
        return {
            "code": self.code,
            "severity": str(self.severity),
            "message": self.message,
            "fqn": self.fqn,
            "parameter": self.parameter,
            "pointer": self.pointer,
        }

    def __str__(self) -> str:
        text = f"{self.severity}[{self.code}]: {self.message}"
        if self.pointer is not None:
            text += f" (at {self.pointer or '/'})"
        return text


def _unsigned(value, name: str, maximum: int) -> int:
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int or None, not {type(value).__name__}")
    if not 0 <= value <= maximum:
        raise ValueError(f"{name} must be between 0 and {maximum}, not {value}")
    return value


def parse_options(
    max_paths: Optional[int] = None,
    max_fqn_bytes: Optional[int] = None,
    max_json_depth: Optional[int] = None,
) -> _capi.sp_parse_options:
    """``sp_parse_options``; None (or 0) keeps the library's default."""
    return _capi.sp_parse_options(
        _unsigned(max_paths, "max_paths", _UINT64_MAX),
        _unsigned(max_fqn_bytes, "max_fqn_bytes", _UINT64_MAX),
        _unsigned(max_json_depth, "max_json_depth", _UINT32_MAX),
    )


class Result(SharedHandle):
    """The result of checking a document (``sp_result``).

    Independent of its document (it stays valid when the document is
    closed). Values are copied out of the C result on first use.
    """

    _what = "result"

    def __init__(self, pointer) -> None:
        super().__init__(pointer, lib.sp_result_delete)
        self._ok: Optional[bool] = None
        self._count: Optional[int] = None
        self._diagnostics: Optional[List[Diagnostic]] = None
        self._json: Optional[str] = None

    @property
    def ok(self) -> bool:
        """True when there is no diagnostic of severity error."""
        with self._use() as pointer:
            if self._ok is None:
                out = ctypes.c_int()
                call(lib.sp_result_ok, pointer, ctypes.byref(out))
                self._ok = bool(out.value)
            return self._ok

    def diagnostic_count(self) -> int:
        """The number of diagnostics."""
        with self._use() as pointer:
            if self._count is None:
                out = ctypes.c_size_t()
                call(lib.sp_result_diagnostic_count, pointer, ctypes.byref(out))
                self._count = out.value
            return self._count

    def diagnostic(self, index: int) -> Diagnostic:
        """Diagnostic ``index`` (0-based; negative counts from the end).

        An index past the end raises ShardplanError with code OUT_OF_RANGE.
        """
        if isinstance(index, bool) or not isinstance(index, int):
            raise TypeError(f"index must be an int, not {type(index).__name__}")
        with self._use() as pointer:
            count = self.diagnostic_count()
            position = index + count if index < 0 else index
            if position < 0:
                raise ShardplanError(
                    ErrorCode.OUT_OF_RANGE,
                    f"diagnostic index {index} out of range (the result has {count})",
                )
            # C reports an index past the end (one past size_t's range included).
            return _read_diagnostic(pointer, min(position, _SIZE_MAX))

    @property
    def diagnostics(self) -> List[Diagnostic]:
        """Every diagnostic, in evaluation order (the first is the reference's error)."""
        with self._use() as pointer:
            if self._diagnostics is None:
                count = self.diagnostic_count()
                self._diagnostics = [_read_diagnostic(pointer, i) for i in range(count)]
            return list(self._diagnostics)

    @property
    def json(self) -> str:
        """The whole result as compact JSON (schema shardplan.result.v1)."""
        with self._use() as pointer:
            if self._json is None:
                out = _capi.sp_str()
                call(lib.sp_result_json, pointer, ctypes.byref(out))
                self._json = _capi.read_bytes(out).decode("utf-8", errors="replace")
            return self._json

    def to_dict(self) -> Dict[str, Any]:
        """The result JSON as Python objects."""
        return _json.loads(self.json)

    def __repr__(self) -> str:
        if self.closed:
            return super().__repr__()
        return f"<shardplan.Result ok={self.ok} diagnostics={self.diagnostic_count()}>"


def _read_diagnostic(pointer, index: int) -> Diagnostic:
    out = _capi.sp_diagnostic()
    call(lib.sp_result_diagnostic, pointer, index, ctypes.byref(out))
    try:
        severity = Severity(out.severity)
    except ValueError:  # a severity added by a later library
        severity = out.severity
    return Diagnostic(
        code=_capi.read_text(out.code) or "",
        severity=severity,
        message=_capi.read_text(out.message) or "",
        fqn=_capi.read_text(out.fqn),
        parameter=_capi.read_text(out.parameter),
        pointer=_capi.read_text(out.pointer),
    )


class Document(SharedHandle):
    """A parsed (or built) shardplan.v1 document (``sp_document``).

    Make one with :func:`parse` or :meth:`Builder.build`. It may be checked
    any number of times, from several threads at once.
    """

    _what = "document"

    def __init__(self, pointer) -> None:
        super().__init__(pointer, lib.sp_document_delete)

    @property
    def is_valid(self) -> bool:
        """Whether the document parsed; if not, its check reports invalid-document."""
        with self._use() as pointer:
            out = ctypes.c_int()
            call(lib.sp_document_is_valid, pointer, ctypes.byref(out))
            return bool(out.value)

    def check(self, *, threads: int = 0) -> Result:
        """Checks the document. ``threads``: worker threads, 0 for all cores."""
        options = _capi.sp_check_options(_unsigned(threads, "threads", _UINT32_MAX))
        out = _capi.sp_result_p()
        with self._use() as pointer:
            call(lib.sp_document_check, pointer, ctypes.byref(options), ctypes.byref(out))
        return Result(out)


def parse(
    text: Text,
    *,
    max_paths: Optional[int] = None,
    max_fqn_bytes: Optional[int] = None,
    max_json_depth: Optional[int] = None,
) -> Document:
    """Parses a shardplan.v1 document from JSON text (str, or UTF-8 bytes).

    A malformed document is not an error: it gives a document whose check
    reports the single invalid-document diagnostic. The limits refuse hostile
    input (None: the library's defaults).
    """
    data = _capi.encode(text, "text")
    options = parse_options(max_paths, max_fqn_bytes, max_json_depth)
    out = _capi.sp_document_p()
    call(lib.sp_document_parse, _capi.make_str(data), ctypes.byref(options), ctypes.byref(out))
    return Document(out)


def check(
    text: Text,
    *,
    threads: int = 0,
    max_paths: Optional[int] = None,
    max_fqn_bytes: Optional[int] = None,
    max_json_depth: Optional[int] = None,
) -> Result:
    """Parses and checks a document in one call: ``parse(text).check()``."""
    with parse(
        text, max_paths=max_paths, max_fqn_bytes=max_fqn_bytes, max_json_depth=max_json_depth
    ) as document:
        return document.check(threads=threads)
