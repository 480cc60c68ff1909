// WebAssembly vs native decode: the same messages decoded by the package
// @tensogram/tensogram (our C++ core compiled with Emscripten, run by Node)
// and by the native library (through the Python module, one thread), in one
// run on the same bytes (docs/wasm.md, "Speed").
//
//   node bench/wasm_bench.mjs [--values N] [--repeat R] [--json-file F] [--package DIST]
//
// Needs js/tensogram built (dist/ with dist/wasm: `make test-wasm` or
// `cd js/tensogram && npm ci && npm run build:wasm && npm run build`) and the
// native Python module on PYTHONPATH (`make bench` builds it into
// build-bench/python). The goal (issue 30): WASM decode >= 0.5x native
// single-thread for none, simple_packing and zstd.
//
// What is timed, both sides: one whole-message decode call from encoded bytes
// in the caller's memory to decoded values the caller can read (WASM: into the
// module's memory, read through a zero-copy view; native: into a new numpy
// array), best of R. The WASM figure includes copying the message into the
// module's memory: a browser user pays that too. For "none" the native
// decode returns a zero-copy view of the message's bytes (no work at all), so
// the native side there is that view copied into a new array: the one memory
// pass an owned result costs, which is what the WASM side has to do.
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));

function option(name, fallback) {
  const i = process.argv.indexOf(name);
  return i >= 0 && i + 1 < process.argv.length ? process.argv[i + 1] : fallback;
}

// --package: another build of the package (its dist/ directory), to compare builds.
const pkg = resolve(option("--package", resolve(here, "../js/tensogram/dist")), "index.js");

const N = Number(option("--values", String(4 * 1024 * 1024)));
const R = Number(option("--repeat", "7"));
const jsonFile = option("--json-file", "");
const python = process.env.PYTHON ?? "/usr/bin/python3";

// Pipelines: the goal's three (none, simple_packing, zstd) first, then the
// other codecs the browser build has, for information.
const PIPELINES = [
  { name: "none", goal: true, params: {} },
  { name: "sp16", goal: true, params: { encoding: "simple_packing", sp_bits_per_value: 16 } },
  { name: "sp24", goal: true, params: { encoding: "simple_packing", sp_bits_per_value: 24 } },
  { name: "zstd3", goal: true, params: { compression: "zstd", zstd_level: 3 } },
  { name: "lz4", goal: false, params: { compression: "lz4" } },
  { name: "shuffle+zstd3", goal: false, params: { filter: "shuffle", shuffle_element_size: 8, compression: "zstd", zstd_level: 3 } },
  { name: "blosc2", goal: false, params: { compression: "blosc2" } },
  { name: "zfp rate 24", goal: false, params: { compression: "zfp", zfp_mode: "fixed_rate", zfp_rate: 24 } },
];

let tg;
try {
  tg = await import(pkg);
} catch (e) {
  console.error(`cannot load ${pkg}: build js/tensogram first (make test-wasm): ${e.message}`);
  process.exit(2);
}
await tg.init();

// A smooth field with noise (as bench/python_bench.py: 250-310 K).
function field(n) {
  const v = new Float64Array(n);
  let x = 0x2545f491;
  let walk = 0;
  for (let i = 0; i < n; i++) {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    walk += x / 0x100000000 - 0.5;
    v[i] = 250 + 60 * (((walk % 1) + 1) % 1);
  }
  return v;
}

function bestOf(fn) {
  let best = Infinity;
  for (let r = 0; r < R; r++) {
    const t0 = process.hrtime.bigint();
    fn();
    best = Math.min(best, Number(process.hrtime.bigint() - t0) / 1e9);
  }
  return best;
}

const values = field(N);
const dir = mkdtempSync(join(tmpdir(), "tgm-wasm-bench-"));
const rows = [];
try {
  for (const p of PIPELINES) {
    const descriptor = { type: "ntensor", shape: [N], dtype: "float64", ...p.params };
    let msg;
    try {
      msg = tg.encode({}, [{ descriptor, data: values }]);
    } catch (e) {
      console.error(`${p.name}: encode failed in WASM: ${e.message}`);
      continue;
    }
    const file = join(dir, `${p.name}.tgm`);
    writeFileSync(file, msg);
    let check = 0;
    const wasmS = bestOf(() => {
      const m = tg.decode(msg);
      const view = m.objects[0].dataView();
      check += view[N >> 1];
      m.close();
    });
    if (!(check > 0)) throw new Error(`${p.name}: decoded values look wrong`);
    rows.push({ name: p.name, goal: p.goal, file, bytes: msg.byteLength, wasmS });
  }

  // The native side: the same files, one thread, same repeat count.
  const code = `
import json, sys, time
import tensogram
out = {}
R = int(sys.argv[1])
for path in sys.argv[2:]:
    buf = open(path, "rb").read()
    best = float("inf")
    for _ in range(R):
        t0 = time.perf_counter()
        _, objs = tensogram.decode(buf, threads=1)
        values = objs[0][1]
        if path.endswith("/none.tgm"):
            values = values.copy()  # see "none" above
        values[len(values) // 2]
        best = min(best, time.perf_counter() - t0)
    out[path] = best
print(json.dumps(out))
`;
  const env = { ...process.env, TENSOGRAM_THREADS: "1" };
  const run = spawnSync(python, ["-c", code, String(R), ...rows.map((r) => r.file)], { encoding: "utf8", env });
  if (run.status !== 0) {
    console.error(`native peer failed (PYTHONPATH must hold the native tensogram module):\n${run.stderr}`);
    process.exit(2);
  }
  const native = JSON.parse(run.stdout);
  const mb = (N * 8) / 1e6;
  console.log(`WASM vs native decode, ${N} float64 values (${mb.toFixed(1)} MB), best of ${R}, Node ${process.versions.node}`);
  console.log("pipeline         msg MB   WASM MB/s  native MB/s  WASM/native");
  const goals = [];
  for (const r of rows) {
    r.nativeS = native[r.file];
    r.ratio = r.nativeS / r.wasmS;
    console.log(
      `${r.name.padEnd(15)} ${(r.bytes / 1e6).toFixed(1).padStart(7)} ${(mb / r.wasmS).toFixed(0).padStart(11)} ` +
        `${(mb / r.nativeS).toFixed(0).padStart(12)} ${r.ratio.toFixed(2).padStart(12)}`,
    );
    if (r.goal) {
      goals.push({
        goal: `wasm decode ${r.name}: native 1-thread time / wasm`,
        value: r.ratio,
        target: 0.5,
        comparison: ">=",
        note: `${(mb / r.wasmS).toFixed(0)} vs ${(mb / r.nativeS).toFixed(0)} MB/s`,
      });
    }
  }
  console.log("\ngoals (WASM decode >= 0.5x native single-thread):");
  for (const g of goals) {
    console.log(`  ${g.value >= g.target ? "met    " : "NOT MET"} ${g.goal}: ${g.value.toFixed(2)}x (goal >= ${g.target})`);
  }
  if (jsonFile) {
    writeFileSync(
      jsonFile,
      JSON.stringify({ values: N, repeat: R, rows: rows.map(({ file: _f, ...r }) => r), goals }, null, 2),
    );
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
