# Sourced by the tests/js/run_*.sh scripts: skip "what is missing" ends the
# test as skipped (exit 77, CTest's SKIP_RETURN_CODE) or, with
# TENSOGRAM_REQUIRE_WASM=1 (CI), as failed.
skip() {
  if [ "${TENSOGRAM_REQUIRE_WASM:-0}" = 1 ]; then
    echo "$1 but TENSOGRAM_REQUIRE_WASM=1" >&2
    exit 1
  fi
  echo "$1: skipped"
  exit 77
}
