#!/usr/bin/env bash
# The fuzz dictionary names every diagnostic code and every template style
# the engine knows: a code or style added to the engine and not here fails.
set -euo pipefail
dict="fuzz/shardplan.dict"
missing=0
while read -r word; do
  if ! grep -qF "\"${word}" "${dict}"; then
    echo "missing from ${dict}: ${word}"
    missing=1
  fi
done < <(
  grep -oE 'Code::k[A-Za-z]+, "[a-z-]+"' core/diagnostics/codes.h | sed -E 's/.*"(.*)"/\1/'
  grep -oE '\{"[a-z_]+", Style::k' core/model/style.cc | sed -E 's/\{"([a-z_]+)".*/\1/'
)
[[ ${missing} -eq 0 ]] && echo "every code and style is in ${dict}"
exit "${missing}"
