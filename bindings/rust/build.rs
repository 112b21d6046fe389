//! Links the crate against libshardplan.so.
//!
//! The library directory is `$SHARDPLAN_LIB_DIR` when set, otherwise the
//! Bazel output `<repo root>/bazel-bin/capi` (made by
//! `bazel build //capi:libshardplan.so`). An rpath to that directory is added
//! so that tests, examples and programs run without `LD_LIBRARY_PATH`.

use std::env;
use std::path::{Component, Path, PathBuf};

fn main() {
    println!("cargo:rerun-if-env-changed=SHARDPLAN_LIB_DIR");
    println!("cargo:rerun-if-changed=build.rs");

    let dir = match env::var_os("SHARDPLAN_LIB_DIR") {
        Some(dir) if !dir.is_empty() => PathBuf::from(dir),
        _ => {
            let manifest =
                PathBuf::from(env::var_os("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR"));
            manifest
                .join("..")
                .join("..")
                .join("bazel-bin")
                .join("capi")
        }
    };
    // An absolute path without `..` (a relative SHARDPLAN_LIB_DIR is taken
    // from the crate directory, where cargo runs this script). Symlinks are
    // kept: `bazel-bin` is a symlink into the Bazel output base, and the
    // rpath should follow it rather than pin today's target.
    let dir = normalize(&env::current_dir().expect("current directory").join(dir));
    if !dir.join("libshardplan.so").exists() && !dir.join("libshardplan.dylib").exists() {
        println!(
            "cargo:warning=libshardplan not found in {} (set SHARDPLAN_LIB_DIR, or run `bazel build //capi:libshardplan.so`)",
            dir.display()
        );
    }
    println!("cargo:rustc-link-search=native={}", dir.display());
    println!("cargo:rustc-link-lib=dylib=shardplan");
    let target_os = env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    if target_os != "windows" {
        println!("cargo:rustc-link-arg=-Wl,-rpath,{}", dir.display());
    }
    // For dependents (`links = "shardplan"`): DEP_SHARDPLAN_LIB_DIR.
    println!("cargo:lib_dir={}", dir.display());
}

/// Removes `.` and `..` components lexically (without resolving symlinks).
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}
