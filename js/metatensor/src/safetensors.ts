// The safetensors base layer (spec 06 §2): reading the header with every
// rule in the order of §8.2, and writing a header in the canonical form of
// §3.5 (the same bytes as src/metatensor/safetensors/safetensors_write.cpp).
import { DType, dtypeBits, isDType } from "./dtypes.js";
import { fail, quoted } from "./errors.js";
import { JsonFloat, compareUtf8, isObject, parseStrictJson } from "./json.js";

export const MAX_HEADER_LENGTH = 100_000_000;
export const MAX_RANK = 32;

/** One tensor entry of the header. `begin`/`end` are relative to the data section. */
export interface TensorEntry {
  readonly name: string;
  readonly dtype: DType;
  readonly shape: readonly number[];
  readonly begin: number;
  readonly end: number;
}

export interface SafetensorsHeader {
  /** N, the header length. */
  readonly headerLength: number;
  /** D = 8 + N, where the data section starts. */
  readonly dataOffset: number;
  readonly fileSize: number;
  /** `__metadata__` (empty when absent or null). */
  readonly metadata: ReadonlyMap<string, string>;
  readonly hasMetadata: boolean;
  /** Entries in data order (increasing begin, then end, then name). */
  readonly tensors: readonly TensorEntry[];
  readonly byName: ReadonlyMap<string, TensorEntry>;
}

const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
const utf8Enc = new TextEncoder();

/** Rules 1–2: N from the first 8 bytes. */
export function readHeaderLength(first: Uint8Array, fileSize: number): number {
  if (fileSize < 8 || first.length < 8) fail("ST_HEADER_TOO_SMALL", `file is ${fileSize} bytes, less than 8`);
  const dv = new DataView(first.buffer, first.byteOffset, 8);
  const n = dv.getBigUint64(0, true);
  if (n > BigInt(MAX_HEADER_LENGTH)) fail("ST_HEADER_TOO_LARGE", `header length ${n} exceeds 100000000`);
  const len = Number(n);
  if (len > fileSize - 8) fail("ST_HEADER_LENGTH", `header length ${len} exceeds the ${fileSize - 8} bytes after it`);
  return len;
}

function headerUint(v: unknown): number | undefined {
  if (typeof v === "number" && Number.isInteger(v) && v >= 0 && !Object.is(v, -0)) return v;
  return undefined;
}

/** Rules 3–10 on the header text bytes `[8, 8 + n)`. */
export function parseHeader(text: Uint8Array, fileSize: number): SafetensorsHeader {
  const n = text.length;
  // Rule 3.
  let s: string;
  try {
    s = utf8.decode(text);
  } catch {
    fail("ST_HEADER_UTF8", "invalid UTF-8 in the header");
  }
  if (s.includes("\0")) fail("ST_HEADER_JSON", "NUL byte in the header");
  // Rules 3 and 4.
  const doc = parseStrictJson(s, { syntax: "ST_HEADER_JSON", duplicate: "ST_DUPLICATE_KEY", what: "header", header: true });
  // Rule 5.
  if (!isObject(doc)) fail("ST_HEADER_JSON", "header is not a JSON object");
  const metadata = new Map<string, string>();
  let hasMetadata = false;
  if (Object.prototype.hasOwnProperty.call(doc, "__metadata__")) {
    const md = doc["__metadata__"];
    if (isObject(md)) {
      for (const k of Object.keys(md).sort(compareUtf8)) {
        const v = md[k];
        if (typeof v !== "string") fail("ST_METADATA", `__metadata__ value of ${quoted(k)} is not a string`);
        metadata.set(k, v);
      }
      hasMetadata = true;
    } else if (md !== null) fail("ST_METADATA", "__metadata__ is neither an object nor null");
  }
  // Entries in name order (byte-wise), the order of the C++ rule passes.
  const names = Object.keys(doc).filter((k) => k !== "__metadata__").sort(compareUtf8);
  const raw: Record<string, unknown>[] = [];
  for (const k of names) {
    const v = doc[k];
    if (!isObject(v)) fail("ST_ENTRY", `tensor ${quoted(k)}: entry is not an object`);
    for (const f of Object.keys(v).sort(compareUtf8)) {
      if (f !== "dtype" && f !== "shape" && f !== "data_offsets") fail("ST_ENTRY", `tensor ${quoted(k)}: unknown field ${quoted(f)}`);
    }
    for (const f of ["dtype", "shape", "data_offsets"]) {
      if (!Object.prototype.hasOwnProperty.call(v, f)) fail("ST_ENTRY", `tensor ${quoted(k)}: missing field "${f}"`);
    }
    raw.push(v);
  }
  // Rule 6.
  const dtypes: DType[] = [];
  names.forEach((k, i) => {
    const d = raw[i]!["dtype"];
    if (!isDType(d)) fail("ST_DTYPE", `tensor ${quoted(k)}: unknown dtype ${d instanceof JsonFloat ? d.text : JSON.stringify(d)}`);
    dtypes.push(d);
  });
  // Rule 7 (and the rank limit of §8.4).
  const entries: TensorEntry[] = [];
  names.forEach((k, i) => {
    const sh = raw[i]!["shape"];
    if (!Array.isArray(sh)) fail("ST_ENTRY", `tensor ${quoted(k)}: shape is not an array`);
    if (sh.length > MAX_RANK) fail("MT_LIMIT", `tensor ${quoted(k)}: rank ${sh.length} exceeds 32`);
    const shape = sh.map((d, j) => {
      const u = headerUint(d);
      if (u === undefined) fail("ST_ENTRY", `tensor ${quoted(k)}: shape[${j}] is not an integer in [0, 2^53-1]`);
      return u;
    });
    const o = raw[i]!["data_offsets"];
    if (!Array.isArray(o) || o.length !== 2) fail("ST_ENTRY", `tensor ${quoted(k)}: data_offsets is not an array of two integers`);
    const b = headerUint(o[0]);
    const e = headerUint(o[1]);
    if (b === undefined || e === undefined) fail("ST_ENTRY", `tensor ${quoted(k)}: data_offsets are not integers in [0, 2^53-1]`);
    if (b > e) fail("ST_OFFSETS", `tensor ${quoted(k)}: data_offsets [${b},${e}] begin > end`);
    entries.push({ name: k, dtype: dtypes[i]!, shape, begin: b, end: e });
  });
  // Rule 8 (exact arithmetic with bigint: overflow is ST_OVERFLOW).
  const U64 = (1n << 64n) - 1n;
  for (const t of entries) {
    let count = 1n;
    for (const d of t.shape) {
      count *= BigInt(d);
      if (count > U64) fail("ST_OVERFLOW", `tensor ${quoted(t.name)}: element count overflows 64 bits`);
    }
    const bits = count * BigInt(dtypeBits(t.dtype));
    if (bits > U64) fail("ST_OVERFLOW", `tensor ${quoted(t.name)}: bit size overflows 64 bits`);
    if (bits % 8n !== 0n) fail("ST_SUBBYTE", `tensor ${quoted(t.name)}: ${count} elements of ${t.dtype} are not a whole number of bytes`);
    if (BigInt(t.end - t.begin) !== bits / 8n) {
      fail("ST_SIZE_MISMATCH", `tensor ${quoted(t.name)}: data_offsets span ${t.end - t.begin} bytes, dtype x shape needs ${bits / 8n}`);
    }
  }
  // Rule 9: sorted by (begin, end), ties by name.
  const order = entries.map((e, i) => ({ e, i }));
  order.sort((a, b) => a.e.begin - b.e.begin || a.e.end - b.e.end || a.i - b.i);
  let pos = 0;
  for (const { e } of order) {
    if (e.begin !== pos) {
      fail("ST_OFFSETS", `tensor ${quoted(e.name)}: begins at ${e.begin}${e.begin > pos ? ", leaving a hole after " : ", overlapping data before "}${pos}`);
    }
    pos = e.end;
  }
  // Rule 10.
  const dataSize = fileSize - 8 - n;
  if (pos !== dataSize) fail("ST_INCOMPLETE", `tensors cover ${pos} bytes but the data section has ${dataSize}`);
  const tensors = order.map((x) => x.e);
  return {
    headerLength: n,
    dataOffset: 8 + n,
    fileSize,
    metadata,
    hasMetadata,
    tensors,
    byName: new Map(tensors.map((t) => [t.name, t])),
  };
}

/** One physical tensor to write. */
export interface TensorInput {
  name: string;
  dtype: DType;
  shape: readonly number[];
  data: Uint8Array;
}

export interface SerializeOptions {
  /** Pad 8 + N to a multiple of this (power of two). Default 8. */
  headerAlignment?: number;
  /** Write `__metadata__` even when empty. */
  alwaysWriteMetadata?: boolean;
  /** Keep the given tensor order instead of (alignment desc, name). */
  keepOrder?: boolean;
}

function dtypeAlignForOrder(t: DType): number {
  return t === "C64" ? 4 : Math.max(1, dtypeBits(t) / 8) | 0 || 1;
}

/**
 * The 8-byte prefix and padded header of a safetensors file, and the tensors
 * in data order, as the C++ writer produces them (§3.5).
 */
export function planSafetensors(
  tensors: readonly TensorInput[],
  metadata: ReadonlyMap<string, string> | Record<string, string>,
  options: SerializeOptions = {},
): { head: Uint8Array; order: TensorInput[]; size: number } {
  const a = options.headerAlignment ?? 8;
  if (a <= 0 || (a & (a - 1)) !== 0) fail("MT_INVALID_ARGUMENT", `header_alignment ${a} is not a power of two`);
  const names = new Set<string>();
  for (const t of tensors) {
    const what = `tensor name ${quoted(t.name)}`;
    if (t.name === "__metadata__") fail("MT_INVALID_ARGUMENT", '"__metadata__" cannot be a tensor name (§2)');
    if (names.has(t.name)) fail("MT_INVALID_ARGUMENT", `duplicate ${what}`);
    names.add(t.name);
    if (t.shape.length > MAX_RANK) fail("MT_INVALID_ARGUMENT", `${what}: rank above 32 (§8.4)`);
    let count = 1n;
    for (const d of t.shape) {
      if (!Number.isSafeInteger(d) || d < 0) fail("MT_INVALID_ARGUMENT", `${what}: dimension ${d} is not an integer in [0, 2^53-1]`);
      count *= BigInt(d);
    }
    const bits = count * BigInt(dtypeBits(t.dtype));
    if (bits % 8n !== 0n) fail("MT_INVALID_ARGUMENT", `${what}: not a whole number of bytes (§2 rule 8)`);
    if (BigInt(t.data.byteLength) !== bits / 8n) {
      fail("MT_INVALID_ARGUMENT", `${what}: ${t.data.byteLength} data bytes, dtype x shape needs ${bits / 8n}`);
    }
  }
  const order = [...tensors];
  if (!options.keepOrder) {
    order.sort((x, y) => dtypeAlignForOrder(y.dtype) - dtypeAlignForOrder(x.dtype) || compareUtf8(x.name, y.name));
  }
  const md = metadata instanceof Map ? [...metadata.entries()] : Object.entries(metadata);
  md.sort((x, y) => compareUtf8(x[0], y[0]));
  let h = "{";
  let first = true;
  if (md.length > 0 || options.alwaysWriteMetadata) {
    h += '"__metadata__":{';
    h += md.map(([k, v]) => JSON.stringify(k) + ":" + JSON.stringify(v)).join(",");
    h += "}";
    first = false;
  }
  let pos = 0;
  for (const t of order) {
    if (!first) h += ",";
    first = false;
    const b = pos;
    pos += t.data.byteLength;
    if (pos > Number.MAX_SAFE_INTEGER) fail("ST_OVERFLOW", "data section exceeds 2^53-1 bytes (§2 rule 7)");
    h += `${JSON.stringify(t.name)}:{"dtype":"${t.dtype}","shape":[${t.shape.join(",")}],"data_offsets":[${b},${pos}]}`;
  }
  h += "}";
  const text = utf8Enc.encode(h);
  // §3.4: pad with trailing spaces so that 8 + N is a multiple of a.
  const pad = (a - ((8 + text.length) % a)) % a;
  const n = text.length + pad;
  if (n > MAX_HEADER_LENGTH) fail("MT_INVALID_ARGUMENT", "header exceeds 100000000 bytes (§2 rule 2)");
  const head = new Uint8Array(8 + n);
  new DataView(head.buffer).setBigUint64(0, BigInt(n), true);
  head.set(text, 8);
  head.fill(0x20, 8 + text.length);
  return { head, order, size: head.length + pos };
}

/** A whole safetensors file in one buffer. */
export function serializeSafetensors(
  tensors: readonly TensorInput[],
  metadata: ReadonlyMap<string, string> | Record<string, string> = {},
  options: SerializeOptions = {},
): Uint8Array {
  const p = planSafetensors(tensors, metadata, options);
  const out = new Uint8Array(p.size);
  out.set(p.head, 0);
  let at = p.head.length;
  for (const t of p.order) {
    out.set(t.data, at);
    at += t.data.byteLength;
  }
  return out;
}
