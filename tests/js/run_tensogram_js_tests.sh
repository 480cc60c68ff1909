#!/bin/sh
# run_tensogram_js_tests.sh SRC WORK [CLI [FIXTURES]]: builds the TypeScript
# package SRC (js/tensogram) in the copy WORK, with the WebAssembly module
# that the CTest fixture tensogram_wasm_module built into SRC/dist/wasm, and
# runs its tests; CLI is the C++ tensogram tool for the cross-language tests,
# FIXTURES the shared fixtures directory. Exit 77 (CTest SKIP_RETURN_CODE)
# when node, npm or the module is missing (or Emscripten: the
# module may then be stale), unless
# TENSOGRAM_REQUIRE_WASM=1.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
src=$1
work=$2
cli=${3:-}
fixtures=${4:-}
. "$(dirname "$0")/skip.sh"
command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1 || skip "node/npm not found"
# Without Emscripten the fixture skipped, and a module left in dist/wasm
# may be stale.
command -v emcc >/dev/null 2>&1 || skip "emcc not found (Debian: apt-get install emscripten)"
[ -f "$src/dist/wasm/tensogram_wasm.wasm" ] || skip "$src/dist/wasm has no module"
mkdir -p "$work"
rm -rf "$work/src" "$work/test" "$work/dist" "$work/dist-test"
for f in package.json package-lock.json tsconfig.json tsconfig.test.json src test; do
  cp -R "$src/$f" "$work/"
done
mkdir -p "$work/dist/wasm"
cp "$src/dist/wasm/tensogram_wasm.js" "$src/dist/wasm/tensogram_wasm.wasm" "$work/dist/wasm/"
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
