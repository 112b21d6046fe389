/*
 * shardplan C ABI, version 1.
 *
 * One small, stable interface to the shardplan engine for every language:
 * parse a shardplan.v1 document (or build one with the builder), check it,
 * read the diagnostics and the result. The contract (ownership, errors,
 * threads, versioning) is described in docs/capi.md; in short:
 *
 *  - Handles are opaque. Every `sp_X_create`/`sp_X_parse`/`sp_X_build` has a
 *    matching `sp_X_delete`; `sp_X_delete(NULL)` does nothing.
 *  - A call that can fail returns `sp_error *`: NULL on success, otherwise an
 *    error the caller owns and frees with `sp_error_delete`. On failure the
 *    out-parameters are left untouched. No C++ exception crosses this
 *    boundary, and a NULL pointer argument is an error (SP_ERROR_NULL_ARGUMENT),
 *    never a crash.
 *  - Strings passed in are `(pointer, length)` pairs (`sp_str`), need not be
 *    NUL-terminated, and are copied before the call returns. Strings and
 *    arrays passed out are owned by the handle they were read from and stay
 *    valid, unchanged, until that handle is deleted.
 *  - Findings about a document (including malformed JSON) are diagnostics in
 *    the result, not errors: an `sp_error` means the API was misused or memory
 *    ran out.
 *  - Threads: handles may be shared between threads for reading (every
 *    function taking a `const` handle); a builder or layout being modified
 *    must not be used by another thread at the same time.
 */
#ifndef SHARDPLAN_SHARDPLAN_H_
#define SHARDPLAN_SHARDPLAN_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(_WIN32)
#define SP_API
#elif defined(__GNUC__) || defined(__clang__)
#define SP_API __attribute__((visibility("default")))
#else
#define SP_API
#endif

/* ---- Versions ------------------------------------------------------------ */

/* The library release these declarations come from. */
#define SP_VERSION_MAJOR 0
#define SP_VERSION_MINOR 9
#define SP_VERSION_PATCH 0

/* The ABI these declarations describe. It changes only when an existing
 * function, type or constant changes incompatibly; functions are only ever
 * added within one ABI version. Compare it with sp_abi_version() at load. */
#define SP_ABI_VERSION 1

/* The ABI version of the library actually loaded. */
SP_API uint32_t sp_abi_version(void);

/* The library release as "MAJOR.MINOR.PATCH"; static storage, never freed. */
SP_API const char *sp_version_string(void);

/* ---- Strings ------------------------------------------------------------- */

/* A byte string: `size` bytes at `data`, UTF-8, not NUL-terminated. An input
 * with size 0 may have data NULL. In outputs, data == NULL means "absent"
 * (for example a diagnostic without an FQN), while the root module's FQN ""
 * is present: data != NULL and size 0. Output strings are followed by a NUL
 * byte that is not counted in `size`. */
typedef struct sp_str {
  const char *data;
  size_t size;
} sp_str;

/* ---- Errors -------------------------------------------------------------- */

typedef enum sp_error_code {
  SP_OK = 0,
  SP_ERROR_NULL_ARGUMENT = 1,    /* a required pointer argument was NULL */
  SP_ERROR_INVALID_ARGUMENT = 2, /* a value is out of range or malformed */
  SP_ERROR_OUT_OF_RANGE = 3,     /* an index past the end */
  SP_ERROR_OUT_OF_MEMORY = 4,
  SP_ERROR_INTERNAL = 5          /* a bug in shardplan: please report it */
} sp_error_code;

typedef struct sp_error sp_error;

/* The error's code; SP_OK for NULL (no error). */
SP_API sp_error_code sp_error_code_of(const sp_error *error);

/* The error's message, NUL-terminated; "" for NULL. Valid until the error
 * is deleted. */
SP_API const char *sp_error_message(const sp_error *error);

/* Frees an error. NULL does nothing. */
SP_API void sp_error_delete(sp_error *error);

/* ---- Documents ----------------------------------------------------------- */

typedef struct sp_document sp_document;

/* Limits that refuse hostile input while parsing (docs/format.md, section 5).
 * Zero-initialise it (or pass NULL) for the defaults. */
typedef struct sp_parse_options {
  uint64_t max_paths;     /* module paths; 0: default 10,000,000 */
  uint64_t max_fqn_bytes; /* total bytes of module FQNs; 0: default 2^30 */
  uint32_t max_json_depth; /* nesting of arrays/objects; 0: default 64 */
} sp_parse_options;

/* Parses a shardplan.v1 document from `json` (`size` bytes; data may be NULL
 * when size is 0). `options` may be NULL (defaults). The text is not
 * retained. A malformed document is not an error: it gives a document whose
 * check reports the single invalid-document diagnostic. On success
 * `*out_document` is a new document; free it with sp_document_delete. */
SP_API sp_error *sp_document_parse(sp_str json, const sp_parse_options *options,
                                   sp_document **out_document);

/* Whether the document parsed: 1 valid, 0 malformed (its check result then
 * holds the invalid-document diagnostic). */
SP_API sp_error *sp_document_is_valid(const sp_document *document, int *out_valid);

/* Frees a document. Results checked from it stay valid. NULL does nothing. */
SP_API void sp_document_delete(sp_document *document);

/* ---- Checking ------------------------------------------------------------ */

typedef struct sp_result sp_result;

typedef struct sp_check_options {
  /* Worker threads for the parallel phases; 0: all cores. Results and the
   * order of diagnostics are the same for every value. */
  uint32_t threads;
} sp_check_options;

/* Checks the document: module-owned layouts, claims and, when the document
 * has a plan, the final plan (spec sections 4 to 6). `options` may be NULL.
 * A document may be checked any number of times, from several threads at
 * once. On success `*out_result` is a new result; free it with
 * sp_result_delete. */
SP_API sp_error *sp_document_check(const sp_document *document, const sp_check_options *options,
                                   sp_result **out_result);

/* 1 when the document has no error diagnostic, else 0. */
SP_API sp_error *sp_result_ok(const sp_result *result, int *out_ok);

/* The number of diagnostics, in evaluation order (the first one is the
 * reference framework's error). */
SP_API sp_error *sp_result_diagnostic_count(const sp_result *result, size_t *out_count);

typedef enum sp_severity {
  SP_SEVERITY_ERROR = 0,
  SP_SEVERITY_WARNING = 1,
  SP_SEVERITY_INFO = 2
} sp_severity;

/* One diagnostic. Every string is owned by the result and valid until it is
 * deleted; fqn, parameter and pointer have data == NULL when absent. */
typedef struct sp_diagnostic {
  sp_str code;      /* stable kebab-case code, e.g. "shared-conflict" */
  sp_severity severity;
  sp_str message;   /* for ownership errors, the reference's exact message */
  sp_str fqn;       /* module FQN ("" is the root) */
  sp_str parameter; /* parameter name */
  sp_str pointer;   /* RFC 6901 JSON pointer of the declaration at fault */
} sp_diagnostic;

/* Reads diagnostic `index` (0-based) into `*out_diagnostic`. */
SP_API sp_error *sp_result_diagnostic(const sp_result *result, size_t index,
                                      sp_diagnostic *out_diagnostic);

/* What to change, where the engine knows ("did you mean 'tp'?"), for
 * diagnostic `index`: data == NULL when it has no help. */
SP_API sp_error *sp_result_diagnostic_help(const sp_result *result, size_t index, sp_str *out_help);

/* One operation of an RFC 6902 JSON Patch on the document: "move" (from ->
 * path) or "replace" (the value at path by `value`, JSON text). from and
 * value have data == NULL when the operation has none. */
typedef struct sp_fix_operation {
  sp_str op;
  sp_str path;  /* RFC 6901 JSON pointer */
  sp_str from;
  sp_str value;
} sp_fix_operation;

/* The number of operations of diagnostic `index`'s fix: 0 when it has none.
 * Applied to the document in order, they make the finding go away without
 * adding an error to the stages that ran (docs/semantics.md section 9). */
SP_API sp_error *sp_result_diagnostic_fix_count(const sp_result *result, size_t index, size_t *out_count);

/* Reads operation `operation` of diagnostic `index`'s fix. */
SP_API sp_error *sp_result_diagnostic_fix(const sp_result *result, size_t index, size_t operation,
                                          sp_fix_operation *out_operation);

/* Diagnostics with one cause: the same code at the same declaration (the
 * same pointer, or none), as one over-wide native pattern gives one
 * diagnostic per module it should not have matched. Every diagnostic is in
 * exactly one group; groups come in the order of their first diagnostic. */
typedef struct sp_diagnostic_group {
  sp_str code;
  sp_severity severity;
  sp_str pointer;       /* data == NULL when its diagnostics have none */
  size_t count;         /* its diagnostics */
  const size_t *listed; /* their sp_result_diagnostic indexes, in order; owned by the result */
  size_t num_listed;    /* == count */
} sp_diagnostic_group;

/* The number of groups. */
SP_API sp_error *sp_result_group_count(const sp_result *result, size_t *out_count);

/* Reads group `index` (0-based) into `*out_group`. */
SP_API sp_error *sp_result_group(const sp_result *result, size_t index, sp_diagnostic_group *out_group);

/* The whole result as compact JSON (schema shardplan.result.v1, the bytes
 * `shardplan check --format json` prints). Owned by the result: valid until
 * it is deleted. */
SP_API sp_error *sp_result_json(const sp_result *result, sp_str *out_json);

/* Frees a result. NULL does nothing. */
SP_API void sp_result_delete(sp_result *result);

/* ---- Planning (planner-v1, `shardplan plan`) ------------------------------ */

/* Makes the final plan from the document's owners, templates and overrides
 * and checks it (ownership, the plan checks, shapes), then computes the
 * memory per device and the collectives the plan implies. A document that
 * gives a `plan` of its own is checked as sp_document_check does (no plan is
 * made). The result's JSON then also has "plan", "provenance", "memory",
 * "communication" and "collectives". `options` may be NULL. A document may
 * be planned any number of times, from several threads at once. */
SP_API sp_error *sp_document_plan(const sp_document *document, const sp_check_options *options,
                                  sp_result **out_result);

/* Per-device memory of a planned result (planner-v1 section 5). Devices are
 * numbered row-major over the mesh axes; bytes are per device. */
typedef struct sp_memory {
  uint64_t devices;
  uint64_t unsharded_bytes; /* every parameter identity once, unsharded */
  uint64_t max_bytes;
  uint64_t min_bytes;
  double mean_bytes;
  uint64_t max_device;      /* the lowest device holding max_bytes */
  const uint64_t *per_device_bytes; /* NULL beyond 65,536 devices */
  size_t num_devices_listed;        /* entries at per_device_bytes */
} sp_memory;

/* Reads the memory of a planned result into `*out_memory` and sets
 * `*out_present` to 1; `*out_present` is 0 (and `*out_memory` untouched)
 * when there is none: the result was not planned, or the mesh has more than
 * 2^24 devices. per_device_bytes is owned by the result. */
SP_API sp_error *sp_result_memory(const sp_result *result, sp_memory *out_memory, int *out_present);

/* Training memory of a result (training-v1 section 4), for a document with
 * a `training` section: the worst device (the largest total, the lowest
 * number on ties) by category, and the totals over devices. All in bytes per
 * device; a category that does not apply is 0. Since version 0.9. */
typedef struct sp_training {
  uint64_t worst_device;
  const uint64_t *worst_coordinates; /* one per mesh axis, mesh order */
  size_t num_axes;
  uint64_t params;
  uint64_t grads;
  uint64_t master;
  uint64_t optimizer;
  uint64_t gathered;    /* the largest FSDP unit, gathered (zero 3) */
  uint64_t activations; /* the same on every device */
  uint64_t total;
  uint64_t max_total_bytes;
  uint64_t min_total_bytes;
  double mean_total_bytes;
  const uint64_t *per_device_total_bytes; /* NULL beyond 65,536 devices */
  size_t num_devices_listed;              /* entries at per_device_total_bytes */
} sp_training;

/* Reads the training memory of a result into `*out_training` and sets
 * `*out_present` to 1; `*out_present` is 0 (and `*out_training` untouched)
 * when there is none: the document has no `training` section, or no plan was
 * made (a plan made by sp_document_plan, or the document's own plan once
 * every check passed), or the mesh has more than 2^24 devices. The verdict
 * (exceeds-device-memory, near-device-memory) is among the result's
 * diagnostics. Arrays are owned by the result. Since version 0.9. */
SP_API sp_error *sp_result_training(const sp_result *result, sp_training *out_training, int *out_present);

/* One entry of a planned result's final plan: the module's FQN and where
 * the entry came from ("owned:model", "owned:family", "owned:native",
 * "template:AXIS:PATTERN" (one per rule), "override"), joined with ", ".
 * The layout itself is in sp_result_json. Strings are owned by the result. */
typedef struct sp_plan_entry {
  sp_str fqn;
  sp_str provenance;
} sp_plan_entry;

/* The number of plan entries (0 when the result was not planned). */
SP_API sp_error *sp_result_plan_entry_count(const sp_result *result, size_t *out_count);

/* Reads plan entry `index` (0-based, plan order). */
SP_API sp_error *sp_result_plan_entry(const sp_result *result, size_t index, sp_plan_entry *out_entry);

/* One communication record of a planned result (planner-v1 section 6): on
 * port `port` ("in:NAME" or "out:NAME") of the module at `fqn`, mesh axis
 * `axis` goes from placement `from` to `to`, which takes `collective`
 * ("all_gather", "slice", "all_reduce", "reduce_scatter", "all_to_all",
 * "none" or "unsupported"). Strings are owned by the result. */
typedef struct sp_communication {
  sp_str fqn;
  sp_str port;
  sp_str axis;
  sp_str from;
  sp_str to;
  sp_str collective;
} sp_communication;

/* The number of communication records (0 when the result was not planned). */
SP_API sp_error *sp_result_communication_count(const sp_result *result, size_t *out_count);

/* Reads communication record `index` (0-based: plan order, ports, mesh axes). */
SP_API sp_error *sp_result_communication(const sp_result *result, size_t index,
                                         sp_communication *out_record);

/* ---- Owners and owned parameters (spec section 4) ----------------------- */

/* One owner of a module-owned layout, as the engine collected it (spec
 * section 4 steps 1-4): a model provider, a family or a native request's
 * match. Every check and plan of a valid document keeps its owners, also
 * when a later check failed; what collection refused (unknown-module,
 * multiple-owners, native-overlaps-family) is no owner. Strings are owned
 * by the result. Since version 0.6. */
typedef struct sp_owner {
  sp_str fqn;            /* the owned module path ("" is the root) */
  sp_str kind;           /* "model", "family" or "native" */
  size_t native_request; /* a native owner's request: its index in
                            providers.native; SIZE_MAX for other owners */
  sp_str native_pattern; /* the request's pattern that added it (the first
                            of its `match` that matches fqn); absent (data
                            NULL) for other owners */
  sp_str layout;         /* its layout as compact JSON, as the result prints
                            owned.specs: the document's layout (a family's
                            cached one when it has one) less the params
                            claims dropped (a tied parameter an earlier owner
                            claims with the same placement), with
                            normalized out_names. Owners that share a layout
                            in the document share these bytes. */
  sp_str pointer;        /* JSON pointer of the layout in the document, e.g.
                            "/modules/attn/family/cached/sharding" */
} sp_owner;

/* The number of owners (0 for an invalid document), in entry order: the
 * order of owned.specs in sp_result_json when the result is ok. */
SP_API sp_error *sp_result_owner_count(const sp_result *result, size_t *out_count);

/* Reads owner `index` (0-based). */
SP_API sp_error *sp_result_owner(const sp_result *result, size_t index, sp_owner *out_owner);

/* One parameter slot whose parameter an owner claims: an entry of the
 * result's owned_names. Strings are owned by the result. Since version
 * 0.6. */
typedef struct sp_owned_parameter {
  sp_str name;       /* the slot's full name, e.g. "lm_head.weight" */
  sp_str canonical;  /* the parameter's canonical full name, under which it
                        was claimed first: `name` itself, unless the slot is
                        another name of a tied parameter */
  size_t owner;      /* the sp_result_owner index of the owner that claimed
                        the parameter first, whose layout places it */
  sp_str placements; /* its placement per mesh axis, as that layout lists
                        them, as a compact JSON object: {"dp":"R","tp":"S(0)"};
                        equal objects share these bytes */
} sp_owned_parameter;

/* The number of owned parameter slots: the length of owned_names when the
 * result is ok, else 0. In named_parameters(root) order (the module tree's
 * order), a tied parameter once per slot. */
SP_API sp_error *sp_result_owned_parameter_count(const sp_result *result, size_t *out_count);

/* Reads owned parameter slot `index` (0-based). */
SP_API sp_error *sp_result_owned_parameter(const sp_result *result, size_t index,
                                           sp_owned_parameter *out_parameter);

/* ---- Building a document ------------------------------------------------- */

/* A layout (module sharding spec) under construction: params, in_src,
 * in_dst, out_src, out_dst (each absent until declared), out_names and the
 * legacy compute-injection fields. The builder copies a layout when it is
 * passed in, so one layout may be reused and must be freed by its creator. */
typedef struct sp_layout sp_layout;

typedef enum sp_port {
  SP_PORT_PARAMS = 0,
  SP_PORT_IN_SRC = 1,
  SP_PORT_IN_DST = 2,
  SP_PORT_OUT_SRC = 3,
  SP_PORT_OUT_DST = 4
} sp_port;

SP_API sp_error *sp_layout_create(sp_layout **out_layout);

/* Frees a layout. NULL does nothing. */
SP_API void sp_layout_delete(sp_layout *layout);

/* Declares `port` as present (an empty map `{}` until entries are added);
 * declaring it again does nothing. */
SP_API sp_error *sp_layout_declare(sp_layout *layout, sp_port port);

/* Adds entry `name` to `port` (declaring the port) with no placement yet,
 * like `"x": {}`; an existing entry is kept. Entries keep insertion order. */
SP_API sp_error *sp_layout_add_entry(sp_layout *layout, sp_port port, sp_str name);

/* Places entry `name` of `port` (created if needed) on mesh axis `axis`:
 * `placement` is "R", "S(dim)", "P" or "P(op)" (docs/format.md, section 3).
 * A malformed placement or an axis placed twice is SP_ERROR_INVALID_ARGUMENT. */
SP_API sp_error *sp_layout_set_placement(sp_layout *layout, sp_port port, sp_str name, sp_str axis,
                                         sp_str placement);

/* Sets out_names to the `count` names at `names` (NULL allowed when count is
 * 0), replacing any earlier list. The names are copied. */
SP_API sp_error *sp_layout_set_out_names(sp_layout *layout, const sp_str *names, size_t count);

/* Sets legacy compute-injection field `field` ("local_compute_fn",
 * "inner_wrapper", "inner_target" or "region_dispatch"; another name is
 * SP_ERROR_INVALID_ARGUMENT), as a non-null value in the JSON would: a
 * layout that sets one is the legacy-injection diagnostic wherever it owns
 * a module (docs/format.md). Only which field is set is kept, not a value;
 * of several, the first in the order above is the one reported. Since
 * version 0.5. */
SP_API sp_error *sp_layout_set_legacy_field(sp_layout *layout, sp_str field);

/* A parallel spec: a binding kind ("tp", "mesh", "none", ...) and the mesh
 * axes it communicates on (`axes` may be NULL when num_axes is 0). */
typedef struct sp_parallel_spec {
  sp_str binding_kind;
  const sp_str *axes;
  size_t num_axes;
} sp_parallel_spec;

/* Builds a document in code: everything a shardplan.v1 document says (mesh,
 * parameters with shape, dtype and blocks, modules, the root, providers,
 * native requests, a final plan, or templates and overrides, a pipeline
 * plan). The document is made directly, equal to the parsed equivalent
 * JSON document: checking or planning it gives the same result, entries in
 * the order they were added. What a call alone makes invalid is refused at
 * the call (SP_ERROR_INVALID_ARGUMENT, nothing changes): a name that must
 * be unique given twice (an axis, an id, a child or parameter name of a
 * module, a provider, plan or override FQN, a template pattern, a pipeline
 * module), a malformed placement, a size, dimension, dtype, block, name or
 * style the format does not allow, a plan next to templates or overrides,
 * a second pipeline plan, and a module, parameter, mesh axis, template or
 * pipeline plan that must already have been added.
 * References (child module ids, parameter ids, the root) are resolved when
 * the document is built, so modules may be added in any order: a dangling
 * one, a missing root, a cycle or a tree past the path limits is the
 * invalid-document diagnostic of the built document, with the message and
 * JSON pointer parsing the equivalent JSON gives (the pointer names a place
 * in sp_builder_to_json's text). docs/capi.md lists every case. */
typedef struct sp_builder sp_builder;

SP_API sp_error *sp_builder_create(sp_builder **out_builder);

/* Frees a builder. NULL does nothing. */
SP_API void sp_builder_delete(sp_builder *builder);

/* Appends mesh axis `name` of `size` devices (>= 1). */
SP_API sp_error *sp_builder_add_axis(sp_builder *builder, sp_str name, int64_t size);

/* Adds parameter identity `id`. `dtype` may be empty (the default,
 * float32), else one of the format's dtypes (another is
 * SP_ERROR_INVALID_ARGUMENT). `shape` lists `rank` dimensions (>= 0), copied;
 * pass shape NULL and rank 0 for an unknown shape, and a non-NULL shape with
 * rank 0 for a scalar. */
SP_API sp_error *sp_builder_add_parameter(sp_builder *builder, sp_str id, const int64_t *shape,
                                          size_t rank, sp_str dtype);

/* Sets the blocks of parameter `id` (added before): `rank` positive
 * integers at `blocks` (copied; NULL allowed when rank is 0), one per
 * dimension of its known shape, each dividing its dimension (planner-v1
 * section 4: dimension i is made of indivisible units of blocks[i]
 * elements). Replaces earlier blocks. Since version 0.5. */
SP_API sp_error *sp_builder_set_parameter_blocks(sp_builder *builder, sp_str id, const int64_t *blocks,
                                                 size_t rank);

/* Adds module identity `id`; `type` (the class name) may be empty (none). */
SP_API sp_error *sp_builder_add_module(sp_builder *builder, sp_str id, sp_str type);

/* Appends `name` ("x", "*args", "**kwargs") to the module's forward
 * signature. */
SP_API sp_error *sp_builder_add_forward_arg(sp_builder *builder, sp_str module, sp_str name);

/* Registers module `child` as child `name` of `module`. `name` is
 * non-empty, has no '.', and is not already a child or parameter name of
 * the module; `child` may be added later. */
SP_API sp_error *sp_builder_add_child(sp_builder *builder, sp_str module, sp_str name, sp_str child);

/* Registers parameter identity `parameter` as parameter `name` of `module`,
 * with the rules of sp_builder_add_child for `name`; `parameter` may be
 * added later. */
SP_API sp_error *sp_builder_add_module_param(sp_builder *builder, sp_str module, sp_str name,
                                             sp_str parameter);

/* Sets the module's own parallel spec (copied; its binding_kind must not be
 * empty); NULL clears it. */
SP_API sp_error *sp_builder_set_module_parallel(sp_builder *builder, sp_str module,
                                                const sp_parallel_spec *parallel);

/* Makes the module a family member: `parallel` (0 or 1) and its sharding
 * provider's layout (`sharding` NULL: it provides none). Called again, it
 * replaces both and keeps a cached layout. */
SP_API sp_error *sp_builder_set_family(sp_builder *builder, sp_str module, int parallel,
                                       const sp_layout *sharding);

/* Sets the layout already applied to a family member (the module must be a
 * family member): `sharding` is required, `parallel` may be NULL. */
SP_API sp_error *sp_builder_set_family_cached(sp_builder *builder, sp_str module,
                                              const sp_layout *sharding,
                                              const sp_parallel_spec *parallel);

/* Sets the root module id. */
SP_API sp_error *sp_builder_set_root(sp_builder *builder, sp_str module);

/* Adds a model-adapter sharding provider for the module at `fqn`. */
SP_API sp_error *sp_builder_add_provider(sp_builder *builder, sp_str fqn, const sp_layout *layout);

/* Appends a native request: `num_globs` patterns (at least one pattern
 * array; it may be empty only when num_globs is 0), the layout and an
 * optional parallel spec. */
SP_API sp_error *sp_builder_add_native(sp_builder *builder, const sp_str *globs, size_t num_globs,
                                       const sp_layout *sharding, const sp_parallel_spec *parallel);

/* Gives the document a final plan, with no entries until some are added
 * (an empty plan is checked too: it covers no parameter). A builder with
 * templates or overrides refuses a plan (SP_ERROR_INVALID_ARGUMENT). */
SP_API sp_error *sp_builder_declare_plan(sp_builder *builder);

/* Adds the final-plan layout of the module at `fqn` (declaring the plan).
 * The layout must declare params (SP_PORT_PARAMS), as the format requires of
 * a plan layout. */
SP_API sp_error *sp_builder_add_plan_entry(sp_builder *builder, sp_str fqn, const sp_layout *layout);

/* Appends a generic template (planner-v1, `shardplan plan`) for mesh axis
 * `axis`, which must already be added, under FQN `prefix` (empty: the whole
 * model); `*out_index` is its index (0, 1, ...) for
 * sp_builder_add_template_rule. A builder with a plan refuses templates.
 * Since version 0.5. */
SP_API sp_error *sp_builder_add_template(sp_builder *builder, sp_str axis, sp_str prefix,
                                         size_t *out_index);

/* Appends rule `pattern` -> `style` to template `template_index`: a
 * non-empty pattern not already in that template ("layers.*.mlp.up_proj"),
 * and a style name ("colwise", "rowwise", ...: docs/planning.md). Since
 * version 0.5. */
SP_API sp_error *sp_builder_add_template_rule(sp_builder *builder, size_t template_index, sp_str pattern,
                                              sp_str style);

/* Adds the override of the module at `fqn`: its final-plan layout, which
 * replaces whatever owners and templates would give it. The layout must
 * declare params; a builder with a plan refuses overrides. Since version
 * 0.5. */
SP_API sp_error *sp_builder_add_override(sp_builder *builder, sp_str fqn, const sp_layout *layout);

/* Gives the document a pipeline plan (Hugging Face's base_model_pp_plan,
 * docs/planning.md) under FQN `prefix` (empty: the whole model), with no
 * modules until sp_builder_add_pipeline_module adds them. A builder that
 * already has one refuses another. Since version 0.8. */
SP_API sp_error *sp_builder_set_pipeline(sp_builder *builder, sp_str prefix);

/* Appends pipeline stage `module` (relative to the pipeline's prefix) to
 * the pipeline plan (sp_builder_set_pipeline first): a non-empty module not
 * already in the plan ("layers"), the `num_inputs` names it takes and the
 * `num_outputs` names it gives, in order (each array may be NULL when its
 * count is 0; the names are copied). Since version 0.8. */
SP_API sp_error *sp_builder_add_pipeline_module(sp_builder *builder, sp_str module, const sp_str *inputs,
                                                size_t num_inputs, const sp_str *outputs, size_t num_outputs);

/* Gives the document its `training` section (training-v1, docs/format.md):
 * `json` is the section's JSON text, an object such as
 * {"zero": 3, "device_memory": "80GiB"}. Refused (SP_INVALID_ARGUMENT,
 * nothing changes) when it is not one, when a value in it is invalid, and
 * when the builder already has a training section; what depends on the mesh
 * (shard_axes, activations.tensor_axis) is checked by sp_builder_build, as
 * the parser checks it. Since version 0.9. */
SP_API sp_error *sp_builder_set_training(sp_builder *builder, sp_str json);

/* The document built so far as shardplan.v1 JSON (pretty-printed), printed
 * from the builder's document: parsing it gives the document
 * sp_builder_build gives, though what the document does not keep is spelled
 * canonically (docs/capi.md). Owned by the builder, valid until the next
 * sp_builder_to_json on it or its deletion. */
SP_API sp_error *sp_builder_to_json(sp_builder *builder, sp_str *out_json);

/* Builds the document made so far, directly (no JSON text): a new document
 * equal to what sp_document_parse gives for sp_builder_to_json's text with
 * the same `options` (NULL: defaults; max_json_depth has nothing to limit).
 * Free it with sp_document_delete; it shares nothing with the builder,
 * which stays usable. */
SP_API sp_error *sp_builder_build(const sp_builder *builder, const sp_parse_options *options,
                                  sp_document **out_document);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* SHARDPLAN_SHARDPLAN_H_ */
