#!/usr/bin/env bash
# The C side of issue 41's checks, run by tools/test.sh as the `install` suite:
# tools/install.sh into a temporary prefix P, then, from a directory outside
# the checkout and with nothing of the checkout or its Bazel output on any
# path (only P and the system):
#  1. the layout: exactly the files and links of install.sh's usage, the
#     links' targets, the SONAME (libshardplan.so.SP_ABI_VERSION), the
#     pkg-config file's version and flags;
#  2. the installed CLI checks the example (a copy of examples/tiny-llama.json);
#  3. capi/check_document.c (ten lines) compiles with
#     `pkg-config --cflags --libs shardplan` against the shared library and
#     runs with LD_LIBRARY_PATH unset: the program carries
#     -Wl,-rpath,$(pkg-config --variable=libdir shardplan), since the .pc
#     gives no rpath (as for any library outside ld.so's directories); ldd
#     shows it loads P/lib/libshardplan.so.1;
#  4. the same program linked statically with `pkg-config --static`
#     (-lshardplan spelled -l:libshardplan.a, as the linker prefers the .so
#     next to it) has no DT_NEEDED libshardplan and still runs once
#  5. `install.sh --uninstall` has removed every installed file (P is then
#     left with empty directories only), while the shared build no longer
#     starts;
#  6. DESTDIR: staged under DESTDIR with the prefix, not DESTDIR, in the .pc,
#     and removed again by --uninstall with the same DESTDIR.
# Exit status 0 when all hold. Needs gcc, pkg-config (pkgconf), binutils.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
header="${root}/capi/include/shardplan/shardplan.h"
num() { sed -nE "s/^#define $1 ([0-9]+)\$/\\1/p" "$header"; }
release="$(num SP_VERSION_MAJOR).$(num SP_VERSION_MINOR).$(num SP_VERSION_PATCH)"
abi="$(num SP_ABI_VERSION)"

work="$(mktemp -d /tmp/shardplan-install-test.XXXXXX)"
trap 'rm -rf "$work"' EXIT
prefix="${work}/prefix"
fail() { echo "install_test: FAIL: $*" >&2; exit 1; }
step() { echo "--- $*"; }

step "tools/install.sh --prefix ${prefix}"
bash "${root}/tools/install.sh" --prefix "$prefix"

# Everything below runs in the work directory, with the example and the
# program copied there: no path into the checkout is used.
cp "${root}/examples/tiny-llama.json" "${root}/examples/tiny-llama-broken.json" \
  "${root}/capi/check_document.c" "$work/"
cd "$work"
unset LD_LIBRARY_PATH PKG_CONFIG_PATH PKG_CONFIG_LIBDIR PKG_CONFIG_SYSROOT_DIR

step "layout"
expected="$(printf '%s\n' bin bin/shardplan include include/shardplan include/shardplan/shardplan.h \
  lib lib/libshardplan.a "lib/libshardplan.so.${release}" "lib/libshardplan.so.${abi}" \
  lib/libshardplan.so lib/pkgconfig lib/pkgconfig/shardplan.pc | sort)"
actual="$(cd "$prefix" && find . -mindepth 1 | sed 's|^\./||' | sort)"
if [[ "$expected" != "$actual" ]]; then
  diff <(echo "$expected") <(echo "$actual") >&2 || true
  fail "the installed files differ from the layout"
fi
(cd "$prefix" && stat -c '%A %8s %N' bin/shardplan include/shardplan/shardplan.h lib/libshardplan.* \
  lib/pkgconfig/shardplan.pc)
[[ "$(readlink "${prefix}/lib/libshardplan.so.${abi}")" == "libshardplan.so.${release}" ]] || fail "soname link"
[[ "$(readlink "${prefix}/lib/libshardplan.so")" == "libshardplan.so.${abi}" ]] || fail "development link"
soname="$(readelf -d "${prefix}/lib/libshardplan.so.${release}" | sed -nE 's/.*\(SONAME\).*\[(.*)\]$/\1/p')"
echo "SONAME ${soname}"
[[ "$soname" == "libshardplan.so.${abi}" ]] || fail "SONAME '${soname}'"

step "pkg-config"
export PKG_CONFIG_PATH="${prefix}/lib/pkgconfig"
cat "${prefix}/lib/pkgconfig/shardplan.pc"
pkg-config --validate shardplan
[[ "$(pkg-config --modversion shardplan)" == "$release" ]] || fail "pkg-config --modversion"
# (pkgconf ends its output with a space)
cflags="$(pkg-config --cflags shardplan | sed 's/ *$//')"
libs="$(pkg-config --libs shardplan | sed 's/ *$//')"
static_libs="$(pkg-config --static --libs shardplan | sed 's/ *$//')"
echo "--cflags: ${cflags}"
echo "--libs: ${libs}"
echo "--static --libs: ${static_libs}"
[[ "$cflags" == "-I${prefix}/include" ]] || fail "cflags"
[[ "$libs" == "-L${prefix}/lib -lshardplan" ]] || fail "libs"
[[ "$static_libs" == "-L${prefix}/lib -lshardplan "*"-ltbb"*"-lstdc++"* ]] || fail "static libs"

step "the installed CLI"
"${prefix}/bin/shardplan" check tiny-llama.json
rc=0
"${prefix}/bin/shardplan" check tiny-llama-broken.json >broken.out || rc=$?
[[ $rc -eq 1 ]] || fail "shardplan check of the broken example exited ${rc}, not 1"
grep -q 'error\[native-no-match\]' broken.out || fail "no native-no-match error in: $(cat broken.out)"

step "shared: gcc check_document.c \$(pkg-config --cflags --libs shardplan) -Wl,-rpath,LIBDIR"
# shellcheck disable=SC2086 # pkg-config's flags are meant to split
gcc -std=c99 -Wall -Wextra -Werror check_document.c $cflags $libs \
  -Wl,-rpath,"$(pkg-config --variable=libdir shardplan)" -o check-shared
readelf -d check-shared | grep -E 'NEEDED.*libshardplan|RUNPATH|RPATH'
grep -q "NEEDED.*\[libshardplan.so.${abi}\]" <<<"$(readelf -d check-shared)" || fail "no NEEDED libshardplan.so.${abi}"
ldd check-shared | grep libshardplan
grep -q "libshardplan.so.${abi} => ${prefix}/lib/libshardplan.so.${abi}" <<<"$(ldd check-shared)" ||
  fail "check-shared does not load ${prefix}/lib/libshardplan.so.${abi}"
out="$(env -u LD_LIBRARY_PATH ./check-shared tiny-llama.json)"
echo "$out"
[[ "$out" == "libshardplan ${release}, ABI ${abi}: tiny-llama.json: ok, 0 diagnostics" ]] || fail "shared output"
rc=0
./check-shared tiny-llama-broken.json || rc=$?
[[ $rc -eq 1 ]] || fail "the broken example: exit ${rc}, not 1"

step "static: gcc check_document.c \$(pkg-config --static --cflags --libs shardplan), -l:libshardplan.a"
# shellcheck disable=SC2086
gcc -std=c99 -Wall -Wextra -Werror check_document.c $cflags ${static_libs/-lshardplan/-l:libshardplan.a} \
  -o check-static
readelf -d check-static | grep NEEDED
! grep -q 'NEEDED.*libshardplan' <<<"$(readelf -d check-static)" || fail "check-static needs libshardplan.so"
stat -c '%s bytes: %n' check-shared check-static

step "tools/install.sh --prefix ${prefix} --uninstall"
bash "${root}/tools/install.sh" --prefix "$prefix" --uninstall
left="$(find "$prefix" -mindepth 1 ! -type d)"
[[ -z "$left" ]] || fail "left after uninstall: ${left}"
echo "left: $(cd "$prefix" && find . -mindepth 1 | sort | tr '\n' ' ')(empty directories)"
out="$(./check-static tiny-llama.json)"
echo "static, library uninstalled: ${out}"
[[ "$out" == "libshardplan ${release}, ABI ${abi}: tiny-llama.json: ok, 0 diagnostics" ]] || fail "static output"
if ./check-shared tiny-llama.json 2>/dev/null; then fail "check-shared ran without its library"; fi
echo "shared, library uninstalled: does not start (as it must)"

step "DESTDIR=${work}/stage tools/install.sh --prefix /opt/shardplan"
DESTDIR="${work}/stage" bash "${root}/tools/install.sh" --prefix /opt/shardplan
[[ -f "${work}/stage/opt/shardplan/lib/libshardplan.so.${release}" ]] || fail "nothing staged under DESTDIR"
grep -qx 'prefix=/opt/shardplan' "${work}/stage/opt/shardplan/lib/pkgconfig/shardplan.pc" || fail "DESTDIR in the .pc"
DESTDIR="${work}/stage" bash "${root}/tools/install.sh" --prefix /opt/shardplan --uninstall
left="$(find "${work}/stage" -mindepth 1 ! -type d)"
[[ -z "$left" ]] || fail "left after the DESTDIR uninstall: ${left}"
echo "install_test: all checks passed"
