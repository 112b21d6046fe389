#!/usr/bin/env python3
"""Self-tests of check_ccalls.py: the real sources pass, and every kind of drift is reported.

Run with `python3 test_check_ccalls.py` (unittest) or `python3 -m pytest test_check_ccalls.py`.
The header and Julia sources are SHARDPLAN_HEADER and SHARDPLAN_JULIA_SOURCES (os.pathsep
separated) when set, else found relative to this file (../src/*.jl, ../../../capi/include/...).
"""

import contextlib
import glob
import io
import os
import re
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import check_ccalls  # noqa: E402

HEADER_PATH = os.environ.get("SHARDPLAN_HEADER") or os.path.join(
    HERE, "..", "..", "..", "capi", "include", "shardplan", "shardplan.h")
SOURCE_PATHS = [p for p in os.environ.get("SHARDPLAN_JULIA_SOURCES", "").split(os.pathsep) if p] \
    or sorted(glob.glob(os.path.join(HERE, "..", "src", "*.jl")))
MAIN = [p for p in SOURCE_PATHS if p.endswith("ShardPlan.jl")][0]


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


HEADER = read(HEADER_PATH)
SOURCES = {p: read(p) for p in SOURCE_PATHS}


FIX_AND_GROUP_FUNCTIONS = ("sp_result_diagnostic_help", "sp_result_diagnostic_fix_count",
                           "sp_result_diagnostic_fix", "sp_result_group_count", "sp_result_group")
TRAINING_FUNCTIONS = ("sp_result_training", "sp_builder_set_training")


def replace_once(text, old, new):
    """text with the single occurrence of old replaced (fails the test if not exactly one)."""
    count = text.count(old)
    if count != 1:
        raise AssertionError("%r occurs %d times, expected once" % (old, count))
    return text.replace(old, new)


class CheckerTest(unittest.TestCase):
    def run_check(self, header=HEADER, main=None, not_wrapped=None):
        sources = dict(SOURCES)
        if main is not None:
            sources[MAIN] = main
        return check_ccalls.check(header, sources, not_wrapped=not_wrapped,
                                  header_path=HEADER_PATH)[0]

    def assertReported(self, pattern, **kwargs):
        problems = self.run_check(**kwargs)
        self.assertTrue(any(re.search(pattern, p) for p in problems),
                        "no problem matches %r; got:\n  %s" % (pattern, "\n  ".join(problems)))
        return problems

    def mutate(self, old, new):
        return replace_once(SOURCES[MAIN], old, new)

    # ---- the real sources ---------------------------------------------------------------------

    def test_real_sources_pass(self):
        problems, summary = check_ccalls.check(HEADER, SOURCES, header_path=HEADER_PATH)
        self.assertEqual(problems, [], "\n".join(problems))
        header = check_ccalls.Header(HEADER)
        calls = [c for p, t in SOURCES.items() for c in check_ccalls.find_ccalls(p, t)[0]]
        self.assertGreaterEqual(len(header.functions), 30)
        self.assertEqual({c.name for c in calls} | set(check_ccalls.NOT_WRAPPED),
                         set(header.functions))
        self.assertIn("13 structs and 3 enums", summary)
        # The fix-it and group accessors of library 0.7 are wrapped, not listed as not wrapped.
        for name in FIX_AND_GROUP_FUNCTIONS + TRAINING_FUNCTIONS:
            self.assertIn(name, {c.name for c in calls})
            self.assertNotIn(name, check_ccalls.NOT_WRAPPED)

    def test_planning_structs_read_from_the_header(self):
        # The checker reads the planning structs field by field, in order (sp_memory: six
        # 8-byte scalars, the double fifth, then a pointer and a size_t).
        header = check_ccalls.Header(HEADER)
        self.assertEqual(header.problems, [])
        fields = lambda name: [(f, t.base, t.depth) for f, t in header.structs[name]]
        self.assertEqual(fields("sp_memory"),
                         [("devices", "uint64_t", 0), ("unsharded_bytes", "uint64_t", 0),
                          ("max_bytes", "uint64_t", 0), ("min_bytes", "uint64_t", 0),
                          ("mean_bytes", "double", 0), ("max_device", "uint64_t", 0),
                          ("per_device_bytes", "uint64_t", 1), ("num_devices_listed", "size_t", 0)])
        self.assertEqual(fields("sp_plan_entry"), [("fqn", "sp_str", 0), ("provenance", "sp_str", 0)])
        self.assertEqual([f for f, _, _ in fields("sp_communication")],
                         ["fqn", "port", "axis", "from", "to", "collective"])
        structs = check_ccalls.find_structs(MAIN, SOURCES[MAIN])
        self.assertEqual(structs["SpMemory"][1],
                         [("devices", "UInt64"), ("unsharded_bytes", "UInt64"),
                          ("max_bytes", "UInt64"), ("min_bytes", "UInt64"),
                          ("mean_bytes", "Cdouble"), ("max_device", "UInt64"),
                          ("per_device_bytes", "Ptr{UInt64}"), ("num_devices_listed", "Csize_t")])

    def test_fix_and_group_structs_read_from_the_header(self):
        # sp_fix_operation: four sp_str; sp_diagnostic_group: an sp_str, the enum, an sp_str, a
        # size_t, a `const size_t *` and a size_t.
        header = check_ccalls.Header(HEADER)
        fields = lambda name: [(f, t.base, t.depth) for f, t in header.structs[name]]
        self.assertEqual(fields("sp_fix_operation"),
                         [("op", "sp_str", 0), ("path", "sp_str", 0), ("from", "sp_str", 0),
                          ("value", "sp_str", 0)])
        self.assertEqual(fields("sp_diagnostic_group"),
                         [("code", "sp_str", 0), ("severity", "sp_severity", 0),
                          ("pointer", "sp_str", 0), ("count", "size_t", 0), ("listed", "size_t", 1),
                          ("num_listed", "size_t", 0)])
        structs = check_ccalls.find_structs(MAIN, SOURCES[MAIN])
        self.assertEqual(structs["SpFixOperation"][1],
                         [("op", "SpStr"), ("path", "SpStr"), ("from", "SpStr"), ("value", "SpStr")])
        self.assertEqual(structs["SpDiagnosticGroup"][1],
                         [("code", "SpStr"), ("severity", "Cint"), ("pointer", "SpStr"),
                          ("count", "Csize_t"), ("listed", "Ptr{Csize_t}"), ("num_listed", "Csize_t")])
        for name in FIX_AND_GROUP_FUNCTIONS:
            self.assertIn(name, header.functions)

    def test_training_struct_read_from_the_header(self):
        # sp_training (library 0.9): a uint64_t, a `const uint64_t *` and a size_t, nine
        # uint64_t, the double, then a `const uint64_t *` and a size_t.
        header = check_ccalls.Header(HEADER)
        fields = [(f, t.base, t.depth) for f, t in header.structs["sp_training"]]
        self.assertEqual(fields,
                         [("worst_device", "uint64_t", 0), ("worst_coordinates", "uint64_t", 1),
                          ("num_axes", "size_t", 0), ("params", "uint64_t", 0),
                          ("grads", "uint64_t", 0), ("master", "uint64_t", 0),
                          ("optimizer", "uint64_t", 0), ("gathered", "uint64_t", 0),
                          ("activations", "uint64_t", 0), ("total", "uint64_t", 0),
                          ("max_total_bytes", "uint64_t", 0), ("min_total_bytes", "uint64_t", 0),
                          ("mean_total_bytes", "double", 0),
                          ("per_device_total_bytes", "uint64_t", 1),
                          ("num_devices_listed", "size_t", 0)])
        structs = check_ccalls.find_structs(MAIN, SOURCES[MAIN])
        julia = {"uint64_t": "UInt64", "size_t": "Csize_t", "double": "Cdouble"}
        self.assertEqual(structs["SpTraining"][1],
                         [(f, "Ptr{UInt64}" if depth else julia[base]) for f, base, depth in fields])
        for name in TRAINING_FUNCTIONS:
            self.assertIn(name, header.functions)

    def test_main_exit_status(self):
        with contextlib.redirect_stdout(io.StringIO()) as out:
            status = check_ccalls.main(["--header", HEADER_PATH] + SOURCE_PATHS)
        self.assertEqual(status, 0, out.getvalue())
        self.assertTrue(out.getvalue().startswith("OK: "))

    # ---- ccall drift --------------------------------------------------------------------------

    def test_wrong_argument_type(self):
        main = self.mutate("(Ptr{Cvoid}, SpStr, Int64), p, _spstr(name), devices",
                           "(Ptr{Cvoid}, SpStr, Int32), p, _spstr(name), devices")
        self.assertReported(r"ccall sp_builder_add_axis: argument 3 \(size\) is Int32, C has int64_t",
                            main=main)

    def test_wrong_pointer_argument_type(self):
        main = self.mutate("(Ptr{Cvoid}, Ptr{Csize_t}), p, out)", "(Ptr{Cvoid}, Ptr{Cint}), p, out)")
        self.assertReported(r"sp_result_diagnostic_count: argument 2 \(out_count\) is Ptr\{Cint\}",
                            main=main)

    def test_handle_passed_for_struct_pointer(self):
        main = self.mutate("(Ptr{Cvoid}, Ptr{SpStr}), p, out)\n    _check_error(err)\n    return GC.@preserve b",
                           "(Ptr{Cvoid}, Ptr{Cvoid}), p, out)\n    _check_error(err)\n    return GC.@preserve b")
        self.assertReported(r"sp_builder_to_json: argument 2 \(out_json\) is Ptr\{Cvoid\}", main=main)

    def test_wrong_return_type(self):
        main = self.mutate("ccall((:sp_abi_version, libshardplan[]), UInt32, ())",
                           "ccall((:sp_abi_version, libshardplan[]), Int64, ())")
        self.assertReported(r"ccall sp_abi_version: return type Int64 does not match C uint32_t",
                            main=main)

    def test_error_return_is_a_pointer(self):
        main = self.mutate("ccall((:sp_layout_declare, libshardplan[]), Ptr{Cvoid},",
                           "ccall((:sp_layout_declare, libshardplan[]), Cint,")
        self.assertReported(r"sp_layout_declare: return type Cint does not match C sp_error \*",
                            main=main)

    def test_missing_argument(self):
        main = self.mutate("(Ptr{Cvoid}, Cint), p, Cint(port))", "(Ptr{Cvoid},), p)")
        self.assertReported(r"ccall sp_layout_declare: 1 argument types for the 2 parameters",
                            main=main)

    def test_extra_argument(self):
        main = self.mutate("(Ptr{Cvoid}, Cint), p, Cint(port))",
                           "(Ptr{Cvoid}, Cint, Cint), p, Cint(port), Cint(0))")
        self.assertReported(r"ccall sp_layout_declare: 3 argument types for the 2 parameters",
                            main=main)

    def test_values_do_not_match_types(self):
        main = self.mutate("(Ptr{Cvoid}, Cint), p, Cint(port))", "(Ptr{Cvoid}, Cint), p)")
        self.assertReported(r"ccall sp_layout_declare: passes 1 values for 2 argument types",
                            main=main)

    def test_one_type_without_trailing_comma(self):
        main = self.mutate("(:sp_builder_declare_plan, libshardplan[]), Ptr{Cvoid},\n"
                           "                               (Ptr{Cvoid},), p)",
                           "(:sp_builder_declare_plan, libshardplan[]), Ptr{Cvoid},\n"
                           "                               (Ptr{Cvoid}), p)")
        self.assertReported(r"sp_builder_declare_plan: \(Ptr\{Cvoid\}\) is not a tuple", main=main)

    def test_unknown_function(self):
        main = self.mutate("(:sp_result_ok, libshardplan[])", "(:sp_result_okay, libshardplan[])")
        problems = self.assertReported(r"ccall sp_result_okay: no such function", main=main)
        self.assertTrue(any("sp_result_ok is neither called" in p for p in problems), problems)

    def test_other_library(self):
        main = self.mutate("(:sp_result_ok, libshardplan[])", '(:sp_result_ok, "libshardplan")')
        self.assertReported(r'ccall sp_result_ok: library is "libshardplan", expected libshardplan\[\]',
                            main=main)

    def test_function_pointer_ccall_refused(self):
        main = SOURCES[MAIN] + "\nf(p) = ccall(p, Cvoid, ())\n"
        self.assertReported(r"first argument must be \(:name, libshardplan\[\]\)", main=main)

    def test_at_ccall_refused(self):
        main = SOURCES[MAIN] + "\ng() = @ccall libshardplan[].sp_abi_version()::UInt32\n"
        self.assertReported(r"@ccall is not checked", main=main)

    def test_comments_and_strings_are_ignored(self):
        main = SOURCES[MAIN] + (
            '\n# ccall((:sp_bogus, libshardplan[]), Cvoid, ())\n'
            '#= ccall((:sp_bogus2, libshardplan[]), Cvoid, ()) =#\n'
            'const _S = "ccall((:sp_bogus3, libshardplan[]), Cvoid, ()) $(string(\'(\'))"\n')
        self.assertEqual(self.run_check(main=main), [])

    def test_planning_ccall_argument_types(self):
        main = self.mutate("(Ptr{Cvoid}, Ptr{SpMemory}, Ptr{Cint}), p, out, present)",
                           "(Ptr{Cvoid}, Ptr{SpStr}, Ptr{Cint}), p, out, present)")
        self.assertReported(r"ccall sp_result_memory: argument 2 \(out_memory\) is Ptr\{SpStr\}, "
                            r"C has sp_memory \*", main=main)
        main = self.mutate("(Ptr{Cvoid}, Ptr{SpMemory}, Ptr{Cint}), p, out, present)",
                           "(Ptr{Cvoid}, Ptr{SpMemory}, Ptr{Csize_t}), p, out, present)")
        self.assertReported(r"ccall sp_result_memory: argument 3 \(out_present\) is Ptr\{Csize_t\}",
                            main=main)
        main = self.mutate("(Ptr{Cvoid}, Csize_t, Ptr{SpPlanEntry}), p, i - 1, out)",
                           "(Ptr{Cvoid}, Cint, Ptr{SpPlanEntry}), p, i - 1, out)")
        self.assertReported(r"ccall sp_result_plan_entry: argument 2 \(index\) is Cint, C has size_t",
                            main=main)
        main = self.mutate("(Ptr{Cvoid}, Csize_t, Ptr{SpCommunication}), p, i - 1, out)",
                           "(Ptr{Cvoid}, Csize_t, Ptr{SpPlanEntry}), p, i - 1, out)")
        self.assertReported(r"ccall sp_result_communication: argument 3 \(out_record\) is "
                            r"Ptr\{SpPlanEntry\}, C has sp_communication \*", main=main)

    def test_fix_and_group_ccall_argument_types(self):
        main = self.mutate("(Ptr{Cvoid}, Csize_t, Ptr{SpStr}), p, i - 1, out)",
                           "(Ptr{Cvoid}, Csize_t, Ptr{Cstring}), p, i - 1, out)")
        self.assertReported(r"ccall sp_result_diagnostic_help: argument 3 \(out_help\) is "
                            r"Ptr\{Cstring\}, C has sp_str \*", main=main)
        main = self.mutate("(Ptr{Cvoid}, Csize_t, Ptr{Csize_t}), p, i - 1, n)",
                           "(Ptr{Cvoid}, Csize_t, Ptr{Cint}), p, i - 1, n)")
        self.assertReported(r"ccall sp_result_diagnostic_fix_count: argument 3 \(out_count\) is "
                            r"Ptr\{Cint\}", main=main)
        main = self.mutate("(Ptr{Cvoid}, Csize_t, Csize_t, Ptr{SpFixOperation}),",
                           "(Ptr{Cvoid}, Csize_t, Cint, Ptr{SpFixOperation}),")
        self.assertReported(r"ccall sp_result_diagnostic_fix: argument 3 \(operation\) is Cint, "
                            r"C has size_t", main=main)
        main = self.mutate("(Ptr{Cvoid}, Csize_t, Csize_t, Ptr{SpFixOperation}),",
                           "(Ptr{Cvoid}, Csize_t, Ptr{SpFixOperation}),")
        self.assertReported(r"ccall sp_result_diagnostic_fix: 3 argument types for the 4 parameters",
                            main=main)
        main = self.mutate("(Ptr{Cvoid}, Csize_t, Ptr{SpDiagnosticGroup}), p, i - 1, out)",
                           "(Ptr{Cvoid}, Csize_t, Ptr{SpDiagnostic}), p, i - 1, out)")
        self.assertReported(r"ccall sp_result_group: argument 3 \(out_group\) is "
                            r"Ptr\{SpDiagnostic\}, C has sp_diagnostic_group \*", main=main)
        main = self.mutate("ccall((:sp_result_group_count, libshardplan[])",
                           "ccall((:sp_result_diagnostic_count, libshardplan[])")
        self.assertReported(r"sp_result_group_count is neither called by the binding", main=main)

    def test_training_ccall_argument_types(self):
        main = self.mutate("(Ptr{Cvoid}, Ptr{SpTraining}, Ptr{Cint}), p, out, present)",
                           "(Ptr{Cvoid}, Ptr{SpMemory}, Ptr{Cint}), p, out, present)")
        self.assertReported(r"ccall sp_result_training: argument 2 \(out_training\) is "
                            r"Ptr\{SpMemory\}, C has sp_training \*", main=main)
        main = self.mutate("(Ptr{Cvoid}, Ptr{SpTraining}, Ptr{Cint}), p, out, present)",
                           "(Ptr{Cvoid}, Ptr{SpTraining}), p, out)")
        self.assertReported(r"ccall sp_result_training: 2 argument types for the 3 parameters",
                            main=main)
        main = self.mutate("(Ptr{Cvoid}, SpStr), p, _spstr(data))",
                           "(Ptr{Cvoid}, Cstring), p, _spstr(data))")
        self.assertReported(r"ccall sp_builder_set_training: argument 2 \(json\) is Cstring, "
                            r"C has sp_str", main=main)
        main = self.mutate("ccall((:sp_builder_set_training, libshardplan[])",
                           "ccall((:sp_builder_set_pipeline, libshardplan[])")
        self.assertReported(r"sp_builder_set_training is neither called by the binding", main=main)
        main = self.mutate("ccall((:sp_result_training, libshardplan[])",
                           "ccall((:sp_result_memory, libshardplan[])")
        self.assertReported(r"sp_result_training is neither called by the binding", main=main)

    def test_plan_calling_check_reported(self):
        main = self.mutate("ccall((:sp_document_plan, libshardplan[])",
                           "ccall((:sp_document_check, libshardplan[])")
        self.assertReported(r"sp_document_plan is neither called by the binding", main=main)

    # ---- coverage -----------------------------------------------------------------------------

    def test_uncalled_function_reported(self):
        main = self.mutate('library_version() = unsafe_string(ccall((:sp_version_string, libshardplan[]), Cstring, ()))',
                           'library_version() = "0.4.0"')
        self.assertReported(r"sp_version_string is neither called by the binding nor listed", main=main)

    def test_not_wrapped_list(self):
        main = self.mutate('library_version() = unsafe_string(ccall((:sp_version_string, libshardplan[]), Cstring, ()))',
                           'library_version() = "0.4.0"')
        reason = dict(check_ccalls.NOT_WRAPPED, sp_version_string="the package version says it")
        self.assertEqual(self.run_check(main=main, not_wrapped=reason), [])
        self.assertReported(r"sp_version_string is listed as not wrapped .* but is called",
                            not_wrapped=reason)
        self.assertReported(r"NOT_WRAPPED lists sp_gone", not_wrapped={"sp_gone": "removed"})

    def test_new_header_function_reported(self):
        header = replace_once(HEADER, "SP_API sp_error *sp_builder_set_root(",
                              "SP_API sp_error *sp_builder_clear(sp_builder *builder);\n\n"
                              "SP_API sp_error *sp_builder_set_root(")
        self.assertReported(r"sp_builder_clear is neither called", header=header)

    def test_header_parameter_changed(self):
        header = replace_once(HEADER, "sp_str name, int64_t size);", "sp_str name, int32_t size);")
        self.assertReported(r"sp_builder_add_axis: argument 3 \(size\) is Int64, C has int32_t",
                            header=header)

    def test_header_parameter_added(self):
        header = replace_once(HEADER, "sp_error *sp_builder_set_root(sp_builder *builder, sp_str module);",
                              "sp_error *sp_builder_set_root(sp_builder *builder, sp_str module,\n"
                              "                              int strict);")
        self.assertReported(r"ccall sp_builder_set_root: 2 argument types for the 3 parameters",
                            header=header)

    # ---- structs ------------------------------------------------------------------------------

    def test_struct_field_type_changed(self):
        main = self.mutate("max_json_depth::UInt32", "max_json_depth::UInt64")
        self.assertReported(r"struct SpParseOptions: field max_json_depth is UInt64, C has uint32_t",
                            main=main)

    def test_struct_field_renamed(self):
        main = self.mutate("    axes::Ptr{SpStr}\n    num_axes::Csize_t",
                           "    axes::Ptr{SpStr}\n    count::Csize_t")
        self.assertReported(r"struct SpParallelSpec: fields \(binding_kind, axes, count\) differ",
                            main=main)

    def test_struct_field_missing(self):
        main = self.mutate("    parameter::SpStr\n", "")
        self.assertReported(r"struct SpDiagnostic: fields .* differ", main=main)

    def test_struct_fields_reordered(self):
        main = self.mutate("    data::Ptr{UInt8}\n    size::Csize_t\n",
                           "    size::Csize_t\n    data::Ptr{UInt8}\n")
        self.assertReported(r"struct SpStr: fields \(size, data\) differ", main=main)

    def test_struct_ref_field_refused(self):
        main = self.mutate("    axes::Ptr{SpStr}", "    axes::Ref{SpStr}")
        self.assertReported(r"struct SpParallelSpec: field axes is Ref\{SpStr\}", main=main)

    def test_mutable_mirror_refused(self):
        main = self.mutate("struct SpCheckOptions", "mutable struct SpCheckOptions")
        self.assertReported(r"struct SpCheckOptions: must be immutable", main=main)

    def test_missing_mirror_struct(self):
        main = self.mutate("struct SpCheckOptions", "struct CheckOptions")
        self.assertReported(r"C struct sp_check_options has no Julia struct SpCheckOptions", main=main)

    def test_header_struct_field_added(self):
        header = replace_once(HEADER, "  uint32_t threads;\n", "  uint32_t threads;\n  uint32_t seed;\n")
        self.assertReported(r"struct SpCheckOptions: fields \(threads\) differ from C "
                            r"sp_check_options \(threads, seed\)", header=header)

    def test_memory_double_field(self):
        # mean_bytes is a C double: an integer or a single-precision mirror is reported.
        for wrong in ("UInt64", "Float32", "Cfloat", "Int64"):
            main = self.mutate("    mean_bytes::Cdouble", "    mean_bytes::" + wrong)
            self.assertReported(r"struct SpMemory: field mean_bytes is %s, C has double" % wrong,
                                main=main)
        # Float64 is the same type as Cdouble.
        main = self.mutate("    mean_bytes::Cdouble", "    mean_bytes::Float64")
        self.assertEqual(self.run_check(main=main), [])

    def test_memory_uint64_fields(self):
        main = self.mutate("    max_device::UInt64", "    max_device::UInt32")
        self.assertReported(r"struct SpMemory: field max_device is UInt32, C has uint64_t", main=main)
        main = self.mutate("    devices::UInt64\n    unsharded_bytes",
                           "    devices::Int64\n    unsharded_bytes")
        self.assertReported(r"struct SpMemory: field devices is Int64, C has uint64_t", main=main)
        main = self.mutate("    per_device_bytes::Ptr{UInt64}\n    num_devices_listed::Csize_t",
                           "    per_device_bytes::Ptr{UInt64}\n    num_devices_listed::UInt32")
        self.assertReported(r"struct SpMemory: field num_devices_listed is UInt32, C has size_t",
                            main=main)

    def test_memory_pointer_field(self):
        main = self.mutate("    per_device_bytes::Ptr{UInt64}", "    per_device_bytes::Ptr{Int64}")
        self.assertReported(r"struct SpMemory: field per_device_bytes is Ptr\{Int64\}, "
                            r"C has const uint64_t \*", main=main)
        main = self.mutate("    per_device_bytes::Ptr{UInt64}", "    per_device_bytes::Ref{UInt64}")
        self.assertReported(r"struct SpMemory: field per_device_bytes is Ref\{UInt64\}", main=main)
        main = self.mutate("    per_device_bytes::Ptr{UInt64}", "    per_device_bytes::UInt64")
        self.assertReported(r"struct SpMemory: field per_device_bytes is UInt64", main=main)

    def test_memory_fields_reordered_or_missing(self):
        # The double moved after max_device: same types, different layout.
        main = self.mutate("    mean_bytes::Cdouble\n    max_device::UInt64\n",
                           "    max_device::UInt64\n    mean_bytes::Cdouble\n")
        self.assertReported(r"struct SpMemory: fields \(devices, unsharded_bytes, max_bytes, "
                            r"min_bytes, max_device, mean_bytes, per_device_bytes, "
                            r"num_devices_listed\) differ from C sp_memory", main=main)
        main = self.mutate("    per_device_bytes::Ptr{UInt64}\n    num_devices_listed::Csize_t\n",
                           "    per_device_bytes::Ptr{UInt64}\n")
        self.assertReported(r"struct SpMemory: fields .* differ from C sp_memory", main=main)
        main = self.mutate("struct SpMemory\n", "mutable struct SpMemory\n")
        self.assertReported(r"struct SpMemory: must be immutable", main=main)

    def test_training_mirror(self):
        # mean_total_bytes is the one C double of sp_training.
        for wrong in ("UInt64", "Float32", "Int64"):
            main = self.mutate("    mean_total_bytes::Cdouble", "    mean_total_bytes::" + wrong)
            self.assertReported(r"struct SpTraining: field mean_total_bytes is %s, C has double"
                                % wrong, main=main)
        main = self.mutate("    mean_total_bytes::Cdouble", "    mean_total_bytes::Float64")
        self.assertEqual(self.run_check(main=main), [])
        main = self.mutate("    worst_coordinates::Ptr{UInt64}", "    worst_coordinates::Ptr{Int64}")
        self.assertReported(r"struct SpTraining: field worst_coordinates is Ptr\{Int64\}, "
                            r"C has const uint64_t \*", main=main)
        main = self.mutate("    worst_coordinates::Ptr{UInt64}", "    worst_coordinates::Vector{UInt64}")
        self.assertReported(r"struct SpTraining: field worst_coordinates is Vector\{UInt64\}",
                            main=main)
        main = self.mutate("    worst_coordinates::Ptr{UInt64}\n    num_axes::Csize_t\n",
                           "    worst_coordinates::Ptr{UInt64}\n    num_axes::UInt32\n")
        self.assertReported(r"struct SpTraining: field num_axes is UInt32, C has size_t", main=main)
        # The coordinates left out: every later field would be read 16 bytes early.
        main = self.mutate("    worst_coordinates::Ptr{UInt64}\n    num_axes::Csize_t\n", "")
        self.assertReported(r"struct SpTraining: fields \(worst_device, params, .*\) differ from "
                            r"C sp_training \(worst_device, worst_coordinates, num_axes, params, ",
                            main=main)
        # Same types, other order: max and min swapped.
        main = self.mutate("    max_total_bytes::UInt64\n    min_total_bytes::UInt64\n",
                           "    min_total_bytes::UInt64\n    max_total_bytes::UInt64\n")
        self.assertReported(r"struct SpTraining: fields .* differ from C sp_training", main=main)
        main = self.mutate("struct SpTraining\n", "mutable struct SpTraining\n")
        self.assertReported(r"struct SpTraining: must be immutable", main=main)
        main = self.mutate("struct SpTraining\n", "struct SpTrainingMemory\n")
        self.assertReported(r"C struct sp_training has no Julia struct SpTraining", main=main)

    def test_plan_entry_mirror(self):
        main = self.mutate("    provenance::SpStr\n", "")
        self.assertReported(r"struct SpPlanEntry: fields \(fqn\) differ from C sp_plan_entry "
                            r"\(fqn, provenance\)", main=main)
        main = self.mutate("    provenance::SpStr\n", "    provenance::Ptr{UInt8}\n")
        self.assertReported(r"struct SpPlanEntry: field provenance is Ptr\{UInt8\}, C has sp_str",
                            main=main)
        main = self.mutate("struct SpPlanEntry\n", "struct PlanEntryC\n")
        self.assertReported(r"C struct sp_plan_entry has no Julia struct SpPlanEntry", main=main)

    def test_communication_mirror(self):
        main = self.mutate("    from::SpStr\n    to::SpStr\n", "    to::SpStr\n    from::SpStr\n")
        self.assertReported(r"struct SpCommunication: fields \(fqn, port, axis, to, from, collective\) "
                            r"differ", main=main)
        main = self.mutate("    from::SpStr\n    to::SpStr\n", "    from_::SpStr\n    to::SpStr\n")
        self.assertReported(r"struct SpCommunication: fields \(fqn, port, axis, from_, to, "
                            r"collective\) differ", main=main)
        main = self.mutate("    collective::SpStr\n", "    collective::SpStr\n    extra::SpStr\n")
        self.assertReported(r"struct SpCommunication: fields .* differ", main=main)
        main = self.mutate("struct SpCommunication\n", "struct SpCommunicationRecord\n")
        self.assertReported(r"C struct sp_communication has no Julia struct SpCommunication",
                            main=main)

    def test_fix_operation_mirror(self):
        main = self.mutate("    from::SpStr\n    value::SpStr\n", "    from_::SpStr\n    value::SpStr\n")
        self.assertReported(r"struct SpFixOperation: fields \(op, path, from_, value\) differ from "
                            r"C sp_fix_operation \(op, path, from, value\)", main=main)
        main = self.mutate("    from::SpStr\n    value::SpStr\n", "    from::SpStr\n")
        self.assertReported(r"struct SpFixOperation: fields \(op, path, from\) differ", main=main)
        main = self.mutate("    from::SpStr\n    value::SpStr\n",
                           "    from::SpStr\n    value::Ptr{UInt8}\n")
        self.assertReported(r"struct SpFixOperation: field value is Ptr\{UInt8\}, C has sp_str",
                            main=main)
        main = self.mutate("struct SpFixOperation\n", "mutable struct SpFixOperation\n")
        self.assertReported(r"struct SpFixOperation: must be immutable", main=main)

    def test_diagnostic_group_mirror(self):
        main = self.mutate("    listed::Ptr{Csize_t}\n", "    listed::Ptr{Cint}\n")
        self.assertReported(r"struct SpDiagnosticGroup: field listed is Ptr\{Cint\}, "
                            r"C has const size_t \*", main=main)
        main = self.mutate("    listed::Ptr{Csize_t}\n", "    listed::Ref{Csize_t}\n")
        self.assertReported(r"struct SpDiagnosticGroup: field listed is Ref\{Csize_t\}", main=main)
        main = self.mutate("    listed::Ptr{Csize_t}\n", "    listed::Vector{Csize_t}\n")
        self.assertReported(r"struct SpDiagnosticGroup: field listed is Vector\{Csize_t\}", main=main)
        main = self.mutate("    count::Csize_t\n    listed", "    count::Cint\n    listed")
        self.assertReported(r"struct SpDiagnosticGroup: field count is Cint, C has size_t", main=main)
        main = self.mutate("    listed::Ptr{Csize_t}\n    num_listed::Csize_t\n",
                           "    listed::Ptr{Csize_t}\n")
        self.assertReported(r"struct SpDiagnosticGroup: fields \(code, severity, pointer, count, "
                            r"listed\) differ", main=main)
        main = self.mutate("    code::SpStr\n    severity::Cint\n    pointer::SpStr\n    count",
                           "    code::SpStr\n    pointer::SpStr\n    severity::Cint\n    count")
        self.assertReported(r"struct SpDiagnosticGroup: fields \(code, pointer, severity, ", main=main)
        main = self.mutate("struct SpDiagnosticGroup\n", "struct SpGroup\n")
        self.assertReported(r"C struct sp_diagnostic_group has no Julia struct SpDiagnosticGroup",
                            main=main)

    def test_header_fix_and_group_drift(self):
        header = replace_once(HEADER, "  const size_t *listed;", "  const uint32_t *listed;")
        self.assertReported(r"struct SpDiagnosticGroup: field listed is Ptr\{Csize_t\}, "
                            r"C has const uint32_t \*", header=header)
        header = replace_once(HEADER, "  size_t num_listed;", "  size_t num_listed;\n  int truncated;")
        self.assertReported(r"struct SpDiagnosticGroup: fields .* differ from C sp_diagnostic_group "
                            r"\(.*, num_listed, truncated\)", header=header)
        header = replace_once(HEADER, "sp_result_diagnostic_fix(const sp_result *result, size_t index,"
                                      " size_t operation,",
                              "sp_result_diagnostic_fix(const sp_result *result, size_t index,"
                              " uint32_t operation,")
        self.assertReported(r"ccall sp_result_diagnostic_fix: argument 3 \(operation\) is Csize_t, "
                            r"C has uint32_t", header=header)

    def test_header_planning_struct_drift(self):
        header = replace_once(HEADER, "  double mean_bytes;", "  uint64_t mean_bytes;")
        self.assertReported(r"struct SpMemory: field mean_bytes is Cdouble, C has uint64_t",
                            header=header)
        header = replace_once(HEADER, "  size_t num_devices_listed;        /* entries at per_device_bytes */",
                              "  uint32_t num_devices_listed;        /* entries at per_device_bytes */")
        self.assertReported(r"struct SpMemory: field num_devices_listed is Csize_t, C has uint32_t",
                            header=header)
        header = replace_once(HEADER, "  sp_str collective;\n", "  sp_str collective;\n  sp_str group;\n")
        self.assertReported(r"struct SpCommunication: fields \(fqn, port, axis, from, to, collective\) "
                            r"differ from C sp_communication \(fqn, port, axis, from, to, collective, "
                            r"group\)", header=header)
        header = replace_once(HEADER, "  sp_str provenance;\n", "  sp_str provenance;\n  int rule;\n")
        self.assertReported(r"struct SpPlanEntry: fields \(fqn, provenance\) differ", header=header)

    def test_header_training_struct_drift(self):
        header = replace_once(HEADER, "  double mean_total_bytes;", "  float mean_total_bytes;")
        self.assertReported(r"struct SpTraining: field mean_total_bytes is Cdouble, C has float",
                            header=header)
        header = replace_once(HEADER, "  const uint64_t *worst_coordinates;",
                              "  const uint32_t *worst_coordinates;")
        self.assertReported(r"struct SpTraining: field worst_coordinates is Ptr\{UInt64\}, "
                            r"C has const uint32_t \*", header=header)
        header = replace_once(HEADER, "  uint64_t gathered;", "  uint64_t gathered;\n  uint64_t buffers;")
        self.assertReported(r"struct SpTraining: fields .* differ from C sp_training "
                            r"\(.*gathered, buffers, activations", header=header)
        header = replace_once(HEADER, "sp_error *sp_builder_set_training(sp_builder *builder, sp_str json);",
                              "sp_error *sp_builder_set_training(sp_builder *builder, const char *json);")
        self.assertReported(r"ccall sp_builder_set_training: argument 2 \(json\) is SpStr, "
                            r"C has const char \*", header=header)

    # ---- enums and the ABI version ------------------------------------------------------------

    def test_enum_value_changed(self):
        main = self.mutate("PORT_OUT_DST = 4", "PORT_OUT_DST = 5")
        self.assertReported(r"@enum Port: values .* differ from C sp_port", main=main)

    def test_header_enum_grows(self):
        header = replace_once(HEADER, "SP_SEVERITY_INFO = 2", "SP_SEVERITY_INFO = 2,\n  SP_SEVERITY_HINT = 3")
        self.assertReported(r"@enum Severity: values .* differ from C sp_severity", header=header)

    def test_enum_base_type(self):
        main = self.mutate("@enum Severity::Cint", "@enum Severity::UInt8")
        self.assertReported(r"@enum Severity: base type UInt8", main=main)

    def test_abi_version_drift(self):
        header = replace_once(HEADER, "#define SP_ABI_VERSION 1", "#define SP_ABI_VERSION 2")
        self.assertReported(r"ABI_VERSION is 1, the header's SP_ABI_VERSION is 2", header=header)
        # The soname follows the ABI version: the installed library of ABI 2 is libshardplan.so.2.
        self.assertReported(r'SONAME is "libshardplan.so.1", the header\'s SP_ABI_VERSION 2 makes '
                            r'it libshardplan.so.2', header=header)

    def test_soname(self):
        # Found as the package loads an installed library (Libdl.dlopen of the soname).
        self.assertIn('Libdl.dlopen_e(SONAME)', SOURCES[MAIN])
        main = self.mutate('const SONAME = "libshardplan.so.1"', 'const SONAME = "libshardplan.so"')
        self.assertReported(r'SONAME is "libshardplan.so", the header\'s SP_ABI_VERSION 1 makes it '
                            r'libshardplan.so.1', main=main)
        main = self.mutate('const SONAME = "libshardplan.so.1"', 'const SONAME = "libshardplan.so.$(1)"')
        self.assertReported(r"SONAME is not a plain string", main=main)
        main = self.mutate('const SONAME = "libshardplan.so.1"', '# const SONAME = "libshardplan.so.1"')
        self.assertReported(r'the Julia sources define no `const SONAME = "libshardplan.so.1"`',
                            main=main)


if __name__ == "__main__":
    unittest.main()
