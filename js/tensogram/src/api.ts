// The buffer-level functions of the reference's package (spec 07 G.3),
// each one call into our C ABI (include/tensogram.h) in the WebAssembly
// module: no part of the format is implemented in TypeScript.

import { check, fn, i32At, stringAt, takeBytes, u32At, withScope, f64At, Scope } from "./abi.js";
import { bytesOf, isDtype, typedArrayFor, type Dtype, type TypedArray } from "./dtype.js";
import { InvalidArgumentError, IoError } from "./errors.js";
import { wasm, type WasmModule } from "./init.js";
import { fromJson, toJson, type CborValue } from "./json.js";
import type {
  DataObjectDescriptor, DecodeOptions, DecodeRangeOptions, EncodeDescriptor, EncodeInput, EncodeOptions,
  EncodePreEncodedOptions, GlobalMetadata, HashAlgorithm, MessagePosition, PreEncodedInput, RangePair,
  SimplePackingParams, ValidateOptions,
} from "./types.js";

/** The wire format version this package reads and writes. */
export const WIRE_VERSION = 3;

// ---------------------------------------------------------------------------
// Arguments.

export function asBytes(buf: unknown, what = "buf"): Uint8Array {
  if (!(buf instanceof Uint8Array)) throw new InvalidArgumentError(`${what} must be a Uint8Array`);
  return buf;
}

export function dataBytes(data: EncodeInput["data"], i: number): Uint8Array {
  if (ArrayBuffer.isView(data)) return bytesOf(data);
  if (typeof data === "object" && data !== null) {
    if ("bits" in data && data.bits instanceof Uint16Array) return bytesOf(data.bits);
    if ("data" in data && ArrayBuffer.isView(data.data)) return bytesOf(data.data);
  }
  throw new InvalidArgumentError(`objects[${i}].data must be an ArrayBufferView`);
}

/** The descriptor with the defaults of EncodeDescriptor filled in. */
export function fullDescriptor(d: EncodeDescriptor, i: number): Record<string, unknown> {
  if (typeof d !== "object" || d === null) throw new InvalidArgumentError(`objects[${i}].descriptor is missing`);
  if (!Array.isArray(d.shape)) throw new InvalidArgumentError(`objects[${i}].descriptor.shape must be an array`);
  if (!isDtype(d.dtype)) throw new InvalidArgumentError(`objects[${i}].descriptor.dtype ${JSON.stringify(d.dtype)} is not a dtype`);
  const shape = d.shape;
  let strides = d.strides;
  if (strides === undefined) {
    strides = new Array<number>(shape.length);
    let s = 1;
    for (let k = shape.length - 1; k >= 0; k--) {
      strides[k] = s;
      s *= Number(shape[k]);
    }
  }
  // `hash` is what decode reports about a frame, not an encoding parameter.
  const { hash: _hash, ...rest } = d;
  return {
    type: "ntensor", encoding: "none", filter: "none", compression: "none", byte_order: "little",
    ...rest, ndim: d.ndim ?? shape.length, shape, strides,
  };
}

/** metadata_json of spec 04 C.3: `descriptors` plus the caller's metadata. */
function metadataJson(metadata: GlobalMetadata, descriptors: Record<string, unknown>[]): string {
  if (typeof metadata !== "object" || metadata === null || Array.isArray(metadata)) {
    throw new InvalidArgumentError("metadata must be an object");
  }
  if ("_reserved_" in metadata) {
    throw new InvalidArgumentError("metadata: _reserved_ is written by the library and cannot be given");
  }
  if ("descriptors" in metadata) {
    throw new InvalidArgumentError("metadata: descriptors come from the objects, not the metadata");
  }
  return toJson({ ...metadata, descriptors });
}

function hashName(h: "xxh3" | false | undefined): string {
  if (h === undefined || h === "xxh3") return "xxh3";
  if (h === false) return "none";
  throw new InvalidArgumentError(`hash must be 'xxh3' or false, got ${JSON.stringify(h)}`);
}

interface Marshalled {
  json: number;
  ptrs: number;
  lens: number;
  n: number;
}

function marshalObjects(
  s: Scope, metadata: GlobalMetadata, objects: readonly (EncodeInput | PreEncodedInput)[],
): Marshalled {
  if (!Array.isArray(objects)) throw new InvalidArgumentError("objects must be an array");
  const descriptors = objects.map((o, i) => fullDescriptor(o.descriptor, i));
  const json = s.string(metadataJson(metadata, descriptors));
  const ptrs: number[] = [];
  const lens: number[] = [];
  objects.forEach((o, i) => {
    const b = dataBytes(o.data, i);
    ptrs.push(s.bytes(b));
    lens.push(b.byteLength);
  });
  return { json, ptrs: s.u32s(ptrs), lens: s.u32s(lens), n: objects.length };
}

// ---------------------------------------------------------------------------
// Encode.

/** Encodes one message (spec 07 G.3 `encode`). */
export function encode(metadata: GlobalMetadata, objects: readonly EncodeInput[], options: EncodeOptions = {}): Uint8Array {
  return withScope((s) => {
    const m = s.m;
    const a = marshalObjects(s, metadata, objects);
    // TgmEncodeMaskOptions (wasm32): bool allow_nan @0, bool allow_inf @1,
    // three const char* @4, @8, @12, ptrdiff_t small_mask_threshold_bytes @16.
    const opts = s.zeros(20);
    const view = new DataView(m.HEAPU8.buffer);
    view.setUint8(opts, options.allowNan ? 1 : 0);
    view.setUint8(opts + 1, options.allowInf ? 1 : 0);
    const method = (x: string | undefined) => (x === undefined ? 0 : s.string(x));
    const nan = method(options.nanMaskMethod);
    const pos = method(options.posInfMaskMethod);
    const neg = method(options.negInfMaskMethod);
    const dv = new DataView(m.HEAPU8.buffer);
    dv.setUint32(opts + 4, nan, true);
    dv.setUint32(opts + 8, pos, true);
    dv.setUint32(opts + 12, neg, true);
    dv.setInt32(opts + 16, options.smallMaskThresholdBytes ?? -1, true);
    const out = s.zeros(8);
    check(m, fn(m, "encode_with_options")(a.json, a.ptrs, a.lens, a.n, s.string(hashName(options.hash)), 0, opts, out));
    return takeBytes(m, out);
  });
}

/** Encodes objects whose payloads are already encoded (spec 07 G.3 `encodePreEncoded`). */
export function encodePreEncoded(
  metadata: GlobalMetadata, objects: readonly PreEncodedInput[], options: EncodePreEncodedOptions = {},
): Uint8Array {
  return withScope((s) => {
    const m = s.m;
    objects.forEach((o, i) => asBytes(o.data, `objects[${i}].data`));
    const a = marshalObjects(s, metadata, objects);
    const out = s.zeros(8);
    check(m, fn(m, "encode_pre_encoded")(a.json, a.ptrs, a.lens, a.n, s.string(hashName(options.hash)), 0, out));
    return takeBytes(m, out);
  });
}

// ---------------------------------------------------------------------------
// Decode.

/** One decoded object (spec 07 G.4). */
export interface DecodedObject {
  readonly descriptor: DataObjectDescriptor;
  readonly byteLength: number;
  /** The elements, copied to the JavaScript heap. */
  data(): TypedArray;
  /** Zero-copy view over WebAssembly memory: invalid after `close()` or when the memory grows. */
  dataView(): TypedArray;
}

/** A decoded message (spec 07 G.4); `close()` frees its WebAssembly memory. */
export interface DecodedMessage {
  readonly metadata: GlobalMetadata;
  readonly objects: readonly DecodedObject[];
  close(): void;
}

const messages = new FinalizationRegistry<number>((handle) => {
  fn(wasm(), "message_free")(handle);
});

class Message implements DecodedMessage {
  readonly metadata: GlobalMetadata;
  readonly objects: readonly DecodedObject[];
  private handle: number;
  private readonly m: WasmModule;

  constructor(m: WasmModule, handle: number, metadata?: GlobalMetadata) {
    this.m = m;
    this.handle = handle;
    try {
      this.metadata = metadata ?? messageMetadata(m, handle);
      const count = fn(m, "message_num_decoded")(handle) >>> 0;
      const objects: DecodedObject[] = [];
      for (let i = 0; i < count; i++) objects.push(this.object(i));
      this.objects = objects;
    } catch (e) {
      fn(m, "message_free")(handle);
      throw e;
    }
    messages.register(this, handle, this);
  }

  private bytes(i: number): Uint8Array {
    if (this.handle === 0) throw new InvalidArgumentError("tensogram: decoded message used after close()");
    return withScope((s) => {
      const len = s.zeros(4);
      const p = fn(this.m, "object_data")(this.handle, i, len) >>> 0;
      return new Uint8Array(this.m.HEAPU8.buffer, p, u32At(this.m, len));
    });
  }

  private object(i: number): DecodedObject {
    const text = stringAt(this.m, fn(this.m, "object_descriptor_json")(this.handle, i) >>> 0);
    if (text === null) throw new InvalidArgumentError(`object ${i} has no descriptor`);
    const descriptor = fromJson(text) as unknown as DataObjectDescriptor;
    // The frame's stored hash (spec 01 §6), as the reference's descriptors carry it.
    const hash = stringAt(this.m, fn(this.m, "object_hash_value")(this.handle, i) >>> 0);
    if (hash !== null) descriptor.hash = { type: "xxh3", value: hash };
    const dtype = descriptor.dtype as Dtype;
    const byteLength = this.bytes(i).byteLength;
    return {
      descriptor,
      byteLength,
      data: () => typedArrayFor(dtype, this.bytes(i), true),
      dataView: () => typedArrayFor(dtype, this.bytes(i), false),
    };
  }

  close(): void {
    if (this.handle === 0) return;
    messages.unregister(this);
    fn(this.m, "message_free")(this.handle);
    this.handle = 0;
  }
}

/** A DecodedMessage over a tgm_message_t handle (owned from now on); `metadata` replaces the handle's. */
export function wrapMessage(m: WasmModule, handle: number, metadata?: GlobalMetadata): DecodedMessage {
  return new Message(m, handle, metadata);
}

function metadataFromHandle(m: WasmModule, meta: number): GlobalMetadata {
  try {
    const text = stringAt(m, fn(m, "metadata_to_json")(meta) >>> 0);
    if (text === null) check(m, 2);
    const g = fromJson(text as string) as GlobalMetadata;
    return { version: WIRE_VERSION, ...g };
  } finally {
    fn(m, "metadata_free")(meta);
  }
}

function messageMetadata(m: WasmModule, handle: number): GlobalMetadata {
  return withScope((s) => {
    const out = s.zeros(4);
    check(m, fn(m, "message_metadata")(handle, out));
    return metadataFromHandle(m, u32At(m, out));
  });
}

function decodeWith(buf: Uint8Array, call: (s: Scope, p: number, out: number) => number): DecodedMessage {
  asBytes(buf);
  const m = wasm();
  const handle = withScope((s) => {
    const p = s.bytes(buf);
    const out = s.zeros(4);
    check(m, call(s, p, out));
    return u32At(m, out);
  });
  return new Message(m, handle);
}

/** Decodes every object of one message (spec 07 G.3 `decode`). */
export function decode(buf: Uint8Array, opts: DecodeOptions = {}): DecodedMessage {
  return decodeWith(buf, (s, p, out) => {
    const mask = s.zeros(1);
    s.m.HEAPU8[mask] = opts.restoreNonFinite === false ? 0 : 1;
    return fn(s.m, "decode_with_options")(p, buf.byteLength, 1, 0, opts.verifyHash ? 1 : 0, mask, out);
  });
}

export function checkIndex(index: unknown, what: string, max = Number.MAX_SAFE_INTEGER): number {
  if (typeof index !== "number" || !Number.isInteger(index) || index < 0 || index > max) {
    throw new InvalidArgumentError(`${what} must be a non-negative integer, got ${String(index)}`);
  }
  return index;
}

/** Decodes one object (spec 07 G.3 `decodeObject`). */
export function decodeObject(buf: Uint8Array, index: number, opts: DecodeOptions = {}): DecodedMessage {
  checkIndex(index, "index", 0xffffffff);
  if (opts.restoreNonFinite === false) {
    throw new InvalidArgumentError("decodeObject: restoreNonFinite: false is not supported by this build");
  }
  return decodeWith(buf, (s, p, out) =>
    fn(s.m, "decode_object")(p, buf.byteLength, index, 1, 0, opts.verifyHash ? 1 : 0, out));
}

/** The global metadata of one message, with `version: 3` (spec 07 G.3 `decodeMetadata`). */
export function decodeMetadata(buf: Uint8Array): GlobalMetadata {
  asBytes(buf);
  return withScope((s) => {
    const m = s.m;
    const p = s.bytes(buf);
    const out = s.zeros(4);
    check(m, fn(m, "decode_metadata")(p, buf.byteLength, out));
    return metadataFromHandle(m, u32At(m, out));
  });
}

export interface DecodeRangeResult {
  descriptor: DataObjectDescriptor;
  parts: TypedArray[];
}

export function toU64(x: number | bigint, what: string): bigint {
  if (typeof x === "bigint") {
    if (x < 0n || x >= 1n << 64n) throw new InvalidArgumentError(`${what} out of range: ${x}`);
    return x;
  }
  if (!Number.isSafeInteger(x) || x < 0) throw new InvalidArgumentError(`${what} must be a non-negative safe integer or bigint, got ${x}`);
  return BigInt(x);
}

/** Element ranges of one object (spec 07 G.3 `decodeRange`). */
export function decodeRange(
  buf: Uint8Array, objectIndex: number, ranges: readonly RangePair[], opts: DecodeRangeOptions = {},
): DecodeRangeResult {
  checkIndex(objectIndex, "objectIndex", 0xffffffff);
  if (!Array.isArray(ranges)) throw new InvalidArgumentError("ranges must be an array of [offset, count]");
  const offsets = ranges.map((r, i) => toU64(r[0], `ranges[${i}][0]`));
  const counts = ranges.map((r, i) => toU64(r[1], `ranges[${i}][1]`));
  // The descriptor (for the dtype of the parts) comes from a one-object decode.
  const one = decodeObject(buf, objectIndex);
  const descriptor = one.objects[0]!.descriptor;
  one.close();
  const parts = withScope((s) => {
    const m = s.m;
    const p = s.bytes(buf);
    const slots = opts.join ? 1 : Math.max(ranges.length, 1);
    const out = s.zeros(8 * slots);
    const count = s.zeros(4);
    check(m, fn(m, "decode_range")(p, buf.byteLength, objectIndex, s.u64s(offsets), s.u64s(counts), ranges.length,
      1, 0, opts.join ? 1 : 0, out, count));
    const n = u32At(m, count);
    const raw: Uint8Array[] = [];
    for (let i = 0; i < n; i++) raw.push(takeBytes(m, out + 8 * i));
    return raw;
  });
  return { descriptor, parts: parts.map((b) => typedArrayFor(descriptor.dtype, b, false)) };
}

// ---------------------------------------------------------------------------
// Scan, hash, validation, doctor, simple packing.

/** Positions of the messages in `buf`; garbage between them is skipped (spec 07 G.3 `scan`). */
export function scan(buf: Uint8Array): MessagePosition[] {
  asBytes(buf);
  return withScope((s) => {
    const m = s.m;
    const p = s.bytes(buf);
    const out = s.zeros(4);
    check(m, fn(m, "scan")(p, buf.byteLength, out));
    const result = u32At(m, out);
    try {
      const n = fn(m, "scan_count")(result) >>> 0;
      const entry = s.zeros(8);
      const positions: MessagePosition[] = [];
      for (let i = 0; i < n; i++) {
        // tgm_scan_entry returns a struct: wasm32 passes the result address first.
        fn(m, "scan_entry")(entry, result, i);
        positions.push({ offset: u32At(m, entry), length: u32At(m, entry + 4) });
      }
      return positions;
    } finally {
      fn(m, "scan_free")(result);
    }
  });
}

/** xxh3-64 of `data` as 16 hex digits (spec 07 G.3 `computeHash`). */
export function computeHash(data: Uint8Array, algo: HashAlgorithm = "xxh3"): string {
  asBytes(data, "data");
  if (algo !== "xxh3") throw new InvalidArgumentError(`unknown hash algorithm ${JSON.stringify(algo)}`);
  return withScope((s) => {
    const out = s.zeros(8);
    check(s.m, fn(s.m, "compute_hash")(s.bytes(data), data.byteLength, s.string(algo), out));
    return new TextDecoder().decode(takeBytes(s.m, out));
  });
}

export type ValidationReport = Record<string, CborValue>;

/** Validates one message; never throws for bad content (spec 07 G.3 `validate`). */
export function validate(buf: Uint8Array, opts: ValidateOptions = {}): ValidationReport {
  asBytes(buf);
  const mode = checkMode(opts);
  return withScope((s) => {
    const out = s.zeros(8);
    check(s.m, fn(s.m, "validate")(s.bytes(buf), buf.byteLength, s.string(mode), opts.canonical ? 1 : 0, out));
    return fromJson(new TextDecoder().decode(takeBytes(s.m, out))) as ValidationReport;
  });
}

/** A gap outside every message: `"N unrecognized bytes at offset X"`, trailing bytes, no message at all. */
export interface FileIssue {
  byte_offset: number;
  length: number;
  description: string;
}

/** The report on a buffer or file of concatenated messages. */
export interface FileValidationReport {
  file_issues: FileIssue[];
  messages: ValidationReport[];
}

function checkMode(opts: ValidateOptions): string {
  const mode = opts.mode ?? "default";
  if (!["quick", "default", "checksum", "full"].includes(mode)) {
    throw new InvalidArgumentError(`unknown validation mode ${JSON.stringify(mode)}`);
  }
  return mode;
}

/**
 * Scans `buf` and validates every message; bytes outside messages become
 * `file_issues` (the C++ validate_buffer, as `tensogram validate` runs it on a file).
 */
export function validateBuffer(buf: Uint8Array, opts: ValidateOptions = {}): FileValidationReport {
  asBytes(buf);
  const mode = checkMode(opts);
  return withScope((s) => {
    const out = s.zeros(8);
    check(s.m, fn(s.m, "validate_buffer")(s.bytes(buf), buf.byteLength, s.string(mode), opts.canonical ? 1 : 0, out));
    return fromJson(new TextDecoder().decode(takeBytes(s.m, out))) as unknown as FileValidationReport;
  });
}

/** `validateBuffer` of a whole file; Node only (elsewhere an `IoError`). */
export async function validateFile(path: string | URL, opts: ValidateOptions = {}): Promise<FileValidationReport> {
  checkMode(opts);
  const bytes = await readNodeFile(path);
  return validateBuffer(bytes, opts);
}

/** The whole file at `path` (Node's fs), else an IoError. */
export async function readNodeFile(path: string | URL, signal?: AbortSignal): Promise<Uint8Array> {
  if (typeof path !== "string" && !(path instanceof URL)) throw new InvalidArgumentError("path must be a string or URL");
  const isNode = typeof process !== "undefined" && typeof process.versions?.node === "string";
  if (!isNode) throw new IoError("reading files needs Node.js (use TensogramFile.fromUrl or fromBytes in a browser)");
  const fs = await import("node:fs/promises");
  try {
    const b = await fs.readFile(path, signal ? { signal } : {});
    return new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
  } catch (e) {
    if ((e as { name?: string }).name === "AbortError") throw e;
    throw new IoError(`cannot read ${String(path)}: ${(e as Error).message}`);
  }
}

/** The environment report of this build: codecs built in, self-test (spec 07 G.3 `doctor`). */
export function doctor(): Record<string, CborValue> {
  return withScope((s) => {
    const out = s.zeros(8);
    check(s.m, fn(s.m, "doctor_to_json")(out));
    return fromJson(new TextDecoder().decode(takeBytes(s.m, out))) as Record<string, CborValue>;
  });
}

/** simple_packing parameters for `values` (spec 07 G.3 `simplePackingComputeParams`). */
export function simplePackingComputeParams(
  values: Float64Array | readonly number[], bitsPerValue: number, decimalScaleFactor = 0,
): SimplePackingParams {
  if (!Number.isInteger(bitsPerValue) || bitsPerValue < 0 || bitsPerValue > 64) {
    throw new InvalidArgumentError(`bitsPerValue must be an integer in 0..64, got ${bitsPerValue}`);
  }
  if (!Number.isInteger(decimalScaleFactor) || Math.abs(decimalScaleFactor) > 0x7fffffff) {
    throw new InvalidArgumentError(`decimalScaleFactor must be a 32-bit integer, got ${decimalScaleFactor}`);
  }
  const v = values instanceof Float64Array ? values : Float64Array.from(values);
  for (const x of v) {
    if (!Number.isFinite(x)) throw new InvalidArgumentError("simple_packing values must be finite");
  }
  return withScope((s) => {
    const m = s.m;
    const ref = s.zeros(8);
    const bsf = s.zeros(4);
    check(m, fn(m, "simple_packing_compute_params")(s.bytes(bytesOf(v)), v.length, bitsPerValue, decimalScaleFactor, ref, bsf));
    return {
      sp_reference_value: f64At(m, ref),
      sp_binary_scale_factor: i32At(m, bsf),
      sp_decimal_scale_factor: decimalScaleFactor,
      sp_bits_per_value: bitsPerValue,
    };
  });
}
