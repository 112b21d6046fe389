#!/usr/bin/env bash
# The Python model of training-v1 on hand-made documents (DeepSpeed's ZeRO sizes, FSDP2
# padding, frozen and tied parameters, FSDP units, the paper's activations, verdicts, invalid
# sections): the reference the differential test trusts is itself tested.
set -eu
exec python3 tools/reference/training_reference_test.py
