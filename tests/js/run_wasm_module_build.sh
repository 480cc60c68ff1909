#!/bin/sh
# run_wasm_module_build.sh PKG: builds the WebAssembly module of the
# TypeScript package PKG (js/tensogram) into PKG/dist/wasm, in the package's
# own build directory PKG/build/wasm (git ignores both; the one incremental
# build `npm run build:wasm` also uses: ccache misses a build directory
# elsewhere, the sources' relative paths differ). The CTest fixture of the
# TypeScript package and viewer tests (tests/js/CMakeLists.txt).
# Exit 77 (CTest SKIP_RETURN_CODE) when Emscripten is missing, unless
# TENSOGRAM_REQUIRE_WASM=1.
set -eu
pkg=$1
if ! command -v emcc >/dev/null 2>&1; then
  if [ "${TENSOGRAM_REQUIRE_WASM:-0}" = 1 ]; then
    echo "emcc not found (Debian: apt-get install emscripten) but TENSOGRAM_REQUIRE_WASM=1" >&2
    exit 1
  fi
  echo "emcc not found (Debian: apt-get install emscripten): skipping the WebAssembly module"
  exit 77
fi
exec sh "$pkg/scripts/build-wasm.sh"
