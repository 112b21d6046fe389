"""Documents, check and plan results, diagnostics (help, fixes, groups), memory, training memory
and communication."""

from __future__ import annotations

import ctypes
import dataclasses
import enum
import json as _json
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, TypeVar, Union

from . import _capi
from ._capi import lib
from ._errors import ErrorCode, ShardplanError, call
from ._handle import SharedHandle

Text = Union[str, bytes, bytearray, memoryview]

_UINT32_MAX = 2**32 - 1
_UINT64_MAX = 2**64 - 1
_SIZE_MAX = 2 ** (8 * ctypes.sizeof(ctypes.c_size_t)) - 1

_T = TypeVar("_T")


class Severity(enum.IntEnum):
    """``sp_severity``; ``str()`` gives the result JSON's spelling ("error")."""

    ERROR = 0
    WARNING = 1
    INFO = 2

    def __str__(self) -> str:
        return self.name.lower()


@dataclasses.dataclass(frozen=True)
class FixOperation:
    """One operation of a diagnostic's fix (``sp_fix_operation``): RFC 6902 JSON Patch.

    ``op`` is "move" (the member at ``from_`` moves to ``path``: a rename) or
    "replace" (the value at ``path`` becomes ``value``). ``from_`` is C's
    ``from`` (a Python keyword); ``from_`` and ``value`` are None when the
    operation has none. ``value`` is JSON text, as the C API gives it
    (``'"tp"'``, not ``'tp'``); :meth:`to_dict` parses it.
    """

    op: str
    path: str
    from_: Optional[str] = None
    value: Optional[str] = None  #: JSON text

    def to_dict(self) -> Dict[str, Any]:
        """The operation as in the result JSON and RFC 6902: ``{"op": "move",
        "from": ..., "path": ...}`` or ``{"op": "replace", "path": ...,
        "value": <the parsed value>}`` (absent members left out)."""
        out: Dict[str, Any] = {"op": self.op}
        if self.from_ is not None:
            out["from"] = self.from_
        out["path"] = self.path
        if self.value is not None:
            out["value"] = _json.loads(self.value)
        return out

    def __str__(self) -> str:
        if self.from_ is not None:
            text = f"{self.op} {self.from_} -> {self.path}"
        else:
            text = f"{self.op} {self.path}"
        if self.value is not None:
            text += f" = {self.value}"
        return text


@dataclasses.dataclass(frozen=True)
class Diagnostic:
    """One finding of a check (``sp_diagnostic``), copied out of the result.

    ``fqn``, ``parameter`` and ``pointer`` are None when absent; the root
    module's FQN is ``""``. ``help`` says what to change where the engine
    knows ("did you mean 'tp'? ..."), else None; ``fix`` is a tuple of
    :class:`FixOperation`, an RFC 6902 JSON Patch on the document that
    removes the finding, or ``()`` when there is none.
    """

    code: str
    severity: Severity
    message: str
    fqn: Optional[str] = None
    parameter: Optional[str] = None
    pointer: Optional[str] = None
    help: Optional[str] = None
    fix: Tuple[FixOperation, ...] = ()

    def to_dict(self) -> Dict[str, Any]:
        """The diagnostic as in the result JSON (severity as "error", ...);
        "help" and "fix" only when present, as there."""
        out: Dict[str, Any] = {
            "code": self.code,
            "severity": str(self.severity),
            "message": self.message,
            "fqn": self.fqn,
            "parameter": self.parameter,
            "pointer": self.pointer,
        }
        if self.help is not None:
            out["help"] = self.help
        if self.fix:
            out["fix"] = [op.to_dict() for op in self.fix]
        return out

    def __str__(self) -> str:
        text = f"{self.severity}[{self.code}]: {self.message}"
        if self.pointer is not None:
            text += f" (at {self.pointer or '/'})"
        return text


@dataclasses.dataclass(frozen=True)
class DiagnosticGroup:
    """Diagnostics with one cause (``sp_diagnostic_group``): the same code at
    the same declaration (the same ``pointer``, or None for diagnostics
    without one), as one over-wide native pattern gives one diagnostic per
    module it should not have matched.

    ``listed`` are the indexes of its diagnostics in ``Result.diagnostics``
    (0-based, increasing; ``Result.diagnostic(i)`` reads one), and ``count``
    their number.
    """

    code: str
    severity: Severity
    pointer: Optional[str]
    count: int
    listed: Tuple[int, ...]

    def to_dict(self) -> Dict[str, Any]:
        """The group as in the result JSON's "groups"."""
        return {
            "code": self.code,
            "severity": str(self.severity),
            "pointer": self.pointer,
            "count": self.count,
            "listed": list(self.listed),
        }


@dataclasses.dataclass(frozen=True)
class Memory:
    """Per-device memory of a planned result (``sp_memory``, planner-v1 section 5).

    Devices are numbered row-major over the mesh axes; bytes are per device.
    ``per_device_bytes`` is a tuple with one entry per device, or None for
    meshes of more than 65,536 devices.
    """

    devices: int
    unsharded_bytes: int  #: every parameter identity once, unsharded
    max_bytes: int
    min_bytes: int
    mean_bytes: float
    max_device: int  #: the lowest device holding max_bytes
    per_device_bytes: Optional[Tuple[int, ...]] = None

    def to_dict(self) -> Dict[str, Any]:
        """The memory as in the result JSON's "memory" object."""
        out: Dict[str, Any] = {
            "devices": self.devices,
            "unsharded_bytes": self.unsharded_bytes,
            "max_bytes": self.max_bytes,
            "min_bytes": self.min_bytes,
            "mean_bytes": self.mean_bytes,
            "max_device": self.max_device,
        }
        if self.per_device_bytes is not None:
            out["per_device_bytes"] = list(self.per_device_bytes)
        return out

    def __repr__(self) -> str:
        per_device = self.per_device_bytes
        if per_device is not None and len(per_device) > 8:  # up to 65,536 of them
            per_device = f"({', '.join(map(str, per_device[:8]))}, ... {len(per_device)} devices)"
        fields = [f"{f.name}={getattr(self, f.name)!r}" for f in dataclasses.fields(self)[:-1]]
        return f"Memory({', '.join(fields)}, per_device_bytes={per_device!s})"


@dataclasses.dataclass(frozen=True)
class Training:
    """Training memory of a result (``sp_training``, training-v1 section 4), for a
    document with a ``training`` section. Since library 0.9.

    The worst device (the largest total, the lowest number on ties):
    ``worst_device``, its ``worst_coordinates`` (one per mesh axis, in mesh
    order) and its bytes by category; then the totals over devices. All in
    bytes per device; a category that does not apply is 0.
    ``per_device_total_bytes`` is a tuple with one total per device, or None
    for meshes of more than 65,536 devices. Whether it fits
    (``exceeds-device-memory``, ``near-device-memory``) is among the
    result's diagnostics.
    """

    worst_device: int
    worst_coordinates: Tuple[int, ...]  #: one per mesh axis, mesh order
    params: int
    grads: int
    master: int
    optimizer: int
    gathered: int  #: the largest FSDP unit, gathered (zero 3)
    activations: int  #: the same on every device
    total: int
    max_total_bytes: int
    min_total_bytes: int
    mean_total_bytes: float
    per_device_total_bytes: Optional[Tuple[int, ...]] = None

    def to_dict(self, axes: Optional[Sequence[str]] = None) -> Dict[str, Any]:
        """The training memory as in the result JSON's "memory"/"training"
        object ("per_device_total_bytes" null beyond 65,536 devices). The
        JSON keys the worst device's coordinates by mesh axis:
        pass the mesh's axis names, in mesh order, to get that form (else
        "coordinates" is the list)."""
        coordinates: Any = list(self.worst_coordinates)
        if axes is not None:
            axes = list(axes)
            if len(axes) != len(coordinates):
                raise ValueError(
                    f"{len(axes)} axis names for {len(coordinates)} coordinates"
                )
            coordinates = dict(zip(axes, coordinates))
        out: Dict[str, Any] = {
            "worst": {
                "device": self.worst_device,
                "coordinates": coordinates,
                "params": self.params,
                "grads": self.grads,
                "master": self.master,
                "optimizer": self.optimizer,
                "gathered": self.gathered,
                "activations": self.activations,
                "total": self.total,
            },
            "max_total_bytes": self.max_total_bytes,
            "min_total_bytes": self.min_total_bytes,
            "mean_total_bytes": self.mean_total_bytes,
            "per_device_total_bytes": None,  # null beyond 65,536 devices, as in the JSON
        }
        if self.per_device_total_bytes is not None:
            out["per_device_total_bytes"] = list(self.per_device_total_bytes)
        return out

    def __repr__(self) -> str:
        per_device = self.per_device_total_bytes
        if per_device is not None and len(per_device) > 8:  # up to 65,536 of them
            per_device = f"({', '.join(map(str, per_device[:8]))}, ... {len(per_device)} devices)"
        fields = [f"{f.name}={getattr(self, f.name)!r}" for f in dataclasses.fields(self)[:-1]]
        return f"Training({', '.join(fields)}, per_device_total_bytes={per_device!s})"


@dataclasses.dataclass(frozen=True)
class PlanEntry:
    """One entry of a planned result's final plan (``sp_plan_entry``).

    ``provenance`` says where the entry came from: "owned:model",
    "owned:family", "owned:native", "template:AXIS:PATTERN" (one per rule)
    or "override", joined with ", " (the result JSON's "provenance" has them
    as a list). The layout itself is in ``Result.to_dict()["plan"]``.
    """

    fqn: str
    provenance: str


@dataclasses.dataclass(frozen=True)
class Communication:
    """One communication record of a planned result (``sp_communication``).

    On port ``port`` ("in:NAME" or "out:NAME") of the module at ``fqn``,
    mesh axis ``axis`` goes from placement ``from_`` (C's ``from``) to
    ``to``, which takes ``collective`` ("all_gather", "slice", "all_reduce",
    "reduce_scatter", "all_to_all", "none" or "unsupported").
    """

    fqn: str
    port: str
    axis: str
    from_: str
    to: str
    collective: str

    def to_dict(self) -> Dict[str, Any]:
        """The record as in the result JSON ("from", not "from_")."""
        return {
            "fqn": self.fqn,
            "port": self.port,
            "axis": self.axis,
            "from": self.from_,
            "to": self.to,
            "collective": self.collective,
        }

    def __str__(self) -> str:
        return f"{self.fqn} {self.port} {self.axis}: {self.from_} -> {self.to} ({self.collective})"


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
    """The result of checking or planning a document (``sp_result``).

    Independent of its document (it stays valid when the document is
    closed). Values are copied out of the C result on first use. A checked
    (not planned) result has no memory, plan entries or communication.
    """

    _what = "result"

    def __init__(self, pointer) -> None:
        super().__init__(pointer, lib.sp_result_delete)
        # Values read from the C result, by name: each is read once.
        self._cache: Dict[str, Any] = {}

    def _cached(self, key: str, read: Callable[[Any], _T]) -> _T:
        """``read(pointer)``, the first time ``key`` is asked for."""
        with self._use() as pointer:
            if key not in self._cache:
                self._cache[key] = read(pointer)
            return self._cache[key]

    def _size(self, key: str, function) -> int:
        """A count the C function ``function(result, &count)`` gives."""

        def read(pointer) -> int:
            out = ctypes.c_size_t()
            call(function, pointer, ctypes.byref(out))
            return out.value

        return self._cached(key, read)

    def _all(self, key: str, count: Callable[[], int], read: Callable[..., _T]) -> List[_T]:
        """Every item of a list of the C result (a new list each time)."""
        return list(self._cached(key, lambda pointer: [read(pointer, i) for i in range(count())]))

    @property
    def ok(self) -> bool:
        """True when there is no diagnostic of severity error."""

        def read(pointer) -> bool:
            out = ctypes.c_int()
            call(lib.sp_result_ok, pointer, ctypes.byref(out))
            return bool(out.value)

        return self._cached("ok", read)

    def diagnostic_count(self) -> int:
        """The number of diagnostics."""
        return self._size("diagnostic_count", lib.sp_result_diagnostic_count)

    def diagnostic(self, index: int) -> Diagnostic:
        """Diagnostic ``index`` (0-based; negative counts from the end).

        An index past the end raises ShardplanError with code OUT_OF_RANGE.
        """
        return self._item(index, "diagnostic", self.diagnostic_count, _read_diagnostic)

    def _item(self, index: int, what: str, count: Callable[[], int], read: Callable[..., _T]) -> _T:
        """Item ``index`` of a list of the C result, read by ``read(pointer, i)``."""
        if isinstance(index, bool) or not isinstance(index, int):
            raise TypeError(f"index must be an int, not {type(index).__name__}")
        with self._use() as pointer:
            total = count()
            position = index + total if index < 0 else index
            if position < 0:
                raise ShardplanError(
                    ErrorCode.OUT_OF_RANGE,
                    f"{what} index {index} out of range (the result has {total})",
                )
            # C reports an index past the end (one past size_t's range included).
            return read(pointer, min(position, _SIZE_MAX))

    @property
    def diagnostics(self) -> List[Diagnostic]:
        """Every diagnostic, in evaluation order (the first is the reference's error)."""
        return self._all("diagnostics", self.diagnostic_count, _read_diagnostic)

    def group_count(self) -> int:
        """The number of groups."""
        return self._size("group_count", lib.sp_result_group_count)

    def group(self, index: int) -> DiagnosticGroup:
        """Group ``index`` (0-based; negative counts from the end).

        An index past the end raises ShardplanError with code OUT_OF_RANGE.
        """
        return self._item(index, "group", self.group_count, _read_group)

    @property
    def groups(self) -> List[DiagnosticGroup]:
        """The diagnostics by cause (same code, same pointer), in the order of
        each group's first diagnostic; every diagnostic is in exactly one."""
        return self._all("groups", self.group_count, _read_group)

    @property
    def json(self) -> str:
        """The whole result as compact JSON (schema shardplan.result.v1)."""

        def read(pointer) -> str:
            out = _capi.sp_str()
            call(lib.sp_result_json, pointer, ctypes.byref(out))
            return _capi.read_bytes(out).decode("utf-8", errors="replace")

        return self._cached("json", read)

    def to_dict(self) -> Dict[str, Any]:
        """The result JSON as Python objects."""
        return _json.loads(self.json)

    # ---- Planned results (Document.plan) ----

    @property
    def memory(self) -> Optional[Memory]:
        """Per-device memory of a planned result; None when the result was not
        planned (or the mesh has more than 2^24 devices)."""
        return self._cached("memory", _read_memory)

    @property
    def training(self) -> Optional[Training]:
        """Training memory per device (``sp_result_training``, library 0.9);
        None when there is none: the document has no ``training`` section, no
        plan was made (a plan made by ``plan``, or the document's own plan once
        every check passed), or the mesh has more than 2^24 devices."""
        return self._cached("training", _read_training)

    def plan_entry_count(self) -> int:
        """The number of plan entries (0 when the result was not planned)."""
        return self._size("plan_entry_count", lib.sp_result_plan_entry_count)

    def plan_entry(self, index: int) -> PlanEntry:
        """Plan entry ``index`` (plan order; negative counts from the end).

        An index past the end raises ShardplanError with code OUT_OF_RANGE.
        """
        return self._item(index, "plan entry", self.plan_entry_count, _read_plan_entry)

    @property
    def plan_entries(self) -> List[PlanEntry]:
        """Every entry of the final plan, in plan order ([] when not planned)."""
        return self._all("plan_entries", self.plan_entry_count, _read_plan_entry)

    def communication_count(self) -> int:
        """The number of communication records (0 when the result was not planned)."""
        return self._size("communication_count", lib.sp_result_communication_count)

    def communication_record(self, index: int) -> Communication:
        """Communication record ``index`` (negative counts from the end).

        An index past the end raises ShardplanError with code OUT_OF_RANGE.
        """
        return self._item(
            index, "communication record", self.communication_count, _read_communication
        )

    @property
    def communication(self) -> List[Communication]:
        """Every communication record: plan order, then ports, then mesh axes
        ([] when not planned)."""
        return self._all("communication", self.communication_count, _read_communication)

    def __repr__(self) -> str:
        if self.closed:
            return super().__repr__()
        return f"<shardplan.Result ok={self.ok} diagnostics={self.diagnostic_count()}>"


def _text(s: _capi.sp_str) -> str:
    return _capi.read_text(s) or ""


def _read_memory(pointer) -> Optional[Memory]:
    out = _capi.sp_memory()
    present = ctypes.c_int()
    call(lib.sp_result_memory, pointer, ctypes.byref(out), ctypes.byref(present))
    if not present.value:
        return None
    per_device = None
    if out.per_device_bytes:
        per_device = tuple(out.per_device_bytes[: out.num_devices_listed])
    return Memory(
        devices=out.devices,
        unsharded_bytes=out.unsharded_bytes,
        max_bytes=out.max_bytes,
        min_bytes=out.min_bytes,
        mean_bytes=out.mean_bytes,
        max_device=out.max_device,
        per_device_bytes=per_device,
    )


def _read_training(pointer) -> Optional[Training]:
    out = _capi.sp_training()
    present = ctypes.c_int()
    call(lib.sp_result_training, pointer, ctypes.byref(out), ctypes.byref(present))
    if not present.value:
        return None
    coordinates: Tuple[int, ...] = ()
    if out.worst_coordinates:
        coordinates = tuple(out.worst_coordinates[: out.num_axes])
    per_device = None
    if out.per_device_total_bytes:
        per_device = tuple(out.per_device_total_bytes[: out.num_devices_listed])
    return Training(
        worst_device=out.worst_device,
        worst_coordinates=coordinates,
        params=out.params,
        grads=out.grads,
        master=out.master,
        optimizer=out.optimizer,
        gathered=out.gathered,
        activations=out.activations,
        total=out.total,
        max_total_bytes=out.max_total_bytes,
        min_total_bytes=out.min_total_bytes,
        mean_total_bytes=out.mean_total_bytes,
        per_device_total_bytes=per_device,
    )


def _read_plan_entry(pointer, index: int) -> PlanEntry:
    out = _capi.sp_plan_entry()
    call(lib.sp_result_plan_entry, pointer, index, ctypes.byref(out))
    return PlanEntry(fqn=_text(out.fqn), provenance=_text(out.provenance))


def _read_communication(pointer, index: int) -> Communication:
    out = _capi.sp_communication()
    call(lib.sp_result_communication, pointer, index, ctypes.byref(out))
    return Communication(
        fqn=_text(out.fqn),
        port=_text(out.port),
        axis=_text(out.axis),
        from_=_text(out.from_),
        to=_text(out.to),
        collective=_text(out.collective),
    )


def _severity(value: int) -> Severity:
    try:
        return Severity(value)
    except ValueError:  # a severity added by a later library
        return value


# Added to the C ABI in library 0.7: an older library of the same ABI (which
# knows no help or fix) gives diagnostics without them.
_HELP_AND_FIX = ("sp_result_diagnostic_help", "sp_result_diagnostic_fix_count", "sp_result_diagnostic_fix")


def _read_diagnostic(pointer, index: int) -> Diagnostic:
    out = _capi.sp_diagnostic()
    call(lib.sp_result_diagnostic, pointer, index, ctypes.byref(out))
    help_text: Optional[str] = None
    fix: Tuple[FixOperation, ...] = ()
    if not any(name in _capi.MISSING for name in _HELP_AND_FIX):
        help_str = _capi.sp_str()
        call(lib.sp_result_diagnostic_help, pointer, index, ctypes.byref(help_str))
        help_text = _capi.read_text(help_str)
        fix = _read_fix(pointer, index)
    return Diagnostic(
        code=_capi.read_text(out.code) or "",
        severity=_severity(out.severity),
        message=_capi.read_text(out.message) or "",
        fqn=_capi.read_text(out.fqn),
        parameter=_capi.read_text(out.parameter),
        pointer=_capi.read_text(out.pointer),
        help=help_text,
        fix=fix,
    )


def _read_fix(pointer, index: int) -> Tuple[FixOperation, ...]:
    count = ctypes.c_size_t()
    call(lib.sp_result_diagnostic_fix_count, pointer, index, ctypes.byref(count))
    operations = []
    for k in range(count.value):
        op = _capi.sp_fix_operation()
        call(lib.sp_result_diagnostic_fix, pointer, index, k, ctypes.byref(op))
        operations.append(
            FixOperation(
                op=_text(op.op),
                path=_text(op.path),
                from_=_capi.read_text(op.from_),
                value=_capi.read_text(op.value),
            )
        )
    return tuple(operations)


def _read_group(pointer, index: int) -> DiagnosticGroup:
    out = _capi.sp_diagnostic_group()
    call(lib.sp_result_group, pointer, index, ctypes.byref(out))
    listed: Tuple[int, ...] = ()
    if out.listed:
        listed = tuple(out.listed[: out.num_listed])
    return DiagnosticGroup(
        code=_text(out.code),
        severity=_severity(out.severity),
        pointer=_capi.read_text(out.pointer),
        count=out.count,
        listed=listed,
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
        return self._run(lib.sp_document_check, threads)

    def plan(self, *, threads: int = 0) -> Result:
        """Plans the document (``shardplan plan``): makes the final plan from
        its owners, templates and overrides, checks it, and computes the
        memory per device and the communication the plan implies
        (``Result.memory``, ``plan_entries``, ``communication``). A document
        that gives a ``plan`` of its own is checked as by :meth:`check`.
        ``threads``: worker threads, 0 for all cores."""
        return self._run(lib.sp_document_plan, threads)

    def _run(self, fn, threads: int) -> Result:
        options = _capi.sp_check_options(_unsigned(threads, "threads", _UINT32_MAX))
        out = _capi.sp_result_p()
        with self._use() as pointer:
            call(fn, pointer, ctypes.byref(options), ctypes.byref(out))
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


def plan(
    text: Text,
    *,
    threads: int = 0,
    max_paths: Optional[int] = None,
    max_fqn_bytes: Optional[int] = None,
    max_json_depth: Optional[int] = None,
) -> Result:
    """Parses and plans a document in one call: ``parse(text).plan()``."""
    with parse(
        text, max_paths=max_paths, max_fqn_bytes=max_fqn_bytes, max_json_depth=max_json_depth
    ) as document:
        return document.plan(threads=threads)
