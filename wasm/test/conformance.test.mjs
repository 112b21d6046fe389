// Every conformance case checked by the WebAssembly engine (through the wrapper) gives byte for
// byte the result JSON the native CLI prints for it (`shardplan check --format json CASE`).
// The CLI runs once with all cases as arguments: it prints one JSON line per document, in
// argument order.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { before, describe, test } from 'node:test';

import { CASES, cliPath, diagnosticKeys, importWrapper } from './lib.mjs';

const names = readdirSync(CASES).filter((name) => name.endsWith('.json')).sort();

describe('conformance: wasm result JSON == native CLI result JSON', () => {
  let sp;
  let native; // case name -> the CLI's JSON line

  before(async () => {
    sp = await (await importWrapper()).load();
    const cli = cliPath();
    const files = names.map((name) => join(CASES, name));
    const run = spawnSync(cli, ['check', '--format', 'json', ...files], {
      encoding: 'utf8',
      maxBuffer: 1 << 30,
    });
    if (run.error) throw run.error;
    // 0: no document has errors, 1: some have; 2 would be a usage or I/O error.
    assert.ok(run.status === 0 || run.status === 1, `${cli} exited ${run.status}: ${run.stderr}`);
    const lines = run.stdout.split('\n');
    assert.equal(lines.pop(), '', 'the CLI output ends with a newline');
    assert.equal(lines.length, names.length, 'one JSON line per case');
    native = new Map(names.map((name, i) => [name, lines[i]]));
  });

  test('there are cases', () => {
    assert.ok(names.length >= 100, `only ${names.length} cases in ${CASES}`);
  });

  for (const name of names) {
    test(name, () => {
      const bytes = readFileSync(join(CASES, name));
      const expected = native.get(name);
      const json = sp.checkJson(bytes);
      assert.equal(json, expected);
      // The threads option is accepted and changes nothing (the wasm engine is serial).
      assert.equal(sp.checkJson(bytes, { threads: 1 }), expected);
      assert.equal(sp.checkJson(bytes, { threads: 8 }), expected);
      // check() is JSON.parse of the same bytes; text input equals byte input.
      const parsed = JSON.parse(expected);
      assert.deepEqual(sp.check(bytes.toString('utf8')), parsed);
      // The diagnostics read field by field through sp_result_diagnostic (the 44-byte
      // sp_diagnostic layout), with their help and fix (sp_result_diagnostic_help and _fix), and
      // the groups (sp_result_group) equal those of the JSON, key order included; sp_result_ok
      // equals its "ok", and the counts add up as the JSON's.
      const read = sp.checkDiagnostics(bytes);
      assert.deepEqual(read, diagnosticKeys(parsed));
      assert.equal(JSON.stringify(read), JSON.stringify(diagnosticKeys(parsed)));
    });
  }
});
