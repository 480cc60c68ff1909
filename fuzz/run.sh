#!/usr/bin/env bash
# Runs every libFuzzer target of a fuzz build for a fixed time, or for a
# fixed number of executions.
#
#   fuzz/run.sh BUILD_DIR SECONDS
#   fuzz/run.sh --runs BUILD_DIR RUNS     (`make fuzz-long`: RUNS per target)
#
# FUZZ_JOBS=N (default 1) fuzzes each target in N processes at once that
# share one corpus (libFuzzer's -jobs/-workers), each for SECONDS or for
# RUNS / N executions: a campaign of 10^7 executions takes 1/N of the time on
# N idle cores. The summary adds up the processes' executions.
#
# BUILD_DIR is a build directory configured with CC=clang CXX=clang++
# -DTENSOGRAM_BUILD_FUZZ=ON; the targets are (re)built first. The seed corpus
# is made from the shared fixtures (read in place, never copied into the
# repository) plus truncated variants of them, in a temporary directory that
# is removed afterwards. Crash, leak, timeout and OOM reproducers are kept in
# BUILD_DIR/fuzz/artifacts. Exits non-zero when any target finds a problem.
set -euo pipefail

by_runs=0
if [[ ${1:-} == --runs ]]; then
  by_runs=1
  shift
fi
if [[ $# -ne 2 ]]; then
  echo "usage: $0 BUILD_DIR SECONDS  or  $0 --runs BUILD_DIR RUNS" >&2
  exit 2
fi
build_dir=$(cd "$1" && pwd)
seconds=$2
if ! [[ $seconds =~ ^[0-9]+$ ]] || [[ $seconds -eq 0 ]]; then
  echo "SECONDS (or RUNS) must be a positive integer, got '$seconds'" >&2
  exit 2
fi
# -malloc_limit_mb bounds any one allocation driven by a length in the
# input; -rss_limit_mb the process.
memory=(-malloc_limit_mb=2048 -rss_limit_mb=2048)
# -timeout: a parser that spends this long on 64 KiB is hung (libFuzzer's
# default of 20 minutes would stall the run).
timeout=10
jobs=${FUZZ_JOBS:-1}
if ! [[ $jobs =~ ^[0-9]+$ ]] || [[ $jobs -eq 0 ]]; then
  echo "FUZZ_JOBS must be a positive integer, got '$jobs'" >&2
  exit 2
fi
if [[ $by_runs -eq 1 ]]; then
  limit=(-runs="$(((seconds + jobs - 1) / jobs))")
  budget="$seconds runs"
  # A campaign runs millions of inputs in one process. AddressSanitizer keeps
  # every distinct allocation stack (30 frames by default) for the life of
  # the process, and the recursive CBOR reader makes new ones without end:
  # fuzz_decode_metadata grew to 2 GB (its RSS limit) after 2.1 M executions
  # with 27 MB of live heap. Eight frames keep reports readable and the store
  # small (docs/fuzzing.md); the RSS limit leaves room for the 256 MB
  # quarantine on top.
  export ASAN_OPTIONS=${ASAN_OPTIONS:-malloc_context_size=8}
  memory=(-malloc_limit_mb=2048 -rss_limit_mb=4096)
  # libFuzzer's watchdog counts wall-clock time. A campaign runs for hours
  # at a low priority beside other work, where an input may wait many
  # seconds for a core: two at `nice 19` beside a build at `nice -5`
  # reported inputs of 2 ms and 170 ms as hung (docs/fuzzing.md).
  timeout=120
else
  limit=(-max_total_time="$seconds")
  budget="${seconds}s"
fi

here=$(cd "$(dirname "$0")" && pwd)
fixtures="$(dirname "$0")/../../shared/fixtures/tgm"
if [[ ! -d $fixtures ]]; then
  echo "fixture directory not found: $fixtures" >&2
  exit 2
fi
fixtures=$(cd "$fixtures" && pwd)

all_targets=(fuzz_decode_message fuzz_decode_metadata fuzz_scan fuzz_file_source fuzz_blosc2 fuzz_sz3
             fuzz_sz3_bound fuzz_metatensor_file fuzz_metatensor_schema fuzz_metatensor_stream fuzz_capi fuzz_npy
             fuzz_cli_pipeline fuzz_szip_differential)
# FUZZ_TARGETS (space-separated) runs a subset.
read -r -a targets <<<"${FUZZ_TARGETS:-${all_targets[*]}}"
cmake --build "$build_dir" --target "${targets[@]}" -j "$(nproc)"

work=$(mktemp -d "${TMPDIR:-/tmp}/tensogram-fuzz.XXXXXX")
trap 'rm -rf "$work"' EXIT

# Seeds: every fixture, and prefixes of it. Truncation is the most common
# real-world corruption and lands the fuzzer inside the length checks at
# once. Files above -max_len would be cut by libFuzzer anyway; their leading
# 64 KiB (several whole messages) is what it would use.
max_len=65536
seeds="$work/seeds"
mkdir -p "$seeds"
for f in "$fixtures"/*.tgm; do
  base=$(basename "$f" .tgm)
  size=$(stat -c %s "$f")
  head -c "$max_len" "$f" >"$seeds/$base"
  for cut in 1 8 24 $((size / 2)) $((size - 1)) $((size - 24)); do
    if [[ $cut -gt 0 && $cut -lt $size && $cut -le $max_len ]]; then
      head -c "$cut" "$f" >"$seeds/$base.trunc$cut"
    fi
  done
done
echo "seed corpus: $(find "$seeds" -type f | wc -l) files from $fixtures"

# fuzz_blosc2 reads blosc2 frames, not messages: its seeds are the frames
# c-blosc2 wrote (fixtures/blosc2; the small ones fit max_len whole).
blosc2_seeds="$work/seeds-blosc2"
mkdir -p "$blosc2_seeds"
for f in "$fixtures"/../blosc2/*.b2frame; do
  head -c "$max_len" "$f" >"$blosc2_seeds/$(basename "$f")"
done

# fuzz_sz3 reads SZ3 streams: its seeds are the streams the reference wrote
# into its lossy fixtures (found by their magic; length = 16-byte envelope +
# algorithm bytes + the configuration record, whose first byte is its
# length), and prefixes of them.
sz3_seeds="$work/seeds-sz3"
mkdir -p "$sz3_seeds"
python3 - "$fixtures/../tgm-reference-lossy" "$sz3_seeds" <<'PY'
import glob, os, struct, sys
magic = struct.pack("<I", 0xF342F310)
for path in sorted(glob.glob(os.path.join(sys.argv[1], "*.tgm"))):
    data = open(path, "rb").read()
    at = data.find(magic)
    while at >= 0 and at + 16 <= len(data):
        algo = struct.unpack_from("<Q", data, at + 8)[0]
        end = at + 16 + algo
        if end < len(data):
            stream = data[at:end + data[end]]
            name = os.path.join(sys.argv[2], f"{os.path.basename(path)}.{at}")
            for cut in (len(stream), len(stream) // 2, 24):
                with open(f"{name}.{cut}", "wb") as f:
                    f.write(stream[:cut])
        at = data.find(magic, at + 1)
PY
if [[ -z $(ls -A "$sz3_seeds") ]]; then
  echo "no SZ3 streams found in $fixtures/../tgm-reference-lossy" >&2
  exit 2
fi

# The metatensor targets read metatensor files and schemas: their seeds are
# the small files of spec 06 (Appendix A, §6.7's worked example) written by
# fuzz/metatensor_seeds.py, and those files' schemas.
metatensor_seeds="$work/seeds-metatensor"
schema_seeds="$work/seeds-schema"
python3 "$here/metatensor_seeds.py" "$metatensor_seeds" "$schema_seeds"

# fuzz_npy reads .npy files and fuzz_cli_pipeline argv tokens: their seeds
# are written by fuzz/tool_seeds.py. fuzz_capi reads messages (the seeds).
npy_seeds="$work/seeds-npy"
cli_seeds="$work/seeds-cli"
python3 "$here/tool_seeds.py" "$npy_seeds" "$cli_seeds"

# fuzz_szip_differential reads szip parameters, then sample data to code
# (mode byte odd) or a coded stream: its seeds are smooth and noisy samples
# under a few common parameter sets (the header is described in the target).
szip_seeds="$work/seeds-szip"
mkdir -p "$szip_seeds"
python3 - "$szip_seeds" <<'PY'
import os, random, struct, sys
out = sys.argv[1]
rng = random.Random(1)
# (bits - 1, block-size byte, flags, rsi - 1): sp24 (3BYTE|MSB|preprocess),
# 16-bit preprocess, 8-bit plain, 32-bit signed preprocess.
for i, (a, b, c, rsi) in enumerate([(23, 1, 14, 31), (15, 1, 8, 127), (7, 0, 0, 3), (31, 2, 9, 63)]):
    width = 1 if a < 8 else 2 if a < 16 else (3 if c & 2 else 4) if a < 24 else 4
    for kind in ("smooth", "noisy"):
        x, data = 1 << a >> 1, bytearray()
        for _ in range(600):
            x = (x + rng.randint(-3, 3)) % (1 << (a + 1)) if kind == "smooth" else rng.getrandbits(a + 1)
            data += x.to_bytes(width, "big" if c & 4 else "little")
        with open(os.path.join(out, f"szip{i}-{kind}"), "wb") as f:
            f.write(bytes([a, b, c]) + struct.pack("<H", rsi) + bytes([1]) + bytes(data))
PY

artifacts="$build_dir/fuzz/artifacts"
mkdir -p "$artifacts"

status=0
summary=()
for t in "${targets[@]}"; do
  exe="$build_dir/fuzz/$t"
  corpus="$work/corpus-$t"  # new coverage goes here, not into the seeds
  mkdir -p "$corpus"
  log="$work/$t.log"
  echo "== $t: $budget"
  target_seeds=$seeds
  if [[ $t == fuzz_blosc2 ]]; then target_seeds=$blosc2_seeds; fi
  if [[ $t == fuzz_sz3 ]]; then target_seeds=$sz3_seeds; fi
  if [[ $t == fuzz_metatensor_file ]]; then target_seeds=$metatensor_seeds; fi
  if [[ $t == fuzz_metatensor_schema ]]; then target_seeds=$schema_seeds; fi
  if [[ $t == fuzz_npy ]]; then target_seeds=$npy_seeds; fi
  if [[ $t == fuzz_cli_pipeline ]]; then target_seeds=$cli_seeds; fi
  if [[ $t == fuzz_szip_differential ]]; then target_seeds=$szip_seeds; fi
  parallel=()
  if [[ $jobs -gt 1 ]]; then
    # Each process logs to fuzz-<job>.log in the working directory; the
    # parent copies every log into its own output when the process ends.
    parallel=(-jobs="$jobs" -workers="$jobs")
  fi
  rundir="$work/run-$t"
  mkdir -p "$rundir"
  set +e
  (cd "$rundir" && exec "$exe" "$corpus" "$target_seeds" \
    -dict="$here/tensogram.dict" \
    -max_len="$max_len" \
    "${memory[@]}" \
    -timeout="$timeout" \
    "${limit[@]}" \
    -print_final_stats=1 \
    "${parallel[@]}" \
    -artifact_prefix="$artifacts/$t-") >"$log" 2>&1
  rc=$?
  set -e
  # One set of final statistics per process: executions and rates add up.
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | awk '{s += $1} END {if (NR) print s}')
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | awk '{s += $1} END {if (NR) print s}')
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -n 1 || true)
  if [[ $rc -ne 0 ]]; then
    status=1
    echo "!! $t failed (exit $rc); last lines of its log:"
    tail -n 40 "$log"
    cp "$log" "$artifacts/$t.log"
    echo "reproducers (run: $exe FILE):"
    ls -1 "$artifacts/$t"-* 2>/dev/null || echo "  (none written)"
    summary+=("$t: FAILED (exit $rc) after ${runs:-?} runs, ${cov:-cov ?}; log and reproducer in $artifacts")
  else
    summary+=("$t: ok, ${runs:-?} runs (${rate:-?} exec/s, budget $budget), ${cov:-cov ?}")
  fi
done

echo "== summary"
printf '%s\n' "${summary[@]}"
exit $status
