#!/bin/sh
echo "remote_coverage_tools is a local stub in this repo (offline build); bazel coverage is not supported." >&2
exit 1
