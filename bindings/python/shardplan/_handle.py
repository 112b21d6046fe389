"""Owning wrappers of C handles: close(), context managers, finalizers.

A C handle is freed exactly once: by ``close()``, by leaving a ``with``
block, or by a ``weakref.finalize`` when the Python object is collected. A
closed handle is never passed to C: using it raises ClosedHandleError.

Two kinds:

* shared handles (documents, results) are read-only in C and may be used by
  several threads at once; ``close()`` while a call is running (the GIL is
  released during C calls) defers the free until the last call returns;
* exclusive handles (layouts, builders) are modified by C calls, so every
  call, and close, holds the handle's lock.
"""

from __future__ import annotations

import contextlib
import threading
import weakref
from typing import Callable, Iterator

from ._errors import ClosedHandleError


class Handle:
    _what = "handle"  # for messages: "document", "result", ...

    def __init__(self, pointer, deleter: Callable) -> None:
        self._pointer = pointer
        self._closed = False
        # Deletes the C object once: at close(), or when this object dies.
        self._finalizer = weakref.finalize(self, deleter, pointer)

    @property
    def closed(self) -> bool:
        """Whether the handle was closed (its C object freed or about to be)."""
        return self._closed

    def close(self) -> None:
        """Frees the C object now. Closing again does nothing."""
        raise NotImplementedError

    def __enter__(self):
        if self._closed:
            raise ClosedHandleError(self._what)
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _use(self):  # -> context manager yielding the C pointer
        raise NotImplementedError

    def __repr__(self) -> str:
        state = "closed" if self._closed else "open"
        return f"<shardplan.{type(self).__name__} ({state}) at {id(self):#x}>"


class SharedHandle(Handle):
    """A read-only C handle that threads may use concurrently."""

    def __init__(self, pointer, deleter: Callable) -> None:
        super().__init__(pointer, deleter)
        self._lock = threading.Lock()
        self._users = 0

    @contextlib.contextmanager
    def _use(self) -> Iterator:
        with self._lock:
            if self._closed:
                raise ClosedHandleError(self._what)
            self._users += 1
        try:
            yield self._pointer
        finally:
            with self._lock:
                self._users -= 1
                free = self._closed and self._users == 0
            if free:
                self._finalizer()

    def close(self) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
            free = self._users == 0
        if free:
            self._finalizer()


class ExclusiveHandle(Handle):
    """A C handle that calls modify: one call at a time."""

    def __init__(self, pointer, deleter: Callable) -> None:
        super().__init__(pointer, deleter)
        self._lock = threading.RLock()

    @contextlib.contextmanager
    def _use(self) -> Iterator:
        with self._lock:
            if self._closed:
                raise ClosedHandleError(self._what)
            yield self._pointer

    def close(self) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
            self._finalizer()
