// The shardplan plan checker page. Plain ES module, no framework, no network
// beyond this site's own files: the document is checked by the WebAssembly
// engine in a module worker (./worker.mjs) and never leaves the tab.

const CHILD_PAGE = 200;          // children rendered per node before "show more"
const DIAG_PAGE = 200;           // diagnostics rendered before "show more"
const AUTO_EXPAND_PATHS = 400;   // expand the whole tree when it has at most this many paths
const AUTO_EXPAND_ROWS = 80;     // else open the top levels while they show at most this many modules
const TEXTAREA_MAX_BYTES = 1 << 20; // bigger files are checked without copying them into the editor

const KIND_LABEL = {
  provider: 'Model provider',
  family: 'Family',
  native: 'Native request',
  unowned: 'Unowned',
};

const $ = (id) => document.getElementById(id);

// Small DOM builder: h('div', {class: 'x', 'data-a': 1}, child, 'text', ...).
function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  if (attrs) {
    for (const [k, v] of Object.entries(attrs)) {
      if (v === undefined || v === null || v === false) continue;
      if (k === 'class') el.className = v;
      else if (k === 'text') el.textContent = v;
      else if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
      else el.setAttribute(k, v === true ? '' : String(v));
    }
  }
  for (const c of children.flat(Infinity)) {
    if (c === null || c === undefined || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

const fmtInt = (n) => (Number.isFinite(n) ? Math.round(n).toLocaleString('en-US') : '–');
function fmtMs(ms) {
  if (!Number.isFinite(ms)) return '–';
  if (ms < 10) return `${ms.toFixed(2)} ms`;
  if (ms < 1000) return `${ms.toFixed(1)} ms`;
  return `${(ms / 1000).toFixed(2)} s`;
}
function fmtBytes(n) {
  if (n < 1024) return `${n} B`;
  if (n < 1 << 20) return `${(n / 1024).toFixed(1)} KB`;
  return `${(n / (1 << 20)).toFixed(1)} MB`;
}
const plural = (n, one, many = `${one}s`) => `${fmtInt(n)} ${n === 1 ? one : many}`;
const joinFqn = (base, name) => (base === '' ? name : `${base}.${name}`);
const hasOwn = (o, k) => o != null && Object.prototype.hasOwnProperty.call(o, k);
const nextFrame = () => new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)));

// RFC 6901 pointer -> tokens.
function pointerTokens(pointer) {
  if (typeof pointer !== 'string' || pointer === '' || pointer[0] !== '/') return [];
  return pointer.slice(1).split('/').map((t) => t.replace(/~1/g, '/').replace(/~0/g, '~'));
}

// ---- The tree data (flat arrays, see buildTree in worker.mjs) ------------------

const childCount = (t, mi) => t.childStart[mi + 1] - t.childStart[mi];
const childNameAt = (t, mi, k) => t.names[t.childName[t.childStart[mi] + k]];
const childModAt = (t, mi, k) => t.childMod[t.childStart[mi] + k];
const moduleType = (t, mi) => t.types[t.typeOf[mi]];

function ownParamNames(t, mi) {
  const out = [];
  for (let j = t.paramStart[mi]; j < t.paramStart[mi + 1]; j++) out.push(t.names[t.paramName[j]]);
  return out;
}

function moduleIndexById(v, id) {
  if (!v.idIndex) {
    v.idIndex = new Map();
    v.tree.ids.forEach((x, i) => v.idIndex.set(x, i));
  }
  return v.idIndex.get(id) ?? -1;
}

// The FQN where module mi is first reached in pre-order, or null when the
// root does not reach it.
function firstPathOf(v, mi) {
  const t = v.tree;
  const cache = v.firstPathCache;
  if (cache.has(mi)) return cache.get(mi);
  const chain = [];
  let cur = mi;
  while (!cache.has(cur) && t.firstParent[cur] >= 0) { chain.push(cur); cur = t.firstParent[cur]; }
  let base;
  if (cache.has(cur)) base = cache.get(cur);
  else base = t.firstParent[cur] === -1 ? '' : null;
  if (!cache.has(cur)) cache.set(cur, base);
  for (let i = chain.length - 1; i >= 0; i--) {
    const m = chain[i];
    base = base === null ? null : joinFqn(base, t.names[t.firstName[m]]);
    cache.set(m, base);
  }
  return cache.get(mi);
}

// ---- State -----------------------------------------------------------------

const state = {
  worker: null,
  ready: false,
  nextId: 1,
  pending: null,   // {id, t0, source, resolve, input, message}: message is what was posted to the worker
  examples: new Map(), // name -> Promise<text>
  view: null,      // the current checked document's view model
  lastRun: null,
  viewName: 'check', // the tab shown: 'check' (diagnostics and tree) or 'plan'
  planDirty: false,  // the plan tab shows an older run: render it when shown
};

// ---- Status ----------------------------------------------------------------

function setStatus(stateName, text, detail = '') {
  const el = $('status');
  el.dataset.state = stateName;
  delete el.dataset.failure; // replaceWorker's kind of failure
  $('status-text').textContent = text;
  $('status-detail').textContent = detail;
}

// ---- Worker ----------------------------------------------------------------

// The worker's error codes after which its engine is gone (see worker.mjs).
const ENGINE_LOST = new Set(['OUT_OF_MEMORY', 'ENGINE_ABORTED']);

function startWorker() {
  let worker;
  try {
    worker = new Worker('./worker.mjs', { type: 'module' });
  } catch (err) {
    setStatus('failed', 'This browser cannot start the checker (module workers are required).', String(err));
    return;
  }
  // A replaced worker's messages still queued here are dropped (see replaceWorker).
  worker.onmessage = (event) => { if (state.worker === worker) onWorkerMessage(event.data); };
  worker.onerror = (event) => {
    event.preventDefault?.();
    if (state.worker !== worker) return;
    if (state.ready) { // it failed after loading: an uncaught error in the worker
      replaceWorker(state.pending ? state.pending.id : null, null, event.message || 'worker error');
      return;
    }
    setStatus('failed', 'The checker failed to start.', event.message || 'worker error');
    $('engine').textContent = 'Engine unavailable';
    if (state.pending) finishPending(null);
  };
  state.worker = worker;
}

// The worker's engine is gone (it ran out of memory or aborted, and an aborted WebAssembly
// instance cannot be used again), or the worker failed: terminate it, which also gives its
// memory back, and start a new one, so that the next document is checked without a reload.
// Run `failedId` reports the failure (`code` is the worker's error code, or null); a newer
// run, which was queued in the old worker, is posted again to the new one.
function replaceWorker(failedId, code, detail) {
  state.worker.terminate();
  state.ready = false;
  startWorker();
  const pending = state.pending;
  if (pending && pending.id !== failedId) {
    state.worker.postMessage(pending.message);
    return;
  }
  if (code === 'OUT_OF_MEMORY') {
    setStatus('failed', 'This document needs more memory than the browser gives this page (4 GiB at most).',
      'Check it with the command-line tool, which has no such limit: shardplan check FILE. ' +
      'The checker was restarted for the next document.');
  } else {
    setStatus('failed', 'The checker stopped while checking this document and was restarted.', detail);
  }
  $('status').dataset.failure = code === 'OUT_OF_MEMORY' ? 'out-of-memory' : 'engine-lost';
  finishPending(null);
}

function onWorkerMessage(msg) {
  const receivedAt = performance.now();
  if (msg.type === 'ready') {
    state.ready = true;
    const v = msg.version ? `engine ${msg.version}` : 'engine';
    $('engine').textContent = `${v} · ABI ${msg.abiVersion} · WebAssembly`;
    $('engine').dataset.version = msg.version;
    $('footer-version').textContent = `Engine loaded in ${fmtMs(msg.loadMs)}.`;
    if (!state.pending && $('status').dataset.state === 'loading') {
      setStatus('ready', 'Ready. Choose an example, paste a document, open a file or drop one on the page.');
    }
    return;
  }
  if (msg.type === 'load-error') {
    $('engine').textContent = 'Engine failed to load';
    setStatus('failed', 'The WebAssembly engine failed to load.', msg.message);
    return;
  }
  if (msg.type === 'owner') { onOwner(msg); return; }
  if (msg.type === 'export') { onExport(msg); return; }
  if (msg.type === 'error' && ENGINE_LOST.has(msg.code)) { replaceWorker(msg.id, msg.code, msg.message); return; }
  const pending = state.pending;
  if (!pending || msg.id !== pending.id) return; // a stale run: a newer one replaced it
  if (msg.type === 'error') {
    setStatus('failed', 'The check failed.', msg.message);
    finishPending(null);
    return;
  }
  if (msg.type === 'result') {
    onResult(msg, pending, receivedAt).catch((err) => {
      if (state.pending !== pending) return;
      setStatus('failed', 'The result could not be shown.', String(err && err.message ? err.message : err));
      finishPending(null);
      console.error(err);
    });
  }
}

function finishPending(run) {
  const p = state.pending;
  state.pending = null;
  $('check-button').disabled = false;
  document.body.classList.remove('busy');
  if (p) p.resolve(run);
}

// Posts a document (text or File) to the worker; resolves with the run's
// timings once the result is rendered.
// mode 'plan' plans the document even without templates or overrides (the
// worker plans documents that have them by itself).
function runCheck(input, source, mode = undefined) {
  if (!state.worker) return Promise.resolve(null);
  if (state.pending) state.pending.resolve(null); // superseded
  const id = state.nextId++;
  const message = typeof input === 'string' ? { type: 'check', id, text: input, mode } : { type: 'check', id, file: input, mode };
  return new Promise((resolve) => {
    state.pending = { id, source, resolve, t0: 0, input, message };
    setStatus('checking', `${mode === 'plan' ? 'Planning' : 'Checking'} ${source.label}…`, state.ready ? '' : 'waiting for the engine to load');
    $('export-result').hidden = true;
    $('status').dataset.run = String(id);
    $('check-button').disabled = true;
    document.body.classList.add('busy');
    state.pending.t0 = performance.now();
    state.worker.postMessage(message);
  });
}

// ---- Result -> view model ------------------------------------------------------

function buildView(msg, source, input) {
  const { result, tree } = msg;
  const diagnostics = Array.isArray(result.diagnostics) ? result.diagnostics : [];
  const owned = result.ok && result.owned ? result.owned : null;
  // Who owns what, as the engine decided it (ownershipView in worker.mjs).
  const ownership = msg.ownership ?? { owners: [], rows: {}, aliasesOf: {}, collected: false };
  const v = {
    runId: msg.id,
    source,
    input,                      // what was checked (text or File): the plan tab may plan it
    mode: msg.mode === 'plan' ? 'plan' : 'check',
    plan: msg.plan ?? null,     // the worker's plan summary (planSummary in worker.mjs)
    // The result's memory (memorySummary in worker.mjs): the plan's, or a checked document's own
    // plan's with a training section; memoryUi is what the memory panel shows of it.
    memory: msg.memory ?? (msg.plan ? msg.plan.memory : null),
    memoryUi: null,
    result,
    owned,
    ownership,
    ownerAt: new Map(ownership.owners.map((o, i) => [o.fqn, i])), // owner FQN -> index in ownership.owners
    tree,
    treeError: msg.treeError,
    diagnostics,
    groups: diagnosticGroups(result, diagnostics),
    bytes: msg.bytes,
    timing: msg.timing,
    idIndex: null,              // module id -> index, built when first needed
    nameIndex: new Map(),       // child/parameter name -> index in tree.names
    firstPathCache: new Map(),
    diagByFqn: new Map(),       // fqn -> [diagnostic index]
    errorAncestors: new Set(),
  };
  if (tree) tree.names.forEach((name, k) => v.nameIndex.set(name, k));
  diagnostics.forEach((d, i) => {
    const fqn = diagnosticTarget(v, d);
    d.__target = fqn;
    if (fqn === null) return;
    if (!v.diagByFqn.has(fqn)) v.diagByFqn.set(fqn, []);
    v.diagByFqn.get(fqn).push(i);
    let p = fqn;
    while (p !== '') {
      const dot = p.lastIndexOf('.');
      p = dot < 0 ? '' : p.slice(0, dot);
      v.errorAncestors.add(p);
    }
  });
  return v;
}

// The result's groups (diagnostics with one cause: the same code at the same
// pointer), each {code, severity, pointer, count, listed}; made here the same
// way when the result has none (an engine before release 0.7).
function diagnosticGroups(result, diagnostics) {
  const valid = (g) => g && typeof g.code === 'string' && Array.isArray(g.listed) &&
    g.listed.every((i) => Number.isInteger(i) && i >= 0 && i < diagnostics.length);
  if (Array.isArray(result.groups) && result.groups.every(valid)) return result.groups.filter((g) => g.listed.length);
  const groups = [];
  const byCause = new Map();
  diagnostics.forEach((d, i) => {
    const key = JSON.stringify([d.code, d.pointer ?? null]);
    let g = byCause.get(key);
    if (!g) {
      g = { code: d.code, severity: d.severity, pointer: d.pointer ?? null, count: 0, listed: [] };
      byCause.set(key, g);
      groups.push(g);
    }
    g.count++;
    g.listed.push(i);
  });
  return groups;
}

// The module a diagnostic is about: its fqn, or else the module its JSON
// pointer names (/providers/sharding/<fqn>/..., /plan/modules/<fqn>/...,
// /modules/<module id>/... -> the module's first path), or else the module
// holding its parameter.
function diagnosticTarget(v, d) {
  if (typeof d.fqn === 'string') return d.fqn;
  const t = pointerTokens(d.pointer);
  if (t.length >= 3 && t[0] === 'providers' && t[1] === 'sharding') return t[2];
  if (t.length >= 3 && t[0] === 'plan' && t[1] === 'modules') return t[2];
  if (t.length >= 2 && t[0] === 'overrides') return t[1];
  if (t.length >= 2 && t[0] === 'modules' && v.tree) {
    const i = moduleIndexById(v, t[1]);
    if (i >= 0 && firstPathOf(v, i) !== null) return firstPathOf(v, i);
  }
  // Else the module that holds the parameter the finding is about, if any.
  if (typeof d.parameter === 'string' && v.tree) {
    const dot = d.parameter.lastIndexOf('.');
    const holder = dot < 0 ? '' : d.parameter.slice(0, dot);
    if (moduleAt(v, holder) >= 0) return holder;
  }
  return null;
}

// The page's name for each owner kind the engine reports.
const KIND_OF_OWNER = { model: 'provider', family: 'family', native: 'native' };

// The engine's owner at a path (an entry of ownership.owners), or null.
function ownerAt(v, fqn) {
  const i = v.ownerAt.get(fqn);
  return i === undefined ? null : v.ownership.owners[i];
}

// The owner kind at a path, as the engine collected its owners (for a failed
// check too): 'provider', 'family', 'native' or 'unowned'.
function kindOf(v, fqn) {
  const owner = ownerAt(v, fqn);
  return owner ? KIND_OF_OWNER[owner.kind] ?? 'unowned' : 'unowned';
}

// Index of child `name` among module mi's children, or -1.
function childIndex(v, mi, name) {
  const t = v.tree;
  const k = v.nameIndex.get(name);
  if (k === undefined) return -1;
  for (let j = t.childStart[mi]; j < t.childStart[mi + 1]; j++) if (t.childName[j] === k) return j - t.childStart[mi];
  return -1;
}

// Module index at a path, or -1.
function moduleAt(v, fqn) {
  if (!v.tree || v.tree.root < 0) return -1;
  let mi = v.tree.root;
  if (fqn === '') return mi;
  for (const seg of fqn.split('.')) {
    const k = childIndex(v, mi, seg);
    if (k < 0) return -1;
    mi = childModAt(v.tree, mi, k);
  }
  return mi;
}

// Parameter rows shown under a module path (ownershipView in worker.mjs): the
// owned parameters its owner placed and the tied aliases that live in it
// (after a failed check, its owner's collected params), with their ties.
function paramRows(v, fqn) {
  return (v.ownership.rows[fqn] ?? []).map((r) => ({
    ...r, aliases: r.canonical === null ? v.ownership.aliasesOf[r.full] ?? [] : [],
  }));
}

// ---- Rendering: summary, mesh, diagnostics -------------------------------------

function renderSummary(v) {
  const el = $('summary');
  el.replaceChildren();
  const t = v.tree;
  const errors = v.diagnostics.filter((d) => d.severity === 'error').length;
  const warnings = v.diagnostics.filter((d) => d.severity === 'warning').length;

  // The engine's owners: final when the check passed, as collected when it
  // failed after collection, none for an invalid document.
  const invalid = v.diagnostics.some((d) => d.code === 'invalid-document');
  const counts = { provider: null, family: null, native: null };
  let ownerTotal = null;
  if (!invalid) {
    counts.provider = 0; counts.family = 0; counts.native = 0;
    for (const o of v.ownership.owners) counts[KIND_OF_OWNER[o.kind]]++;
    ownerTotal = v.ownership.owners.length;
  }

  const item = (key, label, value, ...sub) => h('div', { class: `sum-item sum-${key}`, 'data-testid': 'summary-item', 'data-key': key, 'data-value': value },
    h('dt', { text: label }), h('dd', null, h('span', { class: 'sum-value', text: value }),
      sub.filter(Boolean).map((x) => h('span', { class: 'sum-sub' }, x))));

  el.append(
    item('modules', 'Modules', t ? fmtInt(t.n) : '–',
      t ? `${plural(t.pathCount, 'path')}${t.reachable < t.n ? ` · ${fmtInt(t.n - t.reachable)} unreachable` : ''}` : null),
    item('parameters', 'Parameters', t ? fmtInt(t.parameterCount) : '–', 'identities'),
    item('owners', 'Owners', ownerTotal !== null ? fmtInt(ownerTotal) : '–',
      h('span', { class: 'kind-counts' },
        ['provider', 'family', 'native'].map((k) => h('span', {
          class: `kind-count kind-${k}`, 'data-testid': 'owner-count', 'data-kind': k,
          'data-value': counts[k] ?? '',
          title: counts[k] === null ? `${KIND_LABEL[k]}: known when the document is valid` : KIND_LABEL[k],
        }, h('span', { class: 'swatch' }), h('strong', { text: counts[k] === null ? '–' : fmtInt(counts[k]) }),
        ` ${KIND_LABEL[k].toLowerCase()}`))),
      ownerTotal !== null && v.ownership.collected ? h('span', { class: 'sum-note', text: 'as collected: the check failed after collection' }) : null),
    item('owned-names', 'Owned parameter names', v.owned ? fmtInt(v.owned.owned_names_count) : '–',
      v.owned ? null : 'when the check passes'),
    item('aliases', 'Tied aliases', v.owned ? fmtInt(v.owned.aliases_count) : '–'),
    item('errors', 'Errors', fmtInt(errors), warnings ? plural(warnings, 'warning') : null),
    item('time', v.mode === 'plan' ? 'Plan time' : 'Check time', fmtMs(v.timing.engineMs),
      `engine · ${fmtMs(v.endToEndMs)} end to end`),
  );
  el.querySelector('.sum-errors').classList.toggle('bad', errors > 0);
  el.querySelector('.sum-time .sum-sub').dataset.testid = 'end-to-end';
}

function renderMesh(v) {
  const el = $('mesh');
  el.replaceChildren();
  const mesh = v.tree ? v.tree.mesh : [];
  if (!mesh.length) {
    el.append(h('div', { class: 'empty', text: v.tree ? 'The document declares no mesh axis.' : 'No mesh: the document could not be read.' }));
    el.dataset.devices = '';
    return;
  }
  const total = mesh.reduce((a, [, n]) => a * n, 1);
  el.dataset.devices = String(total);
  el.dataset.axes = mesh.map(([a]) => a).join(',');
  const axes = h('ol', { class: 'mesh-axes' },
    mesh.map(([axis, size], i) => [
      i ? h('li', { class: 'times', 'aria-hidden': 'true', text: '×' }) : null,
      h('li', { class: 'mesh-axis', 'data-testid': 'mesh-axis', 'data-axis': axis, 'data-size': size },
        h('span', { class: 'axis-name', text: axis }), h('span', { class: 'axis-size', text: fmtInt(size) })),
    ]));
  el.append(axes, h('p', { class: 'mesh-total', 'data-testid': 'mesh-devices' },
    h('strong', { text: fmtInt(total) }), ` ${total === 1 ? 'device' : 'devices'} · ${plural(mesh.length, 'axis', 'axes')} in order`));
}

function renderDiagnostics(v) {
  const el = $('diagnostics');
  el.replaceChildren();
  $('reveal-note').hidden = true;
  const n = v.diagnostics.length;
  const pill = $('diag-count');
  pill.textContent = String(n);
  pill.classList.toggle('bad', v.diagnostics.some((d) => d.severity === 'error'));
  pill.classList.toggle('good', n === 0);
  const groupsNote = $('diag-groups');
  groupsNote.textContent = n ? `in ${plural(v.groups.length, 'group')}` : '';
  groupsNote.dataset.value = n ? String(v.groups.length) : '';
  if (!n) {
    el.append(h('div', { class: 'all-clear', 'data-testid': 'no-diagnostics' },
      h('span', { class: 'check-icon', 'aria-hidden': 'true' }),
      h('div', null, h('strong', { text: 'No diagnostics.' }), ' Every owner’s layout is consistent and every parameter is covered.')));
    return;
  }
  // One row per group (one cause: a code at a pointer); a click lists its diagnostics.
  const list = h('ol', { class: 'group-list', 'data-testid': 'diagnostic-groups' });
  const ng = v.groups.length;
  let shown = 0;
  const more = h('button', { type: 'button', class: 'small diag-more', 'data-testid': 'group-more' });
  const showMore = () => {
    const upTo = Math.min(ng, shown + DIAG_PAGE);
    const frag = document.createDocumentFragment();
    for (let k = shown; k < upTo; k++) frag.append(renderGroup(v, v.groups[k], k));
    list.append(frag);
    shown = upTo;
    more.textContent = `Show ${fmtInt(Math.min(DIAG_PAGE, ng - shown))} more of ${fmtInt(ng - shown)} remaining groups`;
    more.hidden = shown >= ng;
  };
  more.addEventListener('click', showMore);
  showMore();
  el.append(list, more);
}

// A group: its head (severity, code, count, the first diagnostic's message) is
// a button that shows or hides its diagnostics, rendered when first shown.
function renderGroup(v, g, k) {
  const first = v.diagnostics[g.listed[0]];
  const fixable = g.listed.some((i) => Array.isArray(v.diagnostics[i].fix) && v.diagnostics[i].fix.length);
  const bodyId = `diag-group-${k}`;
  const head = h('button', {
    type: 'button', class: 'group-head', 'data-testid': 'group-toggle', 'aria-expanded': 'false', 'aria-controls': bodyId,
    title: g.count === 1 ? 'Show this diagnostic' : `Show these ${fmtInt(g.count)} diagnostics`,
  },
  h('span', { class: 'chevron', 'aria-hidden': 'true' }),
  h('span', { class: 'sev', text: g.severity }),
  h('code', { class: 'diag-code', 'data-testid': 'group-code', text: g.code }),
  h('span', { class: 'group-count', 'data-testid': 'group-count', title: `${plural(g.count, 'diagnostic')} with this cause`, text: `×${fmtInt(g.count)}` }),
  fixable ? h('span', { class: 'fix-badge', 'data-testid': 'group-fixable', text: 'fix' }) : null,
  h('span', { class: 'group-msg', 'data-testid': 'group-message', text: first.message }));
  const body = h('ol', { class: 'diag-list', id: bodyId, 'data-testid': 'diagnostic-list', hidden: true });
  const li = h('li', {
    class: `diag-group sev-${g.severity}`,
    'data-testid': 'diagnostic-group',
    'data-code': g.code,
    'data-count': g.count,
    'data-pointer': g.pointer ?? undefined,
    'data-expanded': 'false',
  }, head, body);
  // Thousands of diagnostics in a group stay cheap: render them a page at a time.
  let shown = 0;
  const more = h('button', { type: 'button', class: 'small diag-more', 'data-testid': 'diagnostic-more' });
  const moreRow = h('li', { class: 'diag-more-row', hidden: true }, more);
  body.append(moreRow);
  const showMore = () => {
    const upTo = Math.min(g.listed.length, shown + DIAG_PAGE);
    const frag = document.createDocumentFragment();
    for (let j = shown; j < upTo; j++) frag.append(renderDiagnostic(v, v.diagnostics[g.listed[j]], g.listed[j]));
    body.insertBefore(frag, moreRow);
    shown = upTo;
    const left = g.listed.length - shown;
    more.textContent = `Show ${fmtInt(Math.min(DIAG_PAGE, left))} more of ${fmtInt(left)} remaining`;
    moreRow.hidden = left <= 0;
  };
  more.addEventListener('click', showMore);
  head.addEventListener('click', () => {
    const open = head.getAttribute('aria-expanded') !== 'true';
    if (open && !shown) showMore();
    head.setAttribute('aria-expanded', String(open));
    li.dataset.expanded = String(open);
    body.hidden = !open;
  });
  return li;
}

// One diagnostic: code, message, its help, FQN, parameter and pointer, and a
// Fix button when it has a fix. A click reveals its module in the tree.
function renderDiagnostic(v, d, i) {
  const target = d.__target;
  const field = (label, value, cls) => (value === null || value === undefined ? null
    : h('div', { class: `diag-field ${cls}` }, h('span', { class: 'diag-label', text: label }),
      h('code', { text: value === '' ? (label === 'FQN' ? '"" (root)' : '"" (whole document)') : value })));
  const fix = Array.isArray(d.fix) && d.fix.length ? d.fix : null;
  const li = h('li', {
    class: `diag sev-${d.severity}${target === null ? '' : ' clickable'}`,
    'data-testid': 'diagnostic',
    'data-index': i,
    'data-code': d.code,
    'data-fqn': d.fqn ?? undefined,
    'data-pointer': d.pointer ?? undefined,
    'data-target': target ?? undefined,
    'data-fixable': fix ? 'true' : undefined,
    tabindex: 0,
    role: 'button',
    'aria-label': `${d.severity} ${d.code}: ${d.message}`,
    title: target === null ? 'Not about a single module' : `Reveal ${target === '' ? 'the root module' : target} in the tree`,
  },
  h('div', { class: 'diag-head' },
    h('span', { class: 'sev', text: d.severity }),
    h('code', { class: 'diag-code', 'data-testid': 'diagnostic-code', text: d.code }),
    target !== null ? h('span', { class: 'diag-go', 'aria-hidden': 'true', text: 'Show in tree →' }) : null),
  h('p', { class: 'diag-msg', 'data-testid': 'diagnostic-message', text: d.message }),
  typeof d.help === 'string' ? h('p', { class: 'diag-help', 'data-testid': 'diagnostic-help' },
    h('span', { class: 'help-label', text: 'help' }), h('span', { class: 'help-text', text: d.help })) : null,
  h('div', { class: 'diag-fields' },
    field('FQN', d.fqn, 'f-fqn'),
    field('parameter', d.parameter, 'f-param'),
    field('pointer', d.pointer, 'f-pointer')),
  fix ? renderFix(v, d, fix) : null);
  const activate = () => onDiagnosticClick(v, li, d);
  li.addEventListener('click', activate);
  li.addEventListener('keydown', (e) => {
    if (e.target !== li) return; // the Fix button's keys are its own
    if (e.key === 'Enter' || e.key === ' ') { e.preventDefault(); activate(); }
  });
  return li;
}

// A fix's operations in words, and its Fix button.
function renderFix(v, d, fix) {
  const clip = (text) => (text.length > 160 ? `${text.slice(0, 159)}…` : text);
  const describeOp = (op) => {
    if (op.op === 'move') return [h('span', { class: 'fix-op', text: 'move' }), h('code', { text: op.from }), ' → ', h('code', { text: op.path })];
    if (op.op === 'replace') {
      return [h('span', { class: 'fix-op', text: 'replace' }), h('code', { text: op.path }), ' with ',
        h('code', { text: clip(JSON.stringify(op.value) ?? 'undefined') })];
    }
    return [h('span', { class: 'fix-op', text: String(op.op) }), h('code', { text: String(op.path) })];
  };
  const button = h('button', {
    type: 'button', class: 'small fix-button', 'data-testid': 'fix-button',
    title: 'Apply this change to the document in the editor, then check it again',
  }, 'Fix');
  const error = h('p', { class: 'fix-error', 'data-testid': 'fix-error', role: 'alert', hidden: true });
  button.addEventListener('click', (e) => {
    e.stopPropagation(); // not a reveal
    error.hidden = true;
    applyDiagnosticFix(v, d).catch((err) => {
      error.textContent = `The fix was not applied: ${err && err.message ? err.message : err}`;
      error.hidden = false;
    });
  });
  button.addEventListener('keydown', (e) => e.stopPropagation());
  return h('div', { class: 'diag-fix', 'data-testid': 'diagnostic-fix' },
    h('ol', { class: 'fix-ops', 'data-testid': 'fix-preview', 'aria-label': 'What the fix changes' },
      fix.map((op) => h('li', null, describeOp(op)))),
    button, error);
}

function onDiagnosticClick(v, li, d) {
  for (const other of $('diagnostics').querySelectorAll('.diag.active')) other.classList.remove('active');
  li.classList.add('active');
  const note = $('reveal-note');
  if (d.__target === null) {
    note.hidden = false;
    note.textContent = `${d.code} is not about a single module${d.pointer ? `: see ${d.pointer} in the document` : ''}.`;
    return;
  }
  const ok = revealFqn(v, d.__target);
  note.hidden = ok;
  if (!ok) note.textContent = `Module “${d.__target}” is not in the module tree (no such path).`;
}

// ---- Rendering: the module tree --------------------------------------------

// A rendered path: {fqn, mi, depth, li, row, group, expanded, rendered, children: Map name -> node}
const nodes = new Map();
let highlighted = null;
let selected = null;

function renderTree(v) {
  nodes.clear();
  highlighted = null;
  selected = null;
  const el = $('tree');
  el.replaceChildren();
  $('tree-scroll').scrollTop = 0;
  renderDetails(v, null);
  if (!v.tree || v.tree.root < 0) {
    el.append(h('div', { class: 'empty', 'data-testid': 'tree-empty',
      text: v.tree ? 'The document has no root module to show.'
        : `No module tree: the document is not readable JSON${v.treeError ? ` (${v.treeError})` : ''}.` }));
    return;
  }
  const rootUl = h('ul', { class: 'tree-root', role: 'tree', 'aria-label': 'Module tree' });
  el.append(rootUl);
  const root = makeNode(v, '', v.tree.root, 0, '(root)');
  rootUl.append(root.li);
  if (v.tree.cycle) el.prepend(h('div', { class: 'warn-note', text: 'The modules’ children form a cycle (the engine refuses such a document); expanding follows it without end.' }));
  if (v.tree.pathCount <= AUTO_EXPAND_PATHS && !v.tree.cycle) {
    const stack = [root];
    while (stack.length) {
      const n = stack.pop();
      if (isExpandable(n)) { expand(v, n); for (const c of n.children.values()) stack.push(c); }
    }
  } else {
    // A big model: open the top levels, breadth first, while they stay short.
    expand(v, root);
    let rows = 1 + root.rendered;
    const queue = [...root.children.values()];
    while (queue.length && !v.tree.cycle) {
      const n = queue.shift();
      const count = childCount(v.tree, n.mi);
      if (!count || rows + Math.min(count, CHILD_PAGE) > AUTO_EXPAND_ROWS) continue;
      expand(v, n);
      rows += n.rendered;
      queue.push(...n.children.values());
    }
  }
}

function isExpandable(node) {
  return node.hasChildren || node.paramCount > 0;
}

function makeNode(v, fqn, mi, depth, label) {
  const t = v.tree;
  const kind = kindOf(v, fqn);
  const rows = paramRows(v, fqn);
  const diag = v.diagByFqn.get(fqn);
  const first = firstPathOf(v, mi);
  const shared = first !== null && first !== fqn;
  const node = {
    fqn, mi, depth, kind, rows,
    hasChildren: childCount(t, mi) > 0,
    paramCount: rows.length,
    expanded: false,
    rendered: 0,
    children: new Map(),
    group: null,
  };
  const toggle = h('button', {
    type: 'button', class: 'twisty', tabindex: -1,
    'aria-label': 'Expand', 'data-testid': 'tree-toggle',
  });
  const badges = [];
  if (kind !== 'unowned') badges.push(h('span', { class: `kind-badge kind-${kind}`, text: KIND_LABEL[kind] }));
  if (rows.length) badges.push(h('span', { class: 'pcount', title: 'owned or tied parameters shown under this module', text: `${rows.length} param${rows.length === 1 ? '' : 's'}` }));
  if (shared) badges.push(h('span', { class: 'shared-badge', title: `Shared module: first reached at ${first || '(root)'}`, text: 'shared' }));
  if (diag) badges.push(h('span', { class: 'err-badge', 'data-testid': 'tree-error', title: `${plural(diag.length, 'diagnostic')} about this module`, text: String(diag.length) }));
  else if (v.errorAncestors.has(fqn)) badges.push(h('span', { class: 'err-dot', title: 'Diagnostics below' }));
  const name = h('button', { type: 'button', class: 'tname', 'data-testid': 'tree-name', text: label ?? fqn.slice(fqn.lastIndexOf('.') + 1) });
  const row = h('div', { class: 'trow' },
    toggle,
    h('span', { class: 'swatch', 'aria-hidden': 'true' }),
    name,
    moduleType(t, mi) ? h('span', { class: 'ttype', text: moduleType(t, mi) }) : null,
    h('span', { class: 'badges' }, badges));
  row.style.setProperty('--depth', String(depth));
  const li = h('li', {
    class: `tnode kind-${kind}`,
    role: 'treeitem',
    'data-testid': 'tree-node',
    'data-fqn': fqn,
    'data-kind': kind,
    'data-module': t.ids[mi],
    'aria-level': depth + 1,
  }, row);
  node.li = li;
  node.row = row;
  if (isExpandable(node)) {
    li.setAttribute('aria-expanded', 'false');
    toggle.addEventListener('click', (e) => { e.stopPropagation(); toggleNode(v, node); });
  } else {
    toggle.classList.add('leaf');
    toggle.disabled = true;
  }
  row.addEventListener('click', () => selectNode(v, node));
  row.addEventListener('dblclick', () => { if (isExpandable(node)) toggleNode(v, node); });
  name.addEventListener('keydown', (e) => {
    if (e.key === 'ArrowRight' && isExpandable(node) && !node.expanded) { e.preventDefault(); expand(v, node); }
    else if (e.key === 'ArrowLeft' && node.expanded) { e.preventDefault(); collapse(node); }
  });
  nodes.set(fqn, node);
  return node;
}

function toggleNode(v, node) {
  if (node.expanded) collapse(node); else expand(v, node);
}

function collapse(node) {
  node.expanded = false;
  node.li.setAttribute('aria-expanded', 'false');
  if (node.group) node.group.hidden = true;
}

function expand(v, node, needIndex = -1) {
  if (!isExpandable(node)) return;
  if (!node.group) {
    node.group = h('ul', { role: 'group', class: 'tgroup' });
    if (node.rows.length) node.group.append(renderParamRows(v, node));
    node.li.append(node.group);
  }
  const total = childCount(v.tree, node.mi);
  const want = Math.min(total, Math.max(node.rendered, CHILD_PAGE, needIndex + 1));
  if (want > node.rendered) renderChildren(v, node, want);
  node.expanded = true;
  node.group.hidden = false;
  node.li.setAttribute('aria-expanded', 'true');
}

function renderChildren(v, node, upTo) {
  const t = v.tree;
  const total = childCount(t, node.mi);
  node.group.querySelector(':scope > .more')?.remove();
  const frag = document.createDocumentFragment();
  for (let k = node.rendered; k < upTo; k++) {
    const name = childNameAt(t, node.mi, k);
    const child = makeNode(v, joinFqn(node.fqn, name), childModAt(t, node.mi, k), node.depth + 1);
    node.children.set(name, child);
    frag.append(child.li);
  }
  node.rendered = upTo;
  if (upTo < total) {
    const left = total - upTo;
    const step = Math.min(left, CHILD_PAGE);
    const more = h('li', { class: 'more', role: 'none' },
      h('button', {
        type: 'button', class: 'small', 'data-testid': 'tree-more',
        onclick: () => renderChildren(v, node, upTo + step),
      }, `Show ${fmtInt(step)} more`), h('span', { class: 'muted', text: ` of ${fmtInt(left)} remaining children` }));
    more.style.setProperty('--depth', String(node.depth + 1));
    frag.append(more);
  }
  node.group.append(frag);
}

function axisChips(v, axes) {
  const mesh = v.tree ? v.tree.mesh.map(([a]) => a) : [];
  const chips = [];
  const listed = axes ?? {};
  for (const a of mesh) {
    const p = hasOwn(listed, a) ? listed[a] : null;
    chips.push(h('span', { class: `pl${p === null ? ' none' : ''}`, 'data-axis': a, title: p === null ? `${a}: not constrained` : `${a}: ${p}` },
      h('span', { class: 'pl-axis', text: a }), h('span', { class: 'pl-val', text: p ?? '—' })));
  }
  for (const [a, p] of Object.entries(listed)) {
    if (!mesh.includes(a)) {
      chips.push(h('span', { class: 'pl unknown', 'data-axis': a, title: `${a} is not a mesh axis` },
        h('span', { class: 'pl-axis', text: a }), h('span', { class: 'pl-val', text: p })));
    }
  }
  return chips;
}

// A small chain-link icon (inline SVG: no font or image needed).
function linkIcon() {
  const NS = 'http://www.w3.org/2000/svg';
  const svg = document.createElementNS(NS, 'svg');
  svg.setAttribute('viewBox', '0 0 16 16');
  svg.setAttribute('width', '12');
  svg.setAttribute('height', '12');
  svg.setAttribute('aria-hidden', 'true');
  svg.setAttribute('class', 'tie-icon');
  const path = document.createElementNS(NS, 'path');
  path.setAttribute('d', 'M6.5 9.5l3-3M7 4.5l1.2-1.2a2.6 2.6 0 0 1 3.7 3.7L10.7 8.2M9 11.5l-1.2 1.2a2.6 2.6 0 0 1-3.7-3.7L5.3 7.8');
  svg.append(path);
  return svg;
}

function renderParamRows(v, node) {
  const li = h('li', { class: 'params', role: 'none' });
  li.style.setProperty('--depth', String(node.depth + 1));
  const table = h('div', { class: 'ptable', role: 'table', 'aria-label': `Parameters of ${node.fqn || 'the root'}` });
  for (const r of node.rows) {
    const ties = [];
    if (r.canonical) ties.push(h('span', { class: 'tie', 'data-testid': 'tie', title: `tied: the same tensor as ${r.canonical}` }, linkIcon(), 'tied to ', h('code', { text: r.canonical })));
    if (r.aliases.length) ties.push(h('span', { class: 'tie', 'data-testid': 'tie', title: 'tied aliases: the same tensor under other names' }, linkIcon(), 'tied with ', r.aliases.map((a, i) => [i ? ', ' : '', h('code', { text: a })])));
    table.append(h('div', {
      class: `prow${r.inherited ? ' inherited' : ''}`, role: 'row', 'data-testid': 'param', 'data-param': r.local, 'data-full': r.full,
    },
    h('span', { class: 'pname', role: 'cell' }, h('span', { class: 'pdot', 'aria-hidden': 'true' }), r.local),
    h('span', { class: 'pplace', role: 'cell' }, r.axes ? axisChips(v, r.axes) : h('span', { class: 'muted', text: 'placement unknown' })),
    h('span', { class: 'pties', role: 'cell' }, ties)));
  }
  li.append(table);
  return li;
}

function revealFqn(v, fqn) {
  if (!v.tree || v.tree.root < 0) return false;
  let node = nodes.get('');
  if (!node) return false;
  if (fqn !== '') {
    for (const seg of fqn.split('.')) {
      const k = childIndex(v, node.mi, seg);
      if (k < 0) return false;
      expand(v, node, k);
      node = node.children.get(seg);
      if (!node) return false;
    }
  }
  if (highlighted) {
    highlighted.row.classList.remove('highlight');
    highlighted.li.removeAttribute('data-highlighted');
  }
  highlighted = node;
  node.row.classList.add('highlight');
  node.li.dataset.highlighted = 'true';
  selectNode(v, node);
  node.row.scrollIntoView({ block: 'center', behavior: 'auto' });
  // Restart the flash animation.
  node.row.classList.remove('flash');
  void node.row.offsetWidth;
  node.row.classList.add('flash');
  return true;
}

function selectNode(v, node) {
  if (selected) {
    selected.row.classList.remove('selected');
    selected.li.removeAttribute('aria-selected');
  }
  selected = node;
  node.row.classList.add('selected');
  node.li.setAttribute('aria-selected', 'true');
  renderDetails(v, node);
}

function renderDetails(v, node) {
  const el = $('details');
  el.replaceChildren();
  if (!node) {
    el.append(h('div', { class: 'empty', text: v && v.tree ? 'Select a module to see its details.' : 'No module selected.' }));
    return;
  }
  const t = v.tree;
  const first = firstPathOf(v, node.mi);
  const row = (label, value) => h('div', { class: 'drow' }, h('dt', { text: label }), h('dd', null, value));
  const code = (x) => h('code', { text: x });
  // Where the engine's owner at this path comes from: its layout's place in
  // the document, and for a native request's match the pattern that added it.
  const owner = ownerAt(v, node.fqn);
  let source = 'not an owner (an owner above it, if any, covers its parameters)';
  if (owner) {
    source = h('span', { 'data-testid': 'owner-source' },
      owner.kind === 'native' ? [`providers.native[${owner.nativeRequest}], pattern “${owner.nativePattern}” · `] : null,
      code(owner.pointer),
      v.ownership.collected ? ' (as collected: the check failed)' : null);
  }
  const list = (xs) => h('span', null, xs.map((x, i) => [i ? ', ' : '', code(x)]));
  const own = ownParamNames(t, node.mi);
  el.append(
    h('div', { class: `dhead kind-${node.kind}` }, h('span', { class: 'swatch' }),
      h('div', null, h('div', { class: 'dname', text: node.fqn === '' ? '(root)' : node.fqn }), h('div', { class: 'dkind', text: KIND_LABEL[node.kind] }))),
    h('dl', { class: 'dlist' },
      row('FQN', code(node.fqn === '' ? '""' : node.fqn)),
      row('Module id', code(t.ids[node.mi])),
      moduleType(t, node.mi) ? row('Type', moduleType(t, node.mi)) : null,
      row('Owner', source),
      t.par[node.mi] ? row('Own parallel', h('span', null, code(t.par[node.mi].binding_kind), ' on ',
        t.par[node.mi].axes.length ? list(t.par[node.mi].axes) : 'no axes')) : null,
      first !== node.fqn && first !== null ? row('Shared', h('span', null, 'first reached at ', code(first === '' ? '(root)' : first))) : null,
      row('Subtree', plural(t.subtree[node.mi], 'module path')),
      own.length ? row('Own params', list(own)) : null),
  );
  if (node.rows.length) {
    el.append(h('h3', { text: 'Parameters' }), h('ul', { class: 'dparams' }, renderParamRows(v, { ...node, depth: 0 })));
  }
  if (node.kind !== 'unowned' && state.worker) {
    el.append(h('div', { class: 'dlayout', 'data-testid': 'owner-layout', 'data-fqn': node.fqn }, h('span', { class: 'muted', text: 'Loading the layout…' })));
    state.worker.postMessage({ type: 'owner', id: v.runId, fqn: node.fqn });
  }
  const diag = v.diagByFqn.get(node.fqn);
  if (diag) {
    el.append(h('h3', { text: 'Diagnostics' }), h('ul', { class: 'ddiags' }, diag.map((i) => h('li', null,
      h('code', { class: 'diag-code', text: v.diagnostics[i].code }), ' ', v.diagnostics[i].message,
      typeof v.diagnostics[i].help === 'string' ? h('div', { class: 'ddiag-help', text: `help: ${v.diagnostics[i].help}` }) : null))));
  }
}

// The worker's answer to an 'owner' request: the owner's whole layout.
function onOwner(msg) {
  const v = state.view;
  if (!v || v.runId !== msg.id || !selected || selected.fqn !== msg.fqn) return;
  const box = $('details').querySelector('.dlayout');
  if (!box) return;
  box.replaceChildren();
  const code = (x) => h('code', { text: x });
  const list = (xs) => h('span', null, xs.map((x, i) => [i ? ', ' : '', code(x)]));
  const layout = msg.layout;
  if (!layout) {
    box.append(h('span', { class: 'muted', text: 'No layout.' }));
    return;
  }
  box.append(h('h3', { text: msg.collected ? 'Ports (as collected: the check failed)' : 'Ports' }));
  const table = h('div', { class: 'ptable ports' });
  for (const port of ['in_src', 'in_dst', 'out_src', 'out_dst']) {
    if (!hasOwn(layout, port)) continue;
    const entries = layout[port];
    if (entries === null) {
      table.append(h('div', { class: 'prow' }, h('span', { class: 'pname port', text: port }), h('span', { class: 'muted', text: 'null' })));
      continue;
    }
    const names = Object.keys(entries ?? {});
    if (!names.length) {
      table.append(h('div', { class: 'prow' }, h('span', { class: 'pname port', text: port }), h('span', { class: 'muted', text: '{}' })));
    }
    names.forEach((name, i) => {
      table.append(h('div', { class: 'prow' },
        h('span', { class: 'pname port', text: i ? '' : port }),
        h('span', { class: 'pport' }, h('code', { class: 'pentry', text: name }), axisChips(v, entries[name] ?? {}))));
    });
  }
  box.append(table);
  const dl = h('dl', { class: 'dlist' });
  if (Array.isArray(layout.out_names)) dl.append(h('div', { class: 'drow' }, h('dt', { text: 'out_names' }), h('dd', null, layout.out_names.length ? list(layout.out_names) : '[]')));
  if (msg.parallel) {
    dl.append(h('div', { class: 'drow' }, h('dt', { text: 'Parallel' }), h('dd', null, code(msg.parallel.binding_kind), ' on ',
      (msg.parallel.axes ?? []).length ? list(msg.parallel.axes) : 'no axes')));
  }
  if (Array.isArray(msg.required)) {
    dl.append(h('div', { class: 'drow' }, h('dt', { text: 'Required ids' }), h('dd', null,
      msg.required.length ? h('ul', { class: 'idlist' }, msg.required.map((x) => h('li', null, code(x))))
        : 'none (tied to earlier owners)')));
  }
  if (dl.childNodes.length) box.append(dl);
}

function exportResult() {
  const v = state.view;
  if (v && state.worker) state.worker.postMessage({ type: 'export', id: v.runId });
}

function onExport(msg) {
  const v = state.view;
  if (!v || v.runId !== msg.id) return;
  const url = URL.createObjectURL(msg.blob);
  const a = h('a', { href: url, download: `${v.source.label.replace(/\.json$/i, '')}.result.json` });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

// ---- The plan tab ---------------------------------------------------------------------
//
// Filled from the worker's plan summary (planSummary in worker.mjs) of a planned run: the final
// plan as a table (FQN, parameter, placement per mesh axis, provenance), the bytes each device
// holds as a heatmap laid over the mesh, and the collectives the plan implies with their records.

const PLAN_PAGE = 200;          // plan entries rendered before "show more"
const RECORD_PAGE = 200;        // communication records rendered before "show more"
const HEATMAP_DOM_MAX = 4096;   // up to this many devices the heatmap is DOM cells, beyond it canvases
const HEATMAP_GROUPS_MAX = 64;  // 3+ axes: at most this many small grids (further axes fold into rows)
const HEATMAP_WRAP = 64;        // one axis: cells per row
const COLLECTIVE_ORDER = ['all_reduce', 'all_gather', 'reduce_scatter', 'all_to_all', 'slice', 'none', 'unsupported'];
const COLLECTIVE_NOTE = {
  all_reduce: 'P → R',
  all_gather: 'S(i) → R',
  reduce_scatter: 'P → S(i)',
  all_to_all: 'S(i) → S(j)',
  slice: 'R → S(i): a local slice, no communication',
  none: 'R → P: nothing to communicate',
  unsupported: 'not in the planner’s table',
};
// A sequential color scale (light to dark, yellow-green-blue) for the heatmap.
const HEAT_STOPS = [[247, 252, 240], [204, 235, 197], [123, 204, 196], [43, 140, 190], [8, 64, 129]];

function fmtMem(n) {
  if (!Number.isFinite(n)) return '–';
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'];
  let u = 0;
  let x = n;
  while (x >= 1024 && u < units.length - 1) { x /= 1024; u++; }
  return u === 0 ? `${Math.round(x)} B` : `${x.toFixed(2)} ${units[u]}`;
}

function heatColor(t) {
  const x = Math.min(1, Math.max(0, t)) * (HEAT_STOPS.length - 1);
  const i = Math.min(HEAT_STOPS.length - 2, Math.floor(x));
  const f = x - i;
  const c = HEAT_STOPS[i].map((a, k) => Math.round(a + (HEAT_STOPS[i + 1][k] - a) * f));
  return { css: `rgb(${c[0]}, ${c[1]}, ${c[2]})`, dark: 0.299 * c[0] + 0.587 * c[1] + 0.114 * c[2] < 150 };
}

// "template:tp:layers.*.q_proj" -> {kind: 'template', detail: 'tp · layers.*.q_proj'}.
function parseProvenance(p) {
  const colon = p.indexOf(':');
  const kind = colon < 0 ? p : p.slice(0, colon);
  const rest = colon < 0 ? '' : p.slice(colon + 1);
  if (kind === 'template') {
    const c = rest.indexOf(':');
    return { kind, axis: c < 0 ? rest : rest.slice(0, c), detail: c < 0 ? '' : rest.slice(c + 1) };
  }
  return { kind: ['owned', 'override'].includes(kind) ? kind : 'other', detail: rest };
}

function provenanceChip(p) {
  const { kind, axis, detail } = parseProvenance(p);
  const title = kind === 'owned' ? `owned: the ${detail === 'model' ? 'model provider' : detail === 'family' ? 'family' : detail === 'native' ? 'native request' : detail} owner's layout`
    : kind === 'template' ? `template rule “${detail}” on axis ${axis}`
      : kind === 'override' ? 'an explicit override (replaces the entry)' : p;
  return h('span', { class: `prov prov-${kind}`, 'data-testid': 'provenance-chip', 'data-kind': kind, 'data-provenance': p, title },
    h('span', { class: 'prov-kind', text: kind === 'other' ? p : kind }),
    kind === 'template' ? h('span', { class: 'prov-detail' }, h('span', { class: 'prov-axis', text: axis }), h('code', { text: detail }))
      : detail ? h('span', { class: 'prov-detail', text: detail }) : null);
}

// A placement cell's chip: S(d) (sharded), R (replicated), P (partial) or none.
function placementChip(p, axis) {
  if (p === null || p === undefined) return h('span', { class: 'pv pv-none', title: `no placement on ${axis}: replicated`, text: '—' });
  const k = p[0] === 'S' ? 'S' : p[0] === 'P' ? 'P' : p === 'R' ? 'R' : 'x';
  return h('span', { class: `pv pv-${k}`, title: `${axis}: ${p}`, text: p });
}

function showView(name) {
  state.viewName = name === 'plan' ? 'plan' : 'check';
  for (const tab of document.querySelectorAll('.tabs [role=tab]')) {
    const on = tab.dataset.view === state.viewName;
    tab.setAttribute('aria-selected', String(on));
    tab.tabIndex = on ? 0 : -1;
  }
  $('view-check').hidden = state.viewName !== 'check';
  $('view-plan').hidden = state.viewName !== 'plan';
  document.body.dataset.view = state.viewName;
  if (state.viewName === 'plan' && state.planDirty && state.view) renderPlan(state.view);
}

// Reveals a module in the tree from the plan tab.
function revealFromPlan(fqn) {
  showView('check');
  const v = state.view;
  if (v && !revealFqn(v, fqn)) {
    const note = $('reveal-note');
    note.hidden = false;
    note.textContent = `Module “${fqn}” is not in the module tree (no such path).`;
  }
}

// After each run: the tab's count and run mode at once, its content now or when it is shown.
function updatePlanTab(v) {
  const p = v.plan;
  const pill = $('plan-count');
  pill.textContent = p ? fmtInt(p.entryCount) : '–';
  pill.classList.toggle('good', Boolean(p));
  const mode = $('run-mode');
  mode.dataset.mode = v.mode;
  mode.textContent = v.mode === 'plan'
    ? (v.tree && v.tree.planRequested ? 'Planned: the document has templates or overrides' : 'Planned on request')
    : 'Checked';
  state.planDirty = true;
  if (state.viewName === 'plan') renderPlan(v);
}

function planEmptyState(v) {
  const invalid = v.diagnostics.some((d) => d.code === 'invalid-document');
  const box = h('div', { class: 'plan-empty panel', 'data-testid': 'plan-empty' });
  // Text with `code` spans.
  const rich = (text) => text.split('`').map((part, i) => (i % 2 ? h('code', { text: part }) : part));
  const say = (title, text, ...extra) => box.append(h('h3', { text: title }), h('p', null, rich(text)), ...extra);
  if (invalid || !v.tree) {
    say('Nothing to plan', 'The document is invalid (see the diagnostics): there is no plan to show.');
  } else if (v.tree.hasPlan) {
    say('The document gives its own final plan',
      `It has a \`plan\` (made elsewhere), which is checked as given: nothing is planned here. A document with \`templates\` or \`overrides\` instead is planned when it is checked.${v.memory ? ' Its \`training\` section is counted against that plan: the memory per device is below.' : ''}`);
  } else if (v.mode === 'plan') {
    say('No plan was made', 'The owners do not check (see the diagnostics): the plan is made once they do.');
  } else {
    const button = h('button', { type: 'button', class: 'primary', 'data-testid': 'plan-button' }, 'Plan this document');
    button.addEventListener('click', () => {
      if (v.input !== undefined && v.input !== null) runCheck(v.input, v.source, 'plan');
    });
    say('Checked, not planned',
      'This document has no `templates` or `overrides`, so it was checked, as `shardplan check` does. Planning it anyway (`shardplan plan`) gives the plan its owners make, the memory each device holds and the collectives the plan implies (and reports parameters no owner declares).',
      h('div', { class: 'plan-empty-actions' }, button));
  }
  return box;
}

function renderPlan(v) {
  state.planDirty = false;
  const p = v.plan;
  // A checked document with its own plan and a training section has memory but no plan summary:
  // the memory panel only.
  const memoryOnly = !p && Boolean(v.memory);
  $('plan-state').hidden = Boolean(p);
  $('plan-body').hidden = !p && !memoryOnly;
  $('plan-section').hidden = !p;
  $('collectives-section').hidden = !p;
  if (!p) {
    $('plan-state').replaceChildren(planEmptyState(v));
    if (memoryOnly) renderMemory(v);
    return;
  }
  renderPlanStats(v);
  renderPlanTable(v, '');
  $('plan-filter').value = '';
  renderMemory(v);
  renderCollectives(v);
  $('records-filter').value = '';
  renderRecords(v);
}

function renderPlanStats(v) {
  const p = v.plan;
  const el = $('plan-stats');
  el.replaceChildren();
  const item = (key, label, value, ...sub) => h('div', { class: `sum-item ps-${key}`, 'data-testid': 'plan-stat', 'data-key': key, 'data-value': value },
    h('dt', { text: label }), h('dd', null, h('span', { class: 'sum-value', text: value }), sub.filter(Boolean).map((x) => h('span', { class: 'sum-sub' }, x))));
  let placed = 0;
  for (const e of p.entries) placed += Object.keys(e.params).length;
  const m = p.memory;
  const t = m ? m.training : null;
  const comm = COLLECTIVE_ORDER.filter((c) => !['slice', 'none'].includes(c) && p.collectives[c])
    .flatMap((c) => Object.entries(p.collectives[c]).map(([axis, n]) => `${c}@${axis} ×${n}`));
  el.append(
    item('entries', 'Plan entries', fmtInt(p.entryCount), `${plural(placed, 'parameter placement')}${p.entries.length < p.entryCount ? ' (listed entries)' : ''}`),
    h('div', { class: 'sum-item ps-provenance', 'data-testid': 'plan-stat', 'data-key': 'provenance' },
      h('dt', { text: 'Entries by provenance' }),
      h('dd', { class: 'prov-counts' },
        ['owned', 'template', 'override'].map((k) => h('span', { class: `prov-count prov-${k}`, 'data-kind': k, 'data-value': p.kinds[k] },
          h('span', { class: 'sum-value', text: fmtInt(p.kinds[k]) }), h('span', { class: 'prov-count-label' }, h('span', { class: 'prov-dot' }), k))))),
    t ? item('training', 'Training, worst device', fmtMem(t.max_total_bytes),
      t.budget.bytes ? `${share(t.max_total_bytes, t.budget.bytes)} of device_memory ${fmtMem(t.budget.bytes)}` : 'no device_memory given',
      `parameters at most ${fmtMem(m.max_bytes)}`)
      : item('memory', 'Max per device', m ? fmtMem(m.max_bytes) : '–',
        m ? `${m.unsharded_bytes ? `${((100 * m.max_bytes) / m.unsharded_bytes).toFixed(1)}% of ` : ''}${fmtMem(m.unsharded_bytes)} unsharded` : 'not computed'),
    item('communication', 'Collectives', fmtInt(comm.length ? comm.reduce((a, x) => a + Number(x.split('×')[1]), 0) : 0),
      comm.length ? comm.slice(0, 3).join(', ') + (comm.length > 3 ? ', …' : '') : 'no communication'),
  );
}

// The axes of the plan table's placement columns: the mesh's, then any other named in the plan.
function planAxes(p) {
  const axes = p.mesh.map(([a]) => a);
  const extra = new Set();
  for (const e of p.entries) for (const placements of Object.values(e.params)) for (const a of Object.keys(placements)) if (!axes.includes(a)) extra.add(a);
  return { axes: [...axes, ...extra], unknown: extra };
}

function entryMatches(e, q) {
  if (!q) return true;
  if (e.fqn.toLowerCase().includes(q)) return true;
  if (e.provenance.some((x) => x.toLowerCase().includes(q))) return true;
  return Object.keys(e.params).some((k) => k.toLowerCase().includes(q));
}

function renderPlanTable(v, query) {
  const p = v.plan;
  const table = $('plan-table');
  table.replaceChildren();
  const { axes, unknown } = planAxes(p);
  const sizes = new Map(p.mesh);
  table.append(h('thead', null, h('tr', null,
    h('th', { scope: 'col', class: 'c-fqn', text: 'FQN' }),
    h('th', { scope: 'col', class: 'c-param', text: 'Parameter' }),
    axes.map((a) => h('th', { scope: 'col', class: `c-axis${unknown.has(a) ? ' unknown' : ''}`, 'data-axis': a,
      title: unknown.has(a) ? `${a} is not a mesh axis` : `placement on mesh axis ${a} (${sizes.get(a)} devices)` },
    a, sizes.has(a) ? h('span', { class: 'axis-n', text: `×${sizes.get(a)}` }) : null)),
    h('th', { scope: 'col', class: 'c-prov', text: 'Provenance' }))));
  const q = query.trim().toLowerCase();
  const matching = q ? p.entries.filter((e) => entryMatches(e, q)) : p.entries;
  let shown = 0;
  const more = $('plan-more');
  const renderEntry = (e) => {
    const params = Object.entries(e.params);
    const kinds = [...new Set(e.provenance.map((x) => parseProvenance(x).kind))];
    const body = h('tbody', { 'data-testid': 'plan-entry', 'data-fqn': e.fqn, 'data-provenance': e.provenance.join(' '), 'data-kinds': kinds.join(' '), class: `entry kinds-${kinds[0] ?? 'none'}` });
    const span = Math.max(1, params.length);
    const fqnCell = h('th', { scope: 'rowgroup', class: 'c-fqn', rowspan: span > 1 ? span : undefined },
      h('button', { type: 'button', class: 'fqn-link', title: 'Show in the module tree', text: e.fqn === '' ? '(root)' : e.fqn, onclick: () => revealFromPlan(e.fqn) }));
    const provCell = h('td', { class: 'c-prov', rowspan: span > 1 ? span : undefined }, h('span', { class: 'prov-list' }, e.provenance.map(provenanceChip)));
    if (!params.length) {
      body.append(h('tr', null, fqnCell, h('td', { class: 'c-param muted', colspan: 1 + axes.length, text: 'no parameters (ports only)' }), provCell));
    }
    params.forEach(([local, placements], i) => {
      body.append(h('tr', { 'data-testid': 'plan-param', 'data-param': local },
        i === 0 ? fqnCell : null,
        h('td', { class: 'c-param' }, h('code', { text: local })),
        axes.map((a) => h('td', { class: 'c-axis', 'data-axis': a }, placementChip(hasOwn(placements, a) ? placements[a] : null, a))),
        i === 0 ? provCell : null));
    });
    return body;
  };
  const showMore = () => {
    const upTo = Math.min(matching.length, shown + PLAN_PAGE);
    const frag = document.createDocumentFragment();
    for (let i = shown; i < upTo; i++) frag.append(renderEntry(matching[i]));
    table.append(frag);
    shown = upTo;
    more.replaceChildren();
    if (shown < matching.length) {
      more.append(h('button', { type: 'button', class: 'small', 'data-testid': 'plan-more', onclick: showMore },
        `Show ${fmtInt(Math.min(PLAN_PAGE, matching.length - shown))} more of ${fmtInt(matching.length - shown)} remaining`));
    }
  };
  showMore();
  if (!matching.length) table.append(h('tbody', null, h('tr', null, h('td', { colspan: 3 + axes.length, class: 'muted', text: `No entry matches “${query.trim()}”.` }))));
  const listed = p.entries.length < p.entryCount ? `the first ${fmtInt(p.entries.length)} of ${fmtInt(p.entryCount)} entries are listed (Export result JSON has all)` : plural(p.entryCount, 'entry', 'entries');
  $('plan-note').textContent = q ? `${fmtInt(matching.length)} matching · ${listed}` : listed;
}

// ---- Memory heatmap -------------------------------------------------------------------

// How the devices (row-major over the mesh axes) are laid out: `groups` small grids over the
// first axes, each `rows` x `cols` (rows over the middle axes, columns over the last one). One axis:
// one row (wrapped every HEATMAP_WRAP devices).
function heatLayout(mesh, devices) {
  let axes = mesh.filter(([, n]) => Number.isInteger(n) && n > 0);
  if (!axes.length || axes.reduce((a, [, n]) => a * n, 1) !== devices) axes = [['device', devices]];
  const n = axes.length;
  if (n === 1) {
    const cols = Math.min(devices, HEATMAP_WRAP);
    return { axes, groupAxes: [], rowAxes: [], colAxis: axes[0], groups: 1, rows: Math.ceil(devices / cols), cols, wrap: devices > cols };
  }
  let k = 0;
  let groups = 1;
  while (k < n - 2 && groups * axes[k][1] <= HEATMAP_GROUPS_MAX) { groups *= axes[k][1]; k++; }
  const rowAxes = axes.slice(k, n - 1);
  return {
    axes, groupAxes: axes.slice(0, k), rowAxes, colAxis: axes[n - 1], groups,
    rows: rowAxes.reduce((a, [, s]) => a * s, 1), cols: axes[n - 1][1], wrap: false,
  };
}

// Mesh coordinates of device d (row-major over the axes).
function deviceCoords(axes, d) {
  const coords = new Array(axes.length);
  for (let i = axes.length - 1; i >= 0; i--) {
    coords[i] = d % axes[i][1];
    d = Math.floor(d / axes[i][1]);
  }
  return coords;
}

// Coordinates of a combined index over several axes, e.g. [dp, ep] -> "1·3".
function indexCoords(axes, i) {
  return deviceCoords(axes, i).join('·');
}

// The mesh the devices are laid over: the plan summary's, else the document's (a checked document
// with a plan of its own).
const meshOf = (v) => (v.plan ? v.plan.mesh : v.tree ? v.tree.mesh : []);

// The six categories of a device's training memory (training-v1 section 2: memory.training.worst).
const TRAINING_CATEGORIES = [
  ['params', 'Parameters', 'the parameters it holds (their ZeRO shard under zero 3)'],
  ['grads', 'Gradients', 'of the trained parameters (sharded under zero 2 and 3)'],
  ['master', 'Master copy', 'the master_dtype copy of the trained parameters (sharded under zero 1 to 3)'],
  ['optimizer', 'Optimizer states', 'per trained element (sharded under zero 1 to 3)'],
  ['gathered', 'Gathered (FSDP)', 'the units gathered at once under zero 3: parameters (with prefetch) and gradients'],
  ['activations', 'Activations', 'of the transformer layers it holds (training.activations)'],
];
// Sets inline styles through the CSSOM (the page's Content-Security-Policy refuses style attributes).
const placed = (el, styles) => Object.assign(el.style, styles) && el;
const share = (a, b) => (b ? `${((100 * a) / b).toFixed(1)}%` : '');
const coordsText = (coordinates) => Object.entries(coordinates).map(([a, c]) => `${a}=${c}`).join(', ');

// What the memory panel shows for a run: the heatmap's figures ('training': each device's training
// total, the default when the result has one; 'params': its parameter bytes) and the selected
// device (the worst one until a heatmap cell is clicked).
function memoryUi(v) {
  if (!v.memoryUi) {
    const t = v.memory && v.memory.training;
    v.memoryUi = { metric: t ? 'training' : 'params', device: t ? t.worst.device : null };
  }
  return v.memoryUi;
}

// The engine's verdict on the worst device: its exceeds-device-memory or near-device-memory
// diagnostic and the alternatives its message ends with ("; it would fit with: zero 1 (0.37 GiB),
// shard_axes ['dp', 'tp'] (0.30 GiB), recompute 'full' (0.34 GiB)": [{change, total}]), or null
// alternatives and the engine's words (`none`) when no change fits; null without either diagnostic.
function trainingVerdict(v) {
  const d = v.diagnostics.find((x) => x.code === 'exceeds-device-memory' || x.code === 'near-device-memory');
  if (!d) return null;
  const message = String(d.message);
  const FITS = '; it would fit with: ';
  const at = message.lastIndexOf(FITS);
  if (at >= 0) {
    const tail = message.slice(at + FITS.length);
    const alternatives = [];
    const re = /(.+?) \(([0-9.]+ [KMGTPE]?i?B)\)(?:, |$)/gy;
    for (let m = re.exec(tail); m; m = re.exec(tail)) alternatives.push({ change: m[1], total: m[2] });
    return { diagnostic: d, kind: d.code === 'exceeds-device-memory' ? 'exceeds' : 'near', alternatives, none: null };
  }
  const semi = message.lastIndexOf('; ');
  return { diagnostic: d, kind: d.code === 'exceeds-device-memory' ? 'exceeds' : 'near', alternatives: null,
    none: semi >= 0 ? message.slice(semi + 2) : null };
}

function renderMemory(v) {
  const el = $('memory');
  el.replaceChildren();
  const m = v.memory;
  const mesh = meshOf(v);
  if (!m) {
    $('memory-note').textContent = '';
    el.append(h('div', { class: 'empty', text: 'Not computed: the mesh has more than 2^24 devices.' }));
    return;
  }
  const t = m.training;
  const ui = memoryUi(v);
  const training = Boolean(t) && ui.metric === 'training';
  $('memory-note').textContent = `${plural(m.devices, 'device')} · row-major over ${mesh.length ? mesh.map(([a]) => a).join(' × ') : 'the mesh'}${t ? ' · with training memory' : ''}`;
  el.dataset.training = String(Boolean(t));
  if (t) el.append(renderVerdict(v, t));

  const stat = (key, label, value, sub) => h('div', { class: 'mstat', 'data-key': key, 'data-value': value },
    h('span', { class: 'mstat-label', text: label }), h('span', { class: 'mstat-value', text: fmtMem(value) }), sub ? h('span', { class: 'mstat-sub', text: sub }) : null);
  const main = h('div', { class: 'memory-main' });
  let stats;
  if (training) {
    const b = t.budget;
    stats = [
      stat('worst', 'Training, worst device', t.max_total_bytes,
        `device ${fmtInt(t.worst.device)}${Object.keys(t.worst.coordinates).length ? ` (${coordsText(t.worst.coordinates)})` : ''}${b.bytes ? ` · ${share(t.max_total_bytes, b.bytes)} of device_memory` : ''}`),
      stat('mean', 'Mean', t.mean_total_bytes),
      stat('min', 'Min', t.min_total_bytes),
      stat('budget', 'device_memory', b.bytes ?? Number.NaN,
        b.bytes ? `${b.written} in the training section · headroom ${b.headroom}: ${fmtMem(b.headroom * b.bytes)}` : 'not given in the training section: nothing to compare with'),
    ];
  } else {
    stats = [
      stat('max', 'Max per device', m.max_bytes, `device ${fmtInt(m.max_device)}${m.unsharded_bytes ? ` · ${((100 * m.max_bytes) / m.unsharded_bytes).toFixed(1)}% of unsharded` : ''}`),
      stat('mean', 'Mean', m.mean_bytes),
      stat('min', 'Min', m.min_bytes),
      stat('unsharded', 'Unsharded', m.unsharded_bytes, 'every parameter once (tied ones once)'),
    ];
  }
  el.append(main, h('div', { class: 'mstats', 'data-testid': 'memory-stats', 'data-metric': training ? 'training' : 'params' }, stats));

  if (t) {
    const choose = (metric) => {
      if (ui.metric === metric) return;
      ui.metric = metric;
      renderMemory(v);
    };
    main.append(h('div', { class: 'seg', role: 'group', 'aria-label': 'What the heatmap shows', 'data-testid': 'memory-metric-toggle' },
      [['params', 'Parameters', 'the bytes of parameters each device holds (memory.per_device_bytes)'],
        ['training', 'Training total', 'each device’s training total: parameters, gradients, master copy, optimizer states, gathered, activations (memory.training.per_device_total_bytes)']]
        .map(([metric, label, title]) => h('button', {
          type: 'button', class: 'seg-button', 'data-testid': 'memory-metric', 'data-metric': metric, title,
          'aria-pressed': String(ui.metric === metric), onclick: () => choose(metric),
        }, label))));
  }
  const bytes = training ? t.per_device_total_bytes : m.per_device_bytes;
  if (!bytes) {
    main.append(h('div', { class: 'empty', 'data-testid': 'heatmap-none', text: training
      ? `Per-device training totals come for meshes of at most 65,536 devices; this one has ${fmtInt(m.devices)}. The breakdown below is the worst device’s.`
      : `Per-device figures come for meshes of at most 65,536 devices; this one has ${fmtInt(m.devices)}.` }));
  } else {
    const b = t ? t.budget : null;
    main.append(renderHeatmap(mesh, {
      bytes,
      metric: training ? 'training' : 'params',
      mark: training ? t.worst.device : m.max_device,
      markLabel: training ? 'worst' : 'max',
      sub: training
        ? (x) => (b.bytes ? `${share(x, b.bytes)} of device_memory (${b.written})` : 'training total')
        : (x) => (m.unsharded_bytes ? `${((100 * x) / m.unsharded_bytes).toFixed(1)}% of the unsharded parameters` : null),
      selected: t ? ui.device : null,
      onSelect: t ? (d) => {
        ui.device = d;
        el.querySelector('[data-testid=training-breakdown]').replaceWith(renderBreakdown(v, t, d));
      } : null,
    }, main.clientWidth));
  }
  if (t) el.append(renderBreakdown(v, t, ui.device));
}

// The verdict on the worst device's training memory: the engine's exceeds-device-memory or
// near-device-memory message with the alternatives it names, or how the worst device compares
// with device_memory when neither was reported.
function renderVerdict(v, t) {
  const verdict = trainingVerdict(v);
  const b = t.budget;
  const w = t.worst;
  const kind = verdict ? verdict.kind : b.bytes ? 'fits' : 'no-budget';
  const budgetText = b.bytes ? `device_memory ${fmtMem(b.bytes)}` : '';
  const title = {
    exceeds: `Does not fit: device ${fmtInt(w.device)} needs ${fmtMem(w.total)} for training, more than ${budgetText}`,
    near: `Near the limit: device ${fmtInt(w.device)} needs ${fmtMem(w.total)}, more than headroom ${b.headroom} × ${budgetText}`,
    fits: `Fits: the worst device, ${fmtInt(w.device)}, needs ${fmtMem(w.total)}, ${share(w.total, b.bytes)} of ${budgetText}`,
    'no-budget': `Training needs at most ${fmtMem(w.total)} per device (device ${fmtInt(w.device)}); the training section gives no device_memory to compare with`,
  }[kind];
  const box = h('div', {
    class: `mverdict mv-${kind} memory-wide`, 'data-testid': 'memory-verdict', 'data-verdict': kind,
    'data-code': verdict ? verdict.diagnostic.code : null, role: verdict ? 'alert' : null,
  }, h('div', { class: 'mv-head' }, h('span', { class: 'mv-icon', 'aria-hidden': 'true' }), h('strong', { class: 'mv-title', 'data-testid': 'memory-verdict-title', text: title })));
  if (!verdict) return box;
  const d = verdict.diagnostic;
  box.append(h('p', { class: 'mv-message' },
    h('span', { class: `sev sev-${d.severity}`, text: d.severity }), ' ', h('code', { class: 'mv-code', text: d.code }), ' ',
    h('span', { 'data-testid': 'memory-verdict-message', text: d.message })));
  if (verdict.alternatives && verdict.alternatives.length) {
    box.append(h('div', { class: 'mv-alts' },
      h('span', { class: 'mv-alts-label', text: 'It would fit with (each change alone; the worst device’s new total):' }),
      h('ul', { 'data-testid': 'memory-alternatives' }, verdict.alternatives.map((a) => h('li', {
        class: 'mv-alt', 'data-testid': 'memory-alternative', 'data-change': a.change, 'data-total': a.total,
      }, h('code', { text: a.change }), h('span', { class: 'arrow', text: '→' }), h('span', { class: 'mv-alt-total', text: a.total }))))));
  } else {
    box.append(h('p', { class: 'mv-none', 'data-testid': 'memory-no-alternative',
      text: verdict.none ? `${verdict.none[0].toUpperCase()}${verdict.none.slice(1)}.` : 'No single change the engine tries makes it fit.' }));
  }
  if (d.severity !== 'error') {
    box.append(h('p', { class: 'mv-note', text: v.mode === 'check' && d.code === 'exceeds-device-memory'
      ? 'A warning here: under check (a document with its own plan) the verdict stays the reference framework’s.'
      : 'A warning: it does not make the result fail.' }));
  }
  return box;
}

// The selected device's training memory as a stacked bar: the worst device's six categories, or,
// for another device, its total alone (per device the result gives only the total) above the
// worst device's breakdown; device_memory and its headroom as lines on the same scale.
function renderBreakdown(v, t, device) {
  const w = t.worst;
  const totals = t.per_device_total_bytes;
  const sel = Number.isInteger(device) && totals && device >= 0 && device < totals.length ? device : w.device;
  const b = t.budget;
  const selTotal = sel === w.device ? w.total : totals[sel];
  const scale = Math.max(w.total, selTotal, b.bytes ?? 0) * 1.04 || 1;
  const at = (x) => `${Math.min(100, (100 * x) / scale)}%`;
  const mesh = meshOf(v).filter(([, n]) => Number.isInteger(n) && n > 0);
  const coordsOf = (d) => {
    if (d === w.device) return coordsText(w.coordinates);
    if (!mesh.length || mesh.reduce((a, [, n]) => a * n, 1) !== t.per_device_total_bytes?.length) return '';
    const c = deviceCoords(mesh, d);
    return mesh.map(([a], i) => `${a}=${c[i]}`).join(', ');
  };
  const named = (d) => `Device ${fmtInt(d)}${coordsOf(d) ? ` (${coordsOf(d)})` : ''}`;

  const lines = () => (b.bytes ? [
    placed(h('span', { class: 'tb-line tb-line-budget', 'data-testid': 'training-budget', 'data-bytes': b.bytes, title: `device_memory: ${fmtMem(b.bytes)} · ${fmtInt(b.bytes)} bytes` }), { left: at(b.bytes) }),
    placed(h('span', { class: 'tb-line tb-line-headroom', 'data-testid': 'training-headroom', 'data-bytes': b.headroom * b.bytes, title: `headroom ${b.headroom} × device_memory: ${fmtMem(b.headroom * b.bytes)}` }), { left: at(b.headroom * b.bytes) }),
  ] : []);
  const row = (kind, d, total, label, sub, segments) => h('div', { class: `tb-row tb-${kind}` },
    h('div', { class: 'tb-label' }, h('strong', { text: label }), h('span', { class: 'tb-sub', text: sub })),
    h('div', {
      class: 'tb-track', 'data-testid': 'training-bar', 'data-kind': kind, 'data-device': d, 'data-total': total,
      role: 'img', 'aria-label': `${label}: ${fmtMem(total)}${kind === 'breakdown' ? `: ${segments.filter(([, x]) => x).map(([c, x]) => `${c} ${fmtMem(x)}`).join(', ')}` : ''}`,
    }, segments.map(([cat, x, name]) => placed(h('span', {
      class: `tb-seg tb-${cat}${x ? '' : ' zero'}`, 'data-testid': 'training-segment', 'data-category': cat, 'data-bytes': x,
      title: `${name}: ${fmtMem(x)} · ${fmtInt(x)} bytes · ${share(x, total)} of the total`,
    }), { width: at(x) })), lines()),
    h('div', { class: 'tb-sum', 'data-testid': 'training-bar-total', 'data-bytes': total },
      h('strong', { text: fmtMem(total) }), b.bytes ? h('span', { class: 'tb-sub', text: `${share(total, b.bytes)} of device_memory` }) : null));

  const box = h('div', { class: 'tb memory-wide', 'data-testid': 'training-breakdown', 'data-device': sel, 'data-worst': w.device },
    h('div', { class: 'tb-head' },
      h('h3', { text: sel === w.device ? `Training memory of device ${fmtInt(sel)}, the worst device` : `Training memory of device ${fmtInt(sel)}` }),
      h('span', { class: 'tb-hint', text: 'Click a device in the heatmap to select it.' }),
      sel === w.device ? null : h('button', {
        type: 'button', class: 'small', 'data-testid': 'select-worst',
        onclick: () => {
          const cell = $('memory').querySelector(`[data-testid=heatmap-cell][data-device="${w.device}"]`);
          if (cell) cell.click();
          else { memoryUi(v).device = w.device; renderMemory(v); }
        },
      }, `Show the worst device (${fmtInt(w.device)})`)));
  const bars = h('div', { class: 'tb-bars' });
  if (sel !== w.device) {
    bars.append(row('total', sel, selTotal, named(sel), 'total only: per device the result gives the total (per_device_total_bytes), not its categories',
      [['total', selTotal, 'Training total']]));
  }
  bars.append(row('breakdown', w.device, w.total, `${named(w.device)}${sel === w.device ? '' : ', the worst device'}`,
    'by category: the breakdown is computed for the worst device (memory.training.worst)',
    TRAINING_CATEGORIES.map(([cat, name]) => [cat, w[cat], name])));
  if (b.bytes) {
    bars.append(h('div', { class: 'tb-row tb-scale' }, h('div', { class: 'tb-label' }),
      h('div', { class: 'tb-marks' },
        // A label ends at its line, or starts there when the line is near the bar's start.
        placed(h('span', { class: `tb-mark tb-mark-budget${b.bytes < 0.3 * scale ? ' after' : ''}`, text: `device_memory ${fmtMem(b.bytes)}` }), { left: at(b.bytes) }),
        placed(h('span', { class: `tb-mark tb-mark-headroom${b.headroom * b.bytes < 0.3 * scale ? ' after' : ''}`, text: `headroom ${b.headroom}` }), { left: at(b.headroom * b.bytes) })),
      h('div', { class: 'tb-sum' })));
  }
  box.append(bars);

  // The worst device's categories: bytes, share of its total.
  const table = h('table', { class: 'tb-table', 'data-testid': 'training-categories', 'aria-label': `Training memory of device ${w.device} by category` },
    h('thead', null, h('tr', null, h('th', { scope: 'col', text: `Device ${fmtInt(w.device)} (worst)` }), h('th', { scope: 'col', class: 'num', text: 'Bytes' }),
      h('th', { scope: 'col', class: 'num', text: 'Exact' }), h('th', { scope: 'col', class: 'num', text: 'Share' }))),
    h('tbody', null, TRAINING_CATEGORIES.map(([cat, name, note]) => h('tr', {
      'data-testid': 'training-category', 'data-category': cat, 'data-bytes': w[cat], class: w[cat] ? '' : 'zero',
    }, h('th', { scope: 'row' }, h('span', { class: `tb-swatch tb-${cat}` }), name, h('span', { class: 'tb-note', text: note })),
    h('td', { class: 'num', text: fmtMem(w[cat]) }), h('td', { class: 'num mono', text: fmtInt(w[cat]) }), h('td', { class: 'num', text: share(w[cat], w.total) })))),
    h('tfoot', null,
      h('tr', { 'data-testid': 'training-total', 'data-bytes': w.total },
        h('th', { scope: 'row', text: 'Total' }), h('td', { class: 'num', text: fmtMem(w.total) }), h('td', { class: 'num mono', text: fmtInt(w.total) }), h('td', { class: 'num', text: '100%' })),
      b.bytes ? h('tr', { class: 'tb-budget-row', 'data-testid': 'training-budget-row', 'data-bytes': b.bytes },
        h('th', { scope: 'row' }, h('span', { class: 'tb-swatch tb-budget' }), 'device_memory', h('span', { class: 'tb-note', text: `${b.written} in the training section; headroom ${b.headroom}` })),
        h('td', { class: 'num', text: fmtMem(b.bytes) }), h('td', { class: 'num mono', text: fmtInt(b.bytes) }), h('td', { class: 'num', text: share(w.total, b.bytes) })) : null));
  box.append(table);
  return box;
}

// spec: {bytes (per device), metric ('params' or 'training'), mark (the max/worst device), markLabel,
// sub(bytes) (the tooltip's last line, or null), selected (a device or null), onSelect(device) or
// null (cells are not selectable)}.
function renderHeatmap(mesh, spec, available) {
  const { bytes } = spec;
  const devices = bytes.length;
  const selectable = typeof spec.onSelect === 'function';
  let selected = selectable && Number.isInteger(spec.selected) ? spec.selected : -1;
  let lo = Infinity;
  let hi = -Infinity;
  for (const b of bytes) { if (b < lo) lo = b; if (b > hi) hi = b; }
  const flat = hi === lo;
  const colorOf = (b) => heatColor(flat ? 0.55 : (b - lo) / (hi - lo));
  const L = heatLayout(mesh, devices);
  const canvas = devices > HEATMAP_DOM_MAX;
  const what = spec.metric === 'training' ? 'Training total' : 'Bytes';
  const box = h('div', {
    class: `heatmap${canvas ? ' canvas' : ''}${selectable ? ' selectable' : ''}`, 'data-testid': 'heatmap', 'data-devices': devices, 'data-groups': L.groups,
    'data-rows': L.rows, 'data-cols': L.cols, 'data-metric': spec.metric, 'data-selected': selected >= 0 ? selected : null, role: 'group',
    'aria-label': `${what} per device over the mesh: ${devices} devices, ${fmtMem(lo)} to ${fmtMem(hi)}`,
  });
  const axisName = (axes) => axes.map(([a]) => a).join('·');
  const caption = L.wrap ? `${L.colAxis[0]} 0 … ${devices - 1}, ${L.cols} per row`
    : L.rowAxes.length ? `rows ${axisName(L.rowAxes)} · columns ${L.colAxis[0]}${L.groupAxes.length ? ` · one grid per ${axisName(L.groupAxes)}` : ''}`
      : `${L.colAxis[0]} 0 … ${L.cols - 1}`;
  box.append(h('p', { class: 'hm-caption', 'data-testid': 'heatmap-caption' },
    spec.metric === 'training' ? h('strong', { text: 'Training total per device · ' }) : null, caption,
    selectable ? ' · click a device to select it' : ''));

  // Cell sizes: fit the panel's width (the heatmap scrolls sideways when cells would be too small).
  const width = Math.max(240, (available || 440) - 4);
  const labelW = L.rowAxes.length || L.wrap ? 44 : 0;
  const perRow = L.groups === 1 ? 1 : Math.max(1, Math.min(L.groups, Math.floor(width / (L.cols * 22 + labelW + 20))));
  const avail = Math.floor((width - perRow * (labelW + 18)) / perRow);
  const cellW = Math.max(3, Math.min(L.groups === 1 ? 104 : 64, Math.floor(avail / L.cols) - 3));
  const gap = cellW >= 12 ? 3 : 1;
  // Big cells are wide rather than tall; many rows are kept to about 560 px.
  const cellH = cellW >= 40 ? Math.max(30, Math.min(52, Math.round(cellW * 0.55)))
    : Math.max(2, Math.min(cellW, Math.floor(560 / L.rows) - gap));
  const text = !canvas && cellW >= 58;
  const labels = cellW >= 14 && cellH >= 12;

  const tip = h('div', { class: 'hm-tip', 'data-testid': 'heatmap-tooltip', role: 'tooltip', hidden: true });
  const describeDevice = (d) => {
    const c = deviceCoords(L.axes, d);
    return { coords: L.axes.map(([a], i) => `${a}=${c[i]}`).join(', '), bytes: bytes[d] };
  };
  const showTip = (d, clientX, clientY) => {
    const { coords, bytes: b } = describeDevice(d);
    const sub = spec.sub(b);
    tip.replaceChildren(
      h('div', { class: 'hm-tip-head' }, h('strong', { text: `Device ${fmtInt(d)}` }), d === spec.mark ? h('span', { class: 'hm-tip-max', text: spec.markLabel }) : null,
        d === selected ? h('span', { class: 'hm-tip-sel', text: 'selected' }) : null),
      h('div', { class: 'hm-tip-coords', text: coords }),
      h('div', { class: 'hm-tip-bytes' }, h('strong', { text: fmtMem(b) }), ` · ${fmtInt(b)} bytes${spec.metric === 'training' ? ' for training' : ''}`),
      sub ? h('div', { class: 'hm-tip-sub', text: sub }) : null);
    tip.hidden = false;
    tip.dataset.device = String(d);
    const r = box.getBoundingClientRect();
    const x = clientX - r.left + 14;
    const y = clientY - r.top + 14;
    tip.style.left = `${Math.min(x, Math.max(0, box.clientWidth - tip.offsetWidth - 4))}px`;
    tip.style.top = `${y}px`;
  };
  const hideTip = () => { tip.hidden = true; delete tip.dataset.device; };

  const grids = h('div', { class: 'hm-groups' });
  const perGroup = L.rows * L.cols;
  const cells = new Map(); // device -> DOM cell (DOM heatmaps)
  const paints = [];       // per group: (device) -> repaint it (canvas heatmaps)
  const select = (d, focus = false) => {
    if (!selectable || d < 0 || d >= devices) return;
    const prev = selected;
    selected = d;
    box.dataset.selected = String(d);
    if (!canvas) {
      const old = cells.get(prev);
      if (old) { old.classList.remove('is-selected'); old.setAttribute('aria-pressed', 'false'); old.tabIndex = -1; }
      const cell = cells.get(d);
      cell.classList.add('is-selected');
      cell.setAttribute('aria-pressed', 'true');
      cell.tabIndex = 0;
      if (focus) cell.focus();
    } else {
      if (prev >= 0) paints[Math.floor(prev / perGroup)](prev);
      paints[Math.floor(d / perGroup)](d);
    }
    if (prev !== d) spec.onSelect(d);
  };
  for (let g = 0; g < L.groups; g++) {
    const fig = h('figure', { class: 'hm-group', 'data-testid': 'heatmap-group', 'data-group': g });
    if (L.groupAxes.length) {
      const c = deviceCoords(L.groupAxes, g);
      fig.append(h('figcaption', { text: L.groupAxes.map(([a], i) => `${a}=${c[i]}`).join(' · ') }));
    }
    const base = g * perGroup;
    if (!canvas) {
      const grid = h('div', { class: 'hm-grid' });
      grid.style.gridTemplateColumns = `${labelW ? `${labelW}px ` : ''}repeat(${L.cols}, ${cellW}px)`;
      grid.style.gap = `${gap}px`;
      if (labels) {
        if (labelW) grid.append(h('span', { class: 'hm-corner', text: L.wrap ? '' : `${axisName(L.rowAxes)}╲${L.colAxis[0]}` }));
        for (let c = 0; c < L.cols; c++) grid.append(h('span', { class: 'hm-col', text: L.wrap ? `+${c}` : String(c) }));
      }
      for (let r = 0; r < L.rows; r++) {
        if (labelW) grid.append(h('span', { class: 'hm-row', text: labels ? (L.wrap ? String(r * L.cols) : indexCoords(L.rowAxes, r)) : '' }));
        for (let c = 0; c < L.cols; c++) {
          const d = base + r * L.cols + c;
          if (d >= devices) { grid.append(h('span', { class: 'hm-pad' })); continue; }
          const col = colorOf(bytes[d]);
          const { coords } = describeDevice(d);
          const cell = h('div', {
            class: `hm-cell${col.dark ? ' dark' : ''}${d === spec.mark ? ' is-max' : ''}${d === selected ? ' is-selected' : ''}`, 'data-testid': 'heatmap-cell',
            'data-device': d, 'data-coords': coords, 'data-bytes': bytes[d],
            'aria-label': `device ${d} (${coords}): ${fmtMem(bytes[d])}${spec.metric === 'training' ? ' for training' : ''}`,
            role: selectable ? 'button' : null, 'aria-pressed': selectable ? String(d === selected) : null,
            tabindex: selectable ? (d === selected ? 0 : -1) : null,
          }, text ? [h('span', { class: 'hm-dev', text: `#${d}` }), h('span', { class: 'hm-val', text: fmtMem(bytes[d]) })] : null);
          cell.style.background = col.css;
          cell.style.height = `${cellH}px`;
          if (selectable) cells.set(d, cell);
          grid.append(cell);
        }
      }
      fig.append(grid);
    } else {
      const cv = h('canvas', { class: 'hm-canvas', 'data-testid': 'heatmap-canvas', 'data-group': g });
      const dpr = window.devicePixelRatio || 1;
      const w = L.cols * (cellW + gap);
      const ht = L.rows * (cellH + gap);
      cv.width = Math.ceil(w * dpr);
      cv.height = Math.ceil(ht * dpr);
      cv.style.width = `${w}px`;
      cv.style.height = `${ht}px`;
      const ctx = cv.getContext('2d');
      ctx.scale(dpr, dpr);
      const paint = (d) => {
        const r = Math.floor((d - base) / L.cols);
        const c = (d - base) % L.cols;
        ctx.fillStyle = colorOf(bytes[d]).css;
        ctx.fillRect(c * (cellW + gap), r * (cellH + gap), cellW, cellH);
        if (d === selected) {
          ctx.fillStyle = '#111827';
          const t = Math.max(1, Math.min(2, Math.floor(cellW / 4)));
          ctx.fillRect(c * (cellW + gap), r * (cellH + gap), cellW, t);
          ctx.fillRect(c * (cellW + gap), r * (cellH + gap) + cellH - t, cellW, t);
          ctx.fillRect(c * (cellW + gap), r * (cellH + gap), t, cellH);
          ctx.fillRect(c * (cellW + gap) + cellW - t, r * (cellH + gap), t, cellH);
        }
      };
      paints.push(paint);
      for (let d = base; d < Math.min(devices, base + perGroup); d++) paint(d);
      const at = (e) => {
        const rect = cv.getBoundingClientRect();
        const c = Math.floor((e.clientX - rect.left) / (cellW + gap));
        const r = Math.floor((e.clientY - rect.top) / (cellH + gap));
        const d = base + r * L.cols + c;
        return c >= 0 && c < L.cols && r >= 0 && r < L.rows && d < devices ? d : -1;
      };
      cv.addEventListener('mousemove', (e) => { const d = at(e); if (d < 0) hideTip(); else showTip(d, e.clientX, e.clientY); });
      cv.addEventListener('mouseleave', hideTip);
      if (selectable) cv.addEventListener('click', (e) => { const d = at(e); if (d >= 0) select(d); });
      fig.append(cv);
    }
    grids.append(fig);
  }
  if (!canvas) {
    grids.addEventListener('mouseover', (e) => {
      const cell = e.target.closest('.hm-cell');
      if (!cell) { hideTip(); return; }
      showTip(Number(cell.dataset.device), e.clientX, e.clientY);
    });
    grids.addEventListener('mousemove', (e) => {
      const cell = e.target.closest('.hm-cell');
      if (cell && !tip.hidden) showTip(Number(cell.dataset.device), e.clientX, e.clientY);
    });
    grids.addEventListener('mouseleave', hideTip);
    if (selectable) {
      grids.addEventListener('click', (e) => {
        const cell = e.target.closest('.hm-cell');
        if (cell) select(Number(cell.dataset.device));
      });
      // Arrow keys move the selection (left/right: the next device; up/down: the next row).
      grids.addEventListener('keydown', (e) => {
        const step = { ArrowLeft: -1, ArrowRight: 1, ArrowUp: -L.cols, ArrowDown: L.cols }[e.key];
        if (!step || selected < 0) return;
        e.preventDefault();
        hideTip();
        select(Math.min(devices - 1, Math.max(0, selected + step)), true);
      });
    }
  }
  box.append(grids);

  // The legend: the color scale from min to max.
  const legend = h('div', { class: `hm-legend${flat ? ' flat' : ''}`, 'data-testid': 'heatmap-legend', 'data-min': lo, 'data-max': hi });
  const bar = h('span', { class: 'hm-bar' });
  bar.style.background = flat ? heatColor(0.55).css
    : `linear-gradient(90deg, ${HEAT_STOPS.map((c, i) => `rgb(${c.join(', ')}) ${(100 * i) / (HEAT_STOPS.length - 1)}%`).join(', ')})`;
  const every = spec.metric === 'training' ? 'every device needs' : 'every device holds';
  if (flat) legend.append(bar, h('span', { class: 'hm-lab', text: `${every} ${fmtMem(lo)}` }));
  else legend.append(h('span', { class: 'hm-lab', text: `min ${fmtMem(lo)}` }), bar, h('span', { class: 'hm-lab', text: `max ${fmtMem(hi)}` }));
  box.append(legend, tip);
  return box;
}

// ---- Collectives -------------------------------------------------------------------

function collectiveRank(c) {
  const i = COLLECTIVE_ORDER.indexOf(c);
  return i < 0 ? COLLECTIVE_ORDER.length : i;
}

function renderCollectives(v) {
  const p = v.plan;
  const box = $('collectives-box');
  box.replaceChildren();
  const names = Object.keys(p.collectives).sort((a, b) => collectiveRank(a) - collectiveRank(b) || a.localeCompare(b));
  const meshAxes = p.mesh.map(([a]) => a);
  const axes = [...meshAxes];
  for (const c of names) for (const a of Object.keys(p.collectives[c] ?? {})) if (!axes.includes(a)) axes.push(a);
  const total = names.reduce((t, c) => t + Object.values(p.collectives[c] ?? {}).reduce((a, n) => a + n, 0), 0);
  $('coll-note').textContent = `${plural(p.recordCount, 'record')}`;
  const table = h('table', { class: 'coll-table', 'data-testid': 'collectives', 'aria-label': 'Collectives per mesh axis' },
    h('thead', null, h('tr', null, h('th', { scope: 'col', text: 'Collective' }),
      axes.map((a) => h('th', { scope: 'col', 'data-axis': a, class: meshAxes.includes(a) ? '' : 'unknown', text: a })),
      h('th', { scope: 'col', class: 'total', text: 'Total' }))));
  const body = h('tbody');
  for (const c of names) {
    const counts = p.collectives[c] ?? {};
    const rowTotal = Object.values(counts).reduce((a, n) => a + n, 0);
    body.append(h('tr', { 'data-testid': 'collective', 'data-collective': c },
      h('th', { scope: 'row' }, h('button', {
        type: 'button', class: `coll-name coll-${c}`, title: `${COLLECTIVE_NOTE[c] ?? c}: list its records`,
        onclick: () => { $('records-collective').value = c; renderRecords(v); },
      }, h('span', { class: 'coll-dot' }), c), COLLECTIVE_NOTE[c] ? h('span', { class: 'coll-note', text: COLLECTIVE_NOTE[c] }) : null),
      axes.map((a) => {
        const n = counts[a] ?? 0;
        return h('td', { 'data-axis': a, 'data-count': n, class: n ? 'n' : 'zero', text: n ? fmtInt(n) : '·' });
      }),
      h('td', { class: 'total', 'data-count': rowTotal, text: fmtInt(rowTotal) })));
  }
  if (!names.length) body.append(h('tr', null, h('td', { colspan: axes.length + 2, class: 'muted', text: 'The plan implies no communication.' })));
  table.append(body);
  box.append(table);
  if (names.length) box.dataset.total = String(total);

  const select = $('records-collective');
  select.replaceChildren(h('option', { value: '', text: 'All collectives' }), names.map((c) => h('option', { value: c, text: c })));
}

function renderRecords(v) {
  const p = v.plan;
  const table = $('records');
  table.replaceChildren();
  const more = $('records-more');
  more.replaceChildren();
  const want = $('records-collective').value;
  const q = $('records-filter').value.trim().toLowerCase();
  const matching = p.records.filter((r) => (!want || r.collective === want)
    && (!q || `${r.fqn} ${r.port} ${r.axis} ${r.from} ${r.to} ${r.collective}`.toLowerCase().includes(q)));
  table.append(h('thead', null, h('tr', null, ['FQN', 'Port', 'Axis', 'From → to', 'Collective'].map((x) => h('th', { scope: 'col', text: x })))));
  const body = h('tbody');
  table.append(body);
  let shown = 0;
  const showMore = () => {
    const upTo = Math.min(matching.length, shown + RECORD_PAGE);
    const frag = document.createDocumentFragment();
    for (let i = shown; i < upTo; i++) {
      const r = matching[i];
      frag.append(h('tr', { 'data-testid': 'comm-record', 'data-fqn': r.fqn, 'data-collective': r.collective, 'data-axis': r.axis },
        h('td', null, h('button', { type: 'button', class: 'fqn-link', title: 'Show in the module tree', text: r.fqn === '' ? '(root)' : r.fqn, onclick: () => revealFromPlan(r.fqn) })),
        h('td', null, h('code', { text: r.port })),
        h('td', null, h('code', { text: r.axis })),
        h('td', { class: 'r-move' }, placementChip(r.from, r.axis), h('span', { class: 'arrow', text: '→' }), placementChip(r.to, r.axis)),
        h('td', null, h('span', { class: `coll-badge coll-${r.collective}`, text: r.collective }))));
    }
    body.append(frag);
    shown = upTo;
    more.replaceChildren();
    if (shown < matching.length) {
      more.append(h('button', { type: 'button', class: 'small', 'data-testid': 'records-more', onclick: showMore },
        `Show ${fmtInt(Math.min(RECORD_PAGE, matching.length - shown))} more of ${fmtInt(matching.length - shown)}`));
    }
  };
  showMore();
  if (!matching.length) {
    body.append(h('tr', null, h('td', { colspan: 5, class: 'muted', text: p.records.length ? 'No record matches the filter.' : 'No communication records.' })));
  }
  if (p.records.length < p.recordCount) {
    more.append(h('span', { class: 'muted', 'data-testid': 'records-capped',
      text: ` Only the first ${fmtInt(p.records.length)} of ${fmtInt(p.recordCount)} records are listed here (Export result JSON has all).` }));
  }
}

// ---- Fixes: a diagnostic's RFC 6902 JSON Patch, applied to the document --------

class FixError extends Error {}

// A JSON object as parsed for a fix: its members in document order, as
// [name, value] pairs (JSON.parse would move integer-like names first).
class JsonObject {
  constructor(members = []) { this.members = members; }
}
// A JSON number as written (JSON.parse would round a large integer).
class JsonNumber {
  constructor(text) { this.text = text; }
}

// JSON text -> values: JsonObject, JsonNumber, arrays, strings, booleans, null.
function parseJsonText(text) {
  const ws = /[ \t\n\r]*/y;
  const number = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y;
  let i = text.charCodeAt(0) === 0xfeff ? 1 : 0;
  const fail = (what) => { throw new FixError(`the document is not valid JSON: ${what} at character ${i + 1}`); };
  const skip = () => { ws.lastIndex = i; ws.exec(text); i = ws.lastIndex; };
  const readString = () => { // text[i] is '"'
    let j = i + 1;
    for (;;) {
      const c = text.charCodeAt(j);
      if (Number.isNaN(c) || c < 0x20) fail('a malformed string');
      if (c === 0x22) break; // '"'
      j += c === 0x5c ? 2 : 1; // '\\' escapes the next character
    }
    let decoded;
    try {
      decoded = JSON.parse(text.slice(i, j + 1)); // checks the escapes
    } catch {
      fail('a malformed string');
    }
    i = j + 1;
    return decoded;
  };
  const value = (depth) => {
    if (depth > 1000) fail('nesting too deep');
    skip();
    const c = text[i];
    if (c === '{') {
      i++;
      const members = [];
      skip();
      if (text[i] === '}') { i++; return new JsonObject(members); }
      for (;;) {
        skip();
        if (text[i] !== '"') fail('a missing member name');
        const name = readString();
        skip();
        if (text[i] !== ':') fail("a missing ':'");
        i++;
        members.push([name, value(depth + 1)]);
        skip();
        if (text[i] === ',') { i++; continue; }
        if (text[i] === '}') { i++; return new JsonObject(members); }
        fail("a missing ',' or '}'");
      }
    }
    if (c === '[') {
      i++;
      const items = [];
      skip();
      if (text[i] === ']') { i++; return items; }
      for (;;) {
        items.push(value(depth + 1));
        skip();
        if (text[i] === ',') { i++; continue; }
        if (text[i] === ']') { i++; return items; }
        fail("a missing ',' or ']'");
      }
    }
    if (c === '"') return readString();
    for (const [word, literal] of [['true', true], ['false', false], ['null', null]]) {
      if (text.startsWith(word, i)) { i += word.length; return literal; }
    }
    number.lastIndex = i;
    const m = number.exec(text);
    if (!m) fail(i < text.length ? 'an unexpected character' : 'an unexpected end');
    i = number.lastIndex;
    return new JsonNumber(m[0]);
  };
  const root = value(0);
  skip();
  if (i < text.length) fail('text after the document');
  return root;
}

// A plain JSON value (a fix's `value`) as parseJsonText gives it.
function fromPlain(x) {
  if (Array.isArray(x)) return x.map(fromPlain);
  if (x !== null && typeof x === 'object') return new JsonObject(Object.entries(x).map(([k, y]) => [k, fromPlain(y)]));
  if (typeof x === 'number') return new JsonNumber(JSON.stringify(x));
  return x;
}

// Values -> JSON text as JSON.stringify(value, null, 2) writes it.
function stringifyJsonText(root) {
  const out = [];
  const write = (x, indent) => {
    if (x instanceof JsonNumber) out.push(x.text);
    else if (x instanceof JsonObject || Array.isArray(x)) {
      const entries = x instanceof JsonObject ? x.members : x;
      const [open, close] = x instanceof JsonObject ? ['{', '}'] : ['[', ']'];
      if (!entries.length) { out.push(open, close); return; }
      const inner = `${indent}  `;
      out.push(open);
      entries.forEach((entry, k) => {
        out.push(k ? ',\n' : '\n', inner);
        if (x instanceof JsonObject) { out.push(JSON.stringify(entry[0]), ': '); write(entry[1], inner); }
        else write(entry, inner);
      });
      out.push('\n', indent, close);
    } else out.push(JSON.stringify(x));
  };
  write(root, '');
  return out.join('');
}

// RFC 6901: '' is the whole document; else '/'-separated tokens, '~1' for '/' and '~0' for '~'.
function fixPointerTokens(pointer) {
  if (typeof pointer !== 'string' || (pointer !== '' && pointer[0] !== '/')) throw new FixError(`not a JSON pointer: ${JSON.stringify(pointer)}`);
  return pointer === '' ? [] : pointer.slice(1).split('/').map((t) => t.replace(/~1/g, '/').replace(/~0/g, '~'));
}

const memberIndex = (object, name) => {
  for (let k = object.members.length - 1; k >= 0; k--) if (object.members[k][0] === name) return k; // the last one counts
  return -1;
};
const arrayIndex = (array, token, pointer, forAdd = false) => {
  if (forAdd && token === '-') return array.length;
  if (!/^(0|[1-9][0-9]*)$/.test(token) || Number(token) > array.length - (forAdd ? 0 : 1)) {
    throw new FixError(`${pointer} names no element of an array of ${array.length}`);
  }
  return Number(token);
};

// The container and the last token of `pointer` in `holder` (a JsonObject
// whose one member '' is the document).
function locate(holder, pointer) {
  const tokens = ['', ...fixPointerTokens(pointer)];
  const last = tokens.pop();
  let container = holder;
  for (const t of tokens) {
    if (container instanceof JsonObject) {
      const k = memberIndex(container, t);
      if (k < 0) throw new FixError(`${pointer} names nothing in the document`);
      container = container.members[k][1];
    } else if (Array.isArray(container)) {
      container = container[arrayIndex(container, t, pointer)];
    } else {
      throw new FixError(`${pointer} names nothing in the document`);
    }
  }
  if (!(container instanceof JsonObject) && !Array.isArray(container)) throw new FixError(`${pointer} names nothing in the document`);
  return [container, last];
}

function getAt(holder, pointer) {
  const [c, t] = locate(holder, pointer);
  if (Array.isArray(c)) return c[arrayIndex(c, t, pointer)];
  const k = memberIndex(c, t);
  if (k < 0) throw new FixError(`${pointer} names nothing in the document`);
  return c.members[k][1];
}

function removeAt(holder, pointer) {
  const [c, t] = locate(holder, pointer);
  if (Array.isArray(c)) return c.splice(arrayIndex(c, t, pointer), 1)[0];
  const k = memberIndex(c, t);
  if (k < 0) throw new FixError(`${pointer} names nothing in the document`);
  return c.members.splice(k, 1)[0][1];
}

function addAt(holder, pointer, value) {
  const [c, t] = locate(holder, pointer);
  if (Array.isArray(c)) { c.splice(arrayIndex(c, t, pointer, true), 0, value); return; }
  const k = memberIndex(c, t);
  if (k >= 0) c.members[k][1] = value;
  else c.members.push([t, value]);
}

// Applies one operation ("move" and "replace", the ones fixes use; RFC 6902
// section 4). A move within one object renames the member where it stands.
function applyOperation(holder, op) {
  if (!op || typeof op !== 'object') throw new FixError('a fix operation is not an object');
  if (op.op === 'replace') {
    if (!('value' in op)) throw new FixError(`replace ${op.path}: no value`);
    const [c, t] = locate(holder, op.path);
    if (Array.isArray(c)) c[arrayIndex(c, t, op.path)] = fromPlain(op.value);
    else {
      const k = memberIndex(c, t);
      if (k < 0) throw new FixError(`${op.path} names nothing in the document`);
      c.members[k][1] = fromPlain(op.value);
    }
    return;
  }
  if (op.op === 'move') {
    const from = fixPointerTokens(op.from);
    const path = fixPointerTokens(op.path);
    if (path.length > from.length && from.every((t, k) => t === path[k])) {
      throw new FixError(`cannot move ${op.from} into itself (${op.path})`);
    }
    getAt(holder, op.from); // it must be there
    if (op.from === op.path) return;
    const [fc, ft] = locate(holder, op.from);
    const [pc, pt] = locate(holder, op.path);
    if (fc === pc && fc instanceof JsonObject && memberIndex(fc, pt) < 0) {
      fc.members[memberIndex(fc, ft)][0] = pt; // a rename: the member keeps its place
      return;
    }
    addAt(holder, op.path, removeAt(holder, op.from));
    return;
  }
  throw new FixError(`unsupported fix operation ${JSON.stringify(op.op)}`);
}

// `text` with the JSON Patch `fix` applied, written with 2-space indentation
// (and a final newline). Throws FixError when the text is not JSON or an
// operation does not apply; `text` is then left as it is.
function applyFixToText(text, fix) {
  if (!Array.isArray(fix)) throw new FixError('a fix is an array of operations');
  const holder = new JsonObject([['', parseJsonText(text)]]);
  for (const op of fix) applyOperation(holder, op);
  return `${stringifyJsonText(holder.members[0][1])}\n`;
}

// The Fix button: applies d's fix to the checked document (the editor's text,
// or the file too large for the editor) and checks the result. Refused when
// the editor has changed since this check: the fix was made for what was checked.
async function applyDiagnosticFix(v, d) {
  if (state.view !== v) throw new FixError('a newer check replaced this result');
  const editor = $('doc-text');
  let text;
  if (typeof v.input === 'string') {
    // (A fixed document too large for the editor was checked from its text: the editor is empty.)
    if (editor.value !== v.input && !(editor.value === '' && v.input.length > TEXTAREA_MAX_BYTES)) {
      throw new FixError('the document in the editor changed since this check: check it again to get its fixes');
    }
    text = v.input;
  } else {
    if (editor.value !== '') throw new FixError('the editor holds another document than the checked file: check it again');
    text = await v.input.text();
  }
  const fixed = applyFixToText(text, d.fix);
  if (state.view !== v) throw new FixError('a newer check replaced this result');
  const label = v.source.label.endsWith(' (fixed)') ? v.source.label : `${v.source.label} (fixed)`;
  $('example-select').value = '';
  if (fixed.length <= TEXTAREA_MAX_BYTES) {
    editor.value = fixed;
    setDocSource(`${label}: ${d.code} fixed`);
  } else {
    editor.value = '';
    setDocSource(`${label}: ${d.code} fixed (too large for the editor)`);
  }
  return runCheck(fixed, { label, kind: 'text', fixed: d.code }, v.mode === 'plan' ? 'plan' : undefined);
}

// ---- Showing a run -------------------------------------------------------------

async function onResult(msg, pending, receivedAt) {
  const b0 = performance.now();
  const v = buildView(msg, pending.source, pending.input);
  const buildMs = performance.now() - b0;
  state.view = v;
  const errors = v.diagnostics.filter((d) => d.severity === 'error').length;
  const invalid = v.diagnostics.some((d) => d.code === 'invalid-document');
  v.endToEndMs = Number.NaN;
  renderDiagnostics(v);
  renderTree(v);
  renderMesh(v);
  renderSummary(v);
  updatePlanTab(v);
  const renderMs = performance.now() - b0 - buildMs;
  await nextFrame();
  v.endToEndMs = performance.now() - pending.t0;
  if (state.pending !== pending) return; // superseded while painting
  renderSummary(v); // now with the end-to-end time
  const size = fmtBytes(v.bytes);
  const detail = `${pending.source.label} · ${size} · engine ${fmtMs(v.timing.engineMs)} · end to end ${fmtMs(v.endToEndMs)}`;
  if (invalid) setStatus('invalid', 'Invalid document: it was refused as a whole.', detail);
  else if (errors) setStatus('errors', `${plural(errors, 'error')} found. Open a group, then click a diagnostic to find its module.`, detail);
  else {
    const o = v.owned;
    let text = o ? `Plan OK: ${plural(v.ownership.owners.length, 'owner')}, ${plural(o.owned_names_count, 'owned parameter name')}, ${plural(o.aliases_count, 'alias', 'aliases')}` : 'Plan OK';
    const warnings = v.diagnostics.filter((d) => d.severity === 'warning').length;
    if (v.plan) text += `; planned ${plural(v.plan.entryCount, 'entry', 'entries')}`;
    text += warnings ? ` (${plural(warnings, 'warning')}).` : '.';
    setStatus('ok', text, detail);
  }
  $('status').dataset.mode = v.mode;
  $('export-result').hidden = false;
  const status = $('status');
  status.dataset.engineMs = v.timing.engineMs.toFixed(3);
  status.dataset.e2eMs = v.endToEndMs.toFixed(3);
  status.dataset.doc = pending.source.label;
  const run = {
    id: pending.id,
    source: pending.source.label,
    bytes: v.bytes,
    ok: v.result.ok,
    mode: v.mode,
    planEntries: v.plan ? v.plan.entryCount : null,
    diagnostics: v.diagnostics.length,
    engineMs: v.timing.engineMs,
    workerMs: v.timing.workerMs,
    parseMs: v.timing.parseMs,
    treeMs: v.timing.treeMs,
    endToEndMs: v.endToEndMs,
    receivedMs: receivedAt - pending.t0, // the result message arrived (its copy included)
    buildMs,
    renderMs,
  };
  state.lastRun = run;
  finishPending(run);
}

// ---- Loading documents -------------------------------------------------------

function setDocSource(text) {
  $('doc-source').textContent = text;
}

function checkEditor(label = 'the pasted document') {
  const text = $('doc-text').value;
  setDocSource(label === 'the pasted document' ? 'Pasted / edited text' : label);
  return runCheck(text, { label, kind: 'text' });
}

async function loadFile(file) {
  if (!file) return null;
  $('example-select').value = '';
  if (file.size <= TEXTAREA_MAX_BYTES) {
    const text = await file.text();
    $('doc-text').value = text;
    $('doc-text').scrollTop = 0;
    setDocSource(`${file.name} · ${fmtBytes(file.size)}`);
    return runCheck(text, { label: file.name, kind: 'file' });
  }
  // Large: the worker reads the file itself; the editor stays empty.
  $('doc-text').value = '';
  setDocSource(`${file.name} · ${fmtBytes(file.size)} (too large for the editor: checked from the file)`);
  return runCheck(file, { label: file.name, kind: 'file' });
}

function fetchExample(name) {
  if (!state.examples.has(name)) {
    const p = fetch(`./examples/${encodeURIComponent(name)}`).then((r) => {
      if (!r.ok) throw new Error(`HTTP ${r.status}`);
      return r.text();
    });
    p.catch(() => state.examples.delete(name));
    state.examples.set(name, p);
  }
  return state.examples.get(name);
}

async function loadExample(name) {
  if (!name) return null;
  let text;
  try {
    text = await fetchExample(name);
  } catch (err) {
    setStatus('failed', `Could not load the example ${name}.`, String(err.message ?? err));
    return null;
  }
  $('doc-text').value = text;
  $('doc-text').scrollTop = 0;
  setDocSource(`Example: ${name}`);
  return runCheck(text, { label: name, kind: 'example' });
}

async function loadExampleList() {
  const select = $('example-select');
  try {
    const r = await fetch('./examples/index.json');
    if (!r.ok) throw new Error(`HTTP ${r.status}`);
    const names = await r.json();
    for (const name of names) {
      if (typeof name !== 'string') continue;
      select.append(h('option', { value: name, text: name.replace(/\.json$/, '') }));
      fetchExample(name).catch(() => {}); // keep them in memory: works offline from now on
    }
    select.dataset.loaded = String(names.length);
  } catch {
    select.append(h('option', { value: '', disabled: true, text: '(no bundled examples)' }));
    select.dataset.loaded = '0';
  }
}

// ---- Wiring ------------------------------------------------------------------

function wire() {
  $('example-select').addEventListener('change', (e) => loadExample(e.target.value));
  $('file-input').addEventListener('change', (e) => {
    const file = e.target.files && e.target.files[0];
    loadFile(file).finally(() => { e.target.value = ''; });
  });
  $('check-button').addEventListener('click', () => {
    $('example-select').value = '';
    checkEditor();
  });
  const editor = $('doc-text');
  editor.addEventListener('keydown', (e) => {
    if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) { e.preventDefault(); $('example-select').value = ''; checkEditor(); }
  });
  editor.addEventListener('paste', () => {
    // Check what was pasted once the editor holds it.
    setTimeout(() => { $('example-select').value = ''; checkEditor(); }, 0);
  });
  $('find-form').addEventListener('submit', (e) => {
    e.preventDefault();
    const v = state.view;
    const input = $('find-input');
    const fqn = input.value.trim();
    if (!v) return;
    const ok = revealFqn(v, fqn === '(root)' ? '' : fqn);
    input.classList.toggle('not-found', !ok);
    input.title = ok ? '' : `No module path “${fqn}”`;
  });
  $('export-result').addEventListener('click', exportResult);

  // The tabs (arrow keys move between them, as in a tablist).
  const tabs = [...document.querySelectorAll('.tabs [role=tab]')];
  for (const tab of tabs) {
    tab.addEventListener('click', () => showView(tab.dataset.view));
    tab.addEventListener('keydown', (e) => {
      if (e.key !== 'ArrowRight' && e.key !== 'ArrowLeft') return;
      e.preventDefault();
      const next = tabs[(tabs.indexOf(tab) + (e.key === 'ArrowRight' ? 1 : tabs.length - 1)) % tabs.length];
      showView(next.dataset.view);
      next.focus();
    });
  }
  let planFilterTimer = 0;
  $('plan-filter').addEventListener('input', (e) => {
    clearTimeout(planFilterTimer);
    planFilterTimer = setTimeout(() => { if (state.view && state.view.plan) renderPlanTable(state.view, e.target.value); }, 120);
  });
  let recordsTimer = 0;
  $('records-filter').addEventListener('input', () => {
    clearTimeout(recordsTimer);
    recordsTimer = setTimeout(() => { if (state.view && state.view.plan) renderRecords(state.view); }, 120);
  });
  $('records-collective').addEventListener('change', () => { if (state.view && state.view.plan) renderRecords(state.view); });
  // The heatmap's cells are sized to the panel: redraw it when the window is resized.
  let resizeTimer = 0;
  let lastWidth = window.innerWidth;
  window.addEventListener('resize', () => {
    clearTimeout(resizeTimer);
    resizeTimer = setTimeout(() => {
      if (window.innerWidth === lastWidth) return;
      lastWidth = window.innerWidth;
      const v = state.view;
      if (v && v.memory && state.viewName === 'plan' && !state.planDirty) renderMemory(v);
      else if (v && v.memory) state.planDirty = true;
    }, 150);
  });
  $('collapse-all').addEventListener('click', () => {
    for (const node of nodes.values()) if (node.fqn !== '' && node.expanded) collapse(node);
  });

  // Drag and drop anywhere on the page.
  let depth = 0;
  const overlay = $('drop-overlay');
  const hasFiles = (e) => e.dataTransfer && Array.from(e.dataTransfer.types || []).includes('Files');
  window.addEventListener('dragenter', (e) => { if (!hasFiles(e)) return; e.preventDefault(); depth++; overlay.hidden = false; });
  window.addEventListener('dragover', (e) => { if (!hasFiles(e)) return; e.preventDefault(); e.dataTransfer.dropEffect = 'copy'; });
  window.addEventListener('dragleave', (e) => { if (!hasFiles(e)) return; depth = Math.max(0, depth - 1); if (!depth) overlay.hidden = true; });
  window.addEventListener('drop', (e) => {
    if (!hasFiles(e)) return;
    e.preventDefault();
    depth = 0;
    overlay.hidden = true;
    const file = e.dataTransfer.files && e.dataTransfer.files[0];
    if (file) loadFile(file);
  });
}

// A small hook for tests and benchmarks (the page works without it).
window.shardplanApp = {
  checkText: (text, label = 'text') => runCheck(String(text), { label, kind: 'text' }),
  checkFile: (file) => loadFile(file),
  reveal: (fqn) => (state.view ? revealFqn(state.view, fqn) : false),
  planText: (text, label = 'text') => runCheck(String(text), { label, kind: 'text' }, 'plan'),
  applyFix: (text, fix) => applyFixToText(String(text), fix),
  showView: (name) => showView(name),
  get lastRun() { return state.lastRun; },
  get ready() { return state.ready; },
};

wire();
startWorker();
loadExampleList();
