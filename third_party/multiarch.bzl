"""@debian_multiarch: exposes the Debian multiarch triplet (e.g. x86_64-linux-gnu).

BUILD files of the system repositories do
    load("@debian_multiarch//:multiarch.bzl", "MULTIARCH")
and refer to static libraries as "lib/%s/libfoo.a" % MULTIARCH, so the triplet
is not hardcoded anywhere.
"""

def _debian_multiarch_impl(rctx):
    triplet = ""
    for cmd in (["gcc", "-print-multiarch"], ["dpkg-architecture", "-qDEB_HOST_MULTIARCH"]):
        if rctx.which(cmd[0]) == None:
            continue
        res = rctx.execute(cmd)
        if res.return_code == 0 and res.stdout.strip():
            triplet = res.stdout.strip()
            break
    if not triplet:
        fail("Could not determine the Debian multiarch triplet (need gcc or dpkg-architecture)")
    rctx.file("WORKSPACE", 'workspace(name = "%s")\n' % rctx.name)
    rctx.file("BUILD", "")
    rctx.file("multiarch.bzl", 'MULTIARCH = "%s"\n' % triplet)

debian_multiarch = repository_rule(
    implementation = _debian_multiarch_impl,
    local = True,
    environ = ["PATH"],
)
