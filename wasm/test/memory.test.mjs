// Running out of memory in the engine (@shardplan/wasm): the call fails with a clear
// OUT_OF_MEMORY error and the next call works, on a new instance. A file of its own (node --test
// runs each file in its own process): it lowers the WebAssembly memory ceiling of the process to
// 64 MiB, so that a 1 KB document runs the engine out of memory, and it needs load()'s instance
// fresh.

import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';

import { capMemoryGrowth, doublingDocument, importWrapper, readExample } from './lib.mjs';

const CEILING = 64 * 2 ** 20;
const OK = readExample('tiny-llama.json');

let api;
let uncap;

before(async () => {
  uncap = capMemoryGrowth(CEILING);
  api = await importWrapper();
});

after(() => uncap());

test('out of memory: an OUT_OF_MEMORY error, and load() gives a new instance that works', async () => {
  const doc = doublingDocument(20); // 2^20 module paths: about 170 MiB, over the 64 MiB ceiling
  const first = await api.load();
  await assert.rejects(api.check(doc), (e) => {
    assert.ok(e instanceof api.ShardplanError, `not a ShardplanError: ${e}`);
    assert.equal(e.codeName, 'OUT_OF_MEMORY');
    assert.equal(e.code, api.ErrorCode.OUT_OF_MEMORY);
    assert.match(e.message, /^out of memory: the document needs more memory than the shardplan engine can have/);
    assert.match(e.message, /an allocation failed when it had grown to \d+ MiB/);
    assert.match(e.message, /native shardplan CLI has no such limit/);
    assert.match(e.message, /call load\(\) for a new one/);
    assert.ok(e.cause instanceof WebAssembly.RuntimeError);
    assert.match(e.cause.message, /Aborted\(OOM\)/);
    return true;
  });

  // The instance that ran out refuses further calls (its engine aborted) ...
  assert.throws(() => first.check(OK), (e) => e.codeName === 'ENGINE_ABORTED' && /Aborted\(OOM\)/.test(e.message));
  // ... and the next call gets a new one, which works, also after another OOM.
  assert.equal((await api.check(OK)).ok, true);
  const second = await api.load();
  assert.notEqual(second, first);
  assert.throws(() => second.planDetails(doc), (e) => e.codeName === 'OUT_OF_MEMORY');
  assert.equal((await api.checkDetails(OK)).result.ok, true);
  assert.equal((await api.check(doublingDocument(14))).ok, true); // the same shape, under the ceiling

  // Without the ceiling, the document checks: it was the memory, not the document.
  uncap();
  assert.equal((await api.check(doc)).ok, true);
});
