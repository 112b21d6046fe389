"""shardplan_dependencies(): the repositories shardplan's targets need.

Offline by design: every repository is a folder of the shardplan checkout or
a path a Debian package installs; nothing is downloaded. This WORKSPACE uses
it, and so does a downstream repository:

    local_repository(name = "shardplan", path = "third_party/shardplan")
    load("@shardplan//:deps.bzl", "shardplan_dependencies")
    shardplan_dependencies(path = "third_party/shardplan")

then depends on "@shardplan//capi:shardplan" (the C ABI, static) or
"@shardplan//core". shardplan is C++20: build with --cxxopt=-std=c++20.
Run shardplan's tools/setup.sh once per machine (Debian packages, abseil's
source). Repositories the caller already declared are kept.
"""

load("@bazel_tools//tools/build_defs/repo:utils.bzl", "maybe")
load("//third_party:multiarch.bzl", "debian_multiarch")

def shardplan_dependencies(path):
    """Declares shardplan's dependencies.

    Args:
      path: the shardplan checkout, as given to its local_repository
        (relative to the calling workspace's root, or absolute).
    """

    # Shim forwarding to Bazel 4's native cc rules (Debian's bazel-rules-cc
    # is too new for Bazel 4).
    maybe(native.local_repository, name = "rules_cc", path = path + "/third_party/rules_cc")

    # Debian: bazel-rules-java, bazel-skylib, bazel-platforms.
    maybe(native.local_repository, name = "rules_java", path = "/usr/share/bazel/rules/java")
    maybe(native.local_repository, name = "bazel_skylib", path = "/usr/share/bazel/tools/skylib")
    maybe(native.local_repository, name = "platforms", path = "/usr/share/bazel/tools/platforms")

    # Stub: keeps `bazel test` from downloading coverage tools (`bazel
    # coverage` is therefore unsupported).
    maybe(
        native.local_repository,
        name = "remote_coverage_tools",
        path = path + "/third_party/remote_coverage_tools",
    )

    # Abseil built from Debian's source package (`apt-get source abseil`,
    # upstream source with upstream BUILD.bazel files), unpacked by
    # tools/setup.sh into a git-ignored folder.
    maybe(native.local_repository, name = "com_google_absl", path = path + "/third_party/abseil/src")

    # Multiarch triplet (x86_64-linux-gnu, ...) for the system libraries.
    maybe(debian_multiarch, name = "debian_multiarch")

    # System libraries from Debian -dev packages. The repository root is
    # /usr; the BUILD files only glob each library's own include folders.
    for name, build_file in [
        ("onetbb", "onetbb.BUILD"),  # libtbb-dev
        ("com_google_googletest", "googletest.BUILD"),  # libgtest-dev, libgmock-dev
        ("com_github_google_benchmark", "benchmark.BUILD"),  # libbenchmark-dev
        ("rapidjson", "rapidjson.BUILD"),  # rapidjson-dev
        ("mimalloc", "mimalloc.BUILD"),  # libmimalloc-dev
    ]:
        maybe(
            native.new_local_repository,
            name = name,
            build_file = str(Label("//third_party:" + build_file)),
            path = "/usr",
        )
