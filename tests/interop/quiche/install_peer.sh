#!/bin/sh
# install_peer.sh SRC WORK: installs the independent QUIC peer of
# tests/metatensor/quic_interop_test.cpp (Cloudflare quiche through
# @matrixai/quic, versions pinned by SRC/package-lock.json) into WORK with
# `npm ci`, next to a copy of peer.mjs, so node_modules stays out of the
# source tree. CTest runs it as the setup of the `quiche_peer` fixture.
#
# The lockfile lists @matrixai/quic's macOS and Windows packages (optional,
# skipped on Linux) without integrity hashes: the registry this project can
# reach does not serve them, so `npm install` leaves them out, and `npm ci`
# (npm 10+) refuses a lockfile that lacks an optional dependency.
#
# Without node/npm, or when the registry cannot be reached, the interop tests
# skip; with TENSOGRAM_REQUIRE_INTEROP=1 (CI) that is a failure here, with
# npm's own output, instead.
set -u
src=$1
work=$2
require=${TENSOGRAM_REQUIRE_INTEROP:-0}

give_up() {
  echo "the QUIC interop peer is not installed: $1" >&2
  if [ "$require" = 1 ]; then exit 1; fi
  exit 0
}

command -v node >/dev/null 2>&1 || give_up "node not found"
command -v npm >/dev/null 2>&1 || give_up "npm not found"
mkdir -p "$work" || give_up "cannot create $work"
cp "$src/package.json" "$src/package-lock.json" "$src/peer.mjs" "$work/" || give_up "cannot copy $src"
cd "$work" || give_up "cannot enter $work"
echo "node $(node --version), npm $(npm --version): npm ci in $work"
npm ci --no-audit --no-fund || give_up "npm ci failed (exit $?)"
[ -d node_modules/@matrixai/quic ] || give_up "npm ci left no node_modules/@matrixai/quic"
echo "QUIC interop peer installed in $work"
