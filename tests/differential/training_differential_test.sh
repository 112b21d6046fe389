#!/usr/bin/env bash
# Random documents with a `training` section (every zero stage, frozen parameters, FSDP units,
# tied parameters, activations, meshes of one to four axes), planned and checked by the CLI
# and by the independent Python model of training-v1 (tools/reference/training_reference.py,
# brute force over every device): same verdict, same memory.training figures, same training
# diagnostics.
set -eu
exec python3 tools/reference/training_differential.py --cli "$1" --seed "${2:-20261206}" --count "${3:-400}" -j 2
