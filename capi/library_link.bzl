"""shardplan_library_link: a shared library under a second name.

//capi:libshardplan.so.1 is the shared library itself, named after its
SONAME; //capi:libshardplan.so is this rule's link to it, the development
name. Both lie in bazel-bin/capi whenever the link is built, as in an
installed lib/ directory: a program linked with `-Lbazel-bin/capi
-lshardplan` (the Rust and Go bindings) records `NEEDED libshardplan.so.1`,
and the loader finds that file through the same rpath, while the bindings
that open the library by path keep opening bazel-bin/capi/libshardplan.so.
"""

def _impl(ctx):
    out = ctx.actions.declare_file(ctx.label.name)
    ctx.actions.symlink(output = out, target_file = ctx.file.library)
    # The link alone is the output ($(location) names one file); building it
    # builds the library, which its runfiles carry too.
    return [DefaultInfo(
        files = depset([out]),
        runfiles = ctx.runfiles(files = [out, ctx.file.library]),
    )]

shardplan_library_link = rule(
    implementation = _impl,
    doc = "A symlink named after the target to `library`; both are in its runfiles.",
    attrs = {
        "library": attr.label(mandatory = True, allow_single_file = True),
    },
)
