// Types of @shardplan/wasm (index.mjs). See README.md.

/** The C ABI version this wrapper was written for (SP_ABI_VERSION). */
export const ABI_VERSION: 1;

/** sp_error_code values by name, plus the two codes raised by the wrapper itself (negative). */
export const ErrorCode: Readonly<{
  NULL_ARGUMENT: 1;
  INVALID_ARGUMENT: 2;
  OUT_OF_RANGE: 3;
  OUT_OF_MEMORY: 4;
  INTERNAL: 5;
  INCOMPATIBLE_ABI: -1;
  ENGINE_ABORTED: -2;
}>;

export type ErrorCodeName = keyof typeof ErrorCode;

/**
 * An error from the engine (an sp_error: the API was misused or memory ran out) or from the
 * wrapper (bad arguments, an incompatible engine, an aborted engine). Findings about a document,
 * malformed JSON included, are never errors: they are diagnostics of the result.
 */
export class ShardplanError extends Error {
  constructor(code: number, message: string, options?: { cause?: unknown });
  name: 'ShardplanError';
  /** An sp_error_code (1..5) or a wrapper code (-1, -2): see ErrorCode. */
  readonly code: number;
  /** The code's name, e.g. "INVALID_ARGUMENT" ("code N" for a code the wrapper does not know). */
  readonly codeName: ErrorCodeName | `code ${number}`;
}

/** Throws ShardplanError INCOMPATIBLE_ABI unless `found` is ABI_VERSION; returns it otherwise. */
export function checkAbi(found: number): number;

/** Unsigned integers; 0 (or absent) means the default. 64-bit ones also take a bigint. */
export interface CheckOptions {
  /** Worker threads (0: all cores). Accepted for compatibility: the wasm engine is serial. */
  threads?: number;
  /** Refuse documents whose module tree expands to more paths (default 10,000,000). */
  maxPaths?: number | bigint;
  /** Refuse documents whose module FQNs total more bytes (default 2^30). */
  maxFqnBytes?: number | bigint;
  /** Refuse JSON nested deeper (default 64). */
  maxJsonDepth?: number;
}

/** A shardplan.v1 document: JSON text, or its UTF-8 bytes. */
export type DocumentInput = string | Uint8Array | ArrayBuffer | ArrayBufferView;

export type Severity = 'error' | 'warning' | 'info';

export interface Diagnostic {
  /** Stable kebab-case code, e.g. "shared-conflict" or "invalid-document". */
  code: string;
  severity: Severity;
  message: string;
  /** Module FQN ("" is the root); null when absent. */
  fqn: string | null;
  /** Parameter name; null when absent. */
  parameter: string | null;
  /** RFC 6901 JSON pointer of the declaration at fault; null when absent. */
  pointer: string | null;
  /**
   * What to change, present only where the engine knows: "did you mean 'proj'?" for a misspelt
   * name, the nearest mesh axis and the mesh's axes for an unknown axis.
   */
  help?: string;
  /**
   * Present only where the change is mechanical: an RFC 6902 JSON Patch on the input document
   * that, applied alone, removes this finding and adds no error that was not there.
   */
  fix?: FixOperation[];
}

/** One operation of a diagnostic's fix (RFC 6902; sp_fix_operation). */
export type FixOperation =
  /** Renames an object member (or moves a value): the value at `from` goes to `path`. */
  | { op: 'move'; from: string; path: string }
  /** Replaces the value at `path` by `value` (a JSON value: a string, an array of strings, ...). */
  | { op: 'replace'; path: string; value: unknown };

/**
 * Diagnostics with one cause: the same code at the same pointer (as one over-wide native pattern
 * gives one diagnostic per module it should not have matched). Every diagnostic is in exactly one
 * group; groups come in the order of their first diagnostic.
 */
export interface DiagnosticGroup {
  code: string;
  severity: Severity;
  /** The pointer of its diagnostics; null for diagnostics without one. */
  pointer: string | null;
  /** How many diagnostics it has. */
  count: number;
  /** Their indexes in `diagnostics`, in increasing order (every one: the wasm API lists them all). */
  listed: number[];
}

/** What checkDiagnostics() returns: check()'s keys of the same names. */
export interface DiagnosticsResult {
  ok: boolean;
  diagnostics: Diagnostic[];
  groups: DiagnosticGroup[];
  /** Diagnostics per code, in the order the codes first occur (the groups' counts added up). */
  counts: Record<string, number>;
}

/** A module's layout as in the result (and the document): port -> name -> axis -> placement. */
export interface Layout {
  params?: Record<string, Record<string, string>>;
  in_src?: Record<string, Record<string, string>>;
  in_dst?: Record<string, Record<string, string>>;
  out_src?: Record<string, Record<string, string>>;
  out_dst?: Record<string, Record<string, string>>;
  out_names?: string[];
}

export interface ParallelSpec {
  binding_kind: string;
  axes: string[];
}

/** Who owns what; present only when the document has no error. See docs/format.md, section 6. */
export interface Owned {
  specs: Record<string, Layout>;
  parallel: Record<string, ParallelSpec>;
  owned_names: string[];
  expected: string[];
  required: Record<string, string[]>;
  aliases: [string, string][];
}

/** The shardplan.result.v1 object: what `shardplan check --format json` prints. */
export interface CheckResult {
  schema: 'shardplan.result.v1';
  ok: boolean;
  diagnostics: Diagnostic[];
  groups: DiagnosticGroup[];
  /** Diagnostics per code, in the order the codes first occur; {} when there is none. */
  counts: Record<string, number>;
  owned?: Owned;
  /**
   * check(): present only for a document that gives its own `plan` and has a `training` section
   * (the memory of that plan, with `training`; absent when the mesh has more than 2^24 devices).
   * plan(): see PlanResult (null when the mesh has more than 2^24 devices).
   */
  memory?: Memory | null;
}

/** A module's final-plan layout: every entry has params, in_src and in_dst. */
export interface PlanLayout extends Layout {
  params: Record<string, Record<string, string>>;
  in_src: Record<string, Record<string, string>>;
  in_dst: Record<string, Record<string, string>>;
}

/**
 * Per-device memory of a planned result (planner-v1 section 5). Devices are numbered row-major
 * over the mesh axes in mesh order; byte counts are per device.
 */
export interface Memory {
  devices: number;
  /** Every parameter identity once (tied parameters once), unsharded. */
  unsharded_bytes: number;
  max_bytes: number;
  min_bytes: number;
  mean_bytes: number;
  /** The lowest device holding max_bytes. */
  max_device: number;
  /** Every device's bytes, in device order; absent for meshes of more than 65,536 devices. */
  per_device_bytes?: number[];
  /** Training memory per device (training-v1): present when the document has a `training` section. */
  training?: TrainingMemory;
}

/**
 * One device's training memory by category, in bytes (training-v1 section 2; docs/planning.md,
 * "Training memory"). A category that does not apply is 0; the six add up to `total`.
 */
export interface TrainingDeviceMemory {
  /** The device number (row-major over the mesh axes in mesh order). */
  device: number;
  /** Its coordinate on each mesh axis, in mesh order, e.g. {dp: 0, tp: 0}. */
  coordinates: Record<string, number>;
  /** The parameters it holds (their ZeRO/FSDP shard under zero 3). */
  params: number;
  /** Gradients of the trained parameters (sharded under zero 2 and 3). */
  grads: number;
  /** The master_dtype copy of the trained parameters (sharded under zero 1 to 3); 0 without master_dtype. */
  master: number;
  /** Optimizer states of the trained parameters (sharded under zero 1 to 3). */
  optimizer: number;
  /** Parameters and gradients of the FSDP units gathered at once (zero 3 only). */
  gathered: number;
  /** Activations of the transformer layers it holds (with training.activations). */
  activations: number;
  total: number;
}

/**
 * memory.training: every device's training total, and the breakdown of the worst device. Whether
 * it fits is a diagnostic: `exceeds-device-memory` (more than training.device_memory; an error
 * under plan, a warning under check) or `near-device-memory` (a warning: more than headroom x
 * device_memory), whose message ends with the single changes that would fit ("; it would fit
 * with: zero 1 (0.37 GiB), recompute 'full' (0.34 GiB)").
 */
export interface TrainingMemory {
  /** The device with the largest total (ties: the lowest device number), by category. */
  worst: TrainingDeviceMemory;
  max_total_bytes: number;
  min_total_bytes: number;
  mean_total_bytes: number;
  /** Every device's total, in device order; null for meshes of more than 65,536 devices. */
  per_device_total_bytes: number[] | null;
}

export type Collective =
  | 'all_gather'
  | 'slice'
  | 'all_reduce'
  | 'reduce_scatter'
  | 'all_to_all'
  | 'none'
  | 'unsupported';

/** One communication record: on `port` of the module at `fqn`, mesh axis `axis` goes `from` -> `to`. */
export interface CommunicationRecord {
  fqn: string;
  /** "in:NAME" (in_src -> in_dst) or "out:NAME" (out_src -> out_dst). */
  port: string;
  axis: string;
  /** A placement as written ("R" for an absent side), e.g. "P", "S(-1)". */
  from: string;
  to: string;
  collective: Collective;
}

/**
 * What `shardplan plan --format json` prints. The planning keys are present only when a plan was
 * made: not for an invalid document, a document whose owners do not check, or one that gives a
 * `plan` of its own (which plan() checks as check() does).
 */
export interface PlanResult extends CheckResult {
  plan?: { modules: Record<string, PlanLayout> };
  /** FQN -> where its entry came from: "owned:model", "owned:family", "owned:native",
   * "template:AXIS:PATTERN" (one per contributing rule) or "override"; in plan order. */
  provenance?: Record<string, string[]>;
  /** Memory per device (with `training` for a document with a training section); null when the
   * mesh has more than 2^24 devices. */
  memory?: Memory | null;
  communication?: CommunicationRecord[];
  /** collective -> mesh axis -> number of records. */
  collectives?: Partial<Record<Collective, Record<string, number>>>;
}

/**
 * One owner of a module-owned layout as the engine collected it (spec section 4 steps 1-4; the C
 * ABI's sp_owner). Kept also when the check failed after collection; what collection refused
 * (unknown-module, multiple-owners, native-overlaps-family) is no owner.
 */
export interface Owner {
  /** The owned module path ("" is the root). */
  fqn: string;
  /** "model" (a model provider), "family" or "native" (a native request's match). */
  kind: 'model' | 'family' | 'native';
  /** A native owner's request: its index in providers.native; null for other owners. */
  nativeRequest: number | null;
  /** The request's pattern that added it (the first of its `match` that matches fqn); null for other owners. */
  nativePattern: string | null;
  /**
   * Its layout as the result prints owned.specs: the document's (a family's cached one when it has
   * one) less the params of a tied parameter another owner claims with the same placement, with
   * normalized out_names. Frozen; owners that share a layout in the document share the object.
   */
  layout: Readonly<Layout>;
  /** The JSON pointer of the layout in the document, e.g. "/providers/sharding/lm_head". */
  pointer: string;
}

/** One owned parameter slot of an ok result (an entry of owned.owned_names; sp_owned_parameter). */
export interface OwnedParameter {
  /** The slot's full name, e.g. "lm_head.weight". */
  name: string;
  /** The parameter's canonical full name: `name`, unless the slot is another name of a tied parameter. */
  canonical: string;
  /** The index in `owners` of the owner that claimed the parameter first, whose layout places it. */
  owner: number;
  /** Its placement per mesh axis as that layout lists them (axis -> "S(0)", "R", "P", ...). Frozen, shared. */
  placements: Readonly<Record<string, string>>;
}

/** What checkDetails() and planDetails() return. */
export interface Details<R extends CheckResult = CheckResult> {
  /** check()'s (or plan()'s) result object. */
  result: R;
  /** The owners in entry order (owned.specs' order when the result is ok); [] for an invalid document. */
  owners: Owner[];
  /** The owned parameter slots in the module tree's order; [] unless result.ok. */
  parameters: OwnedParameter[];
}

/** One instance of the engine. Get it with load(); every method is synchronous. */
export class Shardplan {
  /**
   * Wraps an instantiated engine module (what shardplan.mjs's default export resolves to);
   * load() does this. Throws ShardplanError INCOMPATIBLE_ABI for another ABI version.
   */
  constructor(engineModule: object);
  /** The engine's release, "MAJOR.MINOR.PATCH". */
  readonly version: string;
  /** The engine's C ABI version (always ABI_VERSION). */
  readonly abiVersion: number;
  /** Parses and checks a document: JSON.parse of the result JSON. */
  check(text: DocumentInput, options?: CheckOptions | null): CheckResult;
  /** The result JSON text, byte for byte what `shardplan check --format json` prints (no newline). */
  checkJson(text: DocumentInput, options?: CheckOptions | null): string;
  /**
   * Plans a document as `shardplan plan` does (templates, overrides, shape checks, memory per
   * device, communication): JSON.parse of the result JSON. Same options as check().
   */
  plan(text: DocumentInput, options?: CheckOptions | null): PlanResult;
  /** The plan result JSON text, byte for byte what `shardplan plan --format json` prints (no newline). */
  planJson(text: DocumentInput, options?: CheckOptions | null): string;
  /**
   * The verdict, the diagnostics (with their help and fix) and their groups only, read through
   * the C ABI without building the result JSON (faster for big models). Throws ShardplanError
   * INCOMPATIBLE_ABI for an engine older than release 0.7.
   */
  checkDiagnostics(text: DocumentInput, options?: CheckOptions | null): DiagnosticsResult;
  /**
   * check(), plus who owns what as the engine decided it, through the C ABI's owner accessors: the
   * owners (also of a failed check) and the owned parameters with their placements. Throws
   * ShardplanError INCOMPATIBLE_ABI for an engine older than release 0.6.
   */
  checkDetails(text: DocumentInput, options?: CheckOptions | null): Details<CheckResult>;
  /** plan(), plus the owners and owned parameters of checkDetails(). */
  planDetails(text: DocumentInput, options?: CheckOptions | null): Details<PlanResult>;
}

/**
 * Loads the engine once (later calls give the same instance, unless it aborted: after an
 * OUT_OF_MEMORY or ENGINE_ABORTED error, load() again).
 */
export function load(): Promise<Shardplan>;

/** load(), then check(). */
export function check(text: DocumentInput, options?: CheckOptions | null): Promise<CheckResult>;

/** load(), then plan(). */
export function plan(text: DocumentInput, options?: CheckOptions | null): Promise<PlanResult>;

/** load(), then checkDetails(). */
export function checkDetails(text: DocumentInput, options?: CheckOptions | null): Promise<Details<CheckResult>>;

/** load(), then planDetails(). */
export function planDetails(text: DocumentInput, options?: CheckOptions | null): Promise<Details<PlanResult>>;
