// TensogramFile: random access to the messages of a local file (Node), an
// in-memory buffer or a remote object read lazily with HTTP Range requests.
// The TypeScript side only moves bytes: message boundaries come from the
// core's scan (in memory) or its preamble reader (remote), a message's layout
// from the core's layout loader (tgm_layout_from_regions, which says which
// byte range it lacks), and objects are decoded by the core from their frame
// alone (tgm_decode_data_frame*). See docs/wasm.md.

import { check, fn, takeBytes, u32At, withScope } from "./abi.js";
import {
  asBytes, checkIndex, decode, decodeMetadata, decodeObject, decodeRange, encode, readNodeFile, scan, toU64,
  wrapMessage, WIRE_VERSION, type DecodedMessage, type DecodeRangeResult,
} from "./api.js";
import { typedArrayFor } from "./dtype.js";
import { InvalidArgumentError, IoError, ObjectError } from "./errors.js";
import { wasm } from "./init.js";
import { fromJson } from "./json.js";
import type {
  DataObjectDescriptor, DecodeOptions, DecodeRangeOptions, EncodeInput, EncodeOptions, GlobalMetadata,
  MessagePosition, RangePair,
} from "./types.js";

export interface OpenFileOptions {
  signal?: AbortSignal;
}

export interface FromUrlOptions {
  fetch?: typeof fetch;
  headers?: HeadersInit;
  signal?: AbortSignal;
  /** Range requests in flight at once for batches and descriptors (default 6). */
  concurrency?: number;
  /** Accepted for compatibility; the scan here walks forward only. */
  bidirectional?: boolean;
  /** Logs every request to the console. */
  debug?: boolean;
}

export type AppendOptions = Pick<EncodeOptions, "hash">;

type Concurrency = { concurrency?: number };

/** The layout of one message: what the core's layout loader returns. */
interface Layout {
  metadata: GlobalMetadata;
  firstMetadata: GlobalMetadata;
  objects: [number, number][];
}

/** Runs `tasks` with at most `limit` in flight, results in order. */
async function limited<T>(tasks: (() => Promise<T>)[], limit: number): Promise<T[]> {
  const out = new Array<T>(tasks.length);
  let next = 0;
  const worker = async () => {
    while (next < tasks.length) {
      const i = next++;
      out[i] = await tasks[i]!();
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, tasks.length)) }, worker));
  return out;
}

function withVersion(g: GlobalMetadata): GlobalMetadata {
  return { version: WIRE_VERSION, ...g };
}

/** Parses the JSON of tgm_layout_from_regions. */
function parseLayout(text: string): Layout & { whole: boolean } {
  const doc = fromJson(text) as unknown as {
    metadata: GlobalMetadata; first_metadata: GlobalMetadata; whole: boolean; objects: [number, number][];
  };
  return {
    metadata: withVersion(doc.metadata),
    firstMetadata: withVersion(doc.first_metadata),
    whole: doc.whole,
    objects: doc.objects.map(([o, l]) => [Number(o), Number(l)]),
  };
}

type Region = { offset: number; bytes: Uint8Array };
type Need = { offset: number; length: number };

/**
 * One step of a core reader that works over the regions of a file fetched so
 * far (tgm_layout_from_regions, tgm_data_frame_descriptor_from_regions): its
 * JSON result, or the byte range it needs next. `call` gets the regions'
 * offsets, pointers and lengths and the out-parameters, in the C ABI's order.
 */
function regionsStep(
  regions: readonly Region[],
  call: (offsets: number, ptrs: number, lens: number, n: number, out: number, needOff: number, needLen: number) => number,
): { json?: string; need?: Need } {
  return withScope((s) => {
    const m = s.m;
    const offsets = s.alloc(8 * Math.max(regions.length, 1));
    const ptrs = s.u32s(regions.map((r) => s.bytes(r.bytes)));
    const lens = s.u32s(regions.map((r) => r.bytes.byteLength));
    const dv = new DataView(m.HEAPU8.buffer);
    regions.forEach((r, i) => dv.setBigUint64(offsets + 8 * i, BigInt(r.offset), true));
    const out = s.zeros(8);
    const needOff = s.zeros(8);
    const needLen = s.zeros(8);
    check(m, call(offsets, ptrs, lens, regions.length, out, needOff, needLen));
    const view = new DataView(m.HEAPU8.buffer);
    const nl = Number(view.getBigUint64(needLen, true));
    if (nl > 0) {
      takeBytes(m, out);
      return { need: { offset: Number(view.getBigUint64(needOff, true)), length: nl } };
    }
    return { json: new TextDecoder().decode(takeBytes(m, out)) };
  });
}

/**
 * One step of the core's layout loader over the regions fetched so far:
 * the layout, or the byte range it needs next.
 */
function layoutStep(
  length: number, flags: number, regions: readonly Region[],
): { layout?: Layout & { whole: boolean }; need?: Need } {
  const m = wasm();
  const step = regionsStep(regions, (offsets, ptrs, lens, n, out, needOff, needLen) =>
    fn(m, "layout_from_regions")(BigInt(length), flags, offsets, ptrs, lens, n, out, needOff, needLen));
  return step.need ? { need: step.need } : { layout: parseLayout(step.json ?? "") };
}

/**
 * One step of the core's descriptor reader (tgm_data_frame_descriptor_from_regions)
 * over the regions of one frame fetched so far: the descriptor, or the range it needs next.
 */
function descriptorStep(
  length: number, objectIndex: number, regions: readonly Region[],
): { descriptor?: DataObjectDescriptor; need?: Need } {
  const m = wasm();
  const step = regionsStep(regions, (offsets, ptrs, lens, n, out, needOff, needLen) =>
    fn(m, "data_frame_descriptor_from_regions")(BigInt(length), offsets, ptrs, lens, n, objectIndex, out, needOff,
      needLen));
  return step.need
    ? { need: step.need }
    : { descriptor: fromJson(step.json ?? "") as unknown as DataObjectDescriptor };
}

/** The core's layout loader over a message held whole in memory. */
function layoutOfBytes(msg: Uint8Array): Layout {
  const step = layoutStep(msg.byteLength, -1, [{ offset: 0, bytes: msg }]);
  if (!step.layout) throw new IoError("layout loader asked for bytes beyond a whole message");
  return step.layout;
}

/** The descriptor of one data-object frame (core: tgm_data_frame_descriptor_json). */
function frameDescriptor(frame: Uint8Array, objectIndex: number): DataObjectDescriptor {
  return withScope((s) => {
    const out = s.zeros(8);
    check(s.m, fn(s.m, "data_frame_descriptor_json")(s.bytes(frame), frame.byteLength, objectIndex, out));
    return fromJson(new TextDecoder().decode(takeBytes(s.m, out))) as unknown as DataObjectDescriptor;
  });
}

/** One object decoded from its frame alone, carrying the message's metadata. */
function decodeFrame(frame: Uint8Array, objectIndex: number, metadata: GlobalMetadata, opts: DecodeOptions): DecodedMessage {
  const m = wasm();
  const handle = withScope((s) => {
    const out = s.zeros(4);
    check(m, fn(m, "decode_data_frame")(s.bytes(frame), frame.byteLength, objectIndex, opts.verifyHash ? 1 : 0,
      opts.restoreNonFinite === false ? 0 : 1, out));
    return u32At(m, out);
  });
  return wrapMessage(m, handle, metadata);
}

function decodeFrameRange(
  frame: Uint8Array, objectIndex: number, ranges: readonly RangePair[], opts: DecodeRangeOptions,
): DecodeRangeResult {
  if (!Array.isArray(ranges)) throw new InvalidArgumentError("ranges must be an array of [offset, count]");
  const offsets = ranges.map((r, i) => toU64(r[0], `ranges[${i}][0]`));
  const counts = ranges.map((r, i) => toU64(r[1], `ranges[${i}][1]`));
  const descriptor = frameDescriptor(frame, objectIndex);
  const parts = withScope((s) => {
    const m = s.m;
    const slots = opts.join ? 1 : Math.max(ranges.length, 1);
    const out = s.zeros(8 * slots);
    const count = s.zeros(4);
    check(m, fn(m, "decode_data_frame_range")(s.bytes(frame), frame.byteLength, objectIndex, s.u64s(offsets),
      s.u64s(counts), ranges.length, opts.join ? 1 : 0, out, count));
    const n = u32At(m, count);
    const raw: Uint8Array[] = [];
    for (let i = 0; i < n; i++) raw.push(takeBytes(m, out + 8 * i));
    return raw;
  });
  return { descriptor, parts: parts.map((b) => typedArrayFor(descriptor.dtype, b, false)) };
}

/** The preamble's total_length and flags (core: tgm_read_preamble). */
function readPreamble(head: Uint8Array): { totalLength: bigint; flags: number } {
  return withScope((s) => {
    const total = s.zeros(8);
    const flags = s.zeros(2);
    check(s.m, fn(s.m, "read_preamble")(s.bytes(head), head.byteLength, total, flags));
    const dv = new DataView(s.m.HEAPU8.buffer);
    return { totalLength: dv.getBigUint64(total, true), flags: dv.getUint16(flags, true) };
  });
}

// ---------------------------------------------------------------------------
// Backends.

interface Backend {
  readonly layouts: readonly MessagePosition[];
  readonly byteLength: number;
  readonly lazy: boolean;
  raw(i: number): Promise<Uint8Array>;
  layout(i: number): Promise<Layout>;
  /** Bytes [offset, offset + length) of message i. */
  slice(i: number, offset: number, length: number): Promise<Uint8Array>;
  /** The descriptor of object k of message i, whose frame is `extent`. */
  descriptor(i: number, k: number, extent: [number, number]): Promise<DataObjectDescriptor>;
}

class BufferBackend implements Backend {
  readonly layouts: readonly MessagePosition[];
  readonly lazy = false;
  private readonly cache = new Map<number, Layout>();
  constructor(readonly bytes: Uint8Array) {
    this.layouts = scan(bytes);
  }
  get byteLength(): number {
    return this.bytes.byteLength;
  }
  private view(i: number): Uint8Array {
    const p = this.layouts[i]!;
    return this.bytes.subarray(p.offset, p.offset + p.length);
  }
  async raw(i: number): Promise<Uint8Array> {
    return this.view(i).slice();
  }
  async layout(i: number): Promise<Layout> {
    let l = this.cache.get(i);
    if (!l) {
      l = layoutOfBytes(this.view(i));
      this.cache.set(i, l);
    }
    return l;
  }
  async slice(i: number, offset: number, length: number): Promise<Uint8Array> {
    return this.view(i).subarray(offset, offset + length);
  }
  async descriptor(i: number, k: number, [off, len]: [number, number]): Promise<DataObjectDescriptor> {
    return frameDescriptor(this.view(i).subarray(off, off + len), k);
  }
}

const RAW_CACHE = 32;

class RemoteBackend implements Backend {
  readonly lazy = true;
  private readonly raws = new Map<number, Uint8Array>();
  private readonly layoutCache = new Map<number, Promise<Layout>>();
  constructor(
    private readonly url: string,
    private readonly size: number,
    readonly layouts: readonly MessagePosition[],
    private readonly flags: readonly number[],
    private readonly get: (offset: number, length: number) => Promise<Uint8Array>,
  ) {}
  get byteLength(): number {
    return this.size;
  }
  private remember(i: number, bytes: Uint8Array): void {
    if (this.raws.size >= RAW_CACHE) this.raws.delete(this.raws.keys().next().value as number);
    this.raws.set(i, bytes);
  }
  async raw(i: number): Promise<Uint8Array> {
    let b = this.raws.get(i);
    if (!b) {
      const p = this.layouts[i]!;
      b = await this.get(p.offset, p.length);
      this.remember(i, b);
    }
    return b;
  }
  layout(i: number): Promise<Layout> {
    let l = this.layoutCache.get(i);
    if (!l) {
      l = this.loadLayout(i);
      this.layoutCache.set(i, l);
      l.catch(() => this.layoutCache.delete(i));
    }
    return l;
  }
  private async loadLayout(i: number): Promise<Layout> {
    const p = this.layouts[i]!;
    const whole = this.raws.get(i);
    if (whole) return layoutOfBytes(whole);
    const regions: { offset: number; bytes: Uint8Array }[] = [];
    // The loader asks for the header region, then (footer-indexed messages)
    // the footer region, or the whole message when neither suffices.
    for (let round = 0; round < 8; round++) {
      const step = layoutStep(p.length, this.flags[i] ?? -1, regions);
      if (step.layout) {
        if (step.layout.whole && regions.length > 0) {
          const all = regions.find((r) => r.offset === 0 && r.bytes.byteLength === p.length);
          if (all) this.remember(i, all.bytes);
        }
        return step.layout;
      }
      const need = step.need!;
      regions.push({ offset: need.offset, bytes: await this.get(p.offset + need.offset, need.length) });
    }
    throw new IoError(`${this.url}: the layout of message ${i} needed more than 8 reads`);
  }
  async slice(i: number, offset: number, length: number): Promise<Uint8Array> {
    const whole = this.raws.get(i);
    if (whole) return whole.subarray(offset, offset + length);
    return this.get(this.layouts[i]!.offset + offset, length);
  }
  /** Small frames whole; of a large one, its tail, header and (when longer) descriptor CBOR only. */
  async descriptor(i: number, k: number, [off, len]: [number, number]): Promise<DataObjectDescriptor> {
    const regions: { offset: number; bytes: Uint8Array }[] = [];
    for (let round = 0; round < 6; round++) {
      const step = descriptorStep(len, k, regions);
      if (step.descriptor) return step.descriptor;
      const need = step.need!;
      regions.push({ offset: need.offset, bytes: await this.slice(i, off + need.offset, need.length) });
    }
    throw new IoError(`${this.url}: the descriptor of object ${k} of message ${i} needed more than 6 reads`);
  }
}

// ---------------------------------------------------------------------------
// HTTP.

interface Http {
  fetch: typeof fetch;
  headers: HeadersInit | undefined;
  signal: AbortSignal | undefined;
  debug: boolean;
}

async function httpGet(h: Http, url: string, range?: { offset: number; length: number }): Promise<Uint8Array> {
  const headers = new Headers(h.headers);
  if (range) headers.set("Range", `bytes=${range.offset}-${range.offset + range.length - 1}`);
  if (h.debug) console.debug(`tensogram: GET ${url}${range ? ` ${headers.get("Range")}` : ""}`);
  let res: Response;
  try {
    res = await h.fetch(url, { headers, ...(h.signal ? { signal: h.signal } : {}) });
  } catch (e) {
    if ((e as { name?: string }).name === "AbortError") throw e;
    throw new IoError(`GET ${url} failed: ${(e as Error).message}`);
  }
  if (!res.ok) throw new IoError(`GET ${url} failed: HTTP ${res.status}`);
  const body = new Uint8Array(await res.arrayBuffer());
  if (!range) return body;
  if (res.status === 206 && body.byteLength === range.length) return body;
  // A server that ignored the Range header sent the whole object.
  if (res.status === 200 && body.byteLength >= range.offset + range.length) {
    return body.slice(range.offset, range.offset + range.length);
  }
  throw new IoError(`GET ${url} ${headers.get("Range")}: got ${body.byteLength} bytes (HTTP ${res.status})`);
}

// The forward scan of spec 01 §16 over Range requests: one 24-byte read per
// preamble while the messages follow each other; where they do not (bytes
// before, between or after them), the gap is searched for the next "TENSOGRM"
// in windows of growing size, and a candidate counts only if its declared
// length lands on an end magic (§16.1), so a gap costs reads of its own size
// and the messages around it stay lazy. A streaming message without a
// back-filled length (total_length 0) ends the lazy walk: the caller reads the
// whole object and scans it in memory.

const MIN_MESSAGE = 48; // preamble + postamble (§16.1)
const START_MAGIC = [0x54, 0x45, 0x4e, 0x53, 0x4f, 0x47, 0x52, 0x4d]; // "TENSOGRM"
const END_MAGIC = [0x33, 0x39, 0x32, 0x37, 0x37, 0x37, 0x37, 0x37]; // "39277777"
const FIRST_WINDOW = 64 * 1024;
const LAST_WINDOW = 8 * 1024 * 1024;

function magicAt(b: Uint8Array, i: number, magic: readonly number[]): boolean {
  for (let k = 0; k < 8; k++) if (b[i + k] !== magic[k]) return false;
  return true;
}

/** The preamble's length and flags, or undefined when the bytes are not a preamble. */
function preambleOf(head: Uint8Array): { length: number; flags: number } | undefined {
  try {
    const p = readPreamble(head);
    return { length: Number(p.totalLength), flags: p.flags };
  } catch (e) {
    if (e instanceof IoError || (e as { name?: string }).name === "AbortError") throw e;
    return undefined;
  }
}

type Hop = { offset: number; length: number; flags: number } | "streaming" | null;

/** The first message at or after `from` whose length ends on an end magic, searched in windows. */
async function searchForward(h: Http, url: string, size: number, from: number): Promise<Hop> {
  let window = FIRST_WINDOW;
  for (let p = from; p + MIN_MESSAGE <= size; ) {
    const chunk = await httpGet(h, url, { offset: p, length: Math.min(window, size - p) });
    // indexOf jumps to the next "T" natively: long runs of foreign bytes cost little.
    for (let i = chunk.indexOf(START_MAGIC[0]!); i >= 0 && i + 8 <= chunk.length; i = chunk.indexOf(START_MAGIC[0]!, i + 1)) {
      const c = p + i;
      if (c + MIN_MESSAGE > size) return null;
      if (!magicAt(chunk, i, START_MAGIC)) continue;
      const head = i + 24 <= chunk.length ? chunk.subarray(i, i + 24) : await httpGet(h, url, { offset: c, length: 24 });
      const pre = preambleOf(head);
      if (pre === undefined) continue;
      if (pre.length === 0) return "streaming";
      if (pre.length < MIN_MESSAGE || c + pre.length > size) continue;
      const e = c + pre.length - 8 - p;
      const tail = e + 8 <= chunk.length ? chunk.subarray(e, e + 8) : await httpGet(h, url, { offset: c + pre.length - 8, length: 8 });
      if (magicAt(tail, 0, END_MAGIC)) return { offset: c, length: pre.length, flags: pre.flags };
    }
    // The next window overlaps this one by 7 bytes: a magic across the seam is found there.
    p += Math.max(1, chunk.length - 7);
    window = Math.min(2 * window, LAST_WINDOW);
  }
  return null;
}

/** Message boundaries found with Range GETs; null when the object must be scanned whole (a streaming message). */
async function lazyScan(h: Http, url: string, size: number): Promise<{ layouts: MessagePosition[]; flags: number[] } | null> {
  const layouts: MessagePosition[] = [];
  const flags: number[] = [];
  let pos = 0;
  while (pos + MIN_MESSAGE <= size) {
    // The fast path: a preamble right here, trusted for its length (the layout read checks the rest).
    let hit: Hop = null;
    const pre = preambleOf(await httpGet(h, url, { offset: pos, length: 24 }));
    if (pre !== undefined && pre.length === 0) return null;
    if (pre !== undefined && pre.length >= MIN_MESSAGE && pos + pre.length <= size) {
      hit = { offset: pos, length: pre.length, flags: pre.flags };
    } else {
      hit = await searchForward(h, url, size, pos + 1);
      if (hit === "streaming") return null;
      if (hit === null) break; // nothing but foreign bytes to the end
    }
    layouts.push({ offset: hit.offset, length: hit.length });
    flags.push(hit.flags);
    pos = hit.offset + hit.length;
  }
  return { layouts, flags };
}

// ---------------------------------------------------------------------------

/** Random access to the messages of a file, a buffer or a remote object. */
export class TensogramFile {
  private closed = false;
  private constructor(
    private backend: Backend,
    readonly source: "local" | "remote" | "buffer",
    private readonly path: string | URL | undefined,
    private readonly concurrency: number,
  ) {}

  /** Node only: reads the whole file, then scans it. */
  static async open(path: string | URL, options: OpenFileOptions = {}): Promise<TensogramFile> {
    const bytes = await readNodeFile(path, options.signal);
    return new TensogramFile(new BufferBackend(bytes), "local", path, 1);
  }

  /** A copy of `bytes`, scanned. */
  static fromBytes(bytes: Uint8Array): TensogramFile {
    asBytes(bytes, "bytes");
    return new TensogramFile(new BufferBackend(bytes.slice()), "buffer", undefined, 1);
  }

  /**
   * A remote object: a HEAD probe; with `Accept-Ranges: bytes` and a length,
   * messages are found and read with Range GETs; otherwise (or when the lazy
   * scan meets anything but a clean sequence of messages) one GET of the whole.
   */
  static async fromUrl(url: string | URL, options: FromUrlOptions = {}): Promise<TensogramFile> {
    const concurrency = options.concurrency ?? 6;
    if (!Number.isInteger(concurrency) || concurrency < 1) {
      throw new InvalidArgumentError(`concurrency must be a positive integer, got ${concurrency}`);
    }
    if (options.bidirectional === true && concurrency === 1) {
      throw new InvalidArgumentError("bidirectional scanning needs concurrency of at least 2");
    }
    const href = String(url);
    const fetchFn = options.fetch ?? globalThis.fetch;
    if (typeof fetchFn !== "function") throw new IoError("no fetch() in this environment");
    const h: Http = { fetch: fetchFn, headers: options.headers, signal: options.signal, debug: options.debug ?? false };
    let size = -1;
    try {
      if (h.debug) console.debug(`tensogram: HEAD ${href}`);
      const head = await fetchFn(href, { method: "HEAD", headers: new Headers(h.headers), ...(h.signal ? { signal: h.signal } : {}) });
      const len = Number(head.headers.get("content-length") ?? "");
      if (head.ok && /\bbytes\b/i.test(head.headers.get("accept-ranges") ?? "") && Number.isSafeInteger(len) && len > 0) {
        size = len;
      }
    } catch (e) {
      if ((e as { name?: string }).name === "AbortError") throw e;
    }
    if (size > 0) {
      const found = await lazyScan(h, href, size);
      if (found) {
        const get = (offset: number, length: number) => httpGet(h, href, { offset, length });
        return new TensogramFile(new RemoteBackend(href, size, found.layouts, found.flags, get), "remote", undefined, concurrency);
      }
    }
    const bytes = await httpGet(h, href);
    return new TensogramFile(new BufferBackend(bytes), "remote", undefined, concurrency);
  }

  private live(): Backend {
    if (this.closed) throw new InvalidArgumentError("tensogram: TensogramFile used after close()");
    return this.backend;
  }
  private index(i: number): number {
    const b = this.live();
    checkIndex(i, "message index");
    if (i >= b.layouts.length) throw new ObjectError(`message index ${i} out of range (have ${b.layouts.length})`);
    return i;
  }
  private async frame(msg: number, obj: number): Promise<{ layout: Layout; frame: Uint8Array }> {
    const b = this.live();
    checkIndex(obj, "objectIndex");
    const layout = await b.layout(msg);
    const extent = layout.objects[obj];
    if (!extent) throw new ObjectError(`object index ${obj} out of range (have ${layout.objects.length})`);
    return { layout, frame: await b.slice(msg, extent[0], extent[1]) };
  }

  get messageCount(): number {
    return this.live().layouts.length;
  }
  get messageLayouts(): readonly MessagePosition[] {
    return this.live().layouts.map((p) => ({ ...p }));
  }
  get byteLength(): number {
    return this.live().byteLength;
  }

  /** The bytes of message `index` (remote: one Range GET, 32 messages cached). */
  async rawMessage(index: number): Promise<Uint8Array> {
    return this.live().raw(this.index(index));
  }
  async message(index: number, options: DecodeOptions = {}): Promise<DecodedMessage> {
    return decode(await this.rawMessage(index), options);
  }
  /** The metadata of the first metadata frame (remote: the header region, or the footer region). */
  async messageMetadata(index: number): Promise<GlobalMetadata> {
    const b = this.live();
    this.index(index);
    if (!b.lazy) return decodeMetadata(await b.raw(index));
    return structuredClone((await b.layout(index)).firstMetadata);
  }
  /** Metadata and every descriptor, without decoding payloads (remote: small frames whole, large ones only around their descriptor). */
  async messageDescriptors(index: number): Promise<{ metadata: GlobalMetadata; descriptors: DataObjectDescriptor[] }> {
    const b = this.live();
    this.index(index);
    const layout = await b.layout(index);
    const tasks = layout.objects.map((extent, k) => () => b.descriptor(index, k, extent));
    const descriptors = await limited(tasks, b.lazy ? this.concurrency : 1);
    return { metadata: structuredClone(layout.metadata), descriptors };
  }
  /** One object (remote: one Range GET of its frame once the layout is known). */
  async messageObject(msgIndex: number, objectIndex: number, options: DecodeOptions = {}): Promise<DecodedMessage> {
    const b = this.live();
    this.index(msgIndex);
    if (!b.lazy) return decodeObject(await b.raw(msgIndex), objectIndex, options);
    const { layout, frame } = await this.frame(msgIndex, objectIndex);
    return decodeFrame(frame, objectIndex, structuredClone(layout.metadata), options);
  }
  async messageObjectRange(
    msgIndex: number, objectIndex: number, ranges: readonly RangePair[], options: DecodeRangeOptions = {},
  ): Promise<DecodeRangeResult> {
    const b = this.live();
    this.index(msgIndex);
    if (!b.lazy) return decodeRange(await b.raw(msgIndex), objectIndex, ranges, options);
    const { frame } = await this.frame(msgIndex, objectIndex);
    return decodeFrameRange(frame, objectIndex, ranges, options);
  }
  async messageObjectBatch(
    msgIndices: readonly number[], objectIndex: number, options: DecodeOptions & Concurrency = {},
  ): Promise<DecodedMessage[]> {
    const tasks = this.batchTasks(msgIndices, (i) => this.messageObject(i, objectIndex, options));
    return limited(tasks, this.limit(options));
  }
  async messageObjectRangeBatch(
    msgIndices: readonly number[], objectIndex: number, ranges: readonly RangePair[],
    options: DecodeRangeOptions & Concurrency = {},
  ): Promise<DecodeRangeResult[]> {
    const tasks = this.batchTasks(msgIndices, (i) => this.messageObjectRange(i, objectIndex, ranges, options));
    return limited(tasks, this.limit(options));
  }
  /** Loads the layouts of these messages (remote only; a no-op otherwise). */
  async prefetchLayouts(msgIndices: readonly number[], options: Concurrency = {}): Promise<void> {
    const b = this.live();
    if (!b.lazy) return;
    const tasks = this.batchTasks(msgIndices, (i) => b.layout(i));
    await limited(tasks, this.limit(options));
  }
  private batchTasks<T>(msgIndices: readonly number[], f: (i: number) => Promise<T>): (() => Promise<T>)[] {
    if (!Array.isArray(msgIndices)) throw new InvalidArgumentError("msgIndices must be an array");
    msgIndices.forEach((i) => this.index(i));
    return msgIndices.map((i) => () => f(i));
  }
  private limit(options: Concurrency): number {
    if (!this.live().lazy) return 1;
    const c = options.concurrency ?? this.concurrency;
    if (!Number.isInteger(c) || c < 1) throw new InvalidArgumentError(`concurrency must be a positive integer, got ${c}`);
    return c;
  }

  async *[Symbol.asyncIterator](): AsyncIterator<DecodedMessage> {
    for (let i = 0; i < this.messageCount; i++) yield await this.message(i);
  }

  /** Encodes a message and appends it to the file (open() files only), then rescans. */
  async append(metadata: GlobalMetadata, objects: readonly EncodeInput[], options: AppendOptions = {}): Promise<void> {
    this.live();
    if (this.source !== "local" || this.path === undefined) {
      throw new InvalidArgumentError("append() needs a file opened with TensogramFile.open()");
    }
    const bytes = encode(metadata, objects, options.hash === undefined ? {} : { hash: options.hash });
    const fs = await import("node:fs/promises");
    try {
      await fs.appendFile(this.path, bytes);
    } catch (e) {
      throw new IoError(`cannot append to ${String(this.path)}: ${(e as Error).message}`);
    }
    this.backend = new BufferBackend(await readNodeFile(this.path));
  }

  /** Later calls throw InvalidArgumentError; decoded messages stay valid. */
  close(): void {
    this.closed = true;
  }
}
