#!/usr/bin/env python3
"""Checks the Julia binding's ccalls and C mirror types against shardplan.h.

No Julia runtime is needed: both sides are read as text.

  python3 check_ccalls.py --header capi/include/shardplan/shardplan.h bindings/julia/src/ShardPlan.jl

What is checked (any mismatch is printed as FILE:LINE: problem, and the exit status is 1):

  * every `ccall((:name, libshardplan[]), Ret, (A, B,), a, b)` in the Julia sources names a
    function the header declares (`SP_API <ret> sp_name(<params>);`), passes exactly as many
    argument types as the prototype has parameters and exactly as many values as argument types,
    writes its argument types as a tuple (`(T,)` for one), names the library as LIB_EXPR, and
    uses Julia types that correspond to the C types by the table below;
  * every `@ccall` is refused (this checker does not read that form; use `ccall`);
  * every C struct with a body has an immutable Julia struct named by CamelCase (sp_parse_options
    -> SpParseOptions) with the same fields, in the same order, of corresponding types;
  * every C enum has a Julia `@enum` named by CamelCase without the `Sp` prefix
    (sp_error_code -> ErrorCode) whose base type is Cint (or Int32) and whose values are the C
    enumerators without their `SP_` prefix (SP_PORT_IN_SRC = 1 -> PORT_IN_SRC = 1), no more, no less;
  * every header function is called somewhere, or is listed in NOT_WRAPPED with a reason
    (and a listed function is not called);
  * the Julia constant ABI_VERSION equals the header's SP_ABI_VERSION, and the constant SONAME,
    the name the installed library is loaded by, is "libshardplan.so.N" with N that version
    (the soname capi/BUILD gives the library; docs/capi.md, "The soname").

Type correspondence (const is ignored: Julia has no const pointers):

  C                                 Julia
  void (return only)                Cvoid (or Nothing)
  int                               Cint, Int32
  uint32_t / uint64_t / int64_t     UInt32 / UInt64 / Int64 (Cuint for uint32_t)
  size_t                            Csize_t, UInt
  double / float                    Cdouble, Float64 / Cfloat, Float32
  an enum (sp_port, ...)            Cint, Int32, or its Julia @enum type
  a struct by value (sp_str)        its Julia mirror struct (SpStr)
  char *  (const or not)            Cstring, Ptr{UInt8}, Ptr{Cchar}
  an opaque handle pointer          Ptr{Cvoid} (or Ptr{Nothing})        (sp_error *, sp_document *)
  T *  for any other T              Ptr{J} or Ref{J}, J any Julia type for T (Ptr{J} only in
                                    struct fields); so sp_document ** -> Ptr{Ptr{Cvoid}} or
                                    Ref{Ptr{Cvoid}}, const sp_str * -> Ptr{SpStr} or Ref{SpStr}
"""

import argparse
import os
import re
import sys

# The library expression every ccall must name (a Ref filled in by __init__; Julia 1.6+).
LIB_EXPR = "libshardplan[]"

# Header functions the binding deliberately does not call: name -> reason.
_OWNERS = "the owner accessors of library 0.6 are not wrapped yet (result_json has owned)"
NOT_WRAPPED = {
    "sp_result_owner_count": _OWNERS,
    "sp_result_owner": _OWNERS,
    "sp_result_owned_parameter_count": _OWNERS,
    "sp_result_owned_parameter": _OWNERS,
}

SCALARS = {
    "int": {"Cint", "Int32"},
    "char": {"Cchar", "UInt8", "Int8"},
    "uint32_t": {"UInt32", "Cuint"},
    "uint64_t": {"UInt64"},
    "int64_t": {"Int64"},
    "int32_t": {"Int32"},
    "uint8_t": {"UInt8"},
    "size_t": {"Csize_t", "UInt"},
    "double": {"Cdouble", "Float64"},
    "float": {"Cfloat", "Float32"},
}
VOID = {"Cvoid", "Nothing"}
CSTRING = {"Cstring", "Ptr{UInt8}", "Ptr{Cchar}"}
CALLING_CONVENTIONS = {"cdecl", "stdcall", "fastcall", "thiscall", "llvmcall"}


def camel(c_name):
    """sp_parse_options -> SpParseOptions."""
    return "".join(part[:1].upper() + part[1:] for part in c_name.split("_") if part)


def julia_enum_name(c_name):
    """sp_error_code -> ErrorCode."""
    name = camel(c_name)
    return name[2:] if name.startswith("Sp") else name


def line_of(text, pos):
    return text.count("\n", 0, pos) + 1


# ---------------------------------------------------------------------------------------------
# The C header
# ---------------------------------------------------------------------------------------------


class CType:
    """A C type as base name (const dropped) and pointer depth: `const sp_str *` -> (sp_str, 1)."""

    def __init__(self, text):
        self.text = " ".join(text.split())
        tokens = re.findall(r"[A-Za-z_]\w*|\*", text)
        words = [t for t in tokens if t not in ("const", "*", "struct", "enum")]
        self.depth = tokens.count("*")
        self.base = " ".join(words)

    def __repr__(self):
        return self.text


class Header:
    def __init__(self, text, path="shardplan.h"):
        self.path = path
        self.functions = {}  # name -> (CType ret, [(CType, param name)], line)
        self.structs = {}  # name -> [(field name, CType)]
        self.opaque = set()
        self.enums = {}  # name -> {enumerator: value}
        self.abi_version = None
        self.problems = []
        self._parse(text)

    def _parse(self, raw):
        text = strip_c_comments(raw)
        m = re.search(r"^\s*#\s*define\s+SP_ABI_VERSION\s+(\d+)", text, re.M)
        if m:
            self.abi_version = int(m.group(1))
        # Drop preprocessor lines (the SP_API definition itself would confuse the prototypes).
        text = re.sub(r"^[ \t]*#(?:[^\n]*\\\n)*[^\n]*", lambda m: "\n" * m.group(0).count("\n"),
                      text, flags=re.M)
        for m in re.finditer(r"typedef\s+struct\s+(\w+)\s+(\w+)\s*;", text):
            self.opaque.add(m.group(2))
        for m in re.finditer(r"typedef\s+struct\s+(\w+)\s*\{([^{}]*)\}\s*(\w+)\s*;", text):
            name, fields = m.group(3), []
            for decl in m.group(2).split(";"):
                decl = " ".join(decl.split())
                if not decl:
                    continue
                dm = re.match(r"^(.*?)\s*\b([A-Za-z_]\w*)$", decl)
                if not dm or "," in decl or "[" in decl:
                    self.problems.append("%s:%d: cannot read field declaration '%s' of %s"
                                         % (self.path, line_of(text, m.start()), decl, name))
                    continue
                fields.append((dm.group(2), CType(dm.group(1))))
            self.structs[name] = fields
        for m in re.finditer(r"typedef\s+enum\s+(\w+)\s*\{([^{}]*)\}\s*(\w+)\s*;", text):
            values, nxt = {}, 0
            for item in m.group(2).split(","):
                item = item.strip()
                if not item:
                    continue
                em = re.match(r"^([A-Za-z_]\w*)\s*(?:=\s*(-?\d+))?$", item)
                if not em:
                    self.problems.append("%s:%d: cannot read enumerator '%s'"
                                         % (self.path, line_of(text, m.start()), item))
                    continue
                nxt = int(em.group(2)) if em.group(2) is not None else nxt
                values[em.group(1)] = nxt
                nxt += 1
            self.enums[m.group(3)] = values
        for m in re.finditer(r"\bSP_API\s+([^;{}()]*?)\b(sp_\w+)\s*\(([^()]*)\)\s*;", text):
            ret, name, params_text = CType(m.group(1)), m.group(2), " ".join(m.group(3).split())
            params = []
            if params_text not in ("", "void"):
                for p in params_text.split(","):
                    pm = re.match(r"^(.*?[\s*])([A-Za-z_]\w*)$", p.strip())
                    ctype = CType(pm.group(1)) if pm else CType(p)
                    if pm and not re.findall(r"[A-Za-z_]\w*", pm.group(1).replace("const", "")):
                        ctype, pm = CType(p), None  # an unnamed parameter such as `int`
                    params.append((ctype, pm.group(2) if pm else ""))
            self.functions[name] = (ret, params, line_of(text, m.start()))
        if not self.functions:
            self.problems.append("%s: no SP_API function prototypes found" % self.path)

    # Julia spellings that may stand for a C type. `field`: inside a struct (no Ref there).
    def allowed(self, ctype, field=False, is_return=False):
        return self._allowed(ctype.base, ctype.depth, field, is_return)

    def _allowed(self, base, depth, field, is_return):
        if depth == 0:
            if base == "void":
                return set(VOID) if is_return else set()
            if base in SCALARS:
                return set(SCALARS[base])
            if base in self.enums:
                return {"Cint", "Int32", julia_enum_name(base)}
            if base in self.structs:
                return {camel(base)}
            return set()  # an opaque struct by value, or an unknown type
        if depth == 1 and base == "char":
            return set(CSTRING)
        if depth == 1 and (base in self.opaque or base == "void"):
            return {"Ptr{Cvoid}", "Ptr{Nothing}"}
        pointees = self._allowed(base, depth - 1, field, False)
        out = {"Ptr{%s}" % p for p in pointees}
        if not field:
            out |= {"Ref{%s}" % p for p in pointees}
        return out


def strip_c_comments(text):
    """Replaces /* */ and // comments by spaces (newlines kept), leaving string literals."""
    out, i, n = [], 0, len(text)
    while i < n:
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text[i] in "\"'":
            q, j = text[i], i + 1
            while j < n and text[j] != q:
                j += 2 if text[j] == "\\" else 1
            out.append(text[i:j + 1])
            i = j + 1
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


# ---------------------------------------------------------------------------------------------
# The Julia sources
# ---------------------------------------------------------------------------------------------


def mask_julia(text):
    """The text with comments blanked and string/char literal contents replaced by 'x'.

    Positions and newlines are kept, so offsets and line numbers stay valid. Handles #...,
    nested #= =#, "...", \"\"\"...\"\"\", `...`, '.' char literals (vs the ' adjoint operator),
    and $(...) interpolation inside strings (its code is scanned, not masked).
    """
    out = list(text)
    n = len(text)

    def blank(a, b, fill):
        for k in range(a, b):
            if out[k] != "\n":
                out[k] = fill

    def scan_code(i, closing):
        """Scans code from i; with closing=')', stops after the paren that closes the group."""
        depth = 0
        while i < n:
            c = text[i]
            if c == "#":
                if text.startswith("#=", i):
                    j, level = i + 2, 1
                    while j < n and level:
                        if text.startswith("#=", j):
                            level, j = level + 1, j + 2
                        elif text.startswith("=#", j):
                            level, j = level - 1, j + 2
                        else:
                            j += 1
                    blank(i, j, " ")
                    i = j
                else:
                    j = text.find("\n", i)
                    j = n if j < 0 else j
                    blank(i, j, " ")
                    i = j
            elif c == '"' or c == "`":
                i = scan_string(i)
            elif c == "'":
                k = i - 1
                if k >= 0 and (text[k].isalnum() or text[k] in "_)]}'.!"):
                    i += 1  # the adjoint operator
                else:
                    j = i + 1
                    while j < n and text[j] != "'":
                        j += 2 if text[j] == "\\" else 1
                    blank(i + 1, j, "x")
                    i = j + 1
            elif closing and c in "([{":
                depth += 1
                i += 1
            elif closing and c in ")]}":
                if depth == 0:
                    return i + 1
                depth -= 1
                i += 1
            else:
                i += 1
        return i

    def scan_string(i):
        q = text[i]
        delim = q * 3 if text.startswith(q * 3, i) else q
        j = i + len(delim)
        while j < n:
            if text.startswith(delim, j):
                return j + len(delim)
            c = text[j]
            if c == "\\":
                blank(j, min(j + 2, n), "x")
                j += 2
            elif c == "$" and q == '"' and text.startswith("$(", j):
                out[j] = "x"
                out[j + 1] = "x"
                end = scan_code(j + 2, ")")
                out[end - 1] = "x"
                j = end
            else:
                blank(j, j + 1, "x")
                j += 1
        return n

    scan_code(0, None)
    return "".join(out)


def split_top(masked, start, end):
    """Splits masked[start:end] at top-level commas: [(a, b)] spans."""
    spans, depth, a = [], 0, start
    for k in range(start, end):
        c = masked[k]
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        elif c == "," and depth == 0:
            spans.append((a, k))
            a = k + 1
    spans.append((a, end))
    return spans


def matching_paren(masked, open_pos):
    depth = 0
    for k in range(open_pos, len(masked)):
        if masked[k] in "([{":
            depth += 1
        elif masked[k] in ")]}":
            depth -= 1
            if depth == 0:
                return k
    return -1


def norm(julia_type):
    t = re.sub(r"\s+", "", julia_type)
    return re.sub(r"\b(?:Base|Core)\.", "", t)


class CCall:
    def __init__(self, path, line, name, lib, ret, args, trailing_comma, nvalues, problems):
        self.path, self.line, self.name, self.lib = path, line, name, lib
        self.ret, self.args, self.trailing_comma, self.nvalues = ret, args, trailing_comma, nvalues
        self.problems = problems


def find_ccalls(path, text):
    """(ccalls, problems) of one Julia source."""
    masked = mask_julia(text)
    calls, problems = [], []
    for m in re.finditer(r"@ccall\b", masked):
        problems.append("%s:%d: @ccall is not checked by this tool; write ccall((:name, %s), ...)"
                        % (path, line_of(text, m.start()), LIB_EXPR))
    for m in re.finditer(r"(?<![\w@.!])ccall\s*\(", masked):
        line = line_of(text, m.start())
        where = "%s:%d" % (path, line)
        open_pos = m.end() - 1
        close = matching_paren(masked, open_pos)
        if close < 0:
            problems.append("%s: unbalanced ccall" % where)
            continue
        spans = split_top(masked, open_pos + 1, close)
        parts = [text[a:b].strip() for a, b in spans]
        if len(parts) >= 2 and parts[1] in CALLING_CONVENTIONS:
            del parts[1]
            del spans[1]
        if len(parts) < 3:
            problems.append("%s: ccall needs (function, return type, argument types, ...)" % where)
            continue
        fm = re.match(r"^\(\s*(?::([A-Za-z_]\w*)|\"([A-Za-z_]\w*)\")\s*,(.*)\)$", parts[0], re.S)
        if not fm:
            problems.append("%s: ccall's first argument must be (:name, %s), not %s"
                            % (where, LIB_EXPR, parts[0]))
            continue
        name = fm.group(1) or fm.group(2)
        lib = re.sub(r"\s+", "", fm.group(3))
        ret = norm(parts[1])
        a, b = spans[2]
        types_text = masked[a:b].strip()
        if not (types_text.startswith("(") and types_text.endswith(")")):
            problems.append("%s: ccall %s: argument types must be a tuple literal, not %s"
                            % (where, name, parts[2]))
            continue
        inner_a = a + masked[a:b].index("(") + 1
        inner_b = a + masked[a:b].rindex(")")
        if masked[inner_a:inner_b].strip() == "":
            args, trailing = [], False
        else:
            tspans = split_top(masked, inner_a, inner_b)
            args = [norm(text[x:y]) for x, y in tspans]
            trailing = args[-1] == ""
            if trailing:
                args.pop()
        if len(args) == 1 and not trailing:
            problems.append("%s: ccall %s: (%s) is not a tuple; write (%s,)"
                            % (where, name, args[0], args[0]))
        calls.append(CCall(path, line, name, lib, ret, args, trailing, len(parts) - 3, []))
    return calls, problems


def find_structs(path, text):
    """{name: (mutable, [(field, type)], line, [unexpected lines])} of the Julia sources."""
    masked = mask_julia(text)
    structs = {}
    lines = masked.split("\n")
    orig = text.split("\n")
    for idx, line in enumerate(lines):
        m = re.match(r"^\s*(mutable\s+)?struct\s+([A-Za-z_]\w*)(\{[^}]*\})?\s*(<:\s*\S+)?\s*$",
                     line)
        if not m:
            continue
        fields, unexpected = [], []
        for j in range(idx + 1, len(lines)):
            body = lines[j].strip()
            if body == "end":
                break
            if body == "":
                continue
            fm = re.match(r"^([A-Za-z_]\w*)\s*::\s*(.+?)$", body)
            if fm:
                fields.append((fm.group(1), norm(orig[j].split("::", 1)[1].split("#")[0])))
            else:
                unexpected.append(orig[j].strip())
        structs[m.group(2)] = (bool(m.group(1)), fields, idx + 1, unexpected,
                               bool(m.group(3)))
    return structs


def find_enums(path, text):
    """{name: (base type, {enumerator: value}, line)} of the Julia @enum definitions."""
    masked = mask_julia(text)
    enums = {}
    for m in re.finditer(r"@enum\s+([A-Za-z_]\w*)(?:\s*::\s*([A-Za-z_][\w.]*))?", masked):
        rest = masked[m.end():]
        bm = re.match(r"\s*begin\b(.*?)\n\s*end\b", rest, re.S)
        if bm:
            items = [x.strip() for x in re.split(r"[\n;]", bm.group(1)) if x.strip()]
        else:
            items = masked[m.end():masked.find("\n", m.end())].split()
        values, nxt = {}, 0
        for item in items:
            em = re.match(r"^([A-Za-z_]\w*)\s*(?:=\s*(-?\d+))?$", item)
            if not em:
                values[item] = None
                continue
            nxt = int(em.group(2)) if em.group(2) is not None else nxt
            values[em.group(1)] = nxt
            nxt += 1
        enums[m.group(1)] = (m.group(2) or "Int32", values, line_of(text, m.start()))
    return enums


# ---------------------------------------------------------------------------------------------
# The check
# ---------------------------------------------------------------------------------------------


def check(header_text, sources, not_wrapped=None, header_path="shardplan.h"):
    """Problems (a list of strings; empty when all is consistent) and a one-line summary.

    sources: {path: Julia text}. not_wrapped: {function: reason}, NOT_WRAPPED by default.
    """
    not_wrapped = NOT_WRAPPED if not_wrapped is None else not_wrapped
    header = Header(header_text, header_path)
    problems = list(header.problems)
    calls, structs, enums = [], {}, {}
    abi = soname = None
    for path, text in sources.items():
        c, p = find_ccalls(path, text)
        calls += c
        problems += p
        for name, s in find_structs(path, text).items():
            structs[name] = (path,) + s
        for name, e in find_enums(path, text).items():
            enums[name] = (path,) + e
        am = re.search(r"^\s*const\s+ABI_VERSION\s*=\s*(?:\w+\()?\s*(\d+)\s*\)?", mask_julia(text),
                       re.M)
        if am:
            abi = (path, line_of(text, am.start()), int(am.group(1)))
        # Found in the masked text (code only), read from the real one (the string's contents).
        sm = re.search(r'^\s*const\s+SONAME\s*=\s*"', mask_julia(text), re.M)
        if sm:
            value = re.match(r'"([^"\\$]*)"', text[sm.end() - 1:])
            soname = (path, line_of(text, sm.start()), value.group(1) if value else None)

    # ccalls
    called = set()
    for c in calls:
        where = "%s:%d: ccall %s" % (c.path, c.line, c.name)
        if c.lib != LIB_EXPR:
            problems.append("%s: library is %s, expected %s" % (where, c.lib, LIB_EXPR))
        if c.name not in header.functions:
            problems.append("%s: no such function in %s" % (where, header_path))
            continue
        called.add(c.name)
        ret, params, hline = header.functions[c.name]
        allowed = header.allowed(ret, is_return=True)
        if c.ret not in allowed:
            problems.append("%s: return type %s does not match C %s (expected one of %s)"
                            % (where, c.ret, ret, ", ".join(sorted(allowed)) or "nothing known"))
        if len(c.args) != len(params):
            problems.append("%s: %d argument types for the %d parameters of the C prototype (%s:%d)"
                            % (where, len(c.args), len(params), header_path, hline))
        for k, (jt, (ct, pname)) in enumerate(zip(c.args, params), 1):
            allowed = header.allowed(ct)
            if jt not in allowed:
                problems.append("%s: argument %d (%s) is %s, C has %s (expected one of %s)"
                                % (where, k, pname, jt, ct, ", ".join(sorted(allowed))
                                   or "nothing known"))
        if c.nvalues != len(c.args):
            problems.append("%s: passes %d values for %d argument types"
                            % (where, c.nvalues, len(c.args)))

    # coverage
    for name in sorted(header.functions):
        if name in not_wrapped:
            if name in called:
                problems.append("%s: %s is listed as not wrapped (%s) but is called"
                                % (header_path, name, not_wrapped[name]))
        elif name not in called:
            problems.append("%s:%d: %s is neither called by the binding nor listed in NOT_WRAPPED"
                            % (header_path, header.functions[name][2], name))
    for name in sorted(set(not_wrapped) - set(header.functions)):
        problems.append("NOT_WRAPPED lists %s, which the header does not declare" % name)

    # structs
    for cname, cfields in sorted(header.structs.items()):
        jname = camel(cname)
        if jname not in structs:
            problems.append("%s: C struct %s has no Julia struct %s" % (header_path, cname, jname))
            continue
        path, mutable, jfields, line, unexpected, parametric = structs[jname]
        where = "%s:%d: struct %s" % (path, line, jname)
        if mutable:
            problems.append("%s: must be immutable (a C mirror is isbits)" % where)
        if parametric:
            problems.append("%s: must not have type parameters" % where)
        for u in unexpected:
            problems.append("%s: only `name::Type` fields are allowed, found: %s" % (where, u))
        if [f for f, _ in jfields] != [f for f, _ in cfields]:
            problems.append("%s: fields (%s) differ from C %s (%s)"
                            % (where, ", ".join(f for f, _ in jfields), cname,
                               ", ".join(f for f, _ in cfields)))
        for (jf, jt), (cf, ct) in zip(jfields, cfields):
            allowed = header.allowed(ct, field=True)
            if jf == cf and jt not in allowed:
                problems.append("%s: field %s is %s, C has %s (expected one of %s)"
                                % (where, jf, jt, ct, ", ".join(sorted(allowed))
                                   or "nothing known"))

    # enums
    for cname, cvalues in sorted(header.enums.items()):
        jname = julia_enum_name(cname)
        if jname not in enums:
            problems.append("%s: C enum %s has no Julia @enum %s" % (header_path, cname, jname))
            continue
        path, base, jvalues, line = enums[jname]
        where = "%s:%d: @enum %s" % (path, line, jname)
        if base not in ("Cint", "Int32"):
            problems.append("%s: base type %s, a C enum is an int (Cint)" % (where, base))
        expected = {(k[3:] if k.startswith("SP_") else k): v for k, v in cvalues.items()}
        if jvalues != expected:
            problems.append("%s: values %s differ from C %s %s"
                            % (where, format_enum(jvalues), cname, format_enum(expected)))

    if header.abi_version is None:
        problems.append("%s: no #define SP_ABI_VERSION" % header_path)
    elif abi is None:
        problems.append("the Julia sources define no `const ABI_VERSION`")
    elif abi[2] != header.abi_version:
        problems.append("%s:%d: ABI_VERSION is %d, the header's SP_ABI_VERSION is %d"
                        % (abi[0], abi[1], abi[2], header.abi_version))
    if header.abi_version is not None:
        expected_soname = "libshardplan.so.%d" % header.abi_version
        if soname is None:
            problems.append("the Julia sources define no `const SONAME = \"%s\"`" % expected_soname)
        elif soname[2] != expected_soname:
            problems.append("%s:%d: SONAME is %s, the header's SP_ABI_VERSION %d makes it %s"
                            % (soname[0], soname[1],
                               '"%s"' % soname[2] if soname[2] is not None else "not a plain string",
                               header.abi_version, expected_soname))

    summary = ("%d ccalls to %d of %d header functions (%d listed as not wrapped), %d structs and "
               "%d enums checked against %s"
               % (len(calls), len(called), len(header.functions), len(not_wrapped),
                  len(header.structs), len(header.enums), header_path))
    return problems, summary


def format_enum(values):
    return "{%s}" % ", ".join("%s=%s" % kv for kv in sorted(values.items(), key=lambda kv: str(kv)))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--header", required=True, help="capi/include/shardplan/shardplan.h")
    ap.add_argument("sources", nargs="+", help="the binding's Julia sources (src/*.jl)")
    args = ap.parse_args(argv)
    with open(args.header, encoding="utf-8") as f:
        header_text = f.read()
    sources = {}
    for path in args.sources:
        with open(path, encoding="utf-8") as f:
            sources[path] = f.read()
    problems, summary = check(header_text, sources, header_path=args.header)
    for p in problems:
        print(p)
    if problems:
        print("FAIL: %d problem(s); %s" % (len(problems), summary))
        return 1
    print("OK: " + summary)
    return 0


if __name__ == "__main__":
    sys.exit(main())
