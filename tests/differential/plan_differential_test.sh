#!/usr/bin/env bash
# Random documents with templates, overrides, blocks and owners, planned by the CLI
# (`shardplan plan`) and by the independent Python model of the planner
# (tools/reference/planner_reference.py): same verdict, same diagnostics (codes and severities,
# in order), same plan, provenance, memory per device, communication and collectives.
set -eu
exec python3 tools/reference/plan_differential.py --cli "$1" --seed "${2:-20261130}" --count "${3:-400}" -j 2
