#!/bin/sh
# run_js_tests.sh SRC WORK [CLI]: builds and tests the TypeScript package SRC
# in the copy WORK (node_modules and build output stay out of the source
# tree); CLI is the C++ metatensor tool for the cross-language tests.
# Exit 77 (CTest SKIP_RETURN_CODE) when node or npm is missing.
set -eu
src=$1
work=$2
cli=${3:-}
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  echo "node/npm not found: skipping the JavaScript tests"
  exit 77
fi
mkdir -p "$work"
rm -rf "$work/src" "$work/test" "$work/dist" "$work/dist-test"
for f in package.json package-lock.json tsconfig.json tsconfig.test.json README.md src test; do
  cp -R "$src/$f" "$work/"
done
cd "$work"
npm ci --no-audit --no-fund --loglevel=error
npm run --silent build
npm run --silent build:test
# The shared TypeBox outputs (tests/metatensor/data/typebox), read in place.
TYPEBOX_DATA_DIR=$(cd "$src/../../tests/metatensor/data/typebox" && pwd) \
  METATENSOR_CLI="$cli" npm test --silent
