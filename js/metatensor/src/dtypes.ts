// The 22 safetensors dtypes (spec 06 §2 rule 6, §4.4) and the decoding of
// the float formats that have no JavaScript typed array (§8.3).

export const DTYPES = [
  "BOOL", "U8", "I8", "U16", "I16", "U32", "I32", "U64", "I64", "F16", "BF16", "F32", "F64", "C64",
  "F8_E4M3", "F8_E5M2", "F8_E8M0", "F8_E4M3FNUZ", "F8_E5M2FNUZ", "F4", "F6_E2M3", "F6_E3M2",
] as const;
export type DType = (typeof DTYPES)[number];

const BITS: Record<DType, number> = {
  BOOL: 8, U8: 8, I8: 8, U16: 16, I16: 16, U32: 32, I32: 32, U64: 64, I64: 64, F16: 16, BF16: 16, F32: 32,
  F64: 64, C64: 64, F8_E4M3: 8, F8_E5M2: 8, F8_E8M0: 8, F8_E4M3FNUZ: 8, F8_E5M2FNUZ: 8, F4: 4, F6_E2M3: 6,
  F6_E3M2: 6,
};

export function isDType(s: unknown): s is DType {
  return typeof s === "string" && Object.prototype.hasOwnProperty.call(BITS, s);
}
export function dtypeBits(t: DType): number {
  return BITS[t];
}
/** Alignment in bytes (§4.4): the size, except C64 (4) and sub-byte types (1). */
export function dtypeAlign(t: DType): number {
  if (t === "C64") return 4;
  return Math.max(1, BITS[t] / 8) | 0 || 1;
}
export function isSubByte(t: DType): boolean {
  return t === "F4" || t === "F6_E2M3" || t === "F6_E3M2";
}
export function isInteger(t: DType): boolean {
  return t === "U8" || t === "I8" || t === "U16" || t === "I16" || t === "U32" || t === "I32" || t === "U64" || t === "I64";
}
export function is64(t: DType): boolean {
  return t === "U64" || t === "I64";
}
export function isFloat(t: DType): boolean {
  return !isInteger(t) && t !== "BOOL" && t !== "C64";
}

/** The typed array that views a dtype's elements (raw bits for F16/BF16/F8, pairs for C64). */
export type TypedArrayFor<T extends DType> = T extends "BOOL" | "U8" | "F8_E4M3" | "F8_E5M2" | "F8_E8M0" | "F8_E4M3FNUZ" | "F8_E5M2FNUZ" | "F4" | "F6_E2M3" | "F6_E3M2"
  ? Uint8Array
  : T extends "I8" ? Int8Array
  : T extends "U16" | "F16" | "BF16" ? Uint16Array
  : T extends "I16" ? Int16Array
  : T extends "U32" ? Uint32Array
  : T extends "I32" ? Int32Array
  : T extends "U64" ? BigUint64Array
  : T extends "I64" ? BigInt64Array
  : T extends "F32" | "C64" ? Float32Array
  : T extends "F64" ? Float64Array
  : never;

export type AnyTypedArray =
  | Uint8Array | Int8Array | Uint16Array | Int16Array | Uint32Array | Int32Array | BigUint64Array | BigInt64Array
  | Float32Array | Float64Array;

interface TypedCtor {
  new (buffer: ArrayBufferLike, byteOffset: number, length: number): AnyTypedArray;
  new (length: number): AnyTypedArray;
  readonly BYTES_PER_ELEMENT: number;
}

/** Constructor and element count factor of the typed view of a dtype. */
export function typedArrayCtor(t: DType): TypedCtor {
  switch (t) {
    case "I8": return Int8Array as unknown as TypedCtor;
    case "U16": case "F16": case "BF16": return Uint16Array as unknown as TypedCtor;
    case "I16": return Int16Array as unknown as TypedCtor;
    case "U32": return Uint32Array as unknown as TypedCtor;
    case "I32": return Int32Array as unknown as TypedCtor;
    case "U64": return BigUint64Array as unknown as TypedCtor;
    case "I64": return BigInt64Array as unknown as TypedCtor;
    case "F32": case "C64": return Float32Array as unknown as TypedCtor;
    case "F64": return Float64Array as unknown as TypedCtor;
    default: return Uint8Array as unknown as TypedCtor;
  }
}

// A sign/exponent/mantissa minifloat without special values (exponent 0 is
// subnormal), as the C++ decoder (src/metatensor/view/logical_value.cpp).
function minifloat(bits: number, ebits: number, mbits: number, bias: number): number {
  const sign = (bits >> (ebits + mbits)) & 1;
  const e = (bits >> mbits) & ((1 << ebits) - 1);
  const m = bits & ((1 << mbits) - 1);
  const v = e === 0 ? m * 2 ** (1 - bias - mbits) : (m + (1 << mbits)) * 2 ** (e - bias - mbits);
  return sign ? -v : v;
}

/** IEEE binary16 bits to a number. */
export function f16ToNumber(h: number): number {
  const e = (h >> 10) & 0x1f;
  const m = h & 0x3ff;
  const s = h & 0x8000 ? -1 : 1;
  if (e === 0x1f) return m ? NaN : s * Infinity;
  return s * (e === 0 ? m * 2 ** -24 : (m + 1024) * 2 ** (e - 25));
}

const f32buf = new Float32Array(1);
const u32buf = new Uint32Array(f32buf.buffer);

/** bfloat16 bits to a number. */
export function bf16ToNumber(h: number): number {
  u32buf[0] = (h & 0xffff) << 16;
  return f32buf[0]!;
}

/** An 8-bit float of the given dtype to a number (§8.3). */
export function f8ToNumber(t: DType, b: number): number {
  switch (t) {
    case "F8_E4M3": return (b & 0x7f) === 0x7f ? NaN : minifloat(b, 4, 3, 7); // OCP E4M3FN
    case "F8_E5M2":
      if (((b >> 2) & 0x1f) === 0x1f) return b & 3 ? NaN : b & 0x80 ? -Infinity : Infinity;
      return minifloat(b, 5, 2, 15);
    case "F8_E8M0": return b === 0xff ? NaN : 2 ** (b - 127);
    case "F8_E4M3FNUZ": return b === 0x80 ? NaN : minifloat(b, 4, 3, 8);
    case "F8_E5M2FNUZ": return b === 0x80 ? NaN : minifloat(b, 5, 2, 16);
    default: throw new RangeError(`${t} is not an 8-bit float`);
  }
}

/** Element `i` of a packed sub-byte tensor (F4: low nibble first; F6: LSB-first bit stream). */
export function subByteToNumber(t: DType, bytes: Uint8Array, i: number): number {
  if (t === "F4") {
    const b = bytes[i >> 1]!;
    return minifloat(i % 2 === 0 ? b & 0xf : b >> 4, 2, 1, 1);
  }
  const bit = 6 * i;
  const at = Math.floor(bit / 8);
  let w = bytes[at]!;
  if (at + 1 < bytes.length) w |= bytes[at + 1]! << 8;
  const v = (w >> (bit % 8)) & 0x3f;
  return t === "F6_E2M3" ? minifloat(v, 2, 3, 1) : minifloat(v, 3, 2, 3);
}

/**
 * Converts the raw bits of a float format without a JS typed array (F16,
 * BF16, F8_*, F4, F6_*) to a Float32Array/Float64Array of values.
 */
export function decodeFloats(t: DType, raw: Uint8Array | Uint16Array, count?: number): Float64Array {
  const n = count ?? (isSubByte(t) ? Math.floor((raw.byteLength * 8) / dtypeBits(t)) : raw.length);
  const out = new Float64Array(n);
  if (t === "F16" || t === "BF16") {
    const u = raw as Uint16Array;
    for (let i = 0; i < n; i++) out[i] = t === "F16" ? f16ToNumber(u[i]!) : bf16ToNumber(u[i]!);
  } else if (isSubByte(t)) {
    const b = raw as Uint8Array;
    for (let i = 0; i < n; i++) out[i] = subByteToNumber(t, b, i);
  } else {
    const b = raw as Uint8Array;
    for (let i = 0; i < n; i++) out[i] = f8ToNumber(t, b[i]!);
  }
  return out;
}

