// Marshalling between TypeScript and the C ABI of the WebAssembly module
// (include/tensogram.h): arguments copied into WASM memory for one call and
// freed afterwards, tgm_error codes turned into the error classes of
// errors.ts, library-owned tgm_bytes_t buffers copied out and released.
// wasm32: pointers and size_t are 32-bit numbers, 64-bit integers are
// bigint (the module is linked with WASM_BIGINT).

import { errorFromCode } from "./errors.js";
import { wasm, type WasmModule } from "./init.js";

type Fn = (...args: (number | bigint)[]) => number;

/** The exported C function `tgm_<name>`. */
export function fn(m: WasmModule, name: string): Fn {
  return m[`_tgm_${name}`] as unknown as Fn;
}

/** Allocations for one call, all freed by `free()`. */
export class Scope {
  readonly m: WasmModule;
  private readonly ptrs: number[] = [];
  constructor(m: WasmModule = wasm()) {
    this.m = m;
  }
  alloc(n: number): number {
    const p = this.m._malloc(Math.max(n, 1));
    if (p === 0) throw new RangeError(`tensogram: cannot allocate ${n} bytes in WebAssembly memory`);
    this.ptrs.push(p);
    return p;
  }
  /** A zero-filled block. */
  zeros(n: number): number {
    const p = this.alloc(n);
    this.m.HEAPU8.fill(0, p, p + n);
    return p;
  }
  bytes(data: Uint8Array): number {
    const p = this.alloc(data.byteLength);
    this.m.HEAPU8.set(data, p);
    return p;
  }
  string(s: string): number {
    const n = this.m.lengthBytesUTF8(s) + 1;
    const p = this.alloc(n);
    this.m.stringToUTF8(s, p, n);
    return p;
  }
  u32s(values: readonly number[]): number {
    const p = this.alloc(4 * values.length);
    new Uint32Array(this.m.HEAPU8.buffer, p, values.length).set(values);
    return p;
  }
  u64s(values: readonly bigint[]): number {
    const p = this.alloc(8 * values.length);
    new BigUint64Array(this.m.HEAPU8.buffer, p, values.length).set(values);
    return p;
  }
  free(): void {
    for (const p of this.ptrs) this.m._free(p);
    this.ptrs.length = 0;
  }
}

/** Runs `body` with a fresh scope and frees it afterwards. */
export function withScope<T>(body: (s: Scope) => T): T {
  const s = new Scope();
  try {
    return body(s);
  } finally {
    s.free();
  }
}

export function u32At(m: WasmModule, p: number): number {
  return new DataView(m.HEAPU8.buffer).getUint32(p, true);
}
export function i32At(m: WasmModule, p: number): number {
  return new DataView(m.HEAPU8.buffer).getInt32(p, true);
}
export function f64At(m: WasmModule, p: number): number {
  return new DataView(m.HEAPU8.buffer).getFloat64(p, true);
}
export function stringAt(m: WasmModule, p: number): string | null {
  return p === 0 ? null : m.UTF8ToString(p);
}

/** Throws the error class of `code` (non-zero) with tgm_last_error()'s text. */
export function check(m: WasmModule, code: number): void {
  if (code === 0) return;
  const raw = stringAt(m, fn(m, "last_error")()) ?? `tensogram error ${code}`;
  throw errorFromCode(code, raw);
}

/** Copies out and releases the library-owned tgm_bytes_t {data, len} at `p`. */
export function takeBytes(m: WasmModule, p: number): Uint8Array {
  const data = u32At(m, p);
  const len = u32At(m, p + 4);
  const out = m.HEAPU8.slice(data, data + len);
  // tgm_bytes_free takes the struct by value: wasm32 passes it by address.
  fn(m, "bytes_free")(p);
  return out;
}
