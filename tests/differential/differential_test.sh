#!/usr/bin/env bash
# Random documents of the conformance kinds, checked by the CLI and by the
# independent Python model of the reference (tools/reference): same success,
# same owned result, same first diagnostic.
set -eu
exec python3 tools/reference/differential.py --cli "$1" --seed "${2:-20261129}" --count "${3:-600}" -j 2
