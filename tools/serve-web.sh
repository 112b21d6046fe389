#!/usr/bin/env bash
# Builds the browser plan checker (bazel build --config=wasm //wasm:site) and
# serves it on http://127.0.0.1:PORT/ (default 8000) until interrupted. The
# page is static files: any web server will do; nothing is sent anywhere.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
port="${1:-8000}"
cd "$root"
bash tools/setup.sh >/dev/null
bazel build --config=wasm //wasm:site
site="$(bazel info --config=wasm bazel-bin 2>/dev/null)/wasm/site"
echo "serving ${site} on http://127.0.0.1:${port}/"
exec /usr/bin/python3 -m http.server "${port}" --bind 127.0.0.1 --directory "${site}"
