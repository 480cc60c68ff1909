#!/bin/sh
# run_tensogram_js_tests.sh SRC WORK [CLI [FIXTURES]]: builds the WebAssembly
# module and the TypeScript package SRC (js/tensogram) in the copy WORK and
# runs its tests; CLI is the C++ tensogram tool for the cross-language tests,
# FIXTURES the shared fixtures directory. Exit 77 (CTest SKIP_RETURN_CODE)
# when emcc, node or npm is missing. The WebAssembly third-party libraries
# are cached (TENSOGRAM_WASM_CACHE, default ~/.cache/tensogram-wasm).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
src=$1
work=$2
cli=${3:-}
fixtures=${4:-}
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  echo "node/npm not found: skipping the TypeScript/WebAssembly tests"
  exit 77
fi
if ! command -v emcc >/dev/null 2>&1; then
  echo "emcc not found (Debian: apt-get install emscripten): skipping the TypeScript/WebAssembly tests"
  exit 77
fi
mkdir -p "$work"
rm -rf "$work/src" "$work/test" "$work/dist" "$work/dist-test"
for f in package.json package-lock.json tsconfig.json tsconfig.test.json src test; do
  cp -R "$src/$f" "$work/"
done
# The module is built from the source tree (its CMake project reads src/ of
# the repository) in the package's own build directory, SRC/build/wasm (git
# ignores it), the one `npm run build:wasm` uses: one incremental build for
# both, where a build directory of its own here would start cold (ccache
# misses it: the sources' relative paths differ). Copied to WORK/dist/wasm.
sh "$src/scripts/build-wasm.sh" "$work/dist/wasm"
cd "$work"
npm ci --no-audit --no-fund --loglevel=error
npm run --silent build
npm run --silent build:test
TENSOGRAM_CLI="$cli" TENSOGRAM_FIXTURES="$fixtures" npm test --silent

# The published package: exactly the files `npm pack` ships (the WebAssembly
# module included), unpacked where a user's `npm install` puts them, and used
# through both entry points by tests/js/consumer/tensogram_consumer.mjs.
rm -rf pack consumer
mkdir -p pack consumer/node_modules/@tensogram
npm pack --silent --pack-destination pack >/dev/null
tar -xzf pack/tensogram-tensogram-*.tgz -C consumer/node_modules/@tensogram
mv consumer/node_modules/@tensogram/package consumer/node_modules/@tensogram/tensogram
printf '{ "private": true, "type": "module" }\n' >consumer/package.json
cp "$here/consumer/tensogram_consumer.mjs" consumer/
cd consumer
node tensogram_consumer.mjs
