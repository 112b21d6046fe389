#!/usr/bin/env bash
# The Debian package's test, run by tools/test.sh as the `deb` suite:
#  1. tools/package-deb.sh makes shardplan_VERSION_ARCH.deb; its contents are
#     the install layout under /usr plus the examples, links included;
#  2. Depends names every package that owns a library the CLI or the shared
#     library loads (ldd, then dpkg -S), and nothing is left unresolved;
#  3. `dpkg --root=R --force-depends -i` installs it into a clean root R: an
#     empty dpkg database and nothing else. A chroot would need a Debian base
#     system, which cannot be made offline here (no debootstrap mirror), so
#     R has none: --force-depends because the database does not know the
#     host's libc6, libtbb12, ... (Depends is checked in step 2 instead);
#     nothing needs a chroot: the package has no maintainer scripts, and
#     its ldconfig trigger has no interested package in R (no libc-bin).
#     dpkg must then list the package as installed and its files
#     (dpkg --root=R -L) must be those of the .deb;
#  4. R's CLI, R/usr/bin/shardplan (run on the host's libraries: R has no
#     loader of its own), checks R's bundled example
#     R/usr/share/doc/shardplan/examples/tiny-llama.json ("ok") and
#     tiny-llama-broken.json (exit 1, its four errors);
#  5. capi/check_document.c compiles against R as a sysroot
#     (PKG_CONFIG_SYSROOT_DIR=R: the .pc says /usr, pkg-config prefixes R)
#     and runs on R's libshardplan.so.ABI (LD_LIBRARY_PATH=R/usr/lib);
#  6. `dpkg --root=R -r shardplan` removes every file again.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
header="${root}/capi/include/shardplan/shardplan.h"
num() { sed -nE "s/^#define $1 ([0-9]+)\$/\\1/p" "$header"; }
release="$(num SP_VERSION_MAJOR).$(num SP_VERSION_MINOR).$(num SP_VERSION_PATCH)"
abi="$(num SP_ABI_VERSION)"
arch="$(dpkg --print-architecture)"

work="$(mktemp -d /tmp/shardplan-deb-test.XXXXXX)"
trap 'rm -rf "$work"' EXIT
fail() { echo "package_deb_test: FAIL: $*" >&2; exit 1; }
step() { echo "--- $*"; }

step "tools/package-deb.sh --out ${work}"
deb="$(bash "${root}/tools/package-deb.sh" --out "$work")"
[[ "$deb" == "${work}/shardplan_${release}_${arch}.deb" && -f "$deb" ]] || fail "no ${work}/shardplan_${release}_${arch}.deb"
cp "${root}/capi/check_document.c" "$work/"
cd "$work"
stat -c '%s bytes: %n' "$deb"
dpkg-deb --field "$deb" Package Version Architecture Depends Suggests

step "contents"
contents="$(dpkg-deb --contents "$deb" | awk '{print $6 $7 $8}' | sed 's|^\./||; s|/$||' | grep -v '^$' | sort)"
for want in usr/bin/shardplan usr/include/shardplan/shardplan.h usr/lib/libshardplan.a \
  "usr/lib/libshardplan.so.${release}" "usr/lib/libshardplan.so.${abi}->libshardplan.so.${release}" \
  "usr/lib/libshardplan.so->libshardplan.so.${abi}" usr/lib/pkgconfig/shardplan.pc \
  usr/share/doc/shardplan/examples/tiny-llama.json; do
  grep -qxF "$want" <<<"$contents" || fail "${want} is not in the package"
done
grep -v '/$' <<<"$contents" | grep -E 'shardplan|examples/tiny-llama.json'

step "Depends covers every library ldd shows"
x="${work}/x"
dpkg-deb -x "$deb" "$x"
depends="$(dpkg-deb --field "$deb" Depends)"
# The package names alone, one a line ("libc6 (>= 2.34), ..." -> "libc6").
depends_names="$(tr ',' '\n' <<<"$depends" | sed -E 's/^ +//; s/ .*//')"
for binary in "${x}/usr/bin/shardplan" "${x}/usr/lib/libshardplan.so.${release}"; do
  ! grep -q 'not found' <<<"$(ldd "$binary")" || fail "$(ldd "$binary")"
  for lib in $(ldd "$binary" | awk '$2 == "=>" && $3 ~ /^\// {print $3}'); do
    # dpkg -S knows the path a package ships; on a merged-/usr system that
    # may be /lib/... for what ldd finds as /usr/lib/..., so try both.
    owner="$(dpkg -S "$lib" 2>/dev/null || dpkg -S "$(realpath "$lib")" 2>/dev/null ||
      dpkg -S "${lib#/usr}" 2>/dev/null || true)"
    package="${owner%%:*}"
    [[ -n "$package" ]] || fail "no package owns ${lib}"
    printf '%-22s %-50s %s\n' "$(basename "$binary")" "$lib" "$package"
    grep -qxF "$package" <<<"$depends_names" || fail "${package} (${lib}) is not in Depends: ${depends}"
  done
done

step "dpkg --root=R --force-depends -i (R: an empty dpkg database)"
r="${work}/root"
mkdir -p "${r}/var/lib/dpkg/info" "${r}/var/lib/dpkg/updates" "${r}/var/lib/dpkg/triggers"
touch "${r}/var/lib/dpkg/status" "${r}/var/lib/dpkg/available"
dpkg --root="$r" --force-depends -i "$deb"
dpkg-query --root="$r" -W -f='${Package} ${Version} ${db:Status-Status}\n' shardplan | tee status.out
grep -qx "shardplan ${release} installed" status.out || fail "not installed in R"
diff <(dpkg --root="$r" -L shardplan | sed 's|^/||' | grep -v '^\.$' | sort) \
  <(dpkg-deb --contents "$deb" | awk '{print $6}' | sed 's|^\./||; s|/$||' | grep -v '^$' | sort) ||
  fail "dpkg -L differs from the package's contents"

step "R/usr/bin/shardplan check R/usr/share/doc/shardplan/examples/..."
examples="${r}/usr/share/doc/shardplan/examples"
out="$("${r}/usr/bin/shardplan" check "${examples}/tiny-llama.json")"
echo "$out"
grep -q 'ok' <<<"$out" || fail "the example is not ok"
rc=0
"${r}/usr/bin/shardplan" check "${examples}/tiny-llama-broken.json" >broken.out || rc=$?
cat broken.out
[[ $rc -eq 1 ]] || fail "the broken example: exit ${rc}, not 1"
[[ "$(grep -c '^error\[' broken.out)" -eq 4 ]] || fail "expected 4 errors"

step "check_document.c against R's library (PKG_CONFIG_SYSROOT_DIR=R)"
export PKG_CONFIG_SYSROOT_DIR="$r" PKG_CONFIG_LIBDIR="${r}/usr/lib/pkgconfig"
unset PKG_CONFIG_PATH
echo "pkg-config --cflags --libs: $(pkg-config --cflags --libs shardplan)"
# shellcheck disable=SC2046
gcc -std=c99 -Wall -Wextra -Werror check_document.c $(pkg-config --cflags --libs shardplan) -o check-deb
LD_LIBRARY_PATH="${r}/usr/lib" ldd check-deb | grep libshardplan
grep -q "=> ${r}/usr/lib/libshardplan.so.${abi}" <<<"$(LD_LIBRARY_PATH="${r}/usr/lib" ldd check-deb)" || fail "not R's library"
out="$(LD_LIBRARY_PATH="${r}/usr/lib" ./check-deb "${examples}/tiny-llama.json")"
echo "$out"
[[ "$out" == "libshardplan ${release}, ABI ${abi}: "*": ok, 0 diagnostics" ]] || fail "check_document output"

step "dpkg --root=R -r shardplan"
dpkg --root="$r" -r shardplan
left="$(find "${r}/usr" ! -type d 2>/dev/null || true)"
[[ -z "$left" ]] || fail "left after removal: ${left}"
echo "package_deb_test: all checks passed"
