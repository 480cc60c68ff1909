// npm run bench: time to open a sparse 1 GiB file and a 1 MiB file from
// disk (O(header) means both are the same), and to get a flat tensor view.
import { join } from "node:path";
import { openMetatensorFile } from "@tensogram/metatensor/node";
import { makeSparseFile } from "./big.js";
import { tmp } from "./helpers.js";

const dir = tmp();
const big = join(dir, "big.mt");
const small = join(dir, "small.mt");
makeSparseFile(big);
makeSparseFile(small, 2 ** 18);
async function time(path: string, runs = 50): Promise<number> {
  const t: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    const f = await openMetatensorFile(path);
    t.push(performance.now() - t0);
    await f.close();
  }
  t.sort((a, b) => a - b);
  return t[t.length >> 1]!;
}
// Interleaved, median of each.
const a1 = await time(small);
const b1 = await time(big);
const a2 = await time(small);
const b2 = await time(big);
console.log(`open 1 MiB file: median ${((a1 + a2) / 2).toFixed(3)} ms; open 1 GiB file: median ${((b1 + b2) / 2).toFixed(3)} ms`);
const f = await openMetatensorFile(big);
const t0 = performance.now();
const v = await f.flat("small");
console.log(`flat tensor "small": ${(performance.now() - t0).toFixed(3)} ms, copied: ${v.copied}, ${v.data.constructor.name}`);
await f.close();
