# Tests of the ShardPlan Julia binding. Run from the repository root:
#   julia --project=bindings/julia bindings/julia/test/runtests.jl
# (the library: ENV["SHARDPLAN_LIBRARY"], else bazel-bin/capi/libshardplan.so, else the installed
# libshardplan.so.1; see src/ShardPlan.jl, find_library_path).
# Only the Test standard library is used: the JSON files are read with the small reader below.

using Test
using ShardPlan

const CONFORMANCE = joinpath(@__DIR__, "..", "..", "..", "tests", "conformance")
const CASES = ("000-tiny-llama", "001-multiple-owners", "005-native-overlaps-family")

# ---- A minimal JSON reader (objects -> Dict{String,Any}, arrays -> Vector{Any}) -------------

mutable struct MiniJSON
    b::Vector{UInt8}
    i::Int
end

const ESCAPES = Dict{UInt8,UInt8}(UInt8('"') => UInt8('"'), UInt8('\\') => UInt8('\\'),
                                  UInt8('/') => UInt8('/'), UInt8('b') => 0x08,
                                  UInt8('f') => 0x0c, UInt8('n') => UInt8('\n'),
                                  UInt8('r') => UInt8('\r'), UInt8('t') => UInt8('\t'))

function parse_json(text::AbstractString)
    r = MiniJSON(Vector{UInt8}(codeunits(String(text))), 1)
    v = json_value(r)
    json_ws(r)
    r.i > length(r.b) || error("trailing data at byte $(r.i)")
    return v
end

json_peek(r::MiniJSON) = r.i <= length(r.b) ? r.b[r.i] : 0x00

function json_ws(r::MiniJSON)
    while r.i <= length(r.b) && r.b[r.i] in (UInt8(' '), UInt8('\t'), UInt8('\n'), UInt8('\r'))
        r.i += 1
    end
end

function json_expect(r::MiniJSON, c::Char)
    json_ws(r)
    json_peek(r) == UInt8(c) || error("expected '$c' at byte $(r.i)")
    r.i += 1
    return nothing
end

function json_hex4(r::MiniJSON)
    r.i + 3 <= length(r.b) || error("short \\u escape at byte $(r.i)")
    u = parse(UInt32, String(r.b[r.i:r.i+3]); base = 16)
    r.i += 4
    return u
end

function json_string(r::MiniJSON)
    json_expect(r, '"')
    io = IOBuffer()
    while true
        r.i <= length(r.b) || error("unterminated string")
        c = r.b[r.i]
        r.i += 1
        if c == UInt8('"')
            return String(take!(io))
        elseif c == UInt8('\\')
            e = r.b[r.i]
            r.i += 1
            if e == UInt8('u')
                u = json_hex4(r)
                if 0xd800 <= u <= 0xdbff  # a surrogate pair: \uD8xx\uDCxx
                    r.i += 2  # the second "\u"
                    lo = json_hex4(r)
                    u = 0x00010000 + ((u - 0x0000d800) << 10) + (lo - 0x0000dc00)
                end
                print(io, Char(u))
            else
                write(io, ESCAPES[e])
            end
        else
            write(io, c)
        end
    end
end

function json_value(r::MiniJSON)
    json_ws(r)
    c = json_peek(r)
    if c == UInt8('{')
        r.i += 1
        d = Dict{String,Any}()
        json_ws(r)
        if json_peek(r) == UInt8('}')
            r.i += 1
            return d
        end
        while true
            json_ws(r)
            k = json_string(r)
            json_expect(r, ':')
            d[k] = json_value(r)
            json_ws(r)
            if json_peek(r) == UInt8(',')
                r.i += 1
            else
                json_expect(r, '}')
                return d
            end
        end
    elseif c == UInt8('[')
        r.i += 1
        a = Any[]
        json_ws(r)
        if json_peek(r) == UInt8(']')
            r.i += 1
            return a
        end
        while true
            push!(a, json_value(r))
            json_ws(r)
            if json_peek(r) == UInt8(',')
                r.i += 1
            else
                json_expect(r, ']')
                return a
            end
        end
    elseif c == UInt8('"')
        return json_string(r)
    else
        start = r.i
        while r.i <= length(r.b) && !(r.b[r.i] in UInt8.((',', ']', '}', ' ', '\t', '\n', '\r')))
            r.i += 1
        end
        word = String(r.b[start:r.i-1])
        word == "true" && return true
        word == "false" && return false
        word == "null" && return nothing
        return parse(Float64, word)
    end
end

# ---- Helpers ----------------------------------------------------------------------------------

# The exception f throws, or nothing.
function caught(f)
    try
        f()
    catch e
        return e
    end
    return nothing
end

case_text(name) = read(joinpath(CONFORMANCE, "cases", name * ".json"), String)

# The golden documents (tests/golden/cases): the `*.typo` ones have a help and a fix-it, and the
# over-wide native pattern of `overlapping-communication.glob` gives groups of several diagnostics.
const GOLDEN = joinpath(@__DIR__, "..", "..", "..", "tests", "golden", "cases")
golden_text(name) = read(joinpath(GOLDEN, name * ".json"), String)
const TYPOS = sort([f[1:end-length(".fail.json")] for f in readdir(GOLDEN)
                    if endswith(f, ".typo.fail.json")])
const SEVERITY_NAMES = Dict(SEVERITY_ERROR => "error", SEVERITY_WARNING => "warning",
                            SEVERITY_INFO => "info")
expected_json(name) = parse_json(read(joinpath(CONFORMANCE, "expected", name * ".json"), String))

# The brief's small model: mesh tp=2, parameter w [4,4], root -> lin (weight w), provider at lin.
const SMALL_TWIN = """
{"schema": "shardplan.v1", "mesh": {"tp": 2}, "parameters": {"w": {"shape": [4, 4]}},
 "root": "root",
 "modules": {"root": {"children": {"lin": "lin"}},
             "lin": {"forward": ["x"], "params": {"weight": "w"}}},
 "providers": {"sharding": {"lin": {"params": {"weight": {"tp": "S(0)"}},
                                    "in_src": {"x": {}}, "in_dst": {"x": {}}}}}}
"""

# Uses every builder and layout call: family with a cached layout, parallel specs, a native
# request with two globs, a plan, out_names, declared empty ports, scalar and unknown shapes.
const FULL_TWIN = """
{
  "schema": "shardplan.v1",
  "mesh": {"dp": 2, "tp": 2},
  "parameters": {
    "w1": {"shape": [8, 8], "dtype": "bfloat16"},
    "w2": {"shape": [8, 8]},
    "b": {"shape": []},
    "s": {}
  },
  "root": "net",
  "modules": {
    "net": {"type": "Net", "forward": ["x"], "children": {"block": "blk", "head": "lin2"}},
    "blk": {"type": "Block", "forward": ["x"], "children": {"proj": "lin1"}, "params": {"scale": "s"},
            "parallel": {"binding_kind": "tp", "axes": ["tp"]},
            "family": {"parallel": true,
                       "sharding": {"params": {"proj.weight": {"tp": "S(0)"}, "scale": {"tp": "R"}},
                                    "in_src": {"x": {"tp": "R"}}, "in_dst": {"x": {"tp": "R"}},
                                    "out_src": {"y": {"tp": "P"}}, "out_dst": {"y": {"tp": "R"}},
                                    "out_names": ["y"]},
                       "cached": {"sharding": {"params": {"proj.weight": {"tp": "S(1)"}, "scale": {"tp": "R"}},
                                               "in_src": {"x": {"tp": "R"}}, "in_dst": {"x": {"tp": "R"}},
                                               "out_src": {"y": {"tp": "P"}}, "out_dst": {"y": {"tp": "R"}},
                                               "out_names": ["y"]},
                                  "parallel": {"binding_kind": "tp", "axes": ["tp"]}}}},
    "lin1": {"type": "Linear", "forward": ["input"], "params": {"weight": "w1"}},
    "lin2": {"type": "Linear", "forward": ["input"], "params": {"weight": "w2", "bias": "b"}}
  },
  "providers": {
    "sharding": {},
    "native": [
      {"match": ["hea?", "head"], "parallel": {"binding_kind": "mesh", "axes": ["dp", "tp"]},
       "sharding": {"params": {"weight": {"dp": "R", "tp": "S(1)"}, "bias": {"tp": "R"}},
                    "in_src": {}, "in_dst": {}}}
    ]
  },
  "plan": {"modules": {
    "block": {"params": {"proj.weight": {"tp": "S(1)"}, "scale": {"tp": "R"}},
              "in_src": {"x": {"tp": "R"}}, "in_dst": {"x": {"tp": "R"}},
              "out_src": {"y": {"tp": "P"}}, "out_dst": {"y": {"tp": "R"}}, "out_names": ["y"]},
    "head": {"params": {"weight": {"dp": "R", "tp": "S(1)"}, "bias": {"tp": "R"}},
             "in_src": {}, "in_dst": {}}
  }}
}
"""

# The planning brief's document: templates plan up_proj and down_proj on tp; embed is owned by
# its provider. Expected (the same C calls made through Python ctypes): ok, 3 plan entries,
# 768 bytes on each of the 8 devices, and one all_reduce on down_proj's output.
const PLAN_DOC = """
{"schema": "shardplan.v1", "mesh": {"dp": 2, "tp": 4},
 "parameters": {"emb": {"shape": [64, 8], "dtype": "bfloat16"}, "up": {"shape": [32, 8]}, "down": {"shape": [8, 32]}},
 "root": "model",
 "modules": {"model": {"children": {"embed": "embed", "up_proj": "up", "down_proj": "down"}},
             "embed": {"type": "Embedding", "forward": ["input"], "params": {"weight": "emb"}},
             "up": {"type": "Linear", "forward": ["x"], "params": {"weight": "up"}},
             "down": {"type": "Linear", "forward": ["x"], "params": {"weight": "down"}}},
 "providers": {"sharding": {"embed": {"params": {"weight": {"tp": "S(0)"}}, "in_src": {}, "in_dst": {}}}},
 "templates": [{"axis": "tp", "rules": {"up_proj": "colwise", "down_proj": "rowwise"}}]}
"""

# Five rows over tp=4 (torch.chunk: 2, 2, 1, 0 rows of one bfloat16): uneven memory, a
# fractional mean, and an uneven-shard warning that does not fail the document.
const UNEVEN_DOC = """
{"schema": "shardplan.v1", "mesh": {"tp": 4},
 "parameters": {"w": {"shape": [5, 1], "dtype": "bfloat16"}},
 "root": "model",
 "modules": {"model": {"children": {"proj": "lin"}},
             "lin": {"type": "Linear", "forward": ["x"], "params": {"weight": "w"}}},
 "templates": [{"axis": "tp", "rules": {"proj": "colwise"}}]}
"""

function family_layout(proj_placement)
    l = Layout()
    set_placement!(l, PORT_PARAMS, "proj.weight", "tp", proj_placement)
    set_placement!(l, PORT_PARAMS, "scale", "tp", "R")
    set_placement!(l, PORT_IN_SRC, "x", "tp", "R")
    set_placement!(l, PORT_IN_DST, "x", "tp", "R")
    set_placement!(l, PORT_OUT_SRC, "y", "tp", "P")
    set_placement!(l, PORT_OUT_DST, "y", "tp", "R")
    set_out_names!(l, ["y"])
    return l
end

function full_builder()
    b = Builder()
    add_axis!(b, "dp", 2)
    add_axis!(b, "tp", 2)
    add_parameter!(b, "w1"; shape = [8, 8], dtype = "bfloat16")
    add_parameter!(b, "w2"; shape = [8, 8])
    add_parameter!(b, "b"; shape = Int[])   # a scalar
    add_parameter!(b, "s")                  # an unknown shape
    for (id, type) in (("net", "Net"), ("blk", "Block"), ("lin1", "Linear"), ("lin2", "Linear"))
        add_module!(b, id; type = type)
    end
    for (m, arg) in (("net", "x"), ("blk", "x"), ("lin1", "input"), ("lin2", "input"))
        add_forward_arg!(b, m, arg)
    end
    add_child!(b, "net", "block", "blk")
    add_child!(b, "net", "head", "lin2")
    add_child!(b, "blk", "proj", "lin1")
    add_module_param!(b, "blk", "scale", "s")
    add_module_param!(b, "lin1", "weight", "w1")
    add_module_param!(b, "lin2", "weight", "w2")
    add_module_param!(b, "lin2", "bias", "b")
    tp = ParallelSpec("tp", ["tp"])
    set_module_parallel!(b, "blk", tp)
    set_family!(b, "blk"; parallel = true, sharding = family_layout("S(0)"))
    cached = family_layout("S(1)")
    set_family_cached!(b, "blk", cached; parallel = tp)
    set_root!(b, "net")
    native = Layout()
    set_placement!(native, PORT_PARAMS, "weight", "dp", "R")
    set_placement!(native, PORT_PARAMS, "weight", "tp", "S(1)")
    set_placement!(native, PORT_PARAMS, "bias", "tp", "R")
    declare!(native, PORT_IN_SRC)
    declare!(native, PORT_IN_DST)
    add_native!(b, ["hea?", "head"], native; parallel = ParallelSpec("mesh", ["dp", "tp"]))
    add_plan_entry!(b, "block", cached)
    add_plan_entry!(b, "head", native)
    return b
end

# ---- Tests ------------------------------------------------------------------------------------

@testset "ShardPlan" begin

@testset "versions" begin
    @test abi_version() == ABI_VERSION == 1
    @test occursin(r"^\d+\.\d+\.\d+$", library_version())
    @test check_abi(1) === nothing
    err = caught(() -> check_abi(2; library = "/fake/libshardplan.so"))
    @test err isa AbiMismatchError
    @test err.expected == 1 && err.found == 2
    msg = sprint(showerror, err)
    @test occursin("version 1", msg) && occursin("version 2", msg)
    @test occursin("/fake/libshardplan.so", msg)
end

@testset "library lookup" begin
    # The installed library is loaded by the soname of ABI_VERSION.
    @test ShardPlan.SONAME == "libshardplan.so.$(Int(ABI_VERSION))"
    @test isfile(ShardPlan.libshardplan[])
    @test ShardPlan.find_library_path() == ShardPlan.libshardplan[]
    # SHARDPLAN_LIBRARY is an override: a missing file is an error, not a fallback.
    withenv("SHARDPLAN_LIBRARY" => "/nonexistent/libshardplan.so") do
        @test_throws ErrorException ShardPlan.find_library_path()
    end
end

@testset "conformance $name" for name in CASES
    expected = expected_json(name)
    doc = parse_document(case_text(name))
    @test is_valid(doc)
    res = check(doc)
    if expected["ok"] === true
        @test isok(res)
        @test isempty(diagnostics(res))
        result = parse_json(result_json(res))
        @test result["schema"] == "shardplan.result.v1"
        @test result["ok"] === true
        @test result["owned"]["owned_names"] == expected["owned"]["owned_names"]
        @test result["owned"]["aliases"] == expected["owned"]["aliases"]
    else
        @test !isok(res)
        ds = diagnostics(res)
        @test !isempty(ds)
        @test ds[1].code == expected["error"]["code"]
        @test ds[1].message == expected["error"]["message"]
        @test ds[1].severity == SEVERITY_ERROR
    end
    close(res)
    close(doc)
end

@testset "threads and parse limits" begin
    text = case_text("000-tiny-llama")
    doc = parse_document(text)
    @test result_json(check(doc; threads = 1)) == result_json(check(doc; threads = 4))
    limited = parse_document(Vector{UInt8}(codeunits(text)); max_paths = 2)
    @test !is_valid(limited)
    ds = diagnostics(check(limited))
    @test length(ds) == 1
    @test ds[1].code == "invalid-document"
    @test occursin("more than 2 module paths", ds[1].message)
    @test ds[1].pointer == "/modules"
    @test ds[1].fqn === nothing && ds[1].parameter === nothing
    @test !is_valid(parse_document(text; max_json_depth = 3))
end

@testset "errors" begin
    # A malformed document is a diagnostic, not an error.
    doc = parse_document("{not json")
    @test !is_valid(doc)
    res = check(doc)
    @test !isok(res)
    ds = diagnostics(res)
    @test length(ds) == 1
    @test ds[1].code == "invalid-document"
    @test ds[1].severity == SEVERITY_ERROR
    @test occursin("\"ok\":false", result_json(res))

    # An index past the end is the library's OUT_OF_RANGE.
    err = caught(() -> diagnostic(res, diagnostic_count(res) + 1))
    @test err isa ShardPlanError
    @test err.code == ERROR_OUT_OF_RANGE
    @test occursin("out of range", err.message)
    @test caught(() -> diagnostic(res, 0)).code == ERROR_OUT_OF_RANGE

    # A malformed placement.
    l = Layout()
    err = caught(() -> set_placement!(l, PORT_PARAMS, "weight", "tp", "Shard(0)"))
    @test err isa ShardPlanError
    @test err.code == ERROR_INVALID_ARGUMENT
    @test occursin("Shard(0)", err.message)
    @test occursin("Shard(0)", sprint(showerror, err))
    # The same axis placed twice.
    set_placement!(l, PORT_PARAMS, "weight", "tp", "S(0)")
    @test caught(() -> set_placement!(l, PORT_PARAMS, "weight", "tp", "R")).code ==
          ERROR_INVALID_ARGUMENT

    # A duplicate mesh axis, and an axis without devices.
    b = Builder()
    add_axis!(b, "tp", 2)
    err = caught(() -> add_axis!(b, "tp", 2))
    @test err isa ShardPlanError
    @test err.code == ERROR_INVALID_ARGUMENT
    @test occursin("tp", err.message)
    @test caught(() -> add_axis!(b, "dp", 0)).code == ERROR_INVALID_ARGUMENT

    # Closed handles are never passed to the library; closing twice is fine.
    close(res)
    close(res)
    @test !isopen(res)
    @test caught(() -> isok(res)) isa InvalidStateException
    close(doc)
    @test caught(() -> check(doc)) isa InvalidStateException
    close(l)
    @test caught(() -> declare!(l, PORT_IN_SRC)) isa InvalidStateException
    close(b)
    @test caught(() -> to_json(b)) isa InvalidStateException
end

@testset "builder equals its JSON twin" begin
    # The small model of the brief.
    b = Builder()
    add_axis!(b, "tp", 2)
    add_parameter!(b, "w"; shape = [4, 4])
    add_module!(b, "root")
    add_module!(b, "lin")
    add_child!(b, "root", "lin", "lin")
    add_forward_arg!(b, "lin", "x")
    add_module_param!(b, "lin", "weight", "w")
    set_root!(b, "root")
    provider = Layout()
    set_placement!(provider, PORT_PARAMS, "weight", "tp", "S(0)")
    add_entry!(provider, PORT_IN_SRC, "x")
    add_entry!(provider, PORT_IN_DST, "x")
    add_provider!(b, "lin", provider)
    built = result_json(check(build_document(b)))
    twin = result_json(check(parse_document(SMALL_TWIN)))
    @test built == twin
    @test parse_json(built)["ok"] === true
    @test parse_json(built)["owned"]["owned_names"] == ["lin.weight"]
    @test occursin("\"schema\": \"shardplan.v1\"", to_json(b))
    @test result_json(check(parse_document(to_json(b)))) == built

    # Every builder and layout call.
    full = full_builder()
    built = result_json(check(build_document(full)))
    @test built == result_json(check(parse_document(FULL_TWIN)))
    @test built == result_json(check(parse_document(to_json(full))))
    result = parse_json(built)
    @test result["ok"] === true
    @test result["owned"]["owned_names"] ==
          ["block.proj.weight", "block.scale", "head.bias", "head.weight"]
    @test result["owned"]["parallel"]["head"]["axes"] == ["dp", "tp"]

    # An empty plan (declare_plan!) is checked too: it covers no parameter.
    declare_plan!(b)
    @test occursin("\"plan\"", to_json(b))
    built = result_json(check(build_document(b)))
    with_plan = replace(SMALL_TWIN, "\"root\": \"root\"," =>
                                    "\"plan\": {\"modules\": {}}, \"root\": \"root\",")
    twin = result_json(check(parse_document(with_plan)))
    @test built == twin
    @test !isok(check(build_document(b)))
    @test diagnostics(check(build_document(b)))[1].code == "override-removed-coverage"

    # A dangling reference is reported when the document is built, pointing into to_json.
    dangling = Builder()
    add_axis!(dangling, "tp", 2)
    add_module!(dangling, "root")
    add_child!(dangling, "root", "missing", "nowhere")
    set_root!(dangling, "root")
    res = check(build_document(dangling))
    @test !isok(res)
    @test diagnostics(res)[1].code == "invalid-document"
end

@testset "planning" begin
    # The mirrors have the header's layout (sizes and offsets measured with offsetof on the
    # header, LP64): the double mean_bytes at 32, the pointer at 48, the size_t at 56.
    @test isbitstype(ShardPlan.SpMemory) && isbitstype(ShardPlan.SpPlanEntry) &&
          isbitstype(ShardPlan.SpCommunication)
    if Sys.WORD_SIZE == 64
        @test sizeof(ShardPlan.SpMemory) == 64
        @test [fieldoffset(ShardPlan.SpMemory, k) for k in 1:8] == [0, 8, 16, 24, 32, 40, 48, 56]
        @test sizeof(ShardPlan.SpPlanEntry) == 32
        @test fieldoffset(ShardPlan.SpPlanEntry, 2) == 16
        @test sizeof(ShardPlan.SpCommunication) == 96
        @test [fieldoffset(ShardPlan.SpCommunication, k) for k in 1:6] == [0, 16, 32, 48, 64, 80]
    end

    doc = parse_document(PLAN_DOC)
    @test is_valid(doc)
    res = plan(doc)
    @test isok(res)
    @test isempty(diagnostics(res))

    # Plan entries, in plan order, with their provenance.
    @test plan_entry_count(res) == 3
    entries = plan_entries(res)
    @test entries isa Vector{PlanEntry}
    @test [e.fqn for e in entries] == ["embed", "up_proj", "down_proj"]
    @test [e.provenance for e in entries] ==
          ["owned:model", "template:tp:up_proj", "template:tp:down_proj"]
    e = plan_entry(res, 2)
    @test e.fqn == "up_proj" && e.provenance == "template:tp:up_proj"

    # Memory per device: every parameter sharded 4 ways on tp, replicated on dp.
    m = memory(res)
    @test m isa PlanMemory
    @test m.devices == 8
    @test m.unsharded_bytes == 3072 == 64 * 8 * 2 + 32 * 8 * 4 + 8 * 32 * 4
    @test m.per_device_bytes == fill(768, 8)
    @test length(m.per_device_bytes) == m.devices
    @test m.max_bytes == maximum(m.per_device_bytes) == 768
    @test m.min_bytes == minimum(m.per_device_bytes) == 768
    @test m.mean_bytes === 768.0
    @test m.max_device == 0

    # Communication: rowwise down_proj reduces its partial output on tp.
    @test communication_count(res) == 1
    cs = communications(res)
    @test cs isa Vector{Communication}
    c = cs[1]
    @test (c.fqn, c.port, c.axis, c.from, c.to, c.collective) ==
          ("down_proj", "out:output", "tp", "P", "R", "all_reduce")
    c = communication(res, 1)
    @test c.collective == "all_reduce"

    # The result JSON has the planning sections, agreeing with the accessors.
    text = result_json(res)
    for key in ("plan", "provenance", "memory", "communication", "collectives")
        @test occursin("\"$key\"", text)
    end
    j = parse_json(text)
    @test j["ok"] === true
    @test Set(keys(j["plan"]["modules"])) == Set(["embed", "up_proj", "down_proj"])
    @test j["provenance"]["down_proj"] == ["template:tp:down_proj"]
    @test j["memory"]["unsharded_bytes"] == m.unsharded_bytes
    @test j["memory"]["per_device_bytes"] == m.per_device_bytes
    @test j["communication"][1]["collective"] == "all_reduce"
    @test j["communication"][1]["from"] == "P" && j["communication"][1]["to"] == "R"
    @test j["collectives"]["all_reduce"]["tp"] == 1
    @test result_json(plan(doc; threads = 1)) == result_json(plan(doc; threads = 4))

    # An index past the end is the library's OUT_OF_RANGE (its message counts from 0).
    err = caught(() -> plan_entry(res, 4))
    @test err isa ShardPlanError
    @test err.code == ERROR_OUT_OF_RANGE
    @test err.message == "plan entry index 3 out of range (the result has 3)"
    @test caught(() -> plan_entry(res, 0)).code == ERROR_OUT_OF_RANGE
    err = caught(() -> communication(res, 2))
    @test err isa ShardPlanError
    @test err.code == ERROR_OUT_OF_RANGE
    @test err.message == "communication record index 1 out of range (the result has 1)"
    @test caught(() -> communication(res, 0)).code == ERROR_OUT_OF_RANGE

    # A checked (not planned) result has no memory, no entries and no records.
    checked = check(doc)
    @test isok(checked)
    @test memory(checked) === nothing
    @test plan_entry_count(checked) == 0
    @test isempty(plan_entries(checked))
    @test communication_count(checked) == 0
    @test isempty(communications(checked))
    @test caught(() -> plan_entry(checked, 1)).code == ERROR_OUT_OF_RANGE
    @test caught(() -> communication(checked, 1)).code == ERROR_OUT_OF_RANGE
    @test !occursin("\"memory\"", result_json(checked))

    # A document that gives its own plan is checked, not planned; a malformed one is a diagnostic.
    own = parse_document(FULL_TWIN)
    @test result_json(plan(own)) == result_json(check(own))
    @test memory(plan(own)) === nothing && plan_entry_count(plan(own)) == 0
    bad = plan(parse_document("{not json"))
    @test !isok(bad)
    @test diagnostics(bad)[1].code == "invalid-document"
    @test memory(bad) === nothing

    # Uneven shards: a warning (still ok), and memory that differs per device.
    uneven = plan(parse_document(UNEVEN_DOC))
    @test isok(uneven)
    ds = diagnostics(uneven)
    @test length(ds) == 1
    @test ds[1].code == "uneven-shard" && ds[1].severity == SEVERITY_WARNING
    @test ds[1].fqn == "proj" && ds[1].parameter == "proj.weight"
    um = memory(uneven)
    @test um.devices == 4 && um.unsharded_bytes == 10
    @test um.per_device_bytes == [4, 4, 2, 0]
    @test um.max_bytes == 4 && um.min_bytes == 0 && um.max_device == 0
    @test um.mean_bytes === 2.5
    @test [(x.fqn, x.provenance) for x in plan_entries(uneven)] == [("proj", "template:tp:proj")]
    @test isempty(communications(uneven))

    # Results outlive their document; closed handles are never passed to the library.
    kept = plan(doc)
    close(doc)
    @test memory(kept).per_device_bytes == fill(768, 8)
    @test plan_entry(kept, 3).fqn == "down_proj"
    @test caught(() -> plan(doc)) isa InvalidStateException
    close(kept)
    @test caught(() -> memory(kept)) isa InvalidStateException
    @test caught(() -> plan_entries(kept)) isa InvalidStateException
    @test caught(() -> communications(kept)) isa InvalidStateException
end

@testset "help and fix" begin
    # The mirror has the header's layout: four sp_str (LP64).
    @test isbitstype(ShardPlan.SpFixOperation)
    if Sys.WORD_SIZE == 64
        @test sizeof(ShardPlan.SpFixOperation) == 64
        @test [fieldoffset(ShardPlan.SpFixOperation, k) for k in 1:4] == [0, 16, 32, 48]
    end
    @test length(TYPOS) >= 3 && "unknown-axis.typo" in TYPOS

    # A misspelt mesh axis: a "move" (a rename of the member).
    res = check(parse_document(golden_text("unknown-axis.typo.fail")))
    ds = diagnostics(res)
    @test length(ds) == 1
    d = ds[1]
    @test d.code == "unknown-axis"
    @test d.help == "did you mean 'dp'? (the mesh's axes are 'dp', 'tp')"
    @test d.fix isa Vector{FixOperation}
    @test d.fix == [FixOperation("move", "/providers/sharding/proj/params/weight/dp",
                                 "/providers/sharding/proj/params/weight/pd", nothing)]
    # What `shardplan check --format json` and sp_result_json say.
    j = parse_json(result_json(res))["diagnostics"][1]
    @test j["help"] == d.help
    @test length(j["fix"]) == 1
    @test j["fix"][1]["op"] == "move"
    @test j["fix"][1]["from"] == d.fix[1].from && j["fix"][1]["path"] == d.fix[1].path
    @test !haskey(j["fix"][1], "value")
    # Diagnostics compare and hash by value (their fix is a vector).
    @test diagnostic(res, 1) == d
    @test hash(diagnostic(res, 1)) == hash(d)

    # A misspelt parallel axis: a "replace" whose value is JSON text.
    res = check(parse_document(golden_text("parallel-unknown-axis.typo.fail")))
    d = diagnostic(res, 1)
    @test d.code == "parallel-unknown-axis"
    @test d.help == "did you mean 'tp'? (the mesh's axes are 'tp')"
    @test length(d.fix) == 1
    op = d.fix[1]
    @test (op.op, op.path, op.from, op.value) ==
          ("replace", "/modules/linear/parallel/axes/0", nothing, "\"tp\"")
    j = parse_json(result_json(res))["diagnostics"][1]
    @test parse_json(op.value) == j["fix"][1]["value"] == "tp"
    @test j["help"] == d.help && !haskey(j["fix"][1], "from")

    # A diagnostic without help or fix (the result JSON has neither key).
    res = check(parse_document(golden_text("unknown-parameter.typo.fail")))
    ds = diagnostics(res)
    @test [x.code for x in ds] == ["unknown-parameter", "omitted-parameters"]
    @test ds[1].help == "did you mean 'proj.weight'?"
    @test ds[1].fix == [FixOperation("move", "/providers/sharding/proj/params/weight",
                                     "/providers/sharding/proj/params/weigth", nothing)]
    @test ds[2].help === nothing
    @test isempty(ds[2].fix) && ds[2].fix isa Vector{FixOperation}
    js = parse_json(result_json(res))["diagnostics"]
    @test !haskey(js[2], "help") && !haskey(js[2], "fix")

    # Every typo case: each diagnostic's help and fix equal the result JSON's.
    for name in TYPOS
        res = check(parse_document(golden_text(name * ".fail")))
        ds = diagnostics(res)
        js = parse_json(result_json(res))["diagnostics"]
        @test length(ds) == length(js)
        @test ds[1].help !== nothing && !isempty(ds[1].fix)
        for (x, w) in zip(ds, js)
            @test x.code == w["code"]
            @test x.help == get(w, "help", nothing)
            want = get(w, "fix", Any[])
            @test length(x.fix) == length(want)
            for (o, wo) in zip(x.fix, want)
                @test o.op == wo["op"] && o.path == wo["path"]
                @test o.from == get(wo, "from", nothing)
                @test (o.value === nothing ? nothing : parse_json(o.value)) == get(wo, "value", nothing)
            end
        end
    end

    # An over-wide glob: one fix (narrow the pattern) on each of its six diagnostics.
    res = check(parse_document(golden_text("overlapping-communication.glob.fail")))
    overlapping = [x for x in diagnostics(res) if x.code == "overlapping-communication"]
    @test length(overlapping) == 6
    @test all(x -> x.fix == overlapping[1].fix && x.help == overlapping[1].help, overlapping)
    op = overlapping[1].fix[1]
    @test op.op == "replace" && op.path == "/providers/native/0/match"
    @test parse_json(op.value) == ["layers.*.mlp.experts.[0-9]"]

    # The conformance errors have none; the constructor of six fields makes none.
    for x in diagnostics(check(parse_document(case_text("001-multiple-owners"))))
        @test x.help === nothing && isempty(x.fix)
    end
    plain = Diagnostic("c", SEVERITY_ERROR, "m", nothing, nothing, nothing)
    @test plain.help === nothing && plain.fix == FixOperation[]
    @test plain == Diagnostic("c", SEVERITY_ERROR, "m", nothing, nothing, nothing)
end

@testset "groups" begin
    # The mirror has the header's layout (LP64): the Cint severity padded to 8 bytes.
    @test isbitstype(ShardPlan.SpDiagnosticGroup)
    if Sys.WORD_SIZE == 64
        @test sizeof(ShardPlan.SpDiagnosticGroup) == 64
        @test [fieldoffset(ShardPlan.SpDiagnosticGroup, k) for k in 1:6] == [0, 16, 24, 40, 48, 56]
    end

    res = check(parse_document(golden_text("overlapping-communication.glob.fail")))
    gs = groups(res)
    @test gs isa Vector{DiagnosticGroup}
    @test group_count(res) == length(gs) == 9
    @test gs[1] == DiagnosticGroup("overlapping-communication", SEVERITY_ERROR,
                                   "/providers/native/0/parallel", 6, [1, 2, 3, 4, 5, 6])
    # listed is 1-based, for `diagnostic` (the C API and the JSON count from 0).
    @test [(g.code, g.count, g.listed) for g in gs] == [
        ("overlapping-communication", 6, [1, 2, 3, 4, 5, 6]),
        ("unknown-forward-input", 6, [7, 8, 9, 10, 11, 12]),
        ("nested-duplicate", 2, [13, 28]),
        ("nested-duplicate", 2, [14, 29]),
        ("nested-duplicate", 2, [15, 30]),
        ("unknown-parameter", 6, [16, 20, 24, 31, 35, 39]),
        ("unknown-parameter", 6, [17, 21, 25, 32, 36, 40]),
        ("unknown-parameter", 6, [18, 22, 26, 33, 37, 41]),
        ("omitted-parameters", 6, [19, 23, 27, 34, 38, 42]),
    ]
    @test gs[3].pointer == "/providers/native/0/sharding/params/gate_proj.weight"
    @test group(res, 1) == gs[1] && group(res, 9) == gs[9]
    @test hash(group(res, 3)) == hash(gs[3])

    # What `shardplan check --format json` and sp_result_json say.
    js = parse_json(result_json(res))["groups"]
    @test length(js) == length(gs)
    for (g, j) in zip(gs, js)
        @test g.code == j["code"]
        @test SEVERITY_NAMES[g.severity] == j["severity"]
        @test g.pointer == j["pointer"]
        @test g.count == j["count"]
        @test g.listed .- 1 == j["listed"]
    end

    # Every diagnostic is in exactly one group, with the group's code and pointer.
    ds = diagnostics(res)
    @test sort(vcat([g.listed for g in gs]...)) == collect(1:diagnostic_count(res)) == collect(1:42)
    for g in gs
        @test g.count == length(g.listed)
        @test all(x -> x.code == g.code && x.pointer == g.pointer && x.severity == g.severity,
                  ds[g.listed])
    end

    # An index past the end is the library's OUT_OF_RANGE (its message counts from 0).
    err = caught(() -> group(res, 10))
    @test err isa ShardPlanError
    @test err.code == ERROR_OUT_OF_RANGE
    @test err.message == "group index 9 out of range (the result has 9)"
    @test caught(() -> group(res, 0)).code == ERROR_OUT_OF_RANGE

    # One diagnostic, one group; the typo documents' groups equal the JSON's.
    for name in TYPOS
        r = check(parse_document(golden_text(name * ".fail")))
        g = group(r, 1)
        j = parse_json(result_json(r))["groups"][1]
        @test g.listed == [1] && g.count == 1
        @test (g.code, g.pointer) == (j["code"], j["pointer"])
        @test g.code == diagnostic(r, 1).code
    end

    # No diagnostic, no group; a planning warning is a group of severity warning.
    ok = check(parse_document(case_text("000-tiny-llama")))
    @test isok(ok) && group_count(ok) == 0 && isempty(groups(ok))
    @test caught(() -> group(ok, 1)).code == ERROR_OUT_OF_RANGE
    uneven = plan(parse_document(UNEVEN_DOC))
    @test groups(uneven) == [DiagnosticGroup("uneven-shard", SEVERITY_WARNING,
                                             diagnostic(uneven, 1).pointer, 1, [1])]

    # Closed results are never passed to the library.
    close(res)
    @test caught(() -> groups(res)) isa InvalidStateException
    @test caught(() -> group_count(res)) isa InvalidStateException
    @test caught(() -> diagnostic(res, 1)) isa InvalidStateException
end

@testset "training" begin
    # The mirror has the header's layout (LP64): fifteen 8-byte fields, the double 13th.
    @test isbitstype(ShardPlan.SpTraining)
    if Sys.WORD_SIZE == 64
        @test sizeof(ShardPlan.SpTraining) == 120
        @test [fieldoffset(ShardPlan.SpTraining, k) for k in 1:15] == collect(0:8:112)
        @test fieldoffset(ShardPlan.SpTraining, 13) == 96   # mean_total_bytes
    end
    categories = (:params, :grads, :master, :optimizer, :gathered, :activations, :total)

    # A dp=2 x tp=4 mesh, zero 0 with a float32 master copy and selective recompute: 423,624,704
    # bytes on every device, over its 384 MiB of device_memory. Expected (the same C calls made
    # through Python ctypes): device 0 at (0, 0), every value equal to the JSON's.
    res = plan(parse_document(golden_text("exceeds-device-memory.fail")))
    @test !isok(res)
    @test [d.code for d in diagnostics(res)] == ["exceeds-device-memory"]
    @test diagnostic(res, 1).pointer == "/training/device_memory"
    t = training(res)
    @test t isa TrainingMemory
    j = parse_json(result_json(res))["memory"]["training"]
    w = j["worst"]
    @test t.worst_device == w["device"] == 0
    # The JSON keys the coordinates by mesh axis; the binding lists them in mesh order.
    @test t.worst_coordinates == [w["coordinates"]["dp"], w["coordinates"]["tp"]] == [0, 0]
    @test length(w["coordinates"]) == 2
    for key in categories
        @test getfield(t, key) == w[String(key)]
    end
    @test t.total == 423624704 > 384 * 2^20
    @test t.total == t.params + t.grads + t.master + t.optimizer + t.gathered + t.activations
    @test (t.params, t.grads, t.master, t.optimizer, t.gathered, t.activations) ==
          (9437184, 9437184, 18874368, 37748736, 0, 348127232)
    @test t.max_total_bytes == j["max_total_bytes"]
    @test t.min_total_bytes == j["min_total_bytes"]
    @test t.mean_total_bytes === Float64(j["mean_total_bytes"]) === 423624704.0
    @test t.per_device_total_bytes == j["per_device_total_bytes"] == fill(423624704, 8)
    @test t.per_device_total_bytes[t.worst_device + 1] == t.max_total_bytes
    @test training(res) == t && hash(training(res)) == hash(t)

    # The pass twin (512 MiB) fits.
    fits = plan(parse_document(golden_text("exceeds-device-memory.pass")))
    @test isok(fits)
    @test training(fits).max_total_bytes == 423624704 <= 512 * 2^20

    # No training section, or no plan made: nothing.
    planned = plan(parse_document(PLAN_DOC))
    @test memory(planned) isa PlanMemory && training(planned) === nothing
    @test !haskey(parse_json(result_json(planned))["memory"], "training")
    @test training(check(parse_document(golden_text("exceeds-device-memory.fail")))) === nothing
    @test training(plan(parse_document("{not json"))) === nothing

    # Per-device totals are listed up to 65,536 devices, nothing past them (the JSON's null).
    text = golden_text("exceeds-device-memory.fail")
    for (dp, listed) in ((16384, true), (16385, false))
        big = training(plan(parse_document(replace(text, "\"dp\": 2," => "\"dp\": $dp,"))))
        @test big.max_total_bytes == 423624704
        @test (big.per_device_total_bytes !== nothing) == listed
        listed && @test length(big.per_device_total_bytes) == dp * 4
    end

    # The builder's training section: refused when invalid (nothing changes), then once.
    b = Builder()
    add_axis!(b, "dp", 4)
    add_module!(b, "root"; type = "Model")
    set_root!(b, "root")
    err = caught(() -> set_training!(b, "{\"zero\": 4}"))
    @test err isa ShardPlanError
    @test err.code == ERROR_INVALID_ARGUMENT
    @test err.message == "'zero' must be an integer from 0 to 3 (at /training/zero)"
    @test caught(() -> set_training!(b, "[]")).message ==
          "expected an object, got an array (at /training)"
    @test !occursin("\"training\"", to_json(b))
    @test set_training!(b, "{\"zero\": 3, \"shard_axes\": [\"dp\"]}") === b
    err = caught(() -> set_training!(b, "{}"))
    @test err isa ShardPlanError
    @test err.code == ERROR_INVALID_ARGUMENT
    @test err.message == "the document already has a training section"
    section = parse_json(to_json(b))["training"]
    @test section["zero"] == 3 && section["shard_axes"] == ["dp"]
    @test isok(check(build_document(b)))
    # What depends on the mesh is checked when the document is built.
    other = Builder()
    add_module!(other, "root")
    set_root!(other, "root")
    set_training!(other, Vector{UInt8}(codeunits("{\"shard_axes\": [\"dp\"]}")))
    bad = check(build_document(other))
    @test diagnostic(bad, 1).code == "invalid-document"
    @test occursin("shard axis 'dp' is not a mesh axis", diagnostic(bad, 1).message)

    # A built model with a training section plans as its JSON twin.
    small = Builder()
    add_axis!(small, "dp", 2)
    add_parameter!(small, "w"; shape = [4, 4], dtype = "bfloat16")
    add_module!(small, "root")
    add_module!(small, "lin"; type = "Linear")
    add_child!(small, "root", "lin", "lin")
    add_forward_arg!(small, "lin", "x")
    add_module_param!(small, "lin", "weight", "w")
    set_root!(small, "root")
    set_training!(small, "{\"zero\": 1, \"master_dtype\": \"float32\", \"device_memory\": 256}")
    built = plan(build_document(small))
    @test result_json(built) == result_json(plan(parse_document(to_json(small))))
    st = training(built)
    @test st.worst_coordinates == [0]
    @test (st.params, st.grads, st.master, st.optimizer) == (32, 32, 32, 64)

    # Copied out: the values stay after close; a closed result is never passed to the library.
    close(res)
    @test t.per_device_total_bytes == fill(423624704, 8)
    @test caught(() -> training(res)) isa InvalidStateException
end

end # testset ShardPlan
