// The decoding worker: every byte of a file is parsed here, never on the
// page's thread, so a slow decode or a hostile file cannot freeze the tab
// (the page also restarts this worker when a request runs too long).
// .tgm files go through @tensogram/tensogram (our C++ core as WebAssembly);
// metatensor/safetensors files through @tensogram/metatensor (TypeScript).

import { init, scan, decodeMetadata, decodeObject, type GlobalMetadata } from "@tensogram/tensogram";
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
  type Reply,
  type Request,
} from "./protocol.js";
import { isCoordinateName, objectName } from "./grouping.js";

interface TgmState {
  kind: "tgm";
  bytes: Uint8Array;
  positions: { offset: number; length: number }[];
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

async function openTgm(bytes: Uint8Array): Promise<FileIndex> {
  // The package finds its .wasm next to itself (new URL(..., import.meta.url)),
  // which Vite copies into the build as an asset.
  await init();
  let positions;
  try {
    positions = scan(bytes);
  } catch (e) {
    throw new Error(`not a readable Tensogram file: ${(e as Error).message}`);
  }
  if (positions.length === 0) {
    throw new Error("no complete Tensogram message found: the file is truncated or corrupted");
  }
  const fields: FieldEntry[] = [];
  const warnings: string[] = [];
  positions.forEach((p, msg) => {
    let md: GlobalMetadata;
    try {
      md = decodeMetadata(bytes.subarray(p.offset, p.offset + p.length));
    } catch (e) {
      warnings.push(`message ${msg}: ${(e as Error).message}`);
      return;
    }
    (md.base ?? []).forEach((entry, obj) => {
      const reserved = (entry["_reserved_"] ?? {}) as Record<string, unknown>;
      const tensor = (reserved["tensor"] ?? {}) as Record<string, unknown>;
      const shape = Array.isArray(tensor["shape"]) ? (tensor["shape"] as number[]).map(Number) : [];
      const meta = plain(entry);
      const name = objectName(meta, obj);
      fields.push({
        msg,
        obj,
        name,
        shape,
        dtype: typeof tensor["dtype"] === "string" ? tensor["dtype"] : "?",
        meta,
        coordinate: isCoordinateName(name),
      });
    });
  });
  if (fields.length === 0 && warnings.length > 0) throw new Error(warnings.join("; "));
  state = { kind: "tgm", bytes, positions, fields };
  return { format: "tgm", messages: positions.length, fields, warnings };
}

function toFloat32(data: ArrayLike<number> | ArrayLike<bigint>): Float32Array {
  const out = new Float32Array(data.length);
  for (let i = 0; i < data.length; i++) out[i] = Number(data[i]);
  return out;
}

function decodeValues(st: TgmState, msg: number, obj: number): { values: Float32Array; shape: number[] } {
  const entry = st.fields.find((f) => f.msg === msg && f.obj === obj);
  if (entry === undefined) throw new Error(`no object ${obj} in message ${msg}`);
  const n = elementCount(entry.shape);
  if (n > ELEMENT_BUDGET) {
    throw new Error(
      `object "${entry.name}" declares shape [${entry.shape.join(", ")}] = ${n.toLocaleString("en")} elements, ` +
        `more than this viewer decodes (${ELEMENT_BUDGET.toLocaleString("en")})`,
    );
  }
  const p = st.positions[msg]!;
  // Hashes are checked (xxh3 is cheap): a corrupted payload is an error, not a picture.
  const decoded = decodeObject(st.bytes.subarray(p.offset, p.offset + p.length), obj, { verifyHash: true });
  try {
    const o = decoded.objects[0]!;
    const data = o.dataView();
    if (typeof (data as { real?: unknown }).real !== "undefined") {
      throw new Error(`object "${entry.name}" is complex (${entry.dtype}): not drawable`);
    }
    return { values: toFloat32(data as unknown as ArrayLike<number>), shape: [...o.descriptor.shape].map(Number) };
  } finally {
    decoded.close();
  }
}

/** Latitude/longitude objects of the same message, when there are any. */
function coordsOf(st: TgmState, msg: number): CoordArrays | undefined {
  const inMsg = st.fields.filter((f) => f.msg === msg);
  const find = (names: string[]) => inMsg.find((f) => names.includes(f.name.toLowerCase()));
  const la = find(["latitude", "lat", "grid_latitude"]);
  const lo = find(["longitude", "lon", "grid_longitude"]);
  if (la === undefined || lo === undefined) return undefined;
  return {
    lat: Float64Array.from(decodeValues(st, msg, la.obj).values),
    lon: Float64Array.from(decodeValues(st, msg, lo.obj).values),
  };
}

function field(msg: number, obj: number): FieldData {
  if (state?.kind !== "tgm") throw new Error("no .tgm file open");
  // The decoded descriptor's shape: the metadata may not carry it.
  const { values, shape } = decodeValues(state, msg, obj);
  const coords = coordsOf(state, msg);
  const out: FieldData = { shape, values };
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
 * Largest .tgm file read whole (bytes): scan() copies it into the WebAssembly
 * module's memory (at most 2 GB), which also needs room for decoding.
 */
const WHOLE_FILE_BUDGET = 1024 * 1024 * 1024;

/**
 * Opens a Blob or a URL: the first bytes decide the format. A metatensor file
 * is then read lazily (its header, then each tensor when shown); a .tgm file
 * is read whole, for now.
 */
async function openInput(input: Blob | string, name: string): Promise<FileIndex> {
  let size: number;
  let head: Uint8Array;
  let whole: () => Promise<Uint8Array>;
  let lazy: Input;
  if (typeof input === "string") {
    let src: HttpSource;
    try {
      src = await HttpSource.open(input, { headerGuess: 65536 });
    } catch (e) {
      throw new Error(`cannot fetch ${input}: ${(e as Error).message.replace(/^MT_[A-Z_]+: /, "")}`);
    }
    size = src.size;
    head = await src.read(0, Math.min(16, size));
    whole = () => src.read(0, size);
    lazy = src;
  } else {
    size = input.size;
    head = new Uint8Array(await input.slice(0, 16).arrayBuffer());
    whole = async () => new Uint8Array(await input.arrayBuffer());
    lazy = input;
  }
  const kind = sniff(head);
  if (kind === "tgm") {
    if (size > WHOLE_FILE_BUDGET) {
      throw new Error(`${name} is ${(size / 2 ** 20).toFixed(0)} MiB: larger than this viewer reads in one piece (1 GiB)`);
    }
    return openTgm(await whole());
  }
  if (kind === "safetensors") return openMt(lazy);
  throw new Error(`"${name}" is neither a Tensogram file (no TENSOGRM magic) nor a metatensor/safetensors file`);
}

async function handle(req: Request): Promise<{ value: unknown; transfer: Transferable[] }> {
  switch (req.kind) {
    case "open":
      state = undefined;
      return { value: await openInput(req.input, req.name), transfer: [] };
    case "field": {
      const d = field(req.msg, req.obj);
      const transfer: Transferable[] = [d.values.buffer];
      if (d.coords !== undefined) transfer.push(d.coords.lat.buffer, d.coords.lon.buffer);
      return { value: d, transfer };
    }
    case "point": {
      // One value per frame, decoded here so whole fields do not cross over.
      if (state?.kind !== "tgm") throw new Error("no .tgm file open");
      const st = state;
      const out = new Float64Array(req.frames.length);
      req.frames.forEach((f, k) => {
        out[k] = decodeValues(st, f.msg, f.obj).values[req.index] ?? NaN;
      });
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
