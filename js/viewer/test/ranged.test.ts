// The worker's byte readers without a browser (src/ranged.ts): the fetch
// given to TensogramFile.fromUrl answers HEAD and Range GETs from a Blob,
// refuses a whole read beyond its budget, and the package reads a file
// through it as it would over HTTP.

import { before, test } from "node:test";
import assert from "node:assert/strict";
import { init, encode, decode, TensogramFile } from "@tensogram/tensogram";
import { blobReader, readerFetch } from "../src/ranged.js";

before(() => init());

const bytes = Uint8Array.from({ length: 1000 }, (_, k) => (k * 7) & 0xff);

function fresh() {
  return { reads: 0, bytes: 0, largest: 0 };
}

test("HEAD gives the size and range support, without reading", async () => {
  const stats = fresh();
  const f = readerFetch(blobReader(new Blob([bytes])), "x", 1 << 20, stats);
  const r = await f("tgm:x", { method: "HEAD" });
  assert.equal(r.status, 200);
  assert.equal(r.headers.get("content-length"), "1000");
  assert.equal(r.headers.get("accept-ranges"), "bytes");
  assert.equal(stats.reads, 0);
});

test("a Range GET returns exactly those bytes (clamped at the end), counted", async () => {
  const stats = fresh();
  const f = readerFetch(blobReader(new Blob([bytes])), "x", 1 << 20, stats);
  const a = await f("tgm:x", { headers: { Range: "bytes=10-19" } });
  assert.equal(a.status, 206);
  assert.deepEqual(new Uint8Array(await a.arrayBuffer()), bytes.subarray(10, 20));
  const b = await f("tgm:x", { headers: { Range: "bytes=990-2000" } });
  assert.deepEqual(new Uint8Array(await b.arrayBuffer()), bytes.subarray(990));
  assert.equal((await f("tgm:x", { headers: { Range: "bytes=1000-1001" } })).status, 416);
  assert.deepEqual(stats, { reads: 2, bytes: 20, largest: 10 });
  await assert.rejects(f("tgm:x", { headers: { Range: "bytes=-5" } }), /unsupported range/);
});

test("a whole GET within the budget is answered, beyond it refused with the reason", async () => {
  const ok = readerFetch(blobReader(new Blob([bytes])), "small.tgm", 1000, fresh());
  assert.deepEqual(new Uint8Array(await (await ok("tgm:x")).arrayBuffer()), bytes);
  const no = readerFetch(blobReader(new Blob([bytes])), "big.tgm", 999, fresh());
  await assert.rejects(no("tgm:x"), new RegExp(`^Error: big\\.tgm holds a streaming message without its length .* at ${bytes.length} bytes too large to be scanned whole \\(limit 999 bytes\\)$`));
});

test("TensogramFile.fromUrl over a Blob: metadata and objects as decoded in memory, lazily", async () => {
  const msgs = [0, 1, 2].map((k) => encode({ base: [{ name: `f${k}` }] }, [
    { descriptor: { shape: [300, 200], dtype: "float32", compression: "zstd" }, data: Float32Array.from({ length: 60000 }, (_, i) => Math.sin(i / 50 + k)) },
  ]));
  const blob = new Blob(msgs as Uint8Array<ArrayBuffer>[]);
  const stats = fresh();
  const file = await TensogramFile.fromUrl("tgm:t", { fetch: readerFetch(blobReader(blob), "t", 0, stats) });
  assert.equal(file.messageCount, 3);
  assert.equal(stats.reads, 3, "one preamble read per message");
  assert.equal(stats.bytes, 3 * 24);
  for (const [k, m] of msgs.entries()) {
    assert.equal((await file.messageMetadata(k)).base?.[0]?.["name"], `f${k}`);
    const lazy = await file.messageObject(k, 0, { verifyHash: true });
    const whole = decode(m);
    assert.deepEqual(lazy.objects[0]!.data(), whole.objects[0]!.data());
    lazy.close();
    whole.close();
  }
  assert.ok(stats.largest <= Math.max(...msgs.map((m) => m.length)));
});
