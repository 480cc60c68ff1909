// npm run fuzz [COUNT]: a differential fuzz run, not part of `npm test`.
// Random byte changes (in the header text mostly) of valid files of every
// kind; the TS verdict (open + deep validation) must be a MetatensorError
// or OK, and equal to `metatensor validate --deep` (METATENSOR_CLI) file by
// file. Prints the disagreements by kind; exits 1 if there are any.
import { spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { MetatensorError, MetatensorFile, MetatensorWriter, open, validateDeep } from "@tensogram/metatensor";
import { TS_CASES } from "./cases.js";
import { CLI, tmp } from "./helpers.js";

const count = Number(process.argv[2] ?? 3000);
const bases = TS_CASES.map((c) => {
  const w = new MetatensorWriter(c.schema, { alignment: c.alignment ?? 64 });
  for (const [k, v] of Object.entries(c.values)) w.set(k, v);
  return w.serialize();
});
let seed = Number(process.env["SEED"] ?? 99);
const rnd = (m: number) => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), seed % m);
const TOKENS = '{}[],:"0123456789eE.-#_ ';

async function verdict(b: Uint8Array): Promise<string> {
  try {
    const f = await open(b);
    if (!(f instanceof MetatensorFile)) return "PLAIN";
    await validateDeep(f);
    for (const n of f.names) (await f.get(n)).value();
    return "OK";
  } catch (e) {
    if (e instanceof MetatensorError) return e.code;
    return `RAW ${String(e)}`;
  }
}

const dir = tmp();
const diffs = new Map<string, string[]>();
for (let start = 0; start < count; start += 500) {
  const chunk: [string, Uint8Array][] = [];
  for (let i = start; i < Math.min(count, start + 500); i++) {
    const b = bases[i % bases.length]!.slice();
    const n = Number(new DataView(b.buffer).getBigUint64(0, true));
    for (let j = 0, k = 1 + rnd(3); j < k; j++) {
      const at = rnd(3) === 0 ? 8 + n + rnd(b.length - 8 - n) : 8 + rnd(n);
      b[at] = rnd(2) ? rnd(256) : TOKENS.charCodeAt(rnd(TOKENS.length));
    }
    const p = `${dir}/f${i}.mt`;
    writeFileSync(p, b);
    chunk.push([p, b]);
  }
  const lines = CLI ? spawnSync(CLI, ["validate", "--deep", ...chunk.map((x) => x[0])], { encoding: "utf8", maxBuffer: 1 << 28 }).stdout.split("\n") : [];
  for (const [p, b] of chunk) {
    const ts = await verdict(b);
    let cpp = ts.startsWith("RAW") ? "a MetatensorError" : ts;
    if (CLI) {
      const line = lines.find((l) => l.startsWith(p + ": ")) ?? "";
      cpp = /: OK/.test(line) ? "OK" : /no metatensor schema/.test(line) ? "PLAIN" : (/INVALID: (?:[a-z ]+ error: )?([A-Z0-9_]+):/.exec(line)?.[1] ?? "??");
    }
    if (ts !== cpp) {
      const key = `TS ${ts} / C++ ${cpp}`;
      diffs.set(key, [...(diffs.get(key) ?? []), p]);
    }
  }
}
for (const [k, files] of diffs) console.log(`${k}: ${files.length} file(s), e.g. ${files[0]}`);
console.log(`${count} files, ${diffs.size} kind(s) of disagreement${CLI ? "" : " (no METATENSOR_CLI: only raw exceptions are checked)"}`);
process.exit(diffs.size === 0 ? 0 : 1);
