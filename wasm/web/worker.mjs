// The checker's worker: loads the engine (./shardplan/index.mjs, the npm
// package's wrapper), checks documents and builds the compact module tree the
// page renders. Everything stays in this browser tab: nothing is sent anywhere.
//
// Messages in:
//   {type: 'check', id, text} or {type: 'check', id, file}   (a File/Blob, read here)
//   {type: 'owner', id, fqn, module}   the full layout of one owner of run `id`
//   {type: 'export', id}               the full result JSON of run `id`, as a Blob
// Messages out:
//   {type: 'ready', version, abiVersion, loadMs} | {type: 'load-error', message}
//   {type: 'result', id, result, tree, treeError, bytes, timing}
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
// this worker; engineMs is the engine's check alone (Shardplan.check: parse,
// check and the result JSON).

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

async function check(msg) {
  const t0 = performance.now();
  let bytes = null;
  let text = null;
  if (msg.file) bytes = new Uint8Array(await msg.file.arrayBuffer());
  else text = String(msg.text ?? '');
  last = null;
  const sp = await engine();
  const t1 = performance.now();

  const e0 = performance.now();
  const result = sp.check(bytes ?? text);
  const engineMs = performance.now() - e0;

  const p0 = performance.now();
  let doc = null;
  let tree = null;
  let treeError = null;
  let parseMs = 0;
  let treeMs = 0;
  try {
    if (text === null) text = new TextDecoder().decode(bytes);
    doc = JSON.parse(text);
    parseMs = performance.now() - p0;
    const b0 = performance.now();
    tree = buildTree(doc);
    treeMs = performance.now() - b0;
  } catch (err) {
    if (!parseMs) parseMs = performance.now() - p0;
    treeError = describe(err);
  }
  last = { id: msg.id, result, doc };
  const size = bytes ? bytes.length : new TextEncoder().encode(text).length;
  const transfer = tree ? [tree.typeOf, tree.childStart, tree.childName, tree.childMod, tree.paramStart,
    tree.paramName, tree.fam, tree.firstParent, tree.firstName, tree.subtree].map((a) => a.buffer) : [];
  const trimmed = trimResult(result);
  postMessage({
    type: 'result',
    id: msg.id,
    result: trimmed,
    tree,
    treeError,
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
