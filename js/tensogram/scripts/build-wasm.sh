#!/bin/sh
# build-wasm.sh [OUT [BUILD]]: builds the WebAssembly module of
# @tensogram/tensogram (docs/wasm.md) into OUT (default: dist/wasm of the
# package): tensogram_wasm.js (ES module factory) and tensogram_wasm.wasm.
#
# 1. Third-party sources (zstd, lz4, zlib, xxHash, Highway, nlohmann/json,
#    libaec when obtainable) come from Debian's source packages through
#    `apt-get source`, with a private deb-src list and package lists kept in
#    the cache (the system's apt configuration is not touched).
# 2. They are compiled with Emscripten (deps/CMakeLists.txt) into the cache.
# 3. Our core (src/, the project's layer lists) and the C ABI export layer are
#    compiled and linked in BUILD (default: build/wasm of the package).
# Steps 1 and 2 are skipped when the cache already holds their result.
# Cache: $TENSOGRAM_WASM_CACHE, default ~/.cache/tensogram-wasm.
# Exit 77 when Emscripten (emcc, emcmake) is not installed.
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$here/dist/wasm}
build=${2:-$here/build/wasm}
jobs=${TENSOGRAM_WASM_JOBS:-2}
if ! command -v emcc >/dev/null 2>&1 || ! command -v emcmake >/dev/null 2>&1; then
  echo "emcc/emcmake not found (Debian: apt-get install emscripten): cannot build the WebAssembly module"
  exit 77
fi
# Debian's emcc wrapper runs `${EMSDK_PYTHON:-python3}`: use the system
# Python directly (a version-manager shim in PATH costs seconds per call).
if [ -z "${EMSDK_PYTHON:-}" ] && [ -x /usr/bin/python3 ]; then
  export EMSDK_PYTHON=/usr/bin/python3
fi
# Debian's emscripten runs its JavaScript optimizer (acorn-optimizer.js) with
# `node` and Debian's node-acorn in /usr/share/nodejs, which a Node.js from
# elsewhere (NodeSource, nvm) does not search.
if [ -d /usr/share/nodejs/acorn ]; then
  export NODE_PATH="/usr/share/nodejs${NODE_PATH:+:$NODE_PATH}"
fi
cache=${TENSOGRAM_WASM_CACHE:-${HOME:-/tmp}/.cache/tensogram-wasm}
emver=$(emcc -dumpversion 2>/dev/null | tr -c 'A-Za-z0-9.\n' _)
mkdir -p "$cache"
cache=$(cd "$cache" && pwd)
# Emscripten's system libraries (libc, libc++) are Debian's prebuilt ones
# (its emscripten package freezes that cache).

# --- 1. sources -----------------------------------------------------------
srcdir=$cache/src
if [ ! -f "$srcdir/.complete" ]; then
  apt_dir=$cache/apt
  mkdir -p "$apt_dir/lists/partial" "$apt_dir/archives/partial" "$apt_dir/etc" "$srcdir"
  # The system's own Debian mirror (deb822 or one-line format), so a machine
  # that reaches Debian only through its configured mirror fetches from it.
  mirror=$(sed -n 's|^URIs: *\(http[^ ]*/debian\)/\{0,1\} *$|\1|p' /etc/apt/sources.list.d/*.sources 2>/dev/null | head -n 1)
  [ -n "$mirror" ] || mirror=$(sed -n 's|^deb  *\(\[[^]]*\]  *\)\{0,1\}\(http[^ ]*/debian\)/\{0,1\} .*|\2|p' /etc/apt/sources.list 2>/dev/null | head -n 1)
  suite=$(. /etc/os-release 2>/dev/null && echo "${VERSION_CODENAME:-}")
  echo "deb-src ${mirror:-http://deb.debian.org/debian} ${suite:-bookworm} main" > "$apt_dir/etc/sources.list"
  cat "$apt_dir/etc/sources.list"
  set -- -o "Dir::Etc::SourceList=$apt_dir/etc/sources.list" -o Dir::Etc::SourceParts=/nonexistent \
    -o "Dir::State::Lists=$apt_dir/lists" -o "Dir::Cache=$apt_dir" -o APT::Sandbox::User=root
  apt-get "$@" -q update
  (cd "$srcdir" && apt-get "$@" -q source libzstd lz4 zlib xxhash highway nlohmann-json3)
  # libaec (szip) is optional: without it the module reports szip as "not
  # built into this build" (docs/wasm.md).
  (cd "$srcdir" && apt-get "$@" -q source libaec) || echo "libaec source not available: building without szip"
  touch "$srcdir/.complete"
fi

# --- 2. third-party libraries ------------------------------------------------
deps=$cache/deps-$emver
if [ ! -f "$deps/.complete" ]; then
  rm -rf "$cache/deps-build-$emver"
  emcmake cmake -S "$here/wasm/deps" -B "$cache/deps-build-$emver" -DCMAKE_BUILD_TYPE=Release \
    -DTGM_SRC="$srcdir" -DCMAKE_INSTALL_PREFIX="$deps"
  cmake --build "$cache/deps-build-$emver" -j"$jobs"
  cmake --install "$cache/deps-build-$emver"
  touch "$deps/.complete"
fi

# --- 3. our core and the export layer -------------------------------------
# ccache works with emcc: a rebuild of unchanged sources (CI) is cache hits.
launcher=""
if command -v ccache >/dev/null 2>&1; then
  launcher="-DCMAKE_CXX_COMPILER_LAUNCHER=ccache"
fi
emcmake cmake -S "$here/wasm" -B "$build" -DCMAKE_BUILD_TYPE=Release -DTGM_DEPS="$deps" $launcher
cmake --build "$build" -j"$jobs"
mkdir -p "$out"
cp "$build/tensogram_wasm.js" "$build/tensogram_wasm.wasm" "$out/"
echo "WebAssembly module: $out/tensogram_wasm.js, $out/tensogram_wasm.wasm"
