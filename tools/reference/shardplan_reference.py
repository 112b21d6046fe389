#!/usr/bin/python3
"""Literal Python model of the shardplan v1 reference semantics.

This is an independent re-statement of `collect_owned_layouts` / `validate_owned_layouts`
(shared/spec/shardplan-v1.md, sections 2-6) written the way the original Python framework
would be: real module objects with shared identities, `named_modules` with duplicates kept,
`get_submodule`, `fnmatch.fnmatchcase`, an insertion-ordered dict of owners keyed by module
identity, and an exception raised at the FIRST error.

It exists to label documents for differential testing of the C++ engine; it is deliberately
simple and slow (it enumerates every module path), not clever.

Usage:  python3 shardplan_reference.py DOC.json      (prints the result JSON)

Result format (same as shared/conformance/expected/*.json):
  {"ok": true, "owned": {...}}  or  {"ok": false, "error": {"code": C, "message": M}}
"""

import fnmatch
import json
import re
import sys

DEFAULT_MAX_PATHS = 10_000_000

LEGACY_FIELDS = ("local_compute_fn", "inner_wrapper", "inner_target", "region_dispatch")
LAYOUT_KEYS = ("params", "in_src", "in_dst", "out_src", "out_dst", "out_names") + LEGACY_FIELDS
DTYPES = ("float32", "float16", "bfloat16", "float8_e4m3fn", "float8_e5m2", "int8", "int32",
          "int64", "bool")
PARTIAL_OPS = ("sum", "avg", "max", "min", "prod")


# --------------------------------------------------------------------------------------------
# Errors
# --------------------------------------------------------------------------------------------

class ShardplanError(Exception):
    def __init__(self, code, message):
        super().__init__(message)
        self.code = code
        self.message = message


class InvalidDocument(ShardplanError):
    def __init__(self, pointer, what):
        super().__init__("invalid-document", f"{pointer or '/'}: {what}")


def fail(code, message):
    raise ShardplanError(code, message)


# --------------------------------------------------------------------------------------------
# Value types (what the framework would have as Python objects)
# --------------------------------------------------------------------------------------------

class Placement:
    """Shard(dim) / Replicate() / Partial(op). Partial("sum") is the plain `P`."""
    __slots__ = ("kind", "dim", "op")

    def __init__(self, kind, dim=None, op=None):
        self.kind, self.dim, self.op = kind, dim, op

    def __eq__(self, other):
        return (isinstance(other, Placement) and self.kind == other.kind
                and self.dim == other.dim and self.op == other.op)

    def __hash__(self):
        return hash((self.kind, self.dim, self.op))

    def is_partial(self):
        return self.kind == "P"

    def __str__(self):
        if self.kind == "S":
            return f"S({self.dim})"
        if self.kind == "R":
            return "R"
        return "P" if self.op == "sum" else f"P({self.op})"

    __repr__ = __str__


_SHARD_RE = re.compile(r"S\((-?[0-9]+)\)\Z")
_PARTIAL_RE = re.compile(r"P\((sum|avg|max|min|prod)\)\Z")


def parse_placement(text):
    if text == "R":
        return Placement("R")
    if text == "P":
        return Placement("P", op="sum")
    m = _PARTIAL_RE.match(text)
    if m:
        return Placement("P", op=m.group(1))
    m = _SHARD_RE.match(text)
    if m:
        return Placement("S", dim=int(m.group(1)))
    return None


class Layout:
    """A module sharding spec. Named placements are dicts axis -> Placement."""

    def __init__(self, params=None, in_src=None, in_dst=None, out_src=None, out_dst=None,
                 out_names=None, local_compute_fn=None, inner_wrapper=None, inner_target=None,
                 region_dispatch=None):
        self.params = params
        self.in_src = in_src
        self.in_dst = in_dst
        self.out_src = out_src
        self.out_dst = out_dst
        self.out_names = out_names
        self.local_compute_fn = local_compute_fn
        self.inner_wrapper = inner_wrapper
        self.inner_target = inner_target
        self.region_dispatch = region_dispatch

    def copy(self):
        # A real copy (dicts and lists copied), so reducing an entry's params never touches the
        # layout object it was made from (e.g. a family's cached layout).
        def c(v):
            if isinstance(v, dict):
                return dict(v)
            if isinstance(v, list):
                return list(v)
            return v
        return Layout(**{k: c(getattr(self, k)) for k in LAYOUT_KEYS})


class ParallelSpec:
    def __init__(self, binding_kind, axes):
        self.binding_kind = binding_kind
        self.axes = list(axes)


class Parameter:
    def __init__(self, pid, shape, dtype):
        self.id = pid
        self.shape = shape
        self.dtype = dtype

    def __repr__(self):
        return f"Parameter({self.id})"


class Cached:
    def __init__(self, sharding, parallel):
        self.sharding = sharding
        self.parallel = parallel


class Family:
    def __init__(self, parallel, sharding, cached):
        self.parallel = parallel
        self.sharding = sharding
        self.cached = cached


class Forward:
    """The forward signature: positional/keyword names plus var-positional / var-keyword."""

    def __init__(self, names):
        self.names = []
        self.has_var_keyword = False
        for n in names:
            if n.startswith("**"):
                self.names.append(n[2:])
                self.has_var_keyword = True
            elif n.startswith("*"):
                self.names.append(n[1:])
            else:
                self.names.append(n)


class Module:
    def __init__(self, mid, type_name):
        self.mid = mid
        self.type_name = type_name
        self.children = {}        # name -> Module (ordered)
        self.params = {}          # name -> Parameter (ordered)
        self.forward = Forward([])
        self.parallel = None      # ParallelSpec or None
        self.family = None        # Family or None

    def __repr__(self):
        return f"Module({self.mid})"

    # torch.nn.Module.named_modules(remove_duplicate=False)
    def named_modules(self, prefix=""):
        yield prefix, self
        for name, child in self.children.items():
            yield from child.named_modules(prefix + "." + name if prefix else name)

    # torch.nn.Module.named_parameters(remove_duplicate=False)
    def named_parameters(self):
        for prefix, module in self.named_modules():
            for local, p in module.params.items():
                yield (prefix + "." + local if prefix else local), p

    def modules(self):
        seen = {}
        for _, m in self.named_modules():
            seen.setdefault(id(m), m)
        return list(seen.values())

    def get_submodule(self, target):
        if target == "":
            return self
        mod = self
        for item in target.split("."):
            if item not in mod.children:
                fail("unknown-module", f"no module at {target!r}")
            mod = mod.children[item]
        return mod


def is_child(fqn, parent):
    return fqn.startswith(parent + ".") if parent else fqn != ""


def full_name(fqn, local):
    return f"{fqn}.{local}" if fqn else local


# --------------------------------------------------------------------------------------------
# Document validation (section 2) -> objects
# --------------------------------------------------------------------------------------------

def _esc(token):
    return str(token).replace("~", "~0").replace("/", "~1")


def _ptr(base, token):
    return f"{base}/{_esc(token)}"


def _dup_hook(pairs):
    obj = {}
    for k, v in pairs:
        if k in obj:
            raise _DuplicateKey(k)
        obj[k] = v
    return obj


class _DuplicateKey(Exception):
    pass


def loads_document(text):
    """Parses JSON text; duplicate keys and non-standard constants are invalid-document."""
    def bad_constant(name):
        raise InvalidDocument("", f"non-standard JSON constant {name}")
    try:
        return json.loads(text, object_pairs_hook=_dup_hook, parse_constant=bad_constant)
    except _DuplicateKey as e:
        raise InvalidDocument("", f"duplicate key {e.args[0]!r}")
    except (ValueError, RecursionError) as e:
        raise InvalidDocument("", f"not valid JSON: {e}")


class _Validator:
    def __init__(self, doc, max_paths):
        self.doc = doc
        self.max_paths = max_paths

    # -- primitive checks --
    @staticmethod
    def obj(v, ptr, allowed=None, required=()):
        if not isinstance(v, dict):
            raise InvalidDocument(ptr, "expected an object")
        if allowed is not None:
            for k in v:
                if k not in allowed:
                    raise InvalidDocument(_ptr(ptr, k), f"unknown key {k!r}")
        for k in required:
            if k not in v:
                raise InvalidDocument(ptr, f"missing required key {k!r}")
        return v

    @staticmethod
    def string(v, ptr, nonempty=False):
        if not isinstance(v, str):
            raise InvalidDocument(ptr, "expected a string")
        if nonempty and not v:
            raise InvalidDocument(ptr, "expected a non-empty string")
        return v

    @staticmethod
    def integer(v, ptr):
        if isinstance(v, bool) or not isinstance(v, int):
            raise InvalidDocument(ptr, "expected an integer")
        return v

    @staticmethod
    def boolean(v, ptr):
        if not isinstance(v, bool):
            raise InvalidDocument(ptr, "expected a boolean")
        return v

    @staticmethod
    def array(v, ptr):
        if not isinstance(v, list):
            raise InvalidDocument(ptr, "expected an array")
        return v

    def name(self, v, ptr):
        if not v:
            raise InvalidDocument(ptr, "names must be non-empty")
        if "." in v:
            raise InvalidDocument(ptr, f"name {v!r} contains '.'")

    # -- composite --
    def named_placements(self, v, ptr):
        self.obj(v, ptr)
        out = {}
        for axis, text in v.items():
            p = _ptr(ptr, axis)
            self.string(text, p)
            pl = parse_placement(text)
            if pl is None:
                raise InvalidDocument(p, f"bad placement {text!r}")
            out[axis] = pl
        return out

    def placement_map(self, v, ptr, nullable=True):
        if v is None:
            if not nullable:
                raise InvalidDocument(ptr, "expected an object")
            return None
        self.obj(v, ptr)
        return {k: self.named_placements(x, _ptr(ptr, k)) for k, x in v.items()}

    def layout(self, v, ptr, params_nullable=True):
        self.obj(v, ptr, allowed=LAYOUT_KEYS)
        kw = {}
        kw["params"] = self.placement_map(v.get("params"), _ptr(ptr, "params"), params_nullable)
        for k in ("in_src", "in_dst", "out_src", "out_dst"):
            kw[k] = self.placement_map(v.get(k), _ptr(ptr, k))
        on = v.get("out_names")
        if on is not None:
            self.array(on, _ptr(ptr, "out_names"))
            for i, n in enumerate(on):
                self.string(n, _ptr(_ptr(ptr, "out_names"), i))
            kw["out_names"] = list(on)
        for k in LEGACY_FIELDS:
            kw[k] = v.get(k)      # any JSON value; non-null is a semantic error
        return Layout(**kw)

    def parallel_spec(self, v, ptr):
        if v is None:
            return None
        self.obj(v, ptr, allowed=("binding_kind", "axes"), required=("binding_kind",))
        kind = self.string(v["binding_kind"], _ptr(ptr, "binding_kind"), nonempty=True)
        axes = v.get("axes", [])
        self.array(axes, _ptr(ptr, "axes"))
        for i, a in enumerate(axes):
            self.string(a, _ptr(_ptr(ptr, "axes"), i))
        return ParallelSpec(kind, axes)

    def run(self):
        doc = self.doc
        self.obj(doc, "", allowed=("schema", "mesh", "parameters", "root", "modules",
                                   "providers", "plan"),
                 required=("schema", "mesh", "parameters", "root", "modules"))
        if self.string(doc["schema"], "/schema") != "shardplan.v1":
            raise InvalidDocument("/schema", "schema must be 'shardplan.v1'")

        # mesh
        mesh = self.obj(doc["mesh"], "/mesh")
        for axis, size in mesh.items():
            p = _ptr("/mesh", axis)
            self.integer(size, p)
            if size <= 0:
                raise InvalidDocument(p, "mesh sizes must be positive")
        mesh_axes = list(mesh)

        # parameters
        params = {}
        self.obj(doc["parameters"], "/parameters")
        for pid, spec in doc["parameters"].items():
            p = _ptr("/parameters", pid)
            self.obj(spec, p, allowed=("shape", "dtype"))
            shape = None
            if "shape" in spec:
                shape = self.array(spec["shape"], _ptr(p, "shape"))
                for i, d in enumerate(shape):
                    if self.integer(d, _ptr(_ptr(p, "shape"), i)) < 0:
                        raise InvalidDocument(_ptr(_ptr(p, "shape"), i), "negative dimension")
            dtype = spec.get("dtype", "float32")
            if self.string(dtype, _ptr(p, "dtype")) not in DTYPES:
                raise InvalidDocument(_ptr(p, "dtype"), f"unknown dtype {dtype!r}")
            params[pid] = Parameter(pid, shape, dtype)

        # modules (first pass: identities)
        raw_mods = self.obj(doc["modules"], "/modules")
        mods = {}
        for mid, m in raw_mods.items():
            p = _ptr("/modules", mid)
            self.obj(m, p, allowed=("type", "forward", "children", "params", "parallel", "family"))
            t = m.get("type")
            if "type" in m:
                self.string(t, _ptr(p, "type"))
            mods[mid] = Module(mid, t)
        # second pass: fields and links
        for mid, m in raw_mods.items():
            p = _ptr("/modules", mid)
            mod = mods[mid]
            if "forward" in m:
                fw = self.array(m["forward"], _ptr(p, "forward"))
                for i, n in enumerate(fw):
                    self.string(n, _ptr(_ptr(p, "forward"), i))
                mod.forward = Forward(fw)
            if "children" in m:
                self.obj(m["children"], _ptr(p, "children"))
                for cname, cid in m["children"].items():
                    cp = _ptr(_ptr(p, "children"), cname)
                    self.name(cname, cp)
                    self.string(cid, cp)
                    if cid not in mods:
                        raise InvalidDocument(cp, f"unknown module id {cid!r}")
                    mod.children[cname] = mods[cid]
            if "params" in m:
                self.obj(m["params"], _ptr(p, "params"))
                for pname, pid in m["params"].items():
                    pp = _ptr(_ptr(p, "params"), pname)
                    self.name(pname, pp)
                    self.string(pid, pp)
                    if pid not in params:
                        raise InvalidDocument(pp, f"unknown parameter id {pid!r}")
                    if pname in mod.children:
                        raise InvalidDocument(pp, f"{pname!r} is both a child and a parameter")
                    mod.params[pname] = params[pid]
            if "parallel" in m:
                mod.parallel = self.parallel_spec(m["parallel"], _ptr(p, "parallel"))
            if "family" in m:
                fp = _ptr(p, "family")
                f = self.obj(m["family"], fp, allowed=("parallel", "sharding", "cached"))
                fpar = f.get("parallel", False)
                self.boolean(fpar, _ptr(fp, "parallel"))
                sharding = f.get("sharding")
                if sharding is not None:
                    sharding = self.layout(sharding, _ptr(fp, "sharding"))
                cached = f.get("cached")
                if cached is not None:
                    cp = _ptr(fp, "cached")
                    self.obj(cached, cp, allowed=("sharding", "parallel"), required=("sharding",))
                    if cached["sharding"] is None:
                        raise InvalidDocument(_ptr(cp, "sharding"), "expected a layout")
                    cached = Cached(self.layout(cached["sharding"], _ptr(cp, "sharding")),
                                    self.parallel_spec(cached.get("parallel"),
                                                       _ptr(cp, "parallel")))
                mod.family = Family(fpar, sharding, cached)

        # root
        root_id = self.string(doc["root"], "/root")
        if root_id not in mods:
            raise InvalidDocument("/root", f"unknown module id {root_id!r}")
        root = mods[root_id]

        # cycles (any module, reachable or not) and the number of paths
        self.check_cycles(raw_mods)
        self.check_paths(raw_mods, root_id)

        # providers
        providers_sharding = []
        native = []
        if "providers" in doc:
            pv = self.obj(doc["providers"], "/providers", allowed=("sharding", "native"))
            if "sharding" in pv:
                self.obj(pv["sharding"], "/providers/sharding")
                for fqn, lay in pv["sharding"].items():
                    lp = _ptr("/providers/sharding", fqn)
                    if lay is None:
                        raise InvalidDocument(lp, "expected a layout")
                    providers_sharding.append((fqn, self.layout(lay, lp)))
            if "native" in pv:
                self.array(pv["native"], "/providers/native")
                for i, req in enumerate(pv["native"]):
                    rp = _ptr("/providers/native", i)
                    self.obj(req, rp, allowed=("match", "sharding", "parallel"),
                             required=("match", "sharding"))
                    self.array(req["match"], _ptr(rp, "match"))
                    for j, pat in enumerate(req["match"]):
                        self.string(pat, _ptr(_ptr(rp, "match"), j))
                    if req["sharding"] is None:
                        raise InvalidDocument(_ptr(rp, "sharding"), "expected a layout")
                    native.append((list(req["match"]),
                                   self.layout(req["sharding"], _ptr(rp, "sharding")),
                                   self.parallel_spec(req.get("parallel"), _ptr(rp, "parallel"))))

        plan = None
        if "plan" in doc:
            pl = self.obj(doc["plan"], "/plan", allowed=("modules",), required=("modules",))
            self.obj(pl["modules"], "/plan/modules")
            plan = []
            for fqn, lay in pl["modules"].items():
                lp = _ptr("/plan/modules", fqn)
                if lay is None:
                    raise InvalidDocument(lp, "expected a layout")
                plan.append((fqn, self.layout(lay, lp, params_nullable=False)))

        return Document(mesh_axes, dict(mesh), params, mods, root, providers_sharding, native,
                        plan)

    def check_cycles(self, raw_mods):
        WHITE, GREY, BLACK = 0, 1, 2
        color = {mid: WHITE for mid in raw_mods}
        for start in raw_mods:
            if color[start] != WHITE:
                continue
            # iterative DFS
            stack = [(start, iter(raw_mods[start].get("children", {}).items()))]
            color[start] = GREY
            while stack:
                mid, it = stack[-1]
                nxt = next(it, None)
                if nxt is None:
                    color[mid] = BLACK
                    stack.pop()
                    continue
                cname, cid = nxt
                if color[cid] == GREY:
                    raise InvalidDocument(_ptr(_ptr(_ptr("/modules", mid), "children"), cname),
                                          "cycle in children")
                if color[cid] == WHITE:
                    color[cid] = GREY
                    stack.append((cid, iter(raw_mods[cid].get("children", {}).items())))

    def check_paths(self, raw_mods, root_id):
        memo = {}

        def count(mid):
            if mid in memo:
                return memo[mid]
            # iterative post-order to avoid deep recursion
            stack = [(mid, False)]
            while stack:
                cur, done = stack.pop()
                if cur in memo:
                    continue
                kids = list(raw_mods[cur].get("children", {}).values())
                if done:
                    total = 1
                    for k in kids:
                        total += memo[k]
                        if total > self.max_paths:
                            total = self.max_paths + 1
                    memo[cur] = total
                else:
                    stack.append((cur, True))
                    for k in kids:
                        if k not in memo:
                            stack.append((k, False))
            return memo[mid]

        if count(root_id) > self.max_paths:
            raise InvalidDocument("/modules", f"more than {self.max_paths} module paths")


class Document:
    def __init__(self, mesh_axes, mesh, parameters, modules, root, providers_sharding, native,
                 plan):
        self.mesh_axes = mesh_axes
        self.mesh = mesh
        self.parameters = parameters
        self.modules = modules
        self.root = root
        self.providers_sharding = providers_sharding
        self.native = native
        self.plan = plan


def load(doc_obj, max_paths=DEFAULT_MAX_PATHS):
    return _Validator(doc_obj, max_paths).run()


# --------------------------------------------------------------------------------------------
# collect_owned_layouts (section 4)
# --------------------------------------------------------------------------------------------

class Entry:
    def __init__(self, fqn, module, layout, parallel):
        self.fqn = fqn
        self.module = module
        self.layout = layout
        self.parallel = parallel


class OwnedLayouts:
    def __init__(self):
        self.specs = {}          # fqn -> Layout (reduced)
        self.parallel = {}       # fqn -> ParallelSpec
        self.owned_names = []    # full names (root-relative)
        self.expected = {}       # id(Parameter) -> Parameter
        self.required = {}       # fqn -> set of Parameter
        self.aliases = []        # [canonical, alias]


def _normalize_outputs(layout):
    if layout.out_names is None and (layout.out_src or layout.out_dst):
        names = list(layout.out_src or {})
        for k in (layout.out_dst or {}):
            if k not in names:
                names.append(k)
        layout.out_names = names
    if layout.out_names is not None:
        unknown = [k for k in list(layout.out_src or {}) + list(layout.out_dst or {})
                   if k not in layout.out_names]
        if unknown:
            fail("unknown-output", f"layout declares unknown outputs {sorted(set(unknown))}")


def _declared_parallel(module, member):
    spec = module.parallel
    if member is not None and member.family is not None and member.family.parallel \
            and spec is None:
        fail("parallel-member-undeclared",
             "a parallel family member must declare its explicit execution protocol")
    return spec


def _check_ports(layout, module):
    if any(getattr(layout, k) is not None for k in LEGACY_FIELDS):
        fail("legacy-injection", "module-owned layouts cannot install legacy compute injection")
    if layout.params is None or layout.in_src is None or layout.in_dst is None:
        fail("ports-missing",
             "module-owned providers must declare params, in_src and in_dst explicitly")
    if set(layout.in_src) != set(layout.in_dst):
        fail("ports-mismatch", "module-owned in_src and in_dst must declare the same input names")
    if not module.forward.has_var_keyword:
        unknown = set(layout.in_src) - set(module.forward.names)
        if unknown:
            fail("unknown-forward-input", f"layout declares unknown forward inputs {sorted(unknown)}")
    if layout.out_names is not None and len(set(layout.out_names)) != len(layout.out_names):
        fail("duplicate-output-name", "output names must be unique")


def _check_placements(layout, mesh_axes):
    for field in ("params", "in_src", "in_dst", "out_src", "out_dst"):
        for named in (getattr(layout, field) or {}).values():
            for axis in named:
                if axis not in mesh_axes:
                    fail("unknown-axis",
                         f"module layouts cannot declare storage/unknown axis {axis!r}")
    for named in (layout.params or {}).values():
        for placement in named.values():
            if placement.is_partial():
                fail("partial-parameter", "parameter source layouts cannot be Partial")


def _check_parallel_axes(parallel, mesh_axes):
    for axis in parallel.axes:
        if axis not in mesh_axes:
            fail("parallel-unknown-axis",
                 f"parallel module declares unknown communication axis {axis!r}")


def _family_boundaries(root):
    order = {}   # id -> (module, [fqns])
    for fqn, m in root.named_modules():
        if m.family is not None:
            order.setdefault(id(m), (m, []))[1].append(fqn)
    return list(order.values())


def collect_owned_layouts(doc):
    root = doc.root
    mesh_axes = doc.mesh_axes
    entries = {}    # id(module) -> Entry, insertion ordered

    def add(fqn, layout, parallel):
        module = root.get_submodule(fqn)
        if id(module) in entries:
            fail("multiple-owners", f"multiple layout/communication owners for module {fqn!r}")
        layout = layout.copy()
        _normalize_outputs(layout)
        entries[id(module)] = Entry(fqn, module, layout, parallel)

    # 1. model providers
    for fqn, layout in doc.providers_sharding:
        add(fqn, layout, _declared_parallel(root.get_submodule(fqn), None))

    # 2. families
    boundaries = _family_boundaries(root)
    for module, fqns in boundaries:
        fam = module.family
        if fam.sharding is None:
            continue
        fqn = fqns[0]
        if fam.cached is not None:
            layout, parallel = fam.cached.sharding, fam.cached.parallel
        else:
            layout, parallel = fam.sharding, _declared_parallel(module, module)
        entries.pop(id(module), None)
        add(fqn, layout, parallel)

    # 3. native requests
    family_subtrees = set()
    for module, _ in boundaries:
        for m in module.modules():
            family_subtrees.add(id(m))
    for patterns, layout, parallel in doc.native:
        matched = set()
        for pattern in patterns:
            hits = [(fqn, m) for fqn, m in root.named_modules()
                    if fnmatch.fnmatchcase(fqn, pattern)]
            if not hits:
                fail("native-no-match", f"native binding pattern {pattern!r} matched no module")
            for fqn, m in hits:
                if id(m) in matched:
                    continue
                matched.add(id(m))
                if any(id(sub) in family_subtrees for sub in m.modules()):
                    fail("native-overlaps-family",
                         f"native binding at {fqn!r} overlaps a family-owned subtree")
                add(fqn, layout, parallel)

    # 4. nesting
    active = [(e.fqn, e.parallel.binding_kind) for e in entries.values()
              if e.parallel is not None and e.parallel.binding_kind != "none"]
    for fqn, kind in active:
        for parent, pkind in active:
            if is_child(fqn, parent) and (kind == pkind or "mesh" in (kind, pkind)):
                fail("overlapping-communication",
                     f"overlapping communication owners at {parent!r} and {fqn!r}")

    owned = OwnedLayouts()
    # 5. per entry
    for e in entries.values():
        _check_ports(e.layout, e.module)
        _check_placements(e.layout, mesh_axes)
        if e.parallel is not None and (e.module.family is None or e.module.family.cached is None):
            _check_parallel_axes(e.parallel, mesh_axes)
        if e.parallel is not None:
            owned.parallel[e.fqn] = e.parallel

    # 6. claims
    _assign_parameters(root, list(entries.values()), owned)
    return owned, entries


def _assign_parameters(root, entries, owned):
    owners = {}   # id(Parameter) -> (placement, canonical full name)
    all_fqns = [e.fqn for e in entries]
    for e in entries:
        fqn, module, layout = e.fqn, e.module, e.layout
        children = [c for c in all_fqns if is_child(c, fqn)]
        parameters = dict(module.named_parameters())
        expected = {id(p): p for local, p in parameters.items()
                    if not any(full_name(fqn, local).startswith(c + ".") for c in children)}
        declared = set()
        for name, placement in list(layout.params.items()):
            if name not in parameters:
                fail("unknown-parameter", f"layout parameter {full_name(fqn, name)!r} does not exist")
            fname = full_name(fqn, name)
            if any(fname.startswith(c + ".") for c in children):
                fail("nested-duplicate",
                     f"parent layout duplicates nested module ownership at {fname!r}")
            p = parameters[name]
            declared.add(id(p))
            if id(p) in owners:
                if owners[id(p)][0] != placement:
                    fail("shared-conflict", f"shared parameter {fname!r} has conflicting layouts")
                del layout.params[name]
            else:
                owners[id(p)] = (placement, fname)
        omitted = [local for local, p in parameters.items()
                   if id(p) in expected and id(p) not in declared]
        if omitted:
            fail("omitted-parameters", f"module-owned layout {fqn!r} omits parameters {omitted}")
        owned.specs[fqn] = layout
        owned.required[fqn] = {id(parameters[n]): parameters[n] for n in layout.params}
        owned.expected.update(expected)
    for name, p in root.named_parameters():
        if id(p) in owners:
            owned.owned_names.append(name)
            canonical = owners[id(p)][1]
            if name != canonical:
                owned.aliases.append([canonical, name])


# --------------------------------------------------------------------------------------------
# validate_owned_layouts (section 6)
# --------------------------------------------------------------------------------------------

def validate_owned_layouts(doc, owned, entries):
    root = doc.root
    by_fqn = {e.fqn: e for e in entries.values()}
    declared = {}    # id(Parameter) -> named placements
    covered = set()
    for fqn, layout in doc.plan:
        module = root.get_submodule(fqn)
        parameters = dict(module.named_parameters())
        for name, placement in layout.params.items():
            if name not in parameters:
                continue
            p = parameters[name]
            if id(p) in declared and declared[id(p)] != placement:
                fail("override-shared-conflict",
                     f"explicit overrides give shared parameter {full_name(fqn, name)!r} "
                     f"conflicting layouts")
            declared[id(p)] = placement
            covered.add(id(p))
        if fqn in owned.specs:
            entry = by_fqn[fqn]
            here = {id(parameters[n]) for n in layout.params if n in parameters}
            if any(pid not in here for pid in owned.required[fqn]):
                fail("override-removed-ownership",
                     f"final override removed required parameter ownership from {fqn!r}")
            _check_ports(layout, module)
            _check_placements(layout, doc.mesh_axes)
            if module.family is not None and module.family.cached is not None:
                cached = module.family.cached.sharding
                cparams = cached.params or {}
                same = all(name in cparams and cparams[name] == placement
                           for name, placement in layout.params.items())
                for k in ("in_src", "in_dst", "out_src", "out_dst", "out_names"):
                    if getattr(layout, k) != getattr(cached, k):
                        same = False
                if not same:
                    fail("family-layout-changed",
                         f"final layout for {fqn!r} differs from its applied family layout")
            elif entry.parallel is not None:
                _check_parallel_axes(entry.parallel, doc.mesh_axes)
    if any(pid not in covered for pid in owned.expected):
        fail("override-removed-coverage",
             "final layout overrides removed required module-owned parameter coverage")


# --------------------------------------------------------------------------------------------
# Result
# --------------------------------------------------------------------------------------------

def _named_json(named):
    return {axis: str(p) for axis, p in named.items()}


def _map_json(m):
    if m is None:
        return None
    return {k: _named_json(v) for k, v in m.items()}


def layout_json(layout):
    out = {"params": _map_json(layout.params), "in_src": _map_json(layout.in_src),
           "in_dst": _map_json(layout.in_dst)}
    for k in ("out_src", "out_dst"):
        if getattr(layout, k) is not None:
            out[k] = _map_json(getattr(layout, k))
    if layout.out_names is not None:
        out["out_names"] = list(layout.out_names)
    return out


def owned_json(owned):
    return {
        "specs": {fqn: layout_json(l) for fqn, l in owned.specs.items()},
        "parallel": {fqn: {"binding_kind": s.binding_kind, "axes": list(s.axes)}
                     for fqn, s in owned.parallel.items()},
        "owned_names": sorted(owned.owned_names),
        "expected": sorted(p.id for p in owned.expected.values()),
        "required": {fqn: sorted(p.id for p in ps.values()) for fqn, ps in owned.required.items()},
        "aliases": [list(a) for a in owned.aliases],
    }


def run_document(doc_obj, max_paths=DEFAULT_MAX_PATHS):
    """Parsed JSON value -> result dict (expected-file format)."""
    try:
        doc = load(doc_obj, max_paths)
        owned, entries = collect_owned_layouts(doc)
        if doc.plan is not None and owned.specs:
            validate_owned_layouts(doc, owned, entries)
    except ShardplanError as e:
        return {"ok": False, "error": {"code": e.code, "message": e.message}}
    return {"ok": True, "owned": owned_json(owned)}


def run_text(text, max_paths=DEFAULT_MAX_PATHS):
    try:
        obj = loads_document(text)
    except ShardplanError as e:
        return {"ok": False, "error": {"code": e.code, "message": e.message}}
    return run_document(obj, max_paths)


def run_file(path, max_paths=DEFAULT_MAX_PATHS):
    with open(path, "rb") as f:
        data = f.read()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        return {"ok": False, "error": {"code": "invalid-document",
                                       "message": f"/: not UTF-8: {e}"}}
    return run_text(text, max_paths)


def main(argv):
    import argparse
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("document")
    ap.add_argument("--max-paths", type=int, default=DEFAULT_MAX_PATHS)
    args = ap.parse_args(argv)
    sys.setrecursionlimit(100000)
    result = run_file(args.document, args.max_paths)
    print(json.dumps(result, sort_keys=True, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
