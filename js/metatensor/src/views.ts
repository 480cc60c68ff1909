// Typed views over tensor bytes (spec 06 §9): TypedArrays for flat tensors
// (zero-copy when aligned), record accessors over a DataView, strings via
// TextDecoder, List blobs as typed views, and the §8.3 logical value.
import { AnyTypedArray, DType, bf16ToNumber, decodeFloats, dtypeBits, f16ToNumber, f8ToNumber, isSubByte, subByteToNumber, typedArrayCtor } from "./dtypes.js";
import { MetatensorError, fail } from "./errors.js";
import { RecordLayout, TypeLayout } from "./schema.js";

const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/** A scalar of the logical value: 64-bit integers are bigint, C64 a [re, im] pair. */
export type Scalar = number | bigint | boolean | [number, number];
/** The §8.3 logical value of one element (nested arrays for dims). */
export type LogicalValue = Scalar | string | LogicalValue[] | { [field: string]: LogicalValue };

/** A typed array over `bytes`, zero-copy when `bytes` is aligned to the element size (else a copy). */
export function typedView(dtype: DType, bytes: Uint8Array): { data: AnyTypedArray; copied: boolean } {
  const C = typedArrayCtor(dtype);
  const size = C.BYTES_PER_ELEMENT;
  const n = bytes.byteLength / size;
  if (!Number.isInteger(n)) fail("MT_INVALID_ARGUMENT", `${bytes.byteLength} bytes are not whole ${dtype} elements`);
  if (bytes.byteOffset % size === 0) return { data: new C(bytes.buffer, bytes.byteOffset, n), copied: false };
  const copy = new Uint8Array(bytes.byteLength);
  copy.set(bytes);
  return { data: new C(copy.buffer, 0, n), copied: true };
}

function readScalar(dv: DataView, p: number, t: DType): Scalar {
  switch (t) {
    case "BOOL": {
      const b = dv.getUint8(p);
      if (b > 1) throw new MetatensorError("MT_BOOL", `BOOL byte is ${b}, not 0 or 1`);
      return b === 1;
    }
    case "U8": return dv.getUint8(p);
    case "I8": return dv.getInt8(p);
    case "U16": return dv.getUint16(p, true);
    case "I16": return dv.getInt16(p, true);
    case "U32": return dv.getUint32(p, true);
    case "I32": return dv.getInt32(p, true);
    case "U64": return dv.getBigUint64(p, true);
    case "I64": return dv.getBigInt64(p, true);
    case "F16": return f16ToNumber(dv.getUint16(p, true));
    case "BF16": return bf16ToNumber(dv.getUint16(p, true));
    case "F32": return dv.getFloat32(p, true);
    case "F64": return dv.getFloat64(p, true);
    case "C64": return [dv.getFloat32(p, true), dv.getFloat32(p + 4, true)];
    default: return f8ToNumber(t, dv.getUint8(p));
  }
}

function readRef(dv: DataView, p: number): { offset: number; length: number } {
  // Structural validation bounded every BlobRef by the heap size (< 2^53).
  return { offset: Number(dv.getBigUint64(p, true)), length: Number(dv.getBigUint64(p + 8, true)) };
}

function product(a: readonly number[]): number {
  return a.reduce((x, y) => x * y, 1);
}

/** Row-major nesting of a flat list by `shape`. */
export function nest<T>(flat: readonly T[], shape: readonly number[]): unknown {
  if (shape.length === 0) return flat[0];
  const build = (d: number, at: number): unknown[] => {
    const n = shape[d]!;
    const stride = product(shape.slice(d + 1));
    const out: unknown[] = [];
    for (let i = 0; i < n; i++) out.push(d + 1 === shape.length ? flat[at + i] : build(d + 1, at + i * stride));
    return out;
  };
  return build(0, 0);
}

/** Where records and blobs live: the bytes of the primary tensor and of the heap. */
export interface Region {
  dv: DataView;
  heap: Uint8Array;
}

/** The value of a type at byte `p` of `r.dv`: a scalar, a typed view, a string, a record... */
function valueAt(r: Region, t: TypeLayout, p: number, logical: boolean): unknown {
  if (t.shape.length > 0) {
    const n = product(t.shape);
    const esize = t.size / n;
    const elem: TypeLayout = { ...t, shape: [], size: esize };
    if (!logical && t.type === "scalar") {
      const bytes = new Uint8Array(r.dv.buffer, r.dv.byteOffset + p, t.size);
      return typedView(t.scalar!, bytes).data;
    }
    const flat: unknown[] = [];
    for (let i = 0; i < n; i++) flat.push(valueAt(r, elem, p + i * esize, logical));
    return logical ? nest(flat, t.shape) : flat;
  }
  switch (t.type) {
    case "scalar": return readScalar(r.dv, p, t.scalar!);
    case "record": return logical ? recordValue(r, t.record!, p) : new RecordRef(r, t.record!, p);
    case "string": {
      const { offset, length } = readRef(r.dv, p);
      return decodeString(r.heap.subarray(offset, offset + length));
    }
    case "list": {
      const { offset, length } = readRef(r.dv, p);
      return listValue(r.heap.subarray(offset, offset + length), t.elem!, logical);
    }
  }
}

export function decodeString(bytes: Uint8Array): string {
  try {
    return utf8.decode(bytes);
  } catch {
    throw new MetatensorError("MT_UTF8", "invalid UTF-8 in a string");
  }
}

/** A List blob: a typed view for scalar elements, else an array of element values. */
function listValue(blob: Uint8Array, e: TypeLayout, logical: boolean): unknown {
  const count = blob.byteLength / e.size;
  if (!logical && e.type === "scalar") return typedView(e.scalar!, blob).data;
  const dv = new DataView(blob.buffer, blob.byteOffset, blob.byteLength);
  const region: Region = { dv, heap: new Uint8Array(0) };
  const out: unknown[] = [];
  for (let i = 0; i < count; i++) out.push(valueAt(region, e, i * e.size, logical));
  return out;
}

function recordValue(r: Region, rec: RecordLayout, p: number): LogicalValue {
  if (rec.tuple) return rec.fields.map((f) => valueAt(r, f.type, p + f.offset, true) as LogicalValue);
  const out: Record<string, LogicalValue> = {};
  for (const f of rec.fields) {
    Object.defineProperty(out, f.name, { value: valueAt(r, f.type, p + f.offset, true), enumerable: true, writable: true, configurable: true });
  }
  return out;
}

/**
 * One record: fields by name or dotted path ("pos.x", "items.0" for tuple
 * elements). Scalars come back as numbers (bigint for 64-bit, decoded
 * floats for F16/BF16/F8), fixed arrays of scalars as typed views, nested
 * records as RecordRefs, Strings as strings, Lists as typed views.
 */
export class RecordRef {
  constructor(private readonly region: Region, readonly layout: RecordLayout, readonly byteOffset: number) {}

  /** Field names in layout order. */
  get fields(): string[] {
    return this.layout.fields.map((f) => f.name);
  }

  private locate(path: string | readonly string[]): { t: TypeLayout; p: number } {
    const parts = typeof path === "string" ? path.split(".") : path;
    let rec = this.layout;
    let p = this.byteOffset;
    for (let i = 0; i < parts.length; i++) {
      const f = rec.fields.find((x) => x.name === parts[i]);
      if (!f) throw new MetatensorError("MT_NOT_FOUND", `no field ${JSON.stringify(parts.slice(0, i + 1).join("."))}`);
      p += f.offset;
      if (i === parts.length - 1) return { t: f.type, p };
      if (f.type.type !== "record" || f.type.shape.length > 0) {
        throw new MetatensorError("MT_NOT_FOUND", `field ${JSON.stringify(parts.slice(0, i + 1).join("."))} is not a nested record`);
      }
      rec = f.type.record!;
    }
    return { t: { type: "record", record: rec, shape: [], size: rec.size, align: rec.align, pointer: "" }, p };
  }

  /** A field's value (see the class comment). */
  get(path: string | readonly string[]): unknown {
    const { t, p } = this.locate(path);
    return valueAt(this.region, t, p, false);
  }

  /** Raw bits of a scalar field (F16/BF16 as uint16, F8 as uint8...). */
  raw(path: string | readonly string[]): number | bigint {
    const { t, p } = this.locate(path);
    const bits = dtypeBits(t.scalar ?? "U8");
    if (t.type !== "scalar") fail("MT_INVALID_ARGUMENT", "raw() needs a scalar field");
    const dv = this.region.dv;
    return bits === 8 ? dv.getUint8(p) : bits === 16 ? dv.getUint16(p, true) : bits === 32 ? dv.getUint32(p, true) : dv.getBigUint64(p, true);
  }

  /** The record's §8.3 logical value (an object; a tuple gives an array). */
  value(): LogicalValue {
    return recordValue(this.region, this.layout, this.byteOffset);
  }
  toJSON(): unknown {
    return this.value();
  }
}

/** Common part of the tensor views. */
interface ViewBase {
  readonly name: string;
  /** Logical dims (§5.1). */
  readonly shape: readonly number[];
  /** Number of elements (product of shape). */
  readonly count: number;
}

/** A flat tensor: `data` is a TypedArray over the file bytes when aligned. */
export class FlatTensor implements ViewBase {
  readonly kind = "flat" as const;
  readonly count: number;
  readonly data: AnyTypedArray;
  /** True when the bytes were copied to get an aligned typed array. */
  readonly copied: boolean;
  constructor(readonly name: string, readonly dtype: DType, readonly shape: readonly number[], readonly bytes: Uint8Array) {
    this.count = product(shape);
    const v = typedView(dtype, bytes);
    this.data = v.data;
    this.copied = v.copied;
  }
  /** Element `i` (row-major) as a logical scalar. */
  at(i: number): Scalar {
    if (!(i >= 0 && i < this.count)) throw new MetatensorError("MT_BAD_RANGE", `element ${i} of ${this.count}`);
    if (isSubByte(this.dtype)) return subByteToNumber(this.dtype, this.bytes, i);
    const size = dtypeBits(this.dtype) / 8;
    return readScalar(new DataView(this.bytes.buffer, this.bytes.byteOffset, this.bytes.byteLength), i * size, this.dtype);
  }
  /** Decoded values of a float format without a typed array (F16, BF16, F8_*, F4, F6_*). */
  toFloat64(): Float64Array {
    if (this.dtype === "F16" || this.dtype === "BF16") return decodeFloats(this.dtype, this.data as Uint16Array, this.count);
    if (this.dtype.startsWith("F8") || isSubByte(this.dtype)) return decodeFloats(this.dtype, this.bytes, this.count);
    return Float64Array.from(this.data as ArrayLike<number>, Number);
  }
  /** The §8.3 logical value: nested arrays. */
  value(): LogicalValue {
    const flat: Scalar[] = [];
    for (let i = 0; i < this.count; i++) flat.push(this.at(i));
    return nest(flat, this.shape) as LogicalValue;
  }
}

/** A struct tensor: records of `record.size` bytes. */
export class RecordTensor implements ViewBase {
  readonly kind = "struct" as const;
  readonly count: number;
  private readonly region: Region;
  constructor(readonly name: string, readonly record: RecordLayout, readonly shape: readonly number[], readonly bytes: Uint8Array, readonly heap: Uint8Array) {
    this.count = product(shape);
    this.region = { dv: new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength), heap };
  }
  /** The record at row-major index `i`, or at the index tuple `i`. */
  at(i: number | readonly number[]): RecordRef {
    const k = typeof i === "number" ? i : flatIndex(this.shape, i);
    if (!(k >= 0 && k < this.count)) throw new MetatensorError("MT_BAD_RANGE", `record ${k} of ${this.count}`);
    return new RecordRef(this.region, this.record, k * this.record.size);
  }
  /** Every record, in row-major order. */
  *[Symbol.iterator](): IterableIterator<RecordRef> {
    for (let i = 0; i < this.count; i++) yield this.at(i);
  }
  /** One field across all records (`field("vel")[i]`). */
  field(path: string): unknown[] {
    const out: unknown[] = [];
    for (let i = 0; i < this.count; i++) out.push(this.at(i).get(path));
    return out;
  }
  value(): LogicalValue {
    const flat: LogicalValue[] = [];
    for (let i = 0; i < this.count; i++) flat.push(this.at(i).value());
    return nest(flat, this.shape) as LogicalValue;
  }
}

/** A blob tensor: one String or List per element. */
export class BlobTensor implements ViewBase {
  readonly kind = "blob" as const;
  readonly count: number;
  private readonly region: Region;
  constructor(readonly name: string, readonly item: TypeLayout, readonly shape: readonly number[], readonly index: Uint8Array, readonly heap: Uint8Array) {
    this.count = product(shape);
    this.region = { dv: new DataView(index.buffer, index.byteOffset, index.byteLength), heap };
  }
  /** Element `i`: a string, or for a List a typed view (scalar elements) or an array of records/arrays. */
  at(i: number | readonly number[]): unknown {
    const k = typeof i === "number" ? i : flatIndex(this.shape, i);
    if (!(k >= 0 && k < this.count)) throw new MetatensorError("MT_BAD_RANGE", `element ${k} of ${this.count}`);
    return valueAt(this.region, this.item, k * 16, false);
  }
  /** The raw bytes of element `i` inside the heap (zero-copy). */
  bytesAt(i: number): Uint8Array {
    const { offset, length } = readRef(this.region.dv, i * 16);
    return this.heap.subarray(offset, offset + length);
  }
  /** All elements as a flat array (ragged rows as typed views, strings as strings). */
  toArray(): unknown[] {
    const out: unknown[] = [];
    for (let i = 0; i < this.count; i++) out.push(this.at(i));
    return out;
  }
  value(): LogicalValue {
    const flat: LogicalValue[] = [];
    for (let i = 0; i < this.count; i++) flat.push(valueAt(this.region, this.item, i * 16, true) as LogicalValue);
    return nest(flat, this.shape) as LogicalValue;
  }
}

export type TensorView = FlatTensor | RecordTensor | BlobTensor;

function flatIndex(shape: readonly number[], idx: readonly number[]): number {
  if (idx.length !== shape.length) throw new MetatensorError("MT_BAD_RANGE", `index of rank ${idx.length} for a tensor of rank ${shape.length}`);
  let k = 0;
  for (let d = 0; d < shape.length; d++) {
    const i = idx[d]!;
    if (!(i >= 0 && i < shape[d]!)) throw new MetatensorError("MT_BAD_RANGE", `index ${i} out of dimension ${d} of size ${shape[d]}`);
    k = k * shape[d]! + i;
  }
  return k;
}
