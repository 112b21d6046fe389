"""
    ShardPlan

Julia binding of the shardplan C ABI, version 1 (`capi/include/shardplan/shardplan.h`).

Parse a `shardplan.v1` document (or build one with [`Builder`](@ref)), check it or plan it,
and read the diagnostics (with their help and fix, and grouped by cause), the plan, the memory
per device, the communication and the `shardplan.result.v1` JSON:

```julia
using ShardPlan
doc = parse_document(read("model.json", String))
res = check(doc)
isok(res) || foreach(println, diagnostics(res))
[(d.help, d.fix) for d in diagnostics(res)], groups(res)   # fix-its and causes (library 0.7)
planned = plan(doc)   # templates and overrides -> the final plan, memory, communication
memory(planned), plan_entries(planned), communications(planned)
training(planned)     # with a `training` section: training memory per device (library 0.9)
```

The shared library is `ENV["SHARDPLAN_LIBRARY"]` (the full path of `libshardplan.so`) when set,
else the checkout's `<repository>/bazel-bin/capi/libshardplan.so` relative to this file when it
exists, else the installed library by its soname, [`SONAME`](@ref) (`libshardplan.so.1`, found by
the dynamic linker as `tools/install.sh` or the Debian package put it). It is located in
`__init__`, which refuses a library whose `sp_abi_version()` is not [`ABI_VERSION`](@ref).

Needs Julia 1.6 or later: every `ccall` names the library as `libshardplan[]`, a library
expression evaluated at run time (the first time each call site runs), which Julia supports
since 1.6. Only the Julia standard library is used.
"""
module ShardPlan

export ABI_VERSION, ShardPlanError, AbiMismatchError, ErrorCode, Severity, Port,
       ERROR_NULL_ARGUMENT, ERROR_INVALID_ARGUMENT, ERROR_OUT_OF_RANGE, ERROR_OUT_OF_MEMORY,
       ERROR_INTERNAL, SEVERITY_ERROR, SEVERITY_WARNING, SEVERITY_INFO,
       PORT_PARAMS, PORT_IN_SRC, PORT_IN_DST, PORT_OUT_SRC, PORT_OUT_DST,
       Document, Result, Diagnostic, FixOperation, DiagnosticGroup, Layout, Builder, ParallelSpec,
       abi_version, library_version, check_abi,
       parse_document, is_valid, check, isok, diagnostic_count, diagnostic, diagnostics,
       group_count, group, groups, result_json,
       PlanMemory, TrainingMemory, PlanEntry, Communication, plan, memory, training,
       plan_entry_count, plan_entry,
       plan_entries, communication_count, communication, communications,
       declare!, add_entry!, set_placement!, set_out_names!, set_legacy_field!,
       add_axis!, add_parameter!, set_parameter_blocks!, add_module!, add_forward_arg!, add_child!,
       add_module_param!, set_module_parallel!, set_family!, set_family_cached!, set_root!,
       add_provider!, add_native!, declare_plan!, add_plan_entry!, add_template!,
       add_template_rule!, add_override!, set_pipeline!, add_pipeline_module!, set_training!,
       to_json,
       build_document

# ---- Library location and ABI version ------------------------------------------------------

"""The C ABI version this binding is written against (`SP_ABI_VERSION` in the header)."""
const ABI_VERSION = UInt32(1)

"""
The soname of the shared library of [`ABI_VERSION`](@ref): `libshardplan.so.N` for ABI version N
(docs/capi.md, "The soname"). An installed library is loaded by this name, through the dynamic
linker's search: `LD_LIBRARY_PATH`, then the directories `ldconfig` knows (`/usr/local/lib` and
`/usr/lib` on Debian), so a library of another ABI version is never picked up.
"""
const SONAME = "libshardplan.so.1"

"""
The checkout's Bazel build (`bazel build //capi:libshardplan.so`), tried when
`ENV["SHARDPLAN_LIBRARY"]` is not set and before the installed [`SONAME`](@ref).
"""
const CHECKOUT_LIBRARY =
    normpath(joinpath(@__DIR__, "..", "..", "..", "bazel-bin", "capi", "libshardplan.so"))

"""`Base.Libc.Libdl`, which the `Libdl` standard library re-exports (no dependency needed)."""
const Libdl = Base.Libc.Libdl

"""
The path of the loaded `libshardplan.so`, set by `__init__`. Every `ccall` below names its
library as `libshardplan[]` (evaluated at run time; Julia 1.6+).
"""
const libshardplan = Ref{String}(CHECKOUT_LIBRARY)

"""
    AbiMismatchError(expected, found, library)

The library at `library` implements C ABI version `found`, not the `expected` one.
"""
struct AbiMismatchError <: Exception
    expected::UInt32
    found::UInt32
    library::String
end

function Base.showerror(io::IO, e::AbiMismatchError)
    print(io, "ShardPlan.jl needs the shardplan C ABI version ", e.expected,
          ", but the library at ", e.library, " implements ABI version ", e.found,
          "; use a matching libshardplan.so (bazel build //capi:libshardplan.so, or install ",
          SONAME, " with tools/install.sh) or point ENV[\"SHARDPLAN_LIBRARY\"] at one")
end

"""
    check_abi(found; expected = ABI_VERSION, library = libshardplan[])

Return `nothing` when a library reporting ABI version `found` is usable by this binding, else
throw an [`AbiMismatchError`](@ref) naming both versions. `__init__` calls it with
`sp_abi_version()`; tests call it with a fake version.
"""
function check_abi(found::Integer; expected::Integer = ABI_VERSION,
                   library::AbstractString = libshardplan[])
    found == expected && return nothing
    throw(AbiMismatchError(UInt32(expected), UInt32(found), String(library)))
end

"""`sp_abi_version()`: the ABI version of the loaded library."""
abi_version() = ccall((:sp_abi_version, libshardplan[]), UInt32, ())

"""`sp_version_string()`: the library release, e.g. `"0.9.0"`."""
library_version() = unsafe_string(ccall((:sp_version_string, libshardplan[]), Cstring, ()))

"""
    find_library_path()

The path of the shared library to load, the first of: `ENV["SHARDPLAN_LIBRARY"]` (an override;
an error if no file is there), [`CHECKOUT_LIBRARY`](@ref) if it exists, and the installed
[`SONAME`](@ref) as the dynamic linker finds it (`Libdl.dlopen`, its path by `Libdl.dlpath`).
"""
function find_library_path()
    path = get(ENV, "SHARDPLAN_LIBRARY", "")
    if !isempty(path)
        path = abspath(path)
        isfile(path) ||
            error("ShardPlan: ENV[\"SHARDPLAN_LIBRARY\"] is ", path, ", where there is no file")
        return path
    end
    isfile(CHECKOUT_LIBRARY) && return CHECKOUT_LIBRARY
    handle = Libdl.dlopen_e(SONAME)
    handle == C_NULL || return Libdl.dlpath(handle)
    error("ShardPlan: no shardplan library: ENV[\"SHARDPLAN_LIBRARY\"] is not set, there is no ",
          "checkout build at ", CHECKOUT_LIBRARY, " (`bazel build //capi:libshardplan.so`), and ",
          "the dynamic linker does not find ", SONAME, " (install it with tools/install.sh; for ",
          "a prefix other than /usr/local or /usr set LD_LIBRARY_PATH=PREFIX/lib)")
end

function __init__()
    path = find_library_path()
    libshardplan[] = path
    check_abi(abi_version(); library = path)
    return nothing
end

# ---- C structs and enums (field by field as in shardplan.h; see test/check_ccalls.py) -------

"""`sp_str`: `size` bytes at `data`; in outputs `data == C_NULL` means absent."""
struct SpStr
    data::Ptr{UInt8}
    size::Csize_t
end

"""`sp_error_code`."""
@enum ErrorCode::Cint begin
    OK = 0
    ERROR_NULL_ARGUMENT = 1
    ERROR_INVALID_ARGUMENT = 2
    ERROR_OUT_OF_RANGE = 3
    ERROR_OUT_OF_MEMORY = 4
    ERROR_INTERNAL = 5
end

"""`sp_severity`."""
@enum Severity::Cint begin
    SEVERITY_ERROR = 0
    SEVERITY_WARNING = 1
    SEVERITY_INFO = 2
end

"""`sp_port`: the five maps of a layout."""
@enum Port::Cint begin
    PORT_PARAMS = 0
    PORT_IN_SRC = 1
    PORT_IN_DST = 2
    PORT_OUT_SRC = 3
    PORT_OUT_DST = 4
end

"""`sp_parse_options` (0: the library's default limit)."""
struct SpParseOptions
    max_paths::UInt64
    max_fqn_bytes::UInt64
    max_json_depth::UInt32
end

"""`sp_check_options` (threads 0: all cores)."""
struct SpCheckOptions
    threads::UInt32
end

"""`sp_diagnostic`: its strings are owned by the result it was read from."""
struct SpDiagnostic
    code::SpStr
    severity::Cint
    message::SpStr
    fqn::SpStr
    parameter::SpStr
    pointer::SpStr
end

"""`sp_fix_operation` (library 0.7): one RFC 6902 operation; `from` and `value` (JSON text) have
`data == C_NULL` when absent. Its strings are owned by the result it was read from."""
struct SpFixOperation
    op::SpStr
    path::SpStr
    from::SpStr
    value::SpStr
end

"""
`sp_diagnostic_group` (library 0.7): `num_listed` 0-based diagnostic indexes at `listed` (owned
by the result), after a padded `Cint` severity, as in C.
"""
struct SpDiagnosticGroup
    code::SpStr
    severity::Cint
    pointer::SpStr
    count::Csize_t
    listed::Ptr{Csize_t}
    num_listed::Csize_t
end

"""`sp_parallel_spec`: `num_axes` strings at `axes`."""
struct SpParallelSpec
    binding_kind::SpStr
    axes::Ptr{SpStr}
    num_axes::Csize_t
end

"""
`sp_memory`: six scalar fields (the double `mean_bytes` among the `uint64_t`s, all 8 bytes), then
`num_devices_listed` values at `per_device_bytes` (owned by the result; C_NULL beyond 65,536
devices).
"""
struct SpMemory
    devices::UInt64
    unsharded_bytes::UInt64
    max_bytes::UInt64
    min_bytes::UInt64
    mean_bytes::Cdouble
    max_device::UInt64
    per_device_bytes::Ptr{UInt64}
    num_devices_listed::Csize_t
end

"""
`sp_training` (library 0.9): the worst device and `num_axes` coordinates at
`worst_coordinates`, its seven `uint64_t` categories, the largest and smallest totals, the double
`mean_total_bytes`, then `num_devices_listed` totals at `per_device_total_bytes` (C_NULL beyond
65,536 devices). Every field is 8 bytes on LP64 (`mean_total_bytes` at 96, 120 bytes in all).
Both arrays are owned by the result.
"""
struct SpTraining
    worst_device::UInt64
    worst_coordinates::Ptr{UInt64}
    num_axes::Csize_t
    params::UInt64
    grads::UInt64
    master::UInt64
    optimizer::UInt64
    gathered::UInt64
    activations::UInt64
    total::UInt64
    max_total_bytes::UInt64
    min_total_bytes::UInt64
    mean_total_bytes::Cdouble
    per_device_total_bytes::Ptr{UInt64}
    num_devices_listed::Csize_t
end

"""`sp_plan_entry`: its strings are owned by the result it was read from."""
struct SpPlanEntry
    fqn::SpStr
    provenance::SpStr
end

"""
`sp_owner` (library 0.6): mirrored for the ccall checker; the binding does not read owners yet
(see `NOT_WRAPPED` in test/check_ccalls.py).
"""
struct SpOwner
    fqn::SpStr
    kind::SpStr
    native_request::Csize_t
    native_pattern::SpStr
    layout::SpStr
    pointer::SpStr
end

"""`sp_owned_parameter` (library 0.6): mirrored, not read yet, as `SpOwner`."""
struct SpOwnedParameter
    name::SpStr
    canonical::SpStr
    owner::Csize_t
    placements::SpStr
end

"""`sp_communication`: its strings are owned by the result it was read from."""
struct SpCommunication
    fqn::SpStr
    port::SpStr
    axis::SpStr
    from::SpStr
    to::SpStr
    collective::SpStr
end

# An input sp_str over the bytes of `s` (a String or a Vector{UInt8}). The caller keeps `s`
# alive (GC.@preserve) for as long as the C side reads it, i.e. during the ccall.
_spstr(s::Union{String,Vector{UInt8}}) = SpStr(pointer(s), Csize_t(sizeof(s)))

# A copy of an output sp_str; `nothing` when absent (data NULL).
_string(s::SpStr) = s.data == C_NULL ? nothing : unsafe_string(s.data, s.size)

# ---- Errors -----------------------------------------------------------------------------------

"""
    ShardPlanError(code::ErrorCode, message::String)

An `sp_error` returned by the library: the API was misused (e.g. `ERROR_INVALID_ARGUMENT` for a
malformed placement) or memory ran out. Findings about a document are diagnostics, not errors.
"""
struct ShardPlanError <: Exception
    code::ErrorCode
    message::String
end

Base.showerror(io::IO, e::ShardPlanError) = print(io, "ShardPlanError(", e.code, "): ", e.message)

function _error_code(raw::Cint)
    for c in instances(ErrorCode)
        Integer(c) == raw && return c
    end
    return ERROR_INTERNAL  # a code from a newer library: report it as internal
end

# Turns a returned `sp_error *` into a ShardPlanError (freeing the sp_error); NULL is success.
function _check_error(err::Ptr{Cvoid})
    err == C_NULL && return nothing
    raw = ccall((:sp_error_code_of, libshardplan[]), Cint, (Ptr{Cvoid},), err)
    msg = unsafe_string(ccall((:sp_error_message, libshardplan[]), Cstring, (Ptr{Cvoid},), err))
    ccall((:sp_error_delete, libshardplan[]), Cvoid, (Ptr{Cvoid},), err)
    throw(ShardPlanError(_error_code(raw), msg))
end

function _live(ptr::Ptr{Cvoid}, what::String)
    ptr == C_NULL && throw(InvalidStateException("this ShardPlan.$what has been closed", :closed))
    return ptr
end

# ---- Handles ----------------------------------------------------------------------------------

"""
A parsed (or built) `shardplan.v1` document. Freed by its finalizer or by `close`; results
checked from it stay valid after it is closed.
"""
mutable struct Document
    ptr::Ptr{Cvoid}
    Document(ptr::Ptr{Cvoid}) = finalizer(close, new(_live(ptr, "Document")))
end

"""The result of [`check`](@ref): `isok`, `diagnostics`, `result_json`. Freed by its finalizer or
by `close`."""
mutable struct Result
    ptr::Ptr{Cvoid}
    Result(ptr::Ptr{Cvoid}) = finalizer(close, new(_live(ptr, "Result")))
end

"""
    Layout()

A module sharding spec under construction (`params`, `in_src`, `in_dst`, `out_src`, `out_dst`,
`out_names`). The builder copies a layout when it is passed in, so one may be reused.
"""
mutable struct Layout
    ptr::Ptr{Cvoid}
    function Layout()
        out = Ref{Ptr{Cvoid}}(C_NULL)
        _check_error(ccall((:sp_layout_create, libshardplan[]), Ptr{Cvoid},
                           (Ptr{Ptr{Cvoid}},), out))
        return finalizer(close, new(out[]))
    end
end

"""
    Builder()

Builds a `shardplan.v1` document programmatically; [`build_document`](@ref) parses it as the
equivalent JSON ([`to_json`](@ref)) would be.
"""
mutable struct Builder
    ptr::Ptr{Cvoid}
    function Builder()
        out = Ref{Ptr{Cvoid}}(C_NULL)
        _check_error(ccall((:sp_builder_create, libshardplan[]), Ptr{Cvoid},
                           (Ptr{Ptr{Cvoid}},), out))
        return finalizer(close, new(out[]))
    end
end

_ptr(x::Document) = _live(x.ptr, "Document")
_ptr(x::Result) = _live(x.ptr, "Result")
_ptr(x::Layout) = _live(x.ptr, "Layout")
_ptr(x::Builder) = _live(x.ptr, "Builder")

"""`close(x)` frees the handle now (the finalizer then does nothing); closing twice is fine."""
function Base.close(x::Document)
    if x.ptr != C_NULL
        ccall((:sp_document_delete, libshardplan[]), Cvoid, (Ptr{Cvoid},), x.ptr)
        x.ptr = C_NULL
    end
    return nothing
end

function Base.close(x::Result)
    if x.ptr != C_NULL
        ccall((:sp_result_delete, libshardplan[]), Cvoid, (Ptr{Cvoid},), x.ptr)
        x.ptr = C_NULL
    end
    return nothing
end

function Base.close(x::Layout)
    if x.ptr != C_NULL
        ccall((:sp_layout_delete, libshardplan[]), Cvoid, (Ptr{Cvoid},), x.ptr)
        x.ptr = C_NULL
    end
    return nothing
end

function Base.close(x::Builder)
    if x.ptr != C_NULL
        ccall((:sp_builder_delete, libshardplan[]), Cvoid, (Ptr{Cvoid},), x.ptr)
        x.ptr = C_NULL
    end
    return nothing
end

Base.isopen(x::Union{Document,Result,Layout,Builder}) = x.ptr != C_NULL

# ---- Parsing and checking ---------------------------------------------------------------------

_bytes(text::AbstractString) = String(text)
_bytes(text::AbstractVector{UInt8}) = Vector{UInt8}(text)

_parse_options(max_paths::Integer, max_fqn_bytes::Integer, max_json_depth::Integer) =
    Ref(SpParseOptions(UInt64(max_paths), UInt64(max_fqn_bytes), UInt32(max_json_depth)))

"""
    parse_document(text; max_paths = 0, max_fqn_bytes = 0, max_json_depth = 0) -> Document

Parse a `shardplan.v1` document from a string or bytes. The limits refuse hostile input
(0: the library's defaults, 10,000,000 module paths, 2^30 FQN bytes, 64 nesting levels).
A malformed document is not an error: its check reports the single `invalid-document`
diagnostic (and `is_valid` is false).
"""
function parse_document(text::Union{AbstractString,AbstractVector{UInt8}};
                        max_paths::Integer = 0, max_fqn_bytes::Integer = 0,
                        max_json_depth::Integer = 0)
    data = _bytes(text)
    opts = _parse_options(max_paths, max_fqn_bytes, max_json_depth)
    out = Ref{Ptr{Cvoid}}(C_NULL)
    err = GC.@preserve data ccall((:sp_document_parse, libshardplan[]), Ptr{Cvoid},
                                  (SpStr, Ptr{SpParseOptions}, Ptr{Ptr{Cvoid}}),
                                  _spstr(data), opts, out)
    _check_error(err)
    return Document(out[])
end

"""`is_valid(doc)`: whether the document parsed (false: its result holds `invalid-document`)."""
function is_valid(doc::Document)
    p = _ptr(doc)
    out = Ref{Cint}(0)
    err = GC.@preserve doc ccall((:sp_document_is_valid, libshardplan[]), Ptr{Cvoid},
                                 (Ptr{Cvoid}, Ptr{Cint}), p, out)
    _check_error(err)
    return out[] != 0
end

"""
    check(doc; threads = 0) -> Result

Check the document (module-owned layouts, claims and, when it has one, the final plan) with
`threads` worker threads (0: all cores; the result is the same for every value).
"""
function check(doc::Document; threads::Integer = 0)
    p = _ptr(doc)
    opts = Ref(SpCheckOptions(UInt32(threads)))
    out = Ref{Ptr{Cvoid}}(C_NULL)
    err = GC.@preserve doc ccall((:sp_document_check, libshardplan[]), Ptr{Cvoid},
                                 (Ptr{Cvoid}, Ptr{SpCheckOptions}, Ptr{Ptr{Cvoid}}), p, opts, out)
    _check_error(err)
    return Result(out[])
end

"""`isok(res)`: true when the document has no error diagnostic."""
function isok(res::Result)
    p = _ptr(res)
    out = Ref{Cint}(0)
    err = GC.@preserve res ccall((:sp_result_ok, libshardplan[]), Ptr{Cvoid},
                                 (Ptr{Cvoid}, Ptr{Cint}), p, out)
    _check_error(err)
    return out[] != 0
end

"""`diagnostic_count(res)`: the number of diagnostics."""
function diagnostic_count(res::Result)
    p = _ptr(res)
    out = Ref{Csize_t}(0)
    err = GC.@preserve res ccall((:sp_result_diagnostic_count, libshardplan[]), Ptr{Cvoid},
                                 (Ptr{Cvoid}, Ptr{Csize_t}), p, out)
    _check_error(err)
    return Int(out[])
end

"""
    FixOperation(op, path, from, value)

One operation of a diagnostic's fix, an RFC 6902 JSON Patch on the document, copied out: `op` is
`"move"` (the member at `from` moves to `path`: a rename) or `"replace"` (the value at `path`
becomes `value`). `from` and `value` are `nothing` when the operation has none; `value` is JSON
text, as the C API gives it: `"tp"` with its quotes, a 4-byte string.
"""
struct FixOperation
    op::String
    path::String
    from::Union{String,Nothing}
    value::Union{String,Nothing}
end

"""
One diagnostic, copied out of the result. `fqn`, `parameter` and `pointer` are `nothing` when
absent (the root module's FQN is `""`). `help` says what to change where the engine knows
(`"did you mean 'tp'? ..."`), else `nothing`; `fix` is the [`FixOperation`](@ref)s of a JSON
Patch that removes the finding, empty when there is none (library 0.7).
"""
struct Diagnostic
    code::String
    severity::Severity
    message::String
    fqn::Union{String,Nothing}
    parameter::Union{String,Nothing}
    pointer::Union{String,Nothing}
    help::Union{String,Nothing}
    fix::Vector{FixOperation}
end

"""A diagnostic without help and fix (the six fields of library 0.6 and earlier)."""
Diagnostic(code, severity, message, fqn, parameter, pointer) =
    Diagnostic(code, severity, message, fqn, parameter, pointer, nothing, FixOperation[])

"""
    DiagnosticGroup(code, severity, pointer, count, listed)

Diagnostics with one cause, copied out (library 0.7): the same `code` at the same declaration
(`pointer`, or `nothing` for diagnostics without one), as one over-wide native pattern gives
one diagnostic per module it should not have matched. `listed` holds their indexes for
[`diagnostic`](@ref), **1-based** like it (`diagnostics(res)[g.listed]`; the C API and the
result JSON count from 0), in increasing order; `count == length(listed)`.
"""
struct DiagnosticGroup
    code::String
    severity::Severity
    pointer::Union{String,Nothing}
    count::Int
    listed::Vector{Int}
end

# Diagnostics and groups hold vectors (which `===` compares by identity): compare and hash them
# by value, field by field.
_fields(x) = ntuple(k -> getfield(x, k), fieldcount(typeof(x)))
Base.:(==)(a::Diagnostic, b::Diagnostic) = _fields(a) == _fields(b)
Base.:(==)(a::DiagnosticGroup, b::DiagnosticGroup) = _fields(a) == _fields(b)
Base.hash(x::Diagnostic, h::UInt) = hash(_fields(x), hash(:Diagnostic, h))
Base.hash(x::DiagnosticGroup, h::UInt) = hash(_fields(x), hash(:DiagnosticGroup, h))

"""
    diagnostic(res, i) -> Diagnostic

Diagnostic `i` (1-based; the first one is the reference framework's error), with its help and
fix. An index past the end is the library's `ERROR_OUT_OF_RANGE` (its message counts from 0,
like the C API).
"""
function diagnostic(res::Result, i::Integer)
    i >= 1 || throw(ShardPlanError(ERROR_OUT_OF_RANGE,
                                   "diagnostic index $i out of range (indices start at 1)"))
    p = _ptr(res)
    out = Ref{SpDiagnostic}()
    err = GC.@preserve res ccall((:sp_result_diagnostic, libshardplan[]), Ptr{Cvoid},
                                 (Ptr{Cvoid}, Csize_t, Ptr{SpDiagnostic}), p, i - 1, out)
    _check_error(err)
    d = out[]
    # The strings belong to the result: copy them while it is alive.
    return GC.@preserve res Diagnostic(something(_string(d.code), ""), Severity(d.severity),
                                       something(_string(d.message), ""), _string(d.fqn),
                                       _string(d.parameter), _string(d.pointer),
                                       _diagnostic_help(res, i), _diagnostic_fix(res, i))
end

# `sp_result_diagnostic_help`: the help of diagnostic `i` (1-based), or `nothing`.
function _diagnostic_help(res::Result, i::Integer)
    p = _ptr(res)
    out = Ref{SpStr}()
    err = GC.@preserve res ccall((:sp_result_diagnostic_help, libshardplan[]), Ptr{Cvoid},
                                 (Ptr{Cvoid}, Csize_t, Ptr{SpStr}), p, i - 1, out)
    _check_error(err)
    return GC.@preserve res _string(out[])
end

# `sp_result_diagnostic_fix_count` and `sp_result_diagnostic_fix`: the fix of diagnostic `i`
# (1-based), copied out.
function _diagnostic_fix(res::Result, i::Integer)
    p = _ptr(res)
    n = Ref{Csize_t}(0)
    err = GC.@preserve res ccall((:sp_result_diagnostic_fix_count, libshardplan[]), Ptr{Cvoid},
                                 (Ptr{Cvoid}, Csize_t, Ptr{Csize_t}), p, i - 1, n)
    _check_error(err)
    ops = FixOperation[]
    for k in 1:Int(n[])
        out = Ref{SpFixOperation}()
        err = GC.@preserve res ccall((:sp_result_diagnostic_fix, libshardplan[]), Ptr{Cvoid},
                                     (Ptr{Cvoid}, Csize_t, Csize_t, Ptr{SpFixOperation}),
                                     p, i - 1, k - 1, out)
        _check_error(err)
        o = out[]
        push!(ops, GC.@preserve res FixOperation(something(_string(o.op), ""),
                                                 something(_string(o.path), ""),
                                                 _string(o.from), _string(o.value)))
    end
    return ops
end

"""`diagnostics(res)`: all diagnostics, in evaluation order."""
diagnostics(res::Result) = Diagnostic[diagnostic(res, i) for i in 1:diagnostic_count(res)]

"""`group_count(res)`: the number of groups (causes) of the result's diagnostics."""
function group_count(res::Result)
    p = _ptr(res)
    n = Ref{Csize_t}(0)
    err = GC.@preserve res ccall((:sp_result_group_count, libshardplan[]), Ptr{Cvoid},
                                 (Ptr{Cvoid}, Ptr{Csize_t}), p, n)
    _check_error(err)
    return Int(n[])
end

"""
    group(res, i) -> DiagnosticGroup

Group `i` (1-based, in the order of each group's first diagnostic). An index past the end is the
library's `ERROR_OUT_OF_RANGE` (its message counts from 0, like the C API).
"""
function group(res::Result, i::Integer)
    i >= 1 || throw(ShardPlanError(ERROR_OUT_OF_RANGE,
                                   "group index $i out of range (indices start at 1)"))
    p = _ptr(res)
    out = Ref{SpDiagnosticGroup}()
    err = GC.@preserve res ccall((:sp_result_group, libshardplan[]), Ptr{Cvoid},
                                 (Ptr{Cvoid}, Csize_t, Ptr{SpDiagnosticGroup}), p, i - 1, out)
    _check_error(err)
    g = out[]
    # The strings and `listed` belong to the result: copy them while it is alive. The C indexes
    # count from 0; Julia's (for `diagnostic`) from 1.
    return GC.@preserve res DiagnosticGroup(
        something(_string(g.code), ""), Severity(g.severity), _string(g.pointer), Int(g.count),
        Int[Int(unsafe_load(g.listed, k)) + 1 for k in 1:Int(g.num_listed)])
end

"""
`groups(res)`: the diagnostics by cause (same code, same pointer), in the order of each group's
first diagnostic; every diagnostic is in exactly one group (empty when there is none).
"""
groups(res::Result) = DiagnosticGroup[group(res, i) for i in 1:group_count(res)]

"""`result_json(res)`: the whole result as compact `shardplan.result.v1` JSON (a copy)."""
function result_json(res::Result)
    p = _ptr(res)
    out = Ref{SpStr}()
    err = GC.@preserve res ccall((:sp_result_json, libshardplan[]), Ptr{Cvoid},
                                 (Ptr{Cvoid}, Ptr{SpStr}), p, out)
    _check_error(err)
    return GC.@preserve res something(_string(out[]), "")
end

# ---- Planning (planner-v1, `shardplan plan`) ---------------------------------------------------

"""
    plan(doc; threads = 0) -> Result

Make the final plan from the document's owners, `templates` and `overrides`, check it
(ownership, the plan checks, shapes), and compute the memory per device and the collectives it
implies ([`memory`](@ref), [`plan_entries`](@ref), [`communications`](@ref); the result JSON then
also has `"plan"`, `"provenance"`, `"memory"`, `"communication"` and `"collectives"`). A document
that gives a `plan` of its own is checked as [`check`](@ref) does. `threads` as for `check`.
"""
function plan(doc::Document; threads::Integer = 0)
    p = _ptr(doc)
    opts = Ref(SpCheckOptions(UInt32(threads)))
    out = Ref{Ptr{Cvoid}}(C_NULL)
    err = GC.@preserve doc ccall((:sp_document_plan, libshardplan[]), Ptr{Cvoid},
                                 (Ptr{Cvoid}, Ptr{SpCheckOptions}, Ptr{Ptr{Cvoid}}), p, opts, out)
    _check_error(err)
    return Result(out[])
end

"""
The memory per device of a planned result (planner-v1 section 5), copied out. Devices are
numbered row-major over the mesh axes, from 0 as in the C API (`max_device` is the lowest
device holding `max_bytes`); bytes are per device. `per_device_bytes` (device `d` at index
`d + 1`) is `nothing` beyond 65,536 devices.
"""
struct PlanMemory
    devices::Int64
    unsharded_bytes::Int64
    max_bytes::Int64
    min_bytes::Int64
    mean_bytes::Float64
    max_device::Int64
    per_device_bytes::Union{Vector{Int64},Nothing}
end

"""
    memory(res) -> Union{PlanMemory,Nothing}

The memory per device of a planned result; `nothing` when there is none (the result was
checked, not planned, or the mesh has more than 2^24 devices). The values are copied out of the
result. (The C counts are `uint64_t`; one past `typemax(Int64)` would throw an `InexactError`.)
"""
function memory(res::Result)
    p = _ptr(res)
    out = Ref{SpMemory}()
    present = Ref{Cint}(0)
    err = GC.@preserve res ccall((:sp_result_memory, libshardplan[]), Ptr{Cvoid},
                                 (Ptr{Cvoid}, Ptr{SpMemory}, Ptr{Cint}), p, out, present)
    _check_error(err)
    present[] == 0 && return nothing  # out[] was left untouched: never read it
    m = out[]
    # per_device_bytes belongs to the result: copy it while the result is alive.
    per_device = m.per_device_bytes == C_NULL ? nothing :
        GC.@preserve res Int64[unsafe_load(m.per_device_bytes, k) for k in 1:m.num_devices_listed]
    return PlanMemory(m.devices, m.unsharded_bytes, m.max_bytes, m.min_bytes, m.mean_bytes,
                      m.max_device, per_device)
end

"""
The training memory of a result (training-v1 section 4; library 0.9), copied out, for a
document with a `training` section. The worst device (the largest total, the lowest number on
ties): `worst_device` (from 0 as in the C API), `worst_coordinates` (its coordinate on each mesh
axis, in mesh order, from 0) and its bytes by category, `params`, `grads`, `master`,
`optimizer`, `gathered` (the largest FSDP unit, gathered: zero 3) and `activations` (the same on
every device; 0 where a category does not apply), and their `total`. Then the totals over
devices: `max_total_bytes`, `min_total_bytes`, `mean_total_bytes` and `per_device_total_bytes`
(device `d` at index `d + 1`; `nothing` beyond 65,536 devices). All bytes per device. Compares
(`==`) and hashes by value.
"""
struct TrainingMemory
    worst_device::Int64
    worst_coordinates::Vector{Int64}
    params::Int64
    grads::Int64
    master::Int64
    optimizer::Int64
    gathered::Int64
    activations::Int64
    total::Int64
    max_total_bytes::Int64
    min_total_bytes::Int64
    mean_total_bytes::Float64
    per_device_total_bytes::Union{Vector{Int64},Nothing}
end

Base.:(==)(a::TrainingMemory, b::TrainingMemory) = _fields(a) == _fields(b)
Base.hash(x::TrainingMemory, h::UInt) = hash(_fields(x), hash(:TrainingMemory, h))

"""
    training(res) -> Union{TrainingMemory,Nothing}

The training memory of a result (library 0.9); `nothing` when there is none: the document has no
`training` section, no plan was made (a plan made by [`plan`](@ref), or the document's own plan
once every check passed), or the mesh has more than 2^24 devices. Whether it fits
(`exceeds-device-memory`, `near-device-memory`) is among the diagnostics. The values are copied
out of the result. (The C values are `uint64_t`; one past `typemax(Int64)` would throw an
`InexactError`.)
"""
function training(res::Result)
    p = _ptr(res)
    out = Ref{SpTraining}()
    present = Ref{Cint}(0)
    err = GC.@preserve res ccall((:sp_result_training, libshardplan[]), Ptr{Cvoid},
                                 (Ptr{Cvoid}, Ptr{SpTraining}, Ptr{Cint}), p, out, present)
    _check_error(err)
    present[] == 0 && return nothing  # out[] was left untouched: never read it
    t = out[]
    # Both arrays belong to the result: copy them while the result is alive.
    coordinates = t.worst_coordinates == C_NULL ? Int64[] :
        GC.@preserve res Int64[unsafe_load(t.worst_coordinates, k) for k in 1:t.num_axes]
    per_device = t.per_device_total_bytes == C_NULL ? nothing :
        GC.@preserve res Int64[unsafe_load(t.per_device_total_bytes, k)
                               for k in 1:t.num_devices_listed]
    return TrainingMemory(t.worst_device, coordinates, t.params, t.grads, t.master, t.optimizer,
                          t.gathered, t.activations, t.total, t.max_total_bytes,
                          t.min_total_bytes, t.mean_total_bytes, per_device)
end

"""
One entry of a planned result's final plan, copied out: the module's `fqn` and where the entry
came from, `provenance` (`"owned:model"`, `"owned:family"`, `"owned:native"`,
`"template:AXIS:PATTERN"`, `"override"`, joined with `", "`). The layout is in the result JSON.
"""
struct PlanEntry
    fqn::String
    provenance::String
end

"""`plan_entry_count(res)`: the number of plan entries (0 when the result was not planned)."""
function plan_entry_count(res::Result)
    p = _ptr(res)
    n = Ref{Csize_t}(0)
    err = GC.@preserve res ccall((:sp_result_plan_entry_count, libshardplan[]), Ptr{Cvoid},
                                 (Ptr{Cvoid}, Ptr{Csize_t}), p, n)
    _check_error(err)
    return Int(n[])
end

"""
    plan_entry(res, i) -> PlanEntry

Plan entry `i` (1-based, plan order). An index past the end is the library's
`ERROR_OUT_OF_RANGE` (its message counts from 0, like the C API).
"""
function plan_entry(res::Result, i::Integer)
    i >= 1 || throw(ShardPlanError(ERROR_OUT_OF_RANGE,
                                   "plan entry index $i out of range (indices start at 1)"))
    p = _ptr(res)
    out = Ref{SpPlanEntry}()
    err = GC.@preserve res ccall((:sp_result_plan_entry, libshardplan[]), Ptr{Cvoid},
                                 (Ptr{Cvoid}, Csize_t, Ptr{SpPlanEntry}), p, i - 1, out)
    _check_error(err)
    e = out[]
    # The strings belong to the result: copy them while it is alive.
    return GC.@preserve res PlanEntry(something(_string(e.fqn), ""),
                                      something(_string(e.provenance), ""))
end

"""`plan_entries(res)`: all plan entries, in plan order (empty when the result was not planned)."""
plan_entries(res::Result) = PlanEntry[plan_entry(res, i) for i in 1:plan_entry_count(res)]

"""
One communication record of a planned result (planner-v1 section 6), copied out: on port
`port` (`"in:NAME"` or `"out:NAME"`) of the module at `fqn`, mesh axis `axis` goes from
placement `from` to `to`, which takes `collective` (`"all_gather"`, `"slice"`, `"all_reduce"`,
`"reduce_scatter"`, `"all_to_all"`, `"none"` or `"unsupported"`).
"""
struct Communication
    fqn::String
    port::String
    axis::String
    from::String
    to::String
    collective::String
end

"""`communication_count(res)`: the number of communication records (0 when not planned)."""
function communication_count(res::Result)
    p = _ptr(res)
    n = Ref{Csize_t}(0)
    err = GC.@preserve res ccall((:sp_result_communication_count, libshardplan[]), Ptr{Cvoid},
                                 (Ptr{Cvoid}, Ptr{Csize_t}), p, n)
    _check_error(err)
    return Int(n[])
end

"""
    communication(res, i) -> Communication

Communication record `i` (1-based: plan order, ports, mesh axes). An index past the end is the
library's `ERROR_OUT_OF_RANGE` (its message counts from 0, like the C API).
"""
function communication(res::Result, i::Integer)
    i >= 1 || throw(ShardPlanError(
        ERROR_OUT_OF_RANGE, "communication record index $i out of range (indices start at 1)"))
    p = _ptr(res)
    out = Ref{SpCommunication}()
    err = GC.@preserve res ccall((:sp_result_communication, libshardplan[]), Ptr{Cvoid},
                                 (Ptr{Cvoid}, Csize_t, Ptr{SpCommunication}), p, i - 1, out)
    _check_error(err)
    c = out[]
    # The strings belong to the result: copy them while it is alive.
    return GC.@preserve res Communication(something(_string(c.fqn), ""),
                                          something(_string(c.port), ""),
                                          something(_string(c.axis), ""),
                                          something(_string(c.from), ""),
                                          something(_string(c.to), ""),
                                          something(_string(c.collective), ""))
end

"""`communications(res)`: all communication records (empty when the result was not planned)."""
communications(res::Result) =
    Communication[communication(res, i) for i in 1:communication_count(res)]

# ---- Layouts ----------------------------------------------------------------------------------

"""`declare!(layout, port)`: declares `port` present (`{}` until entries are added)."""
function declare!(layout::Layout, port::Port)
    p = _ptr(layout)
    err = GC.@preserve layout ccall((:sp_layout_declare, libshardplan[]), Ptr{Cvoid},
                                    (Ptr{Cvoid}, Cint), p, Cint(port))
    _check_error(err)
    return layout
end

"""`add_entry!(layout, port, name)`: entry `name` with no placement, like `"x": {}`."""
function add_entry!(layout::Layout, port::Port, name::AbstractString)
    name = String(name)
    p = _ptr(layout)
    err = GC.@preserve layout name ccall((:sp_layout_add_entry, libshardplan[]), Ptr{Cvoid},
                                         (Ptr{Cvoid}, Cint, SpStr), p, Cint(port), _spstr(name))
    _check_error(err)
    return layout
end

"""
    set_placement!(layout, port, name, axis, placement)

Places entry `name` of `port` on mesh axis `axis`: `placement` is `"R"`, `"S(dim)"`, `"P"` or
`"P(op)"`. A malformed placement or an axis placed twice is `ERROR_INVALID_ARGUMENT`.
"""
function set_placement!(layout::Layout, port::Port, name::AbstractString, axis::AbstractString,
                        placement::AbstractString)
    name = String(name)
    axis = String(axis)
    placement = String(placement)
    p = _ptr(layout)
    err = GC.@preserve layout name axis placement ccall(
        (:sp_layout_set_placement, libshardplan[]), Ptr{Cvoid},
        (Ptr{Cvoid}, Cint, SpStr, SpStr, SpStr),
        p, Cint(port), _spstr(name), _spstr(axis), _spstr(placement))
    _check_error(err)
    return layout
end

"""`set_out_names!(layout, names)`: sets `out_names`, replacing any earlier list."""
function set_out_names!(layout::Layout, names::AbstractVector{<:AbstractString})
    strs = String[String(n) for n in names]
    items = SpStr[_spstr(s) for s in strs]
    p = _ptr(layout)
    err = GC.@preserve layout strs items ccall((:sp_layout_set_out_names, libshardplan[]),
                                               Ptr{Cvoid}, (Ptr{Cvoid}, Ptr{SpStr}, Csize_t),
                                               p, items, length(items))
    _check_error(err)
    return layout
end

"""
`set_legacy_field!(layout, field)`: sets legacy compute-injection field `field`
(`"local_compute_fn"`, `"inner_wrapper"`, `"inner_target"` or `"region_dispatch"`), as a non-null
value in the JSON would: the layout is then the `legacy-injection` diagnostic wherever it owns a
module. Since library 0.5.
"""
function set_legacy_field!(layout::Layout, field::AbstractString)
    field = String(field)
    p = _ptr(layout)
    err = GC.@preserve layout field ccall((:sp_layout_set_legacy_field, libshardplan[]), Ptr{Cvoid},
                                          (Ptr{Cvoid}, SpStr), p, _spstr(field))
    _check_error(err)
    return layout
end

# ---- Builder ----------------------------------------------------------------------------------

"""
    ParallelSpec(binding_kind, axes = String[])

A parallel spec: a binding kind (`"tp"`, `"mesh"`, `"none"`, ...) and its mesh axes.
"""
struct ParallelSpec
    binding_kind::String
    axes::Vector{String}
    ParallelSpec(binding_kind::AbstractString, axes::AbstractVector{<:AbstractString} = String[]) =
        new(String(binding_kind), String[String(a) for a in axes])
end

# What a `const sp_parallel_spec *` argument takes, and the array its `axes` points into:
# (C_NULL, nothing) for `nothing`. The caller GC.@preserve's the spec and that array during the
# ccall (the strings themselves belong to the spec).
_parallel_arg(spec::Nothing) = (C_NULL, nothing)

function _parallel_arg(spec::ParallelSpec)
    axes = SpStr[_spstr(a) for a in spec.axes]
    raw = SpParallelSpec(_spstr(spec.binding_kind), pointer(axes), Csize_t(length(axes)))
    return (Ref(raw), axes)
end

"""`add_axis!(b, name, devices)`: appends mesh axis `name` of `devices` (>= 1) devices."""
function add_axis!(b::Builder, name::AbstractString, devices::Integer)
    name = String(name)
    p = _ptr(b)
    err = GC.@preserve b name ccall((:sp_builder_add_axis, libshardplan[]), Ptr{Cvoid},
                                    (Ptr{Cvoid}, SpStr, Int64), p, _spstr(name), devices)
    _check_error(err)
    return b
end

"""
    add_parameter!(b, id; shape = nothing, dtype = "")

Adds parameter identity `id`: `shape` a vector of dimensions (`Int[]` for a scalar, `nothing`
for an unknown shape), `dtype` empty for the default (float32).
"""
function add_parameter!(b::Builder, id::AbstractString;
                        shape::Union{Nothing,AbstractVector{<:Integer}} = nothing,
                        dtype::AbstractString = "")
    id = String(id)
    dtype = String(dtype)
    # A scalar needs a non-NULL pointer with rank 0, so the buffer never is empty.
    dims = shape === nothing ? Int64[0] : Int64[Int64(d) for d in shape]
    rank = shape === nothing ? 0 : length(dims)
    isempty(dims) && push!(dims, 0)
    shape_arg = shape === nothing ? C_NULL : pointer(dims)
    p = _ptr(b)
    err = GC.@preserve b id dtype dims ccall((:sp_builder_add_parameter, libshardplan[]),
                                             Ptr{Cvoid},
                                             (Ptr{Cvoid}, SpStr, Ptr{Int64}, Csize_t, SpStr),
                                             p, _spstr(id), shape_arg, rank, _spstr(dtype))
    _check_error(err)
    return b
end

"""
`set_parameter_blocks!(b, id, blocks)`: the blocks of parameter `id` (added before): one positive
integer per dimension of its known shape, each dividing its dimension. Since library 0.5.
"""
function set_parameter_blocks!(b::Builder, id::AbstractString, blocks::AbstractVector{<:Integer})
    id = String(id)
    units = Int64[Int64(x) for x in blocks]
    p = _ptr(b)
    err = GC.@preserve b id units ccall((:sp_builder_set_parameter_blocks, libshardplan[]),
                                        Ptr{Cvoid}, (Ptr{Cvoid}, SpStr, Ptr{Int64}, Csize_t),
                                        p, _spstr(id), isempty(units) ? C_NULL : pointer(units),
                                        length(units))
    _check_error(err)
    return b
end

"""`add_module!(b, id; type = "")`: adds module identity `id` (`type`: its class name)."""
function add_module!(b::Builder, id::AbstractString; type::AbstractString = "")
    id = String(id)
    type = String(type)
    p = _ptr(b)
    err = GC.@preserve b id type ccall((:sp_builder_add_module, libshardplan[]), Ptr{Cvoid},
                                       (Ptr{Cvoid}, SpStr, SpStr), p, _spstr(id), _spstr(type))
    _check_error(err)
    return b
end

"""`add_forward_arg!(b, mod, name)`: appends `name` to the module's forward signature."""
function add_forward_arg!(b::Builder, mod::AbstractString, name::AbstractString)
    mod = String(mod)
    name = String(name)
    p = _ptr(b)
    err = GC.@preserve b mod name ccall((:sp_builder_add_forward_arg, libshardplan[]),
                                        Ptr{Cvoid}, (Ptr{Cvoid}, SpStr, SpStr),
                                        p, _spstr(mod), _spstr(name))
    _check_error(err)
    return b
end

"""`add_child!(b, mod, name, child)`: registers module `child` as child `name` of `mod`."""
function add_child!(b::Builder, mod::AbstractString, name::AbstractString, child::AbstractString)
    mod = String(mod)
    name = String(name)
    child = String(child)
    p = _ptr(b)
    err = GC.@preserve b mod name child ccall((:sp_builder_add_child, libshardplan[]),
                                              Ptr{Cvoid}, (Ptr{Cvoid}, SpStr, SpStr, SpStr),
                                              p, _spstr(mod), _spstr(name), _spstr(child))
    _check_error(err)
    return b
end

"""`add_module_param!(b, mod, name, parameter)`: parameter identity as parameter `name`."""
function add_module_param!(b::Builder, mod::AbstractString, name::AbstractString,
                           parameter::AbstractString)
    mod = String(mod)
    name = String(name)
    parameter = String(parameter)
    p = _ptr(b)
    err = GC.@preserve b mod name parameter ccall(
        (:sp_builder_add_module_param, libshardplan[]), Ptr{Cvoid},
        (Ptr{Cvoid}, SpStr, SpStr, SpStr), p, _spstr(mod), _spstr(name), _spstr(parameter))
    _check_error(err)
    return b
end

"""`set_module_parallel!(b, mod, spec)`: the module's own parallel spec (`nothing` clears it)."""
function set_module_parallel!(b::Builder, mod::AbstractString,
                              spec::Union{Nothing,ParallelSpec})
    mod = String(mod)
    p = _ptr(b)
    raw, axes = _parallel_arg(spec)
    err = GC.@preserve b mod spec axes ccall((:sp_builder_set_module_parallel, libshardplan[]),
                                             Ptr{Cvoid}, (Ptr{Cvoid}, SpStr, Ptr{SpParallelSpec}),
                                             p, _spstr(mod), raw)
    _check_error(err)
    return b
end

"""
    set_family!(b, mod; parallel = false, sharding = nothing)

Makes the module a family member, mesh-parallel or not, with its provider's layout
(`sharding`, a [`Layout`](@ref); `nothing`: it provides none).
"""
function set_family!(b::Builder, mod::AbstractString; parallel::Bool = false,
                     sharding::Union{Nothing,Layout} = nothing)
    mod = String(mod)
    p = _ptr(b)
    layout_arg = sharding === nothing ? C_NULL : _ptr(sharding)
    err = GC.@preserve b mod sharding ccall((:sp_builder_set_family, libshardplan[]), Ptr{Cvoid},
                                            (Ptr{Cvoid}, SpStr, Cint, Ptr{Cvoid}),
                                            p, _spstr(mod), Cint(parallel), layout_arg)
    _check_error(err)
    return b
end

"""
    set_family_cached!(b, mod, sharding; parallel = nothing)

The layout already applied to a family member (`sharding` required, `parallel` optional).
"""
function set_family_cached!(b::Builder, mod::AbstractString, sharding::Layout;
                            parallel::Union{Nothing,ParallelSpec} = nothing)
    mod = String(mod)
    p = _ptr(b)
    lp = _ptr(sharding)
    raw, axes = _parallel_arg(parallel)
    err = GC.@preserve b mod sharding parallel axes ccall(
        (:sp_builder_set_family_cached, libshardplan[]), Ptr{Cvoid},
        (Ptr{Cvoid}, SpStr, Ptr{Cvoid}, Ptr{SpParallelSpec}), p, _spstr(mod), lp, raw)
    _check_error(err)
    return b
end

"""`set_root!(b, mod)`: sets the root module id."""
function set_root!(b::Builder, mod::AbstractString)
    mod = String(mod)
    p = _ptr(b)
    err = GC.@preserve b mod ccall((:sp_builder_set_root, libshardplan[]), Ptr{Cvoid},
                                   (Ptr{Cvoid}, SpStr), p, _spstr(mod))
    _check_error(err)
    return b
end

"""`add_provider!(b, fqn, layout)`: a model-adapter sharding provider for the module at `fqn`."""
function add_provider!(b::Builder, fqn::AbstractString, layout::Layout)
    fqn = String(fqn)
    p = _ptr(b)
    lp = _ptr(layout)
    err = GC.@preserve b fqn layout ccall((:sp_builder_add_provider, libshardplan[]), Ptr{Cvoid},
                                          (Ptr{Cvoid}, SpStr, Ptr{Cvoid}), p, _spstr(fqn), lp)
    _check_error(err)
    return b
end

"""
    add_native!(b, globs, sharding; parallel = nothing)

Appends a native request: glob patterns (a vector of strings), a [`Layout`](@ref) and an optional
[`ParallelSpec`](@ref).
"""
function add_native!(b::Builder, globs::AbstractVector{<:AbstractString}, sharding::Layout;
                     parallel::Union{Nothing,ParallelSpec} = nothing)
    strs = String[String(g) for g in globs]
    items = SpStr[_spstr(s) for s in strs]
    p = _ptr(b)
    lp = _ptr(sharding)
    raw, axes = _parallel_arg(parallel)
    err = GC.@preserve b strs items sharding parallel axes ccall(
        (:sp_builder_add_native, libshardplan[]), Ptr{Cvoid},
        (Ptr{Cvoid}, Ptr{SpStr}, Csize_t, Ptr{Cvoid}, Ptr{SpParallelSpec}),
        p, items, length(items), lp, raw)
    _check_error(err)
    return b
end

"""
`declare_plan!(b)`: gives the document a final plan with no entries until some are added (an
empty plan is checked too: it covers no parameter).
"""
function declare_plan!(b::Builder)
    p = _ptr(b)
    err = GC.@preserve b ccall((:sp_builder_declare_plan, libshardplan[]), Ptr{Cvoid},
                               (Ptr{Cvoid},), p)
    _check_error(err)
    return b
end

"""`add_plan_entry!(b, fqn, layout)`: the final-plan layout of the module at `fqn` (declaring
the plan)."""
function add_plan_entry!(b::Builder, fqn::AbstractString, layout::Layout)
    fqn = String(fqn)
    p = _ptr(b)
    lp = _ptr(layout)
    err = GC.@preserve b fqn layout ccall((:sp_builder_add_plan_entry, libshardplan[]),
                                          Ptr{Cvoid}, (Ptr{Cvoid}, SpStr, Ptr{Cvoid}),
                                          p, _spstr(fqn), lp)
    _check_error(err)
    return b
end

"""
    add_template!(b, axis; prefix = "") -> Int

Appends a generic template for mesh axis `axis` (added before) under FQN `prefix`; returns its
1-based index for [`add_template_rule!`](@ref). Since library 0.5.
"""
function add_template!(b::Builder, axis::AbstractString; prefix::AbstractString = "")
    axis = String(axis)
    prefix = String(prefix)
    p = _ptr(b)
    out = Ref{Csize_t}(0)
    err = GC.@preserve b axis prefix ccall((:sp_builder_add_template, libshardplan[]), Ptr{Cvoid},
                                           (Ptr{Cvoid}, SpStr, SpStr, Ptr{Csize_t}),
                                           p, _spstr(axis), _spstr(prefix), out)
    _check_error(err)
    return Int(out[]) + 1
end

"""
`add_template_rule!(b, template, pattern, style)`: appends rule `pattern` -> `style` (`"colwise"`,
`"rowwise"`, ...) to template `template` (1-based, as [`add_template!`](@ref) returns it). Since
library 0.5.
"""
function add_template_rule!(b::Builder, template::Integer, pattern::AbstractString,
                            style::AbstractString)
    template >= 1 || throw(ArgumentError("template indexes start at 1"))
    pattern = String(pattern)
    style = String(style)
    p = _ptr(b)
    err = GC.@preserve b pattern style ccall((:sp_builder_add_template_rule, libshardplan[]),
                                             Ptr{Cvoid}, (Ptr{Cvoid}, Csize_t, SpStr, SpStr),
                                             p, template - 1, _spstr(pattern), _spstr(style))
    _check_error(err)
    return b
end

"""
`add_override!(b, fqn, layout)`: the override of the module at `fqn` (its final-plan layout,
which must declare params). Since library 0.5.
"""
function add_override!(b::Builder, fqn::AbstractString, layout::Layout)
    fqn = String(fqn)
    p = _ptr(b)
    lp = _ptr(layout)
    err = GC.@preserve b fqn layout ccall((:sp_builder_add_override, libshardplan[]), Ptr{Cvoid},
                                          (Ptr{Cvoid}, SpStr, Ptr{Cvoid}), p, _spstr(fqn), lp)
    _check_error(err)
    return b
end

"""
`set_pipeline!(b; prefix = "")`: gives the document a pipeline plan (Hugging Face's
`base_model_pp_plan`) under FQN `prefix` (`""`: the whole model), with no modules until
[`add_pipeline_module!`](@ref) adds them; a second one is `ERROR_INVALID_ARGUMENT`. Since
library 0.8.
"""
function set_pipeline!(b::Builder; prefix::AbstractString = "")
    prefix = String(prefix)
    p = _ptr(b)
    err = GC.@preserve b prefix ccall((:sp_builder_set_pipeline, libshardplan[]), Ptr{Cvoid},
                                      (Ptr{Cvoid}, SpStr), p, _spstr(prefix))
    _check_error(err)
    return b
end

"""
`add_pipeline_module!(b, mod, inputs, outputs)`: appends pipeline stage `mod` (relative to the
pipeline's prefix; non-empty, not already in the plan), which takes the names `inputs` and gives
the names `outputs` (vectors of strings), to the plan of [`set_pipeline!`](@ref). Since library
0.8.
"""
function add_pipeline_module!(b::Builder, mod::AbstractString, inputs::AbstractVector{<:AbstractString},
                              outputs::AbstractVector{<:AbstractString})
    mod = String(mod)
    in_strs = String[String(n) for n in inputs]
    out_strs = String[String(n) for n in outputs]
    in_items = SpStr[_spstr(s) for s in in_strs]
    out_items = SpStr[_spstr(s) for s in out_strs]
    p = _ptr(b)
    err = GC.@preserve b mod in_strs out_strs in_items out_items ccall(
        (:sp_builder_add_pipeline_module, libshardplan[]), Ptr{Cvoid},
        (Ptr{Cvoid}, SpStr, Ptr{SpStr}, Csize_t, Ptr{SpStr}, Csize_t),
        p, _spstr(mod), in_items, length(in_items), out_items, length(out_items))
    _check_error(err)
    return b
end

"""
`set_training!(b, json)`: gives the document its `training` section (training-v1,
docs/format.md "Training"); `json` is the section's JSON text (a string or bytes), an object
such as `"{\"zero\": 3, \"device_memory\": \"80GiB\"}"`. A section that is not an object, an
invalid value in it, or a second section is `ERROR_INVALID_ARGUMENT` (nothing changes); what
depends on the mesh (`shard_axes`, `activations.tensor_axis`) is checked by
[`build_document`](@ref). Since library 0.9.
"""
function set_training!(b::Builder, json::Union{AbstractString,AbstractVector{UInt8}})
    data = _bytes(json)
    p = _ptr(b)
    err = GC.@preserve b data ccall((:sp_builder_set_training, libshardplan[]), Ptr{Cvoid},
                                    (Ptr{Cvoid}, SpStr), p, _spstr(data))
    _check_error(err)
    return b
end

"""`to_json(b)`: the document built so far as pretty-printed `shardplan.v1` JSON (a copy)."""
function to_json(b::Builder)
    p = _ptr(b)
    out = Ref{SpStr}()
    err = GC.@preserve b ccall((:sp_builder_to_json, libshardplan[]), Ptr{Cvoid},
                               (Ptr{Cvoid}, Ptr{SpStr}), p, out)
    _check_error(err)
    return GC.@preserve b something(_string(out[]), "")
end

"""
    build_document(b; max_paths = 0, max_fqn_bytes = 0, max_json_depth = 0) -> Document

Builds the document made so far (directly, no JSON): the document [`parse_document`](@ref) gives
for `to_json(b)`; the builder stays usable. Dangling references are the `invalid-document`
diagnostic, with a JSON pointer into `to_json(b)`.
"""
function build_document(b::Builder; max_paths::Integer = 0, max_fqn_bytes::Integer = 0,
                        max_json_depth::Integer = 0)
    p = _ptr(b)
    opts = _parse_options(max_paths, max_fqn_bytes, max_json_depth)
    out = Ref{Ptr{Cvoid}}(C_NULL)
    err = GC.@preserve b ccall((:sp_builder_build, libshardplan[]), Ptr{Cvoid},
                               (Ptr{Cvoid}, Ptr{SpParseOptions}, Ptr{Ptr{Cvoid}}), p, opts, out)
    _check_error(err)
    return Document(out[])
end

end # module
