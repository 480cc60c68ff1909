// Opening a 1 GiB file from disk is O(header): the reader issues two reads
// (8 bytes, then the header) whatever the data size, and fetching one tensor
// reads exactly its bytes; flat tensors are typed views (a copy only for an
// unaligned in-memory image).
import assert from "node:assert/strict";
import { join } from "node:path";
import { describe, it } from "node:test";
import { MetatensorWriter, openMetatensor } from "@tensogram/metatensor";
import { FileSource } from "@tensogram/metatensor/node";
import { MetatensorFile } from "@tensogram/metatensor";
import { makeSparseFile } from "./big.js";
import { tmp } from "./helpers.js";

describe("O(header) opening", () => {
  it("a 1 GiB file opens with two reads of 8 + N bytes in all; one small tensor reads only its 128 bytes", async () => {
    const p = join(tmp(), "big.mt");
    const info = makeSparseFile(p);
    assert.ok(info.size > 2 ** 30);
    const src = await FileSource.open(p);
    const t0 = performance.now();
    const f = await openMetatensor(src);
    const openMs = performance.now() - t0;
    assert.deepEqual(src.stats, { reads: 2, bytes: info.headerBytes });
    const s = await f.flat("small");
    assert.deepEqual(src.stats, { reads: 3, bytes: info.headerBytes + 128 });
    assert.equal(s.data[15], 15.5);
    assert.deepEqual([...f.dims("big")], [2 ** 28]);
    assert.ok(openMs < 1000, `open took ${openMs} ms`);
    await f.close();
  });

  it("flat tensors of an in-memory image are views; an unaligned image gives copies with the same values", async () => {
    const w = new MetatensorWriter({ type: "object", properties: { x: { type: "array", items: { type: "number", "TypeDef:Float64": true } } } });
    const bytes = w.set("x", [1.5, -2.5]).serialize();
    const aligned = await (await openMetatensor(bytes)).flat("x");
    assert.equal(aligned.copied, false);
    assert.equal(aligned.data.buffer, bytes.buffer);
    const shifted = new Uint8Array(bytes.length + 1).subarray(1);
    shifted.set(bytes);
    const f = (await openMetatensor(shifted)) as MetatensorFile;
    const v = await f.flat("x");
    assert.equal(v.copied, true);
    assert.deepEqual([...v.data], [1.5, -2.5]);
  });
});
