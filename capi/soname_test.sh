#!/usr/bin/env bash
# libshardplan.so's SONAME is libshardplan.so.SP_ABI_VERSION, with the ABI
# version the header declares: capi/BUILD spells the soname out in its
# linkopts, and this test keeps the two from drifting apart. (The installed
# file name, libshardplan.so.MAJOR.MINOR.PATCH, carries the release; see
# tools/install.sh.)
set -euo pipefail
lib="$1" header="$2"
abi="$(sed -nE 's/^#define SP_ABI_VERSION ([0-9]+)$/\1/p' "$header")"
if [[ -z "$abi" ]]; then
  echo "no '#define SP_ABI_VERSION N' in $header" >&2
  exit 1
fi
# readelf -d prints: 0x... (SONAME)  Library soname: [libshardplan.so.1]
soname="$(readelf -d "$lib" | sed -nE 's/.*\(SONAME\).*\[(.*)\]$/\1/p')"
if [[ "$soname" != "libshardplan.so.${abi}" ]]; then
  echo "SONAME of $lib is '${soname}', but the header's SP_ABI_VERSION ${abi} means" \
    "'libshardplan.so.${abi}': change -Wl,-soname in capi/BUILD with the ABI version" >&2
  exit 1
fi
echo "SONAME ${soname}, SP_ABI_VERSION ${abi}"
