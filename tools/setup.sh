#!/usr/bin/env bash
# Prepare a Debian 12 (bookworm) machine to build shardplan fully offline.
#
#  * installs the Debian packages Bazel and the build need (apt-get update
#    only when something is missing),
#  * enables deb-src for Debian main (separate deb822 file, only if no deb-src
#    entry exists yet),
#  * fetches abseil's Debian source package and unpacks it into the
#    git-ignored folder third_party/abseil/src (only if missing),
#  * likewise oneTBB's, into third_party/onetbb/src: the ThreadSanitizer
#    build compiles it from source (tools/test.sh), as TSan must see the
#    synchronization inside oneTBB's scheduler.
#
# Idempotent; a fast no-op when everything is in place. Run as root (or via
# sudo). Works from any current directory.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO_ROOT="$(cd "${SCRIPT_DIR}/.." && pwd)"
ABSL_PARENT="${REPO_ROOT}/third_party/abseil"
ABSL_DIR="${ABSL_PARENT}/src"
ABSL_STAMP="${ABSL_DIR}/.shardplan-abseil-version"
# Optional pin, e.g. ABSL_DEB_VERSION=20220623.1-1+deb12u2 tools/setup.sh
ABSL_DEB_VERSION="${ABSL_DEB_VERSION:-}"
# Debian patches NOT applied to abseil: configure.diff turns absl::string_view/
# optional/variant/any into distinct types (instead of std:: aliases), renames
# the inline namespace and enables hardening - that is for Debian's shared-lib
# ABI; we build abseil statically from source with upstream defaults.
ABSL_SKIP_PATCHES="configure.diff"
DEBSRC_FILE="/etc/apt/sources.list.d/shardplan-deb-src.sources"

PACKAGES=(
  bazel-bootstrap          # Bazel 4.2.3 (/usr/bin/bazel)
  default-jdk-headless     # JDK for the Bazel server (dependency of bazel-bootstrap)
  bazel-skylib bazel-platforms bazel-rules-java
  build-essential g++ python3 unzip zip
  libtbb-dev libgtest-dev libgmock-dev googletest libbenchmark-dev rapidjson-dev
  libmimalloc-dev          # the CLI's allocator (cli/BUILD)
  dpkg-dev patch xz-utils  # apt-get source / dpkg-source; dpkg-shlibdeps (tools/package-deb.sh)
  pkgconf                  # pkg-config, for tools/install_test.sh
  binutils                 # nm for the C ABI's export test
  golang-go                # the Go binding (cgo)
  python3-pytest python3-venv  # the Python binding's tests and pip install check
  emscripten               # the WebAssembly build (emcc 3.1.6, prebuilt frozen cache)
  chromium                 # the browser test of the WebAssembly page
  python3-torch            # the PyTorch exporter (shardplan.torch) and the model zoo
  clang libclang-rt-14-dev # the fuzz targets (libFuzzer) and ThreadSanitizer (tools/clang)
  valgrind linux-perf      # the profiles of tools/perf/measure.py and instructions.py
)

ACTIONS=()
log() { echo "[setup] $*"; }
did() { ACTIONS+=("$*"); log "$*"; }

SUDO=""
if [[ ${EUID} -ne 0 ]]; then
  if command -v sudo >/dev/null 2>&1; then SUDO="sudo"; fi
fi
as_root() {
  if [[ ${EUID} -ne 0 && -z ${SUDO} ]]; then
    echo "[setup] ERROR: need root for: $*" >&2
    exit 1
  fi
  ${SUDO} env DEBIAN_FRONTEND=noninteractive "$@"
}

APT_UPDATED=0
apt_update_once() {
  if [[ ${APT_UPDATED} -eq 0 ]]; then
    log "apt-get update"
    as_root apt-get update -qq
    APT_UPDATED=1
    did "ran apt-get update"
  fi
}

# --- 1. deb-src -------------------------------------------------------------
have_debsrc() {
  grep -rqsE '^[[:space:]]*(deb-src[[:space:]]|Types:.*deb-src)' \
    /etc/apt/sources.list /etc/apt/sources.list.d/ 2>/dev/null
}
# deb-src twins of the machine's own Debian archive entries (deb822 stanzas
# signed by the Debian archive keyring, and one-line "deb" entries for this
# release), so that no mirror is named here.
debsrc_stanzas() {
  local f
  for f in /etc/apt/sources.list.d/*.sources; do
    [[ -f ${f} && ${f} != "${DEBSRC_FILE}" ]] || continue
    awk 'BEGIN { RS = ""; ORS = "\n\n" }
         /Types:[^\n]*deb/ && /debian-archive-keyring/ { sub(/Types:[^\n]*/, "Types: deb-src"); print }' "${f}"
  done
}
debsrc_lines() {
  # shellcheck disable=SC1091
  local codename
  codename="$(. /etc/os-release && echo "${VERSION_CODENAME:-bookworm}")"
  grep -hE "^[[:space:]]*deb[[:space:]].*[[:space:]]${codename}(-[a-z]+)?[[:space:]].*main" \
    /etc/apt/sources.list 2>/dev/null | sed -E 's/^[[:space:]]*deb[[:space:]]/deb-src /' || true
}
if ! have_debsrc; then
  stanzas="$(debsrc_stanzas)"
  lines="$(debsrc_lines)"
  if [[ -z ${stanzas} && -z ${lines} ]]; then
    echo "[setup] ERROR: no Debian archive entry found in the apt sources to mirror as deb-src" >&2
    exit 1
  fi
  log "enabling deb-src for the configured Debian archives"
  if [[ -n ${stanzas} ]]; then
    printf '# Added by shardplan tools/setup.sh (for: apt-get source abseil)\n%s\n' "${stanzas}" |
      as_root tee "${DEBSRC_FILE}" >/dev/null
  fi
  if [[ -n ${lines} ]]; then
    printf '# Added by shardplan tools/setup.sh (for: apt-get source abseil)\n%s\n' "${lines}" |
      as_root tee "${DEBSRC_FILE%.sources}.list" >/dev/null
  fi
  did "enabled deb-src (${DEBSRC_FILE%.sources}.*)"
  APT_UPDATED=0
  apt_update_once
fi

# --- 2. packages ---------------------------------------------------------------
MISSING=()
for p in "${PACKAGES[@]}"; do
  [[ ${p} == \#* ]] && continue
  if [[ "$(dpkg-query -W -f='${Status}' "${p}" 2>/dev/null || true)" != "install ok installed" ]]; then
    MISSING+=("${p}")
  fi
done
if [[ ${#MISSING[@]} -gt 0 ]]; then
  # Package lists may be missing on a fresh container.
  if ! compgen -G "/var/lib/apt/lists/*_Packages*" >/dev/null; then apt_update_once; fi
  log "installing: ${MISSING[*]}"
  if ! as_root apt-get install -y -qq --no-install-recommends "${MISSING[@]}"; then
    apt_update_once
    as_root apt-get install -y -qq --no-install-recommends "${MISSING[@]}"
  fi
  did "installed packages: ${MISSING[*]}"
fi

# Debian source packages, unpacked into git-ignored folders.
#
# fetch_debian_source PACKAGE SPEC PARENT [DPKG-SOURCE OPTION...]: downloads
# SPEC (PACKAGE or PACKAGE=VERSION) from the deb-src archives into a fresh
# folder under PARENT (WORK, removed on exit until install_unpacked) and
# unpacks it there as WORK/unpacked; DSC is its .dsc.
fetch_debian_source() {
  local package=$1 spec=$2 parent=$3 out
  shift 3
  if ! apt-cache showsrc "${spec}" 2>/dev/null | grep -q "^Package: ${package}"; then
    APT_UPDATED=0
    apt_update_once
  fi
  mkdir -p "${parent}"
  WORK="$(mktemp -d "${parent}/.fetch.XXXXXX")"
  trap 'rm -rf "${WORK}"' EXIT
  chmod 755 "${WORK}"
  log "downloading Debian source package ${spec}"
  (cd "${WORK}" && apt-get source -qq --download-only "${spec}" 2>&1 | grep -v 'unsandboxed' || true)
  DSC="$(ls "${WORK}/${package}"_*.dsc 2>/dev/null | head -n1 || true)"
  [[ -n ${DSC} ]] || { echo "[setup] ERROR: apt-get source ${package} failed" >&2; exit 1; }
  # (dpkg-source's "gpgv: Can't check signature" is expected without
  #  debian-keyring; apt already verified the checksums via signed Sources.)
  if ! out="$(cd "${WORK}" && dpkg-source -x "$@" "${DSC}" unpacked 2>&1)"; then
    echo "${out}" >&2; exit 1
  fi
}

# install_unpacked DEST: WORK/unpacked becomes DEST (replacing it), owned by
# the user who ran sudo.
install_unpacked() {
  local dest=$1
  rm -rf "${dest}"
  mv "${WORK}/unpacked" "${dest}"
  rm -rf "${WORK}"
  trap - EXIT
  if [[ -n ${SUDO_UID:-} && -n ${SUDO_GID:-} ]]; then
    chown -R "${SUDO_UID}:${SUDO_GID}" "$(dirname "${dest}")"
  fi
}

# --- 3. abseil source ----------------------------------------------------------
if [[ -f ${ABSL_STAMP} && -f ${ABSL_DIR}/WORKSPACE && -d ${ABSL_DIR}/absl ]]; then
  log "abseil source present: ${ABSL_DIR} ($(cat "${ABSL_STAMP}"))"
else
  SPEC="abseil"
  [[ -n ${ABSL_DEB_VERSION} ]] && SPEC="abseil=${ABSL_DEB_VERSION}"
  fetch_debian_source abseil "${SPEC}" "${ABSL_PARENT}" --skip-patches
  # Apply Debian's patches (bug/CVE fixes) except the ABI/config ones.
  if [[ -f ${WORK}/unpacked/debian/patches/series ]]; then
    while read -r patchname _; do
      [[ -z ${patchname} || ${patchname} == \#* ]] && continue
      if [[ " ${ABSL_SKIP_PATCHES} " == *" ${patchname} "* ]]; then
        log "  skipping debian patch ${patchname}"
        continue
      fi
      log "  applying debian patch ${patchname}"
      patch -s -p1 -d "${WORK}/unpacked" < "${WORK}/unpacked/debian/patches/${patchname}"
    done < "${WORK}/unpacked/debian/patches/series"
  fi
  VERSION="$(basename "${DSC}" .dsc)"
  echo "${VERSION#abseil_} (Debian source; patches skipped: ${ABSL_SKIP_PATCHES})" \
    > "${WORK}/unpacked/.shardplan-abseil-version"
  install_unpacked "${ABSL_DIR}"
  did "unpacked abseil ${VERSION#abseil_} into ${ABSL_DIR}"
fi

# --- 3b. oneTBB source ---------------------------------------------------------
# Debian's source of the libtbb-dev the other builds link (all its patches
# applied), with upstream's BUILD.bazel: `--override_repository=onetbb=...`
# swaps it in for the ThreadSanitizer build only.
TBB_DIR="${REPO_ROOT}/third_party/onetbb/src"
if [[ -f ${TBB_DIR}/BUILD.bazel && -f ${TBB_DIR}/.shardplan-onetbb-version ]]; then
  log "oneTBB source present: ${TBB_DIR} ($(cat "${TBB_DIR}/.shardplan-onetbb-version"))"
else
  TBB_VERSION="$(dpkg-query -W -f='${Version}' libtbb-dev)"
  fetch_debian_source onetbb "onetbb=${TBB_VERSION}" "${TBB_DIR%/src}"
  echo "${TBB_VERSION} (Debian source)" > "${WORK}/unpacked/.shardplan-onetbb-version"
  install_unpacked "${TBB_DIR}"
  did "unpacked oneTBB ${TBB_VERSION} into ${TBB_DIR}"
fi

# --- 4. npm packages of the browser test ---------------------------------------
# playwright-core, at the version package-lock.json pins, from the npm
# registry (Node.js and npm come with the machine; Debian's emscripten
# package depends on nodejs, which installs them otherwise).
NPM_DIR="${REPO_ROOT}/wasm/test"
if [[ -f ${NPM_DIR}/package-lock.json ]]; then
  if [[ -d ${NPM_DIR}/node_modules/playwright-core ]]; then
    log "npm packages present: ${NPM_DIR}/node_modules"
  else
    command -v npm >/dev/null 2>&1 || { echo "[setup] ERROR: npm not found" >&2; exit 1; }
    log "npm ci in ${NPM_DIR}"
    (cd "${NPM_DIR}" && npm ci --no-audit --no-fund --loglevel=error)
    did "installed npm packages in ${NPM_DIR}"
  fi
fi

# --- summary ------------------------------------------------------------------
if [[ ${#ACTIONS[@]} -eq 0 ]]; then
  log "nothing to do; everything is in place."
else
  log "done. Actions:"
  for a in "${ACTIONS[@]}"; do echo "  - ${a}"; done
fi
log "next: cd ${REPO_ROOT} && bazel test //..."
