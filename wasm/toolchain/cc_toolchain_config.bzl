"""A C++ toolchain on Debian's emscripten package (emcc 3.1.6) for Bazel 4."""

load("@rules_cc//cc:action_names.bzl", "ACTION_NAMES")
load(
    "@rules_cc//cc:cc_toolchain_config_lib.bzl",
    "feature",
    "flag_group",
    "flag_set",
    "tool_path",
)

_COMPILE = [
    ACTION_NAMES.c_compile,
    ACTION_NAMES.cpp_compile,
    ACTION_NAMES.cpp_header_parsing,
    ACTION_NAMES.cpp_module_compile,
]

_LINK = [
    ACTION_NAMES.cpp_link_executable,
    ACTION_NAMES.cpp_link_dynamic_library,
    ACTION_NAMES.cpp_link_nodeps_dynamic_library,
]

def _impl(ctx):
    tools = {
        "gcc": "emcc.sh",
        "ld": "emcc.sh",
        "ar": "emar.sh",
        "cpp": "emcc.sh",
        "gcov": "/bin/false",
        "nm": "/bin/false",
        "objdump": "/bin/false",
        "strip": "/bin/false",
    }
    features = [
        # Size matters more than the last percent of speed in a page.
        feature(
            name = "wasm_defaults",
            enabled = True,
            flag_sets = [
                flag_set(actions = _COMPILE, flag_groups = [flag_group(flags = ["-O2", "-DNDEBUG", "-msimd128", "-msse2"])]),
                flag_set(actions = _LINK, flag_groups = [flag_group(flags = ["-O2"])]),
            ],
        ),
        feature(name = "supports_pic", enabled = False),
    ]
    return cc_common.create_cc_toolchain_config_info(
        ctx = ctx,
        features = features,
        cxx_builtin_include_directories = [
            "/usr/share/emscripten/cache/sysroot/include",
            "/usr/lib/llvm-14/lib/clang/14.0.6/include",
        ],
        toolchain_identifier = "emscripten-wasm",
        host_system_name = "x86_64-linux-gnu",
        target_system_name = "wasm32-unknown-emscripten",
        target_cpu = "wasm",
        target_libc = "musl",
        compiler = "emscripten",
        abi_version = "emscripten",
        abi_libc_version = "default",
        tool_paths = [tool_path(name = name, path = path) for name, path in tools.items()],
    )

emscripten_toolchain_config = rule(
    implementation = _impl,
    attrs = {},
    provides = [CcToolchainConfigInfo],
)
