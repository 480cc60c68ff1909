#!/bin/sh
# run_viewer_tests.sh JS FIXTURES: the web viewer's tests (JS/viewer,
# docs/viewer.md) in Debian's headless Chromium: builds the two TypeScript
# packages it imports (JS/tensogram with the WebAssembly module that the CTest
# fixture tensogram_wasm_module put in its dist/wasm, JS/metatensor), the site
# with Vite, then runs `node --test` on the compiled tests. FIXTURES is the
# shared fixtures directory (the reference .tgm files). `npm ci` runs only
# where the lockfile is newer than the installed tree, as in `make viewer`.
# Exit 77 (CTest SKIP_RETURN_CODE) when node/npm, Emscripten or Chromium is
# missing, unless TENSOGRAM_REQUIRE_WASM=1.
set -eu
js=$(cd "$1" && pwd)
fixtures=${2:-}
. "$(dirname "$0")/skip.sh"
command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1 || skip "node/npm not found"
command -v emcc >/dev/null 2>&1 || skip "emcc not found (Debian: apt-get install emscripten)"
[ -f "$js/tensogram/dist/wasm/tensogram_wasm.wasm" ] || skip "$js/tensogram/dist/wasm has no module"
chromium=${CHROMIUM:-/usr/bin/chromium}
[ -x "$chromium" ] || skip "$chromium not found (Debian: apt-get install chromium)"

npm_ci_if_stale() {
  if [ ! -f "$1/node_modules/.package-lock.json" ] || [ "$1/package-lock.json" -nt "$1/node_modules/.package-lock.json" ]; then
    (cd "$1" && npm ci --no-audit --no-fund --loglevel=error)
  fi
}
for pkg in tensogram metatensor viewer; do
  npm_ci_if_stale "$js/$pkg"
done
(cd "$js/tensogram" && npm run --silent build)
(cd "$js/metatensor" && npm run --silent build)
cd "$js/viewer"
npm run --silent build
npm run --silent build:test
TENSOGRAM_FIXTURES="${fixtures:+$fixtures/tgm}" CHROMIUM="$chromium" npm test --silent
