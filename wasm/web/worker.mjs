// The checker's worker: loads the engine (./shardplan/index.mjs, the npm
// package's wrapper), checks documents and builds the compact module tree the
// page renders. Everything stays in this browser tab: nothing is sent anywhere.
//
// Messages in:
//   {type: 'check', id, text, mode?} or {type: 'check', id, file, mode?}   (a File/Blob, read here)
//     mode 'plan' plans the document (Shardplan.plan, as `shardplan plan`); without it the
//     document is planned when it has `templates` or `overrides` (what `plan` is for, and
//     `check` ignores them) and checked otherwise.
//   {type: 'owner', id, fqn, module}   the full layout of one owner of run `id`
//   {type: 'export', id}               the full result JSON of run `id`, as a Blob
// Messages out:
//   {type: 'ready', version, abiVersion, loadMs} | {type: 'load-error', message}
//   {type: 'result', id, result, tree, treeError, bytes, timing, mode, plan}
//   {type: 'owner', id, fqn, layout, parallel, required, declared}
//   {type: 'export', id, blob}
//   {type: 'error', id, message}
//
// `result` is the engine's shardplan.result.v1 object with `owned` trimmed to
// what the page draws (a DeepSeek-sized result is 14 MB of JSON; copying all
// of it to the page would block the page for a few hundred ms):
//   owned.specs: {FQN: {params}} (the layouts' other ports come with 'owner'),
//   owned.parallel and owned.aliases as they are, owned.owned_names_count
//   instead of owned.owned_names, owned.required_count instead of
//   owned.required. The untrimmed result stays here ('export', 'owner').
// timing: {readMs, engineMs, parseMs, treeMs, workerMs}, performance.now() in
// this worker; engineMs is the engine's check (or plan) alone (Shardplan.check:
// parse, check and the result JSON).
//
// mode: 'check' or 'plan' (what the engine ran). plan: null when the engine did
// not plan or made no plan (an invalid document, owners that do not check, a
// document with a `plan` of its own), else a compact summary of the result's
// planning keys (the page draws it; the full result stays here):
//   entries: [{fqn, provenance: [..], params: {local: {axis: placement}}}] in
//     plan order, the first PLAN_ENTRIES_MAX; entryCount: all of them;
//     kinds: {owned, template, override}: entries by provenance kind;
//   memory: null or {devices, unsharded_bytes, min_bytes, max_bytes,
//     mean_bytes, max_device, per_device_bytes: Float64Array | null};
//   collectives: {collective: {axis: count}};
//   records: the first PLAN_RECORDS_MAX communication records; recordCount;
//   mesh: [[axis, size]] from the document.

const PLAN_ENTRIES_MAX = 20_000; // plan entries posted to the page (a DeepSeek-sized model has 60,486 modules)
const PLAN_RECORDS_MAX = 2_000;  // communication records posted to the page

let enginePromise = null;
let last = null; // {id, result, doc}: the latest run, for 'owner' and 'export'

function engine() {
  if (!enginePromise) {
    const t0 = performance.now();
    enginePromise = import('./shardplan/index.mjs')
      .then((mod) => mod.load())
      .then((sp) => {
        postMessage({
          type: 'ready',
          version: String(sp.version ?? ''),
          abiVersion: sp.abiVersion,
          loadMs: performance.now() - t0,
        });
        return sp;
      });
    enginePromise.catch((err) => postMessage({ type: 'load-error', message: describe(err) }));
  }
  return enginePromise;
}

function describe(err) {
  if (err && typeof err === 'object') {
    const name = err.codeName ? `${err.codeName}: ` : '';
    return `${name}${err.message ?? String(err)}`;
  }
  return String(err);
}

const hasOwn = (o, k) => Object.prototype.hasOwnProperty.call(o, k);
const isObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);

// The `params` map of a layout as plain {local: {axis: placement}} (strings
// only), or null when the layout declares none.
function layoutParams(layout) {
  if (!isObject(layout) || !isObject(layout.params)) return null;
  const out = {};
  for (const [local, placements] of Object.entries(layout.params)) {
    const axes = {};
    if (isObject(placements)) {
      for (const [axis, p] of Object.entries(placements)) axes[axis] = typeof p === 'string' ? p : JSON.stringify(p);
    }
    out[local] = axes;
  }
  return out;
}

function countKeys(o) {
  let count = 0;
  if (isObject(o)) for (const _ in o) count++; // eslint-disable-line no-unused-vars
  return count;
}

function familyLayout(m) {
  if (!isObject(m) || !isObject(m.family) || m.family.sharding == null) return null;
  return isObject(m.family.cached) && m.family.cached.sharding != null ? m.family.cached.sharding : m.family.sharding;
}

// Builds the page's view of the module graph from the parsed document, as
// flat arrays (typed arrays travel to the page without a copy):
//   ids[i], types[typeOf[i]] (a table of the distinct types), names (a table of
//   the distinct child and parameter names); the children of module i are
//   childName/childMod[childStart[i] .. childStart[i+1]) and its own
//   parameters paramName[paramStart[i] .. paramStart[i+1]);
//   fam[i]: 0 no family, 1 family whose sharding is null, 2 family owner;
//   famParams{i: params} (the declared family layout's params), par{i: spec};
//   root; firstParent[i], firstName[i]: where module i is first reached in
//   pre-order (parent module and child name; -1 for the root, -2 when
//   unreachable); subtree[i]: the number of module paths at and under i (a
//   double: shared modules multiply paths).
// Best effort: the engine is the judge of validity. Anything odd gives a
// partial tree, never an exception from here.
function buildTree(doc) {
  if (!isObject(doc)) throw new Error('the document is not a JSON object');
  const mods = isObject(doc.modules) ? doc.modules : {};
  const ids = Object.keys(mods);
  const n = ids.length;
  const index = new Map();
  ids.forEach((id, i) => index.set(id, i));

  const names = [];
  const nameIndex = new Map();
  const nameOf = (s) => {
    let k = nameIndex.get(s);
    if (k === undefined) { k = names.length; names.push(s); nameIndex.set(s, k); }
    return k;
  };
  const types = [''];
  const typeIndex = new Map([['', 0]]);
  const typeOf = new Int32Array(n);
  const childStart = new Int32Array(n + 1);
  const paramStart = new Int32Array(n + 1);
  const childName = [];
  const childMod = [];
  const paramName = [];
  const fam = new Uint8Array(n);
  const famParams = {};
  const par = {};
  let familyOwners = 0;

  const EMPTY = {};
  for (let i = 0; i < n; i++) {
    const m = isObject(mods[ids[i]]) ? mods[ids[i]] : EMPTY;
    const type = typeof m.type === 'string' ? m.type : '';
    let t = typeIndex.get(type);
    if (t === undefined) { t = types.length; types.push(type); typeIndex.set(type, t); }
    typeOf[i] = t;
    childStart[i] = childName.length;
    const children = m.children;
    if (isObject(children)) {
      for (const name in children) {
        const ci = index.get(children[name]);
        if (ci !== undefined) {
          childName.push(nameOf(name));
          childMod.push(ci);
        }
      }
    }
    paramStart[i] = paramName.length;
    if (isObject(m.params)) for (const name in m.params) paramName.push(nameOf(name));
    if (isObject(m.family)) {
      fam[i] = m.family.sharding != null ? 2 : 1;
      if (fam[i] === 2) {
        familyOwners++;
        famParams[i] = layoutParams(familyLayout(m));
      }
    }
    if (isObject(m.parallel)) {
      const p = m.parallel;
      par[i] = {
        binding_kind: typeof p.binding_kind === 'string' ? p.binding_kind : '?',
        axes: Array.isArray(p.axes) ? p.axes.filter((a) => typeof a === 'string') : [],
      };
    }
  }
  childStart[n] = childName.length;
  paramStart[n] = paramName.length;
  const childNameA = Int32Array.from(childName);
  const childModA = Int32Array.from(childMod);

  const root = typeof doc.root === 'string' && index.has(doc.root) ? index.get(doc.root) : -1;

  // First paths: a pre-order walk that does not descend into a module twice
  // (its first visit covers its whole subtree, so the descendants' first
  // paths all lie there). Iterative: deep chains must not overflow the stack.
  const firstParent = new Int32Array(n).fill(-2);
  const firstName = new Int32Array(n).fill(-1);
  const subtree = new Float64Array(n);
  const state = new Uint8Array(n); // 0 new, 1 on the stack, 2 done
  let cycle = false;
  let reachable = 0;
  if (root >= 0) {
    firstParent[root] = -1;
    state[root] = 1;
    const stackMod = [root];
    const stackPos = [childStart[root]];
    while (stackMod.length) {
      const top = stackMod.length - 1;
      const mi = stackMod[top];
      const k = stackPos[top];
      if (k < childStart[mi + 1]) {
        stackPos[top] = k + 1;
        const ci = childModA[k];
        if (state[ci] === 1) { cycle = true; continue; }
        if (state[ci] === 2) continue;
        firstParent[ci] = mi;
        firstName[ci] = childNameA[k];
        state[ci] = 1;
        stackMod.push(ci);
        stackPos.push(childStart[ci]);
      } else {
        let count = 1;
        for (let j = childStart[mi]; j < childStart[mi + 1]; j++) if (state[childModA[j]] === 2) count += subtree[childModA[j]];
        subtree[mi] = count;
        state[mi] = 2;
        reachable++;
        stackMod.pop();
        stackPos.pop();
      }
    }
  }

  const mesh = [];
  if (isObject(doc.mesh)) {
    for (const [axis, size] of Object.entries(doc.mesh)) mesh.push([axis, typeof size === 'number' ? size : Number.NaN]);
  }
  const providers = [];
  if (isObject(doc.providers) && isObject(doc.providers.sharding)) {
    for (const [fqn, layout] of Object.entries(doc.providers.sharding)) providers.push([fqn, layoutParams(layout)]);
  }
  const natives = [];
  if (isObject(doc.providers) && Array.isArray(doc.providers.native)) {
    for (const req of doc.providers.native) {
      natives.push(isObject(req) && Array.isArray(req.match) ? req.match.filter((g) => typeof g === 'string') : []);
    }
  }
  return {
    n,
    ids,
    types,
    typeOf,
    names,
    childStart,
    childName: childNameA,
    childMod: childModA,
    paramStart,
    paramName: Int32Array.from(paramName),
    fam,
    famParams,
    par,
    root,
    firstParent,
    firstName,
    subtree,
    cycle,
    reachable,
    pathCount: root >= 0 ? subtree[root] : 0,
    mesh,
    providers,
    natives,
    familyOwners,
    parameterCount: countKeys(doc.parameters),
    hasPlan: isObject(doc.plan),
    planRequested: wantsPlan(doc),
  };
}

function trimResult(result) {
  const out = { schema: result.schema, ok: result.ok, diagnostics: result.diagnostics };
  const owned = result.owned;
  if (isObject(owned)) {
    const specs = {};
    if (isObject(owned.specs)) {
      for (const [fqn, layout] of Object.entries(owned.specs)) specs[fqn] = { params: isObject(layout) ? layout.params : null };
    }
    out.owned = {
      specs,
      parallel: isObject(owned.parallel) ? owned.parallel : {},
      aliases: Array.isArray(owned.aliases) ? owned.aliases : [],
      owned_names_count: Array.isArray(owned.owned_names) ? owned.owned_names.length : 0,
      required_count: isObject(owned.required) ? Object.keys(owned.required).length : 0,
    };
  }
  return out;
}

// Whether a document asks to be planned: it has templates or overrides.
function wantsPlan(doc) {
  return isObject(doc) && (hasOwn(doc, 'templates') || hasOwn(doc, 'overrides'));
}

const str = (x) => (typeof x === 'string' ? x : JSON.stringify(x));
const num = (x) => (typeof x === 'number' ? x : Number.NaN);

// The compact summary of a planned result (see the top of this file), or null when no plan was made.
function planSummary(result, doc) {
  if (!isObject(result) || !isObject(result.plan) || !isObject(result.plan.modules)) return null;
  const modules = result.plan.modules;
  const provenance = isObject(result.provenance) ? result.provenance : {};
  const entries = [];
  const kinds = { owned: 0, template: 0, override: 0 };
  let entryCount = 0;
  for (const fqn in modules) {
    entryCount++;
    const prov = Array.isArray(provenance[fqn]) ? provenance[fqn].map(str) : [];
    for (const kind of new Set(prov.map((p) => p.split(':')[0]))) if (hasOwn(kinds, kind)) kinds[kind]++;
    if (entries.length < PLAN_ENTRIES_MAX) entries.push({ fqn, provenance: prov, params: layoutParams(modules[fqn]) ?? {} });
  }
  let memory = null;
  if (isObject(result.memory)) {
    const m = result.memory;
    memory = {
      devices: num(m.devices),
      unsharded_bytes: num(m.unsharded_bytes),
      min_bytes: num(m.min_bytes),
      max_bytes: num(m.max_bytes),
      mean_bytes: num(m.mean_bytes),
      max_device: num(m.max_device),
      per_device_bytes: Array.isArray(m.per_device_bytes) ? Float64Array.from(m.per_device_bytes, num) : null,
    };
  }
  const communication = Array.isArray(result.communication) ? result.communication : [];
  const records = communication.slice(0, PLAN_RECORDS_MAX).map((r) => ({
    fqn: str(r.fqn), port: str(r.port), axis: str(r.axis), from: str(r.from), to: str(r.to), collective: str(r.collective),
  }));
  const mesh = [];
  if (isObject(doc) && isObject(doc.mesh)) for (const [axis, size] of Object.entries(doc.mesh)) mesh.push([axis, num(size)]);
  return {
    entries,
    entryCount,
    kinds,
    memory,
    collectives: isObject(result.collectives) ? result.collectives : {},
    records,
    recordCount: communication.length,
    mesh,
  };
}

async function check(msg) {
  const t0 = performance.now();
  let bytes = null;
  let text = null;
  if (msg.file) bytes = new Uint8Array(await msg.file.arrayBuffer());
  else text = String(msg.text ?? '');
  last = null;
  const sp = await engine();
  const t1 = performance.now();

  // The document is read here first: whether it has templates decides what the engine runs.
  const p0 = performance.now();
  let doc = null;
  let treeError = null;
  try {
    if (text === null) text = new TextDecoder().decode(bytes);
    doc = JSON.parse(text);
  } catch (err) {
    treeError = describe(err);
  }
  const parseMs = performance.now() - p0;

  const mode = msg.mode === 'plan' || wantsPlan(doc) ? 'plan' : 'check';
  const e0 = performance.now();
  const result = mode === 'plan' ? sp.plan(bytes ?? text) : sp.check(bytes ?? text);
  const engineMs = performance.now() - e0;

  let tree = null;
  let treeMs = 0;
  if (treeError === null) {
    try {
      const b0 = performance.now();
      tree = buildTree(doc);
      treeMs = performance.now() - b0;
    } catch (err) {
      treeError = describe(err);
    }
  }
  const plan = mode === 'plan' ? planSummary(result, doc) : null;
  last = { id: msg.id, result, doc };
  const size = bytes ? bytes.length : new TextEncoder().encode(text).length;
  const transfer = tree ? [tree.typeOf, tree.childStart, tree.childName, tree.childMod, tree.paramStart,
    tree.paramName, tree.fam, tree.firstParent, tree.firstName, tree.subtree].map((a) => a.buffer) : [];
  if (plan && plan.memory && plan.memory.per_device_bytes) transfer.push(plan.memory.per_device_bytes.buffer);
  const trimmed = trimResult(result);
  postMessage({
    type: 'result',
    id: msg.id,
    result: trimmed,
    tree,
    treeError,
    mode,
    plan,
    bytes: size,
    timing: { readMs: t1 - t0, engineMs, parseMs, treeMs, workerMs: performance.now() - t0 },
  }, transfer);
}

// The full layout of one owner: the engine's when the check passed, the
// declared one (model provider or family) otherwise.
function owner(msg) {
  if (!last || last.id !== msg.id) return;
  const reply = { type: 'owner', id: msg.id, fqn: msg.fqn, layout: null, parallel: null, required: null, declared: false };
  const owned = last.result.owned;
  if (isObject(owned)) {
    const own = (o) => (isObject(o) && hasOwn(o, msg.fqn) ? o[msg.fqn] : null);
    reply.layout = own(owned.specs);
    reply.parallel = own(owned.parallel);
    reply.required = own(owned.required);
  } else if (isObject(last.doc)) {
    reply.declared = true;
    const doc = last.doc;
    const providers = isObject(doc.providers) && isObject(doc.providers.sharding) ? doc.providers.sharding : {};
    const mods = isObject(doc.modules) ? doc.modules : {};
    const m = typeof msg.module === 'string' && hasOwn(mods, msg.module) ? mods[msg.module] : undefined;
    if (msg.kind === 'family') reply.layout = familyLayout(m);
    else if (msg.kind === 'provider' && hasOwn(providers, msg.fqn)) reply.layout = providers[msg.fqn];
    if (!isObject(reply.layout)) reply.layout = null;
  }
  postMessage(reply);
}

function exportResult(msg) {
  if (!last || last.id !== msg.id) return;
  const blob = new Blob([`${JSON.stringify(last.result)}\n`], { type: "application/json" });
  postMessage({ type: 'export', id: msg.id, blob });
}

self.onmessage = (event) => {
  const msg = event.data;
  if (!msg) return;
  if (msg.type === 'check') {
    check(msg).catch((err) => postMessage({ type: 'error', id: msg.id, message: describe(err) }));
  } else if (msg.type === 'owner') owner(msg);
  else if (msg.type === 'export') exportResult(msg);
};

engine().catch(() => {});
