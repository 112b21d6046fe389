#!/usr/bin/env bash
# //capi:libshardplan.a (static_library.bzl) is one self-contained archive:
#  1. it holds one object, whose global symbols (defined: any binding but
#     LOCAL, so weak and GNU-unique ones count too) are exactly the functions
#     the header declares: no engine, abseil or C++ runtime symbol is
#     visible to a program linking it;
#  2. a C program that checks a document links it with nothing but the
#     system libraries of libshardplan.a.libs, needs no libshardplan.so at
#     run time (no DT_NEEDED entry), and reports the document ok;
#  3. a C++ program with its own instances of libstdc++ templates and inline
#     functions the engine also instantiates links it too (no "defined in
#     discarded section" or "multiple definition": static_library.bzl).
# Part 2 is skipped in sanitizer builds (--config=asan, ubsan, fuzz): their
# objects need the sanitizer runtimes of the compiler that built them.
# Arguments: the rule's outputs (libshardplan.a and libshardplan.a.libs, in
# any order), the header, check_document.c, a valid document.
set -euo pipefail
archive="" libs_file=""
for f in "$1" "$2"; do
  case "$f" in
    *.a) archive="$f" ;;
    *.libs) libs_file="$f" ;;
  esac
done
header="$3" program="$4" document="$5"
[[ -n "$archive" && -n "$libs_file" ]] || {
  echo "usage: $0 ARCHIVE LIBS HEADER PROGRAM DOCUMENT" >&2
  exit 2
}

members="$(ar t "$archive")"
if [[ "$(wc -l <<<"$members")" -ne 1 ]]; then
  echo "expected one object in $archive, found:" >&2
  echo "$members" >&2
  exit 1
fi

declared="$(tr '\n' ' ' <"$header" | grep -oE 'SP_API [^;(]*\bsp_[a-z0-9_]+\(' |
  grep -oE 'sp_[a-z0-9_]+\($' | tr -d '(' | sort)"
[[ -n "$declared" ]] || {
  echo "no SP_API declarations found in $header" >&2
  exit 1
}
# readelf -s --wide: Num: Value Size Type Bind Vis Ndx Name
global="$(readelf -s --wide "$archive" |
  awk '$5 != "LOCAL" && $5 != "Bind" && $7 != "UND" && NF >= 8 {print $8}' | sort -u)"
if [[ "$declared" != "$global" ]]; then
  echo "global symbols of $archive differ from the header's functions:" >&2
  diff <(echo "$declared") <(echo "$global") >&2 || true
  exit 1
fi
echo "$(echo "$declared" | wc -l) functions global, nothing else"

# (grep reads all of nm's output: with -q, nm could die of SIGPIPE and
# pipefail turn the match into a failure.)
if nm -u "$archive" | grep -E '__(asan|ubsan|tsan|sanitizer)_' >/dev/null; then
  echo "sanitizer build: not linking a program against it"
  exit 0
fi
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/include/shardplan"
cp "$header" "$work/include/shardplan/shardplan.h"
mapfile -t libs <"$libs_file"
gcc -std=c99 -Wall -Wextra -Werror -I"$work/include" "$program" "$archive" "${libs[@]}" -o "$work/check"
if grep -q 'NEEDED.*libshardplan' <<<"$(readelf -d "$work/check")"; then
  echo "the program needs libshardplan.so:" >&2
  readelf -d "$work/check" >&2
  exit 1
fi
out="$("$work/check" "$document")"
echo "$out"
[[ "$out" == *": ok, 0 diagnostics" ]]

cat >"$work/user.cc" <<'CC'
#include <shardplan/shardplan.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

int main() {
  std::vector<std::string> names{"tp", "dp"};
  std::sort(names.begin(), names.end());
  std::map<std::string, int> sizes{{names[0], 2}, {names[1], 4}};
  std::printf("C++ program: libshardplan %s, %s=%d\n", sp_version_string(), names[0].c_str(), sizes["dp"]);
  return 0;
}
CC
g++ -std=c++20 -Wall -Werror -I"$work/include" "$work/user.cc" "$archive" "${libs[@]}" -o "$work/user"
"$work/user"
