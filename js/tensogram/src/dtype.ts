// dtype ↔ TypedArray mapping of the reference's package (spec 07 G.7):
// 64-bit integers as BigInt arrays, float16/bfloat16 as raw 16-bit patterns
// with converters (Node has no Float16Array), complex numbers interleaved
// (re, im) over a float array, bitmask as packed bytes.

import { InvalidArgumentError } from "./errors.js";

/** The 15 dtypes of the wire format (spec 02). */
export type Dtype =
  | "float16" | "bfloat16" | "float32" | "float64" | "complex64" | "complex128"
  | "int8" | "int16" | "int32" | "int64" | "uint8" | "uint16" | "uint32" | "uint64" | "bitmask";

/** Bytes per element (bitmask: 0, its payload is ⌈n/8⌉ bytes). */
export const DTYPE_BYTE_WIDTH: Readonly<Record<Dtype, number>> = Object.freeze({
  float16: 2, bfloat16: 2, float32: 4, float64: 8, complex64: 8, complex128: 16,
  int8: 1, int16: 2, int32: 4, int64: 8, uint8: 1, uint16: 2, uint32: 4, uint64: 8, bitmask: 0,
});

export const SUPPORTED_DTYPES: ReadonlySet<Dtype> = new Set(Object.keys(DTYPE_BYTE_WIDTH) as Dtype[]);

export function isDtype(x: unknown): x is Dtype {
  return typeof x === "string" && SUPPORTED_DTYPES.has(x as Dtype);
}

/** Product of the shape (`[]` → 1). */
export function shapeElementCount(shape: readonly (number | bigint)[]): number {
  let n = 1;
  for (const d of shape) n *= Number(d);
  return n;
}

/** Payload bytes of `elementCount` elements (bitmask → ⌈n/8⌉). */
export function payloadByteSize(dtype: Dtype, elementCount: number): number {
  if (dtype === "bitmask") return Math.ceil(elementCount / 8);
  return DTYPE_BYTE_WIDTH[dtype] * elementCount;
}

// ---------------------------------------------------------------------------
// 16-bit floats as raw bits.

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);

/** IEEE half (binary16) bits → number. */
export function float16BitsToNumber(h: number): number {
  const sign = h & 0x8000 ? -1 : 1;
  const exp = (h >> 10) & 0x1f;
  const frac = h & 0x3ff;
  if (exp === 0) return sign * frac * 2 ** -24;
  if (exp === 0x1f) return frac ? NaN : sign * Infinity;
  return sign * (1 + frac / 1024) * 2 ** (exp - 15);
}

/** number → IEEE half bits, rounding to nearest even. */
export function numberToFloat16Bits(x: number): number {
  f32[0] = x;
  const b = u32[0]!;
  const sign = (b >>> 16) & 0x8000;
  const exp = (b >>> 23) & 0xff;
  let mant = b & 0x7fffff;
  if (exp === 0xff) return sign | 0x7c00 | (mant ? 0x200 : 0);
  let e = exp - 127 + 15;
  if (e >= 0x1f) return sign | 0x7c00;
  if (e <= 0) {
    if (e < -10) return sign;
    mant |= 0x800000;
    const shift = 14 - e;
    let h = mant >>> shift;
    const rem = mant & ((1 << shift) - 1);
    const half = 1 << (shift - 1);
    if (rem > half || (rem === half && (h & 1))) h++;
    return sign | h;
  }
  let h = (e << 10) | (mant >>> 13);
  const rem = mant & 0x1fff;
  if (rem > 0x1000 || (rem === 0x1000 && (h & 1))) h++;
  return sign | h;
}

/** bfloat16 bits → number (the high half of a float32). */
export function bfloat16BitsToNumber(h: number): number {
  u32[0] = (h & 0xffff) << 16;
  return f32[0]!;
}

/** number → bfloat16 bits, rounding to nearest even (NaN stays NaN). */
export function numberToBfloat16Bits(x: number): number {
  f32[0] = x;
  const b = u32[0]!;
  if (Number.isNaN(x)) return ((b >>> 16) | 0x40) & 0xffff;
  return ((b + 0x7fff + ((b >>> 16) & 1)) >>> 16) & 0xffff;
}

/** A float16 or bfloat16 array: the raw 16-bit patterns in `bits`, values through get/set. */
abstract class Half16Array implements Iterable<number> {
  readonly bits: Uint16Array;
  abstract readonly dtype: "float16" | "bfloat16";
  constructor(bits: Uint16Array) {
    this.bits = bits;
  }
  get length(): number {
    return this.bits.length;
  }
  get byteLength(): number {
    return this.bits.byteLength;
  }
  get byteOffset(): number {
    return this.bits.byteOffset;
  }
  get buffer(): ArrayBufferLike {
    return this.bits.buffer;
  }
  protected abstract toNumber(h: number): number;
  protected abstract fromNumber(x: number): number;
  get(i: number): number {
    return this.toNumber(this.bits[i]!);
  }
  at(i: number): number | undefined {
    const v = this.bits.at(i);
    return v === undefined ? undefined : this.toNumber(v);
  }
  set(source: ArrayLike<number>, offset = 0): void {
    for (let i = 0; i < source.length; i++) this.bits[offset + i] = this.fromNumber(source[i]!);
  }
  toArray(): number[] {
    return Array.from(this.bits, (h) => this.toNumber(h));
  }
  *[Symbol.iterator](): Iterator<number> {
    for (const h of this.bits) yield this.toNumber(h);
  }
}

/** float16 values over their bits (Node has no native Float16Array). */
export class Float16Polyfill extends Half16Array {
  readonly dtype = "float16" as const;
  static from(values: ArrayLike<number>): Float16Polyfill {
    const a = new Float16Polyfill(new Uint16Array(values.length));
    a.set(values);
    return a;
  }
  protected toNumber(h: number): number {
    return float16BitsToNumber(h);
  }
  protected fromNumber(x: number): number {
    return numberToFloat16Bits(x);
  }
}

/** bfloat16 values over their bits. */
export class Bfloat16Array extends Half16Array {
  readonly dtype = "bfloat16" as const;
  static from(values: ArrayLike<number>): Bfloat16Array {
    const a = new Bfloat16Array(new Uint16Array(values.length));
    a.set(values);
    return a;
  }
  protected toNumber(h: number): number {
    return bfloat16BitsToNumber(h);
  }
  protected fromNumber(x: number): number {
    return numberToBfloat16Bits(x);
  }
}

/** complex64/complex128 values, interleaved (re, im) in `data`. */
export class ComplexArray implements Iterable<{ re: number; im: number }> {
  readonly dtype: "complex64" | "complex128";
  readonly data: Float32Array | Float64Array;
  constructor(dtype: "complex64" | "complex128", data: Float32Array | Float64Array) {
    this.dtype = dtype;
    this.data = data;
  }
  get length(): number {
    return this.data.length / 2;
  }
  real(i: number): number {
    return this.data[2 * i]!;
  }
  imag(i: number): number {
    return this.data[2 * i + 1]!;
  }
  get(i: number): { re: number; im: number } {
    return { re: this.real(i), im: this.imag(i) };
  }
  set(i: number, re: number, im: number): void {
    this.data[2 * i] = re;
    this.data[2 * i + 1] = im;
  }
  toArray(): [number, number][] {
    const out: [number, number][] = [];
    for (let i = 0; i < this.length; i++) out.push([this.real(i), this.imag(i)]);
    return out;
  }
  *[Symbol.iterator](): Iterator<{ re: number; im: number }> {
    for (let i = 0; i < this.length; i++) yield this.get(i);
  }
}

export type TypedArray =
  | Float32Array | Float64Array | Int8Array | Int16Array | Int32Array | BigInt64Array
  | Uint8Array | Uint16Array | Uint32Array | BigUint64Array
  | Float16Polyfill | Bfloat16Array | ComplexArray;

/** Whether the host has a native Float16Array (then float16 data could use it). */
export function hasNativeFloat16Array(): boolean {
  return typeof (globalThis as { Float16Array?: unknown }).Float16Array === "function";
}

type ViewCtor = { new (buffer: ArrayBufferLike, byteOffset: number, length: number): ArrayBufferView; BYTES_PER_ELEMENT: number };

const CTORS: Partial<Record<Dtype, ViewCtor>> = {
  float32: Float32Array, float64: Float64Array, int8: Int8Array, int16: Int16Array, int32: Int32Array,
  int64: BigInt64Array, uint8: Uint8Array, uint16: Uint16Array, uint32: Uint32Array, uint64: BigUint64Array,
  bitmask: Uint8Array, float16: Uint16Array, bfloat16: Uint16Array, complex64: Float32Array,
  complex128: Float64Array,
};

/**
 * A typed view of `bytes` (native byte order) for `dtype`. With `copy` (the
 * default) the bytes are copied first; without it the view shares them, which
 * needs `bytes.byteOffset` aligned to the element size (an unaligned input is
 * copied anyway).
 */
export function typedArrayFor(dtype: Dtype, bytes: Uint8Array, copy = true): TypedArray {
  const ctor = CTORS[dtype];
  if (ctor === undefined) throw new InvalidArgumentError(`unknown dtype ${JSON.stringify(dtype)}`);
  const width = ctor.BYTES_PER_ELEMENT;
  if (bytes.byteLength % width !== 0) {
    throw new InvalidArgumentError(`${bytes.byteLength} bytes are not a whole number of ${dtype} elements`);
  }
  const src = copy || bytes.byteOffset % width !== 0 ? bytes.slice() : bytes;
  const view = new ctor(src.buffer, src.byteOffset, src.byteLength / width);
  switch (dtype) {
    case "float16":
      return new Float16Polyfill(view as Uint16Array);
    case "bfloat16":
      return new Bfloat16Array(view as Uint16Array);
    case "complex64":
    case "complex128":
      return new ComplexArray(dtype, view as Float32Array | Float64Array);
    default:
      return view as TypedArray;
  }
}

/** The bytes of a typed array or view (no copy). */
export function bytesOf(data: ArrayBufferView | Float16Polyfill | Bfloat16Array | ComplexArray): Uint8Array {
  if (data instanceof Float16Polyfill || data instanceof Bfloat16Array) return bytesOf(data.bits);
  if (data instanceof ComplexArray) return bytesOf(data.data);
  return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
}

export function float16FromBytes(bytes: Uint8Array, copy = true): Float16Polyfill {
  return typedArrayFor("float16", bytes, copy) as Float16Polyfill;
}
export function bfloat16FromBytes(bytes: Uint8Array, copy = true): Bfloat16Array {
  return typedArrayFor("bfloat16", bytes, copy) as Bfloat16Array;
}
export function complexFromBytes(dtype: "complex64" | "complex128", bytes: Uint8Array, copy = true): ComplexArray {
  return typedArrayFor(dtype, bytes, copy) as ComplexArray;
}
