"""Building a document programmatically: Layout, ParallelSpec and Builder."""

from __future__ import annotations

import ctypes
import dataclasses
import enum
import json as _json
import operator
from typing import Any, Iterable, Mapping, Optional, Sequence, Tuple, Union

from . import _capi
from ._capi import lib
from ._document import Document, Text, parse_options
from ._errors import call
from ._handle import ExclusiveHandle

_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1


class Port(enum.IntEnum):
    """``sp_port``: the maps of a layout."""

    PARAMS = 0
    IN_SRC = 1
    IN_DST = 2
    OUT_SRC = 3
    OUT_DST = 4

    def __str__(self) -> str:
        return self.name.lower()


PortLike = Union[Port, int, str]


def _port(value: PortLike) -> Port:
    """A Port from a Port, its int value, or its JSON key ("params", "in_src", ...)."""
    if isinstance(value, str):
        try:
            return Port[value.upper()]
        except KeyError:
            names = ", ".join(str(p) for p in Port)
            raise ValueError(f"unknown port {value!r} (one of {names})") from None
    return Port(value)


def _strings(values: Iterable[Text], what: str) -> list:
    if isinstance(values, (str, bytes)):
        raise TypeError(f"{what} must be a sequence of strings, not a single string")
    return [_capi.encode(v, what) for v in values]


def _int64(value: Any, what: str) -> int:
    value = operator.index(value)
    if not _INT64_MIN <= value <= _INT64_MAX:
        raise ValueError(f"{what} {value} does not fit a 64-bit signed integer")
    return value


@dataclasses.dataclass(frozen=True)
class ParallelSpec:
    """``sp_parallel_spec``: a binding kind ("tp", "mesh", "none", ...) and its axes."""

    binding_kind: str
    axes: Tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if isinstance(self.axes, (str, bytes)):
            raise TypeError("axes must be a sequence of axis names, not a single string")
        object.__setattr__(self, "axes", tuple(self.axes))

    @classmethod
    def coerce(cls, value) -> Optional["ParallelSpec"]:
        """A ParallelSpec from itself, None, ``(kind, axes)`` or a JSON-like mapping."""
        if value is None or isinstance(value, cls):
            return value
        if isinstance(value, Mapping):
            return cls(value["binding_kind"], tuple(value.get("axes") or ()))
        kind, axes = value
        return cls(kind, tuple(axes))


class _CParallel:
    """A ParallelSpec as an ``sp_parallel_spec`` plus the buffers it points into."""

    def __init__(self, value) -> None:
        spec = ParallelSpec.coerce(value)
        self.struct = None
        if spec is None:
            return
        self._kind = _capi.encode(spec.binding_kind, "binding_kind")
        self._axes = _strings(spec.axes, "axes")
        self._array = _capi.make_str_array(self._axes)
        self.struct = _capi.sp_parallel_spec(
            _capi.make_str(self._kind), self._array, len(self._axes)
        )

    def pointer(self):
        return None if self.struct is None else ctypes.byref(self.struct)


_LAYOUT_PORTS = ("params", "in_src", "in_dst", "out_src", "out_dst")
_LEGACY_FIELDS = ("local_compute_fn", "inner_wrapper", "inner_target", "region_dispatch")


class Layout(ExclusiveHandle):
    """A layout (module sharding spec) under construction (``sp_layout``).

    Ports stay absent until declared. Builder methods copy a layout, so one
    layout may be passed to several of them and changed in between. Mutators
    return the layout, so calls can be chained.
    """

    _what = "layout"

    def __init__(self) -> None:
        out = _capi.sp_layout_p()
        call(lib.sp_layout_create, ctypes.byref(out))
        super().__init__(out, lib.sp_layout_delete)

    @classmethod
    def from_dict(cls, spec: Mapping[str, Any]) -> "Layout":
        """A layout from its JSON form, e.g. ``{"params": {"weight": {"tp": "S(0)"}},
        "in_src": {"x": {}}, "in_dst": {"x": {}}}``. A port (or out_names) that
        is None is absent, and so is a legacy injection field that is None."""
        layout = cls()
        try:
            for key, value in spec.items():
                if key in _LAYOUT_PORTS:
                    if value is None:
                        continue
                    port = _port(key)
                    layout.declare(port)
                    for name, placements in value.items():
                        layout.add_entry(port, name)
                        for axis, placement in placements.items():
                            layout.set_placement(port, name, axis, placement)
                elif key == "out_names":
                    if value is not None:
                        layout.set_out_names(value)
                elif key in _LEGACY_FIELDS:
                    if value is not None:
                        layout.set_legacy_field(key)
                else:
                    raise ValueError(f"a layout has no key {key!r}")
        except BaseException:
            layout.close()
            raise
        return layout

    def declare(self, port: PortLike) -> "Layout":
        """Declares ``port`` present (``{}`` until entries are added)."""
        with self._use() as pointer:
            call(lib.sp_layout_declare, pointer, _port(port))
        return self

    def add_entry(self, port: PortLike, name: Text) -> "Layout":
        """Adds entry ``name`` with no placement (``"x": {}``), declaring the port."""
        name_b = _capi.encode(name, "name")
        with self._use() as pointer:
            call(lib.sp_layout_add_entry, pointer, _port(port), _capi.make_str(name_b))
        return self

    def set_placement(self, port: PortLike, name: Text, axis: Text, placement: Text) -> "Layout":
        """Places entry ``name`` of ``port`` on mesh axis ``axis``.

        ``placement`` is "R", "S(dim)", "P" or "P(op)"; a malformed one, or an
        axis placed twice, raises ShardplanError INVALID_ARGUMENT.
        """
        name_b = _capi.encode(name, "name")
        axis_b = _capi.encode(axis, "axis")
        placement_b = _capi.encode(placement, "placement")
        with self._use() as pointer:
            call(
                lib.sp_layout_set_placement,
                pointer,
                _port(port),
                _capi.make_str(name_b),
                _capi.make_str(axis_b),
                _capi.make_str(placement_b),
            )
        return self

    def set_out_names(self, names: Sequence[Text]) -> "Layout":
        """Sets out_names, replacing any earlier list."""
        encoded = _strings(names, "names")
        array = _capi.make_str_array(encoded)
        with self._use() as pointer:
            call(lib.sp_layout_set_out_names, pointer, array, len(encoded))
        return self

    def set_legacy_field(self, field: Text) -> "Layout":
        """Sets legacy compute-injection field ``field`` ("local_compute_fn",
        "inner_wrapper", "inner_target" or "region_dispatch"), as a non-null
        value in the JSON would: the layout is then legacy-injection wherever
        it owns a module. Since library 0.5."""
        field_b = _capi.encode(field, "field")
        with self._use() as pointer:
            call(lib.sp_layout_set_legacy_field, pointer, _capi.make_str(field_b))
        return self


LayoutLike = Union[Layout, Mapping[str, Any]]


class _LayoutArg:
    """Context manager: the C pointer of a Layout, or of a temporary one made
    from a mapping, held (locked) for the duration of a builder call."""

    def __init__(self, value: Optional[LayoutLike], required: bool = True) -> None:
        if value is None and not required:
            self._layout, self._temporary = None, False
        elif isinstance(value, Layout):
            self._layout, self._temporary = value, False
        elif isinstance(value, Mapping):
            self._layout, self._temporary = Layout.from_dict(value), True
        else:
            raise TypeError(f"expected a Layout or a mapping, not {type(value).__name__}")
        self._use = None

    def __enter__(self):
        if self._layout is None:
            return None
        self._use = self._layout._use()
        return self._use.__enter__()

    def __exit__(self, *exc) -> None:
        if self._use is not None:
            self._use.__exit__(*exc)
        if self._temporary:
            self._layout.close()


class Builder(ExclusiveHandle):
    """Builds a shardplan.v1 document programmatically (``sp_builder``).

    Checking the built document gives the result of the equivalent JSON
    document (:meth:`to_json`); diagnostics' pointers refer to that JSON.
    Repeated unique names raise ShardplanError INVALID_ARGUMENT; references
    (child module ids, parameter ids, the root) are resolved by :meth:`build`,
    where a dangling one becomes the invalid-document diagnostic. Mutators
    return the builder, so calls can be chained.
    """

    _what = "builder"

    def __init__(self) -> None:
        out = _capi.sp_builder_p()
        call(lib.sp_builder_create, ctypes.byref(out))
        super().__init__(out, lib.sp_builder_delete)

    def _call(self, fn, *args) -> "Builder":
        with self._use() as pointer:
            call(fn, pointer, *args)
        return self

    def add_axis(self, name: Text, size: int) -> "Builder":
        """Appends mesh axis ``name`` of ``size`` devices (>= 1)."""
        name_b = _capi.encode(name, "name")
        return self._call(lib.sp_builder_add_axis, _capi.make_str(name_b), _int64(size, "size"))

    def add_parameter(
        self, id: Text, shape: Optional[Sequence[int]] = None, dtype: Optional[Text] = None
    ) -> "Builder":
        """Adds parameter identity ``id``; shape None is unknown, ``[]`` a scalar;
        dtype None is the default (float32)."""
        id_b = _capi.encode(id, "id")
        dtype_b = _capi.encode(dtype or "", "dtype")
        if shape is None:
            dims, rank = None, 0
        else:
            values = [_int64(d, "dimension") for d in shape]
            dims = (ctypes.c_int64 * max(1, len(values)))(*values)  # never NULL
            rank = len(values)
        return self._call(
            lib.sp_builder_add_parameter, _capi.make_str(id_b), dims, rank, _capi.make_str(dtype_b)
        )

    def set_parameter_blocks(self, id: Text, blocks: Sequence[int]) -> "Builder":
        """Sets the blocks of parameter ``id`` (added before): one positive
        integer per dim of its known shape, each dividing its dim. Since
        library 0.5."""
        id_b = _capi.encode(id, "id")
        values = [_int64(b, "block") for b in blocks]
        array = (ctypes.c_int64 * max(1, len(values)))(*values)
        return self._call(lib.sp_builder_set_parameter_blocks, _capi.make_str(id_b), array, len(values))

    def add_module(self, id: Text, type: Optional[Text] = None) -> "Builder":
        """Adds module identity ``id`` of class name ``type`` (optional)."""
        id_b = _capi.encode(id, "id")
        type_b = _capi.encode(type or "", "type")
        return self._call(lib.sp_builder_add_module, _capi.make_str(id_b), _capi.make_str(type_b))

    def add_forward_arg(self, module: Text, name: Text) -> "Builder":
        """Appends ``name`` ("x", "*args", "**kwargs") to the module's forward signature."""
        module_b = _capi.encode(module, "module")
        name_b = _capi.encode(name, "name")
        return self._call(
            lib.sp_builder_add_forward_arg, _capi.make_str(module_b), _capi.make_str(name_b)
        )

    def add_child(self, module: Text, name: Text, child: Text) -> "Builder":
        """Registers module ``child`` as child ``name`` of ``module``."""
        args = [_capi.encode(v, "name") for v in (module, name, child)]
        return self._call(lib.sp_builder_add_child, *map(_capi.make_str, args))

    def add_module_param(self, module: Text, name: Text, parameter: Text) -> "Builder":
        """Registers parameter identity ``parameter`` as parameter ``name`` of ``module``."""
        args = [_capi.encode(v, "name") for v in (module, name, parameter)]
        return self._call(lib.sp_builder_add_module_param, *map(_capi.make_str, args))

    def set_module_parallel(self, module: Text, parallel) -> "Builder":
        """Sets the module's own parallel spec (a ParallelSpec, ``(kind, axes)``
        or ``{"binding_kind", "axes"}``); None clears it."""
        module_b = _capi.encode(module, "module")
        spec = _CParallel(parallel)
        return self._call(
            lib.sp_builder_set_module_parallel, _capi.make_str(module_b), spec.pointer()
        )

    def set_family(
        self, module: Text, parallel: bool = False, sharding: Optional[LayoutLike] = None
    ) -> "Builder":
        """Makes the module a family member, mesh-parallel or not, with its
        sharding provider's layout (None: it provides none)."""
        module_b = _capi.encode(module, "module")
        with _LayoutArg(sharding, required=False) as layout, self._use() as pointer:
            call(
                lib.sp_builder_set_family,
                pointer,
                _capi.make_str(module_b),
                1 if parallel else 0,
                layout,
            )
        return self

    def set_family_cached(self, module: Text, sharding: LayoutLike, parallel=None) -> "Builder":
        """Sets the layout already applied to a family member (and optionally its spec)."""
        module_b = _capi.encode(module, "module")
        spec = _CParallel(parallel)
        with _LayoutArg(sharding) as layout, self._use() as pointer:
            call(
                lib.sp_builder_set_family_cached,
                pointer,
                _capi.make_str(module_b),
                layout,
                spec.pointer(),
            )
        return self

    def set_root(self, module: Text) -> "Builder":
        """Sets the root module id."""
        module_b = _capi.encode(module, "module")
        return self._call(lib.sp_builder_set_root, _capi.make_str(module_b))

    def add_provider(self, fqn: Text, layout: LayoutLike) -> "Builder":
        """Adds a model-adapter sharding provider for the module at ``fqn``."""
        fqn_b = _capi.encode(fqn, "fqn")
        with _LayoutArg(layout) as layout_p, self._use() as pointer:
            call(lib.sp_builder_add_provider, pointer, _capi.make_str(fqn_b), layout_p)
        return self

    def add_native(
        self, globs: Sequence[Text], sharding: LayoutLike, parallel=None
    ) -> "Builder":
        """Appends a native request: FQN glob patterns, their layout and an
        optional parallel spec."""
        encoded = _strings(globs, "globs")
        array = _capi.make_str_array(encoded)
        spec = _CParallel(parallel)
        with _LayoutArg(sharding) as layout, self._use() as pointer:
            call(lib.sp_builder_add_native, pointer, array, len(encoded), layout, spec.pointer())
        return self

    def declare_plan(self) -> "Builder":
        """Gives the document a final plan, empty until entries are added
        (an empty plan is checked too: it covers no parameter)."""
        return self._call(lib.sp_builder_declare_plan)

    def add_plan_entry(self, fqn: Text, layout: LayoutLike) -> "Builder":
        """Adds the final-plan layout of the module at ``fqn`` (declaring the plan)."""
        fqn_b = _capi.encode(fqn, "fqn")
        with _LayoutArg(layout) as layout_p, self._use() as pointer:
            call(lib.sp_builder_add_plan_entry, pointer, _capi.make_str(fqn_b), layout_p)
        return self

    def add_template(self, axis: Text, prefix: Text = "") -> int:
        """Appends a generic template for mesh axis ``axis`` (added before)
        under FQN ``prefix``; returns its index for add_template_rule. Since
        library 0.5."""
        axis_b = _capi.encode(axis, "axis")
        prefix_b = _capi.encode(prefix, "prefix")
        out = ctypes.c_size_t()
        self._call(
            lib.sp_builder_add_template, _capi.make_str(axis_b), _capi.make_str(prefix_b), ctypes.byref(out)
        )
        return out.value

    def add_template_rule(self, template: int, pattern: Text, style: Text) -> "Builder":
        """Appends rule ``pattern`` -> ``style`` ("colwise", "rowwise", ...) to
        template ``template``. Since library 0.5."""
        pattern_b = _capi.encode(pattern, "pattern")
        style_b = _capi.encode(style, "style")
        index = operator.index(template)
        if index < 0:
            raise ValueError(f"template index {index} is negative")
        return self._call(
            lib.sp_builder_add_template_rule, index, _capi.make_str(pattern_b), _capi.make_str(style_b)
        )

    def add_override(self, fqn: Text, layout: LayoutLike) -> "Builder":
        """Adds the override of the module at ``fqn`` (a final-plan layout, with
        params). Since library 0.5."""
        fqn_b = _capi.encode(fqn, "fqn")
        with _LayoutArg(layout) as layout_p, self._use() as pointer:
            call(lib.sp_builder_add_override, pointer, _capi.make_str(fqn_b), layout_p)
        return self

    def set_training(self, section: Union[Mapping[str, Any], Text]) -> "Builder":
        """Gives the document its ``training`` section (training-v1,
        docs/format.md "Training"): a dict (sent as ``json.dumps(section)``)
        or the section's JSON text, an object such as
        ``{"zero": 3, "device_memory": "80GiB"}``. A section that is not an
        object, an invalid value in it, or a second section raises
        ShardplanError INVALID_ARGUMENT (nothing changes); what depends on the
        mesh (``shard_axes``, ``activations.tensor_axis``) is checked by
        :meth:`build`. Since library 0.9."""
        if isinstance(section, Mapping):
            data = _json.dumps(section).encode("utf-8")
        elif isinstance(section, (str, bytes, bytearray, memoryview)):
            data = _capi.encode(section, "section")
        else:
            raise TypeError(
                "section must be a dict or JSON text (str or bytes), "
                f"not {type(section).__name__}"
            )
        return self._call(lib.sp_builder_set_training, _capi.make_str(data))

    def to_json(self) -> str:
        """The document built so far as shardplan.v1 JSON (pretty-printed)."""
        out = _capi.sp_str()
        with self._use() as pointer:
            call(lib.sp_builder_to_json, pointer, ctypes.byref(out))
            return _capi.read_bytes(out).decode("utf-8", errors="replace")

    def build(
        self,
        *,
        max_paths: Optional[int] = None,
        max_fqn_bytes: Optional[int] = None,
        max_json_depth: Optional[int] = None,
    ) -> Document:
        """Builds the document made so far, directly: the document parse gives
        for to_json's text. The builder stays usable."""
        options = parse_options(max_paths, max_fqn_bytes, max_json_depth)
        out = _capi.sp_document_p()
        with self._use() as pointer:
            call(lib.sp_builder_build, pointer, ctypes.byref(options), ctypes.byref(out))
        return Document(out)
