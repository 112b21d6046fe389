#!/usr/bin/env bash
# tools/install.sh: builds shardplan with `bazel build -c opt` and installs
# the CLI, the C header, the static and shared libraries and a pkg-config
# file under a prefix, as C libraries install on Linux; `--uninstall` removes
# exactly those files again. See usage() for the layout and docs/capi.md
# (section "Installing") for how to use it.
set -euo pipefail

usage() {
  cat <<'EOF'
Usage: tools/install.sh [--prefix DIR] [--strip] [--no-ldconfig]
       tools/install.sh [--prefix DIR] --uninstall

Builds //cli:shardplan, //capi:libshardplan.so and //capi:libshardplan.a
with `bazel build -c opt` (leaving the checkout's bazel-* links alone) and
installs, under DESTDIR + DIR (default DIR: /usr/local):

  bin/shardplan                        the CLI
  include/shardplan/shardplan.h        the C ABI's header
  lib/libshardplan.a                   static: the C ABI, the engine and abseil in
                                       one object whose only global symbols are sp_*
  lib/libshardplan.so.X.Y.Z            shared; X.Y.Z is the release (SP_VERSION_*),
                                       its SONAME libshardplan.so.N the ABI version
                                       (SP_ABI_VERSION)
  lib/libshardplan.so.N -> libshardplan.so.X.Y.Z   the soname link (run time)
  lib/libshardplan.so -> libshardplan.so.N         the development link (-lshardplan)
  lib/pkgconfig/shardplan.pc           pkg-config; Libs.private lists the system
                                       libraries the static library needs

Options:
  --prefix DIR   where to install (made absolute; written into shardplan.pc)
  --strip        strip the CLI and the shared library (as `make install-strip`)
  --no-ldconfig  never run ldconfig
  --uninstall    remove the files listed above (for the release recorded in the
                 installed header) and include/shardplan/ if empty; other
                 directories are left in place, as are files not listed
  -h, --help     this text

DESTDIR, if set, is prepended to every installed path but not written into
shardplan.pc (staged installs, packaging: tools/package-deb.sh).

ldconfig runs (after installing or uninstalling) only when DESTDIR is empty and
DIR/lib is one of the directories ldconfig already scans (/usr/lib, and
/usr/local/lib on Debian): there it refreshes the dynamic linker's cache. For any
other prefix, programs find the library through -Wl,-rpath,DIR/lib or
LD_LIBRARY_PATH=DIR/lib; nothing system-wide is touched.
EOF
}

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
prefix=/usr/local
action=install
strip=0
ldconfig_allowed=1
while [[ $# -gt 0 ]]; do
  case "$1" in
    --prefix)
      [[ $# -ge 2 ]] || { echo "install.sh: --prefix needs a directory" >&2; exit 2; }
      prefix="$2"
      shift 2
      ;;
    --prefix=*) prefix="${1#--prefix=}"; shift ;;
    --strip) strip=1; shift ;;
    --no-ldconfig) ldconfig_allowed=0; shift ;;
    --uninstall) action=uninstall; shift ;;
    -h | --help) usage; exit 0 ;;
    *) echo "install.sh: unknown argument '$1'" >&2; usage >&2; exit 2 ;;
  esac
done
# The prefix is written into shardplan.pc: it must be absolute. realpath -m
# accepts a directory that does not exist yet.
prefix="$(realpath -m -- "$prefix")"
destdir="${DESTDIR:-}"
stage="${destdir}${prefix}"

log() { echo "[install] $*" >&2; }

# version_of HEADER NAME: the number of `#define NAME N` in the header.
version_of() {
  local v
  v="$(sed -nE "s/^#define $2 ([0-9]+)\$/\\1/p" "$1")"
  [[ -n "$v" ]] || { echo "install.sh: no '#define $2 N' in $1" >&2; exit 1; }
  echo "$v"
}
# Sets release (X.Y.Z) and abi (N) from a header.
read_versions() {
  release="$(version_of "$1" SP_VERSION_MAJOR).$(version_of "$1" SP_VERSION_MINOR).$(version_of "$1" SP_VERSION_PATCH)"
  abi="$(version_of "$1" SP_ABI_VERSION)"
}

# Whether ldconfig should run: no DESTDIR, not refused, root, and the lib
# directory already among those ldconfig scans (-N -X: print only, write
# nothing; its lines "DIR: (from FILE:LINE)" name the directories, /usr/lib
# as /lib on a merged-/usr system, hence the comparison of real paths).
ldconfig_wanted() {
  [[ $ldconfig_allowed -eq 1 && -z "$destdir" && $EUID -eq 0 ]] || return 1
  command -v ldconfig >/dev/null || return 1
  local want dir
  want="$(realpath -m -- "${prefix}/lib")"
  while read -r dir; do
    [[ "$(realpath -m -- "$dir")" == "$want" ]] && return 0
  done < <(ldconfig -v -N -X 2>/dev/null | sed -nE 's|^(/[^:]*):.*|\1|p')
  return 1
}
run_ldconfig() {
  if ldconfig_wanted; then
    log "ldconfig (${prefix}/lib is a system library directory)"
    ldconfig
  fi
}

# The installed files, relative to the prefix (the links included).
installed_files() {
  echo bin/shardplan
  echo include/shardplan/shardplan.h
  echo lib/libshardplan.a
  echo "lib/libshardplan.so.${release}"
  echo "lib/libshardplan.so.${abi}"
  echo lib/libshardplan.so
  echo lib/pkgconfig/shardplan.pc
}

if [[ $action == uninstall ]]; then
  # The release and ABI of what is installed come from the installed header,
  # so that a checkout at another release removes the files of the installed
  # one; the checkout's header stands in when the installed one is gone.
  header="${stage}/include/shardplan/shardplan.h"
  [[ -f "$header" ]] || header="${root}/capi/include/shardplan/shardplan.h"
  read_versions "$header"
  while read -r f; do
    if [[ -e "${stage}/${f}" || -L "${stage}/${f}" ]]; then
      rm -f -- "${stage}/${f}"
      log "removed ${stage}/${f}"
    fi
  done < <(installed_files)
  rmdir --ignore-fail-on-non-empty -- "${stage}/include/shardplan" 2>/dev/null || true
  run_ldconfig
  exit 0
fi

header_src="${root}/capi/include/shardplan/shardplan.h"
read_versions "$header_src"

# -c opt outputs live in their own bazel-out directory; --symlink_prefix=/
# keeps this build from repointing the checkout's bazel-bin link, which the
# bindings' checkout builds read.
log "bazel build -c opt (release ${release}, ABI ${abi})"
(cd "$root" && bazel build -c opt --symlink_prefix=/ \
  //cli:shardplan //capi:libshardplan.so //capi:libshardplan.a)
bin="$(cd "$root" && bazel info -c opt bazel-bin 2>/dev/null)"

# The soname is fixed in capi/BUILD (soname_test holds it to the header);
# refuse to install a library whose soname disagrees with the file names.
soname="$(readelf -d "${bin}/capi/libshardplan.so" | sed -nE 's/.*\(SONAME\).*\[(.*)\]$/\1/p')"
if [[ "$soname" != "libshardplan.so.${abi}" ]]; then
  echo "install.sh: built libshardplan.so has SONAME '${soname}', expected libshardplan.so.${abi}" >&2
  exit 1
fi

# Libs.private: what libshardplan.a still needs from the system, as the
# rule collected it (capi/static_library.bzl), one flag a line.
libs_private="$(tr '\n' ' ' <"${bin}/capi/libshardplan.a.libs" | sed 's/ $//')"

log "installing into ${stage}"
install -d -m 0755 "${stage}/bin" "${stage}/include/shardplan" "${stage}/lib/pkgconfig"
install -m 0755 "${bin}/cli/shardplan" "${stage}/bin/shardplan"
install -m 0644 "$header_src" "${stage}/include/shardplan/shardplan.h"
install -m 0644 "${bin}/capi/libshardplan.a" "${stage}/lib/libshardplan.a"
# Shared libraries are not executables: 0644, as Debian installs them.
install -m 0644 "${bin}/capi/libshardplan.so" "${stage}/lib/libshardplan.so.${release}"
if [[ $strip -eq 1 ]]; then
  strip "${stage}/bin/shardplan"
  strip --strip-unneeded "${stage}/lib/libshardplan.so.${release}"
fi
# Relative links, so that the tree can be moved (DESTDIR, packaging).
ln -sfn "libshardplan.so.${release}" "${stage}/lib/libshardplan.so.${abi}"
ln -sfn "libshardplan.so.${abi}" "${stage}/lib/libshardplan.so"

cat >"${stage}/lib/pkgconfig/shardplan.pc" <<EOF
prefix=${prefix}
exec_prefix=\${prefix}
libdir=\${exec_prefix}/lib
includedir=\${prefix}/include

Name: shardplan
Description: Sharding-plan checker for distributed training (C ABI)
Version: ${release}
Cflags: -I\${includedir}
Libs: -L\${libdir} -lshardplan
Libs.private: ${libs_private}
EOF
chmod 0644 "${stage}/lib/pkgconfig/shardplan.pc"

while read -r f; do log "  ${prefix}/${f}"; done < <(installed_files)
run_ldconfig
