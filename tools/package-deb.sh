#!/usr/bin/env bash
# tools/package-deb.sh [--out DIR]: builds shardplan_VERSION_ARCH.deb (for
# example shardplan_0.9.0_amd64.deb) into DIR (default: the current
# directory) and prints its path.
#
# The package holds what `tools/install.sh --prefix /usr --strip` installs
# (the CLI, the shared library with its soname and development links, the
# static library, the header, the pkg-config file; see that script) and the
# bundled example documents in /usr/share/doc/shardplan/examples. /usr/lib
# rather than /usr/lib/<triplet>: the install layout is the same for every
# prefix, and the linker, ld.so and pkg-config all search /usr/lib.
#
# Depends: what dpkg-shlibdeps derives from the CLI's and the shared
# library's DT_NEEDED entries (the packages owning those libraries, as
# `dpkg -S` finds them, with the minimum versions from their symbols and
# shlibs files); tools/package_deb_test.sh checks it against `ldd` and
# `dpkg -S`. The static library and pkg-config's --static need libtbb-dev
# (the libtbb.so link) on top: Suggests, as the package is usable without.
#
# DEBIAN/shlibs declares libshardplan.so.ABI to other packages'
# dpkg-shlibdeps; DEBIAN/triggers refreshes the ld.so cache (ldconfig) on
# installation and removal, as Debian's shared library packages do. No
# maintainer scripts.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out="$PWD"
while [[ $# -gt 0 ]]; do
  case "$1" in
    --out) out="$2"; shift 2 ;;
    --out=*) out="${1#--out=}"; shift ;;
    -h | --help) sed -n '2,/^set /p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "package-deb.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
mkdir -p "$out"
out="$(cd "$out" && pwd)"
log() { echo "[package-deb] $*" >&2; }

header="${root}/capi/include/shardplan/shardplan.h"
num() { sed -nE "s/^#define $1 ([0-9]+)\$/\\1/p" "$header"; }
version="$(num SP_VERSION_MAJOR).$(num SP_VERSION_MINOR).$(num SP_VERSION_PATCH)"
abi="$(num SP_ABI_VERSION)"
arch="$(dpkg --print-architecture)"
deb="${out}/shardplan_${version}_${arch}.deb"

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
pkg="${work}/pkg"
DESTDIR="$pkg" bash "${root}/tools/install.sh" --prefix /usr --strip
install -d -m 0755 "${pkg}/usr/share/doc/shardplan/examples"
install -m 0644 "${root}"/examples/*.json "${pkg}/usr/share/doc/shardplan/examples/"

# dpkg-shlibdeps wants a source tree: debian/control naming the package.
mkdir -p "${work}/src/debian"
printf 'Source: shardplan\n\nPackage: shardplan\nArchitecture: any\n' >"${work}/src/debian/control"
shlibs="$(cd "${work}/src" && dpkg-shlibdeps -O \
  -e"${pkg}/usr/bin/shardplan" -e"${pkg}/usr/lib/libshardplan.so.${version}" 2>"${work}/shlibdeps.log")" || {
  cat "${work}/shlibdeps.log" >&2
  exit 1
}
depends="${shlibs#shlibs:Depends=}"
[[ -n "$depends" && "$depends" != "$shlibs" ]] || { echo "package-deb.sh: dpkg-shlibdeps said '${shlibs}'" >&2; exit 1; }

install -d -m 0755 "${pkg}/DEBIAN"
(cd "$pkg" && find usr -type f -print0 | sort -z | xargs -0 md5sum) >"${pkg}/DEBIAN/md5sums"
echo "libshardplan ${abi} shardplan (>= ${version})" >"${pkg}/DEBIAN/shlibs"
echo "activate-noawait ldconfig" >"${pkg}/DEBIAN/triggers"
cat >"${pkg}/DEBIAN/control" <<EOF
Package: shardplan
Version: ${version}
Architecture: ${arch}
Maintainer: shardplan maintainers <maintainers@users.noreply.a-seed-2e705136.example>
Installed-Size: $(du -sk --exclude=DEBIAN "$pkg" | cut -f1)
Depends: ${depends}
Suggests: libtbb-dev, pkgconf
Section: devel
Priority: optional
Description: sharding-plan checker for distributed training
 shardplan checks a shape-only description of a model's sharding layouts
 (which modules own their layout, tied parameters, the final plan) and
 reports every problem at once.
 .
 This package holds the shardplan command, the C library libshardplan
 (shared, SONAME libshardplan.so.${abi}, and static), its header and its
 pkg-config file (shardplan.pc), and example documents.
EOF
chmod 0644 "${pkg}/DEBIAN/"*
dpkg-deb --root-owner-group -Zxz --build "$pkg" "$deb" >&2
log "Depends: ${depends}"
echo "$deb"
