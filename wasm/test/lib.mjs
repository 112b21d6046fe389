// Shared helpers of the wasm tests (api, conformance, exports): where things are, and loading the
// wrapper and the engine from the assembled npm package.
//
// Paths come from environment variables (tools' test script sets them), with fallbacks into the
// checkout's bazel-bin for a run by hand:
//   SHARDPLAN_WASM_NPM  the assembled npm package (index.mjs, shardplan.mjs, ...)
//                       default: <repo>/bazel-bin/wasm/npm
//   SHARDPLAN_CLI       the native CLI            default: <repo>/bazel-bin/cli/shardplan
//   SHARDPLAN_LIBRARY   the native libshardplan.so default: <repo>/bazel-bin/capi/libshardplan.so
// A missing file fails the test that needs it, naming the variable: nothing is skipped silently.

import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

/** The repository root, found from this file's location (wasm/test/lib.mjs). */
export const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

export const EXAMPLES = join(REPO, 'examples');
export const CASES = join(REPO, 'tests', 'conformance', 'cases');

function pathFromEnv(variable, fallback, what) {
  const path = process.env[variable] ? resolve(process.env[variable]) : fallback;
  if (!existsSync(path)) {
    throw new Error(
      `${what} not found at ${path}: set ${variable} to its path` +
        (process.env[variable] ? '' : ` (unset, so the checkout's bazel-bin was tried)`),
    );
  }
  return path;
}

/** The directory of the assembled npm package. */
export function npmDir() {
  const dir = pathFromEnv('SHARDPLAN_WASM_NPM', join(REPO, 'bazel-bin', 'wasm', 'npm'), 'the npm package (@shardplan/wasm)');
  for (const file of ['index.mjs', 'shardplan.mjs']) {
    if (!existsSync(join(dir, file))) throw new Error(`${join(dir, file)} is missing (SHARDPLAN_WASM_NPM=${dir})`);
  }
  return dir;
}

export function cliPath() {
  return pathFromEnv('SHARDPLAN_CLI', join(REPO, 'bazel-bin', 'cli', 'shardplan'), 'the native CLI');
}

export function libraryPath() {
  return pathFromEnv('SHARDPLAN_LIBRARY', join(REPO, 'bazel-bin', 'capi', 'libshardplan.so'), 'libshardplan.so');
}

/** The wrapper module (index.mjs) of the npm package. */
export async function importWrapper() {
  return import(pathToFileURL(join(npmDir(), 'index.mjs')).href);
}

/** The engine module factory (shardplan.mjs's default export) of the npm package. */
export async function importEngineFactory() {
  return (await import(pathToFileURL(join(npmDir(), 'shardplan.mjs')).href)).default;
}

/** The WebAssembly bytes inlined (SINGLE_FILE, base64 data URI) in the engine's shardplan.mjs. */
export function inlinedWasmBytes() {
  const source = readFileSync(join(npmDir(), 'shardplan.mjs'), 'utf8');
  const match = source.match(/data:application\/octet-stream;base64,([A-Za-z0-9+/=]+)/);
  if (!match) throw new Error('no inlined wasm (data:application/octet-stream;base64,...) in shardplan.mjs');
  return Buffer.from(match[1], 'base64');
}

export function readExample(name) {
  return readFileSync(join(EXAMPLES, name), 'utf8');
}

/**
 * A small document (about 1 KB) whose module tree expands to 2^depth module paths: each module's
 * two children are the same module. The engine needs about 170 bytes of memory per path (depth
 * 20: 2^20 paths, about 170 MiB), so it runs out of memory under a lowered ceiling (see
 * capMemoryGrowth) without a large document.
 */
export function doublingDocument(depth) {
  const modules = {};
  for (let i = 0; i < depth; i++) modules[`m${i}`] = { children: { a: `m${i + 1}`, b: `m${i + 1}` } };
  modules[`m${depth}`] = { type: 'Linear', forward: ['x'], params: { weight: 'w' } };
  return JSON.stringify({
    schema: 'shardplan.v1',
    mesh: { tp: 2 },
    parameters: { w: { shape: [4, 4] } },
    root: 'm0',
    modules,
  });
}

/**
 * Lowers the memory ceiling of WebAssembly in this JS realm to `bytes`: Memory.prototype.grow
 * throws a RangeError past it, as when the browser or the system cannot give more memory. The
 * engine then aborts with "OOM", as it does at its 4 GiB maximum. Returns a function that undoes
 * it. Self-contained: the browser test runs its source in the page's worker.
 */
export function capMemoryGrowth(bytes) {
  const grow = WebAssembly.Memory.prototype.grow;
  WebAssembly.Memory.prototype.grow = function growUnderCap(pages) {
    if (this.buffer.byteLength + pages * 65536 > bytes) {
      throw new RangeError(`WebAssembly.Memory.grow(): over the test's ceiling of ${bytes} bytes`);
    }
    return grow.call(this, pages);
  };
  return () => {
    WebAssembly.Memory.prototype.grow = grow;
  };
}


/** The keys of a result that checkDiagnostics() gives, in their order: {ok, diagnostics, groups, counts}. */
export function diagnosticKeys(result) {
  const { ok, diagnostics, groups, counts } = result;
  return { ok, diagnostics, groups, counts };
}

/** RFC 6901: a JSON pointer's reference tokens, '~1' and '~0' unescaped. */
export function pointerTokens(pointer) {
  if (pointer === '') return [];
  if (!pointer.startsWith('/')) throw new Error(`not a JSON pointer: ${JSON.stringify(pointer)}`);
  return pointer.slice(1).split('/').map((t) => t.replaceAll('~1', '/').replaceAll('~0', '~'));
}

/**
 * `document` (a parsed JSON value, changed in place) with the RFC 6902 JSON Patch `fix` applied:
 * "move" (remove, then add) and "replace", the operations fixes use. Throws when a pointer does
 * not resolve. Returns the document.
 */
export function applyFix(document, fix) {
  const root = { '': document };
  const locate = (pointer) => {
    const tokens = ['', ...pointerTokens(pointer)];
    const key = tokens.pop();
    let parent = root;
    for (const t of tokens) {
      if (parent === null || typeof parent !== 'object' || !Object.hasOwn(parent, t)) throw new Error(`no ${pointer}`);
      parent = parent[t];
    }
    if (parent === null || typeof parent !== 'object') throw new Error(`no parent of ${pointer}`);
    return [parent, key];
  };
  for (const op of fix) {
    const [parent, key] = locate(op.path);
    if (op.op === 'move') {
      const [from, fromKey] = locate(op.from);
      if (!Object.hasOwn(from, fromKey)) throw new Error(`no ${op.from}`);
      const value = from[fromKey];
      if (Array.isArray(from)) from.splice(Number(fromKey), 1);
      else delete from[fromKey];
      if (Array.isArray(parent)) parent.splice(key === '-' ? parent.length : Number(key), 0, value);
      else parent[key] = value;
    } else if (op.op === 'replace') {
      if (!Object.hasOwn(parent, key)) throw new Error(`no ${op.path}`);
      parent[key] = op.value;
    } else {
      throw new Error(`unexpected op ${JSON.stringify(op)}`);
    }
  }
  return root[''];
}
