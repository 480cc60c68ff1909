// StreamingEncoder (buffered and onBytes) and decodeStream over a
// ReadableStream: against encode() of the same objects (same data frames:
// equal xxh3 hashes and values), against the C++ CLI (validate, to-npy),
// a corrupt message skipped and reported, the buffer limit, abort.
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import {
  decode, decodeStream, encode, scan, StreamingEncoder, InvalidArgumentError, StreamingLimitError,
  type DecodedFrame, type StreamDecodeError,
} from "@tensogram/tensogram";
import { HAVE_CLI, cli, npyData, rawBytes, rng, sampleBytes, tmp } from "./helpers.js";

const OBJECTS = [
  { descriptor: { shape: [20, 30], dtype: "float64" as const, compression: "zstd", zstd_level: 3 }, data: sampleBytes("float64", 600, 1) },
  { descriptor: { shape: [100], dtype: "int16" as const, compression: "lz4" }, data: sampleBytes("int16", 100, 2) },
  { descriptor: { shape: [7], dtype: "uint8" as const }, data: sampleBytes("uint8", 7, 3) },
];
const META = { base: [{ name: "a" }, { name: "b" }, { name: "c" }], run: "stream" };

function hashes(msg: Uint8Array): string[] {
  const d = decode(msg, { verifyHash: true });
  const h = d.objects.map((o) => (o.descriptor.hash as { value: string }).value);
  d.close();
  return h;
}

function streamed(onBytes?: (c: Uint8Array) => void): Uint8Array {
  const enc = new StreamingEncoder(META, onBytes ? { onBytes } : {});
  assert.equal(enc.streaming, onBytes !== undefined);
  for (const o of OBJECTS) enc.writeObject(o.descriptor, o.data);
  assert.equal(enc.objectCount, 3);
  const written = enc.bytesWritten;
  const out = enc.finish();
  assert.ok(written > 0);
  assert.throws(() => enc.objectCount, InvalidArgumentError);
  assert.throws(() => enc.writeObject(OBJECTS[0]!.descriptor, OBJECTS[0]!.data), InvalidArgumentError);
  return out;
}

function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.byteLength, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.byteLength;
  }
  return out;
}

describe("StreamingEncoder", () => {
  it("buffered: one message whose data frames equal encode()'s", () => {
    const msg = streamed();
    assert.deepEqual(scan(msg), [{ offset: 0, length: msg.byteLength }]);
    assert.deepEqual(hashes(msg), hashes(encode(META, OBJECTS)));
    const d = decode(msg);
    d.objects.forEach((o, i) => assert.deepEqual(rawBytes(o.data()), OBJECTS[i]!.data));
    assert.deepEqual(d.metadata.base?.map((b) => b["name"]), ["a", "b", "c"]);
    d.close();
  });

  it("onBytes: chunks as objects are written, the same frames, finish() returns nothing", () => {
    const chunks: Uint8Array[] = [];
    let afterFirstObject = -1;
    const enc = new StreamingEncoder(META, { onBytes: (c) => chunks.push(c) });
    const beforeObjects = chunks.length;
    enc.writeObject(OBJECTS[0]!.descriptor, OBJECTS[0]!.data);
    afterFirstObject = chunks.length;
    enc.writeObject(OBJECTS[1]!.descriptor, OBJECTS[1]!.data);
    enc.writeObject(OBJECTS[2]!.descriptor, OBJECTS[2]!.data);
    assert.equal(enc.bytesWritten, concat(chunks).byteLength);
    assert.equal(enc.finish().byteLength, 0);
    assert.ok(beforeObjects >= 1, "preamble and header metadata delivered at construction");
    assert.ok(afterFirstObject > beforeObjects, "the first frame delivered before finish()");
    const msg = concat(chunks);
    assert.deepEqual(hashes(msg), hashes(streamed()));
    assert.equal(msg.byteLength, streamed().byteLength);
  });

  it("preceders, pre-encoded objects, bad input, close", () => {
    const enc = new StreamingEncoder({});
    enc.writePreceder({ param: "2t" });
    enc.writeObject({ shape: [3], dtype: "float32" }, new Float32Array([1, 2, 3]));
    enc.writeObjectPreEncoded({ shape: [2], dtype: "uint8" }, new Uint8Array([9, 8]));
    assert.throws(() => enc.writePreceder({ _reserved_: {} }), InvalidArgumentError);
    const d = decode(enc.finish());
    assert.equal(d.metadata.base?.[0]?.["param"], "2t");
    assert.deepEqual(Array.from(d.objects[1]!.data() as Uint8Array), [9, 8]);
    d.close();
    assert.throws(() => new StreamingEncoder({ _reserved_: {} }), InvalidArgumentError);
    const e2 = new StreamingEncoder({});
    assert.throws(() => e2.writeObject({ shape: [3], dtype: "float32" }, new Float32Array([1, NaN, 3])));
    e2.writeObject({ shape: [1], dtype: "float32" }, new Float32Array([1])); // still usable
    e2.close();
    e2.close();
    assert.throws(() => e2.finish(), InvalidArgumentError);
  });

  it("the C++ CLI reads both forms", { skip: !HAVE_CLI && "no C++ CLI" }, () => {
    const chunks: Uint8Array[] = [];
    const enc = new StreamingEncoder(META, { onBytes: (c) => chunks.push(c) });
    for (const o of OBJECTS) enc.writeObject(o.descriptor, o.data);
    enc.finish();
    const dir = tmp();
    const file = join(dir, "s.tgm");
    writeFileSync(file, concat([streamed(), concat(chunks)]));
    const report = JSON.parse(cli("validate", "--full", "--json", file)) as { status: string; messages: number }[];
    assert.equal(report[0]!.status, "ok");
    assert.equal(report[0]!.messages, 2);
    cli("to-npy", file, "-o", join(dir, "npy"));
    for (const m of [0, 1]) {
      OBJECTS.forEach((o, i) => assert.deepEqual(new Uint8Array(npyData(join(dir, "npy", `${m}_${i}.npy`))), o.data));
    }
  });
});

/** A ReadableStream of `bytes` in chunks of random sizes. */
function chunked(bytes: Uint8Array, seed: number, maxChunk = 300): ReadableStream<Uint8Array> {
  const r = rng(seed);
  let at = 0;
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      if (at >= bytes.byteLength) {
        controller.close();
        return;
      }
      const n = 1 + Math.floor(r() * maxChunk);
      controller.enqueue(bytes.slice(at, at + n));
      at += n;
    },
  });
}

async function collect(stream: ReadableStream<Uint8Array>, errors: StreamDecodeError[] = [], max?: number): Promise<DecodedFrame[]> {
  const out: DecodedFrame[] = [];
  for await (const f of decodeStream(stream, { onError: (e) => errors.push(e), ...(max ? { maxBufferBytes: max } : {}) })) out.push(f);
  return out;
}

describe("decodeStream", () => {
  const one = encode(META, OBJECTS);
  const other = encode({ base: [{ name: "z" }] }, [{ descriptor: { shape: [4], dtype: "int32" }, data: new Int32Array([1, 2, 3, 4]) }]);

  it("frames of every message, in order, whatever the chunking", async () => {
    // The last but one message comes from onBytes: total_length 0, found by the scan only.
    const live: Uint8Array[] = [];
    streamed((c) => live.push(c));
    const all = concat([one, other, new Uint8Array(50).fill(1), streamed(), other, concat(live), other]);
    for (const seed of [1, 2, 3]) {
      const errors: StreamDecodeError[] = [];
      const frames = await collect(chunked(all, seed), errors);
      assert.equal(frames.length, 3 + 1 + 3 + 1 + 3 + 1);
      assert.deepEqual(errors, []);
      assert.deepEqual(frames.map((f) => f.baseEntry?.["name"]), ["a", "b", "c", "z", "a", "b", "c", "z", "a", "b", "c", "z"]);
      assert.deepEqual(rawBytes(frames[4]!.data()), OBJECTS[0]!.data);
      assert.equal(frames[3]!.descriptor.dtype, "int32");
      assert.equal(frames[3]!.byteLength, 16);
      frames.forEach((f) => f.close());
      assert.throws(() => frames[0]!.data(), InvalidArgumentError);
    }
  });

  it("a message that fails to decode is skipped and reported", async () => {
    const bad = other.slice();
    // Corrupt the metadata frame's CBOR (just after the preamble and the frame header).
    for (let i = 24 + 16; i < 24 + 16 + 8; i++) bad[i] = 0xff;
    const errors: StreamDecodeError[] = [];
    const frames = await collect(chunked(concat([other, bad, one]), 9, 4000), errors);
    assert.deepEqual(frames.map((f) => f.baseEntry?.["name"]), ["z", "a", "b", "c"]);
    assert.equal(errors.length, 1);
    assert.equal(errors[0]!.skippedCount, 1);
    assert.ok(errors[0]!.message.length > 0);
  });

  it("maxBufferBytes: StreamingLimitError", async () => {
    await assert.rejects(collect(chunked(one, 4), [], 1000), StreamingLimitError);
    await assert.rejects(collect(chunked(new Uint8Array(5000).fill(2), 4), [], 1000), StreamingLimitError);
    assert.equal((await collect(chunked(one, 4), [], one.byteLength)).length, 3);
  });

  it("abort and bad arguments", async () => {
    const ac = new AbortController();
    let n = 0;
    await assert.rejects(async () => {
      for await (const f of decodeStream(chunked(concat([one, one, one]), 5, 100), { signal: ac.signal })) {
        f.close();
        if (++n === 1) ac.abort();
      }
    }, (e: Error) => e.name === "AbortError");
    assert.ok(n < 9, `${n} frames after abort`);
    await assert.rejects(decodeStream({} as ReadableStream<Uint8Array>).next(), InvalidArgumentError);
  });
});
