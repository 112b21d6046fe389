// @shardplan/wasm: the shardplan engine (WebAssembly) behind a small JS API.
//
// The engine module (./shardplan.mjs, built by `bazel build --config=wasm
// //wasm:npm`) exposes the C ABI of capi/include/shardplan/shardplan.h as
// `_sp_*` functions over one linear memory (wasm32: pointers and size_t are
// 32-bit). This wrapper marshals strings and structs in and out, frees every
// handle and buffer it makes, and turns `sp_error`s into ShardplanError.
//
// Works unchanged in Node (>= 18), a browser module and a (module) worker:
// the WebAssembly is inlined in shardplan.mjs, so nothing is fetched.

import createShardplanModule from './shardplan.mjs';

/** The C ABI version this wrapper was written for (SP_ABI_VERSION). */
export const ABI_VERSION = 1;

/** sp_error_code values by name, plus the two codes raised by this wrapper itself. */
export const ErrorCode = Object.freeze({
  NULL_ARGUMENT: 1, // a required argument was NULL (a bug in this wrapper if it happens)
  INVALID_ARGUMENT: 2, // a value out of range or malformed (also: bad text/options given to check)
  OUT_OF_RANGE: 3, // an index past the end
  OUT_OF_MEMORY: 4, // the engine's memory (4 GiB at most) ran out; if it aborted, load() again
  INTERNAL: 5, // a bug in shardplan: please report it
  INCOMPATIBLE_ABI: -1, // the engine has another C ABI version than this wrapper (load())
  ENGINE_ABORTED: -2, // the engine trapped or aborted; this instance is unusable (load() again)
});

const CODE_NAMES = new Map(Object.entries(ErrorCode).map(([name, code]) => [code, name]));

/**
 * An error from the engine (an `sp_error`: the API was misused or memory ran out) or from this
 * wrapper (bad arguments, an incompatible engine, an aborted engine). Findings about a document,
 * including malformed JSON, are never errors: they are the diagnostics of the result.
 */
export class ShardplanError extends Error {
  constructor(code, message, options) {
    super(message, options);
    this.name = 'ShardplanError';
    /** The numeric code: an sp_error_code (1..5) or a wrapper code (< 0); see ErrorCode. */
    this.code = code;
    /** The code's name, e.g. "INVALID_ARGUMENT" (`code N` for a code this wrapper does not know). */
    this.codeName = CODE_NAMES.get(code) ?? `code ${code}`;
  }
}

/**
 * Refuses an engine whose sp_abi_version() is not ABI_VERSION (throws ShardplanError with code
 * INCOMPATIBLE_ABI); returns `found` otherwise.
 */
export function checkAbi(found) {
  if (found !== ABI_VERSION) {
    throw new ShardplanError(
      ErrorCode.INCOMPATIBLE_ABI,
      `incompatible shardplan engine: it has C ABI version ${found}, but @shardplan/wasm needs ` +
        `ABI version ${ABI_VERSION}. Use the shardplan.mjs built from the same source tree ` +
        `(bazel build --config=wasm //wasm:npm) as this index.mjs.`,
    );
  }
  return found;
}

const SEVERITIES = ['error', 'warning', 'info']; // sp_severity 0, 1, 2
const severityName = (severity) => SEVERITIES[severity] ?? `severity ${severity}`;
const U32_MAX = 0xffffffff;
const U64_MAX = (1n << 64n) - 1n;

// Byte offsets inside the one scratch block each call allocates (malloc aligns it to 8).
const S_INPUT = 0; //         sp_str json                  (8 bytes)
const S_PARSE_OPTIONS = 8; // sp_parse_options             (u64, u64, u32 + padding: 24 bytes)
const S_CHECK_OPTIONS = 32; // sp_check_options            (u32: 4 bytes)
const S_OUT_DOCUMENT = 36; // sp_document*                 (4 bytes)
const S_OUT_RESULT = 40; //   sp_result*                   (4 bytes)
const S_OUT_VALUE = 44; //    int / size_t / sp_str        (8 bytes)
const S_RECORD = 56; //       sp_diagnostic (5 sp_str + 1 int), sp_owner (5 sp_str + 1 size_t),
//                           sp_owned_parameter (3 sp_str + 1 size_t), sp_fix_operation (4 sp_str) or
//                           sp_diagnostic_group (2 sp_str + 1 int + 3 words): 44 bytes at most
const SCRATCH_BYTES = 104;

// Field offsets of sp_diagnostic, sp_fix_operation and sp_diagnostic_group.
const DIAGNOSTIC_CODE = 0;
const DIAGNOSTIC_SEVERITY = 8;
const DIAGNOSTIC_MESSAGE = 12;
const DIAGNOSTIC_FQN = 20;
const DIAGNOSTIC_PARAMETER = 28;
const DIAGNOSTIC_POINTER = 36;
const FIX_OP = 0;
const FIX_PATH = 8;
const FIX_FROM = 16;
const FIX_VALUE = 24;
const GROUP_CODE = 0;
const GROUP_SEVERITY = 8;
const GROUP_POINTER = 12;
const GROUP_COUNT = 20;
const GROUP_LISTED = 24;
const GROUP_NUM_LISTED = 28;

// Field offsets of sp_owner and sp_owned_parameter (wasm32: sp_str 8 bytes, size_t 4).
const OWNER_FQN = 0;
const OWNER_KIND = 8;
const OWNER_NATIVE_REQUEST = 16;
const OWNER_NATIVE_PATTERN = 20;
const OWNER_LAYOUT = 28;
const OWNER_POINTER = 36;
const PARAMETER_NAME = 0;
const PARAMETER_CANONICAL = 8;
const PARAMETER_OWNER = 16;
const PARAMETER_PLACEMENTS = 20;
const SIZE_MAX = U32_MAX; // (size_t)-1 on wasm32: sp_owner.native_request of an owner that is not native

// What #withResult runs on the parsed document: sp_document_check or sp_document_plan.
const CHECK = 0;
const PLAN = 1;

const OPTION_NAMES = new Set(['threads', 'maxPaths', 'maxFqnBytes', 'maxJsonDepth']);

const encoder = new TextEncoder();
const decoder = new TextDecoder();

function invalid(message) {
  return new ShardplanError(ErrorCode.INVALID_ARGUMENT, message);
}

// An unsigned integer option as [low 32 bits, high 32 bits]; undefined/null/0 mean the default.
function unsignedOption(options, name, max) {
  const value = options[name];
  if (value === undefined || value === null) return [0, 0];
  let big;
  if (typeof value === 'bigint') {
    big = value;
  } else if (typeof value === 'number' && Number.isSafeInteger(value)) {
    big = BigInt(value);
  } else {
    throw invalid(`option ${name} must be a non-negative integer, got ${String(value)}`);
  }
  if (big < 0n || big > max) {
    throw invalid(`option ${name} must be between 0 and ${max}, got ${big}`);
  }
  return [Number(big & 0xffffffffn), Number(big >> 32n)];
}

function readOptions(options) {
  if (options === undefined || options === null) options = {};
  if (typeof options !== 'object') throw invalid(`options must be an object, got ${typeof options}`);
  for (const name of Object.keys(options)) {
    if (!OPTION_NAMES.has(name)) {
      throw invalid(`unknown option '${name}' (known: ${[...OPTION_NAMES].join(', ')})`);
    }
  }
  return {
    threads: unsignedOption(options, 'threads', BigInt(U32_MAX))[0],
    maxPaths: unsignedOption(options, 'maxPaths', U64_MAX),
    maxFqnBytes: unsignedOption(options, 'maxFqnBytes', U64_MAX),
    maxJsonDepth: unsignedOption(options, 'maxJsonDepth', BigInt(U32_MAX))[0],
  };
}

// Freezes `value` and everything in it (a parsed JSON value: objects, arrays, primitives).
function deepFreeze(value) {
  if (value !== null && typeof value === 'object') {
    for (const key of Object.keys(value)) deepFreeze(value[key]);
    Object.freeze(value);
  }
  return value;
}

function toBytes(text) {
  if (typeof text === 'string') return encoder.encode(text);
  if (text instanceof Uint8Array) return text;
  if (text instanceof ArrayBuffer) return new Uint8Array(text);
  if (ArrayBuffer.isView(text)) return new Uint8Array(text.buffer, text.byteOffset, text.byteLength);
  throw invalid(
    `the document must be a string, a Uint8Array or an ArrayBuffer, got ${text === null ? 'null' : typeof text}`,
  );
}

// A wasm trap (WebAssembly.RuntimeError, Emscripten's abort()) or an uncaught C++ exception,
// which Emscripten throws to JS as a bare number (exception catching is off in this build).
function isEngineFailure(e) {
  return e instanceof WebAssembly.RuntimeError || typeof e === 'number';
}

// The engine aborts with "OOM" when its memory cannot grow for an allocation: past its 4 GiB
// maximum, or when the system refuses (-sABORTING_MALLOC=1 in wasm/BUILD).
function isOutOfMemory(e) {
  return e instanceof WebAssembly.RuntimeError && /\bOOM\b/.test(e.message);
}

/** One instance of the engine. Get it with load(); all methods are synchronous. */
export class Shardplan {
  #m;
  #aborted = null;

  /**
   * Wraps an instantiated engine module (what shardplan.mjs's default export resolves to).
   * load() does this for you; refuses an engine of another ABI version.
   */
  constructor(engineModule) {
    this.#m = engineModule;
    /** The C ABI version of the engine: always ABI_VERSION (others are refused). */
    this.abiVersion = checkAbi(engineModule._sp_abi_version() >>> 0);
    /** The engine's release, "MAJOR.MINOR.PATCH". */
    this.version = this.#cString(engineModule._sp_version_string() >>> 0);
  }

  /**
   * Parses and checks a shardplan.v1 document and returns the shardplan.result.v1 object
   * (JSON.parse of the result JSON: {schema, ok, diagnostics, groups, counts, owned?}).
   */
  check(text, options) {
    return JSON.parse(this.checkJson(text, options));
  }

  /**
   * Like check(), but returns the result JSON text itself: byte for byte what
   * `shardplan check --format json` prints for the document (without the newline).
   */
  checkJson(text, options) {
    return this.#withResult(text, options, (m, scratch, result) => {
      const out = scratch + S_OUT_VALUE;
      this.#call(m._sp_result_json(result, out));
      return this.#str(out);
    });
  }

  /**
   * Plans a shardplan.v1 document, as `shardplan plan` does: makes the final plan from the
   * document's owners, `templates` and `overrides`, checks it (ownership, the plan checks, shapes)
   * and computes the memory per device and the collectives it implies. Returns the
   * shardplan.result.v1 object with, when a plan was made, also `plan` ({modules: {FQN: layout}}),
   * `provenance` ({FQN: [..]}), `memory`, `communication` and `collectives`. A document that gives
   * a `plan` of its own is checked as check() does (no plan is made); an invalid document or one
   * whose owners do not check gives no plan either. Same options as check().
   */
  plan(text, options) {
    return JSON.parse(this.planJson(text, options));
  }

  /**
   * Like plan(), but returns the result JSON text itself: byte for byte what
   * `shardplan plan --format json` prints for the document (without the newline).
   */
  planJson(text, options) {
    return this.#withResult(text, options, (m, scratch, result) => {
      const out = scratch + S_OUT_VALUE;
      this.#call(m._sp_result_json(result, out));
      return this.#str(out);
    }, PLAN);
  }

  /**
   * Like check(), but reads only the verdict, the diagnostics and their groups through the C ABI
   * (sp_result_ok, sp_result_diagnostic with its help and fix, sp_result_group), without building
   * the result JSON (cheaper for large models, whose `owned` section is large): `{ok, diagnostics,
   * groups, counts}`, equal to those keys of check()'s result. `counts` is added up from the
   * groups, as the result JSON's is. Throws ShardplanError INCOMPATIBLE_ABI for an engine older
   * than release 0.7 (it exports no sp_result_group).
   */
  checkDiagnostics(text, options) {
    const m = this.#m;
    if (typeof m._sp_result_group !== 'function' || typeof m._sp_result_diagnostic_help !== 'function') {
      throw new ShardplanError(
        ErrorCode.INCOMPATIBLE_ABI,
        'this shardplan engine cannot give help, fixes or groups: it exports no sp_result_group (it ' +
          'was built before release 0.7). Use the shardplan.mjs built from the same source tree as this index.mjs.',
      );
    }
    return this.#withResult(text, options, (m, scratch, result) => {
      const out = scratch + S_OUT_VALUE;
      this.#call(m._sp_result_ok(result, out));
      const ok = m.HEAP32[out >>> 2] !== 0;
      this.#call(m._sp_result_diagnostic_count(result, out));
      const count = m.HEAPU32[out >>> 2];
      const diagnostics = [];
      const r = scratch + S_RECORD;
      for (let i = 0; i < count; i++) {
        this.#call(m._sp_result_diagnostic(result, i, r));
        // The keys in the result JSON's order: help and fix only when present.
        const d = {
          code: this.#str(r + DIAGNOSTIC_CODE),
          severity: severityName(m.HEAP32[(r + DIAGNOSTIC_SEVERITY) >>> 2]),
          message: this.#str(r + DIAGNOSTIC_MESSAGE),
          fqn: this.#str(r + DIAGNOSTIC_FQN),
          parameter: this.#str(r + DIAGNOSTIC_PARAMETER),
          pointer: this.#str(r + DIAGNOSTIC_POINTER),
        };
        this.#call(m._sp_result_diagnostic_help(result, i, out));
        const help = this.#str(out);
        if (help !== null) d.help = help;
        this.#call(m._sp_result_diagnostic_fix_count(result, i, out));
        const operations = m.HEAPU32[out >>> 2];
        if (operations > 0) {
          d.fix = [];
          for (let k = 0; k < operations; k++) {
            this.#call(m._sp_result_diagnostic_fix(result, i, k, r));
            const op = { op: this.#str(r + FIX_OP) };
            const from = this.#str(r + FIX_FROM);
            if (from !== null) op.from = from;
            op.path = this.#str(r + FIX_PATH);
            const value = this.#str(r + FIX_VALUE);
            if (value !== null) op.value = JSON.parse(value); // JSON text
            d.fix.push(op);
          }
        }
        diagnostics.push(d);
      }
      this.#call(m._sp_result_group_count(result, out));
      const groupCount = m.HEAPU32[out >>> 2];
      const groups = [];
      const counts = {};
      for (let i = 0; i < groupCount; i++) {
        this.#call(m._sp_result_group(result, i, r));
        const listed = m.HEAPU32[(r + GROUP_LISTED) >>> 2];
        const numListed = m.HEAPU32[(r + GROUP_NUM_LISTED) >>> 2];
        const group = {
          code: this.#str(r + GROUP_CODE),
          severity: severityName(m.HEAP32[(r + GROUP_SEVERITY) >>> 2]),
          pointer: this.#str(r + GROUP_POINTER),
          count: m.HEAPU32[(r + GROUP_COUNT) >>> 2],
          listed: numListed ? Array.from(m.HEAPU32.subarray(listed >>> 2, (listed >>> 2) + numListed)) : [],
        };
        groups.push(group);
        counts[group.code] = (Object.hasOwn(counts, group.code) ? counts[group.code] : 0) + group.count;
      }
      return { ok, diagnostics, groups, counts };
    });
  }

  /**
   * Like check(), and also reads what the engine found about ownership through the C ABI's owner
   * accessors: `{result, owners, parameters}`. `result` is check()'s object. `owners` are the
   * owners as the engine collected them (sp_result_owner), in entry order, also when the check
   * failed after collection: `{fqn, kind, nativeRequest, nativePattern, layout, pointer}`.
   * `parameters` are the owned parameter slots of an ok result (sp_result_owned_parameter; empty
   * otherwise), in the module tree's order: `{name, canonical, owner, placements}`, `owner` being
   * an index into `owners`. Layouts and placements are frozen objects, shared between the owners
   * (and parameters) that share them in the engine.
   */
  checkDetails(text, options) {
    return this.#withResult(text, options, (m, scratch, result) => this.#details(m, scratch, result));
  }

  /** Like plan(), with the owners and owned parameters of checkDetails(). */
  planDetails(text, options) {
    return this.#withResult(text, options, (m, scratch, result) => this.#details(m, scratch, result), PLAN);
  }

  #details(m, scratch, result) {
    if (typeof m._sp_result_owner !== 'function') {
      throw new ShardplanError(
        ErrorCode.INCOMPATIBLE_ABI,
        'this shardplan engine cannot list owners: it exports no sp_result_owner (it was built before ' +
          'release 0.6). Use the shardplan.mjs built from the same source tree as this index.mjs.',
      );
    }
    const out = scratch + S_OUT_VALUE;
    this.#call(m._sp_result_json(result, out));
    const details = { result: JSON.parse(this.#str(out)), owners: [], parameters: [] };
    // Equal layouts and placements share their bytes in the engine: each is decoded once.
    const shared = new Map();
    const sharedValue = (addr, convert) => {
      const data = m.HEAPU32[addr >>> 2];
      let value = shared.get(data);
      if (value === undefined) {
        value = convert(this.#str(addr));
        shared.set(data, value);
      }
      return value;
    };
    const frozenJson = (text) => deepFreeze(JSON.parse(text));
    const same = (text) => text;
    const r = scratch + S_RECORD;
    this.#call(m._sp_result_owner_count(result, out));
    const owners = m.HEAPU32[out >>> 2];
    for (let i = 0; i < owners; i++) {
      this.#call(m._sp_result_owner(result, i, r));
      const request = m.HEAPU32[(r + OWNER_NATIVE_REQUEST) >>> 2];
      details.owners.push({
        fqn: this.#str(r + OWNER_FQN),
        kind: sharedValue(r + OWNER_KIND, same),
        nativeRequest: request === SIZE_MAX ? null : request,
        nativePattern: this.#str(r + OWNER_NATIVE_PATTERN),
        layout: sharedValue(r + OWNER_LAYOUT, frozenJson),
        pointer: this.#str(r + OWNER_POINTER),
      });
    }
    this.#call(m._sp_result_owned_parameter_count(result, out));
    const parameters = m.HEAPU32[out >>> 2];
    for (let i = 0; i < parameters; i++) {
      this.#call(m._sp_result_owned_parameter(result, i, r));
      details.parameters.push({
        name: this.#str(r + PARAMETER_NAME),
        canonical: this.#str(r + PARAMETER_CANONICAL),
        owner: m.HEAPU32[(r + PARAMETER_OWNER) >>> 2],
        placements: sharedValue(r + PARAMETER_PLACEMENTS, frozenJson),
      });
    }
    return details;
  }

  // Parses and checks (or plans: mode PLAN) `text`, then calls read(module, scratch,
  // resultHandle); frees everything.
  #withResult(text, options, read, mode = CHECK) {
    const opts = readOptions(options);
    const bytes = toBytes(text);
    if (this.#aborted) throw this.#abortedError(this.#aborted);
    const m = this.#m;
    if (mode === PLAN && typeof m._sp_document_plan !== 'function') {
      throw new ShardplanError(
        ErrorCode.INCOMPATIBLE_ABI,
        'this shardplan engine cannot plan: it exports no sp_document_plan (it was built before ' +
          'planning was added). Use the shardplan.mjs built from the same source tree as this index.mjs.',
      );
    }
    try {
      const scratch = this.#malloc(SCRATCH_BYTES);
      try {
        m.HEAPU8.fill(0, scratch, scratch + SCRATCH_BYTES);
        let document;
        const input = bytes.length ? this.#malloc(bytes.length) : 0;
        try {
          m.HEAPU8.set(bytes, input);
          const u32 = m.HEAPU32;
          u32[(scratch + S_INPUT) >>> 2] = input;
          u32[(scratch + S_INPUT + 4) >>> 2] = bytes.length;
          const po = scratch + S_PARSE_OPTIONS;
          [u32[po >>> 2], u32[(po + 4) >>> 2]] = opts.maxPaths;
          [u32[(po + 8) >>> 2], u32[(po + 12) >>> 2]] = opts.maxFqnBytes;
          u32[(po + 16) >>> 2] = opts.maxJsonDepth;
          u32[(scratch + S_CHECK_OPTIONS) >>> 2] = opts.threads;
          this.#call(m._sp_document_parse(scratch + S_INPUT, po, scratch + S_OUT_DOCUMENT));
          document = m.HEAPU32[(scratch + S_OUT_DOCUMENT) >>> 2];
        } finally {
          m._free(input); // the text is not retained by the engine
        }
        let result;
        try {
          const run = mode === PLAN ? m._sp_document_plan : m._sp_document_check;
          this.#call(run(document, scratch + S_CHECK_OPTIONS, scratch + S_OUT_RESULT));
          result = m.HEAPU32[(scratch + S_OUT_RESULT) >>> 2];
        } finally {
          m._sp_document_delete(document); // results outlive their document
        }
        try {
          return read(m, scratch, result);
        } finally {
          m._sp_result_delete(result);
        }
      } finally {
        m._free(scratch);
      }
    } catch (e) {
      if (!isEngineFailure(e)) throw e;
      this.#aborted = e;
      forgetInstance(this);
      throw isOutOfMemory(e) ? this.#outOfMemoryError(e) : this.#abortedError(e);
    }
  }

  // The error of the call that ran out of memory (later calls get #abortedError's).
  #outOfMemoryError(cause) {
    const mib = Math.round(this.#m.HEAPU8.length / 2 ** 20);
    return new ShardplanError(
      ErrorCode.OUT_OF_MEMORY,
      `out of memory: the document needs more memory than the shardplan engine can have (a ` +
        `WebAssembly memory of 4 GiB at most; an allocation failed when it had grown to ${mib} ` +
        `MiB). The native shardplan CLI has no such limit. This instance cannot be used any ` +
        `more; call load() for a new one.`,
      { cause },
    );
  }

  #abortedError(cause) {
    const what = typeof cause === 'number'
      ? `an uncaught C++ exception (${cause})`
      : String(cause?.message ?? cause).replace(/\. Build with -s ASSERTIONS=1 for more info\.$/, '');
    return new ShardplanError(
      ErrorCode.ENGINE_ABORTED,
      `the shardplan engine aborted: ${what}. This instance cannot be used any more; ` +
        `call load() for a new one.`,
      { cause },
    );
  }

  // Returns the block, or throws OUT_OF_MEMORY when malloc returns NULL (the instance stays
  // usable) or aborts for want of memory (see isOutOfMemory).
  #malloc(size) {
    const ptr = size <= U32_MAX ? this.#m._malloc(size) >>> 0 : 0; // 4 GiB and more: past wasm32's size_t
    if (ptr === 0) {
      throw new ShardplanError(ErrorCode.OUT_OF_MEMORY, `cannot allocate ${size} bytes in the engine's memory`);
    }
    return ptr;
  }

  // Throws the sp_error `error` (if not NULL) as a ShardplanError, after freeing it.
  #call(error) {
    if (!error) return;
    const m = this.#m;
    const code = m._sp_error_code_of(error);
    const message = this.#cString(m._sp_error_message(error) >>> 0);
    m._sp_error_delete(error);
    throw new ShardplanError(code, message);
  }

  // The sp_str at `addr`: null when its data is NULL (absent).
  #str(addr) {
    const m = this.#m;
    const data = m.HEAPU32[addr >>> 2];
    if (data === 0) return null;
    const size = m.HEAPU32[(addr + 4) >>> 2];
    return decoder.decode(m.HEAPU8.subarray(data, data + size));
  }

  #cString(ptr) {
    const heap = this.#m.HEAPU8;
    let end = ptr;
    while (heap[end] !== 0) end++;
    return decoder.decode(heap.subarray(ptr, end));
  }
}

let loading = null;
let loaded = null;

// An aborted instance is dropped from the cache: the next load() makes a new one.
function forgetInstance(instance) {
  if (loaded === instance) {
    loaded = null;
    loading = null;
  }
}

/**
 * Loads the engine (once: later calls return the same instance) and resolves to a Shardplan.
 * Rejects with ShardplanError INCOMPATIBLE_ABI for an engine of another ABI version.
 */
export function load() {
  if (!loading) {
    const pending = (async () => new Shardplan(await createShardplanModule()))().then(
      (instance) => {
        if (loading === pending) loaded = instance;
        return instance;
      },
      (error) => {
        if (loading === pending) loading = null; // a later load() tries again
        throw error;
      },
    );
    loading = pending;
  }
  return loading;
}

/** load() then check(): the shardplan.result.v1 object for `text`. */
export async function check(text, options) {
  return (await load()).check(text, options);
}

/** load() then plan(): the planned shardplan.result.v1 object for `text`. */
export async function plan(text, options) {
  return (await load()).plan(text, options);
}

/** load() then checkDetails(): the result, the owners and the owned parameters of `text`. */
export async function checkDetails(text, options) {
  return (await load()).checkDetails(text, options);
}

/** load() then planDetails(): the planned result, the owners and the owned parameters of `text`. */
export async function planDetails(text, options) {
  return (await load()).planDetails(text, options);
}
