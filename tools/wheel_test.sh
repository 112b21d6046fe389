#!/usr/bin/env bash
# The Python package as a user gets it, with no SHARDPLAN_* variable:
#   1. `pip wheel ./bindings/python` (the in-tree backend builds the library
#      with `bazel build -c opt` and ships it): the wheel's name, tag, WHEEL,
#      RECORD and contents are checked;
#   2. the wheel, and `pip install ./bindings/python` itself, each installed
#      into a fresh virtual environment (`python3 -m venv`, `pip install
#      --no-index`), then run from a directory outside the checkout with a
#      clean environment (no SHARDPLAN_*, no PYTHONPATH): `import shardplan`
#      loads the library inside the package (never the checkout's) and
#      checks the bundled example; `python -m shardplan check|plan` gives the
#      bytes and exit status of the shardplan CLI (built with -c opt) on the
#      bundled examples, --format json and text;
#   3. the other ways to find the library: a wheel built from an installed
#      library through pkg-config (a prefix laid out as tools/install.sh
#      does), and a wheel without a library (library=none) loading the
#      installed library by its soname libshardplan.so.1 (LD_LIBRARY_PATH).
# Usage: tools/wheel_test.sh [PYTHON]   (default /usr/bin/python3). Prints
# "wheel: N checks passed, N failed"; exit status 1 when one failed.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
python="${1:-/usr/bin/python3}"
work="$(mktemp -d /tmp/shardplan-wheel.XXXXXX)"
trap 'rm -rf "$work"' EXIT
passed=0 failed=0
ok() { echo "ok: $*"; passed=$((passed + 1)); }
fail() { echo "FAILED: $*"; failed=$((failed + 1)); }
finish() {
  echo "wheel: ${passed} checks passed, ${failed} failed"
  [[ $failed -eq 0 ]]
  exit $?
}
# A clean environment: no SHARDPLAN_*, no PYTHONPATH, not in the checkout.
clean() { env -i PATH=/usr/local/bin:/usr/bin:/bin HOME="${HOME:-/root}" LANG=C.UTF-8 "$@"; }

for v in $(compgen -e | grep '^SHARDPLAN_'); do unset "$v"; done
unset PYTHONPATH

# ---- 1. pip wheel ./bindings/python ------------------------------------------
"$python" -m venv "$work/build" || { fail "python3 -m venv"; finish; }
echo "=== pip wheel ./bindings/python (builds the library with bazel build -c opt)"
if ! (cd "$root" && "$work/build/bin/pip" --disable-pip-version-check wheel --no-index --no-deps \
  -w "$work/dist" ./bindings/python); then
  fail "pip wheel ./bindings/python"
  finish
fi
wheels=("$work"/dist/*.whl)
wheel="${wheels[0]}"
ls -l "$wheel"
if "$python" - "$wheel" "$root" <<'EOF'; then ok "the wheel: name, tag, WHEEL, RECORD, contents"; else fail "the wheel"; fi
import base64, csv, hashlib, io, re, sys, sysconfig, zipfile
wheel, root = sys.argv[1], sys.argv[2]
version = re.search(r'^__version__ = "(.+)"$', open(f"{root}/bindings/python/shardplan/_version.py").read(), re.M).group(1)
platform = re.sub(r"[^A-Za-z0-9]", "_", sysconfig.get_platform())
name = wheel.rsplit("/", 1)[1]
assert name == f"shardplan-{version}-py3-none-{platform}.whl", name
with zipfile.ZipFile(wheel) as z:
    names = z.namelist()
    info = f"shardplan-{version}.dist-info"
    rows = list(csv.reader(io.StringIO(z.read(f"{info}/RECORD").decode())))
    assert sorted(r[0] for r in rows) == sorted(names), "RECORD lists every file once"
    for path, digest, size in rows:
        if path == f"{info}/RECORD":
            assert digest == size == ""
            continue
        data = z.read(path)
        want = "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        assert (digest, int(size)) == (want, len(data)), path
    wheel_file = z.read(f"{info}/WHEEL").decode()
    assert "Root-Is-Purelib: false\n" in wheel_file and f"Tag: py3-none-{platform}\n" in wheel_file, wheel_file
    assert "Requires-External: libtbb12" in z.read(f"{info}/METADATA").decode()
    library = z.getinfo("shardplan/libshardplan.so.1")
    assert z.read(library.filename)[:4] == b"\x7fELF" and (library.external_attr >> 16) & 0o111
    for needed in ("__init__.py", "__main__.py", "_capi.py", "_cli.py", "_locate.py", "torch.py", "py.typed",
                   "examples/tiny-llama-broken.json", "examples/tiny-llama.json", "examples/tiny-plan.json"):
        assert f"shardplan/{needed}" in names, needed
    for example in ("tiny-llama-broken.json", "tiny-llama.json", "tiny-plan.json"):
        assert z.read(f"shardplan/examples/{example}") == open(f"{root}/examples/{example}", "rb").read()
    assert not [n for n in names if "__pycache__" in n or n.endswith(".pyc")]
    assert not [n for n in names if ".so" in n and n != "shardplan/libshardplan.so.1"]
    print(f"{name}: {sum(i.file_size for i in z.infolist())} bytes unpacked, {len(names)} files;",
          f"the library {library.file_size} bytes ({library.compress_size} compressed)")
EOF

# The CLI to compare with, from the same -c opt build.
cli=""
if (cd "$root" && bazel build -c opt --symlink_prefix=/ //cli:shardplan >/dev/null 2>&1); then
  cli="$(cd "$root" && bazel info -c opt bazel-bin 2>/dev/null)/cli/shardplan"
fi
[[ -x "$cli" ]] || fail "bazel build -c opt //cli:shardplan"

# ---- 2. Fresh virtual environments, run from outside the checkout ---------------
# check_venv NAME VENV: the installed package, its library and the command line.
check_venv() {
  local name="$1" venv="$2" dir="$work/run-$1"
  mkdir -p "$dir"
  if (cd "$dir" && clean "$venv/bin/python" - "$venv" "$root") <<'EOF'; then
import os, sys
venv, root = sys.argv[1], sys.argv[2]
assert not [p for p in sys.path if p and os.path.realpath(p).startswith(root + "/")], sys.path
import shardplan
here = os.path.dirname(shardplan.__file__)
assert os.path.realpath(here).startswith(os.path.realpath(venv) + "/"), here
assert shardplan.library_path() == os.path.join(here, "libshardplan.so.1"), shardplan.library_path()
maps = [l.split()[-1] for l in open("/proc/self/maps") if "libshardplan" in l]
assert maps and all(m.startswith(os.path.realpath(venv) + "/") for m in maps), maps
result = shardplan.check(open(shardplan.example_path()).read())
assert shardplan.example_path().startswith(here + "/examples/")
print(result.ok, [(d.code, d.fqn) for d in result.diagnostics[:2]])
assert not result.ok and result.diagnostics[0].code == "native-no-match"
with shardplan.plan(open(shardplan.example_path("tiny-plan.json")).read()) as planned:
    assert planned.ok and planned.memory.devices == 8
EOF
    ok "${name}: import shardplan from ${dir} loads the bundled library and checks the bundled example"
  else
    fail "${name}: import shardplan from ${dir}"
  fi
  [[ -x "$cli" ]] || return
  local examples doc cmd options a b differ=0 runs=0
  examples="$(cd "$dir" && clean "$venv/bin/python" -c 'import os, shardplan; print(os.path.dirname(shardplan.example_path()))')"
  for doc in "$examples"/*.json; do
    for cmd in check plan; do
      for options in "--format json" "--format text" "--max-diagnostics 2" "--format json --max-diagnostics 2"; do
        runs=$((runs + 1))
        # shellcheck disable=SC2086  # the options are words
        a="$(cd "$dir" && clean "$cli" "$cmd" $options "$doc" 2>&1; echo "exit $?")"
        # shellcheck disable=SC2086
        b="$(cd "$dir" && clean "$venv/bin/python" -m shardplan "$cmd" $options "$doc" 2>&1; echo "exit $?")"
        if [[ "$a" != "$b" ]]; then
          differ=$((differ + 1))
          echo "--- shardplan $cmd $options $doc"
          diff <(echo "$a") <(echo "$b") | head -20
        fi
      done
    done
  done
  if [[ $differ -eq 0 ]]; then
    ok "${name}: python -m shardplan = the CLI (output bytes and exit status), ${runs} runs on the bundled examples"
  else
    fail "${name}: python -m shardplan differs from the CLI in ${differ} of ${runs} runs"
  fi
  # The JSON of the broken example, shown.
  (cd "$dir" && clean "$venv/bin/python" -m shardplan check "$examples/tiny-llama-broken.json" | tail -1)
}

"$python" -m venv "$work/venv-wheel" &&
  "$work/venv-wheel/bin/pip" --disable-pip-version-check install --no-index "$wheel" >/dev/null
check_venv wheel "$work/venv-wheel"

echo "=== pip install ./bindings/python into a fresh venv"
"$python" -m venv "$work/venv-install" &&
  (cd "$root" && "$work/venv-install/bin/pip" --disable-pip-version-check install --no-index ./bindings/python \
    >/dev/null)
check_venv install "$work/venv-install"

# ---- 3. An installed library: pkg-config at build time, the soname at run time ---
# A prefix as tools/install.sh lays it out, from the library the wheel ships.
prefix="$work/prefix"
mkdir -p "$prefix/lib/pkgconfig"
(cd "$work" && "$python" -c 'import sys, zipfile; sys.stdout.buffer.write(zipfile.ZipFile(sys.argv[1]).read("shardplan/libshardplan.so.1"))' "$wheel") \
  >"$prefix/lib/libshardplan.so.0.9.0"
ln -s libshardplan.so.0.9.0 "$prefix/lib/libshardplan.so.1"
ln -s libshardplan.so.1 "$prefix/lib/libshardplan.so"
cat >"$prefix/lib/pkgconfig/shardplan.pc" <<EOF
prefix=$prefix
libdir=\${prefix}/lib
includedir=\${prefix}/include
Name: shardplan
Description: test prefix
Version: 0.9.0
Libs: -L\${libdir} -lshardplan
Cflags: -I\${includedir}
EOF
if (cd "$work" && PKG_CONFIG_PATH="$prefix/lib/pkgconfig" "$work/build/bin/pip" --disable-pip-version-check \
  wheel --no-index --no-deps -w "$work/dist-pc" --config-settings library=pkg-config "$root/bindings/python" \
  >/dev/null) && "$python" - "$work"/dist-pc/*.whl "$prefix/lib/libshardplan.so.0.9.0" <<'EOF'; then
import sys, zipfile
z = zipfile.ZipFile(sys.argv[1])
assert z.read("shardplan/libshardplan.so.1") == open(sys.argv[2], "rb").read()
EOF
  ok "library=pkg-config: the wheel ships the library pkg-config names (PKG_CONFIG_PATH)"
else
  fail "library=pkg-config"
fi
"$python" -m venv "$work/venv-soname" &&
  "$work/venv-soname/bin/pip" --disable-pip-version-check wheel --no-index --no-deps -w "$work/dist-pure" \
    --config-settings library=none "$root/bindings/python" >/dev/null &&
  "$work/venv-soname/bin/pip" --disable-pip-version-check install --no-index "$work"/dist-pure/*-py3-none-any.whl \
    >/dev/null
if (cd "$work" && clean env LD_LIBRARY_PATH="$prefix/lib" "$work/venv-soname/bin/python" -c '
import shardplan
assert shardplan.library_path() == "libshardplan.so.1", shardplan.library_path()
assert not shardplan.check(open(shardplan.example_path()).read()).ok'); then
  ok "library=none: a pure wheel loads the installed library by its soname libshardplan.so.1"
else
  fail "library=none: loading the installed library by its soname"
fi
if ldconfig -p 2>/dev/null | grep -q 'libshardplan\.so\.1 '; then
  echo "skipped: the error without a library (this system has libshardplan.so.1 installed)"
elif (cd "$work" && ! clean "$work/venv-soname/bin/python" -c 'import shardplan' >"$work/error" 2>&1) &&
  grep -q "soname libshardplan.so.1 (LD_LIBRARY_PATH, the ldconfig cache): not found" "$work/error"; then
  ok "without any library, the error lists what was tried"
else
  fail "the error without a library"
fi
finish
