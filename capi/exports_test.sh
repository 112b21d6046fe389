#!/usr/bin/env bash
# The dynamic symbols libshardplan.so defines are exactly the functions the
# header declares (SP_API ... sp_name(...)): no engine, abseil or C++
# runtime symbol leaks, and no declared function is missing.
set -euo pipefail
lib="$1" header="$2"
declared="$(tr '\n' ' ' <"$header" | grep -oE 'SP_API [^;(]*\bsp_[a-z0-9_]+\(' |
  grep -oE 'sp_[a-z0-9_]+\($' | tr -d '(' | sort)"
# Global symbols only: nm prints local ones (TLS variables stay in the
# dynamic symbol table as LOCAL) in lower case.
exported="$(nm -D --defined-only "$lib" | awk '$2 ~ /^[A-Z]$/ {print $3}' | sed 's/@.*//' | sort)"
if [[ -z "$declared" ]]; then
  echo "no SP_API declarations found in $header" >&2
  exit 1
fi
if [[ "$declared" != "$exported" ]]; then
  echo "exported symbols differ from the header's functions:" >&2
  diff <(echo "$declared") <(echo "$exported") >&2 || true
  exit 1
fi
echo "$(echo "$declared" | wc -l) functions, all exported, nothing else"
