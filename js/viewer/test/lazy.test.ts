// Lazy reading of .tgm files (docs/viewer.md, "Where bytes come from"): by
// URL from the test's counting server and from nginx, and local files through
// the picker, including one far larger than the WebAssembly memory (sparse).
// What each server logs is checked against the file's own layout.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { closeSync, ftruncateSync, openSync, writeFileSync, writeSync } from "node:fs";
import { join } from "node:path";
import type { Browser, Page } from "puppeteer-core";
import { init, encode } from "@tensogram/tensogram";
import { Nginx, nginxMissing, type LogEntry } from "./nginx.js";
import { NLAT, NLON, concat, mars } from "./fields.js";
import { SITE, startSession, type BrowserSession, type ServedRequest, type TestServer } from "./helpers.js";
import { rendered as renderedWithin } from "./page.js";

const STEPS = [0, 6, 12, 18, 24, 30];
const PARAMS = ["2t", "msl", "10u"];
/** The big object: 1200 × 1500 float32, uncompressed (7.2 MB). */
const BIG = [1200, 1500] as const;
const BIG_BYTES = BIG[0] * BIG[1] * 4;
const LAYOUT_REGION = 256 * 1024;

function grid(seed: number): Float32Array {
  const v = new Float32Array(NLAT * NLON);
  for (let k = 0; k < v.length; k++) v[k] = 250 + 30 * Math.sin(k / 97 + seed) + Math.cos(k * 0.37 + seed * 3);
  return v;
}

/** One message per step holding the params (zstd), then one message with the big object. */
function makeMessages(): Uint8Array[] {
  const out: Uint8Array[] = [];
  for (const step of STEPS) {
    out.push(encode(
      { base: PARAMS.map((param) => ({ mars: mars({ param, levtype: "sfc", step }) })) },
      PARAMS.map((_, p) => ({
        descriptor: { shape: [NLAT, NLON], dtype: "float32" as const, compression: "zstd" as const, zstd_level: 3 },
        data: grid(step + 10 * p),
      })),
    ));
  }
  const big = new Float32Array(BIG_BYTES / 4);
  for (let k = 0; k < big.length; k++) big[k] = Math.sin(k / 1000) * 100 + (k % 7);
  out.push(encode({ base: [{ name: "big", mars: { param: "big" } }] }, [
    { descriptor: { shape: [...BIG], dtype: "float32" }, data: big },
  ]));
  return out;
}

let session: BrowserSession | undefined;
let server: TestServer;
let browser: Browser;
let tmp: string;
let file: Uint8Array;
let messages: Uint8Array[];

before(async () => {
  await init();
  messages = makeMessages();
  file = concat(messages);
  session = await startSession("tgm-viewer-lazy-");
  ({ server, browser, tmp } = session);
});

after(() => session?.close());

const rendered = (page: Page, key: string) => renderedWithin(page, key, 30_000);

const BIG_MSG = () => STEPS.length;

/** The first field shown after opening (the viewer picks it): its "msg:obj". */
async function firstShown(page: Page): Promise<string> {
  await page.waitForFunction(() => document.body.dataset["rendered"] !== undefined || document.body.dataset["state"] === "error", { timeout: 30_000 });
  const err = await page.evaluate(() => (document.body.dataset["state"] === "error" ? document.getElementById("error")?.textContent : null));
  assert.equal(err, null);
  return (await page.evaluate(() => document.body.dataset["rendered"]))!;
}

/** Opening: per message at most a preamble read and two layout reads, none above the layout region. */
function checkOpening(reqs: { range: string; bytes: number }[], what: string): void {
  assert.ok(reqs.length >= 1, `${what}: no request`);
  assert.equal(reqs[0]!.range, "bytes=0-65535", `${what}: the first request is the 64 KiB probe`);
  for (const r of reqs) {
    assert.match(r.range, /^bytes=\d+-\d+$/, `${what}: every request is a Range request`);
    assert.ok(r.bytes <= LAYOUT_REGION, `${what}: ${r.range} sent ${r.bytes} bytes while opening`);
  }
  assert.ok(reqs.length <= 1 + 3 * messages.length, `${what}: ${reqs.length} requests for ${messages.length} messages`);
  // The big object's payload is not among them: opening reads far less than the file.
  const total = reqs.reduce((n, r) => n + r.bytes, 0);
  assert.ok(total < file.length / 4, `${what}: opening read ${total} of ${file.length} bytes`);
}

/** Showing the big object: one Range request of about its frame (payload + descriptor and frame overhead). */
function checkBigField(reqs: { range: string; bytes: number }[], what: string): void {
  assert.equal(reqs.length, 1, `${what}: ${JSON.stringify(reqs)}`);
  assert.match(reqs[0]!.range, /^bytes=\d+-\d+$/);
  assert.ok(reqs[0]!.bytes >= BIG_BYTES && reqs[0]!.bytes <= BIG_BYTES + 4096, `${what}: ${reqs[0]!.bytes} bytes for a ${BIG_BYTES}-byte payload`);
}

async function showBig(page: Page): Promise<void> {
  await page.click('.group-head[data-param="big"]');
  await page.click(`.row[data-msg="${BIG_MSG()}"][data-obj="0"]`);
  await rendered(page, `${BIG_MSG()}:0`);
}

describe("a .tgm file by URL, read lazily", () => {
  test("opening reads preambles and layouts, a field one Range request of its frame", async () => {
    server.files.set("lazy.tgm", file);
    const mine = () => server.log.filter((r: ServedRequest) => r.path === "/files/lazy.tgm");
    const page = await browser.newPage();
    await page.goto(`${server.url}?url=/files/lazy.tgm`);
    const first = await firstShown(page);
    assert.match(first, /^0:\d$/);
    const opened = mine();
    // The first field shown (0:0, zstd) comes with the opening: split it off,
    // the requests after the last one of the opening phase.
    const total = opened.reduce((n, r) => n + r.bytes, 0);
    const largest = Math.max(...opened.map((r) => r.bytes));
    console.log(`# open + first field over HTTP: ${opened.length} requests, ${total} bytes (file ${file.length}), largest ${largest}`);
    checkOpening(opened, "node server");
    assert.deepEqual(opened.filter((r) => r.method !== "GET"), [], "no HEAD: the 64 KiB probe gives the size");

    const before = mine().length;
    await showBig(page);
    const shown = mine().slice(before);
    console.log(`# big field: ${shown.map((r) => `${r.range} (${r.bytes} bytes)`).join(", ")}`);
    checkBigField(shown, "node server");
    // Every request: at most the layout region plus the largest frame.
    for (const r of mine()) assert.ok(r.bytes <= LAYOUT_REGION + BIG_BYTES + 4096);

    // Back to a field already shown: from the page's cache, no request.
    const n = mine().length;
    const [m0, o0] = first.split(":");
    await page.$eval(`.row[data-msg="${m0}"][data-obj="${o0}"]`, (e) => (e as HTMLElement).click());
    await rendered(page, first);
    await new Promise((r) => setTimeout(r, 200));
    assert.equal(mine().length, n);
    await page.close();
  });

  test("a server that refuses ranges: one GET, then nothing more", async () => {
    server.files.set("whole.tgm", file);
    server.noRanges.add("whole.tgm");
    const mine = () => server.log.filter((r: ServedRequest) => r.path === "/files/whole.tgm");
    const page = await browser.newPage();
    await page.goto(`${server.url}?url=/files/whole.tgm`);
    await firstShown(page);
    await showBig(page);
    assert.deepEqual(mine().map((r) => [r.status, r.bytes]), [[200, file.length]]);
    await page.close();
  });
});

describe("the same file from nginx", { skip: nginxMissing() }, () => {
  const nginx = new Nginx(SITE);
  before(() => nginx.start());
  after(() => nginx.remove());

  async function logFor(name: string, settle = 300): Promise<LogEntry[]> {
    await new Promise((r) => setTimeout(r, settle));
    return nginx.takeLog().filter((e) => e.uri === `/files/${name}`);
  }

  test("opening, then one Range request for the big field", async () => {
    nginx.put("lazy.tgm", file);
    nginx.takeLog();
    const page = await browser.newPage();
    await page.goto(`${nginx.url}?url=/files/lazy.tgm`);
    await firstShown(page);
    const opened = await logFor("lazy.tgm");
    for (const e of opened) assert.equal(e.status, 206, JSON.stringify(e));
    const total = opened.reduce((n, r) => n + r.bytes, 0);
    console.log(`# nginx, open + first field: ${opened.length} requests, ${total} bytes (file ${file.length})`);
    checkOpening(opened, "nginx");
    await showBig(page);
    const shown = await logFor("lazy.tgm");
    console.log(`# nginx, big field: ${shown.map((r) => `${r.range} (${r.bytes} bytes)`).join(", ")}`);
    checkBigField(shown, "nginx");
    await page.close();
  });
});

/**
 * A message made `gap` bytes longer by zero padding before its postamble
 * (decoders skip non-frame bytes between frames): the preamble's and the
 * postamble's total_length (u64 big-endian, at 16 and 8) and, when it pointed at the
 * postamble, first_footer_offset are moved.
 */
function stretched(m: Uint8Array, gap: number): { head: Uint8Array; tail: Uint8Array; length: number } {
  const L = m.length;
  const T = L + gap;
  const head = m.slice(0, L - 24);
  const tail = m.slice(L - 24);
  const dh = new DataView(head.buffer);
  const dt = new DataView(tail.buffer);
  assert.equal(Number(dh.getBigUint64(16)), L);
  dh.setBigUint64(16, BigInt(T));
  dt.setBigUint64(8, BigInt(T));
  if (Number(dt.getBigUint64(0)) === L - 24) dt.setBigUint64(0, BigInt(T - 24));
  return { head, tail, length: T };
}

describe("a local file larger than the WebAssembly memory", () => {
  test("a sparse 4.5 GiB file opens through the picker and shows its fields", async () => {
    // Four steps of 2t; the middle two messages padded to 2.25 GiB each (one
    // message must stay under 4 GiB: the WebAssembly build's address space),
    // so the last one starts beyond 4.5 GiB.
    const msgs = [0, 6, 12, 18].map((step) => encode({ base: [{ mars: mars({ param: "2t", levtype: "sfc", step }), units: "K" }] }, [
      { descriptor: { shape: [NLAT, NLON], dtype: "float32", compression: "zstd" }, data: grid(step) },
    ]));
    const gap = 2.25 * 2 ** 30;
    const path = join(tmp, "sparse.tgm");
    const fd = openSync(path, "w");
    let at = 0;
    for (const [k, m] of msgs.entries()) {
      if (k === 1 || k === 2) {
        const s = stretched(m, gap);
        writeSync(fd, s.head, 0, s.head.length, at);
        writeSync(fd, s.tail, 0, s.tail.length, at + s.length - 24);
        at += s.length;
      } else {
        writeSync(fd, m, 0, m.length, at);
        at += m.length;
      }
    }
    closeSync(fd);
    assert.ok(at > 4 * 2 ** 30);

    const page = await browser.newPage();
    const errors: string[] = [];
    page.on("pageerror", (e) => errors.push(String(e)));
    await page.goto(server.url);
    const input = await page.$("#file-input");
    assert.ok(input);
    await (input as unknown as { uploadFile(p: string): Promise<void> }).uploadFile(path);
    await rendered(page, "0:0");
    assert.equal(await page.$eval("#error", (e) => e.textContent ?? ""), "", "no message left unread");
    assert.match(await page.$eval("#frame-label", (e) => e.textContent ?? ""), /1 \/ 4/);
    for (const k of [1, 2, 3]) {
      await page.keyboard.press("ArrowRight");
      await rendered(page, `${k}:0`);
    }
    const reads = JSON.parse((await page.evaluate(() => document.body.dataset["reads"])) ?? "null") as
      { reads: number; bytes: number; largest: number } | null;
    assert.ok(reads !== null);
    console.log(`# sparse ${(at / 2 ** 30).toFixed(2)} GiB file: ${reads.reads} reads, ${reads.bytes} bytes, largest ${reads.largest}`);
    assert.ok(reads.bytes < 4 * LAYOUT_REGION, `read ${reads.bytes} bytes`);
    assert.ok(reads.largest <= LAYOUT_REGION);
    assert.deepEqual(errors, []);
    await page.close();
  });
});

describe("local files the lazy reader cannot walk", () => {
  const steps = (list: number[]) => list.map((step) => encode({ base: [{ mars: mars({ param: "2t", levtype: "sfc", step }), units: "K" }] }, [
    { descriptor: { shape: [NLAT, NLON], dtype: "float32", compression: "zstd" }, data: grid(step) },
  ]));

  async function open(path: string): Promise<Page> {
    const page = await browser.newPage();
    await page.goto(server.url);
    const input = await page.$("#file-input");
    assert.ok(input);
    await (input as unknown as { uploadFile(p: string): Promise<void> }).uploadFile(path);
    return page;
  }

  test("a message of 4 GiB or more is listed as unreadable, the others are shown", async () => {
    const [a, b, c] = steps([0, 6, 12]);
    const s = stretched(b!, 4.5 * 2 ** 30);
    const path = join(tmp, "big-message.tgm");
    const fd = openSync(path, "w");
    writeSync(fd, a!, 0, a!.length, 0);
    writeSync(fd, s.head, 0, s.head.length, a!.length);
    writeSync(fd, s.tail, 0, s.tail.length, a!.length + s.length - 24);
    writeSync(fd, c!, 0, c!.length, a!.length + s.length);
    closeSync(fd);
    const page = await open(path);
    await rendered(page, "0:0");
    const warning = /message 1: .*address space/;
    assert.match(await page.$eval("#error", (e) => e.textContent ?? ""), warning);
    assert.match(await page.$eval("#frame-label", (e) => e.textContent ?? ""), /1 \/ 2/);
    await page.keyboard.press("ArrowRight");
    await rendered(page, "2:0");
    // Still said after another field is drawn.
    assert.equal(await page.$eval("#error", (e) => (e as HTMLElement).hidden), false);
    assert.match(await page.$eval("#error", (e) => e.textContent ?? ""), warning);
    await page.close();
  });

  test("bytes between messages: the gap is searched with small reads, the file is not read whole", async () => {
    const [a, b] = steps([0, 6]);
    const path = join(tmp, "gap.tgm");
    const whole = a!.length + 100 + b!.length;
    writeFileSync(path, concat([a!, new Uint8Array(100).fill(7), b!]));
    const page = await open(path);
    await rendered(page, "0:0");
    assert.match(await page.$eval("#frame-label", (e) => e.textContent ?? ""), /1 \/ 2/);
    await page.keyboard.press("ArrowRight");
    await rendered(page, "1:0");
    const reads = JSON.parse((await page.evaluate(() => document.body.dataset["reads"])) ?? "null") as { largest: number };
    assert.ok(reads.largest < whole, `largest read ${reads.largest} of ${whole}`);
    await page.close();
  });

  test("a message without its length (streaming, total_length 0) in a 1.5 GiB file: the page says why it is not read", async () => {
    const [a] = steps([0]);
    const m = a!.slice();
    // total_length 0 in the preamble and the postamble (spec 01: offsets 16 and L - 16).
    new DataView(m.buffer).setBigUint64(16, 0n, true);
    new DataView(m.buffer).setBigUint64(m.length - 16, 0n, true);
    const path = join(tmp, "streamed.tgm");
    const fd = openSync(path, "w");
    writeSync(fd, m, 0, m.length, 0);
    ftruncateSync(fd, 1.5 * 2 ** 30);
    closeSync(fd);
    const page = await open(path);
    await page.waitForFunction(() => document.body.dataset["state"] === "error", { timeout: 30_000 });
    const text = await page.$eval("#error", (e) => e.textContent ?? "");
    console.log(`# streamed.tgm: ${text}`);
    assert.match(text, /^Cannot open streamed.tgm: not a readable Tensogram file: streamed.tgm holds a streaming message without its length.*1536 MiB.*limit 1024 MiB/);
    await page.close();
  });

  test("64 MiB of zeros after the last message: searched in windows of at most 8 MiB, the message opens", async () => {
    const [a] = steps([0]);
    const path = join(tmp, "tail.tgm");
    const fd = openSync(path, "w");
    writeSync(fd, a!, 0, a!.length, 0);
    ftruncateSync(fd, 64 * 2 ** 20);
    closeSync(fd);
    const started = Date.now();
    const page = await open(path);
    await rendered(page, "0:0");
    const reads = JSON.parse((await page.evaluate(() => document.body.dataset["reads"])) ?? "null") as { reads: number; bytes: number; largest: number };
    console.log(`# tail.tgm: opened in ${Date.now() - started} ms, ${reads.reads} reads, ${(reads.bytes / 2 ** 20).toFixed(0)} MiB, largest ${reads.largest}`);
    assert.ok(reads.largest <= 8 * 2 ** 20, JSON.stringify(reads));
    assert.equal(await page.$$eval(".row", (es) => es.length), 1);
    await page.close();
  });
});
