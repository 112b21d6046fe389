//! Finds libshardplan and links the crate against it, with no environment
//! variable needed after either `tools/install.sh` or a checkout build.
//!
//! Where, the first that applies:
//!
//! 1. `$SHARDPLAN_LIB_DIR`: a directory holding `libshardplan.a` and/or
//!    `libshardplan.so` (a relative path is taken from the crate directory).
//! 2. pkg-config: the `pkg-config` program (or `$PKG_CONFIG`) run as
//!    `pkg-config --static --libs --cflags shardplan` (`--libs --cflags` when
//!    linking dynamically): an installed library (`tools/install.sh`, into
//!    `/usr/local` by default, which pkg-config searches; any other prefix
//!    through `PKG_CONFIG_PATH=PREFIX/lib/pkgconfig`).
//! 3. The checkout's `<repo root>/bazel-bin/capi`, made by
//!    `bazel build //capi:libshardplan.a //capi:libshardplan.so`.
//!
//! How: statically by default (`libshardplan.a`), so that tests, examples and
//! programs run without `LD_LIBRARY_PATH` and carry no rpath; the system
//! libraries the archive needs (oneTBB, the C++ runtime) come from pkg-config's
//! `Libs.private`, or `libshardplan.a.libs` next to a Bazel-built archive.
//! Dynamically (`libshardplan.so`, with an rpath to its directory) with the
//! cargo feature `dynamic` or `SHARDPLAN_LINK=dynamic`. `SHARDPLAN_LINK=static`
//! insists on the archive; unset, a location with only the shared library is
//! linked dynamically, with a warning.

use std::env;
use std::ffi::OsString;
use std::path::{Component, Path, PathBuf};
use std::process::Command;

/// What the archive needs when nothing says otherwise: capi's linkopts as of
/// release 0.9 (`libshardplan.a.libs`, the .pc's `Libs.private`).
const DEFAULT_PRIVATE_LIBS: &[&str] = &["-ltbb", "-lpthread", "-lstdc++", "-lm"];

/// Stops the build with a message (cargo shows the script's stderr).
macro_rules! fail {
    ($($arg:tt)*) => {{
        eprintln!("error: {}", format!($($arg)*));
        std::process::exit(1)
    }};
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Link {
    Static,
    Dynamic,
}

/// The requested linkage: `Some` when asked for explicitly.
fn requested_link() -> Option<Link> {
    match env::var("SHARDPLAN_LINK").ok().as_deref() {
        Some("static") => return Some(Link::Static),
        Some("dynamic") | Some("shared") => return Some(Link::Dynamic),
        Some("") | None => {}
        Some(other) => fail!("SHARDPLAN_LINK={other}: expected `static` or `dynamic`"),
    }
    if env::var_os("CARGO_FEATURE_DYNAMIC").is_some() {
        return Some(Link::Dynamic);
    }
    None
}

/// What the linker is given, whichever way the library was found.
#[derive(Default, Debug)]
struct Found {
    /// How it was found, for messages.
    how: String,
    /// The directory holding libshardplan.
    lib_dir: PathBuf,
    /// Whether pkg-config named the directory with `-L` (it leaves out the
    /// linker's own directories, where no rpath is needed either).
    lib_dir_searched: bool,
    include_dir: Option<PathBuf>,
    /// `-L` directories besides `lib_dir`.
    search: Vec<PathBuf>,
    /// The system libraries (and other flags) the static archive needs.
    private: Vec<String>,
    /// Other linker flags pkg-config gave.
    args: Vec<String>,
}

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    for var in [
        "SHARDPLAN_LIB_DIR",
        "SHARDPLAN_LINK",
        "PKG_CONFIG",
        "PKG_CONFIG_PATH",
        "PKG_CONFIG_LIBDIR",
        "PKG_CONFIG_SYSROOT_DIR",
    ] {
        println!("cargo:rerun-if-env-changed={var}");
    }

    let requested = requested_link();
    let want = requested.unwrap_or(Link::Static);
    let manifest = PathBuf::from(env::var_os("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR"));
    let checkout = normalize(
        &manifest
            .join("..")
            .join("..")
            .join("bazel-bin")
            .join("capi"),
    );

    let found = if let Some(dir) = env::var_os("SHARDPLAN_LIB_DIR").filter(|d| !d.is_empty()) {
        // An absolute path without `..` (cargo runs this script in the crate
        // directory). Symlinks are kept: `bazel-bin` is a symlink into the
        // Bazel output base, and an rpath should follow it.
        let dir = normalize(&env::current_dir().expect("current directory").join(dir));
        if !has_static(&dir) && !has_shared(&dir) {
            fail!(
                "SHARDPLAN_LIB_DIR={}: no libshardplan.a or libshardplan.so there",
                dir.display()
            );
        }
        from_dir(dir, "SHARDPLAN_LIB_DIR")
    } else if let Some(found) = pkg_config(want) {
        found
    } else if has_static(&checkout) || has_shared(&checkout) {
        from_dir(checkout, "the checkout's bazel-bin/capi")
    } else {
        fail!(
            "libshardplan not found: not through pkg-config (`pkg-config --libs shardplan`; \
             install it with tools/install.sh, and for a prefix other than /usr/local or /usr \
             set PKG_CONFIG_PATH=PREFIX/lib/pkgconfig), and not in {} (run `bazel build \
             //capi:libshardplan.a //capi:libshardplan.so` in the checkout); or set \
             SHARDPLAN_LIB_DIR to a directory holding libshardplan.a or libshardplan.so",
            checkout.display()
        )
    };

    let link = match (
        requested,
        has_static(&found.lib_dir),
        has_shared(&found.lib_dir),
    ) {
        (Some(Link::Static), false, _) => fail!(
            "SHARDPLAN_LINK=static, but {} (found through {}) has no libshardplan.a",
            found.lib_dir.display(),
            found.how
        ),
        (Some(link), _, _) => link,
        (None, true, _) => Link::Static,
        (None, false, _) => {
            println!(
                "cargo:warning=no libshardplan.a in {} (found through {}): linking libshardplan.so \
                 dynamically, with an rpath to that directory",
                found.lib_dir.display(),
                found.how
            );
            Link::Dynamic
        }
    };
    // pkg-config was asked for one linkage; ask again for the other.
    let found = if link != want && found.how == "pkg-config" {
        pkg_config(link).expect("pkg-config found shardplan a moment ago")
    } else {
        found
    };

    println!("cargo:rustc-link-search=native={}", found.lib_dir.display());
    for dir in &found.search {
        println!("cargo:rustc-link-search=native={}", dir.display());
    }
    match link {
        Link::Static => {
            // rustc itself looks for libshardplan.a in the search path, so the
            // shared library next to it is not picked instead.
            println!("cargo:rustc-link-lib=static=shardplan");
            println!(
                "cargo:rerun-if-changed={}",
                found.lib_dir.join("libshardplan.a").display()
            );
            for flag in &found.private {
                link_flag(flag);
            }
        }
        Link::Dynamic => {
            println!("cargo:rustc-link-lib=dylib=shardplan");
            let target_os = env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
            if found.lib_dir_searched && target_os != "windows" {
                println!(
                    "cargo:rustc-link-arg=-Wl,-rpath,{}",
                    found.lib_dir.display()
                );
            }
        }
    }
    for arg in &found.args {
        link_flag(arg);
    }
    // For dependents (`links = "shardplan"`): DEP_SHARDPLAN_LIB_DIR,
    // DEP_SHARDPLAN_LINK and, where known, DEP_SHARDPLAN_INCLUDE.
    println!("cargo:lib_dir={}", found.lib_dir.display());
    println!(
        "cargo:link={}",
        if link == Link::Static {
            "static"
        } else {
            "dynamic"
        }
    );
    if let Some(include) = &found.include_dir {
        println!("cargo:include={}", include.display());
    }
}

fn has_static(dir: &Path) -> bool {
    dir.join("libshardplan.a").is_file()
}

fn has_shared(dir: &Path) -> bool {
    dir.join("libshardplan.so").exists() || dir.join("libshardplan.dylib").exists()
}

/// A library directory given directly (SHARDPLAN_LIB_DIR, the checkout). The
/// archive's system libraries: `libshardplan.a.libs` there (Bazel's build),
/// else `Libs.private` of `pkgconfig/shardplan.pc` there (an installed
/// `PREFIX/lib`), else the defaults.
fn from_dir(dir: PathBuf, how: &str) -> Found {
    let libs_file = dir.join("libshardplan.a.libs");
    let pc_file = dir.join("pkgconfig").join("shardplan.pc");
    let private = if let Ok(text) = std::fs::read_to_string(&libs_file) {
        println!("cargo:rerun-if-changed={}", libs_file.display());
        text.split_whitespace().map(str::to_owned).collect()
    } else if let Some(line) = std::fs::read_to_string(&pc_file).ok().and_then(|text| {
        text.lines()
            .find_map(|l| l.strip_prefix("Libs.private:").map(str::to_owned))
    }) {
        println!("cargo:rerun-if-changed={}", pc_file.display());
        line.split_whitespace().map(str::to_owned).collect()
    } else {
        DEFAULT_PRIVATE_LIBS.iter().map(|s| s.to_string()).collect()
    };
    let include = dir.parent().map(|p| p.join("include"));
    Found {
        how: how.to_owned(),
        lib_dir_searched: true,
        include_dir: include.filter(|i| i.join("shardplan").join("shardplan.h").is_file()),
        private,
        lib_dir: dir,
        ..Found::default()
    }
}

/// Runs pkg-config; `None` when it is missing or does not know shardplan.
fn pkg_config(link: Link) -> Option<Found> {
    let program = env::var_os("PKG_CONFIG").unwrap_or_else(|| OsString::from("pkg-config"));
    let run = |args: &[&str]| -> Option<String> {
        let out = Command::new(&program).args(args).output().ok()?;
        if !out.status.success() {
            return None;
        }
        Some(String::from_utf8_lossy(&out.stdout).trim().to_owned())
    };
    let flags = match link {
        Link::Static => run(&["--static", "--libs", "--cflags", "shardplan"])?,
        Link::Dynamic => run(&["--libs", "--cflags", "shardplan"])?,
    };
    let libdir = PathBuf::from(run(&["--variable=libdir", "shardplan"])?);
    let mut found = Found {
        how: "pkg-config".to_owned(),
        lib_dir: libdir.clone(),
        ..Found::default()
    };
    let mut seen_self = false;
    for flag in split_flags(&flags) {
        if let Some(dir) = flag.strip_prefix("-I") {
            found.include_dir = Some(PathBuf::from(dir));
        } else if let Some(dir) = flag.strip_prefix("-L") {
            let dir = PathBuf::from(dir);
            if dir == libdir {
                found.lib_dir_searched = true;
            } else {
                found.search.push(dir);
            }
        } else if flag == "-lshardplan" || flag == "-l:libshardplan.a" {
            seen_self = true;
        } else if flag.starts_with("-l") || flag == "-pthread" {
            // Only Libs.private (--static) adds libraries besides shardplan.
            found.private.push(flag);
        } else if flag.starts_with("-D") || flag.starts_with("-f") || flag.starts_with("-std") {
            // compiler flags from Cflags: nothing to link
        } else {
            found.args.push(flag);
        }
    }
    if !seen_self {
        println!("cargo:warning=`pkg-config --libs shardplan` gave no -lshardplan: {flags}");
    }
    Some(found)
}

/// Splits pkg-config's output at unescaped whitespace (it writes a space in a
/// path as `\ `).
fn split_flags(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                if let Some(next) = chars.next() {
                    cur.push(next);
                }
            }
            c if c.is_whitespace() => {
                if !cur.is_empty() {
                    out.push(std::mem::take(&mut cur));
                }
            }
            c => cur.push(c),
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// One linker flag of `Libs.private` (or another pkg-config flag) for rustc.
fn link_flag(flag: &str) {
    if flag == "-pthread" {
        println!("cargo:rustc-link-lib=dylib=pthread");
    } else if let Some(name) = flag.strip_prefix("-l") {
        println!("cargo:rustc-link-lib=dylib={name}");
    } else if let Some(dir) = flag.strip_prefix("-L") {
        println!("cargo:rustc-link-search=native={dir}");
    } else {
        println!("cargo:rustc-link-arg={flag}");
    }
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
