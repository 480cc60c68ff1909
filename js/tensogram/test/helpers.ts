// Shared helpers of the tests: the module (initialised once), sample data for
// every dtype, the C++ CLI (TENSOGRAM_CLI) and the reference fixtures
// (TENSOGRAM_FIXTURES, default: shared/fixtures beside the repository).
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { Bfloat16Array, ComplexArray, Float16Polyfill, init, type Dtype, type TypedArray } from "@tensogram/tensogram";

await init();

const here = dirname(fileURLToPath(import.meta.url));

export const CLI = process.env["TENSOGRAM_CLI"] ?? "";
export const HAVE_CLI = CLI !== "" && existsSync(CLI);
export const FIXTURES = process.env["TENSOGRAM_FIXTURES"] ?? resolve(here, "../../../../../shared/fixtures");
export const HAVE_FIXTURES = existsSync(join(FIXTURES, "tgm"));

export function cli(...args: string[]): string {
  return execFileSync(CLI, args, { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], maxBuffer: 1 << 28 });
}

export function tmp(prefix = "tgm-js-"): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

/** Deterministic pseudo-random numbers (xorshift32). */
export function rng(seed: number): () => number {
  let x = seed >>> 0 || 1;
  return () => {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    return x / 0x100000000;
  };
}

export const ALL_DTYPES: Dtype[] = [
  "float16", "bfloat16", "float32", "float64", "complex64", "complex128", "int8", "int16", "int32", "int64",
  "uint8", "uint16", "uint32", "uint64", "bitmask",
];

/** `n` elements of `dtype` as native-order bytes (smooth-ish values so codecs have work to do). */
export function sampleBytes(dtype: Dtype, n: number, seed = 1): Uint8Array {
  const r = rng(seed);
  const wave = (i: number) => Math.sin(i / 7) * 100 + r() * 3;
  switch (dtype) {
    case "float32":
      return bytes(Float32Array.from({ length: n }, (_, i) => wave(i)));
    case "float64":
      return bytes(Float64Array.from({ length: n }, (_, i) => wave(i)));
    case "complex64":
      return bytes(Float32Array.from({ length: 2 * n }, (_, i) => wave(i)));
    case "complex128":
      return bytes(Float64Array.from({ length: 2 * n }, (_, i) => wave(i)));
    case "float16":
    case "bfloat16":
      return bytes(Uint16Array.from({ length: n }, (_, i) => (0x3c00 + ((i * 37) % 0x0800)) & 0x7bff));
    case "int8":
      return bytes(Int8Array.from({ length: n }, (_, i) => Math.round(wave(i)) % 128));
    case "uint8":
      return bytes(Uint8Array.from({ length: n }, (_, i) => Math.abs(Math.round(wave(i))) % 256));
    case "int16":
      return bytes(Int16Array.from({ length: n }, (_, i) => Math.round(wave(i) * 100)));
    case "uint16":
      return bytes(Uint16Array.from({ length: n }, (_, i) => Math.round(wave(i) * 100 + 20000)));
    case "int32":
      return bytes(Int32Array.from({ length: n }, (_, i) => Math.round(wave(i) * 1e6)));
    case "uint32":
      return bytes(Uint32Array.from({ length: n }, (_, i) => Math.round(wave(i) * 1e6 + 2e9)));
    case "int64":
      return bytes(BigInt64Array.from({ length: n }, (_, i) => BigInt(Math.round(wave(i) * 1e6)) * 1000003n));
    case "uint64":
      return bytes(BigUint64Array.from({ length: n }, (_, i) => (1n << 63n) + BigInt(i * 977)));
    case "bitmask":
      return Uint8Array.from({ length: Math.ceil(n / 8) }, () => Math.floor(r() * 256));
  }
}

/** The raw bytes behind any array `data()` returns. */
export function rawBytes(v: TypedArray): Uint8Array {
  if (v instanceof Float16Polyfill || v instanceof Bfloat16Array) return bytes(v.bits);
  if (v instanceof ComplexArray) return bytes(v.data);
  return bytes(v);
}

export function bytes(v: ArrayBufferView): Uint8Array {
  return new Uint8Array(v.buffer, v.byteOffset, v.byteLength);
}

/** The raw data of a .npy file (version 1-3 header skipped). */
export function npyData(path: string): Uint8Array {
  const b = readFileSync(path);
  if (b.toString("latin1", 0, 6) !== "\x93NUMPY") throw new Error(`${path} is not .npy`);
  const major = b[6]!;
  const headerLen = major === 1 ? b.readUInt16LE(8) : b.readUInt32LE(8);
  const start = (major === 1 ? 10 : 12) + headerLen;
  return new Uint8Array(b.buffer, b.byteOffset + start, b.byteLength - start);
}

/** Writes a little-endian .npy file of `descr` ('<f8', '<i4', ...). */
export function npyBytes(descr: string, shape: number[], data: Uint8Array): Uint8Array {
  let header = `{'descr': '${descr}', 'fortran_order': False, 'shape': (${shape.join(", ")}${shape.length === 1 ? "," : ""}), }`;
  const total = 10 + header.length + 1;
  header += " ".repeat((64 - (total % 64)) % 64) + "\n";
  const out = new Uint8Array(10 + header.length + data.byteLength);
  out.set([0x93, ...Buffer.from("NUMPY", "latin1"), 1, 0], 0);
  new DataView(out.buffer).setUint16(8, header.length, true);
  out.set(Buffer.from(header, "latin1"), 10);
  out.set(data, 10 + header.length);
  return out;
}
