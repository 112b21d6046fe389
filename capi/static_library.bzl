"""shardplan_static_library: one self-contained static library of a C ABI.

The archive the rule writes holds a single relocatable object: the `dep`
library's objects (all of them: it is linked whole) and every archive member
of its transitive static libraries (the core, abseil) that they need, merged
with `ld -r`. In that object every defined symbol but those matching
`keep_global` is made local (`objcopy --keep-global-symbol`), so a program
that links the archive sees the C functions and nothing else: no abseil or
engine symbol can clash with the program's own copy of abseil, and the
archive behaves like the shared library built with exports.lds.

Its COMDAT groups (inline functions and template instantiations, such as
libstdc++'s std::string members instantiated in the engine) are dissolved
into plain sections: once their symbols are local, a group that the final
link deduplicated against the program's own copy would leave the merged
object's local references pointing into a discarded section ("defined in
discarded section"). GNU-unique symbols (static locals of inline functions)
are rebound as global first, as objcopy localizes global and weak symbols
only (unique_to_global.py). A C++ program linking the archive thus keeps its
own instances of everything it shares with the engine.

What the object still needs from the system, the transitive `linkopts`
(oneTBB's -ltbb, -pthread) followed by the C++ runtime (-lstdc++ -lm), is
written one flag a line to `<name>.libs`: tools/install.sh puts it in the
pkg-config file's Libs.private. -pthread is written -lpthread, the spelling
pkg-config consumers that are not a compiler driver understand.

PIC objects are taken where the build made both kinds (-c opt), so that the
archive links into position-independent executables (Debian's default),
shared objects and Rust or Go programs alike.
"""

load("@bazel_tools//tools/cpp:toolchain_utils.bzl", "find_cpp_toolchain")

# The C++ runtime the merged object's libstdc++ references need. gcc links it
# into C++ programs by itself; a C program linking the archive names it.
_CXX_RUNTIME = ["-lstdc++", "-lm"]

def _archive(library):
    if library.pic_static_library:
        return library.pic_static_library
    return library.static_library

def _impl(ctx):
    cc_toolchain = find_cpp_toolchain(ctx)
    whole = []  # linked whole: the dep's own library (and any alwayslink one)
    searched = []  # searched for the members the others need
    flags = []
    for linker_input in ctx.attr.dep[CcInfo].linking_context.linker_inputs.to_list():
        for flag in linker_input.user_link_flags:
            flag = "-lpthread" if flag == "-pthread" else flag
            if flag not in flags:
                flags.append(flag)
        for library in linker_input.libraries:
            archive = _archive(library)
            if archive == None:
                continue
            if library.alwayslink or linker_input.owner == ctx.attr.dep.label:
                whole.append(archive)
            else:
                searched.append(archive)
    for flag in flags:
        if not flag.startswith("-l"):
            fail("%s: cannot put the link option %r into Libs.private" % (ctx.label, flag))
    for flag in _CXX_RUNTIME:
        if flag not in flags:
            flags.append(flag)

    out = ctx.actions.declare_file(ctx.label.name)
    merged = ctx.actions.declare_file(ctx.label.name + ".o")
    libs = ctx.actions.declare_file(ctx.label.name + ".libs")
    ctx.actions.write(libs, "".join([f + "\n" for f in flags]))

    args = ctx.actions.args()
    args.add(cc_toolchain.ld_executable)
    args.add(cc_toolchain.objcopy_executable)
    args.add(cc_toolchain.ar_executable)
    args.add(ctx.file._unique_to_global)
    args.add(merged)
    args.add(out)
    args.add_joined(ctx.attr.keep_global, join_with = ",")
    args.add("--whole-archive")
    args.add_all(whole)
    args.add("--no-whole-archive")
    args.add("--start-group")
    args.add_all(searched)
    args.add("--end-group")
    ctx.actions.run_shell(
        inputs = depset(whole + searched + [ctx.file._unique_to_global], transitive = [cc_toolchain.all_files]),
        outputs = [merged, out],
        arguments = [args],
        mnemonic = "MergeStaticLibrary",
        progress_message = "Merging %s" % out.short_path,
        command = """set -euo pipefail
ld="$1" objcopy="$2" ar="$3" unique_to_global="$4" merged="$5" out="$6" keep="$7"
shift 7
# Only the archive members the whole-linked library reaches are pulled in;
# references to the system libraries stay undefined.
"$ld" -r -o "$merged" "$@"
keep_args=()
IFS=, read -ra patterns <<<"$keep"
for p in "${patterns[@]}"; do keep_args+=("--keep-global-symbol=$p"); done
# Dissolve the COMDAT groups, rebind GNU-unique symbols as global (see the
# rule's documentation), then localize all but the kept ones.
"$objcopy" --remove-section=.group "$merged"
python3 "$unique_to_global" "$merged" >/dev/null
"$objcopy" --wildcard "${keep_args[@]}" "$merged"
rm -f "$out"
"$ar" rcsD "$out" "$merged"
""",
    )
    return [DefaultInfo(
        files = depset([out, libs]),
        runfiles = ctx.runfiles(files = [out, libs]),
    )]

shardplan_static_library = rule(
    implementation = _impl,
    doc = "One static archive of `dep` and its static dependencies; only `keep_global` stays global.",
    attrs = {
        "dep": attr.label(mandatory = True, providers = [CcInfo]),
        "keep_global": attr.string_list(
            mandatory = True,
            doc = "objcopy --wildcard patterns of the symbols left global",
        ),
        "_cc_toolchain": attr.label(default = Label("@bazel_tools//tools/cpp:current_cc_toolchain")),
        "_unique_to_global": attr.label(default = Label("//capi:unique_to_global.py"), allow_single_file = True),
    },
    fragments = ["cpp"],
)
