// Benchmark of the plan checker page (wasm/web) in headless Chromium: a script, not a test.
//
//   SHARDPLAN_SITE=<assembled site dir> node wasm/test/browser_bench.mjs [--runs N] [--json OUT] DOCUMENT.json
//
// Serves the site on 127.0.0.1 (ephemeral port), loads the page, then checks DOCUMENT N times
// (default 3) through the page's file input, as a user opening the file would, and prints per run
// and as the median:
//   engine      the engine's check alone, measured inside the worker (Shardplan.checkDetails: parse,
//               check, the result JSON, the owners and the owned parameters);
//   worker      everything the worker does (read the file, check, JSON.parse the document for the
//               tree, build the tree data);
//   end to end  from posting the file to the worker until the result is rendered and painted;
//   longest main-thread task while the run was in flight (PerformanceObserver 'longtask').
// A big document to try (about 11 MB, DeepSeek-V3-sized: 61 layers, 256 experts):
//   bazel build -c opt //bench:gen_model && bazel-bin/bench/gen_model --kind deepseek --out /tmp/deepseek.json
//
// --json OUT also writes every run's figures to OUT (tools/perf/measure_wasm.py reads them).
// `node --test wasm/test/` also runs this file (it lives in a test directory); there it only says
// it is skipped.

import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';

if (process.env.NODE_TEST_CONTEXT) {
  console.log('# browser_bench.mjs is a benchmark script, not a test: skipped');
  process.exit(0);
}

const CHROMIUM = process.env.SHARDPLAN_CHROMIUM || '/usr/bin/chromium';
const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
  '--disable-component-update'];
const MIME = {
  '.html': 'text/html; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.wasm': 'application/wasm',
};

function usage(message) {
  if (message) console.error(`browser_bench: ${message}`);
  console.error('usage: SHARDPLAN_SITE=DIR node wasm/test/browser_bench.mjs [--runs N] [--json OUT] DOCUMENT.json');
  process.exit(2);
}

function parseArgs(argv) {
  const opts = { runs: 3, doc: null, json: null };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--runs') {
      opts.runs = Number(argv[++i]);
      if (!Number.isInteger(opts.runs) || opts.runs < 1) usage('--runs needs a positive integer');
    } else if (a === '--json') {
      opts.json = argv[++i];
      if (!opts.json) usage('--json needs a file name');
    } else if (a === '-h' || a === '--help') usage();
    else if (a.startsWith('-')) usage(`unknown option ${a}`);
    else if (opts.doc) usage('one document at a time');
    else opts.doc = a;
  }
  if (!opts.doc) usage('no document given');
  return opts;
}

function serve(root) {
  const base = path.resolve(root);
  const server = http.createServer((req, res) => {
    let rel;
    try {
      rel = decodeURIComponent(new URL(req.url, 'http://localhost').pathname);
    } catch {
      res.writeHead(400).end();
      return;
    }
    if (rel.endsWith('/')) rel += 'index.html';
    const file = path.resolve(base, `.${rel}`);
    if (file !== base && !file.startsWith(base + path.sep)) {
      res.writeHead(403).end();
      return;
    }
    fs.readFile(file, (err, data) => {
      if (err) {
        res.writeHead(404).end();
        return;
      }
      res.writeHead(200, {
        'Content-Type': MIME[path.extname(file).toLowerCase()] ?? 'application/octet-stream',
        'Content-Length': data.length,
        'Cache-Control': 'no-store',
      });
      res.end(data);
    });
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve({ server, url: `http://127.0.0.1:${server.address().port}/` }));
  });
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
const ms = (x) => `${x.toFixed(1).padStart(8)} ms`;

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  const site = process.env.SHARDPLAN_SITE;
  if (!site || !fs.existsSync(path.join(site, 'index.html'))) {
    usage('SHARDPLAN_SITE must name the assembled site (bazel-bin/wasm/site)');
  }
  if (!fs.existsSync(opts.doc)) usage(`no such document: ${opts.doc}`);
  let chromium;
  try {
    ({ chromium } = await import('playwright-core'));
  } catch (err) {
    console.error(`browser_bench: playwright-core is not installed: run \`npm ci\` in wasm/test (${err.message})`);
    process.exit(2);
  }
  if (!fs.existsSync(CHROMIUM)) {
    console.error(`browser_bench: Chromium is not installed at ${CHROMIUM} (set SHARDPLAN_CHROMIUM)`);
    process.exit(2);
  }

  const { server, url } = await serve(site);
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
  try {
    const page = await browser.newPage({ viewport: { width: 1440, height: 1000 } });
    page.setDefaultTimeout(300_000);
    const errors = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(url);
    await page.waitForSelector('[data-testid=status][data-state=ready]');
    const size = fs.statSync(opts.doc).size;
    console.log(`document: ${opts.doc} (${(size / (1 << 20)).toFixed(1)} MB)`);
    console.log(`browser:  Chromium ${browser.version()}, headless; ${opts.runs} run(s) through the file input`);

    const runs = [];
    for (let i = 0; i < opts.runs; i++) {
      const prev = (await page.getAttribute('[data-testid=status]', 'data-run')) ?? '';
      await page.evaluate(() => {
        window.__benchLongest = 0;
        window.__benchObserver?.disconnect();
        try {
          window.__benchObserver = new PerformanceObserver((list) => {
            for (const e of list.getEntries()) window.__benchLongest = Math.max(window.__benchLongest, e.duration);
          });
          window.__benchObserver.observe({ type: 'longtask' });
        } catch { window.__benchLongest = Number.NaN; }
      });
      await page.setInputFiles('[data-testid=file-input]', opts.doc);
      await page.waitForFunction((p) => {
        const s = document.querySelector('[data-testid=status]');
        return (s.dataset.run ?? '') !== p && !['checking', 'loading', 'ready'].includes(s.dataset.state);
      }, prev);
      const run = await page.evaluate(() => ({ ...window.shardplanApp.lastRun, longestTaskMs: window.__benchLongest }));
      const state = await page.getAttribute('[data-testid=status]', 'data-state');
      if (!run || state === 'failed') throw new Error(`run ${i + 1} failed: ${await page.textContent('[data-testid=status]')}`);
      runs.push(run);
      console.log(`run ${i + 1}: engine ${ms(run.engineMs)}   worker ${ms(run.workerMs)}   end to end ${ms(run.endToEndMs)}` +
        `   longest main-thread task ${ms(run.longestTaskMs)}   (${run.ok ? 'ok' : `${run.diagnostics} diagnostics`})`);
    }
    const nodes = await page.locator('[data-testid=tree-node]').count();
    console.log(`median of ${runs.length}: engine ${ms(median(runs.map((r) => r.engineMs)))}   ` +
      `worker ${ms(median(runs.map((r) => r.workerMs)))}   end to end ${ms(median(runs.map((r) => r.endToEndMs)))}`);
    console.log(`  (worker's JSON.parse for the tree: ${ms(median(runs.map((r) => r.parseMs)))}, tree data: ` +
      `${ms(median(runs.map((r) => r.treeMs)))}; result received on the page after ` +
      `${ms(median(runs.map((r) => r.receivedMs)))}, view model ${ms(median(runs.map((r) => r.buildMs)))}, ` +
      `DOM ${ms(median(runs.map((r) => r.renderMs)))}; ${nodes} tree rows rendered)`);
    if (errors.length) console.log(`page errors: ${errors.join('; ')}`);
    if (opts.json) {
      fs.writeFileSync(opts.json, JSON.stringify({ chromium: browser.version(), document_bytes: size, runs }, null, 1));
    }
  } finally {
    await browser.close();
    server.close();
  }
}

main().catch((err) => {
  console.error(`browser_bench: ${err.stack ?? err}`);
  process.exit(1);
});
