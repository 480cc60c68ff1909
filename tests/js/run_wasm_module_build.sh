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
. "$(dirname "$0")/skip.sh"
command -v emcc >/dev/null 2>&1 || skip "emcc not found (Debian: apt-get install emscripten)"
exec sh "$pkg/scripts/build-wasm.sh"
