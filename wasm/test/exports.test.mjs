// The WebAssembly engine exports exactly the C ABI that the native libshardplan.so exports, apart
// from the deliberate exceptions below: a function added to (or removed from) the header and the
// library but not the wasm build (wasm/BUILD's exported_functions), or the other way round, fails.
//
// wasm side: WebAssembly.Module.exports() of the module inlined (base64) in shardplan.mjs.
// native side: `nm -D --defined-only libshardplan.so`, global symbols (upper-case type letter),
// without @version suffixes.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { describe, test } from 'node:test';

import { importEngineFactory, inlinedWasmBytes, libraryPath } from './lib.mjs';

// Exports of the wasm module that the native library does not have, on purpose.
export const WASM_ONLY = [
  'malloc', // exported (wasm/BUILD) so that JS can allocate the strings and structs it passes in
  'free', // frees what malloc gave; natively the caller's own libc does both
  'memory', // the linear memory itself, which JS reads and writes (HEAPU8 and friends)
  '__indirect_function_table', // Emscripten: the table of function pointers (call_indirect)
  '__wasm_call_ctors', // Emscripten: runs static constructors at start-up (natively: .init_array)
  '__errno_location', // Emscripten's libc: errno for the JS side of system calls
  'emscripten_builtin_memalign', // Emscripten's allocator, used by its JS runtime
  'stackSave', // Emscripten: save the wasm stack pointer around JS calls
  'stackRestore', // Emscripten: restore it
  'stackAlloc', // Emscripten: allocate on the wasm stack from JS
  /^dynCall_/, // Emscripten: JS trampolines for indirect calls with i64 arguments (legalized)
];

// Global symbols of libshardplan.so that the wasm module does not export, on purpose: none.
export const NATIVE_ONLY = [];

function excepted(name, exceptions) {
  return exceptions.some((e) => (typeof e === 'string' ? e === name : e.test(name)));
}

/**
 * Compares two export lists. Returns the names only in `wasm` and only in `native`, each sorted,
 * leaving out the names matched by `wasmOnly` and `nativeOnly` (strings or RegExps).
 */
export function compareExports(wasm, native, wasmOnly = WASM_ONLY, nativeOnly = NATIVE_ONLY) {
  const w = new Set(wasm);
  const n = new Set(native);
  return {
    onlyInWasm: [...w].filter((name) => !n.has(name) && !excepted(name, wasmOnly)).sort(),
    onlyInNative: [...n].filter((name) => !w.has(name) && !excepted(name, nativeOnly)).sort(),
  };
}

/** Names of the global defined symbols in `nm -D --defined-only` output. */
export function parseNm(output) {
  const names = [];
  for (const line of output.split('\n')) {
    // "0000000000000b3b5 T sp_abi_version" (value, type letter, name[@[@]VERSION])
    const m = line.match(/^\s*[0-9a-fA-F]*\s+([A-Za-z])\s+(\S+)$/);
    if (!m) continue;
    const [, type, symbol] = m;
    // Lower case: local. 'A': absolute symbols, which is how nm shows version nodes of a
    // linker version script (e.g. "SHARDPLAN_1"): not functions.
    if (type !== type.toUpperCase() || type === 'A') continue;
    names.push(symbol.replace(/@.*$/, ''));
  }
  return names;
}

function wasmExports() {
  return WebAssembly.Module.exports(new WebAssembly.Module(inlinedWasmBytes())).map((e) => e.name);
}

function nativeExports() {
  const lib = libraryPath();
  const run = spawnSync('nm', ['-D', '--defined-only', lib], { encoding: 'utf8' });
  if (run.error) throw new Error(`cannot run nm (binutils): ${run.error.message}`);
  assert.equal(run.status, 0, `nm -D --defined-only ${lib} failed: ${run.stderr}`);
  return parseNm(run.stdout);
}

describe('exports', () => {
  test('the wasm module exports the C ABI of libshardplan.so, no more, no less', () => {
    const wasm = wasmExports();
    const native = nativeExports();
    assert.ok(native.filter((n) => n.startsWith('sp_')).length >= 30, `too few sp_ symbols in ${native}`);
    assert.deepEqual(compareExports(wasm, native), { onlyInWasm: [], onlyInNative: [] });
  });

  test("the engine module exposes every exported sp_ function as Module._sp_*", async () => {
    const m = await (await importEngineFactory())();
    const wasmSp = wasmExports().filter((n) => n.startsWith('sp_')).sort();
    const moduleSp = Object.keys(m).filter((k) => k.startsWith('_sp_')).map((k) => k.slice(1)).sort();
    assert.deepEqual(moduleSp, wasmSp);
    for (const name of ['_malloc', '_free']) assert.equal(typeof m[name], 'function', name);
  });

  test('compareExports catches drift either way and honours the exceptions', () => {
    const native = ['sp_abi_version', 'sp_document_parse', 'sp_result_json'];
    const wasm = ['memory', 'malloc', 'free', 'dynCall_viij', 'sp_abi_version', 'sp_document_parse', 'sp_result_json'];
    assert.deepEqual(compareExports(wasm, native), { onlyInWasm: [], onlyInNative: [] });
    // A function missing from the wasm build.
    assert.deepEqual(compareExports(wasm.filter((n) => n !== 'sp_result_json'), native), {
      onlyInWasm: [],
      onlyInNative: ['sp_result_json'],
    });
    // A function only the wasm build has (say, a new one not yet in the native library).
    assert.deepEqual(compareExports([...wasm, 'sp_new_function'], native), {
      onlyInWasm: ['sp_new_function'],
      onlyInNative: [],
    });
    // An exception is only an exception on its own side: a native-only malloc is drift.
    assert.deepEqual(compareExports(wasm.filter((n) => n !== 'malloc'), [...native, 'malloc']), {
      onlyInWasm: [],
      onlyInNative: ['malloc'],
    });
  });

  test('parseNm keeps global defined symbols, without version suffixes', () => {
    const output = [
      '0000000000000000 d _ZN4absl12lts_2022062313cord_internal17cordz_next_sampleE',
      '0000000000000008 b _ZZN4absl_counter',
      '000000000000b3b5 T sp_abi_version',
      '000000000000ccc9 T sp_builder_add_axis@@SHARDPLAN_1',
      '000000000000cc00 W sp_weak@SHARDPLAN_0',
      '0000000000000000 A SHARDPLAN_1',
      '',
    ].join('\n');
    assert.deepEqual(parseNm(output), ['sp_abi_version', 'sp_builder_add_axis', 'sp_weak']);
  });
});
