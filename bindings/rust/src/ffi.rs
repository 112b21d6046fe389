//! Raw declarations of the shardplan C ABI, version 1, written by hand from
//! `capi/include/shardplan/shardplan.h`.
//!
//! Everything here is `unsafe` to call; use the safe wrappers of the crate
//! root instead. C enums are declared as `c_int` with constants, so that a
//! value this binding does not know can never be an invalid Rust enum.

#![allow(non_camel_case_types)]
// The declarations mirror the header one for one; see it for their documentation.
#![allow(missing_docs)]

use std::os::raw::{c_char, c_int};

/// `SP_ABI_VERSION`: the ABI these declarations describe.
pub const SP_ABI_VERSION: u32 = 1;

/// `sp_str`: `size` bytes at `data`, UTF-8, not NUL-terminated. In outputs
/// `data == NULL` means "absent".
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct sp_str {
    pub data: *const c_char,
    pub size: usize,
}

/// `sp_error_code`.
pub type sp_error_code = c_int;
pub const SP_OK: sp_error_code = 0;
pub const SP_ERROR_NULL_ARGUMENT: sp_error_code = 1;
pub const SP_ERROR_INVALID_ARGUMENT: sp_error_code = 2;
pub const SP_ERROR_OUT_OF_RANGE: sp_error_code = 3;
pub const SP_ERROR_OUT_OF_MEMORY: sp_error_code = 4;
pub const SP_ERROR_INTERNAL: sp_error_code = 5;

/// `sp_severity`.
pub type sp_severity = c_int;
pub const SP_SEVERITY_ERROR: sp_severity = 0;
pub const SP_SEVERITY_WARNING: sp_severity = 1;
pub const SP_SEVERITY_INFO: sp_severity = 2;

/// `sp_port`.
pub type sp_port = c_int;
pub const SP_PORT_PARAMS: sp_port = 0;
pub const SP_PORT_IN_SRC: sp_port = 1;
pub const SP_PORT_IN_DST: sp_port = 2;
pub const SP_PORT_OUT_SRC: sp_port = 3;
pub const SP_PORT_OUT_DST: sp_port = 4;

/// Opaque `sp_error`.
#[repr(C)]
pub struct sp_error {
    _private: [u8; 0],
}

/// Opaque `sp_document`.
#[repr(C)]
pub struct sp_document {
    _private: [u8; 0],
}

/// Opaque `sp_result`.
#[repr(C)]
pub struct sp_result {
    _private: [u8; 0],
}

/// Opaque `sp_layout`.
#[repr(C)]
pub struct sp_layout {
    _private: [u8; 0],
}

/// Opaque `sp_builder`.
#[repr(C)]
pub struct sp_builder {
    _private: [u8; 0],
}

/// `sp_parse_options`; all zero means the defaults.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct sp_parse_options {
    pub max_paths: u64,
    pub max_fqn_bytes: u64,
    pub max_json_depth: u32,
}

/// `sp_check_options`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct sp_check_options {
    pub threads: u32,
}

/// `sp_diagnostic`; its strings are owned by the result it was read from.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct sp_diagnostic {
    pub code: sp_str,
    pub severity: sp_severity,
    pub message: sp_str,
    pub fqn: sp_str,
    pub parameter: sp_str,
    pub pointer: sp_str,
}

/// `sp_fix_operation` (since 0.7): one RFC 6902 JSON Patch operation; its
/// strings are owned by the result it was read from. `from` and `value`
/// (JSON text) have data NULL when the operation has none.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct sp_fix_operation {
    pub op: sp_str,
    pub path: sp_str,
    pub from: sp_str,
    pub value: sp_str,
}

/// `sp_diagnostic_group` (since 0.7): diagnostics with one cause. `pointer`
/// has data NULL when they have none; `listed` (`num_listed` diagnostic
/// indexes) is owned by the result it was read from.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct sp_diagnostic_group {
    pub code: sp_str,
    pub severity: sp_severity,
    pub pointer: sp_str,
    pub count: usize,
    pub listed: *const usize,
    pub num_listed: usize,
}

/// `sp_memory`: per-device memory of a planned result; `per_device_bytes`
/// is owned by the result (NULL beyond 65,536 devices).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct sp_memory {
    pub devices: u64,
    pub unsharded_bytes: u64,
    pub max_bytes: u64,
    pub min_bytes: u64,
    pub mean_bytes: f64,
    pub max_device: u64,
    pub per_device_bytes: *const u64,
    pub num_devices_listed: usize,
}

/// `sp_training` (since 0.9): training memory of a result. The worst
/// device's `worst_coordinates` (`num_axes` values, mesh order) and
/// `per_device_total_bytes` (NULL beyond 65,536 devices) are owned by the
/// result.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct sp_training {
    pub worst_device: u64,
    pub worst_coordinates: *const u64,
    pub num_axes: usize,
    pub params: u64,
    pub grads: u64,
    pub master: u64,
    pub optimizer: u64,
    pub gathered: u64,
    pub activations: u64,
    pub total: u64,
    pub max_total_bytes: u64,
    pub min_total_bytes: u64,
    pub mean_total_bytes: f64,
    pub per_device_total_bytes: *const u64,
    pub num_devices_listed: usize,
}

/// `sp_plan_entry`; its strings are owned by the result it was read from.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct sp_plan_entry {
    pub fqn: sp_str,
    pub provenance: sp_str,
}

/// `sp_owner` (since 0.6); its strings are owned by the result it was read
/// from. `native_request` is `usize::MAX` for an owner that is not native.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct sp_owner {
    pub fqn: sp_str,
    pub kind: sp_str,
    pub native_request: usize,
    pub native_pattern: sp_str,
    pub layout: sp_str,
    pub pointer: sp_str,
}

/// `sp_owned_parameter` (since 0.6); its strings are owned by the result it
/// was read from.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct sp_owned_parameter {
    pub name: sp_str,
    pub canonical: sp_str,
    pub owner: usize,
    pub placements: sp_str,
}

/// `sp_communication`; its strings are owned by the result it was read from.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct sp_communication {
    pub fqn: sp_str,
    pub port: sp_str,
    pub axis: sp_str,
    pub from: sp_str,
    pub to: sp_str,
    pub collective: sp_str,
}

/// `sp_parallel_spec`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct sp_parallel_spec {
    pub binding_kind: sp_str,
    pub axes: *const sp_str,
    pub num_axes: usize,
}

extern "C" {
    // Versions
    pub fn sp_abi_version() -> u32;
    pub fn sp_version_string() -> *const c_char;

    // Errors
    pub fn sp_error_code_of(error: *const sp_error) -> sp_error_code;
    pub fn sp_error_message(error: *const sp_error) -> *const c_char;
    pub fn sp_error_delete(error: *mut sp_error);

    // Documents
    pub fn sp_document_parse(
        json: sp_str,
        options: *const sp_parse_options,
        out_document: *mut *mut sp_document,
    ) -> *mut sp_error;
    pub fn sp_document_is_valid(
        document: *const sp_document,
        out_valid: *mut c_int,
    ) -> *mut sp_error;
    pub fn sp_document_delete(document: *mut sp_document);

    // Checking
    pub fn sp_document_check(
        document: *const sp_document,
        options: *const sp_check_options,
        out_result: *mut *mut sp_result,
    ) -> *mut sp_error;
    pub fn sp_result_ok(result: *const sp_result, out_ok: *mut c_int) -> *mut sp_error;
    pub fn sp_result_diagnostic_count(
        result: *const sp_result,
        out_count: *mut usize,
    ) -> *mut sp_error;
    pub fn sp_result_diagnostic(
        result: *const sp_result,
        index: usize,
        out_diagnostic: *mut sp_diagnostic,
    ) -> *mut sp_error;
    // Help, fixes and groups (since 0.7)
    pub fn sp_result_diagnostic_help(
        result: *const sp_result,
        index: usize,
        out_help: *mut sp_str,
    ) -> *mut sp_error;
    pub fn sp_result_diagnostic_fix_count(
        result: *const sp_result,
        index: usize,
        out_count: *mut usize,
    ) -> *mut sp_error;
    pub fn sp_result_diagnostic_fix(
        result: *const sp_result,
        index: usize,
        operation: usize,
        out_operation: *mut sp_fix_operation,
    ) -> *mut sp_error;
    pub fn sp_result_group_count(result: *const sp_result, out_count: *mut usize) -> *mut sp_error;
    pub fn sp_result_group(
        result: *const sp_result,
        index: usize,
        out_group: *mut sp_diagnostic_group,
    ) -> *mut sp_error;
    pub fn sp_result_json(result: *const sp_result, out_json: *mut sp_str) -> *mut sp_error;
    pub fn sp_result_delete(result: *mut sp_result);

    // Planning
    pub fn sp_document_plan(
        document: *const sp_document,
        options: *const sp_check_options,
        out_result: *mut *mut sp_result,
    ) -> *mut sp_error;
    pub fn sp_result_memory(
        result: *const sp_result,
        out_memory: *mut sp_memory,
        out_present: *mut c_int,
    ) -> *mut sp_error;
    // Training memory (since 0.9)
    pub fn sp_result_training(
        result: *const sp_result,
        out_training: *mut sp_training,
        out_present: *mut c_int,
    ) -> *mut sp_error;
    pub fn sp_result_plan_entry_count(
        result: *const sp_result,
        out_count: *mut usize,
    ) -> *mut sp_error;
    pub fn sp_result_plan_entry(
        result: *const sp_result,
        index: usize,
        out_entry: *mut sp_plan_entry,
    ) -> *mut sp_error;
    pub fn sp_result_communication_count(
        result: *const sp_result,
        out_count: *mut usize,
    ) -> *mut sp_error;
    pub fn sp_result_communication(
        result: *const sp_result,
        index: usize,
        out_record: *mut sp_communication,
    ) -> *mut sp_error;

    // Owners and owned parameters (since 0.6)
    pub fn sp_result_owner_count(result: *const sp_result, out_count: *mut usize) -> *mut sp_error;
    pub fn sp_result_owner(result: *const sp_result, index: usize, out_owner: *mut sp_owner) -> *mut sp_error;
    pub fn sp_result_owned_parameter_count(result: *const sp_result, out_count: *mut usize) -> *mut sp_error;
    pub fn sp_result_owned_parameter(
        result: *const sp_result,
        index: usize,
        out_parameter: *mut sp_owned_parameter,
    ) -> *mut sp_error;

    // Layouts
    pub fn sp_layout_create(out_layout: *mut *mut sp_layout) -> *mut sp_error;
    pub fn sp_layout_delete(layout: *mut sp_layout);
    pub fn sp_layout_declare(layout: *mut sp_layout, port: sp_port) -> *mut sp_error;
    pub fn sp_layout_add_entry(
        layout: *mut sp_layout,
        port: sp_port,
        name: sp_str,
    ) -> *mut sp_error;
    pub fn sp_layout_set_placement(
        layout: *mut sp_layout,
        port: sp_port,
        name: sp_str,
        axis: sp_str,
        placement: sp_str,
    ) -> *mut sp_error;
    pub fn sp_layout_set_out_names(
        layout: *mut sp_layout,
        names: *const sp_str,
        count: usize,
    ) -> *mut sp_error;
    pub fn sp_layout_set_legacy_field(layout: *mut sp_layout, field: sp_str) -> *mut sp_error;

    // Builder
    pub fn sp_builder_create(out_builder: *mut *mut sp_builder) -> *mut sp_error;
    pub fn sp_builder_delete(builder: *mut sp_builder);
    pub fn sp_builder_add_axis(builder: *mut sp_builder, name: sp_str, size: i64) -> *mut sp_error;
    pub fn sp_builder_add_parameter(
        builder: *mut sp_builder,
        id: sp_str,
        shape: *const i64,
        rank: usize,
        dtype: sp_str,
    ) -> *mut sp_error;
    pub fn sp_builder_set_parameter_blocks(
        builder: *mut sp_builder,
        id: sp_str,
        blocks: *const i64,
        rank: usize,
    ) -> *mut sp_error;
    pub fn sp_builder_add_module(
        builder: *mut sp_builder,
        id: sp_str,
        type_: sp_str,
    ) -> *mut sp_error;
    pub fn sp_builder_add_forward_arg(
        builder: *mut sp_builder,
        module: sp_str,
        name: sp_str,
    ) -> *mut sp_error;
    pub fn sp_builder_add_child(
        builder: *mut sp_builder,
        module: sp_str,
        name: sp_str,
        child: sp_str,
    ) -> *mut sp_error;
    pub fn sp_builder_add_module_param(
        builder: *mut sp_builder,
        module: sp_str,
        name: sp_str,
        parameter: sp_str,
    ) -> *mut sp_error;
    pub fn sp_builder_set_module_parallel(
        builder: *mut sp_builder,
        module: sp_str,
        parallel: *const sp_parallel_spec,
    ) -> *mut sp_error;
    pub fn sp_builder_set_family(
        builder: *mut sp_builder,
        module: sp_str,
        parallel: c_int,
        sharding: *const sp_layout,
    ) -> *mut sp_error;
    pub fn sp_builder_set_family_cached(
        builder: *mut sp_builder,
        module: sp_str,
        sharding: *const sp_layout,
        parallel: *const sp_parallel_spec,
    ) -> *mut sp_error;
    pub fn sp_builder_set_root(builder: *mut sp_builder, module: sp_str) -> *mut sp_error;
    pub fn sp_builder_add_provider(
        builder: *mut sp_builder,
        fqn: sp_str,
        layout: *const sp_layout,
    ) -> *mut sp_error;
    pub fn sp_builder_add_native(
        builder: *mut sp_builder,
        globs: *const sp_str,
        num_globs: usize,
        sharding: *const sp_layout,
        parallel: *const sp_parallel_spec,
    ) -> *mut sp_error;
    pub fn sp_builder_declare_plan(builder: *mut sp_builder) -> *mut sp_error;
    pub fn sp_builder_add_plan_entry(
        builder: *mut sp_builder,
        fqn: sp_str,
        layout: *const sp_layout,
    ) -> *mut sp_error;
    pub fn sp_builder_add_template(
        builder: *mut sp_builder,
        axis: sp_str,
        prefix: sp_str,
        out_index: *mut usize,
    ) -> *mut sp_error;
    pub fn sp_builder_add_template_rule(
        builder: *mut sp_builder,
        template_index: usize,
        pattern: sp_str,
        style: sp_str,
    ) -> *mut sp_error;
    pub fn sp_builder_add_override(
        builder: *mut sp_builder,
        fqn: sp_str,
        layout: *const sp_layout,
    ) -> *mut sp_error;
    // The training section (since 0.9)
    pub fn sp_builder_set_training(builder: *mut sp_builder, json: sp_str) -> *mut sp_error;
    pub fn sp_builder_to_json(builder: *mut sp_builder, out_json: *mut sp_str) -> *mut sp_error;
    pub fn sp_builder_build(
        builder: *const sp_builder,
        options: *const sp_parse_options,
        out_document: *mut *mut sp_document,
    ) -> *mut sp_error;
}
