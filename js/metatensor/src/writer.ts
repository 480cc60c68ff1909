// Writing metatensor files in the canonical form of spec 06 §3.5, byte for
// byte as the C++ writer (src/metatensor/writer/{file_builder,
// canonical_form,element_encoding}.cpp and safetensors_write.cpp): physical
// tensors ordered by decreasing R(t) then name, padding tensors only where
// §6.6 needs them, heaps filled in record and slot order with List blobs
// aligned, `__metadata__` first with keys sorted, header padded with spaces
// to the largest R(t).
import { AnyTypedArray, dtypeBits, isSubByte, typedArrayCtor } from "./dtypes.js";
import { MetatensorError, fail, quoted } from "./errors.js";
import { blobSlots } from "./file.js";
import { compareUtf8, dumpJson, hasOwn, isObject } from "./json.js";
import { indexPointer, tok } from "./pointer.js";
import { normalizeBuilderSchema } from "./builder.js";
import { TensorInput, planSafetensors } from "./safetensors.js";
import { CompiledSchema, RecordLayout, TensorLayout, TypeLayout, compileSchema, heapName, heapPlacement, layoutTableJson, primaryDtype, primaryPlacement, trailingDim } from "./schema.js";
import { packSubByte, writeScalar } from "./encode.js";

const utf8Enc = new TextEncoder();
const utf8Dec = new TextDecoder("utf-8", { fatal: true });
const MAX_SAFE = Number.MAX_SAFE_INTEGER;

export interface WriterOptions {
  /** File alignment A (§3.1): a power of two, 16..65536. Default 64. */
  alignment?: number;
  /** User `__metadata__` keys (not starting with "metatensor."). */
  metadata?: Record<string, string> | ReadonlyMap<string, string>;
}

interface Values {
  layout: TensorLayout;
  dims: number[];
  count: number;
  data: Uint8Array; // primary bytes (BlobRefs still zero)
  slots: { offset: number; type: TypeLayout }[];
  blobs: Uint8Array[]; // count * slots.length, row-major then slot order
}

function isTyped(v: unknown): v is AnyTypedArray {
  return ArrayBuffer.isView(v) && !(v instanceof DataView);
}
function asArray(v: unknown): unknown[] | undefined {
  if (Array.isArray(v)) return v;
  if (isTyped(v)) return Array.from(v as ArrayLike<unknown>);
  return undefined;
}
function kindOf(v: unknown): string {
  return v === null ? "null" : Array.isArray(v) ? "array" : typeof v;
}

/** Row-major elements of a nested array of rank `rank`, checking it is not ragged [MT_SHAPE]. */
function flatten(value: unknown, rank: number, where: string): { dims: number[]; elements: unknown[] } {
  const dims: number[] = [];
  let cur: unknown = value;
  for (let i = 0; i < rank; i++) {
    const a = asArray(cur);
    if (!a) fail("MT_VALUE", `${where}: expected an array (dimension ${i}), got ${kindOf(cur)}`);
    dims.push(a.length);
    cur = a[0];
    if (a.length === 0) {
      for (let j = i + 1; j < rank; j++) dims.push(0);
      break;
    }
  }
  const elements: unknown[] = [];
  const walk = (v: unknown, level: number, ptr: string) => {
    if (level === rank) {
      elements.push(v);
      return;
    }
    const a = asArray(v);
    if (!a) fail("MT_VALUE", `${ptr}: expected an array (dimension ${level})`);
    if (a.length !== dims[level]) fail("MT_SHAPE", `${ptr}: ${a.length} items, dimension ${level} has ${dims[level]} (ragged arrays are not tensors)`);
    a.forEach((x, i) => walk(x, level + 1, ptr + tok(i)));
  };
  walk(value, 0, where);
  return { dims, elements };
}

/** Collects the logical tensors of one file and writes it (canonical form, §3.5). */
export class MetatensorWriter {
  readonly schema: CompiledSchema;
  readonly alignment: number;
  readonly metadata: Map<string, string>;
  private readonly values = new Map<string, Values>();

  constructor(schema: CompiledSchema | Record<string, unknown>, options: WriterOptions = {}) {
    this.schema = schema instanceof CompiledSchema ? schema : compileSchema(normalizeSchema(schema));
    const a = options.alignment ?? 64;
    if (!(Number.isInteger(a) && a >= 16 && a <= 65536 && (a & (a - 1)) === 0)) {
      fail("MT_ALIGNMENT_VALUE", `alignment ${a} is not a power of two from 16 to 65536`);
    }
    this.alignment = a;
    this.metadata = new Map(options.metadata instanceof Map ? options.metadata : Object.entries(options.metadata ?? {}));
    for (const k of this.metadata.keys()) {
      if (k.startsWith("metatensor.")) fail("MT_UNKNOWN_KEY", `user metadata key ${quoted(k)} starts with "metatensor." (reserved, §3.1)`);
    }
  }

  private layout(name: string): TensorLayout {
    const l = this.schema.find(name);
    if (!l) fail("MT_TENSOR_SET", `${quoted(name)} is not a root property of the schema`);
    return l;
  }

  private begin(name: string, dims: readonly number[]): Values {
    const l = this.layout(name);
    const what = `tensor ${quoted(name)}`;
    if (dims.length !== l.dims.length) fail("MT_SHAPE", `${what}: rank ${dims.length}, the schema needs ${l.dims.length}`);
    dims.forEach((d, i) => {
      const b = l.dims[i]!;
      if (!Number.isSafeInteger(d) || d < 0) fail("ST_OVERFLOW", `${what}: dimension above 2^53-1`);
      if (d < b.min || (b.max !== undefined && d > b.max)) fail("MT_SHAPE", `${what}: dimension ${i} is ${d}, the schema allows ${b.min}..${b.max ?? "unbounded"}`);
    });
    const count = dims.reduce((x, y) => x * y, 1);
    let size: number;
    if (l.kind === "flat") {
      const bits = count * dtypeBits(l.dtype!);
      if (bits % 8 !== 0) fail("ST_SUBBYTE", `${what}: ${count} elements of ${l.dtype} are not a whole number of bytes`);
      size = bits / 8;
    } else size = count * trailingDim(l)!;
    if (size > MAX_SAFE) fail("ST_OVERFLOW", `${what}: more than 2^53-1 bytes`);
    const slots = l.kind === "blob" ? [{ offset: 0, type: { ...l.item!, shape: [], size: 16 } }] : l.kind === "struct" ? blobSlots(l.record!.fields) : [];
    const v: Values = { layout: l, dims: [...dims], count, data: new Uint8Array(size), slots, blobs: new Array(count * slots.length).fill(new Uint8Array(0)) };
    this.values.set(name, v);
    return v;
  }

  /**
   * Any kind of tensor from its logical value (§8.3): nested arrays (or
   * typed arrays) for the dims, records as objects, tuples as arrays,
   * strings, Lists as arrays or typed arrays, C64 as [re, im], 64-bit
   * integers as bigint or safe numbers. Errors: MT_VALUE, MT_SHAPE, MT_UTF8.
   */
  set(name: string, value: unknown): this {
    const l = this.layout(name);
    const where = tok(name);
    if (l.kind === "flat" && l.dims.length === 1 && isTyped(value) && !isSubByte(l.dtype!)) {
      return this.setFlat(name, [value.length], value);
    }
    const { dims, elements } = flatten(value, l.dims.length, where);
    const v = this.begin(name, dims);
    const dv = new DataView(v.data.buffer);
    if (l.kind === "flat") {
      if (isSubByte(l.dtype!)) v.data.set(packSubByte(l.dtype!, elements, where));
      else {
        const size = dtypeBits(l.dtype!) / 8;
        elements.forEach((e, i) => writeScalar(dv, i * size, l.dtype!, e, where + indexPointer(dims, i)));
      }
      return this;
    }
    const t: TypeLayout = l.kind === "struct" ? { type: "record", record: l.record!, shape: [], size: l.record!.size, align: l.record!.align, pointer: "" } : { ...l.item!, shape: [], size: 16 };
    elements.forEach((e, i) => {
      const sink = { blobs: v.blobs, next: i * v.slots.length };
      encodeType(t, e, dv, i * t.size, where + indexPointer(dims, i), sink);
    });
    return this;
  }

  /**
   * A flat tensor from element data: a TypedArray of the dtype's view type
   * (raw bits for F16/BF16/F8: Uint16Array/Uint8Array; C64: Float32Array of
   * pairs) or the little-endian bytes (sub-byte types packed LSB first).
   */
  setFlat(name: string, dims: readonly number[], data: AnyTypedArray | Uint8Array): this {
    const l = this.layout(name);
    if (l.kind !== "flat") fail("MT_INVALID_ARGUMENT", `${quoted(name)} is a ${l.kind} tensor, not flat`);
    const v = this.begin(name, dims);
    const bytes = new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
    const C = typedArrayCtor(l.dtype!);
    if (!(data instanceof Uint8Array) && !(data instanceof C)) {
      fail("MT_INVALID_ARGUMENT", `tensor ${quoted(name)}: a ${data.constructor.name} cannot carry ${l.dtype} elements`);
    }
    if (bytes.byteLength !== v.data.byteLength) fail("MT_SHAPE", `tensor ${quoted(name)}: ${bytes.byteLength} data bytes, dims x dtype need ${v.data.byteLength}`);
    if (l.dtype === "BOOL") {
      const k = bytes.findIndex((b) => b > 1);
      if (k >= 0) fail("MT_BOOL", `tensor ${quoted(name)}: element ${k} is ${bytes[k]}, neither 0 nor 1`);
    }
    v.data.set(bytes);
    return this;
  }

  /** Removes a tensor set earlier. */
  delete(name: string): boolean {
    return this.values.delete(name);
  }
  has(name: string): boolean {
    return this.values.has(name);
  }

  /** The physical tensors and metadata of the canonical file (§3.5, §6.6). */
  private prepare(): { inputs: TensorInput[]; metadata: Map<string, string>; rMax: number } {
    for (const name of [...this.schema.required].sort(compareUtf8)) {
      if (!this.values.has(name)) fail("MT_TENSOR_SET", `required tensor ${quoted(name)} has not been set (§4.6)`);
    }
    const a = this.alignment;
    interface Phys extends TensorInput {
      placement: number;
    }
    const phys: Phys[] = [];
    const present = [...this.values.keys()].sort(compareUtf8);
    for (const name of present) {
      const v = this.values.get(name)!;
      const l = v.layout;
      const shape = [...v.dims];
      const trailing = trailingDim(l);
      if (trailing !== undefined) shape.push(trailing);
      let data = v.data;
      if (l.hasHeap) {
        data = new Uint8Array(v.data);
        const heap = buildHeap(v, data, name);
        phys.push({ name, dtype: primaryDtype(l), shape, data, placement: primaryPlacement(l, a) });
        phys.push({ name: heapName(l), dtype: "U8", shape: [heap.byteLength], data: heap, placement: heapPlacement(l, a) });
      } else phys.push({ name, dtype: primaryDtype(l), shape, data, placement: primaryPlacement(l, a) });
    }
    phys.sort((x, y) => y.placement - x.placement || compareUtf8(x.name, y.name));
    const rMax = Math.max(a, ...phys.map((t) => t.placement));
    const inputs: TensorInput[] = [];
    let cursor = 0;
    let pads = 0;
    for (const t of phys) {
      if (t.data.byteLength > 0 && cursor % t.placement !== 0) {
        const pad = Math.ceil(cursor / t.placement) * t.placement - cursor;
        inputs.push({ name: `__pad__${pads++}`, dtype: "U8", shape: [pad], data: new Uint8Array(pad) });
        cursor += pad;
      }
      inputs.push({ name: t.name, dtype: t.dtype, shape: t.shape, data: t.data });
      if (t.data.byteLength > MAX_SAFE - cursor) fail("ST_OVERFLOW", "data section exceeds 2^53-1 bytes");
      cursor += t.data.byteLength;
    }
    const metadata = new Map(this.metadata);
    metadata.set("metatensor.alignment", String(a));
    metadata.set("metatensor.endianness", "little");
    metadata.set("metatensor.layout", dumpJson(layoutTableJson(this.schema, present, a)));
    metadata.set("metatensor.schema", dumpJson(this.schema.document));
    metadata.set("metatensor.version", "1");
    return { inputs, metadata, rMax };
  }

  /** The canonical file image. */
  serialize(): Uint8Array {
    const p = this.prepare();
    const plan = planSafetensors(p.inputs, p.metadata, { headerAlignment: p.rMax, alwaysWriteMetadata: true, keepOrder: true });
    const out = new Uint8Array(plan.size);
    out.set(plan.head, 0);
    let at = plan.head.length;
    for (const t of plan.order) {
      out.set(t.data, at);
      at += t.data.byteLength;
    }
    return out;
  }

  /** The file as chunks (header, then each tensor's bytes), for streaming writes without one big copy. */
  chunks(): Uint8Array[] {
    const p = this.prepare();
    const plan = planSafetensors(p.inputs, p.metadata, { headerAlignment: p.rMax, alwaysWriteMetadata: true, keepOrder: true });
    return [plan.head, ...plan.order.map((t) => t.data)];
  }
}

// §6.4: blobs appended in record order and slot order, List blobs aligned
// to align(E), empty blobs left as (0, 0).
function buildHeap(v: Values, primary: Uint8Array, name: string): Uint8Array {
  const parts: Uint8Array[] = [];
  let size = 0;
  const refs = new DataView(primary.buffer, primary.byteOffset, primary.byteLength);
  const esize = v.layout.kind === "blob" ? 16 : v.layout.record!.size;
  for (let r = 0; r < v.count; r++) {
    v.slots.forEach((slot, s) => {
      const blob = v.blobs[r * v.slots.length + s]!;
      if (blob.byteLength === 0) return;
      if (slot.type.type === "list") {
        const aligned = Math.ceil(size / slot.type.elem!.align) * slot.type.elem!.align;
        if (aligned > size) parts.push(new Uint8Array(aligned - size));
        size = aligned;
      }
      if (blob.byteLength > MAX_SAFE - size) fail("ST_OVERFLOW", `tensor ${quoted(name)} heap exceeds 2^53-1 bytes`);
      const p = r * esize + slot.offset;
      refs.setBigUint64(p, BigInt(size), true);
      refs.setBigUint64(p + 8, BigInt(blob.byteLength), true);
      parts.push(blob);
      size += blob.byteLength;
    });
  }
  const heap = new Uint8Array(size);
  let at = 0;
  for (const part of parts) {
    heap.set(part, at);
    at += part.byteLength;
  }
  return heap;
}

interface Sink {
  blobs: Uint8Array[];
  next: number;
}

function utf8Bytes(s: string, where: string): Uint8Array {
  const b = utf8Enc.encode(s);
  // A lone surrogate cannot be UTF-8; TextEncoder would replace it.
  try {
    if (utf8Dec.decode(b) !== s) throw new Error();
  } catch {
    fail("MT_UTF8", `${where}: string is not valid Unicode text (lone surrogate)`);
  }
  return b;
}

/** Encodes a value of type `t` at `dv[p]`; Strings and Lists go to the sink's blob slots in order. */
function encodeType(t: TypeLayout, v: unknown, dv: DataView, p: number, where: string, sink: Sink): void {
  if (t.shape.length > 0) {
    const n = t.shape[0]!;
    const a = asArray(v);
    if (!a || a.length !== n) fail("MT_VALUE", `${where}: expected an array of ${n} items (fixed array), got ${a ? `${a.length} items` : kindOf(v)}`);
    const sub: TypeLayout = { ...t, shape: t.shape.slice(1), size: t.size / n };
    a.forEach((x, i) => encodeType(sub, x, dv, p + i * sub.size, where + tok(i), sink));
    return;
  }
  switch (t.type) {
    case "scalar":
      writeScalar(dv, p, t.scalar!, v, where);
      return;
    case "record":
      encodeRecord(t.record!, v, dv, p, where, sink);
      return;
    case "string":
      if (typeof v !== "string") fail("MT_VALUE", `${where}: expected a string, got ${kindOf(v)}`);
      sink.blobs[sink.next++] = utf8Bytes(v, where);
      return;
    case "list": {
      const e = t.elem!;
      if (isTyped(v) && e.type === "scalar" && e.shape.length === 0 && v instanceof typedArrayCtor(e.scalar!) && e.scalar !== "BOOL") {
        sink.blobs[sink.next++] = new Uint8Array(v.buffer.slice(v.byteOffset, v.byteOffset + v.byteLength));
        return;
      }
      const a = asArray(v);
      if (!a) fail("MT_VALUE", `${where}: expected an array (list), got ${kindOf(v)}`);
      const bytes = new Uint8Array(a.length * e.size);
      const ldv = new DataView(bytes.buffer);
      const inner: Sink = { blobs: [], next: 0 };
      a.forEach((x, i) => encodeType(e, x, ldv, i * e.size, where + tok(i), inner));
      sink.blobs[sink.next++] = bytes;
      return;
    }
  }
}

function encodeRecord(rec: RecordLayout, v: unknown, dv: DataView, p: number, where: string, sink: Sink): void {
  if (rec.tuple) {
    if (!Array.isArray(v) || v.length !== rec.fields.length) {
      fail("MT_VALUE", `${where}: expected an array of ${rec.fields.length} items (tuple), got ${Array.isArray(v) ? `${v.length} items` : kindOf(v)}`);
    }
    rec.fields.forEach((f, i) => encodeType(f.type, (v as unknown[])[i], dv, p + f.offset, where + tok(i), sink));
    return;
  }
  if (!isObject(v)) fail("MT_VALUE", `${where}: expected an object (record), got ${kindOf(v)}`);
  for (const k of Object.keys(v).sort(compareUtf8)) {
    if (!rec.fields.some((f) => f.name === k)) fail("MT_VALUE", `${where}: unknown field ${quoted(k)}`);
  }
  for (const f of rec.fields) {
    if (!hasOwn(v, f.name)) fail("MT_VALUE", `${where}: missing field ${quoted(f.name)}`);
    encodeType(f.type, v[f.name], dv, p + f.offset, where + tok(f.name), sink);
  }
}

/**
 * Rewrites what schema builders emit into the dialect (§4.3 normalisation,
 * builder.ts, the same rules as the C++): draft-07 tuples become
 * `prefixItems` (+ `items` from `additionalItems`), a TypeBox module root
 * `{"$defs", "$ref"}` the definition it imports; a builder's symbol keys never
 * reach the JSON. Returns a plain JSON copy; a non-object root is MT_SCHEMA_TYPE.
 */
export function normalizeSchema(schema: unknown): Record<string, unknown> {
  const r = normalizeBuilderSchema(schema);
  if (!isObject(r)) throw new MetatensorError("MT_SCHEMA_TYPE", "the root schema must be an object (§4.6)");
  return r;
}

