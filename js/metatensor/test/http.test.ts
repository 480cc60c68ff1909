// Range-request loading (spec 06 §10.9) against a local HTTP server with
// Range and If-Range support (node:http on loopback): opening fetches the
// header with one request, each tensor is one request of exactly its bytes,
// tensors load in parallel, an AbortSignal cancels, and failed or
// inconsistent responses are typed errors.
import assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import { HttpSource, MetatensorError, MetatensorFile, MetatensorWriter, openMetatensor, validateDeep } from "@tensogram/metatensor";
import { TS_CASES, bigFlatFile } from "./cases.js";

interface Log {
  requests: { path: string; range?: string; sent: number }[];
}

function makeFile(): Uint8Array {
  const c = TS_CASES[2]!;
  const w = new MetatensorWriter(c.schema, { alignment: 64 });
  for (const [k, v] of Object.entries(c.values)) w.set(k, v);
  // A large flat tensor so that "only its bytes" is measurable.
  return w.serialize();
}

describe("http(s) range loading", () => {
  let server: Server;
  let base = "";
  const files: Record<string, { bytes: Uint8Array; etag: string }> = {};
  const log: Log = { requests: [] };
  let stall = false;
  let delayMs = 0;
  let inFlight = 0;
  let maxInFlight = 0;

  before(async () => {
    files["/small.mt"] = { bytes: makeFile(), etag: '"v1"' };
    files["/big.mt"] = { bytes: bigFlatFile(250_000), etag: '"v1"' };
    server = createServer((req, res) => {
      const url = req.url ?? "";
      const path = url.replace(/\?.*$/, "");
      const range = req.headers.range;
      const entry: Log["requests"][number] = { path: url, range, sent: 0 };
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      res.on("close", () => inFlight--);
      log.requests.push(entry);
      if (url.includes("fail=data") && range && !range.startsWith("bytes=0-")) {
        res.writeHead(500).end();
        return;
      }
      if (stall && range && !range.startsWith("bytes=0-")) return; // never answers: only an abort ends it
      const f = files[path];
      if (!f) {
        res.writeHead(404).end();
        return;
      }
      const etag = url.includes("changed") && range && !range.startsWith("bytes=0-") ? '"v2"' : f.etag;
      const send = (status: number, body: Uint8Array, headers: Record<string, string>) => {
        if (delayMs > 0 && status === 206 && !range!.startsWith("bytes=0-")) {
          setTimeout(() => reply(status, body, headers), delayMs);
        } else reply(status, body, headers);
      };
      const reply = (status: number, body: Uint8Array, headers: Record<string, string>) => {
        entry.sent = body.byteLength;
        res.writeHead(status, { ...headers, "Content-Length": String(body.byteLength), ETag: etag, "Accept-Ranges": "bytes" });
        res.end(body);
      };
      const m = range && !url.includes("norange") ? /^bytes=(\d+)-(\d+)$/.exec(range) : null;
      const ifRange = req.headers["if-range"];
      if (!m || (ifRange !== undefined && ifRange !== etag)) {
        send(200, f.bytes, {});
        return;
      }
      const start = Number(m[1]);
      const end = Math.min(Number(m[2]), f.bytes.length - 1);
      if (start >= f.bytes.length) {
        res.writeHead(416, { "Content-Range": `bytes */${f.bytes.length}` }).end();
        return;
      }
      send(206, f.bytes.subarray(start, end + 1), { "Content-Range": `bytes ${start}-${end}/${f.bytes.length}` });
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => {
    server.closeAllConnections?.();
    server.close();
  });

  it("opens with one request, fetches one tensor with one request of exactly its bytes", async () => {
    log.requests.length = 0;
    const f = (await openMetatensor(`${base}/big.mt`, { http: { headerGuess: 4096 } })) as MetatensorFile;
    assert.equal(log.requests.length, 1);
    assert.equal(log.requests[0]!.range, "bytes=0-4095");
    const entry = f.entry("b");
    const b = await f.flat("b");
    assert.equal(b.data[999], -999);
    assert.equal(log.requests.length, 2);
    const abs = f.header.dataOffset + entry.begin;
    assert.equal(log.requests[1]!.range, `bytes=${abs}-${abs + 8000 - 1}`);
    assert.equal(log.requests[1]!.sent, 8000);
    // Cached: no second request for the same tensor.
    await f.flat("b");
    assert.equal(log.requests.length, 2);
    const total = log.requests.reduce((s, r) => s + r.sent, 0);
    assert.ok(total < 4096 + 8000 + 1, `fetched ${total} bytes of a ${files["/big.mt"]!.bytes.length}-byte file`);
  });

  it("a header longer than the guess takes a second request", async () => {
    log.requests.length = 0;
    const f = await openMetatensor(`${base}/small.mt`, { http: { headerGuess: 16 } });
    assert.equal(log.requests.length, 2);
    assert.ok(f.names.includes("tracks"));
  });

  it("loads tensors in parallel (one request per physical tensor) and reads the same values as from memory", async () => {
    log.requests.length = 0;
    const f = await openMetatensor(`${base}/small.mt`, { http: { headerGuess: 256 } });
    const before = log.requests.length;
    maxInFlight = 0;
    delayMs = 30; // responses wait, so requests sent in parallel overlap
    const remote = await f.value();
    delayMs = 0;
    assert.ok(maxInFlight >= 2, `at most ${maxInFlight} request(s) in flight`);
    const physical = f.names.reduce((n, name) => n + 1 + (f.layout(name).hasHeap ? 1 : 0), 0);
    assert.equal(log.requests.length - before, physical);
    const local = await (await openMetatensor(files["/small.mt"]!.bytes)).value();
    assert.deepEqual(remote, local);
    await validateDeep(f as MetatensorFile);
  });

  it("an AbortSignal cancels a pending tensor request (MT_CANCELLED), and a later request works", async () => {
    const f = await openMetatensor(`${base}/big.mt`, { http: { headerGuess: 4096 } });
    stall = true;
    const ac = new AbortController();
    const p = f.get("a", { signal: ac.signal });
    setTimeout(() => ac.abort(), 50);
    await assert.rejects(p, (e) => e instanceof MetatensorError && e.code === "MT_CANCELLED");
    stall = false;
    const a = await f.flat("a");
    assert.equal(a.data[249_999], 249_999);
  });

  it("a failed range request is MT_BAD_RANGE", async () => {
    const f = await openMetatensor(`${base}/big.mt?fail=data`, { http: { headerGuess: 4096 } });
    await assert.rejects(f.get("b"), (e) => e instanceof MetatensorError && e.code === "MT_BAD_RANGE");
  });

  it("a file that changed after the header (ETag/If-Range) is MT_BAD_RANGE, not mixed data", async () => {
    const f = await openMetatensor(`${base}/big.mt?changed=1`, { http: { headerGuess: 4096 } });
    await assert.rejects(f.get("b"), (e) => e instanceof MetatensorError && e.code === "MT_BAD_RANGE");
  });

  it("a missing file is MT_NOT_FOUND; a truncated remote file fails the base layer", async () => {
    await assert.rejects(openMetatensor(`${base}/nope.mt`), (e) => e instanceof MetatensorError && e.code === "MT_NOT_FOUND");
    files["/trunc.mt"] = { bytes: files["/small.mt"]!.bytes.subarray(0, 300), etag: '"t"' };
    await assert.rejects(openMetatensor(`${base}/trunc.mt`), (e) => e instanceof MetatensorError && e.code === "ST_HEADER_LENGTH");
    const small = files["/small.mt"]!.bytes;
    files["/trunc2.mt"] = { bytes: small.subarray(0, small.length - 10), etag: '"t"' };
    await assert.rejects(openMetatensor(`${base}/trunc2.mt`), (e) => e instanceof MetatensorError && e.code === "ST_INCOMPLETE");
    files["/tiny.mt"] = { bytes: new Uint8Array(3), etag: '"t"' };
    await assert.rejects(openMetatensor(`${base}/tiny.mt`), (e) => e instanceof MetatensorError && e.code === "ST_HEADER_TOO_SMALL");
  });

  it("a server without Range support: the first response is the whole file, no further requests", async () => {
    log.requests.length = 0;
    const f = await openMetatensor(`${base}/small.mt?norange=1`);
    const v = await f.value();
    assert.equal(log.requests.length, 1);
    assert.deepEqual(v, await (await openMetatensor(files["/small.mt"]!.bytes)).value());
  });

  it("HttpSource counts requests and bytes", async () => {
    const s = await HttpSource.open(`${base}/big.mt`, { headerGuess: 1024 });
    assert.equal(s.size, files["/big.mt"]!.bytes.length);
    await s.read(100_000, 10);
    assert.deepEqual(s.stats, { requests: 2, bytes: 1024 + 10 });
  });
});
