// The wrapper (@shardplan/wasm's index.mjs): results, inputs, options, errors, the ABI check,
// freeing everything it allocates, and a large document.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { before, describe, test } from 'node:test';

import { REPO, importEngineFactory, importWrapper, npmDir, readExample } from './lib.mjs';

let api; // the wrapper module: load, check, Shardplan, ShardplanError, checkAbi, ...
let sp; // load()'s instance
let createEngine; // shardplan.mjs's factory, for instances of our own

const OK = readExample('tiny-llama.json');
const BROKEN = readExample('tiny-llama-broken.json');

before(async () => {
  api = await importWrapper();
  sp = await api.load();
  createEngine = await importEngineFactory();
});

function assertShardplanError(fn, codeName, messagePattern) {
  assert.throws(fn, (e) => {
    assert.ok(e instanceof api.ShardplanError, `not a ShardplanError: ${e}`);
    assert.ok(e instanceof Error);
    assert.equal(e.name, 'ShardplanError');
    assert.equal(e.codeName, codeName);
    assert.equal(e.code, api.ErrorCode[codeName]);
    if (messagePattern) assert.match(e.message, messagePattern);
    return true;
  });
}

// A copy of tiny-llama.json with `layers` decoder layers (each a copy of layer 0).
function tinyLlamaWithLayers(layers) {
  const doc = JSON.parse(OK);
  const isLayer = (key) => /^layers\.\d+(\.|$)/.test(key);
  const isLayer0 = (key) => key === 'layers.0' || key.startsWith('layers.0.');
  const grow = (map) => {
    const template = Object.entries(map).filter(([key]) => isLayer0(key));
    const out = Object.fromEntries(Object.entries(map).filter(([key]) => !isLayer(key)));
    for (let i = 0; i < layers; i++) {
      for (const [key, value] of template) {
        out[`layers.${i}${key.slice('layers.0'.length)}`] = JSON.parse(
          JSON.stringify(value).replaceAll('"layers.0', `"layers.${i}`),
        );
      }
    }
    return out;
  };
  doc.parameters = grow(doc.parameters);
  doc.modules = grow(doc.modules);
  doc.modules.layers.children = Object.fromEntries(Array.from({ length: layers }, (_, i) => [`${i}`, `layers.${i}`]));
  doc.plan.modules = grow(doc.plan.modules);
  return JSON.stringify(doc);
}

describe('loading', () => {
  test('load() loads once and gives the engine versions', async () => {
    assert.equal(await api.load(), sp);
    assert.ok(sp instanceof api.Shardplan);
    assert.equal(sp.abiVersion, 1);
    assert.equal(api.ABI_VERSION, 1);
    const header = readFileSync(join(REPO, 'capi', 'include', 'shardplan', 'shardplan.h'), 'utf8');
    const macro = (name) => header.match(new RegExp(`#define ${name} (\\d+)`))[1];
    assert.equal(sp.version, `${macro('SP_VERSION_MAJOR')}.${macro('SP_VERSION_MINOR')}.${macro('SP_VERSION_PATCH')}`);
    assert.equal(sp.abiVersion, Number(macro('SP_ABI_VERSION')));
  });

  test('package.json: its version is the engine release, and it points at the wrapper', () => {
    const pkg = JSON.parse(readFileSync(join(npmDir(), 'package.json'), 'utf8'));
    assert.equal(pkg.name, '@shardplan/wasm');
    assert.equal(pkg.type, 'module');
    assert.equal(pkg.version, sp.version);
    assert.equal(pkg.main, './index.mjs');
    assert.equal(pkg.types, './index.d.ts');
    assert.deepEqual([...pkg.files].sort(), ['README.md', 'index.d.ts', 'index.mjs', 'shardplan.mjs']);
  });

  test('checkAbi accepts ABI 1 and refuses any other', () => {
    assert.equal(api.checkAbi(1), 1);
    for (const found of [0, 2, 99]) {
      assertShardplanError(() => api.checkAbi(found), 'INCOMPATIBLE_ABI', new RegExp(`ABI version ${found}\\b.*ABI version 1\\b`));
    }
  });

  test('an engine of another ABI version is refused when wrapped', async () => {
    const engine = await createEngine();
    const fake = Object.create(engine, { _sp_abi_version: { value: () => 2 } });
    assertShardplanError(() => new api.Shardplan(fake), 'INCOMPATIBLE_ABI', /C ABI version 2/);
  });
});

describe('results', () => {
  test('the ok example', () => {
    const r = sp.check(OK);
    assert.equal(r.schema, 'shardplan.result.v1');
    assert.equal(r.ok, true);
    assert.deepEqual(r.diagnostics, []);
    assert.ok(r.owned.specs['layers.0.self_attn']);
    assert.deepEqual(Object.keys(r.owned), ['specs', 'parallel', 'owned_names', 'expected', 'required', 'aliases']);
  });

  test('the failing example: 4 diagnostics, the first native-no-match', async () => {
    const r = await api.check(BROKEN); // the module-level check() too
    assert.equal(r.ok, false);
    assert.equal(r.diagnostics.length, 4);
    assert.deepEqual(r.diagnostics.map((d) => d.code), ['native-no-match', 'ports-mismatch', 'unknown-axis', 'shared-conflict']);
    assert.deepEqual(r.diagnostics[0], {
      code: 'native-no-match',
      severity: 'error',
      message: "native binding pattern 'layer.*.mlp' matched no module",
      fqn: null,
      parameter: null,
      pointer: '/providers/native/0/match/0',
    });
    assert.equal(r.owned, undefined);
  });

  test('checkJson is the text of check, checkDiagnostics its verdict and diagnostics', () => {
    for (const text of [OK, BROKEN, '{']) {
      const json = sp.checkJson(text);
      assert.equal(typeof json, 'string');
      const parsed = JSON.parse(json);
      assert.deepEqual(sp.check(text), parsed);
      assert.deepEqual(sp.checkDiagnostics(text), { ok: parsed.ok, diagnostics: parsed.diagnostics });
    }
  });

  for (const [what, text] of [
    ['malformed JSON', '{"schema": "shardplan.v1",'],
    ['an empty document', ''],
    ['not an object', '[1, 2]'],
    ['invalid UTF-8', new Uint8Array([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x3a, 0x31, 0x7d])],
  ]) {
    test(`${what}: one invalid-document diagnostic`, () => {
      const r = sp.check(text);
      assert.equal(r.ok, false);
      assert.equal(r.diagnostics.length, 1, JSON.stringify(r.diagnostics));
      assert.equal(r.diagnostics[0].code, 'invalid-document');
      assert.equal(r.diagnostics[0].severity, 'error');
    });
  }
});

describe('inputs', () => {
  test('bytes give the result of the text: Uint8Array, Buffer, ArrayBuffer, views with an offset', () => {
    const expected = sp.checkJson(BROKEN);
    const bytes = new TextEncoder().encode(BROKEN);
    assert.equal(sp.checkJson(bytes), expected);
    assert.equal(sp.checkJson(Buffer.from(BROKEN)), expected);
    assert.equal(sp.checkJson(bytes.buffer.slice(0)), expected);
    const padded = new Uint8Array(bytes.length + 10);
    padded.set(bytes, 7);
    assert.equal(sp.checkJson(padded.subarray(7, 7 + bytes.length)), expected);
    assert.equal(sp.checkJson(new DataView(padded.buffer, 7, bytes.length)), expected);
  });

  test('non-ASCII text survives the round trip', () => {
    const doc = JSON.parse(OK);
    doc.providers.native[0].match = ['Ă©ĂźâŹ.*.đ§Ș'];
    const r = sp.check(JSON.stringify(doc));
    assert.equal(r.diagnostics[0].code, 'native-no-match');
    assert.match(r.diagnostics[0].message, /'Ă©ĂźâŹ\.\*\.đ§Ș'/);
  });

  for (const bad of [null, undefined, 42, {}, ['{}']]) {
    test(`refuses a document that is ${JSON.stringify(bad) ?? 'undefined'}`, () => {
      assertShardplanError(() => sp.check(bad), 'INVALID_ARGUMENT', /must be a string, a Uint8Array or an ArrayBuffer/);
    });
  }
});

describe('options', () => {
  test('maxPaths: 3 refuses tiny-llama as invalid-document', () => {
    for (const maxPaths of [3, 3n]) {
      const r = sp.check(OK, { maxPaths });
      assert.equal(r.ok, false);
      assert.equal(r.diagnostics.length, 1);
      assert.equal(r.diagnostics[0].code, 'invalid-document');
      assert.match(r.diagnostics[0].message, /more than 3 module paths/);
    }
    assert.equal(sp.check(OK, { maxPaths: 1000 }).ok, true);
  });

  test('maxFqnBytes and maxJsonDepth are passed through', () => {
    const byFqn = sp.check(OK, { maxFqnBytes: 10 });
    assert.equal(byFqn.diagnostics[0].code, 'invalid-document');
    assert.match(byFqn.diagnostics[0].message, /more than 10 bytes/);
    const byDepth = sp.check(OK, { maxJsonDepth: 3 });
    assert.equal(byDepth.diagnostics[0].code, 'invalid-document');
    assert.match(byDepth.diagnostics[0].message, /depth|deep|nest/i);
    // Large 64-bit values (above 2^32) and 0 (the defaults) are fine.
    assert.equal(sp.check(OK, { maxPaths: 2 ** 40, maxFqnBytes: (1n << 64n) - 1n, maxJsonDepth: 0 }).ok, true);
  });

  test('threads is accepted and changes nothing', () => {
    const expected = sp.checkJson(BROKEN);
    for (const threads of [0, 1, 4, 64]) assert.equal(sp.checkJson(BROKEN, { threads }), expected);
    assert.equal(sp.checkJson(BROKEN, {}), expected);
    assert.equal(sp.checkJson(BROKEN, null), expected);
    assert.equal(sp.checkJson(BROKEN, { threads: undefined }), expected);
  });

  for (const [options, pattern] of [
    [{ threads: -1 }, /threads must be between 0 and 4294967295/],
    [{ threads: 2 ** 32 }, /threads must be between/],
    [{ threads: 1.5 }, /threads must be a non-negative integer/],
    [{ maxPaths: '3' }, /maxPaths must be a non-negative integer/],
    [{ maxPaths: 1n << 64n }, /maxPaths must be between 0 and 18446744073709551615/],
    [{ maxJsonDepth: NaN }, /maxJsonDepth must be a non-negative integer/],
    [{ maxpaths: 3 }, /unknown option 'maxpaths'/],
    ['threads', /options must be an object/],
  ]) {
    test(`refuses options ${typeof options === 'string' ? options : JSON.stringify(options, (k, v) => (typeof v === 'bigint' ? `${v}n` : v))}`, () => {
      assertShardplanError(() => sp.check(OK, options), 'INVALID_ARGUMENT', pattern);
    });
  }
});

// An instance over an engine whose functions are counted: every malloc is freed, every handle
// and error deleted.
async function countedInstance(overrides = {}) {
  const engine = await createEngine();
  const live = { memory: new Set(), document: new Set(), result: new Set(), error: new Set() };
  const fake = Object.create(engine);
  const returnsError = (fn) => (...args) => {
    const error = fn(...args);
    if (error) live.error.add(error);
    return error;
  };
  Object.assign(fake, {
    _malloc: (size) => {
      const p = engine._malloc(size);
      live.memory.add(p);
      return p;
    },
    _free: (p) => {
      if (p) assert.ok(live.memory.delete(p), `free of ${p}, not malloc'ed here`);
      engine._free(p);
    },
    _sp_document_parse: (json, options, out) => {
      const error = returnsError(engine._sp_document_parse)(json, options, out);
      if (!error) live.document.add(engine.HEAPU32[out >>> 2]);
      return error;
    },
    _sp_document_delete: (d) => {
      assert.ok(live.document.delete(d), `delete of unknown document ${d}`);
      engine._sp_document_delete(d);
    },
    _sp_document_check: (d, options, out) => {
      const error = returnsError(overrides._sp_document_check ?? engine._sp_document_check)(d, options, out);
      if (!error) live.result.add(engine.HEAPU32[out >>> 2]);
      return error;
    },
    _sp_result_delete: (r) => {
      assert.ok(live.result.delete(r), `delete of unknown result ${r}`);
      engine._sp_result_delete(r);
    },
    _sp_result_ok: returnsError(engine._sp_result_ok),
    _sp_result_diagnostic_count: returnsError(engine._sp_result_diagnostic_count),
    _sp_result_diagnostic: returnsError(engine._sp_result_diagnostic),
    _sp_result_json: returnsError(engine._sp_result_json),
    _sp_error_delete: (e) => {
      assert.ok(live.error.delete(e), `delete of unknown error ${e}`);
      engine._sp_error_delete(e);
    },
  });
  const assertAllFreed = () => {
    for (const [what, set] of Object.entries(live)) assert.equal(set.size, 0, `${set.size} ${what} left`);
  };
  return { instance: new api.Shardplan(fake), engine, assertAllFreed };
}

describe('errors and freeing', () => {
  test('every buffer and handle is freed, whatever the document', async () => {
    const { instance, assertAllFreed } = await countedInstance();
    instance.check(OK);
    instance.check(BROKEN, { threads: 1, maxPaths: 100 });
    instance.checkDiagnostics(BROKEN);
    instance.check('{');
    instance.check('');
    instance.check(OK, { maxPaths: 3 });
    assert.throws(() => instance.check(OK, { threads: -1 }));
    assertAllFreed();
  });

  test('an sp_error becomes a ShardplanError with its code and message, and is freed', async () => {
    // A check of a NULL document: the engine's own SP_ERROR_NULL_ARGUMENT error.
    const { instance, engine, assertAllFreed } = await countedInstance({
      _sp_document_check: (document, options, out) => engine._sp_document_check(0, options, out),
    });
    assertShardplanError(() => instance.check(OK), 'NULL_ARGUMENT', /argument 'document' must not be NULL/);
    assertAllFreed();
    // The instance stays usable after an sp_error.
    assertShardplanError(() => instance.check(OK), 'NULL_ARGUMENT');
  });

  test('an engine that aborts makes the instance refuse further calls', async () => {
    for (const failure of [new WebAssembly.RuntimeError('Aborted(OOM)'), 5251232 /* a C++ exception */]) {
      let calls = 0;
      const { instance } = await countedInstance({
        _sp_document_check: () => {
          calls++;
          throw failure;
        },
      });
      assertShardplanError(() => instance.check(OK), 'ENGINE_ABORTED', /the shardplan engine aborted: .*call load\(\) for a new one/);
      assertShardplanError(() => instance.check(OK), 'ENGINE_ABORTED');
      assert.equal(calls, 1, 'no call into an aborted engine');
    }
    // Other exceptions (bugs in JS code) pass through unchanged.
    const { instance } = await countedInstance({
      _sp_document_check: () => {
        throw new TypeError('boom');
      },
    });
    assert.throws(() => instance.check(OK), TypeError);
  });

  test('no memory leak: the heap does not grow over many checks', async () => {
    const { instance, engine } = await countedInstance();
    const big = tinyLlamaWithLayers(200); // ~1 MB: a leaked input or result would show at once
    for (let i = 0; i < 20; i++) instance.check(BROKEN); // warm-up
    instance.check(big);
    const heap = engine.HEAPU8.length;
    for (let i = 0; i < 200; i++) instance.check(BROKEN);
    for (let i = 0; i < 20; i++) instance.check(big);
    assert.equal(engine.HEAPU8.length, heap, 'the wasm memory grew');
    // And the allocator reuses the space: a block of the document's size lands where it did.
    const probe = engine._malloc(big.length);
    engine._free(probe);
    instance.check(big);
    const probe2 = engine._malloc(big.length);
    engine._free(probe2);
    assert.equal(probe2, probe);
  });
});

describe('a large document', () => {
  test('a ~2 MB model checks ok', () => {
    const text = tinyLlamaWithLayers(500);
    assert.ok(text.length > 2_000_000, `${text.length} bytes`);
    const r = sp.check(text);
    assert.deepEqual(r.diagnostics, []);
    assert.equal(r.ok, true);
    assert.ok(r.owned.specs['layers.499.self_attn']);
    assert.ok(r.owned.specs['layers.499.mlp']);
    assert.ok(r.owned.specs['lm_head']);
  });
});

describe('README.md', () => {
  test("the example's output is the one shown", () => {
    const readme = readFileSync(join(npmDir(), 'README.md'), 'utf8');
    const section = readme.slice(readme.indexOf('\n## Example\n'));
    const code = section.match(/```js\n([\s\S]*?)```/)[1];
    const shown = section.match(/```text\n\$ node example\.mjs\n([\s\S]*?)```/)[1];
    const dir = mkdtempSync(join(tmpdir(), 'shardplan-readme-'));
    try {
      const file = join(dir, 'example.mjs');
      const wrapper = pathToFileURL(join(npmDir(), 'index.mjs')).href;
      writeFileSync(file, code.replaceAll("'@shardplan/wasm'", JSON.stringify(wrapper)));
      const run = spawnSync(process.execPath, [file], { encoding: 'utf8' });
      assert.equal(run.status, 0, run.stderr);
      assert.equal(run.stdout, shown);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
