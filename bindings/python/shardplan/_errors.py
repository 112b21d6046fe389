"""Errors: ``sp_error`` as the Python exception ShardplanError."""

from __future__ import annotations

import enum
from typing import Union

from . import _capi
from ._capi import lib


class ErrorCode(enum.IntEnum):
    """``sp_error_code``."""

    OK = 0
    NULL_ARGUMENT = 1  #: a required argument was missing (or a handle closed)
    INVALID_ARGUMENT = 2  #: a value is out of range or malformed
    OUT_OF_RANGE = 3  #: an index past the end
    OUT_OF_MEMORY = 4
    INTERNAL = 5  #: a bug in shardplan: please report it

    def __str__(self) -> str:
        return self.name


class ShardplanError(Exception):
    """An ``sp_error`` from the C library: the API was misused (or memory ran out).

    Findings about a document are never errors; they are the diagnostics of
    its check result. ``code`` is an :class:`ErrorCode` (a plain int for a code
    this binding does not know), ``message`` the library's message.
    """

    def __init__(self, code: Union[ErrorCode, int], message: str):
        try:
            code = ErrorCode(code)
        except ValueError:
            code = int(code)
        self.code = code
        self.message = message
        super().__init__(code, message)

    def __str__(self) -> str:
        name = self.code.name if isinstance(self.code, ErrorCode) else f"code {self.code}"
        return f"{self.message} [{name}]"

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.code!r}, {self.message!r})"


class ClosedHandleError(ShardplanError, ValueError):
    """A closed document, result, layout or builder was used.

    Its code is NULL_ARGUMENT: the C call would have had a NULL handle (it is
    never made). Also a ValueError, like I/O on a closed file.
    """

    def __init__(self, what: str):
        self.what = what
        super().__init__(ErrorCode.NULL_ARGUMENT, f"the {what} is closed")

    def __reduce__(self):
        return (type(self), (self.what,))


def take(error) -> ShardplanError:
    """The ShardplanError for a non-NULL ``sp_error *``, which it frees."""
    try:
        code = lib.sp_error_code_of(error)
        raw = lib.sp_error_message(error) or b""
        return ShardplanError(code, raw.decode("utf-8", errors="replace"))
    finally:
        lib.sp_error_delete(error)


def call(fn, *args) -> None:
    """Calls an ``sp_error *``-returning function; raises its error, if any."""
    error = fn(*args)
    if error:
        raise take(error)


__all__ = ["ErrorCode", "ShardplanError", "ClosedHandleError", "LibraryError"]
LibraryError = _capi.LibraryError
