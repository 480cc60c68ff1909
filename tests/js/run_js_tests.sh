#!/bin/sh
# run_js_tests.sh SRC WORK [CLI]: builds and tests the TypeScript package SRC
# in the copy WORK (node_modules and build output stay out of the source
# tree); CLI is the C++ metatensor tool for the cross-language tests.
# Exit 77 (CTest SKIP_RETURN_CODE) when node or npm is missing.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$1" && pwd)
work=$2
cli=${3:-}
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  echo "node/npm not found: skipping the JavaScript tests"
  exit 77
fi
mkdir -p "$work"
work=$(cd "$work" && pwd)
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

# The published package: exactly the files `npm pack` ships, unpacked where a
# user's `npm install` puts them (its dependencies linked from this copy's
# node_modules, so no registry is needed), type-checked and run through every
# entry point by tests/js/consumer/consumer.tsx.
rm -rf pack consumer
mkdir -p pack consumer/node_modules/@tensogram consumer/node_modules/@sinclair consumer/node_modules/@types
npm pack --silent --pack-destination pack >/dev/null
tar -xzf pack/tensogram-metatensor-*.tgz -C consumer/node_modules/@tensogram
mv consumer/node_modules/@tensogram/package consumer/node_modules/@tensogram/metatensor
ln -s "$work/node_modules/@sinclair/typebox" consumer/node_modules/@sinclair/typebox
ln -s "$work/node_modules/@types/node" consumer/node_modules/@types/node
cp "$here/consumer/consumer.tsx" "$here/consumer/tsconfig.json" consumer/
printf '{ "private": true, "type": "module" }\n' >consumer/package.json
cd consumer
"$work/node_modules/.bin/tsc" -p tsconfig.json
node dist/consumer.js
