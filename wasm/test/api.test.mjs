// The wrapper (@shardplan/wasm's index.mjs): results, inputs, options, errors, the ABI check,
// freeing everything it allocates, and a large document.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { before, describe, test } from 'node:test';

import {
  CASES, REPO, applyFix, cliPath, diagnosticKeys, importEngineFactory, importWrapper, npmDir, readExample,
} from './lib.mjs';

let api; // the wrapper module: load, check, Shardplan, ShardplanError, checkAbi, ...
let sp; // load()'s instance
let createEngine; // shardplan.mjs's factory, for instances of our own

const OK = readExample('tiny-llama.json');
const BROKEN = readExample('tiny-llama-broken.json');
const TINY_PLAN = readExample('tiny-plan.json');

// The planning document of the binding brief: an owned embedding and a tensor-parallel template.
const PLAN_DOC = JSON.stringify({
  schema: 'shardplan.v1',
  mesh: { dp: 2, tp: 4 },
  parameters: { emb: { shape: [64, 8], dtype: 'bfloat16' }, up: { shape: [32, 8] }, down: { shape: [8, 32] } },
  root: 'model',
  modules: {
    model: { children: { embed: 'embed', up_proj: 'up', down_proj: 'down' } },
    embed: { type: 'Embedding', forward: ['input'], params: { weight: 'emb' } },
    up: { type: 'Linear', forward: ['x'], params: { weight: 'up' } },
    down: { type: 'Linear', forward: ['x'], params: { weight: 'down' } },
  },
  providers: { sharding: { embed: { params: { weight: { tp: 'S(0)' } }, in_src: {}, in_dst: {} } } },
  templates: [{ axis: 'tp', rules: { up_proj: 'colwise', down_proj: 'rowwise' } }],
});
const PLAN_KEYS = ['plan', 'provenance', 'memory', 'communication', 'collectives'];

// The golden cases (tests/golden/cases): a document per diagnostic code, and variants.
const GOLDEN = join(REPO, 'tests', 'golden', 'cases');
const golden = (name) => readFileSync(join(GOLDEN, name), 'utf8');
// One over-wide native pattern: 42 diagnostics in 9 groups, the first of 6 overlapping-communication.
const GLOB = golden('overlapping-communication.glob.fail.json');

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
      help: "did you mean 'layers.*.mlp'?",
    });
    assert.equal(r.owned, undefined);
  });

  test('checkJson is the text of check, checkDiagnostics its verdict, diagnostics, groups and counts', () => {
    for (const text of [OK, BROKEN, '{']) {
      const json = sp.checkJson(text);
      assert.equal(typeof json, 'string');
      const parsed = JSON.parse(json);
      assert.deepEqual(sp.check(text), parsed);
      assert.deepEqual(sp.checkDiagnostics(text), diagnosticKeys(parsed));
    }
    // The broken example's native-no-match has a help, its unknown-axis and
    // shared-conflict a help and a fix; ports-mismatch has neither.
    const { diagnostics, groups, counts } = sp.checkDiagnostics(BROKEN);
    assert.deepEqual(diagnostics.map((d) => [d.code, 'help' in d, 'fix' in d]), [
      ['native-no-match', true, false], ['ports-mismatch', false, false], ['unknown-axis', true, true], ['shared-conflict', true, true],
    ]);
    assert.equal(diagnostics[0].help, "did you mean 'layers.*.mlp'?");
    assert.equal(diagnostics[2].help, "did you mean 'dp'? (the mesh's axes are 'dp', 'tp')");
    assert.deepEqual(diagnostics[2].fix, [{
      op: 'move',
      from: '/modules/layers.1.self_attn/family/sharding/params/o_proj.weight/pp',
      path: '/modules/layers.1.self_attn/family/sharding/params/o_proj.weight/dp',
    }]);
    assert.deepEqual(groups.map((g) => [g.code, g.count, g.listed]), [
      ['native-no-match', 1, [0]], ['ports-mismatch', 1, [1]], ['unknown-axis', 1, [2]], ['shared-conflict', 1, [3]],
    ]);
    assert.deepEqual(counts, { 'native-no-match': 1, 'ports-mismatch': 1, 'unknown-axis': 1, 'shared-conflict': 1 });
    assert.deepEqual(sp.checkDiagnostics(OK), { ok: true, diagnostics: [], groups: [], counts: {} });
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
    _sp_document_plan: (d, options, out) => {
      const error = returnsError(overrides._sp_document_plan ?? engine._sp_document_plan)(d, options, out);
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
    _sp_result_diagnostic_help: returnsError(engine._sp_result_diagnostic_help),
    _sp_result_diagnostic_fix_count: returnsError(engine._sp_result_diagnostic_fix_count),
    _sp_result_diagnostic_fix: returnsError(engine._sp_result_diagnostic_fix),
    _sp_result_group_count: returnsError(engine._sp_result_group_count),
    _sp_result_group: returnsError(engine._sp_result_group),
    _sp_result_json: returnsError(engine._sp_result_json),
    _sp_result_owner_count: returnsError(engine._sp_result_owner_count),
    _sp_result_owner: returnsError(engine._sp_result_owner),
    _sp_result_owned_parameter_count: returnsError(engine._sp_result_owned_parameter_count),
    _sp_result_owned_parameter: returnsError(engine._sp_result_owned_parameter),
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
    instance.checkDiagnostics(GLOB); // groups of several diagnostics, fixes that replace
    instance.checkDiagnostics('{');
    assert.throws(() => instance.checkDiagnostics(OK, { maxPaths: -1 }));
    instance.check('{');
    instance.check('');
    instance.check(OK, { maxPaths: 3 });
    assert.throws(() => instance.check(OK, { threads: -1 }));
    instance.plan(PLAN_DOC);
    instance.plan(TINY_PLAN, { maxPaths: 100 });
    instance.planJson(BROKEN);
    instance.plan('{');
    instance.plan(TINY_PLAN, { maxPaths: 3 });
    assert.throws(() => instance.plan(TINY_PLAN, { maxJsonDepth: -1 }));
    instance.checkDetails(OK);
    instance.checkDetails(BROKEN);
    instance.checkDetails('{');
    instance.planDetails(PLAN_DOC);
    instance.planDetails(TINY_PLAN);
    assert.throws(() => instance.checkDetails(OK, { maxPaths: -1 }));
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
    const failures = [
      [new WebAssembly.RuntimeError('Aborted(). Build with -s ASSERTIONS=1 for more info.'), 'ENGINE_ABORTED'],
      [5251232 /* a C++ exception */, 'ENGINE_ABORTED'],
      // How the engine aborts when its memory cannot grow (memory.test.mjs provokes it for real).
      [new WebAssembly.RuntimeError('Aborted(OOM). Build with -s ASSERTIONS=1 for more info.'), 'OUT_OF_MEMORY'],
    ];
    for (const [failure, codeName] of failures) {
      let calls = 0;
      const { instance } = await countedInstance({
        _sp_document_check: () => {
          calls++;
          throw failure;
        },
      });
      assertShardplanError(() => instance.check(OK), codeName, /call load\(\) for a new one/);
      assertShardplanError(() => instance.check(OK), 'ENGINE_ABORTED', /^the shardplan engine aborted: [^.]*\. This instance cannot be used any more; call load\(\) for a new one\.$/);
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

describe('planning', () => {
  test('the brief document: ok, three plan entries with provenance, memory, communication', async () => {
    const r = sp.plan(PLAN_DOC);
    assert.equal(r.schema, 'shardplan.result.v1');
    assert.equal(r.ok, true, JSON.stringify(r.diagnostics));
    for (const key of PLAN_KEYS) assert.ok(key in r, `no "${key}" in the result`);
    // Plan entries in plan order (owners first, then template entries in named_modules order).
    assert.deepEqual(Object.keys(r.plan.modules), ['embed', 'up_proj', 'down_proj']);
    assert.deepEqual(r.provenance, {
      embed: ['owned:model'],
      up_proj: ['template:tp:up_proj'],
      down_proj: ['template:tp:down_proj'],
    });
    assert.deepEqual(Object.keys(r.provenance), Object.keys(r.plan.modules));
    assert.deepEqual(r.plan.modules.up_proj.params, { weight: { tp: 'S(-2)' } });
    assert.deepEqual(r.plan.modules.down_proj.params, { weight: { tp: 'S(-1)' } });
    // Memory: 64*8*2 + 32*8*4 + 8*32*4 = 3072 bytes unsharded; everything is split over tp=4.
    assert.equal(r.memory.devices, 8);
    assert.equal(r.memory.unsharded_bytes, 3072);
    assert.equal(r.memory.per_device_bytes.length, 8);
    assert.deepEqual(r.memory.per_device_bytes, Array(8).fill(768));
    assert.equal(r.memory.max_bytes, Math.max(...r.memory.per_device_bytes));
    assert.equal(r.memory.min_bytes, Math.min(...r.memory.per_device_bytes));
    assert.equal(r.memory.mean_bytes, 768);
    assert.equal(r.memory.max_device, 0);
    // Rowwise down_proj: its output goes P -> R on tp, an all-reduce.
    assert.deepEqual(r.communication.find((c) => c.fqn === 'down_proj' && c.collective === 'all_reduce'), {
      fqn: 'down_proj', port: 'out:output', axis: 'tp', from: 'P', to: 'R', collective: 'all_reduce',
    });
    assert.deepEqual(r.collectives, { all_reduce: { tp: 1 } });
    // The module-level plan() and bytes as input give the same.
    assert.deepEqual(await api.plan(PLAN_DOC), r);
    assert.deepEqual(sp.plan(new TextEncoder().encode(PLAN_DOC)), r);
  });

  test('planJson is the text of plan', () => {
    for (const text of [PLAN_DOC, TINY_PLAN, OK, BROKEN, '{']) assert.deepEqual(JSON.parse(sp.planJson(text)), sp.plan(text));
  });

  test('a malformed document: one invalid-document diagnostic, no plan', () => {
    for (const text of ['{"schema": "shardplan.v1", "templates": [', '', '[1, 2]']) {
      const r = sp.plan(text);
      assert.equal(r.ok, false);
      assert.deepEqual(r.diagnostics.map((d) => d.code), ['invalid-document']);
      for (const key of PLAN_KEYS) assert.ok(!(key in r), `"${key}" in the result of an invalid document`);
    }
    // A document giving both a plan and templates is invalid as well.
    const both = JSON.parse(PLAN_DOC);
    both.plan = { modules: {} };
    const r = sp.plan(JSON.stringify(both));
    assert.deepEqual(r.diagnostics.map((d) => d.code), ['invalid-document']);
  });

  test('check() ignores templates; plan() of a document with its own plan equals check()', () => {
    const checked = sp.check(PLAN_DOC);
    assert.equal(checked.ok, true);
    for (const key of PLAN_KEYS) assert.ok(!(key in checked), `"${key}" in a checked result`);
    // tiny-llama.json gives a final plan of its own: plan() checks it, as check() does.
    assert.equal(sp.planJson(OK), sp.checkJson(OK));
    assert.equal(sp.planJson(BROKEN), sp.checkJson(BROKEN));
  });

  test('tiny-plan.json: five entries, the unused gate rule, 9 MiB per device, one all-reduce', () => {
    const r = sp.plan(TINY_PLAN);
    assert.equal(r.ok, true);
    assert.deepEqual(r.diagnostics.map((d) => `${d.severity}:${d.code}`), ['warning:unused-template-rule']);
    assert.deepEqual(Object.keys(r.provenance), ['embed', 'layers.0.attn.q_proj', 'layers.0.attn.kv_proj',
      'layers.0.mlp.up_proj', 'layers.0.mlp.down_proj']);
    assert.equal(r.memory.unsharded_bytes, 36 * 2 ** 20);
    assert.deepEqual(r.memory.per_device_bytes, Array(8).fill(9 * 2 ** 20));
    assert.deepEqual(r.collectives, { all_reduce: { tp: 1 } });
  });

  test('options apply to plan() as to check()', () => {
    const r = sp.plan(TINY_PLAN, { maxPaths: 3 });
    assert.deepEqual(r.diagnostics.map((d) => d.code), ['invalid-document']);
    assert.match(r.diagnostics[0].message, /more than 3 module paths/);
    assert.equal(sp.planJson(TINY_PLAN, { threads: 4, maxPaths: 1000n }), sp.planJson(TINY_PLAN));
    assertShardplanError(() => sp.plan(TINY_PLAN, { maxpaths: 3 }), 'INVALID_ARGUMENT', /unknown option 'maxpaths'/);
    assertShardplanError(() => sp.plan(42), 'INVALID_ARGUMENT', /must be a string/);
  });

  test('an engine without sp_document_plan is refused by plan() only', async () => {
    const engine = await createEngine();
    const old = Object.create(engine, { _sp_document_plan: { value: undefined } });
    const instance = new api.Shardplan(old);
    assert.equal(instance.check(OK).ok, true);
    assertShardplanError(() => instance.plan(PLAN_DOC), 'INCOMPATIBLE_ABI', /no sp_document_plan/);
  });

  test('the result equals the native `shardplan plan --format json`, byte for byte', () => {
    // The two documents of the brief, variants with errors and more axes, and every conformance
    // case (none has templates: there plan() adds the owners' plan, memory and communication).
    const variants = {
      'brief.json': PLAN_DOC,
      'tiny-plan.json': TINY_PLAN,
    };
    const withOverride = JSON.parse(TINY_PLAN);
    withOverride.overrides = { lm_head: { params: { weight: { tp: 'S(5)' } }, in_src: {}, in_dst: {} } };
    variants['override-errors.json'] = JSON.stringify(withOverride);
    const conflict = JSON.parse(TINY_PLAN);
    conflict.templates.push({ axis: 'tp', rules: { 'layers.*.mlp.down_proj': 'colwise' } });
    variants['template-conflict.json'] = JSON.stringify(conflict);
    variants['three-axes-uneven.json'] = TINY_PLAN.replace('"tp": 4}', '"pp": 3, "tp": 8}');
    const dir = mkdtempSync(join(tmpdir(), 'shardplan-plan-'));
    try {
      const files = [];
      const texts = [];
      for (const [name, text] of Object.entries(variants)) {
        writeFileSync(join(dir, name), text);
        files.push(join(dir, name));
        texts.push(text);
      }
      for (const name of readdirSync(CASES).filter((n) => n.endsWith('.json')).sort()) {
        files.push(join(CASES, name));
        texts.push(readFileSync(join(CASES, name)));
      }
      const run = spawnSync(cliPath(), ['plan', '--format', 'json', ...files], { encoding: 'utf8', maxBuffer: 1 << 30 });
      if (run.error) throw run.error;
      assert.ok(run.status === 0 || run.status === 1, `${cliPath()} exited ${run.status}: ${run.stderr}`);
      const lines = run.stdout.split('\n');
      assert.equal(lines.pop(), '', 'the CLI output ends with a newline');
      assert.equal(lines.length, files.length, 'one JSON line per document (is SHARDPLAN_CLI a build with `plan`?)');
      assert.ok(JSON.parse(lines[0]).provenance, 'the CLI planned the brief document');
      const planned = lines.filter((line) => line.includes('"provenance":')).length;
      // (Most conformance cases give a plan of their own or fail their ownership checks: no plan then.)
      assert.ok(planned >= 10, `only ${planned} of ${files.length} documents were planned`);
      files.forEach((file, i) => assert.equal(sp.planJson(texts[i]), lines[i], `${file}`));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('owners and owned parameters (checkDetails, planDetails)', () => {
  const summary = (owners) => owners.map((o) => [o.fqn, o.kind, o.nativeRequest, o.nativePattern, o.pointer]);

  test('the passing example: its owners are owned.specs, with their kind and origin', () => {
    const { result, owners, parameters } = sp.checkDetails(OK);
    assert.deepEqual(result, sp.check(OK));
    assert.deepEqual(summary(owners), [
      ['embed_tokens', 'model', null, null, '/providers/sharding/embed_tokens'],
      ['lm_head', 'model', null, null, '/providers/sharding/lm_head'],
      ['layers.0.self_attn', 'family', null, null, '/modules/layers.0.self_attn/family/sharding'],
      ['layers.1.self_attn', 'family', null, null, '/modules/layers.1.self_attn/family/sharding'],
      ['layers.0.mlp', 'native', 0, 'layers.*.mlp', '/providers/native/0/sharding'],
      ['layers.1.mlp', 'native', 0, 'layers.*.mlp', '/providers/native/0/sharding'],
    ]);
    assert.deepEqual(owners.map((o) => o.fqn), Object.keys(result.owned.specs));
    for (const o of owners) assert.deepEqual(o.layout, result.owned.specs[o.fqn], o.fqn);
    // The tied lm_head.weight is dropped from lm_head's layout, as in the result.
    assert.deepEqual(owners[1].layout.params, {});
    // One request's owners share its layout, frozen.
    assert.equal(owners[4].layout, owners[5].layout);
    assert.ok(Object.isFrozen(owners[4].layout) && Object.isFrozen(owners[4].layout.params));
    assert.throws(() => { owners[4].layout.params.x = {}; }, TypeError);

    assert.deepEqual(parameters.map((p) => p.name).sort(), result.owned.owned_names);
    // In the module tree's order: embed_tokens first, lm_head last.
    assert.equal(parameters[0].name, 'embed_tokens.weight');
    const last = parameters.at(-1);
    assert.deepEqual({ ...last, owner: owners[last.owner].fqn }, {
      name: 'lm_head.weight', canonical: 'embed_tokens.weight', owner: 'embed_tokens', placements: { dp: 'R', tp: 'S(0)' },
    });
    assert.equal(last.placements, parameters[0].placements); // equal placements, one object
    const aliases = parameters.filter((p) => p.canonical !== p.name).map((p) => [p.canonical, p.name]);
    assert.deepEqual(aliases, result.owned.aliases);
    const oProj = parameters.find((p) => p.name === 'layers.1.self_attn.o_proj.weight');
    assert.equal(owners[oProj.owner].fqn, 'layers.1.self_attn');
    assert.deepEqual(oProj.placements, { dp: 'R', tp: 'S(1)' });
    assert.equal(owners[parameters.find((p) => p.name === 'layers.0.mlp.up_proj.weight').owner].kind, 'native');
  });

  test('the failing example: its owners as collected, no owned parameter', async () => {
    const details = await api.checkDetails(BROKEN); // the module-level checkDetails() too
    assert.equal(details.result.ok, false);
    assert.deepEqual(details.result, sp.check(BROKEN));
    // Its native pattern matches no module: no native owner.
    assert.deepEqual(summary(details.owners), [
      ['embed_tokens', 'model', null, null, '/providers/sharding/embed_tokens'],
      ['lm_head', 'model', null, null, '/providers/sharding/lm_head'],
      ['layers.0.self_attn', 'family', null, null, '/modules/layers.0.self_attn/family/sharding'],
      ['layers.1.self_attn', 'family', null, null, '/modules/layers.1.self_attn/family/sharding'],
    ]);
    // lm_head's conflicting placement is not dropped; layers.1.self_attn keeps its unknown axis.
    assert.deepEqual(details.owners[1].layout.params, { weight: { dp: 'R', tp: 'S(1)' } });
    assert.deepEqual(details.owners[3].layout.params['o_proj.weight'], { pp: 'R', tp: 'S(1)' });
    assert.deepEqual(details.parameters, []);
  });

  test('a native owner names its request and the pattern that added it', () => {
    const doc = JSON.parse(OK);
    // Request 0 now hits layer 1 by its first pattern and layer 0 by its second.
    doc.providers.native[0].match = ['layers.1.mlp', 'layers.[01].mlp'];
    const { result, owners } = sp.checkDetails(JSON.stringify(doc));
    assert.equal(result.ok, true);
    assert.deepEqual(summary(owners).slice(4), [
      ['layers.1.mlp', 'native', 0, 'layers.1.mlp', '/providers/native/0/sharding'],
      ['layers.0.mlp', 'native', 0, 'layers.[01].mlp', '/providers/native/0/sharding'],
    ]);
  });

  test('an invalid document has no owner', () => {
    for (const text of ['{', '', '[1, 2]']) {
      const details = sp.checkDetails(text);
      assert.deepEqual(details.result, sp.check(text));
      assert.deepEqual([details.owners, details.parameters], [[], []]);
    }
  });

  test('planDetails: the planned result with the owners', async () => {
    const details = sp.planDetails(PLAN_DOC);
    assert.deepEqual(details.result, sp.plan(PLAN_DOC));
    assert.deepEqual(summary(details.owners), [['embed', 'model', null, null, '/providers/sharding/embed']]);
    // Templates own nothing: only the owner's parameter is an owned name.
    assert.deepEqual(details.parameters, [{ name: 'embed.weight', canonical: 'embed.weight', owner: 0, placements: { tp: 'S(0)' } }]);
    assert.deepEqual(await api.planDetails(PLAN_DOC), details);
  });

  test('on every conformance case the owners and parameters agree with the result JSON', () => {
    let ok = 0;
    for (const name of readdirSync(CASES).filter((n) => n.endsWith('.json')).sort()) {
      const { result, owners, parameters } = sp.checkDetails(readFileSync(join(CASES, name)));
      assert.deepEqual(result, sp.check(readFileSync(join(CASES, name))), name);
      if (!result.ok) {
        assert.deepEqual(parameters, [], name);
        continue;
      }
      ok++;
      assert.deepEqual(owners.map((o) => o.fqn), Object.keys(result.owned.specs), name);
      for (const o of owners) assert.deepEqual(o.layout, result.owned.specs[o.fqn], `${name}: ${o.fqn}`);
      assert.deepEqual(parameters.map((p) => p.name).sort(), result.owned.owned_names, name);
      assert.deepEqual(parameters.filter((p) => p.canonical !== p.name).map((p) => [p.canonical, p.name]),
        result.owned.aliases, name);
      for (const p of parameters) assert.ok(p.owner < owners.length, name);
    }
    assert.ok(ok >= 10, `${ok} passing cases`);
  });

  test('an engine without the owner accessors is refused by checkDetails() only', async () => {
    const engine = await createEngine();
    const old = Object.create(engine, { _sp_result_owner: { value: undefined } });
    const instance = new api.Shardplan(old);
    assert.equal(instance.check(OK).ok, true);
    assertShardplanError(() => instance.checkDetails(OK), 'INCOMPATIBLE_ABI', /no sp_result_owner/);
    assertShardplanError(() => instance.planDetails(PLAN_DOC), 'INCOMPATIBLE_ABI', /no sp_result_owner/);
  });
});

describe('help, fixes and groups (checkDiagnostics)', () => {
  // Every golden and conformance document, as text.
  const documents = () => [
    ...readdirSync(GOLDEN).filter((n) => n.endsWith('.json')).sort().map((n) => [`golden/${n}`, join(GOLDEN, n)]),
    ...readdirSync(CASES).filter((n) => n.endsWith('.json')).sort().map((n) => [`conformance/${n}`, join(CASES, n)]),
  ].map(([name, path]) => [name, readFileSync(path, 'utf8')]);

  test('on every golden and conformance document they are the result JSON\'s, key order included', () => {
    const seen = { help: 0, fix: 0, move: 0, replace: 0, shared: 0 };
    for (const [name, text] of documents()) {
      const parsed = JSON.parse(sp.checkJson(text));
      const read = sp.checkDiagnostics(text);
      assert.deepEqual(read, diagnosticKeys(parsed), name);
      assert.equal(JSON.stringify(read), JSON.stringify(diagnosticKeys(parsed)), name);
      // Every diagnostic is in exactly one group, of its code and pointer.
      const listed = read.groups.flatMap((g) => g.listed).sort((a, b) => a - b);
      assert.deepEqual(listed, read.diagnostics.map((_, i) => i), name);
      for (const g of read.groups) {
        assert.equal(g.count, g.listed.length, name);
        for (const i of g.listed) assert.deepEqual([read.diagnostics[i].code, read.diagnostics[i].pointer], [g.code, g.pointer], name);
      }
      for (const d of read.diagnostics) {
        if ('help' in d) seen.help++;
        if (!('fix' in d)) continue;
        seen.fix++;
        assert.ok(d.fix.length > 0, name);
        for (const op of d.fix) seen[op.op]++;
      }
      seen.shared += read.groups.filter((g) => g.count > 1).length;
    }
    // Not vacuous: helps, fixes of both kinds and groups of several diagnostics were compared.
    assert.ok(seen.help >= 10 && seen.fix >= 10 && seen.move >= 3 && seen.replace >= 3 && seen.shared >= 3, JSON.stringify(seen));
  });

  test('the typo cases: a help naming the right spelling, and a fix that makes the document pass', () => {
    const cases = {
      'unknown-axis.typo': ["did you mean 'dp'? (the mesh's axes are 'dp', 'tp')", [{
        op: 'move', from: '/providers/sharding/proj/params/weight/pd', path: '/providers/sharding/proj/params/weight/dp',
      }]],
      'unknown-module.typo': ["did you mean 'proj'?", [{ op: 'move', from: '/providers/sharding/porj', path: '/providers/sharding/proj' }]],
      'parallel-unknown-axis.typo': ["did you mean 'tp'? (the mesh's axes are 'tp')", [{
        op: 'replace', path: '/modules/linear/parallel/axes/0', value: 'tp',
      }]],
      'unknown-parameter.typo': ["did you mean 'proj.weight'?", [{
        op: 'move', from: '/providers/sharding/proj/params/weigth', path: '/providers/sharding/proj/params/weight',
      }]],
    };
    for (const [stem, [help, fix]] of Object.entries(cases)) {
      const text = golden(`${stem}.fail.json`);
      const { ok, diagnostics, groups } = sp.checkDiagnostics(text);
      assert.equal(ok, false, stem);
      assert.equal(diagnostics[0].help, help, stem);
      assert.deepEqual(diagnostics[0].fix, fix, stem);
      assert.deepEqual(groups[0], {
        code: diagnostics[0].code, severity: 'error', pointer: diagnostics[0].pointer, count: 1, listed: [0],
      }, stem);
      const fixed = JSON.stringify(applyFix(JSON.parse(text), fix));
      assert.deepEqual(sp.checkDiagnostics(fixed), { ok: true, diagnostics: [], groups: [], counts: {} }, stem);
      assert.deepEqual(JSON.parse(fixed), JSON.parse(golden(`${stem}.pass.json`)), `${stem}: the fix gives its twin`);
    }
  });

  test('an over-wide native pattern: groups of several diagnostics with one help and fix', () => {
    const { ok, diagnostics, groups, counts } = sp.checkDiagnostics(GLOB);
    assert.equal(ok, false);
    assert.equal(diagnostics.length, 42);
    assert.deepEqual(groups.map((g) => [g.code, g.pointer, g.count]), [
      ['overlapping-communication', '/providers/native/0/parallel', 6],
      ['unknown-forward-input', '/providers/native/0/sharding/in_src/x', 6],
      ['nested-duplicate', '/providers/native/0/sharding/params/gate_proj.weight', 2],
      ['nested-duplicate', '/providers/native/0/sharding/params/up_proj.weight', 2],
      ['nested-duplicate', '/providers/native/0/sharding/params/down_proj.weight', 2],
      ['unknown-parameter', '/providers/native/0/sharding/params/gate_proj.weight', 6],
      ['unknown-parameter', '/providers/native/0/sharding/params/up_proj.weight', 6],
      ['unknown-parameter', '/providers/native/0/sharding/params/down_proj.weight', 6],
      ['omitted-parameters', '/providers/native/0/sharding/params', 6],
    ]);
    assert.deepEqual(groups[0].listed, [0, 1, 2, 3, 4, 5]);
    assert.deepEqual(groups[2].listed, [12, 27]);
    assert.deepEqual(counts, {
      'overlapping-communication': 6, 'unknown-forward-input': 6, 'nested-duplicate': 6, 'unknown-parameter': 18, 'omitted-parameters': 6,
    });
    // The six overlapping-communication diagnostics: one cause, one help, one fix (a replace
    // whose value is an array, JSON text in the C ABI).
    const first = groups[0].listed.map((i) => diagnostics[i]);
    assert.deepEqual(new Set(first.map((d) => d.message)).size, 6);
    const fix = [{ op: 'replace', path: '/providers/native/0/match', value: ['layers.*.mlp.experts.[0-9]'] }];
    for (const d of first) {
      assert.match(d.help, /^'layers\.\*\.mlp\.experts\.\*' also matches the modules nested in those it matches/);
      assert.deepEqual(d.fix, fix);
    }
    // Applied, it makes the whole storm go away.
    assert.equal(sp.check(JSON.stringify(applyFix(JSON.parse(GLOB), fix))).ok, true);
  });

  test('an engine without sp_result_group is refused by checkDiagnostics() only', async () => {
    const engine = await createEngine();
    const old = Object.create(engine, { _sp_result_group: { value: undefined } });
    const instance = new api.Shardplan(old);
    assert.equal(instance.check(BROKEN).diagnostics.length, 4);
    assertShardplanError(() => instance.checkDiagnostics(BROKEN), 'INCOMPATIBLE_ABI', /no sp_result_group.*release 0\.7/);
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
  // Runs the ```js block of a README section and compares its output with the ```text block
  // that follows it ("$ node FILE" then the output).
  for (const [heading, file] of [['Example', 'example.mjs'], ['Planning', 'plan.mjs'], ['Training memory', 'training.mjs'],
    ['Who owns what', 'owners.mjs'], ['Help, fixes and groups', 'fixes.mjs']]) {
    test(`the ${heading} section's output is the one shown`, () => {
      const readme = readFileSync(join(npmDir(), 'README.md'), 'utf8');
      const at = readme.indexOf(`\n## ${heading}\n`);
      assert.ok(at >= 0, `no "## ${heading}" section`);
      const section = readme.slice(at, readme.indexOf('\n## ', at + 1));
      const code = section.match(/```js\n([\s\S]*?)```/)[1];
      const shown = section.match(new RegExp(`\`\`\`text\n\\$ node ${file.replace('.', '\\.')}\n([\\s\\S]*?)\`\`\``))[1];
      const dir = mkdtempSync(join(tmpdir(), 'shardplan-readme-'));
      try {
        const path = join(dir, file);
        const wrapper = pathToFileURL(join(npmDir(), 'index.mjs')).href;
        writeFileSync(path, code.replaceAll("'@shardplan/wasm'", JSON.stringify(wrapper)));
        const run = spawnSync(process.execPath, [path], { encoding: 'utf8' });
        assert.equal(run.status, 0, run.stderr);
        assert.equal(run.stdout, shown);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });
  }
});
