"""Shim of @rules_cc//cc:action_names.bzl for Bazel 4.2.x."""

load("@bazel_tools//tools/build_defs/cc:action_names.bzl", _ACTION_NAMES = "ACTION_NAMES")

ACTION_NAMES = _ACTION_NAMES
