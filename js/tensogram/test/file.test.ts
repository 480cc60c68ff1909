// TensogramFile: in-memory, local (Node) and remote. The remote tests run a
// Node HTTP server on loopback that serves a multi-message file (messages
// written by the C++ CLI and by this package, plus reference fixtures) with
// or without Range support, counting requests and bytes: the lazy backend
// must fetch one object of a big message with one Range GET of about that
// frame's size, fall back to one eager GET when ranges are refused, and
// report HTTP errors. Results are compared with the C++ CLI's decode
// (`tensogram to-npy`) and with whole-buffer decoding.
import assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import { readFileSync, writeFileSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import {
  decode, decodeMetadata, decodeRange, encode, InvalidArgumentError, IoError, ObjectError, scan, StreamingEncoder,
  TensogramFile,
  type DecodedMessage,
} from "@tensogram/tensogram";
import { FIXTURES, HAVE_CLI, HAVE_FIXTURES, cli, npyBytes, npyData, rawBytes, sampleBytes, tmp } from "./helpers.js";

type Mode = "ranges" | "noranges" | "404";
interface Hit {
  method: string;
  range: string | undefined;
  bytes: number;
}

/** A loopback server for `body`; `hits` records every request. */
async function serve(body: Uint8Array, mode: Mode): Promise<{ url: string; hits: Hit[]; server: Server }> {
  const hits: Hit[] = [];
  const server = createServer((req, res) => {
    const range = req.headers.range;
    const hit: Hit = { method: req.method ?? "", range, bytes: 0 };
    hits.push(hit);
    if (mode === "404") {
      res.writeHead(404).end("not here");
      return;
    }
    const headers: Record<string, string> = { "Content-Type": "application/octet-stream" };
    if (mode === "ranges") headers["Accept-Ranges"] = "bytes";
    const m = /^bytes=(\d+)-(\d+)$/.exec(range ?? "");
    if (mode === "ranges" && m) {
      const a = Number(m[1]);
      const b = Math.min(Number(m[2]), body.byteLength - 1);
      const part = body.subarray(a, b + 1);
      res.writeHead(206, { ...headers, "Content-Length": String(part.byteLength), "Content-Range": `bytes ${a}-${b}/${body.byteLength}` });
      hit.bytes = req.method === "HEAD" ? 0 : part.byteLength;
      res.end(req.method === "HEAD" ? undefined : part);
      return;
    }
    res.writeHead(200, { ...headers, "Content-Length": String(body.byteLength) });
    hit.bytes = req.method === "HEAD" ? 0 : body.byteLength;
    res.end(req.method === "HEAD" ? undefined : body);
  });
  await new Promise<void>((ok) => server.listen(0, "127.0.0.1", ok));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/data.tgm`, hits, server };
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

const BIG = 200 * 1000; // float64 elements: a 1.6 MB object, far beyond the 256 KiB layout region
const bigData = sampleBytes("float64", BIG, 11);
const smallData = sampleBytes("int32", 50, 12);

/** Three messages written by this package: small, big (2 objects), small. */
function packageMessages(): Uint8Array[] {
  return [
    encode({ base: [{ name: "first" }] }, [{ descriptor: { shape: [50], dtype: "int32" }, data: smallData }]),
    encode({ base: [{ name: "big" }, { name: "tail" }], run: "js" }, [
      { descriptor: { shape: [400, 500], dtype: "float64" }, data: bigData },
      { descriptor: { shape: [50], dtype: "int32", compression: "zstd", zstd_level: 3 }, data: smallData },
    ]),
    encode({ base: [{ name: "last" }] }, [{ descriptor: { shape: [5, 10], dtype: "int32", compression: "lz4" }, data: smallData }]),
  ];
}

function objectBytes(m: DecodedMessage, i = 0): Uint8Array {
  return rawBytes(m.objects[i]!.data());
}

describe("TensogramFile.fromBytes", () => {
  it("messages, metadata, descriptors, objects, ranges, batches, iteration, close", async () => {
    const msgs = packageMessages();
    const buf = concat(msgs);
    const f = TensogramFile.fromBytes(buf);
    buf.fill(0); // fromBytes copied
    assert.equal(f.source, "buffer");
    assert.equal(f.messageCount, 3);
    assert.equal(f.byteLength, buf.byteLength);
    assert.deepEqual(f.messageLayouts, scan(concat(msgs)));
    assert.deepEqual(await f.rawMessage(1), msgs[1]);
    assert.deepEqual(await f.messageMetadata(1), decodeMetadata(msgs[1]!));
    const d = await f.messageDescriptors(1);
    assert.equal(d.descriptors.length, 2);
    assert.equal(d.descriptors[1]!.compression, "zstd");
    assert.deepEqual(d.descriptors[0]!.shape, [400, 500]);
    assert.equal(d.metadata["run"], undefined); // top-level keys live in _extra_
    assert.equal((d.metadata._extra_ as Record<string, unknown>)["run"], "js");
    const o = await f.messageObject(1, 1);
    assert.deepEqual(objectBytes(o), smallData);
    const r = await f.messageObjectRange(1, 0, [[10, 5]]);
    assert.deepEqual(Array.from(r.parts[0] as Float64Array), Array.from(new Float64Array(bigData.buffer, 80, 5)));
    const batch = await f.messageObjectBatch([0, 2], 0);
    assert.deepEqual(batch.map((m) => objectBytes(m)), [smallData, smallData]);
    let n = 0;
    for await (const m of f) {
      assert.equal(m.objects.length, n === 1 ? 2 : 1);
      n++;
    }
    assert.equal(n, 3);
    await assert.rejects(f.message(3), (e: Error) => e instanceof ObjectError && e.message === "message index 3 out of range (have 3)");
    await assert.rejects(f.messageObject(0, 4), ObjectError);
    await assert.rejects(f.append({}, []), InvalidArgumentError);
    await f.prefetchLayouts([0, 1]); // no-op
    f.close();
    assert.throws(() => f.messageCount, InvalidArgumentError);
    await assert.rejects(f.rawMessage(0), InvalidArgumentError);
    assert.deepEqual(objectBytes(o), smallData); // decoded messages stay valid
    o.close();
  });
});

describe("TensogramFile.open and append", () => {
  it("reads a local file, appends, and the C++ CLI reads the result", { skip: !HAVE_CLI && "no C++ CLI" }, async () => {
    const dir = tmp();
    const path = join(dir, "local.tgm");
    writeFileSync(path, concat(packageMessages().slice(0, 1)));
    const f = await TensogramFile.open(path);
    assert.equal(f.source, "local");
    assert.equal(f.messageCount, 1);
    await f.append({ base: [{ name: "appended" }] }, [{ descriptor: { shape: [2, 3], dtype: "float32" }, data: new Float32Array([1, 2, 3, 4, 5, 6]) }]);
    assert.equal(f.messageCount, 2);
    assert.equal(f.byteLength, readFileSync(path).byteLength);
    const info = JSON.parse(cli("validate", "--full", "--json", path)) as { status: string; messages: number }[];
    assert.equal(info[0]!.status, "ok");
    assert.equal(info[0]!.messages, 2);
    cli("to-npy", path, "-o", join(dir, "npy"));
    const m = await f.message(1);
    assert.deepEqual(objectBytes(m), new Uint8Array(npyData(join(dir, "npy", "1_0.npy"))));
    f.close();
    await assert.rejects(TensogramFile.open(join(dir, "missing.tgm")), IoError);
  });
});

describe("TensogramFile.fromUrl", { skip: !HAVE_CLI && "no C++ CLI (TENSOGRAM_CLI)" }, () => {
  // The served file: a message written by the C++ CLI (a big float64 object
  // and a small one), then the package's three messages.
  const dir = tmp();
  let cppMsg: Uint8Array = new Uint8Array(0);
  let file: Uint8Array = new Uint8Array(0);
  const servers: Server[] = [];
  before(() => {
    writeFileSync(join(dir, "a.npy"), npyBytes("<f8", [400, 500], bigData));
    writeFileSync(join(dir, "b.npy"), npyBytes("<i4", [50], smallData));
    cli("convert-npy", join(dir, "a.npy"), join(dir, "b.npy"), "-o", join(dir, "cpp.tgm"), "--meta", "mars.param=2t");
    cppMsg = new Uint8Array(readFileSync(join(dir, "cpp.tgm")));
    file = concat([cppMsg, ...packageMessages()]);
    writeFileSync(join(dir, "all.tgm"), file);
    cli("to-npy", join(dir, "all.tgm"), "-o", join(dir, "npy"));
  });
  after(() => servers.forEach((s) => s.close()));
  const start = async (body: Uint8Array, mode: Mode) => {
    const s = await serve(body, mode);
    servers.push(s.server);
    return s;
  };
  const native = (msg: number, obj: number) => new Uint8Array(npyData(join(dir, "npy", `${msg}_${obj}.npy`)));

  it("lazy: preambles walked with Range GETs, one object of a big message is one Range GET of its frame", async () => {
    const { url, hits } = await start(file, "ranges");
    const f = await TensogramFile.fromUrl(url);
    assert.equal(f.source, "remote");
    assert.equal(f.messageCount, 4);
    assert.deepEqual(f.messageLayouts, scan(file));
    assert.equal(f.byteLength, file.byteLength);
    // HEAD + one 24-byte GET per preamble.
    assert.equal(hits[0]!.method, "HEAD");
    assert.equal(hits.length, 1 + 4);
    assert.ok(hits.slice(1).every((h) => h.bytes === 24));

    // Metadata of the big C++ message: one header region (256 KiB).
    hits.length = 0;
    const meta = await f.messageMetadata(0);
    assert.deepEqual(meta, decodeMetadata(cppMsg));
    assert.equal(hits.length, 1);
    assert.equal(hits[0]!.bytes, 256 * 1024);

    // Its big object: exactly one Range GET, of about the frame's size.
    hits.length = 0;
    const o = await f.messageObject(0, 0);
    assert.equal(hits.length, 1);
    assert.ok(hits[0]!.bytes >= bigData.byteLength && hits[0]!.bytes < bigData.byteLength + 4096, `${hits[0]!.bytes} bytes`);
    assert.deepEqual(objectBytes(o), native(0, 0));
    assert.deepEqual(o.metadata, decode(cppMsg).metadata);
    // The small one: one small GET.
    hits.length = 0;
    const small = await f.messageObject(0, 1, { verifyHash: true });
    assert.equal(hits.length, 1);
    assert.ok(hits[0]!.bytes < 4096);
    assert.deepEqual(objectBytes(small), native(0, 1));

    // Ranges of the big object: one GET of the frame, values as decodeRange.
    hits.length = 0;
    const r = await f.messageObjectRange(0, 0, [[0, 3], [199990n, 10n]], { join: true });
    assert.equal(hits.length, 1);
    const whole = decodeRange(cppMsg, 0, [[0, 3], [199990n, 10n]], { join: true });
    assert.deepEqual(Array.from(r.parts[0] as Float64Array), Array.from(whole.parts[0] as Float64Array));
    assert.deepEqual(r.descriptor.shape, [400, 500]);

    // Descriptors: the layout (one 256 KiB GET), then of the 1.6 MB frame only
    // its last 8 KiB and its 16-byte header, the small frame whole.
    hits.length = 0;
    const d = await f.messageDescriptors(2);
    assert.deepEqual(d.descriptors.map((x) => x.dtype), ["float64", "int32"]);
    const p2 = scan(file)[2]!;
    const whole2 = decode(file.subarray(p2.offset, p2.offset + p2.length));
    // The descriptor CBOR only: no `hash` (it lives in the frame's hash slot).
    assert.deepEqual(d.descriptors, whole2.objects.map(({ descriptor: { hash: _h, ...rest } }) => rest));
    assert.deepEqual(d.metadata, whole2.metadata);
    const sizes = hits.map((h) => h.bytes);
    assert.equal(sizes.length, 4, String(sizes));
    for (const n of [256 * 1024, 8192, 16]) assert.ok(sizes.includes(n), String(sizes));
    assert.ok(hits.reduce((n, h) => n + h.bytes, 0) < 256 * 1024 + 8192 + 16 + 4096);

    // Every object of every message against the C++ CLI.
    await f.prefetchLayouts([1, 2, 3]);
    for (let i = 0; i < 4; i++) {
      const n = i === 0 || i === 2 ? 2 : 1;
      for (let j = 0; j < n; j++) assert.deepEqual(objectBytes(await f.messageObject(i, j)), native(i, j), `${i}/${j}`);
    }
    const batch = await f.messageObjectBatch([1, 3], 0, { concurrency: 2 });
    assert.deepEqual(batch.map((m) => objectBytes(m)), [native(1, 0), native(3, 0)]);

    // rawMessage: a small message was read whole for its layout (no GET);
    // the big one costs one GET of its length, then comes from the cache.
    hits.length = 0;
    assert.deepEqual(await f.rawMessage(3), file.subarray(scan(file)[3]!.offset));
    assert.equal(hits.length, 0);
    assert.deepEqual(await f.rawMessage(0), cppMsg);
    await f.message(0);
    assert.equal(hits.length, 1);
    assert.equal(hits[0]!.bytes, cppMsg.byteLength);

    await assert.rejects(f.messageObject(4, 0), (e: Error) => e instanceof ObjectError && e.message === "message index 4 out of range (have 4)");
    f.close();
    await assert.rejects(f.messageMetadata(0), InvalidArgumentError);
  });

  it("lazy over footer-indexed (streaming) fixtures", { skip: !HAVE_FIXTURES && "no fixtures" }, async () => {
    const bytes = new Uint8Array(readFileSync(join(FIXTURES, "tgm", "hundred-msg-footer.tgm")));
    const { url, hits } = await start(bytes, "ranges");
    const f = await TensogramFile.fromUrl(url);
    assert.equal(f.source, "remote");
    const positions = scan(bytes);
    assert.equal(f.messageCount, positions.length);
    assert.equal(hits.length, 1 + positions.length); // HEAD + one preamble each: no eager fallback
    for (const i of [0, 57, positions.length - 1]) {
      const raw = bytes.subarray(positions[i]!.offset, positions[i]!.offset + positions[i]!.length);
      assert.deepEqual(await f.messageMetadata(i), decodeMetadata(raw));
      const whole = decode(raw);
      const o = await f.messageObject(i, 0);
      assert.deepEqual(objectBytes(o), objectBytes(whole));
      assert.deepEqual(o.metadata, whole.metadata);
    }
    assert.ok(hits.every((h) => h.range !== undefined || h.method === "HEAD"));
  });

  it("lazy over a big footer-indexed message (StreamingEncoder): header and footer regions, then one frame", async () => {
    const enc = new StreamingEncoder({ base: [{ name: "big" }, { name: "small" }] });
    enc.writeObject({ shape: [400, 500], dtype: "float64" }, bigData);
    enc.writeObject({ shape: [50], dtype: "int32" }, smallData);
    const streamedMsg = enc.finish();
    const body = concat([packageMessages()[0]!, streamedMsg]);
    const { url, hits } = await start(body, "ranges");
    const f = await TensogramFile.fromUrl(url);
    assert.equal(f.messageCount, 2);
    hits.length = 0;
    const meta = await f.messageMetadata(1);
    assert.deepEqual(meta, decodeMetadata(streamedMsg));
    assert.equal(hits.length, 2); // the header region and the footer region
    assert.ok(hits.every((h) => h.bytes === 256 * 1024));
    hits.length = 0;
    const o = await f.messageObject(1, 1);
    assert.equal(hits.length, 1);
    assert.ok(hits[0]!.bytes < 4096);
    assert.deepEqual(objectBytes(o), smallData);
    assert.deepEqual(o.metadata, decode(streamedMsg).metadata);
    assert.deepEqual(objectBytes(await f.messageObject(1, 0)), bigData);
  });

  it("a server that refuses ranges: one eager GET", async () => {
    const { url, hits } = await start(file, "noranges");
    const f = await TensogramFile.fromUrl(url);
    assert.equal(f.source, "remote");
    assert.equal(f.messageCount, 4);
    assert.deepEqual(hits.map((h) => h.method), ["HEAD", "GET"]);
    assert.equal(hits[1]!.range, undefined);
    assert.deepEqual(objectBytes(await f.messageObject(2, 0)), native(2, 0));
    assert.equal(hits.length, 2);
  });

  it("bytes before, between and after messages: still lazy, the same messages as the in-memory scan (spec 01 §16)", async () => {
    const [p0, p1, p2] = packageMessages();
    // A false start in the gap: "TENSOGRM" and a preamble whose length does not land on an end magic.
    const fake = p1!.slice(0, 24);
    const gap = concat([new Uint8Array(100).fill(7), fake, new Uint8Array(300).fill(0x39)]);
    const withGarbage = concat([new Uint8Array(5000).fill(1), cppMsg, gap, p0!, p1!, new Uint8Array(70_000).fill(0), p2!, new Uint8Array(47).fill(3)]);
    const { url, hits } = await start(withGarbage, "ranges");
    const f = await TensogramFile.fromUrl(url);
    assert.deepEqual(f.messageLayouts, scan(withGarbage));
    assert.equal(f.messageCount, 4);
    // Range requests only, none of the whole object; the gaps cost about their own size.
    assert.ok(hits.slice(1).every((h) => h.range !== undefined), JSON.stringify(hits));
    const read = hits.slice(1).reduce((n, h) => n + h.bytes, 0);
    assert.ok(read < 5000 + gap.length + 70_000 + 47 + 2 * 65536 + 4 * 24, `read ${read} of ${withGarbage.length}`);
    assert.deepEqual(objectBytes(await f.messageObject(0, 0)), native(0, 0));
    assert.deepEqual(objectBytes(await f.messageObject(3, 0)), native(3, 0));
  });

  it("only foreign bytes: no message, a few Range reads", async () => {
    const junk = new Uint8Array(200_000).fill(0x54);
    const { url, hits } = await start(junk, "ranges");
    const f = await TensogramFile.fromUrl(url);
    assert.equal(f.messageCount, 0);
    assert.ok(hits.slice(1).every((h) => h.range !== undefined));
    assert.ok(hits.length <= 1 + 1 + 3, JSON.stringify(hits.map((h) => h.range)));
  });

  it("HTTP 404 is an IoError naming the status; bad options are refused", async () => {
    const { url } = await start(file, "404");
    await assert.rejects(TensogramFile.fromUrl(url), (e: Error) => e instanceof IoError && /HTTP 404/.test(e.message));
    await assert.rejects(TensogramFile.fromUrl(url, { concurrency: 1, bidirectional: true }), InvalidArgumentError);
    await assert.rejects(TensogramFile.fromUrl(url, { concurrency: 0 }), InvalidArgumentError);
  });
});
