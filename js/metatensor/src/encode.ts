// Encoding logical scalars to their bytes (spec 06 §8.3 in reverse), with
// the rules of src/metatensor/writer/scalar_encoding.cpp: floats rounded to
// nearest even, finite values beyond a type's range refused [MT_VALUE].
import { DType, dtypeBits } from "./dtypes.js";
import { MetatensorError } from "./errors.js";

type Special = "ieee" | "fn" | "fnuz" | "none";
interface Minifloat {
  e: number;
  m: number;
  bias: number;
  kind: Special;
  name: string;
}
const MINIFLOATS: Partial<Record<DType, Minifloat>> = {
  F16: { e: 5, m: 10, bias: 15, kind: "ieee", name: "F16" },
  BF16: { e: 8, m: 7, bias: 127, kind: "ieee", name: "BF16" },
  F8_E4M3: { e: 4, m: 3, bias: 7, kind: "fn", name: "F8_E4M3" },
  F8_E5M2: { e: 5, m: 2, bias: 15, kind: "ieee", name: "F8_E5M2" },
  F8_E4M3FNUZ: { e: 4, m: 3, bias: 8, kind: "fnuz", name: "F8_E4M3FNUZ" },
  F8_E5M2FNUZ: { e: 5, m: 2, bias: 16, kind: "fnuz", name: "F8_E5M2FNUZ" },
  F4: { e: 2, m: 1, bias: 1, kind: "none", name: "F4" },
  F6_E2M3: { e: 2, m: 3, bias: 1, kind: "none", name: "F6_E2M3" },
  F6_E3M2: { e: 3, m: 2, bias: 3, kind: "none", name: "F6_E3M2" },
};

const bad = (where: string, msg: string): never => {
  throw new MetatensorError("MT_VALUE", `${where}: ${msg}`);
};

function roundHalfEven(q: number): number {
  const fl = Math.floor(q);
  const diff = q - fl;
  if (diff > 0.5) return fl + 1;
  if (diff < 0.5) return fl;
  return fl % 2 === 0 ? fl : fl + 1;
}

function exponentOf(x: number): number {
  // floor(log2(x)) exactly, for finite x > 0.
  let e = Math.floor(Math.log2(x));
  if (2 ** e > x) e--;
  else if (2 ** (e + 1) <= x) e++;
  return e;
}

function encodeMinifloat(f: Minifloat, d: number, where: string): number {
  const width = f.e + f.m;
  const sign = d < 0 || Object.is(d, -0) ? 2 ** width : 0;
  const expOnes = 2 ** f.e - 1;
  if (Number.isNaN(d)) {
    if (f.kind === "ieee") return expOnes * 2 ** f.m + 2 ** (f.m - 1);
    if (f.kind === "fn") return 2 ** width - 1;
    if (f.kind === "fnuz") return 2 ** width;
    bad(where, `${f.name} has no NaN`);
  }
  if (!Number.isFinite(d)) {
    if (f.kind === "ieee") return sign + expOnes * 2 ** f.m;
    bad(where, `${f.name} has no infinity`);
  }
  const x = Math.abs(d);
  let magnitude = 0;
  if (x !== 0) {
    let exponent = exponentOf(x);
    const emin = 1 - f.bias;
    if (exponent < emin) {
      magnitude = roundHalfEven(x * 2 ** (f.m - emin));
    } else {
      let n = roundHalfEven(x * 2 ** (f.m - exponent));
      if (n >= 2 ** (f.m + 1)) {
        n = 2 ** f.m;
        exponent++;
      }
      const biased = exponent + f.bias;
      if (biased > expOnes) bad(where, `${d} is out of the range of ${f.name}`);
      magnitude = biased * 2 ** f.m + (n - 2 ** f.m);
    }
  }
  const maxFinite = f.kind === "ieee" ? expOnes * 2 ** f.m - 1 : f.kind === "fn" ? 2 ** width - 2 : 2 ** width - 1;
  if (magnitude > maxFinite) bad(where, `${d} is out of the range of ${f.name}`);
  if (f.kind === "fnuz" && magnitude === 0) return 0;
  return sign + magnitude;
}

function encodeE8M0(d: number, where: string): number {
  if (Number.isNaN(d)) return 0xff;
  if (!(d > 0) || !Number.isFinite(d)) bad(where, "F8_E8M0 holds only finite positive powers of two");
  let exponent = exponentOf(d);
  if (roundHalfEven(d * 2 ** -exponent) >= 2) exponent++;
  const code = exponent + 127;
  if (code < 0 || code > 254) bad(where, `${d} is out of F8_E8M0 range`);
  return code;
}

/** Bits of one float of a small format (F16, BF16, F8_*, F4, F6_*), round to nearest even. */
export function encodeSmallFloat(t: DType, d: number, where = "value"): number {
  if (t === "F8_E8M0") return encodeE8M0(d, where);
  const f = MINIFLOATS[t];
  if (!f) throw new MetatensorError("MT_INVALID_ARGUMENT", `${t} is not a small float format`);
  return encodeMinifloat(f, d, where);
}

function kindOf(v: unknown): string {
  return v === null ? "null" : Array.isArray(v) ? "array" : typeof v;
}

function integerBits(v: unknown, t: DType, where: string): bigint {
  const bits = dtypeBits(t);
  const signed = t.startsWith("I");
  const lo = signed ? -(1n << BigInt(bits - 1)) : 0n;
  const hi = signed ? (1n << BigInt(bits - 1)) - 1n : (1n << BigInt(bits)) - 1n;
  let i: bigint;
  if (typeof v === "bigint") i = v;
  else if (typeof v === "number") {
    if (!Number.isFinite(v) || Math.trunc(v) !== v) bad(where, `${v} is not an integer (${t})`);
    i = BigInt(v);
  } else return bad(where, `expected an integer for ${t}, got ${kindOf(v)}`);
  if (i < lo || i > hi) bad(where, `${i} is out of the range of ${t}`);
  return BigInt.asUintN(bits, i);
}

function numberOf(v: unknown, t: DType, where: string): number {
  if (typeof v === "number") return v;
  if (typeof v === "bigint") return Number(v);
  return bad(where, `expected a number for ${t}, got ${kindOf(v)}`);
}

/** Writes one scalar of byte-sized dtype `t` at `dv[p]`. */
export function writeScalar(dv: DataView, p: number, t: DType, v: unknown, where: string): void {
  switch (t) {
    case "BOOL":
      if (typeof v !== "boolean") bad(where, `expected true or false for BOOL, got ${kindOf(v)}`);
      dv.setUint8(p, v ? 1 : 0);
      return;
    case "U8": case "I8": dv.setUint8(p, Number(integerBits(v, t, where))); return;
    case "U16": case "I16": dv.setUint16(p, Number(integerBits(v, t, where)), true); return;
    case "U32": case "I32": dv.setUint32(p, Number(integerBits(v, t, where)), true); return;
    case "U64": case "I64": dv.setBigUint64(p, integerBits(v, t, where), true); return;
    case "F32": {
      const d = numberOf(v, t, where);
      const f = Math.fround(d);
      if (Number.isFinite(d) && !Number.isFinite(f)) bad(where, `${d} is out of the range of F32`);
      dv.setFloat32(p, f, true);
      return;
    }
    case "F64": dv.setFloat64(p, numberOf(v, t, where), true); return;
    case "C64": {
      if (!Array.isArray(v) || v.length !== 2) bad(where, `expected [real, imaginary] for C64, got ${kindOf(v)}`);
      const pair = v as unknown[];
      writeScalar(dv, p, "F32", pair[0], where + "/0");
      writeScalar(dv, p + 4, "F32", pair[1], where + "/1");
      return;
    }
    case "F16": case "BF16": dv.setUint16(p, encodeSmallFloat(t, numberOf(v, t, where), where), true); return;
    default: dv.setUint8(p, encodeSmallFloat(t, numberOf(v, t, where), where));
  }
}

/** Packs sub-byte elements LSB first (F4: element 2k in the low nibble of byte k; F6: 6-bit stream). */
export function packSubByte(t: DType, values: ArrayLike<unknown>, where: string): Uint8Array {
  const bits = dtypeBits(t);
  const n = values.length;
  const out = new Uint8Array((n * bits) / 8);
  for (let i = 0; i < n; i++) {
    const code = encodeSmallFloat(t, numberOf(values[i], t, `${where}/${i}`), `${where}/${i}`);
    const bit = bits * i;
    const at = bit >> 3;
    const shift = bit % 8;
    out[at]! |= (code << shift) & 0xff;
    if (shift + bits > 8) out[at + 1]! |= code >> (8 - shift);
  }
  return out;
}
