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

// Python fnmatch.fnmatchcase as a RegExp ('*' crosses dots).
function globToRegExp(glob) {
  let re = '';
  for (let i = 0; i < glob.length; i++) {
    const ch = glob[i];
    if (ch === '*') re += '[\\s\\S]*';
    else if (ch === '?') re += '[\\s\\S]';
    else if (ch === '[') {
      let j = i + 1;
      if (j < glob.length && glob[j] === '!') j++;
      if (j < glob.length && glob[j] === ']') j++;
      while (j < glob.length && glob[j] !== ']') j++;
      if (j >= glob.length) { re += '\\['; continue; }
      let body = glob.slice(i + 1, j);
      i = j;
      let neg = false;
      if (body.startsWith('!')) { neg = true; body = body.slice(1); }
      body = body.replace(/\\/g, '\\\\').replace(/\^/g, '\\^').replace(/\[/g, '\\[').replace(/\]/g, '\\]');
      re += `[${neg ? '^' : ''}${body}]`;
    } else re += ch.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
  }
  try { return new RegExp(`^(?:${re})$`, 'u'); } catch { return /(?!)/; }
}

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
  pending: null,   // {id, t0, source, resolve}
  examples: new Map(), // name -> Promise<text>
  view: null,      // the current checked document's view model
  lastRun: null,
};

// ---- Status ----------------------------------------------------------------

function setStatus(stateName, text, detail = '') {
  const el = $('status');
  el.dataset.state = stateName;
  $('status-text').textContent = text;
  $('status-detail').textContent = detail;
}

// ---- Worker ----------------------------------------------------------------

function startWorker() {
  let worker;
  try {
    worker = new Worker('./worker.mjs', { type: 'module' });
  } catch (err) {
    setStatus('failed', 'This browser cannot start the checker (module workers are required).', String(err));
    return;
  }
  worker.onmessage = (event) => onWorkerMessage(event.data);
  worker.onerror = (event) => {
    event.preventDefault?.();
    setStatus('failed', 'The checker failed to start.', event.message || 'worker error');
    $('engine').textContent = 'Engine unavailable';
    if (state.pending) finishPending(null);
  };
  state.worker = worker;
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
function runCheck(input, source) {
  if (!state.worker) return Promise.resolve(null);
  if (state.pending) state.pending.resolve(null); // superseded
  const id = state.nextId++;
  return new Promise((resolve) => {
    state.pending = { id, source, resolve, t0: 0 };
    setStatus('checking', `Checking ${source.label}…`, state.ready ? '' : 'waiting for the engine to load');
    $('export-result').hidden = true;
    $('status').dataset.run = String(id);
    $('check-button').disabled = true;
    document.body.classList.add('busy');
    state.pending.t0 = performance.now();
    if (typeof input === 'string') state.worker.postMessage({ type: 'check', id, text: input });
    else state.worker.postMessage({ type: 'check', id, file: input });
  });
}

// ---- Result -> view model ------------------------------------------------------

function buildView(msg, source) {
  const { result, tree } = msg;
  const diagnostics = Array.isArray(result.diagnostics) ? result.diagnostics : [];
  const owned = result.ok && result.owned ? result.owned : null;
  const v = {
    runId: msg.id,
    source,
    result,
    owned,
    tree,
    treeError: msg.treeError,
    diagnostics,
    bytes: msg.bytes,
    timing: msg.timing,
    idIndex: null,              // module id -> index, built when first needed
    nameIndex: new Map(),       // child/parameter name -> index in tree.names
    firstPathCache: new Map(),
    providerSet: new Set(),
    familyFirst: new Set(),
    nativeRegex: [],
    declaredParams: new Map(),  // owner FQN -> declared params (failed checks only)
    aliasOf: new Map(),         // alias full name -> canonical
    aliasesOf: new Map(),       // canonical -> [alias]
    aliasesByModule: new Map(), // module path -> [alias full names]
    diagByFqn: new Map(),       // fqn -> [diagnostic index]
    errorAncestors: new Set(),
  };
  if (tree) {
    tree.names.forEach((name, k) => v.nameIndex.set(name, k));
    for (const [fqn] of tree.providers) v.providerSet.add(fqn);
    for (let i = 0; i < tree.n; i++) {
      if (tree.fam[i] === 2 && firstPathOf(v, i) !== null) v.familyFirst.add(firstPathOf(v, i));
    }
    tree.natives.forEach((patterns, r) => {
      for (const g of patterns) v.nativeRegex.push({ request: r, glob: g, re: globToRegExp(g) });
    });
  }

  // The declared owners' params, for a failed check (the engine lists no owners then).
  if (!owned && tree) {
    for (const [fqn, params] of tree.providers) if (!v.declaredParams.has(fqn)) v.declaredParams.set(fqn, params);
    for (let i = 0; i < tree.n; i++) {
      if (tree.fam[i] === 2 && firstPathOf(v, i) !== null) v.declaredParams.set(firstPathOf(v, i), tree.famParams[i] ?? null);
    }
  }
  if (owned && Array.isArray(owned.aliases)) {
    for (const pair of owned.aliases) {
      const [canonical, alias] = pair;
      v.aliasOf.set(alias, canonical);
      if (!v.aliasesOf.has(canonical)) v.aliasesOf.set(canonical, []);
      v.aliasesOf.get(canonical).push(alias);
      const dot = alias.lastIndexOf('.');
      const mod = dot < 0 ? '' : alias.slice(0, dot);
      if (!v.aliasesByModule.has(mod)) v.aliasesByModule.set(mod, []);
      v.aliasesByModule.get(mod).push(alias);
    }
  }
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

// The module a diagnostic is about: its fqn, or else the module its JSON
// pointer names (/providers/sharding/<fqn>/..., /plan/modules/<fqn>/...,
// /modules/<module id>/... -> the module's first path), or else the module
// holding its parameter.
function diagnosticTarget(v, d) {
  if (typeof d.fqn === 'string') return d.fqn;
  const t = pointerTokens(d.pointer);
  if (t.length >= 3 && t[0] === 'providers' && t[1] === 'sharding') return t[2];
  if (t.length >= 3 && t[0] === 'plan' && t[1] === 'modules') return t[2];
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

// The owner kind at a path. After a passing check the engine's owners
// (owned.specs) decide who owns; the document says which kind. After a
// failed check there are no owners from the engine: the declared model
// providers and family owners are shown, and native requests where their
// globs match.
function kindOf(v, fqn) {
  if (v.owned && !hasOwn(v.owned.specs, fqn)) return 'unowned';
  if (v.familyFirst.has(fqn)) return 'family';
  if (v.providerSet.has(fqn)) return 'provider';
  if (v.owned) return 'native';
  return nativeMatch(v, fqn) ? 'native' : 'unowned';
}

function nativeMatch(v, fqn) {
  for (const n of v.nativeRegex) if (n.re.test(fqn)) return n;
  return null;
}

// The params of the layout owned at a path, or null when nothing is owned
// there (or, after a failed check, for a native match: its layout is not
// the module's until the check passes).
function ownerLayoutParams(v, fqn, kind) {
  if (kind === 'unowned' || (!v.owned && kind === 'native')) return null;
  if (v.owned) return hasOwn(v.owned.specs, fqn) ? v.owned.specs[fqn].params ?? {} : null;
  return v.declaredParams.get(fqn) ?? null;
}

// The owner's params at a path: the engine's layout when the check passed,
// the declared one otherwise.
function ownerParamsAt(v, fqn) {
  if (v.owned) {
    const spec = v.owned.specs && hasOwn(v.owned.specs, fqn) ? v.owned.specs[fqn] : null;
    return spec ? spec.params : null;
  }
  return v.declaredParams.get(fqn) ?? null;
}

// Where a parameter (by full name) is placed: {owner, axes} from the owner
// whose layout names it (the longest owner FQN that is a prefix), or null.
function placementOf(v, full) {
  if (typeof full !== 'string') return null;
  let dot = full.lastIndexOf('.');
  for (;;) {
    const fqn = dot < 0 ? '' : full.slice(0, dot);
    const local = dot < 0 ? full : full.slice(dot + 1);
    const params = ownerParamsAt(v, fqn);
    if (params && hasOwn(params, local)) return { owner: fqn, axes: params[local] };
    if (dot < 0) return null;
    dot = dot === 0 ? -1 : full.lastIndexOf('.', dot - 1);
  }
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

// Parameter rows shown under a module: its owned layout's parameters, then
// tied aliases that live directly in it.
function paramRows(v, fqn, kind) {
  const rows = [];
  const seen = new Set();
  const params = ownerLayoutParams(v, fqn, kind);
  if (params) {
    for (const [local, axes] of Object.entries(params)) {
      const full = joinFqn(fqn, local);
      seen.add(full);
      rows.push({ local, full, axes, aliases: v.aliasesOf.get(full) ?? [], canonical: v.aliasOf.get(full) ?? null });
    }
  }
  for (const alias of v.aliasesByModule.get(fqn) ?? []) {
    if (seen.has(alias)) continue;
    const canonical = v.aliasOf.get(alias);
    const placed = placementOf(v, canonical);
    const dot = alias.lastIndexOf('.');
    rows.push({
      local: dot < 0 ? alias : alias.slice(dot + 1),
      full: alias,
      axes: placed ? placed.axes : null,
      aliases: [],
      canonical,
      inherited: true,
    });
  }
  return rows;
}

// ---- Rendering: summary, mesh, diagnostics -------------------------------------

function renderSummary(v) {
  const el = $('summary');
  el.replaceChildren();
  const t = v.tree;
  const errors = v.diagnostics.filter((d) => d.severity === 'error').length;
  const warnings = v.diagnostics.filter((d) => d.severity === 'warning').length;

  const counts = { provider: null, family: null, native: null };
  if (v.owned && v.owned.specs) {
    counts.provider = 0; counts.family = 0; counts.native = 0;
    for (const fqn of Object.keys(v.owned.specs)) counts[kindOf(v, fqn)] = (counts[kindOf(v, fqn)] ?? 0) + 1;
  } else if (t) {
    counts.family = v.familyFirst.size;
    counts.provider = [...v.providerSet].filter((f) => !v.familyFirst.has(f)).length;
  }
  const ownerTotal = v.owned && v.owned.specs ? Object.keys(v.owned.specs).length : null;

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
          title: counts[k] === null ? `${KIND_LABEL[k]}: known when the check passes` : KIND_LABEL[k],
        }, h('span', { class: 'swatch' }), h('strong', { text: counts[k] === null ? '–' : fmtInt(counts[k]) }),
        ` ${KIND_LABEL[k].toLowerCase()}`))),
      ownerTotal === null && t ? h('span', { class: 'sum-note', text: 'declared; the owners are final when the check passes' }) : null),
    item('owned-names', 'Owned parameter names', v.owned ? fmtInt(v.owned.owned_names_count) : '–',
      v.owned ? null : 'when the check passes'),
    item('aliases', 'Tied aliases', v.owned ? fmtInt(v.owned.aliases.length) : '–'),
    item('errors', 'Errors', fmtInt(errors), warnings ? plural(warnings, 'warning') : null),
    item('time', 'Check time', fmtMs(v.timing.engineMs),
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
  if (!n) {
    el.append(h('div', { class: 'all-clear', 'data-testid': 'no-diagnostics' },
      h('span', { class: 'check-icon', 'aria-hidden': 'true' }),
      h('div', null, h('strong', { text: 'No diagnostics.' }), ' Every owner’s layout is consistent and every parameter is covered.')));
    return;
  }
  const list = h('ol', { class: 'diag-list', 'data-testid': 'diagnostic-list' });
  const renderOne = (d, i) => {
    const target = d.__target;
    const field = (label, value, cls) => (value === null || value === undefined ? null
      : h('div', { class: `diag-field ${cls}` }, h('span', { class: 'diag-label', text: label }),
        h('code', { text: value === '' ? (label === 'FQN' ? '"" (root)' : '"" (whole document)') : value })));
    const li = h('li', {
      class: `diag sev-${d.severity}${target === null ? '' : ' clickable'}`,
      'data-testid': 'diagnostic',
      'data-index': i,
      'data-code': d.code,
      'data-fqn': d.fqn ?? undefined,
      'data-pointer': d.pointer ?? undefined,
      'data-target': target ?? undefined,
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
    h('div', { class: 'diag-fields' },
      field('FQN', d.fqn, 'f-fqn'),
      field('parameter', d.parameter, 'f-param'),
      field('pointer', d.pointer, 'f-pointer')));
    const activate = () => onDiagnosticClick(v, li, d);
    li.addEventListener('click', activate);
    li.addEventListener('keydown', (e) => { if (e.key === 'Enter' || e.key === ' ') { e.preventDefault(); activate(); } });
    return li;
  };
  // Thousands of diagnostics stay cheap: render them a page at a time.
  let shown = 0;
  const more = h('button', { type: 'button', class: 'small diag-more', 'data-testid': 'diagnostic-more' });
  const showMore = () => {
    const upTo = Math.min(n, shown + DIAG_PAGE);
    const frag = document.createDocumentFragment();
    for (let i = shown; i < upTo; i++) frag.append(renderOne(v.diagnostics[i], i));
    list.append(frag);
    shown = upTo;
    more.textContent = `Show ${fmtInt(Math.min(DIAG_PAGE, n - shown))} more of ${fmtInt(n - shown)} remaining`;
    more.hidden = shown >= n;
  };
  more.addEventListener('click', showMore);
  showMore();
  el.append(list, more);
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
  const rows = paramRows(v, fqn, kind);
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
  let source = 'not an owner (an owner above it, if any, covers its parameters)';
  if (node.kind === 'provider') source = h('code', { text: `providers.sharding[${JSON.stringify(node.fqn)}]` });
  else if (node.kind === 'family') source = 'family member (family.sharding), at its first path';
  else if (node.kind === 'native') {
    const n = nativeMatch(v, node.fqn);
    source = n ? `providers.native[${n.request}], pattern “${n.glob}”` : 'native request';
    if (!v.owned) source += ' (glob match: a failed check lists no owners)';
  }
  const row = (label, value) => h('div', { class: 'drow' }, h('dt', { text: label }), h('dd', null, value));
  const code = (x) => h('code', { text: x });
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
    state.worker.postMessage({ type: 'owner', id: v.runId, fqn: node.fqn, module: t.ids[node.mi], kind: node.kind });
  }
  const diag = v.diagByFqn.get(node.fqn);
  if (diag) {
    el.append(h('h3', { text: 'Diagnostics' }), h('ul', { class: 'ddiags' }, diag.map((i) => h('li', null,
      h('code', { class: 'diag-code', text: v.diagnostics[i].code }), ' ', v.diagnostics[i].message))));
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
  box.append(h('h3', { text: msg.declared ? 'Declared ports' : 'Ports' }));
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

// ---- Showing a run -------------------------------------------------------------

async function onResult(msg, pending, receivedAt) {
  const b0 = performance.now();
  const v = buildView(msg, pending.source);
  const buildMs = performance.now() - b0;
  state.view = v;
  const errors = v.diagnostics.filter((d) => d.severity === 'error').length;
  const invalid = v.diagnostics.some((d) => d.code === 'invalid-document');
  v.endToEndMs = Number.NaN;
  renderDiagnostics(v);
  renderTree(v);
  renderMesh(v);
  renderSummary(v);
  const renderMs = performance.now() - b0 - buildMs;
  await nextFrame();
  v.endToEndMs = performance.now() - pending.t0;
  if (state.pending !== pending) return; // superseded while painting
  renderSummary(v); // now with the end-to-end time
  const size = fmtBytes(v.bytes);
  const detail = `${pending.source.label} · ${size} · engine ${fmtMs(v.timing.engineMs)} · end to end ${fmtMs(v.endToEndMs)}`;
  if (invalid) setStatus('invalid', 'Invalid document: it was refused as a whole.', detail);
  else if (errors) setStatus('errors', `${plural(errors, 'error')} found. Click a diagnostic to find its module.`, detail);
  else {
    const o = v.owned;
    setStatus('ok', o ? `Plan OK: ${plural(Object.keys(o.specs).length, 'owner')}, ${plural(o.owned_names_count, 'owned parameter name')}, ${plural(o.aliases.length, 'alias', 'aliases')}.` : 'Plan OK.', detail);
  }
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
  get lastRun() { return state.lastRun; },
  get ready() { return state.ready; },
};

wire();
startWorker();
loadExampleList();
