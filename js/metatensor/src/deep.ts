// Deep validation (spec 06 §8.1, §8.3), the passes of
// src/metatensor/view/deep_validation.cpp in the same order: BOOL bytes
// [MT_BOOL], String UTF-8 [MT_UTF8], zero padding (records, heap gaps,
// padding tensors) [MT_NONZERO_PADDING], then value keywords [MT_VALUE].
import { MetatensorError } from "./errors.js";
import { evaluate } from "./evaluate.js";
import { indexPointer, tok } from "./pointer.js";
import type { MetatensorFile } from "./file.js";
import { RecordLayout, TypeLayout } from "./schema.js";
import { BlobTensor, RecordTensor, TensorView, decodeString } from "./views.js";


interface Ctx {
  dv: DataView;
  heap: Uint8Array;
}

type Scan = "bool" | "utf8";

function blobAt(c: Ctx, p: number): Uint8Array {
  const off = Number(c.dv.getBigUint64(p, true));
  const len = Number(c.dv.getBigUint64(p + 8, true));
  return c.heap.subarray(off, off + len);
}

function scanType(mode: Scan, t: TypeLayout, c: Ctx, p: number, ptr: string): void {
  const n = t.shape.reduce((x, y) => x * y, 1);
  const es = t.size / n;
  for (let i = 0; i < n; i++) {
    const at = p + i * es;
    const here = ptr + indexPointer(t.shape, i);
    if (t.type === "scalar") {
      if (mode === "bool" && t.scalar === "BOOL") {
        const b = c.dv.getUint8(at);
        if (b > 1) throw new MetatensorError("MT_BOOL", `${here}: BOOL byte is ${b}, not 0 or 1`);
      }
    } else if (t.type === "record") {
      for (const f of t.record!.fields) scanType(mode, f.type, c, at + f.offset, here + tok(f.name));
    } else if (t.type === "string") {
      if (mode === "utf8") {
        try {
          decodeString(blobAt(c, at));
        } catch {
          throw new MetatensorError("MT_UTF8", `${here}: invalid UTF-8 in the string`);
        }
      }
    } else if (t.type === "list") {
      const blob = blobAt(c, at);
      const e = t.elem!;
      const dv = new DataView(blob.buffer, blob.byteOffset, blob.byteLength);
      for (let j = 0; j < blob.byteLength / e.size; j++) scanType(mode, e, { dv, heap: c.heap }, j * e.size, here + tok(j));
    }
  }
}

function expectZero(bytes: Uint8Array, begin: number, end: number, what: string, ptr: string): void {
  for (let k = begin; k < end; k++) {
    if (bytes[k] !== 0) throw new MetatensorError("MT_NONZERO_PADDING", `${ptr}: ${what} byte ${k} is ${bytes[k]}, not 0`);
  }
}

function recordPadding(rec: RecordLayout, c: Ctx, p: number, ptr: string): void {
  const bytes = new Uint8Array(c.dv.buffer, c.dv.byteOffset + p, rec.size);
  let cursor = 0;
  for (const f of rec.fields) {
    if (f.offset > cursor) expectZero(bytes, cursor, f.offset, "record padding", ptr);
    const n = f.type.shape.reduce((x, y) => x * y, 1);
    const es = f.type.size / n;
    for (let i = 0; i < n; i++) {
      const at = p + f.offset + i * es;
      const here = ptr + tok(f.name) + indexPointer(f.type.shape, i);
      if (f.type.type === "record") recordPadding(f.type.record!, c, at, here);
      else if (f.type.type === "list" && f.type.elem!.type === "record") listRecords(f.type.elem!, blobAt(c, at), c.heap, here);
    }
    cursor = f.offset + f.type.size;
  }
  if (rec.size > cursor) expectZero(bytes, cursor, rec.size, "record tail padding", ptr);
}

function listRecords(elem: TypeLayout, blob: Uint8Array, heap: Uint8Array, ptr: string): void {
  const elemN = elem.shape.reduce((x, y) => x * y, 1);
  const count = elem.size === 0 ? 0 : blob.byteLength / elem.size;
  const rsize = elem.record!.size;
  const dv = new DataView(blob.buffer, blob.byteOffset, blob.byteLength);
  for (let j = 0; j < count * elemN; j++) {
    recordPadding(elem.record!, { dv, heap }, j * rsize, ptr + tok(Math.floor(j / elemN)) + indexPointer(elem.shape, j % elemN));
  }
}

function forEachRef(t: TypeLayout, c: Ctx, p: number, fn: (off: number, len: number) => void): void {
  const n = t.shape.reduce((x, y) => x * y, 1);
  const es = t.size / n;
  for (let i = 0; i < n; i++) {
    const at = p + i * es;
    if (t.type === "string" || t.type === "list") fn(Number(c.dv.getBigUint64(at, true)), Number(c.dv.getBigUint64(at + 8, true)));
    else if (t.type === "record") for (const f of t.record!.fields) forEachRef(f.type, c, at + f.offset, fn);
  }
}

function heapGaps(whole: TypeLayout, count: number, c: Ctx, name: string): void {
  const ranges: [number, number][] = [];
  for (let i = 0; i < count; i++) forEachRef(whole, c, i * whole.size, (o, l) => l !== 0 && ranges.push([o, o + l]));
  ranges.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  let covered = 0;
  const ptr = `tensor ${JSON.stringify(name + "#heap")}`;
  for (const [b, e] of ranges) {
    if (b > covered) expectZero(c.heap, covered, b, "heap gap", ptr);
    covered = Math.max(covered, e);
  }
  expectZero(c.heap, covered, c.heap.byteLength, "heap gap", ptr);
}

function elementType(v: RecordTensor | BlobTensor): TypeLayout {
  if (v.kind === "struct") return { type: "record", record: v.record, shape: [], size: v.record.size, align: v.record.align, pointer: "" };
  return { ...v.item, shape: [], size: 16 };
}

function ctxOf(v: RecordTensor | BlobTensor): Ctx {
  const b = v.kind === "struct" ? v.bytes : v.index;
  return { dv: new DataView(b.buffer, b.byteOffset, b.byteLength), heap: v.heap };
}

/** Runs deep validation on a file (fetching every tensor); throws the first failure. */
export async function validateDeep(file: MetatensorFile, options: { signal?: AbortSignal } = {}): Promise<void> {
  const names = file.names;
  const views = await file.load(names, options); // BlobRef checks come first (§8.2)
  // Passes 1 and 2.
  for (const mode of ["bool", "utf8"] as const) {
    for (const name of names) {
      const v = views.get(name)!;
      if (v.kind === "flat") {
        if (mode === "bool" && v.dtype === "BOOL") {
          const d = v.data as Uint8Array;
          for (let i = 0; i < d.length; i++) {
            if (d[i]! > 1) throw new MetatensorError("MT_BOOL", `${tok(name)}${indexPointer(v.shape, i)}: BOOL byte is ${d[i]}, not 0 or 1`);
          }
        }
        continue;
      }
      const c = ctxOf(v);
      const t = elementType(v);
      for (let i = 0; i < v.count; i++) scanType(mode, t, c, i * t.size, tok(name) + indexPointer(v.shape, i));
    }
  }
  // Pass 3.
  for (const name of names) {
    const v = views.get(name)!;
    if (v.kind === "flat") continue;
    const c = ctxOf(v);
    if (v.kind === "struct") {
      for (let i = 0; i < v.count; i++) recordPadding(v.record, c, i * v.record.size, tok(name) + indexPointer(v.shape, i));
    } else if (v.item.type === "list" && v.item.elem!.type === "record") {
      for (let i = 0; i < v.count; i++) listRecords(v.item.elem!, blobAt(c, i * 16), v.heap, tok(name) + indexPointer(v.shape, i));
    }
    if (file.layout(name).hasHeap) heapGaps(elementType(v), v.count, c, name);
  }
  for (const t of file.tensors) {
    if (!t.name.startsWith("__pad__")) continue;
    const b = await file.tensorBytes(t.name, options.signal);
    const k = b.findIndex((x) => x !== 0);
    if (k >= 0) throw new MetatensorError("MT_NONZERO_PADDING", `padding tensor ${JSON.stringify(t.name)} byte ${k} is ${b[k]}, not 0`);
  }
  // Pass 4: value keywords over the logical value (§8.3).
  const doc = file.schema.document;
  const resolve = (node: Record<string, unknown>) => file.schema.refTarget(node);
  const value: Record<string, unknown> = {};
  for (const name of names) {
    const v: TensorView = views.get(name)!;
    const lv = v.value();
    Object.defineProperty(value, name, { value: lv, enumerable: true, writable: true, configurable: true });
  }
  const f = evaluate(doc, value, resolve);
  if (f) throw new MetatensorError("MT_VALUE", `${f.pointer}: ${f.keyword}: ${f.message}`);
}

/** Deep validation of a logical value against a compiled schema's value keywords (MT_VALUE). */
export function checkValue(schema: { document: unknown; refTarget(n: unknown): unknown }, value: unknown): void {
  const f = evaluate(schema.document, value, (n) => schema.refTarget(n));
  if (f) throw new MetatensorError("MT_VALUE", `${f.pointer}: ${f.keyword}: ${f.message}`);
}
