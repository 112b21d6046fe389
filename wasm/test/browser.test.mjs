// End-to-end test of the plan checker page (wasm/web) in headless Chromium.
//
//   SHARDPLAN_SITE=<assembled site dir> [SHARDPLAN_TEST_OUTPUTS=<dir>] node --test wasm/test/browser.test.mjs
//
// SHARDPLAN_SITE is the directory `bazel build --config=wasm //wasm:site` makes (bazel-bin/wasm/site:
// index.html, app.mjs, worker.mjs, style.css, shardplan/, examples/). The site is served from a
// tiny static server on an ephemeral port of 127.0.0.1, and the page is driven with playwright-core
// (wasm/test/package.json; `npm ci` in wasm/test installs it) and the system Chromium
// (/usr/bin/chromium, or SHARDPLAN_CHROMIUM). No network access is needed. Screenshots of the
// failing and the passing example, of the plan tab (plan-tab.png) and of its training memory
// (training-memory.png) are written to SHARDPLAN_TEST_OUTPUTS (a new temporary directory when unset).
// The training test's reference numbers are the engine's own result for the same document, from
// the site's copy of the npm package (shardplan/index.mjs).
//
// Running out of memory is tested under /small-memory/: the same site, with the worker's
// WebAssembly memory capped at SMALL_MEMORY (capMemoryGrowth, prepended to worker.mjs as served),
// so that a 1 KB document needs more memory than the engine may have.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

import { REPO, applyFix, capMemoryGrowth, doublingDocument } from './lib.mjs';

const CHROMIUM = process.env.SHARDPLAN_CHROMIUM || '/usr/bin/chromium';
const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
  '--disable-component-update'];
const TIMEOUT = 60_000;
const SMALL_MEMORY = 64 * 2 ** 20;
const SMALL_MEMORY_PREFIX = '/small-memory/';

const MIME = {
  '.html': 'text/html; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.wasm': 'application/wasm',
  '.png': 'image/png',
  '.svg': 'image/svg+xml',
  '.txt': 'text/plain; charset=utf-8',
};

// Serves `root` on 127.0.0.1 (ephemeral port), and under SMALL_MEMORY_PREFIX the same files with
// the memory cap prepended to worker.mjs. Resolves to {server, url}.
function serve(root) {
  const base = path.resolve(root);
  const server = http.createServer((req, res) => {
    let rel;
    try {
      rel = decodeURIComponent(new URL(req.url, 'http://localhost').pathname);
    } catch {
      res.writeHead(400).end('bad request');
      return;
    }
    const smallMemory = rel.startsWith(SMALL_MEMORY_PREFIX);
    if (smallMemory) rel = rel.slice(SMALL_MEMORY_PREFIX.length - 1);
    if (rel.endsWith('/')) rel += 'index.html';
    const file = path.resolve(base, `.${rel}`);
    if (file !== base && !file.startsWith(base + path.sep)) {
      res.writeHead(403).end('forbidden');
      return;
    }
    fs.readFile(file, (err, data) => {
      if (err) {
        res.writeHead(404, { 'Content-Type': 'text/plain; charset=utf-8' }).end('not found');
        return;
      }
      if (smallMemory && rel === '/worker.mjs') {
        data = Buffer.concat([Buffer.from(`(${capMemoryGrowth})(${SMALL_MEMORY});\n`), data]);
      }
      res.writeHead(200, {
        'Content-Type': MIME[path.extname(file).toLowerCase()] ?? 'application/octet-stream',
        'Content-Length': data.length,
        'Cache-Control': 'no-store',
      });
      res.end(req.method === 'HEAD' ? undefined : data);
    });
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve({ server, url: `http://127.0.0.1:${server.address().port}/` }));
  });
}

async function loadPlaywright() {
  try {
    return await import('playwright-core');
  } catch (err) {
    throw new Error(
      'playwright-core is not installed: run `npm ci` in wasm/test (it reads package-lock.json; ' +
      `the npm registry is needed once). (${err.message})`);
  }
}

let server;
let browser;
let page;
let siteUrl;
let outputs;
const pageErrors = [];
let failOnPageError = () => {};

before(async () => {
  const site = process.env.SHARDPLAN_SITE;
  assert.ok(site, 'SHARDPLAN_SITE is not set: point it at the assembled site ' +
    '(bazel build --config=wasm //wasm:site -> bazel-bin/wasm/site)');
  for (const f of ['index.html', 'app.mjs', 'worker.mjs', 'style.css', 'shardplan/index.mjs',
    'shardplan/shardplan.mjs', 'examples/index.json', 'examples/tiny-llama.json', 'examples/tiny-llama-broken.json',
    'examples/tiny-plan.json']) {
    assert.ok(fs.existsSync(path.join(site, f)), `SHARDPLAN_SITE=${site} lacks ${f}: is it the assembled site?`);
  }
  const { chromium } = await loadPlaywright();
  assert.ok(fs.existsSync(CHROMIUM),
    `Chromium is not installed at ${CHROMIUM} (apt-get install chromium, or set SHARDPLAN_CHROMIUM)`);

  outputs = process.env.SHARDPLAN_TEST_OUTPUTS || fs.mkdtempSync(path.join(os.tmpdir(), 'shardplan-browser-'));
  fs.mkdirSync(outputs, { recursive: true });

  ({ server, url: siteUrl } = await serve(site));
  try {
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS, timeout: TIMEOUT });
  } catch (err) {
    throw new Error(`cannot launch Chromium at ${CHROMIUM}: ${err.message}`);
  }
  const context = await browser.newContext({ viewport: { width: 1440, height: 1300 }, deviceScaleFactor: 1 });
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: new URL(siteUrl).origin });
  page = await context.newPage();
  watch(page);
}, { timeout: TIMEOUT * 2 });

// Records what `p` throws or logs as an error and any off-site request in pageErrors (the last
// test asserts there is none).
function watch(p) {
  p.setDefaultTimeout(TIMEOUT);
  p.on('pageerror', (err) => {
    pageErrors.push(`pageerror: ${err.message}`);
    failOnPageError(err);
  });
  p.on('console', (msg) => { if (msg.type() === 'error') pageErrors.push(`console: ${msg.text()}`); });
  p.on('requestfailed', (req) => pageErrors.push(`request failed: ${req.url()} ${req.failure()?.errorText}`));
  p.on('request', (req) => {
    if (!req.url().startsWith(siteUrl) && !req.url().startsWith('data:')) pageErrors.push(`off-site request: ${req.url()}`);
  });
}

after(async () => {
  await browser?.close();
  await new Promise((resolve) => (server ? server.close(resolve) : resolve()));
  if (outputs) console.log(`# screenshots in ${outputs}`);
});

// Runs `action` (which starts a check) and waits until the page `p` shows that run's result.
async function checked(action, p = page) {
  const prev = (await p.getAttribute('[data-testid=status]', 'data-run')) ?? '';
  const pageError = new Promise((resolve, reject) => {
    failOnPageError = (err) => reject(new Error(`the page threw: ${err.stack ?? err.message}`));
  });
  try {
    await Promise.race([pageError, (async () => {
      await action();
      await p.waitForFunction((run) => {
        const s = document.querySelector('[data-testid=status]');
        return (s.dataset.run ?? '') !== run && !['checking', 'loading', 'ready'].includes(s.dataset.state);
      }, prev);
    })()]);
  } finally {
    failOnPageError = () => {};
  }
  return p.getAttribute('[data-testid=status]', 'data-state');
}

// Opens every group of diagnostics that is closed (each lists its diagnostics on a click).
const expandGroups = (p = page) => p.$$eval('[data-testid=group-toggle][aria-expanded=false]',
  (els) => els.forEach((e) => e.click()));

// The groups as the page shows them: [code, count, pointer, the message shown].
const groups = (p = page) => p.$$eval('[data-testid=diagnostic-group]', (els) => els.map((e) => [
  e.dataset.code, Number(e.dataset.count), e.dataset.pointer ?? null, e.querySelector('[data-testid=group-message]').textContent,
]));

// Every diagnostic, in the order of the groups (their own order when each is in a group of its own).
const diagnostics = async (p = page) => {
  await expandGroups(p);
  return p.$$eval('[data-testid=diagnostic]', (els) => els.map((e) => ({
    code: e.dataset.code,
    fqn: e.dataset.fqn ?? null,
    pointer: e.dataset.pointer ?? null,
    text: e.textContent,
  })));
};

const golden = (name) => fs.readFileSync(path.join(REPO, 'tests', 'golden', 'cases', name), 'utf8');

const node = (fqn) => page.locator(`[data-testid=tree-node][data-fqn="${fqn}"]`);

// The node's own swatch color and the legend's swatch color for a kind.
async function swatchColors(fqn, kind) {
  const own = await node(fqn).locator(':scope > .trow .swatch').evaluate((e) => getComputedStyle(e).backgroundColor);
  const legend = await page.locator(`[data-testid=legend] [data-kind="${kind}"] .swatch`)
    .evaluate((e) => getComputedStyle(e).backgroundColor);
  return { own, legend };
}

test('the page loads the engine in a worker and lists the bundled examples', { timeout: TIMEOUT }, async () => {
  await page.goto(siteUrl);
  await page.waitForSelector('[data-testid=status][data-state=ready]');
  const options = await page.$$eval('[data-testid=example-select] option', (os) => os.map((o) => o.value).filter(Boolean));
  assert.deepEqual(options, ['tiny-llama-broken.json', 'tiny-llama.json', 'tiny-plan.json']);
  const engine = await page.textContent('[data-testid=engine]');
  assert.match(engine, /ABI 1/);
});

test('the failing example: four diagnostics, and a click reveals lm_head', { timeout: TIMEOUT }, async () => {
  const state = await checked(() => page.selectOption('[data-testid=example-select]', 'tiny-llama-broken.json'));
  assert.equal(state, 'errors');
  // Four causes, one diagnostic each: four closed groups, whose diagnostics are listed on a click.
  assert.deepEqual((await groups()).map(([code, count]) => [code, count]),
    [['native-no-match', 1], ['ports-mismatch', 1], ['unknown-axis', 1], ['shared-conflict', 1]]);
  assert.equal(await page.textContent('[data-testid=group-total]'), 'in 4 groups');
  assert.equal(await page.locator('[data-testid=diagnostic]').count(), 0);
  const diags = await diagnostics();
  assert.deepEqual(diags.map((d) => d.code), ['native-no-match', 'ports-mismatch', 'unknown-axis', 'shared-conflict']);
  // Each shows its message, FQN and pointer.
  const shared = diags[3];
  assert.equal(shared.fqn, 'lm_head');
  assert.equal(shared.pointer, '/providers/sharding/lm_head/params/weight');
  assert.match(shared.text, /shared parameter 'lm_head.weight' has conflicting layouts/);
  assert.match(shared.text, /\/providers\/sharding\/lm_head\/params\/weight/);
  assert.match(diags[0].text, /\/providers\/native\/0\/match\/0/);
  assert.match(await page.textContent('[data-testid=summary] [data-key=errors]'), /4/);
  // native-no-match has a help; unknown-axis and shared-conflict a help and a fix.
  assert.deepEqual(await page.$$eval('[data-testid=diagnostic]', (els) => els.map((e) =>
    e.querySelector('[data-testid=diagnostic-help] .help-text')?.textContent ?? null)),
  ["did you mean 'layers.*.mlp'?", null, "did you mean 'dp'? (the mesh's axes are 'dp', 'tp')",
    "its first claimant 'embed_tokens.weight' places it dp=R, tp=S(0), this layout dp=R, tp=S(1); declare the same placements in both"]);
  assert.deepEqual(await page.$$eval('[data-testid=diagnostic][data-fixable=true]', (els) => els.map((e) => e.dataset.code)), ['unknown-axis', 'shared-conflict']);

  await page.click('[data-testid=diagnostic][data-code=shared-conflict]');
  const lmHead = node('lm_head');
  await lmHead.waitFor({ state: 'visible' });
  assert.equal(await lmHead.getAttribute('data-highlighted'), 'true');
  assert.equal(await page.locator('[data-testid=tree-node][data-highlighted=true]').count(), 1);
  assert.ok(await lmHead.locator(':scope > .trow').evaluate((e) => e.classList.contains('highlight')));
  // Scrolled into view inside the tree's scroll box and the window.
  const inView = await lmHead.locator(':scope > .trow').evaluate((e) => {
    const r = e.getBoundingClientRect();
    const box = document.getElementById('tree-scroll').getBoundingClientRect();
    return r.top >= box.top && r.bottom <= box.bottom && r.top >= 0 && r.bottom <= window.innerHeight;
  });
  assert.ok(inView, 'lm_head is scrolled into view');
  assert.match(await page.textContent('[data-testid=module-details]'), /lm_head/);

  // The check failed, yet the engine collected its owners: the two model providers and the two
  // families (the native pattern 'layer.*.mlp' matches nothing: no native owner).
  assert.equal(await lmHead.getAttribute('data-kind'), 'provider');
  assert.equal(await node('layers.0.self_attn').getAttribute('data-kind'), 'family');
  assert.equal(await node('layers.0.mlp').getAttribute('data-kind'), 'unowned');
  const byKind = Object.fromEntries(await page.$$eval('[data-testid=owner-count]',
    (els) => els.map((e) => [e.dataset.kind, e.dataset.value])));
  assert.deepEqual(byKind, { provider: '2', family: '2', native: '0' });
  assert.equal(await page.getAttribute('[data-testid=summary] [data-key=owners]', 'data-value'), '4');
  assert.match(await page.textContent('[data-testid=summary] [data-key=owners]'), /as collected/);
  // lm_head's collected layout places its weight S(1) on tp: the conflicting placement.
  const lmWeight = lmHead.locator(':scope > ul > .params [data-testid=param][data-param=weight]');
  assert.match((await lmWeight.textContent()).replace(/\s+/g, ' '), /tp\s*S\(1\)/);
  assert.match(await page.textContent('[data-testid=module-details] [data-testid=owner-source]'),
    /\/providers\/sharding\/lm_head.*as collected/);

  // ports-mismatch names a family module: its node is revealed too.
  await page.click('[data-testid=diagnostic][data-code=ports-mismatch]');
  assert.equal(await node('layers.0.self_attn').getAttribute('data-highlighted'), 'true');
  assert.equal(await lmHead.getAttribute('data-highlighted'), null);
  assert.match(await page.textContent('[data-testid=module-details] [data-testid=owner-source]'),
    /\/modules\/layers\.0\.self_attn\/family\/sharding/);
  await page.locator('[data-testid=module-details] [data-testid=owner-layout]').getByText('in_src').waitFor();
  await page.click('[data-testid=diagnostic][data-code=shared-conflict]');
  await page.waitForTimeout(1300); // let the reveal flash fade before the screenshot
  await page.screenshot({ path: path.join(outputs, 'failing-example.png'), fullPage: true });
});

test('the passing example: no diagnostics, owners colored by kind, the mesh', { timeout: TIMEOUT }, async () => {
  const state = await checked(() => page.selectOption('[data-testid=example-select]', 'tiny-llama.json'));
  assert.equal(state, 'ok');
  assert.equal(await page.locator('[data-testid=diagnostic]').count(), 0);
  await page.waitForSelector('[data-testid=no-diagnostics]');
  assert.match(await page.textContent('[data-testid=status]'), /Plan OK/);

  const attn = node('layers.0.self_attn');
  await attn.waitFor({ state: 'visible' });
  assert.equal(await attn.getAttribute('data-kind'), 'family');
  let c = await swatchColors('layers.0.self_attn', 'family');
  assert.equal(c.own, c.legend, 'layers.0.self_attn has the legend color of a family');
  assert.equal(await node('embed_tokens').getAttribute('data-kind'), 'provider');
  c = await swatchColors('embed_tokens', 'provider');
  assert.equal(c.own, c.legend, 'embed_tokens has the legend color of a model provider');
  assert.notEqual((await swatchColors('layers.0.self_attn', 'family')).own, c.own);

  // Owned parameters with their placements, and the tied alias: lm_head.weight is placed by
  // embed_tokens (S(0) on tp, not lm_head's own declaration).
  const q = attn.locator(':scope > ul > .params [data-testid=param][data-param="q_proj.weight"]');
  assert.match((await q.textContent()).replace(/\s+/g, ' '), /dp\s*R.*tp\s*S\(0\)/);
  const tied = node('lm_head').locator(':scope > ul > .params [data-testid=param][data-param=weight]');
  assert.match(await tied.textContent(), /tied to embed_tokens\.weight/);
  assert.match((await tied.textContent()).replace(/\s+/g, ' '), /tp\s*S\(0\)/);
  const embed = node('embed_tokens').locator(':scope > ul > .params [data-testid=param][data-param=weight]');
  assert.match(await embed.textContent(), /tied with lm_head\.weight/);
  // The native request's owners, and their parameters.
  const mlp = node('layers.1.mlp');
  assert.equal(await mlp.getAttribute('data-kind'), 'native');
  const down = mlp.locator(':scope > ul > .params [data-testid=param][data-param="down_proj.weight"]');
  assert.match((await down.textContent()).replace(/\s+/g, ' '), /tp\s*S\(1\)/);
  await mlp.locator(':scope > .trow [data-testid=tree-name]').click();
  assert.equal(await page.textContent('[data-testid=module-details] [data-testid=owner-source]'),
    'providers.native[0], pattern “layers.*.mlp” · /providers/native/0/sharding');

  // The mesh: axes in order with their sizes, and the device count.
  const axes = await page.$$eval('[data-testid=mesh] [data-testid=mesh-axis]',
    (els) => els.map((e) => [e.dataset.axis, e.dataset.size]));
  assert.deepEqual(axes, [['dp', '2'], ['tp', '4']]);
  assert.match(await page.textContent('[data-testid=mesh-devices]'), /8\s+devices/);

  // The summary (the CLI says: ok: 6 owners, 16 owned parameter names, 1 alias).
  const summary = Object.fromEntries(await page.$$eval('[data-testid=summary-item]',
    (els) => els.map((e) => [e.dataset.key, e.dataset.value])));
  assert.equal(summary.owners, '6');
  assert.equal(summary['owned-names'], '16');
  assert.equal(summary.aliases, '1');
  assert.equal(summary.errors, '0');
  const byKind = Object.fromEntries(await page.$$eval('[data-testid=owner-count]',
    (els) => els.map((e) => [e.dataset.kind, Number(e.dataset.value)])));
  assert.equal(byKind.provider + byKind.family + byKind.native, 6);
  assert.ok(byKind.family >= 2 && byKind.provider >= 2, JSON.stringify(byKind));

  // Selecting a module shows its details, with the owner's whole layout from the worker.
  await attn.locator(':scope > .trow [data-testid=tree-name]').click();
  const layout = page.locator('[data-testid=module-details] [data-testid=owner-layout][data-fqn="layers.0.self_attn"]');
  await layout.getByText('in_src').waitFor();
  assert.match(await layout.textContent(), /hidden_states/);
  assert.match(await layout.textContent(), /attn_output/);

  const engineMs = Number(await page.getAttribute('[data-testid=status]', 'data-engine-ms'));
  const e2eMs = Number(await page.getAttribute('[data-testid=status]', 'data-e2e-ms'));
  assert.ok(engineMs >= 0 && e2eMs >= engineMs, `engine ${engineMs} ms, end to end ${e2eMs} ms`);
  await page.screenshot({ path: path.join(outputs, 'passing-example.png'), fullPage: true });
});

test('a pasted malformed document is an invalid-document', { timeout: TIMEOUT }, async (t) => {
  const malformed = '{"schema": "shardplan.v1", "mesh": {"dp": 2,';
  // A real paste (clipboard + Ctrl+V): the page checks what was pasted by itself.
  const copied = await page.evaluate((text) => navigator.clipboard.writeText(text).then(() => true, () => false), malformed);
  let state;
  if (copied) {
    await page.fill('[data-testid=doc-input]', '');
    await page.focus('[data-testid=doc-input]');
    state = await checked(() => page.keyboard.press('Control+V'));
    assert.equal(await page.inputValue('[data-testid=doc-input]'), malformed);
  } else {
    t.diagnostic('no clipboard access: typing the document and pressing Check instead');
    await page.fill('[data-testid=doc-input]', malformed);
    state = await checked(() => page.click('[data-testid=check-button]'));
  }
  assert.equal(state, 'invalid');
  const diags = await diagnostics();
  assert.deepEqual(diags.map((d) => d.code), ['invalid-document']);
  assert.match(diags[0].text, /malformed JSON/);
  await page.waitForSelector('[data-testid=tree-empty]');
  await page.screenshot({ path: path.join(outputs, 'invalid-document.png'), fullPage: true });
});

test('a file from the file picker and from a drop is checked', { timeout: TIMEOUT }, async () => {
  const site = process.env.SHARDPLAN_SITE;
  const broken = fs.readFileSync(path.join(site, 'examples', 'tiny-llama-broken.json'));
  let state = await checked(() => page.setInputFiles('[data-testid=file-input]',
    { name: 'picked.json', mimeType: 'application/json', buffer: broken }));
  assert.equal(state, 'errors');
  assert.equal((await diagnostics()).length, 4);
  assert.match(await page.textContent('[data-testid=doc-source]'), /picked\.json/);

  const good = fs.readFileSync(path.join(site, 'examples', 'tiny-llama.json'), 'utf8');
  state = await checked(() => page.evaluate((text) => {
    const dt = new DataTransfer();
    dt.items.add(new File([text], 'dropped.json', { type: 'application/json' }));
    window.dispatchEvent(new DragEvent('dragenter', { dataTransfer: dt, cancelable: true }));
    window.dispatchEvent(new DragEvent('drop', { dataTransfer: dt, cancelable: true }));
  }, good));
  assert.equal(state, 'ok');
  assert.match(await page.textContent('[data-testid=doc-source]'), /dropped\.json/);
  assert.ok(await page.locator('[data-testid=drop-overlay]').isHidden());
});

test('an edited document is checked with Ctrl+Enter', { timeout: TIMEOUT }, async () => {
  const site = process.env.SHARDPLAN_SITE;
  const doc = JSON.parse(fs.readFileSync(path.join(site, 'examples', 'tiny-llama.json'), 'utf8'));
  doc.mesh.pp = 2; // a third axis: still a valid plan
  await page.fill('[data-testid=doc-input]', JSON.stringify(doc, null, 1));
  await page.focus('[data-testid=doc-input]');
  const state = await checked(() => page.keyboard.press('Control+Enter'));
  assert.equal(state, 'ok');
  const axes = await page.$$eval('[data-testid=mesh-axis]', (els) => els.map((e) => e.dataset.axis));
  assert.deepEqual(axes, ['dp', 'tp', 'pp']);
  assert.match(await page.textContent('[data-testid=mesh-devices]'), /16\s+devices/);
});

test('a typo: its group opens on a click, shows the help, and Fix applies the patch and checks again', { timeout: TIMEOUT }, async () => {
  const before = golden('unknown-axis.typo.fail.json');
  let state = await checked(() => page.setInputFiles('[data-testid=file-input]',
    { name: 'typo.json', mimeType: 'application/json', buffer: Buffer.from(before) }));
  assert.equal(state, 'errors');
  assert.equal(await page.inputValue('[data-testid=doc-input]'), before);
  const group = page.locator('[data-testid=diagnostic-group]');
  assert.deepEqual(await groups(), [['unknown-axis', 1, '/providers/sharding/proj/params/weight/pd',
    "module layouts cannot declare storage/unknown axis 'pd'"]]);
  assert.equal(await group.locator('[data-testid=group-fixable]').count(), 1);
  const toggle = group.locator('[data-testid=group-toggle]');
  assert.equal(await toggle.getAttribute('aria-expanded'), 'false');
  assert.equal(await page.locator('[data-testid=diagnostic]').count(), 0);

  // A click opens it: the diagnostic, its help and what its fix changes.
  await toggle.click();
  assert.equal(await toggle.getAttribute('aria-expanded'), 'true');
  const diagnostic = group.locator('[data-testid=diagnostic]');
  await diagnostic.waitFor({ state: 'visible' });
  assert.equal(await diagnostic.count(), 1);
  assert.equal(await diagnostic.locator('[data-testid=diagnostic-help] .help-text').textContent(),
    "did you mean 'dp'? (the mesh's axes are 'dp', 'tp')");
  const fix = [{ op: 'move', from: '/providers/sharding/proj/params/weight/pd', path: '/providers/sharding/proj/params/weight/dp' }];
  assert.equal((await diagnostic.locator('[data-testid=fix-preview]').textContent()).replace(/\s+/g, ' '),
    `move${fix[0].from} → ${fix[0].path}`);
  await page.screenshot({ path: path.join(outputs, 'fix-it.png'), fullPage: true });

  // Fix: the editor holds the patched document (2-space JSON), and it is checked again: ok.
  state = await checked(() => diagnostic.locator('[data-testid=fix-button]').click());
  assert.equal(state, 'ok');
  const after = await page.inputValue('[data-testid=doc-input]');
  assert.notEqual(after, before);
  assert.deepEqual(JSON.parse(after), applyFix(JSON.parse(before), fix));
  assert.deepEqual(JSON.parse(after), JSON.parse(golden('unknown-axis.typo.pass.json')));
  assert.equal(after, `${JSON.stringify(JSON.parse(after), null, 2)}\n`);
  assert.deepEqual(Object.keys(JSON.parse(after).providers.sharding.proj.params.weight), ['tp', 'dp']);
  await page.waitForSelector('[data-testid=no-diagnostics]');
  assert.equal(await page.locator('[data-testid=diagnostic-group]').count(), 0);
  assert.equal(await page.getAttribute('[data-testid=status]', 'data-doc'), 'typo.json (fixed)');
  assert.match(await page.textContent('[data-testid=doc-source]'), /unknown-axis fixed/);
});

test('an over-wide native pattern: groups of several diagnostics, and one Fix for the storm', { timeout: TIMEOUT }, async () => {
  const before = golden('overlapping-communication.glob.fail.json');
  await page.fill('[data-testid=doc-input]', before);
  await page.focus('[data-testid=doc-input]');
  assert.equal(await checked(() => page.keyboard.press('Control+Enter')), 'errors');
  const shown = await groups();
  assert.deepEqual(shown.map(([code, count]) => [code, count]), [
    ['overlapping-communication', 6], ['unknown-forward-input', 6], ['nested-duplicate', 2], ['nested-duplicate', 2],
    ['nested-duplicate', 2], ['unknown-parameter', 6], ['unknown-parameter', 6], ['unknown-parameter', 6], ['omitted-parameters', 6],
  ]);
  assert.equal(await page.textContent('[data-testid=diagnostic-count]'), '42');
  assert.equal(await page.textContent('[data-testid=group-total]'), 'in 9 groups');
  // The first group's row shows its first diagnostic's message.
  assert.equal(shown[0][3], "overlapping communication owners at 'layers.1.mlp.experts.0' and 'layers.1.mlp.experts.0.gate_proj'");

  // Opening the first lists its six diagnostics (and only its), each with the same help and fix.
  const first = page.locator('[data-testid=diagnostic-group]').first();
  await first.locator('[data-testid=group-toggle]').click();
  const listed = first.locator('[data-testid=diagnostic]');
  assert.equal(await listed.count(), 6);
  assert.equal(await page.locator('[data-testid=diagnostic]').count(), 6);
  const helps = await listed.locator('[data-testid=diagnostic-help] .help-text').allTextContents();
  assert.equal(helps.length, 6);
  assert.equal(new Set(helps).size, 1);
  assert.match(helps[0], /^'layers\.\*\.mlp\.experts\.\*' also matches the modules nested in those it matches/);
  assert.equal(await listed.locator('[data-testid=fix-button]').count(), 6);
  await page.screenshot({ path: path.join(outputs, 'groups.png'), fullPage: true });
  // A second click closes it.
  await first.locator('[data-testid=group-toggle]').click();
  assert.ok(await listed.first().isHidden());
  await first.locator('[data-testid=group-toggle]').click();

  // One fix (a replace whose value is an array) makes the whole storm go away.
  assert.equal(await checked(() => listed.nth(2).locator('[data-testid=fix-button]').click()), 'ok');
  const after = JSON.parse(await page.inputValue('[data-testid=doc-input]'));
  const fix = [{ op: 'replace', path: '/providers/native/0/match', value: ['layers.*.mlp.experts.[0-9]'] }];
  assert.deepEqual(after, applyFix(JSON.parse(before), fix));
  assert.deepEqual(after.providers.native[0].match, ['layers.*.mlp.experts.[0-9]']);
  assert.equal(await page.locator('[data-testid=diagnostic-group]').count(), 0);
});

test('a fix is refused when the editor changed since the check, and applies RFC 6901 pointers', { timeout: TIMEOUT }, async () => {
  const before = golden('unknown-module.typo.fail.json');
  await page.fill('[data-testid=doc-input]', before);
  await page.focus('[data-testid=doc-input]');
  assert.equal(await checked(() => page.keyboard.press('Control+Enter')), 'errors');
  await expandGroups();
  const run = await page.getAttribute('[data-testid=status]', 'data-run');
  const edited = `${before} `;
  await page.fill('[data-testid=doc-input]', edited);
  await page.click('[data-testid=diagnostic][data-code=unknown-module] [data-testid=fix-button]');
  const error = page.locator('[data-testid=diagnostic][data-code=unknown-module] [data-testid=fix-error]');
  await error.waitFor({ state: 'visible' });
  assert.match(await error.textContent(), /changed since this check/);
  assert.equal(await page.inputValue('[data-testid=doc-input]'), edited);
  assert.equal(await page.getAttribute('[data-testid=status]', 'data-run'), run, 'no new check');
  // Checked again, the same fix applies.
  assert.equal(await checked(() => page.click('[data-testid=check-button]')), 'errors');
  await expandGroups();
  assert.equal(await checked(() => page.click('[data-testid=diagnostic][data-code=unknown-module] [data-testid=fix-button]')), 'ok');
  assert.deepEqual(Object.keys(JSON.parse(await page.inputValue('[data-testid=doc-input]')).providers.sharding), ['proj']);

  // The page's patching: '~1' and '~0' in pointers, a rename keeps the member's place, members'
  // order (integer-like names too) and numbers' spelling are kept, and what does not apply is refused.
  const apply = (text, fix) => page.evaluate(([t, f]) => window.shardplanApp.applyFix(t, f), [text, fix]);
  assert.equal(await apply('{"a/b": {"m~n": 1, "z": 2.50}, "0": [1e400, 12345678901234567890]}',
    [{ op: 'move', from: '/a~1b/m~0n', path: '/a~1b/k~1~01' }]), // '~01' is '~1', not '/'
  '{\n  "a/b": {\n    "k/~1": 1,\n    "z": 2.50\n  },\n  "0": [\n    1e400,\n    12345678901234567890\n  ]\n}\n');
  assert.equal(await apply('{"x": {"y": [1, 2]}, "w": {}, "v": []}', [
    { op: 'replace', path: '/x/y/1', value: { s: ['t'] } },
    { op: 'move', from: '/x/y/0', path: '/w/moved' },
  ]), '{\n  "x": {\n    "y": [\n      {\n        "s": [\n          "t"\n        ]\n      }\n    ]\n  },\n  "w": {\n    "moved": 1\n  },\n  "v": []\n}\n');
  assert.equal(await apply('[1]', [{ op: 'replace', path: '', value: 'whole' }]), '"whole"\n');
  assert.equal(await apply('{"s": "a\\"b\\u00e9\\n\\\\", "t": 0}', [{ op: 'replace', path: '/t', value: '\u2028/' }]),
    '{\n  "s": "a\\"bé\\n\\\\",\n  "t": "\u2028/"\n}\n');
  for (const [fix, pattern] of [
    [[{ op: 'replace', path: '/nope', value: 1 }], /\/nope names nothing in the document/],
    [[{ op: 'move', from: '/a', path: '/a/b' }], /cannot move \/a into itself/],
    [[{ op: 'replace', path: '/a/5', value: 1 }], /names no element of an array of 1/],
    [[{ op: 'replace', path: 'a', value: 1 }], /not a JSON pointer/],
    [[{ op: 'add', path: '/b', value: 1 }], /unsupported fix operation "add"/],
  ]) {
    await assert.rejects(apply('{"a": [0]}', fix), pattern);
  }
  for (const text of ['{"a": ', '{"a": "b', '{"a": "\\x"}', '{"a": 01}', '{"a": 1} 2', '{"a": "\n"}']) {
    await assert.rejects(apply(text, []), /not valid JSON/, text);
  }
});

// The plan tab's entries as [fqn, provenance (space-separated)].
const planEntries = () => page.$$eval('[data-testid=plan-entry]', (els) => els.map((e) => [e.dataset.fqn, e.dataset.provenance]));
const heatmapBytes = () => page.$$eval('[data-testid=heatmap-cell]', (els) => els.map((e) => Number(e.dataset.bytes)));

test('tiny-plan.json is planned: the plan tab with provenance, the memory heatmap and the collectives', { timeout: TIMEOUT }, async () => {
  const state = await checked(() => page.selectOption('[data-testid=example-select]', 'tiny-plan.json'));
  assert.equal(state, 'ok');
  // It has templates: the worker planned it (as `shardplan plan`), so the unused rule is reported.
  assert.equal(await page.getAttribute('[data-testid=status]', 'data-mode'), 'plan');
  assert.match(await page.textContent('[data-testid=status]'), /Plan OK: 1 owner, 2 owned parameter names, 1 alias; planned 5 entries \(1 warning\)/);
  assert.deepEqual((await diagnostics()).map((d) => d.code), ['unused-template-rule']);
  assert.equal((await page.textContent('[data-testid=plan-count]')).trim(), '5');

  await page.click('[data-testid=plan-tab]');
  assert.equal(await page.getAttribute('[data-testid=plan-tab]', 'aria-selected'), 'true');
  assert.ok(await page.locator('[data-testid=plan-panel]').isVisible());
  assert.ok(await page.locator('[data-testid=tree]').isHidden());

  // The final plan: five entries in plan order, each with its provenance chips.
  assert.deepEqual(await planEntries(), [
    ['embed', 'owned:model'],
    ['layers.0.attn.q_proj', 'template:tp:layers.*.attn.q_proj'],
    ['layers.0.attn.kv_proj', 'template:tp:layers.*.attn.kv_proj'],
    ['layers.0.mlp.up_proj', 'template:tp:layers.*.mlp.up_proj'],
    ['layers.0.mlp.down_proj', 'template:tp:layers.*.mlp.down_proj'],
  ]);
  const chips = await page.$$eval('[data-testid=plan-entry]', (els) => els.map((e) =>
    [...e.querySelectorAll('[data-testid=provenance-chip]')].map((c) => c.dataset.kind)));
  assert.deepEqual(chips, [['owned'], ['template'], ['template'], ['template'], ['template']]);
  const owned = await page.locator('[data-testid=provenance-chip][data-kind=owned] .prov-kind').evaluate((e) => getComputedStyle(e).backgroundColor);
  const template = await page.locator('[data-testid=provenance-chip][data-kind=template] .prov-kind').first().evaluate((e) => getComputedStyle(e).backgroundColor);
  assert.notEqual(owned, template, 'owned and template chips have different colors');
  // Placements per mesh axis: embed on tp S(0), down_proj (rowwise) S(-1), nothing on dp.
  const placement = (fqn, axis) => page.locator(`[data-testid=plan-entry][data-fqn="${fqn}"] td.c-axis[data-axis=${axis}]`).first().textContent();
  assert.equal(await placement('embed', 'tp'), 'S(0)');
  assert.equal(await placement('layers.0.mlp.down_proj', 'tp'), 'S(-1)');
  assert.equal(await placement('layers.0.mlp.down_proj', 'dp'), '—');
  // The filter.
  await page.fill('[data-testid=plan-filter]', 'kv_proj');
  await page.waitForFunction(() => document.querySelectorAll('[data-testid=plan-entry]').length === 1);
  assert.deepEqual((await planEntries()).map(([fqn]) => fqn), ['layers.0.attn.kv_proj']);
  await page.fill('[data-testid=plan-filter]', '');
  await page.waitForFunction(() => document.querySelectorAll('[data-testid=plan-entry]').length === 5);

  // Memory: dp 2 x tp 4 laid out as a 2 x 4 grid, 9 MiB on every device.
  const heatmap = page.locator('[data-testid=heatmap]');
  assert.equal(await page.locator('[data-testid=heatmap-cell]').count(), 8);
  assert.equal(await heatmap.getAttribute('data-rows'), '2');
  assert.equal(await heatmap.getAttribute('data-cols'), '4');
  assert.deepEqual(await heatmapBytes(), Array(8).fill(9 * 2 ** 20));
  const coords = await page.$$eval('[data-testid=heatmap-cell]', (els) => els.map((e) => e.dataset.coords));
  assert.deepEqual(coords, ['dp=0, tp=0', 'dp=0, tp=1', 'dp=0, tp=2', 'dp=0, tp=3', 'dp=1, tp=0', 'dp=1, tp=1', 'dp=1, tp=2', 'dp=1, tp=3']);
  // Row-major: device 4 starts the second row.
  const top = (d) => page.locator(`[data-testid=heatmap-cell][data-device="${d}"]`).evaluate((e) => e.getBoundingClientRect().top);
  assert.equal(await top(3), await top(0));
  assert.ok(await top(4) > await top(3));
  assert.match(await page.textContent('[data-testid=heatmap-legend]'), /9\.00 MiB/);
  assert.match(await page.textContent('[data-testid=memory-stats]'), /36\.00 MiB/);
  // Hovering a cell shows its device, coordinates and bytes.
  await page.hover('[data-testid=heatmap-cell][data-device="6"]');
  const tip = page.locator('[data-testid=heatmap-tooltip]');
  await tip.waitFor({ state: 'visible' });
  const tipText = await tip.textContent();
  assert.match(tipText, /Device 6/);
  assert.match(tipText, /dp=1, tp=2/);
  assert.match(tipText, /9\.00 MiB · 9,437,184 bytes/);

  // Collectives: one all_reduce on tp, none on dp; its record below.
  const rows = await page.$$eval('[data-testid=collectives] [data-testid=collective]', (els) => els.map((e) => e.dataset.collective));
  assert.deepEqual(rows, ['all_reduce']);
  const count = (axis) => page.getAttribute(`[data-testid=collectives] [data-collective=all_reduce] td[data-axis=${axis}]`, 'data-count');
  assert.equal(await count('tp'), '1');
  assert.equal(await count('dp'), '0');
  const records = page.locator('[data-testid=comm-record]');
  assert.equal(await records.count(), 1);
  assert.equal(await records.getAttribute('data-fqn'), 'layers.0.mlp.down_proj');
  assert.deepEqual(await records.evaluate((e) => [...e.cells].map((c) => c.textContent.trim())),
    ['layers.0.mlp.down_proj', 'out:output', 'tp', 'P→R', 'all_reduce']);
  await page.fill('[data-testid=records-filter]', 'q_proj');
  await page.waitForFunction(() => document.querySelectorAll('[data-testid=comm-record]').length === 0);
  await page.fill('[data-testid=records-filter]', '');
  await page.waitForFunction(() => document.querySelectorAll('[data-testid=comm-record]').length === 1);

  await page.locator('[data-testid=records-filter]').blur();
  await page.hover('[data-testid=heatmap-cell][data-device="7"]'); // the screenshot shows its tooltip
  await page.screenshot({ path: path.join(outputs, 'plan-tab.png'), fullPage: true });
  await page.mouse.move(0, 0);

  // An entry's FQN leads to its module in the tree.
  await page.click('[data-testid=plan-entry][data-fqn="layers.0.mlp.down_proj"] .fqn-link');
  assert.equal(await page.getAttribute('[data-testid=check-tab]', 'aria-selected'), 'true');
  await node('layers.0.mlp.down_proj').waitFor({ state: 'visible' });
  assert.equal(await node('layers.0.mlp.down_proj').getAttribute('data-highlighted'), 'true');
});

test('the plan tab over three mesh axes, for a document with its own plan, and on request', { timeout: TIMEOUT }, async () => {
  const site = process.env.SHARDPLAN_SITE;
  const tinyPlan = fs.readFileSync(path.join(site, 'examples', 'tiny-plan.json'), 'utf8');
  // pp 2 x dp 2 x tp 8: one 2 x 8 grid per pp; four KV heads over tp 8 leave half the devices without one.
  const threeAxes = tinyPlan.replace('"mesh": {"dp": 2, "tp": 4}', '"mesh": {"pp": 2, "dp": 2, "tp": 8}');
  assert.notEqual(threeAxes, tinyPlan);
  await page.fill('[data-testid=doc-input]', threeAxes);
  await page.focus('[data-testid=doc-input]');
  assert.equal(await checked(() => page.keyboard.press('Control+Enter')), 'ok');
  assert.ok((await diagnostics()).some((d) => d.code === 'empty-shard'));
  await page.click('[data-testid=plan-tab]');
  assert.equal(await page.locator('[data-testid=heatmap-group]').count(), 2);
  assert.equal(await page.locator('[data-testid=heatmap-cell]').count(), 32);
  const bytes = await heatmapBytes();
  const [lo, hi] = [Math.min(...bytes), Math.max(...bytes)];
  assert.ok(lo < hi, 'uneven memory');
  const legend = page.locator('[data-testid=heatmap-legend]');
  assert.equal(Number(await legend.getAttribute('data-min')), lo);
  assert.equal(Number(await legend.getAttribute('data-max')), hi);
  // Device 8 + 4 = 12 (pp 0, dp 1, tp 4) holds no KV head; device 0 holds the most.
  assert.equal(await page.getAttribute('[data-testid=heatmap-cell][data-device="12"]', 'data-coords'), 'pp=0, dp=1, tp=4');
  assert.equal(Number(await page.getAttribute('[data-testid=heatmap-cell][data-device="12"]', 'data-bytes')), lo);
  assert.equal(Number(await page.getAttribute('[data-testid=heatmap-cell][data-device="0"]', 'data-bytes')), hi);
  const color = (d) => page.locator(`[data-testid=heatmap-cell][data-device="${d}"]`).evaluate((e) => getComputedStyle(e).backgroundColor);
  assert.notEqual(await color(0), await color(12));
  assert.equal(await color(0), await color(16 + 8 + 3));

  // tiny-llama.json gives its own final plan: checked, nothing to plan.
  assert.equal(await checked(() => page.selectOption('[data-testid=example-select]', 'tiny-llama.json')), 'ok');
  assert.equal(await page.getAttribute('[data-testid=status]', 'data-mode'), 'check');
  assert.match(await page.textContent('[data-testid=plan-empty]'), /gives its own final plan/);
  assert.equal((await page.textContent('[data-testid=plan-count]')).trim(), '–');

  // Without its plan it has neither templates nor a plan: checked, and planned on request.
  const doc = JSON.parse(fs.readFileSync(path.join(site, 'examples', 'tiny-llama.json'), 'utf8'));
  delete doc.plan;
  await page.fill('[data-testid=doc-input]', JSON.stringify(doc, null, 1));
  await page.focus('[data-testid=doc-input]');
  assert.equal(await checked(() => page.keyboard.press('Control+Enter')), 'ok');
  assert.equal(await page.getAttribute('[data-testid=status]', 'data-mode'), 'check');
  assert.equal(await checked(() => page.click('[data-testid=plan-button]')), 'ok');
  assert.equal(await page.getAttribute('[data-testid=status]', 'data-mode'), 'plan');
  assert.equal(await page.getAttribute('[data-testid=run-mode]', 'data-mode'), 'plan');
  const entries = await planEntries();
  assert.equal(entries.length, 6);
  assert.deepEqual([...new Set(entries.map(([, p]) => p))].sort(), ['owned:family', 'owned:model', 'owned:native']);
  assert.equal(await page.locator('[data-testid=heatmap-cell]').count(), 8);
  assert.equal(await page.getAttribute('[data-testid=collectives] [data-collective=all_reduce] td[data-axis=tp]', 'data-count'), '5');
  assert.ok((await diagnostics()).some((d) => d.code === 'unplanned-parameters'));
  await page.click('[data-testid=check-tab]');
});

// The engine's plan result for a document, from the site's own copy of the npm package.
async function planResult(text) {
  const wrapper = await import(pathToFileURL(path.join(process.env.SHARDPLAN_SITE, 'shardplan', 'index.mjs')).href);
  return (await wrapper.load()).plan(text);
}

const TRAINING_CATEGORIES = ['params', 'grads', 'master', 'optimizer', 'gathered', 'activations'];

// The stacked bars of the training breakdown: [{kind, device, total, segments: [[category, bytes]]}].
const trainingBars = () => page.$$eval('[data-testid=training-bar]', (els) => els.map((e) => ({
  kind: e.dataset.kind,
  device: Number(e.dataset.device),
  total: Number(e.dataset.total),
  segments: [...e.querySelectorAll('[data-testid=training-segment]')].map((s) => [s.dataset.category, Number(s.dataset.bytes)]),
})));

// Runs `text` from the editor (Ctrl+Enter) and shows the plan tab.
async function runInEditor(text) {
  await page.fill('[data-testid=doc-input]', text);
  await page.focus('[data-testid=doc-input]');
  const state = await checked(() => page.keyboard.press('Control+Enter'));
  await page.click('[data-testid=plan-tab]');
  return state;
}

test('training memory: the verdict, the training-total heatmap, the stacked bar and selecting a device', { timeout: TIMEOUT * 2 }, async () => {
  const text = golden('exceeds-device-memory.fail.json');
  const result = await planResult(text);
  const t = result.memory.training;
  const worst = t.worst;
  const exceeds = result.diagnostics.find((d) => d.code === 'exceeds-device-memory');
  assert.ok(exceeds, 'the golden case exceeds its device_memory');
  assert.equal(await runInEditor(text), 'errors');
  assert.equal(await page.getAttribute('[data-testid=status]', 'data-mode'), 'plan');

  // The verdict: the engine's message, shown in the memory panel, with the alternatives it names.
  const verdict = page.locator('[data-testid=memory-verdict]');
  assert.equal(await verdict.getAttribute('data-verdict'), 'exceeds');
  assert.equal(await verdict.getAttribute('data-code'), 'exceeds-device-memory');
  assert.equal(await page.textContent('[data-testid=memory-verdict-message]'), exceeds.message);
  assert.match(await page.textContent('[data-testid=memory-verdict-title]'),
    /^Does not fit: device 0 needs 404\.00 MiB for training, more than device_memory 384\.00 MiB$/);
  const alternatives = await page.$$eval('[data-testid=memory-alternative]', (els) => els.map((e) => [e.dataset.change, e.dataset.total]));
  assert.deepEqual(alternatives.map(([change]) => change), ['zero 1', "recompute 'full'"]);
  assert.ok(exceeds.message.endsWith(`; it would fit with: ${alternatives.map(([c, total]) => `${c} (${total})`).join(', ')}`), exceeds.message);
  assert.match(await page.textContent('[data-testid=memory-alternatives]'), /zero 1→0\.37 GiB/);

  // The heatmap shows the training totals by default; the toggle switches to the parameters and back.
  const metric = (m) => page.locator(`[data-testid=memory-metric][data-metric=${m}]`);
  const heatmap = page.locator('[data-testid=heatmap]');
  assert.equal(await metric('training').getAttribute('aria-pressed'), 'true');
  assert.equal(await metric('params').getAttribute('aria-pressed'), 'false');
  assert.equal(await heatmap.getAttribute('data-metric'), 'training');
  assert.deepEqual(await heatmapBytes(), t.per_device_total_bytes);
  assert.equal(await page.getAttribute('[data-testid=memory-stats] .mstat[data-key=worst]', 'data-value'), String(t.max_total_bytes));
  assert.equal(await page.getAttribute('[data-testid=memory-stats] .mstat[data-key=budget]', 'data-value'), String(384 * 2 ** 20));
  await metric('params').click();
  assert.equal(await heatmap.getAttribute('data-metric'), 'params');
  assert.equal(await metric('params').getAttribute('aria-pressed'), 'true');
  assert.deepEqual(await heatmapBytes(), result.memory.per_device_bytes);
  assert.equal(await page.getAttribute('[data-testid=memory-stats]', 'data-metric'), 'params');
  assert.match(await page.textContent('[data-testid=memory-stats]'), /36\.00 MiB/); // unsharded
  await metric('training').click();
  assert.deepEqual(await heatmapBytes(), t.per_device_total_bytes);

  // The worst device is selected: its six categories as one stacked bar, each the result's bytes,
  // with the device_memory line (384MiB in the document) left of the bar's end (it exceeds).
  const breakdown = page.locator('[data-testid=training-breakdown]');
  assert.equal(await breakdown.getAttribute('data-device'), String(worst.device));
  assert.equal(await page.getAttribute(`[data-testid=heatmap-cell][data-device="${worst.device}"]`, 'aria-pressed'), 'true');
  let bars = await trainingBars();
  assert.equal(bars.length, 1);
  assert.deepEqual(bars[0], {
    kind: 'breakdown', device: worst.device, total: worst.total,
    segments: TRAINING_CATEGORIES.map((c) => [c, worst[c]]),
  });
  assert.equal(TRAINING_CATEGORIES.reduce((a, c) => a + worst[c], 0), worst.total);
  assert.deepEqual(await page.$$eval('[data-testid=training-category]', (els) => els.map((e) => [e.dataset.category, Number(e.dataset.bytes)])),
    TRAINING_CATEGORIES.map((c) => [c, worst[c]]));
  assert.equal(Number(await page.getAttribute('[data-testid=training-total]', 'data-bytes')), worst.total);
  assert.match(await page.textContent('[data-testid=training-total]'), /404\.00 MiB\s*423,624,704/);
  assert.equal(Number(await page.getAttribute('[data-testid=training-bar] [data-testid=training-budget]', 'data-bytes')), 384 * 2 ** 20);
  const box = (sel) => page.locator(sel).first().evaluate((e) => { const r = e.getBoundingClientRect(); return { left: r.left, right: r.right, width: r.width }; });
  const budgetLine = await box('[data-testid=training-bar] [data-testid=training-budget]');
  const activations = await box('[data-testid=training-segment][data-category=activations]');
  const params = await box('[data-testid=training-segment][data-category=params]');
  assert.ok(budgetLine.left < activations.right && budgetLine.left > params.right, JSON.stringify({ budgetLine, activations }));
  // Segment widths follow the bytes: activations are 348127232 / 9437184 times the parameters.
  assert.ok(Math.abs(activations.width / params.width - worst.activations / worst.params) < 1.5);

  // Selecting another device: its total alone (the result has only totals per device), above the
  // worst device's breakdown; the worst device again from the button.
  await page.click('[data-testid=heatmap-cell][data-device="5"]');
  assert.equal(await breakdown.getAttribute('data-device'), '5');
  assert.equal(await page.getAttribute('[data-testid=heatmap-cell][data-device="5"]', 'aria-pressed'), 'true');
  assert.equal(await page.getAttribute(`[data-testid=heatmap-cell][data-device="${worst.device}"]`, 'aria-pressed'), 'false');
  bars = await trainingBars();
  assert.deepEqual(bars.map((b) => [b.kind, b.device, b.total]), [['total', 5, t.per_device_total_bytes[5]], ['breakdown', worst.device, worst.total]]);
  assert.deepEqual(bars[0].segments, [['total', t.per_device_total_bytes[5]]]);
  assert.match(await page.textContent('[data-testid=training-breakdown]'), /Device 5 \(dp=1, tp=1\)total only/);
  assert.match(await page.textContent('[data-testid=training-breakdown]'), /Device 0 \(dp=0, tp=0\), the worst device/);
  // The selection survives the toggle; arrow keys move it.
  await metric('params').click();
  assert.equal(await breakdown.getAttribute('data-device'), '5');
  assert.equal(await page.getAttribute('[data-testid=heatmap-cell][data-device="5"]', 'aria-pressed'), 'true');
  await metric('training').click();
  await page.focus('[data-testid=heatmap-cell][data-device="5"]');
  await page.keyboard.press('ArrowRight');
  assert.equal(await breakdown.getAttribute('data-device'), '6');
  await page.click('[data-testid=select-worst]');
  assert.equal(await breakdown.getAttribute('data-device'), String(worst.device));
  assert.equal((await trainingBars()).length, 1);
  await page.click('[data-testid=heatmap-cell][data-device="5"]');
  await page.locator('[data-testid=memory-panel]').screenshot({ path: path.join(outputs, 'training-memory.png') });

  // Uneven totals: pp 2 x dp 2 x tp 8 under zero 3, four KV heads over tp 8; a device without a
  // KV head needs less. Its total bar is shorter than the worst device's.
  const doc = JSON.parse(text);
  doc.mesh = { pp: 2, dp: 2, tp: 8 };
  Object.assign(doc.training, { zero: 3, device_memory: '200MiB' });
  const unevenText = JSON.stringify(doc, null, 2);
  const uneven = (await planResult(unevenText)).memory.training;
  assert.equal(await runInEditor(unevenText), 'errors');
  assert.deepEqual(await heatmapBytes(), uneven.per_device_total_bytes);
  assert.equal(Number(await heatmap.locator('[data-testid=heatmap-legend]').getAttribute('data-min')), uneven.min_total_bytes);
  assert.equal(Number(await heatmap.locator('[data-testid=heatmap-legend]').getAttribute('data-max')), uneven.max_total_bytes);
  assert.ok(uneven.per_device_total_bytes[12] < uneven.worst.total);
  await page.click('[data-testid=heatmap-cell][data-device="12"]');
  bars = await trainingBars();
  assert.deepEqual(bars.map((b) => [b.kind, b.device, b.total]), [['total', 12, uneven.per_device_total_bytes[12]], ['breakdown', 0, uneven.worst.total]]);
  assert.match(await page.textContent('[data-testid=training-breakdown]'), /Device 12 \(pp=0, dp=1, tp=4\)total only/);
  const totalBar = await box('[data-testid=training-bar][data-kind=total] [data-testid=training-segment]');
  const worstBar = await page.$$eval('[data-testid=training-bar][data-kind=breakdown] [data-testid=training-segment]',
    (els) => els.reduce((a, e) => a + e.getBoundingClientRect().width, 0));
  assert.ok(totalBar.width < worstBar, `${totalBar.width} < ${worstBar}`);
  assert.deepEqual(await page.$$eval('[data-testid=memory-alternative]', (els) => els.map((e) => e.dataset.change)), ["recompute 'full'"]);

  // Near the limit: a warning, with its alternative.
  assert.equal(await runInEditor(golden('near-device-memory.fail.json')), 'ok');
  assert.equal(await verdict.getAttribute('data-verdict'), 'near');
  assert.match(await page.textContent('[data-testid=memory-verdict-message]'), /more than headroom 0\.8 x device_memory .* it would fit with: recompute 'full' \(0\.34 GiB\)$/);
  // No device_memory: the totals, with nothing to compare them with.
  assert.equal(await runInEditor(golden('training-pattern-no-match.fail.json')), 'ok');
  assert.equal(await verdict.getAttribute('data-verdict'), 'no-budget');
  assert.equal(await page.locator('[data-testid=training-budget]').count(), 0);
  assert.equal(await page.locator('[data-testid=training-segment][data-category=gathered]').getAttribute('data-bytes'), '24576000');
  // More than 65,536 devices: no per-device totals, as the parameter heatmap says; the worst device's breakdown.
  doc.mesh = { dp: 131072, tp: 4 };
  assert.equal(await runInEditor(JSON.stringify(doc)), 'errors');
  assert.equal(await page.locator('[data-testid=heatmap-cell]').count(), 0);
  assert.match(await page.textContent('[data-testid=heatmap-none]'),
    /^Per-device training totals come for meshes of at most 65,536 devices; this one has 524,288\./);
  assert.deepEqual((await trainingBars()).map((b) => [b.kind, b.device]), [['breakdown', 0]]);
  await metric('params').click();
  assert.match(await page.textContent('[data-testid=heatmap-none]'), /^Per-device figures come for meshes of at most 65,536 devices/);

  // A checked document with its own plan and a training section: no plan to show, the memory is.
  const own = JSON.parse(fs.readFileSync(path.join(process.env.SHARDPLAN_SITE, 'examples', 'tiny-llama.json'), 'utf8'));
  own.training = { zero: 1, device_memory: '1MiB' };
  assert.equal(await runInEditor(JSON.stringify(own, null, 1)), 'ok');
  assert.equal(await page.getAttribute('[data-testid=status]', 'data-mode'), 'check');
  assert.match(await page.textContent('[data-testid=plan-empty]'), /gives its own final plan.*memory per device is below/);
  assert.ok(await page.locator('#plan-section').isHidden());
  assert.ok(await page.locator('[data-testid=memory-panel]').isVisible());
  assert.equal(await verdict.getAttribute('data-verdict'), 'exceeds');
  assert.match(await page.textContent('[data-testid=memory-verdict]'), /WARNING/i);
  assert.equal(await page.locator('[data-testid=memory-no-alternative]').count(), 1);
  assert.equal(await page.locator('[data-testid=heatmap-cell]').count(), 8);
  await page.click('[data-testid=check-tab]');
});

test('a document that needs more memory than the page gets: a clear message, and a new worker checks the next one', { timeout: TIMEOUT }, async () => {
  const context = await browser.newContext({ viewport: { width: 1440, height: 900 }, deviceScaleFactor: 1 });
  try {
    const p = await context.newPage();
    watch(p);
    const workers = [];
    p.on('worker', (w) => workers.push(new Promise((resolve) => w.on('close', resolve))));
    await p.goto(new URL(SMALL_MEMORY_PREFIX, siteUrl).href);
    await p.waitForSelector('[data-testid=status][data-state=ready]');

    // 1 KB, 2^20 module paths: about 170 MiB of engine memory, over the 64 MiB it may have here.
    const doc = doublingDocument(20);
    const status = '[data-testid=status]';
    assert.equal(await checked(() => p.evaluate((text) => { window.shardplanApp.checkText(text, 'doubling.json'); }, doc), p), 'failed');
    assert.equal(await p.getAttribute(status, 'data-failure'), 'out-of-memory');
    assert.equal(await p.textContent('#status-text'),
      'This document needs more memory than the browser gives this page (4 GiB at most).');
    assert.match(await p.textContent('#status-detail'), /command-line tool, which has no such limit: shardplan check FILE/);
    assert.equal(await p.isEnabled('[data-testid=check-button]'), true);
    await p.screenshot({ path: path.join(outputs, 'out-of-memory.png') });
    // The worker whose engine ran out was terminated, and a new one started.
    await workers[0];
    assert.equal(workers.length, 2);

    // The new worker checks the next document, without a reload.
    assert.equal(await checked(() => p.selectOption('[data-testid=example-select]', 'tiny-llama-broken.json'), p), 'errors');
    assert.deepEqual((await diagnostics(p)).map((d) => d.code), ['native-no-match', 'ports-mismatch', 'unknown-axis', 'shared-conflict']);
    assert.equal(await p.getAttribute(status, 'data-failure'), null);

    // A run superseded while the engine runs out is dropped, and the run after it still gets checked.
    const ok = fs.readFileSync(path.join(process.env.SHARDPLAN_SITE, 'examples', 'tiny-llama.json'), 'utf8');
    assert.equal(await checked(() => p.evaluate(([big, small]) => {
      window.shardplanApp.checkText(big, 'doubling.json');
      window.shardplanApp.checkText(small, 'tiny-llama.json');
    }, [doc, ok]), p), 'ok');
    assert.equal(await p.getAttribute(status, 'data-doc'), 'tiny-llama.json');
    assert.equal(workers.length, 3);
  } finally {
    await context.close();
  }
});

test('the page made no off-site request and logged no error', () => {
  assert.deepEqual(pageErrors, []);
});
