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
        self.assertIn("5 structs and 3 enums", summary)

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

    # ---- coverage -----------------------------------------------------------------------------

    def test_uncalled_function_reported(self):
        main = self.mutate('library_version() = unsafe_string(ccall((:sp_version_string, libshardplan[]), Cstring, ()))',
                           'library_version() = "0.4.0"')
        self.assertReported(r"sp_version_string is neither called by the binding nor listed", main=main)

    def test_not_wrapped_list(self):
        main = self.mutate('library_version() = unsafe_string(ccall((:sp_version_string, libshardplan[]), Cstring, ()))',
                           'library_version() = "0.4.0"')
        reason = {"sp_version_string": "the package version says it"}
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
        main = self.mutate("    num_axes::Csize_t", "    count::Csize_t")
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


if __name__ == "__main__":
    unittest.main()
