// The decoding worker: every byte of a file is parsed here, never on the
// page's thread, so a slow decode or a hostile file cannot freeze the tab
// (the page also restarts this worker when a request runs too long).
// .tgm files go through @tensogram/tensogram (our C++ core as WebAssembly);
// metatensor/safetensors files through @tensogram/metatensor (TypeScript).

import { init, TensogramFile, type GlobalMetadata } from "@tensogram/tensogram";
import {
  open as openSafetensorsOrMetatensor,
  HttpSource,
  MetatensorFile,
  type Input,
  type SafetensorsFile,
} from "@tensogram/metatensor";
import {
  ELEMENT_BUDGET,
  type CoordArrays,
  type FieldData,
  type FieldEntry,
  type FileIndex,
  type MtFlat,
  type MtPage,
  type MtTensor,
  type ReadStats,
  type Reply,
  type Request,
} from "./protocol.js";
import { isCoordinateName, objectName } from "./grouping.js";
import { blobReader, readerFetch, type Reader } from "./ranged.js";

interface TgmState {
  kind: "tgm";
  file: TensogramFile;
  fields: FieldEntry[];
}
interface MtState {
  kind: "mt";
  file: SafetensorsFile;
}
let state: TgmState | MtState | undefined;

const TGM_MAGIC = "TENSOGRM";

function startsWith(bytes: Uint8Array, magic: string): boolean {
  if (bytes.length < magic.length) return false;
  for (let i = 0; i < magic.length; i++) if (bytes[i] !== magic.charCodeAt(i)) return false;
  return true;
}

function elementCount(shape: readonly number[]): number {
  return shape.reduce((a, b) => a * b, 1);
}

function plain(v: unknown): Record<string, unknown> {
  if (typeof v !== "object" || v === null) return {};
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v)) if (k !== "_reserved_") out[k] = x;
  return out;
}

/** Sniffs the format by content: the .tgm magic, else a safetensors header (8-byte length + '{'). */
function sniff(bytes: Uint8Array): "tgm" | "safetensors" | "unknown" {
  if (startsWith(bytes, TGM_MAGIC)) return "tgm";
  if (bytes.length >= 9 && bytes[8] === 0x7b) return "safetensors";
  return "unknown";
}

/** Layouts loaded per step while the index is built (bounded: a file may hold many messages). */
const LAYOUT_CHUNK = 64;

/**
 * The field index from metadata only: message boundaries from the preambles,
 * each message's metadata from its layout (header or footer region), no
 * payload read. Objects whose metadata lacks shape/dtype get them from their
 * descriptors (a few small reads of that message).
 */
async function openTgm(reader: Reader, name: string): Promise<FileIndex> {
  // The package finds its .wasm next to itself (new URL(..., import.meta.url)),
  // which Vite copies into the build as an asset.
  await init();
  stats = { reads: 0, bytes: 0, largest: 0 };
  let file: TensogramFile;
  try {
    file = await TensogramFile.fromUrl(`tgm:${encodeURIComponent(name)}`, { fetch: readerFetch(reader, name, WHOLE_FILE_BUDGET, stats) });
  } catch (e) {
    // The fetch here is ours (ranged.ts): the package's "GET <url> failed:" adds nothing.
    throw new Error(`not a readable Tensogram file: ${(e as Error).message.replace(/^GET \S+ failed: /, "")}`);
  }
  const count = file.messageCount;
  if (count === 0) {
    throw new Error("no complete Tensogram message found: the file is truncated or corrupted");
  }
  const fields: FieldEntry[] = [];
  const warnings: string[] = [];
  for (let first = 0; first < count; first += LAYOUT_CHUNK) {
    const chunk = Array.from({ length: Math.min(LAYOUT_CHUNK, count - first) }, (_, k) => first + k);
    // A message that fails here is retried alone below, where its error becomes a warning.
    await file.prefetchLayouts(chunk).catch(() => undefined);
    for (const msg of chunk) {
      try {
        fields.push(...(await indexMessage(file, msg)));
      } catch (e) {
        warnings.push(`message ${msg}: ${(e as Error).message}`);
      }
    }
  }
  if (fields.length === 0 && warnings.length > 0) throw new Error(warnings.join("; "));
  state = { kind: "tgm", file, fields };
  return { format: "tgm", messages: count, fields, warnings, reads: { ...stats } };
}

function tensorOf(entry: Record<string, unknown>): { shape?: number[]; dtype?: string } {
  const reserved = (entry["_reserved_"] ?? {}) as Record<string, unknown>;
  const tensor = (reserved["tensor"] ?? {}) as Record<string, unknown>;
  const out: { shape?: number[]; dtype?: string } = {};
  if (Array.isArray(tensor["shape"])) out.shape = (tensor["shape"] as unknown[]).map(Number);
  if (typeof tensor["dtype"] === "string") out.dtype = tensor["dtype"];
  return out;
}

async function indexMessage(file: TensogramFile, msg: number): Promise<FieldEntry[]> {
  const md: GlobalMetadata = await file.messageMetadata(msg);
  const base = (md.base ?? []) as Record<string, unknown>[];
  let tensors = base.map(tensorOf);
  if (tensors.some((t) => t.shape === undefined || t.dtype === undefined)) {
    const d = await file.messageDescriptors(msg);
    tensors = tensors.map((t, k) => ({
      shape: t.shape ?? (d.descriptors[k] ? [...d.descriptors[k]!.shape].map(Number) : []),
      dtype: t.dtype ?? d.descriptors[k]?.dtype ?? "?",
    }));
  }
  return base.map((entry, obj) => {
    const meta = plain(entry);
    const objName = objectName(meta, obj);
    return {
      msg,
      obj,
      name: objName,
      shape: tensors[obj]!.shape ?? [],
      dtype: tensors[obj]!.dtype ?? "?",
      meta,
      coordinate: isCoordinateName(objName),
    };
  });
}

function toFloat32(data: ArrayLike<number> | ArrayLike<bigint>): Float32Array {
  const out = new Float32Array(data.length);
  for (let i = 0; i < data.length; i++) out[i] = Number(data[i]);
  return out;
}

/** Decoded objects kept for re-use (the point inspector reads every frame), bounded in bytes. */
const CACHE_BUDGET = 256 * 1024 * 1024;
const cache = new Map<string, { values: Float32Array; shape: number[] }>();
let cachedBytes = 0;
let stats: ReadStats = { reads: 0, bytes: 0, largest: 0 };

function remember(key: string, v: { values: Float32Array; shape: number[] }): void {
  if (v.values.byteLength > CACHE_BUDGET / 4) return;
  cache.set(key, v);
  cachedBytes += v.values.byteLength;
  for (const [k, old] of cache) {
    if (cachedBytes <= CACHE_BUDGET) break;
    cache.delete(k);
    cachedBytes -= old.values.byteLength;
  }
}

/** One object's values: one Range read of its frame (once its message's layout is known). */
async function decodeValues(st: TgmState, msg: number, obj: number): Promise<{ values: Float32Array; shape: number[] }> {
  const entry = st.fields.find((f) => f.msg === msg && f.obj === obj);
  if (entry === undefined) throw new Error(`no object ${obj} in message ${msg}`);
  const key = `${msg}:${obj}`;
  const hit = cache.get(key);
  if (hit !== undefined) {
    // Most recently used last.
    cache.delete(key);
    cache.set(key, hit);
    return hit;
  }
  const n = elementCount(entry.shape);
  if (n > ELEMENT_BUDGET) {
    throw new Error(
      `object "${entry.name}" declares shape [${entry.shape.join(", ")}] = ${n.toLocaleString("en")} elements, ` +
        `more than this viewer decodes (${ELEMENT_BUDGET.toLocaleString("en")})`,
    );
  }
  // Hashes are checked (xxh3 is cheap): a corrupted payload is an error, not a picture.
  const decoded = await st.file.messageObject(msg, obj, { verifyHash: true });
  try {
    const o = decoded.objects[0]!;
    const data = o.dataView();
    if (typeof (data as { real?: unknown }).real !== "undefined") {
      throw new Error(`object "${entry.name}" is complex (${entry.dtype}): not drawable`);
    }
    const out = { values: toFloat32(data as unknown as ArrayLike<number>), shape: [...o.descriptor.shape].map(Number) };
    remember(key, out);
    return out;
  } finally {
    decoded.close();
  }
}

/** Latitude/longitude objects of the same message, when there are any. */
async function coordsOf(st: TgmState, msg: number): Promise<CoordArrays | undefined> {
  const inMsg = st.fields.filter((f) => f.msg === msg);
  const find = (names: string[]) => inMsg.find((f) => names.includes(f.name.toLowerCase()));
  const la = find(["latitude", "lat", "grid_latitude"]);
  const lo = find(["longitude", "lon", "grid_longitude"]);
  if (la === undefined || lo === undefined) return undefined;
  return {
    lat: Float64Array.from((await decodeValues(st, msg, la.obj)).values),
    lon: Float64Array.from((await decodeValues(st, msg, lo.obj)).values),
  };
}

async function field(msg: number, obj: number): Promise<FieldData> {
  if (state?.kind !== "tgm") throw new Error("no .tgm file open");
  const st = state;
  const before = { ...stats };
  stats.largest = 0;
  // The decoded descriptor's shape: the metadata may not carry it.
  const { values, shape } = await decodeValues(st, msg, obj);
  const coords = await coordsOf(st, msg);
  // A copy crosses to the page (transferred) when this one stays in the cache.
  const kept = cache.get(`${msg}:${obj}`)?.values === values;
  const out: FieldData = {
    shape,
    values: kept ? values.slice() : values,
    reads: { reads: stats.reads - before.reads, bytes: stats.bytes - before.bytes, largest: stats.largest },
  };
  if (coords !== undefined) out.coords = coords;
  return out;
}

async function openMt(input: Input): Promise<FileIndex> {
  let file: SafetensorsFile;
  try {
    file = await openSafetensorsOrMetatensor(input);
  } catch (e) {
    throw new Error(`not a readable metatensor/safetensors file: ${(e as Error).message}`);
  }
  state = { kind: "mt", file };
  const tensors: MtTensor[] = [];
  const metadata: Record<string, string> = {};
  const isMt = file instanceof MetatensorFile;
  if (file instanceof MetatensorFile) {
    for (const [k, v] of file.userMetadata) metadata[k] = v;
    for (const name of file.names) {
      const layout = file.layout(name);
      const t: MtTensor = { name, kind: "flat", shape: [...file.dims(name)], dtype: String(layout.dtype ?? "") };
      if (layout.kind === "struct" && layout.record !== undefined) {
        t.kind = "records";
        t.columns = layout.record.fields.map((f) => f.name);
        t.dtype = "struct";
      } else if (layout.kind === "blob") {
        t.kind = "blobs";
        t.dtype = layout.item?.type === "string" ? "string" : `list<${String(layout.item?.elem?.scalar ?? layout.item?.type ?? "?")}>`;
      }
      tensors.push(t);
    }
  } else {
    for (const [k, v] of file.metadata) metadata[k] = v;
    for (const e of file.tensors) tensors.push({ name: e.name, kind: "raw", shape: [...e.shape], dtype: e.dtype });
  }
  return { format: isMt ? "metatensor" : "safetensors", tensors, metadata };
}

async function mtFlat(name: string): Promise<MtFlat> {
  if (state?.kind !== "mt") throw new Error("no metatensor file open");
  const f = state.file;
  // The declared shape is checked before any byte of the tensor is read.
  const shape = f instanceof MetatensorFile ? f.dims(name) : f.entry(name).shape;
  const n = elementCount([...shape]);
  if (n > ELEMENT_BUDGET) {
    throw new Error(
      `tensor "${name}" has shape [${shape.join(", ")}] = ${n.toLocaleString("en")} elements, ` +
        `more than this viewer draws (${ELEMENT_BUDGET.toLocaleString("en")})`,
    );
  }
  const t = f instanceof MetatensorFile ? await f.flat(name) : await f.tensor(name);
  return { shape: [...t.shape], values: t.toFloat64() };
}

function cell(v: unknown): string {
  if (typeof v === "bigint") return v.toString();
  if (typeof v === "string") return v;
  if (ArrayBuffer.isView(v)) return `[${Array.from(v as unknown as ArrayLike<number>).join(", ")}]`;
  return JSON.stringify(v, (_k, x: unknown) => (typeof x === "bigint" ? x.toString() : ArrayBuffer.isView(x) ? Array.from(x as unknown as ArrayLike<number>) : x)) ?? String(v);
}

async function mtPage(name: string, start: number, count: number): Promise<MtPage> {
  if (state?.kind !== "mt" || !(state.file instanceof MetatensorFile)) throw new Error("no metatensor file open");
  const f = state.file;
  const layout = f.layout(name);
  const pageOf = (total: number) => ({ from: Math.max(0, start), to: Math.min(total, start + count) });
  if (layout.kind === "struct" && layout.record !== undefined) {
    const r = await f.records(name);
    const columns = layout.record.fields.map((x) => x.name);
    const rows: string[][] = [];
    const { from, to } = pageOf(r.count);
    for (let i = from; i < to; i++) {
      const ref = r.at(i);
      rows.push(columns.map((c) => cell(ref.get(c))));
    }
    return { total: r.count, columns, rows };
  }
  if (layout.kind === "blob") {
    const b = await f.blobs(name);
    const rows: string[][] = [];
    const { from, to } = pageOf(b.count);
    for (let i = from; i < to; i++) rows.push([cell(b.at(i))]);
    return { total: b.count, columns: ["value"], rows };
  }
  const t = await f.flat(name);
  const rows: string[][] = [];
  const { from, to } = pageOf(t.count);
  const v = t.toFloat64();
  for (let i = from; i < to; i++) rows.push([String(v[i])]);
  return { total: t.count, columns: ["value"], rows };
}

/**
 * Largest .tgm file read whole: only when it holds a streaming message whose
 * length was never written (total_length 0), which only a scan of the whole
 * file can delimit; the package then scans it in the WebAssembly module's
 * memory (at most 2 GB), which also needs room for decoding. Bytes between
 * or after messages do not need it: the lazy walk searches them in windows.
 */
const WHOLE_FILE_BUDGET = 1024 * 1024 * 1024;

/**
 * Opens a Blob or a URL: the first bytes decide the format. Either format is
 * then read lazily: a metatensor file its header, then each tensor when
 * shown; a .tgm file its message boundaries and metadata, then each object
 * when shown.
 */
async function openInput(input: Blob | string, name: string): Promise<FileIndex> {
  let reader: Reader;
  let lazy: Input;
  if (typeof input === "string") {
    let src: HttpSource;
    try {
      // One Range request for the first 64 KiB: size, range support, format,
      // and the first messages' preambles and layouts, served from it later.
      src = await HttpSource.open(input, { headerGuess: 65536 });
    } catch (e) {
      throw new Error(`cannot fetch ${input}: ${(e as Error).message.replace(/^MT_[A-Z_]+: /, "")}`);
    }
    reader = src;
    lazy = src;
  } else {
    reader = blobReader(input);
    lazy = input;
  }
  const kind = sniff(await reader.read(0, Math.min(16, reader.size)));
  if (kind === "tgm") return openTgm(reader, name);
  if (kind === "safetensors") return openMt(lazy);
  throw new Error(`"${name}" is neither a Tensogram file (no TENSOGRM magic) nor a metatensor/safetensors file`);
}

async function handle(req: Request): Promise<{ value: unknown; transfer: Transferable[] }> {
  switch (req.kind) {
    case "open":
      state = undefined;
      cache.clear();
      cachedBytes = 0;
      return { value: await openInput(req.input, req.name), transfer: [] };
    case "field": {
      const d = await field(req.msg, req.obj);
      const transfer: Transferable[] = [d.values.buffer];
      if (d.coords !== undefined) transfer.push(d.coords.lat.buffer, d.coords.lon.buffer);
      return { value: d, transfer };
    }
    case "point": {
      // One value per frame, decoded here so whole fields do not cross over.
      if (state?.kind !== "tgm") throw new Error("no .tgm file open");
      const st = state;
      const out = new Float64Array(req.frames.length);
      for (const [k, f] of req.frames.entries()) {
        out[k] = (await decodeValues(st, f.msg, f.obj)).values[req.index] ?? NaN;
      }
      return { value: out, transfer: [out.buffer] };
    }
    case "mt-flat": {
      const d = await mtFlat(req.name);
      return { value: d, transfer: [d.values.buffer] };
    }
    case "mt-page":
      return { value: await mtPage(req.name, req.start, req.count), transfer: [] };
  }
}

self.onmessage = (ev: MessageEvent<Request>) => {
  const req = ev.data;
  handle(req).then(
    ({ value, transfer }) => (self as unknown as Worker).postMessage({ id: req.id, ok: true, value } satisfies Reply, transfer),
    (e: unknown) => {
      const error = e instanceof Error ? e.message : String(e);
      (self as unknown as Worker).postMessage({ id: req.id, ok: false, error } satisfies Reply);
    },
  );
};
