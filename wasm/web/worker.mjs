// The checker's worker: loads the engine (./shardplan/index.mjs, the npm
// package's wrapper), checks documents and builds the compact module tree the
// page renders. Everything stays in this browser tab: nothing is sent anywhere.
//
// Messages in:
//   {type: 'check', id, text, mode?} or {type: 'check', id, file, mode?}   (a File/Blob, read here)
//     mode 'plan' plans the document (Shardplan.plan, as `shardplan plan`); without it the
//     document is planned when it has `templates` or `overrides` (what `plan` is for, and
//     `check` ignores them) and checked otherwise.
//   {type: 'owner', id, fqn}           the full layout of the owner at `fqn` in run `id`
//   {type: 'export', id}               the full result JSON of run `id`, as a Blob
// Messages out:
//   {type: 'ready', version, abiVersion, loadMs} | {type: 'load-error', message}
//   {type: 'result', id, result, ownership, tree, treeError, bytes, timing, mode, plan, memory}
//   {type: 'owner', id, fqn, layout, parallel, required, collected}
//   {type: 'export', id, blob}
//   {type: 'error', id, message, code}   code: the ShardplanError's codeName, or null
//
// After an error with code OUT_OF_MEMORY or ENGINE_ABORTED the engine here has aborted (an
// aborted WebAssembly instance cannot be used again) or holds the memory it grew for the document
// (a WebAssembly memory never shrinks): the page terminates this worker and starts a new one.
//
// Who owns what comes from the engine, never from rules re-derived here: the
// worker runs Shardplan.checkDetails (or planDetails), which reads the result
// JSON and, through the C ABI's owner accessors, the owners as the engine
// collected them (also when the check failed) and the owned parameters of an
// ok result. The document is read here only for the module tree's structure
// (ids, children, parameter names, types, own parallel specs), the mesh and
// whether it asks to be planned.
//
// `result` is the engine's shardplan.result.v1 object (its diagnostics with
// their `help` and `fix`, `groups` and `counts` as they are) with `owned` trimmed to
// counts (a DeepSeek-sized result is 14 MB of JSON; copying all of it to the
// page would block the page for a few hundred ms): owned.owned_names_count,
// owned.aliases_count, owned.required_count. The untrimmed result stays here
// ('export', 'owner').
// `ownership` (ownershipView below): owners: [{fqn, kind, nativeRequest,
// nativePattern, pointer}] in entry order (kind: 'model', 'family' or
// 'native', as the engine says); rows: {FQN: [{local, full, axes, canonical,
// inherited}]}, the parameter rows the page draws under each module path;
// aliasesOf: {canonical: [alias full names]}; collected: true when the check
// failed (owners as collected; rows are their layouts' params, with no claim
// known).
// timing: {readMs, engineMs, parseMs, treeMs, workerMs}, performance.now() in
// this worker; engineMs is the engine's check (or plan) with reading its
// result (Shardplan.checkDetails: parse, check, the result JSON, the owners
// and the owned parameters).
//
// mode: 'check' or 'plan' (what the engine ran). plan: null when the engine did
// not plan or made no plan (an invalid document, owners that do not check, a
// document with a `plan` of its own), else a compact summary of the result's
// planning keys (the page draws it; the full result stays here):
//   entries: [{fqn, provenance: [..], params: {local: {axis: placement}}}] in
//     plan order, the first PLAN_ENTRIES_MAX; entryCount: all of them;
//     kinds: {owned, template, override}: entries by provenance kind;
//   memory: null or {devices, unsharded_bytes, min_bytes, max_bytes,
//     mean_bytes, max_device, per_device_bytes: Float64Array | null,
//     training: null or {worst: {device, coordinates, params, grads, master,
//       optimizer, gathered, activations, total}, max_total_bytes,
//       min_total_bytes, mean_total_bytes, per_device_total_bytes:
//       Float64Array | null, budget: {bytes, written, headroom}}}: the
//     result's memory (training: memory.training, with the document's
//     training.device_memory in bytes (null when not given) as written, and
//     its headroom (0.8 when not given));
//   collectives: {collective: {axis: count}};
//   records: the first PLAN_RECORDS_MAX communication records; recordCount;
//   mesh: [[axis, size]] from the document.
// memory: the same memory summary (plan.memory when planned), also for a
// checked document with a `plan` and a `training` section of its own, whose
// check result has `memory` (training-v1 section 4); else null.

const PLAN_ENTRIES_MAX = 20_000; // plan entries posted to the page (a DeepSeek-sized model has 60,486 modules)
const PLAN_RECORDS_MAX = 2_000;  // communication records posted to the page

let enginePromise = null;
let last = null; // {id, result, owners, ownerAt}: the latest run, for 'owner' and 'export'

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

// Builds the page's view of the module graph from the parsed document, as
// flat arrays (typed arrays travel to the page without a copy):
//   ids[i], types[typeOf[i]] (a table of the distinct types), names (a table of
//   the distinct child and parameter names); the children of module i are
//   childName/childMod[childStart[i] .. childStart[i+1]) and its own
//   parameters paramName[paramStart[i] .. paramStart[i+1]);
//   par{i: spec} (the module's own parallel spec); root; firstParent[i], firstName[i]: where module i is first reached in
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
  const par = {};

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
    par,
    root,
    firstParent,
    firstName,
    subtree,
    cycle,
    reachable,
    pathCount: root >= 0 ? subtree[root] : 0,
    mesh,
    parameterCount: countKeys(doc.parameters),
    hasPlan: isObject(doc.plan),
    planRequested: wantsPlan(doc),
  };
}

function trimResult(result) {
  // The diagnostics (with their help and fix), their groups and counts go as they are.
  const out = { schema: result.schema, ok: result.ok, diagnostics: result.diagnostics, groups: result.groups, counts: result.counts };
  const owned = result.owned;
  if (isObject(owned)) {
    out.owned = {
      owned_names_count: Array.isArray(owned.owned_names) ? owned.owned_names.length : 0,
      aliases_count: Array.isArray(owned.aliases) ? owned.aliases.length : 0,
      required_count: isObject(owned.required) ? Object.keys(owned.required).length : 0,
    };
  }
  return out;
}

const joinFqn = (base, name) => (base === '' ? name : `${base}.${name}`);
const pushTo = (map, key, value) => {
  if (hasOwn(map, key)) map[key].push(value);
  else map[key] = [value];
};

// What the page draws of the engine's owners and owned parameters (see the top
// of this file). An ok result places every owned parameter slot: a parameter's
// canonical slot is drawn under the owner that claimed it (named relative to
// the owner), another slot of a tied parameter under its own module, tied to
// the canonical name. A failed check has no claims: each owner's rows are its
// collected layout's params.
function ownershipView(details) {
  const { result, owners, parameters } = details;
  const view = {
    owners: owners.map((o) => ({
      fqn: o.fqn, kind: o.kind, nativeRequest: o.nativeRequest, nativePattern: o.nativePattern, pointer: o.pointer,
    })),
    rows: {},
    aliasesOf: {},
    collected: !result.ok,
  };
  if (result.ok) {
    for (const p of parameters) {
      if (p.canonical === p.name) {
        const owner = owners[p.owner].fqn;
        const local = owner === '' ? p.name : p.name.slice(owner.length + 1);
        pushTo(view.rows, owner, { local, full: p.name, axes: p.placements, canonical: null, inherited: false });
      } else {
        // A slot's own name has no dot: what precedes the last one is its module's path.
        const dot = p.name.lastIndexOf('.');
        const module = dot < 0 ? '' : p.name.slice(0, dot);
        pushTo(view.rows, module, {
          local: p.name.slice(dot + 1), full: p.name, axes: p.placements, canonical: p.canonical, inherited: true,
        });
        pushTo(view.aliasesOf, p.canonical, p.name);
      }
    }
  } else {
    for (const o of owners) {
      const params = isObject(o.layout.params) ? o.layout.params : {};
      for (const [local, axes] of Object.entries(params)) {
        pushTo(view.rows, o.fqn, { local, full: joinFqn(o.fqn, local), axes, canonical: null, inherited: false });
      }
    }
  }
  return view;
}

// Whether a document asks to be planned: it has templates or overrides.
function wantsPlan(doc) {
  return isObject(doc) && (hasOwn(doc, 'templates') || hasOwn(doc, 'overrides'));
}

const str = (x) => (typeof x === 'string' ? x : JSON.stringify(x));
const num = (x) => (typeof x === 'number' ? x : Number.NaN);

// training.device_memory in bytes, as the engine reads it (docs/format.md, Training): an integer
// number of bytes, or a string <number><unit>, rounded down to whole bytes; null when absent or
// not one of these (the engine then refuses the document).
const BYTE_UNITS = {
  B: 1n, KB: 1000n, MB: 1000n ** 2n, GB: 1000n ** 3n, TB: 1000n ** 4n,
  KiB: 1024n, MiB: 1024n ** 2n, GiB: 1024n ** 3n, TiB: 1024n ** 4n,
};
function deviceMemoryBytes(value) {
  if (typeof value === 'number') return Number.isInteger(value) && value >= 1 ? value : null;
  if (typeof value !== 'string') return null;
  const m = /^([0-9]+)(?:\.([0-9]+))?([A-Za-z]+)$/.exec(value);
  if (!m || !hasOwn(BYTE_UNITS, m[3])) return null;
  const frac = m[2] ?? '';
  const bytes = (BigInt(m[1] + frac) * BYTE_UNITS[m[3]]) / 10n ** BigInt(frac.length);
  return bytes >= 1n ? Number(bytes) : null;
}

// The memory summary of a result (see the top of this file), or null when it has none.
function memorySummary(result, doc) {
  if (!isObject(result) || !isObject(result.memory)) return null;
  const m = result.memory;
  const memory = {
    devices: num(m.devices),
    unsharded_bytes: num(m.unsharded_bytes),
    min_bytes: num(m.min_bytes),
    max_bytes: num(m.max_bytes),
    mean_bytes: num(m.mean_bytes),
    max_device: num(m.max_device),
    per_device_bytes: Array.isArray(m.per_device_bytes) ? Float64Array.from(m.per_device_bytes, num) : null,
    training: null,
  };
  if (isObject(m.training) && isObject(m.training.worst)) {
    const t = m.training;
    const w = t.worst;
    const section = isObject(doc) && isObject(doc.training) ? doc.training : {};
    const written = hasOwn(section, 'device_memory') ? section.device_memory : null;
    memory.training = {
      worst: {
        device: num(w.device),
        coordinates: isObject(w.coordinates) ? w.coordinates : {},
        params: num(w.params),
        grads: num(w.grads),
        master: num(w.master),
        optimizer: num(w.optimizer),
        gathered: num(w.gathered),
        activations: num(w.activations),
        total: num(w.total),
      },
      max_total_bytes: num(t.max_total_bytes),
      min_total_bytes: num(t.min_total_bytes),
      mean_total_bytes: num(t.mean_total_bytes),
      per_device_total_bytes: Array.isArray(t.per_device_total_bytes) ? Float64Array.from(t.per_device_total_bytes, num) : null,
      budget: {
        bytes: deviceMemoryBytes(written),
        written: written === null ? null : str(written),
        headroom: typeof section.headroom === 'number' ? section.headroom : 0.8,
      },
    };
  }
  return memory;
}

// The compact summary of a planned result (see the top of this file), or null when no plan was made.
function planSummary(result, doc, memory) {
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
  const details = mode === 'plan' ? sp.planDetails(bytes ?? text) : sp.checkDetails(bytes ?? text);
  const engineMs = performance.now() - e0;
  const { result } = details;

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
  const memory = memorySummary(result, doc);
  const plan = mode === 'plan' ? planSummary(result, doc, memory) : null;
  const ownership = ownershipView(details);
  last = { id: msg.id, result, owners: details.owners, ownerAt: new Map(details.owners.map((o, i) => [o.fqn, i])) };
  const size = bytes ? bytes.length : new TextEncoder().encode(text).length;
  const transfer = tree ? [tree.typeOf, tree.childStart, tree.childName, tree.childMod, tree.paramStart,
    tree.paramName, tree.firstParent, tree.firstName, tree.subtree].map((a) => a.buffer) : [];
  // plan.memory is `memory` (one object in the message: its arrays travel once).
  if (memory && memory.per_device_bytes) transfer.push(memory.per_device_bytes.buffer);
  if (memory && memory.training && memory.training.per_device_total_bytes) transfer.push(memory.training.per_device_total_bytes.buffer);
  const trimmed = trimResult(result);
  postMessage({
    type: 'result',
    id: msg.id,
    result: trimmed,
    ownership,
    tree,
    treeError,
    mode,
    plan,
    memory,
    bytes: size,
    timing: { readMs: t1 - t0, engineMs, parseMs, treeMs, workerMs: performance.now() - t0 },
  }, transfer);
}

// The full layout of the owner at msg.fqn as the engine collected it (for a
// failed check too), with its parallel spec and required ids when the check
// passed (the result JSON's owned.parallel and owned.required).
function owner(msg) {
  if (!last || last.id !== msg.id) return;
  const reply = { type: 'owner', id: msg.id, fqn: msg.fqn, layout: null, parallel: null, required: null, collected: !last.result.ok };
  const i = last.ownerAt.get(msg.fqn);
  if (i !== undefined) reply.layout = last.owners[i].layout;
  const owned = last.result.owned;
  if (isObject(owned)) {
    const own = (o) => (isObject(o) && hasOwn(o, msg.fqn) ? o[msg.fqn] : null);
    reply.parallel = own(owned.parallel);
    reply.required = own(owned.required);
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
    check(msg).catch((err) => postMessage({ type: 'error', id: msg.id, message: describe(err), code: err?.codeName ?? null }));
  } else if (msg.type === 'owner') owner(msg);
  else if (msg.type === 'export') exportResult(msg);
};

engine().catch(() => {});
