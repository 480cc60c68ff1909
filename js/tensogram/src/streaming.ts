// Streaming: StreamingEncoder writes one message object by object through the
// core's streaming encoder (tgm_streaming_encoder_create_in_memory: buffered,
// with total_length back-filled, or frame by frame to `onBytes`); decodeStream
// reads messages from a ReadableStream, finding their boundaries with the
// core's preamble reader and scan and decoding each with the core's decoder.

import { check, fn, takeBytes, u32At, withScope, type Scope } from "./abi.js";
import { decode, fullDescriptor, scan, dataBytes, type DecodedMessage } from "./api.js";
import type { TypedArray } from "./dtype.js";
import { InvalidArgumentError, StreamingLimitError, TensogramError } from "./errors.js";
import { wasm, type WasmModule } from "./init.js";
import { toJson } from "./json.js";
import type {
  BaseEntry, DataObjectDescriptor, EncodeDescriptor, EncodeInput, EncodeOptions, GlobalMetadata,
} from "./types.js";

export interface StreamingEncoderOptions extends EncodeOptions {
  /** Receives every chunk as it is produced; `finish()` then returns an empty array. */
  onBytes?: (chunk: Uint8Array) => void;
}

const encoders = new FinalizationRegistry<number>((handle) => {
  fn(wasm(), "streaming_encoder_free")(handle);
});

function hashName(h: "xxh3" | false | undefined): string {
  if (h === undefined || h === "xxh3") return "xxh3";
  if (h === false) return "none";
  throw new InvalidArgumentError(`hash must be 'xxh3' or false, got ${JSON.stringify(h)}`);
}

/** TgmEncodeMaskOptions (wasm32) in `s`. */
function maskOptions(s: Scope, o: EncodeOptions): number {
  const p = s.zeros(20);
  const dv = new DataView(s.m.HEAPU8.buffer);
  dv.setUint8(p, o.allowNan ? 1 : 0);
  dv.setUint8(p + 1, o.allowInf ? 1 : 0);
  const method = (x: string | undefined) => (x === undefined ? 0 : s.string(x));
  const nan = method(o.nanMaskMethod);
  const pos = method(o.posInfMaskMethod);
  const neg = method(o.negInfMaskMethod);
  const dv2 = new DataView(s.m.HEAPU8.buffer);
  dv2.setUint32(p + 4, nan, true);
  dv2.setUint32(p + 8, pos, true);
  dv2.setUint32(p + 12, neg, true);
  dv2.setInt32(p + 16, o.smallMaskThresholdBytes ?? -1, true);
  return p;
}

/** One message written object by object (the core's streaming layout: footer index). */
export class StreamingEncoder {
  private handle: number;
  private readonly m: WasmModule;
  private readonly onBytes: ((chunk: Uint8Array) => void) | undefined;

  constructor(metadata: GlobalMetadata, opts: StreamingEncoderOptions = {}) {
    if (typeof metadata !== "object" || metadata === null || Array.isArray(metadata)) {
      throw new InvalidArgumentError("metadata must be an object");
    }
    if ("_reserved_" in metadata) {
      throw new InvalidArgumentError("metadata: _reserved_ is written by the library and cannot be given");
    }
    if (opts.onBytes !== undefined && typeof opts.onBytes !== "function") {
      throw new InvalidArgumentError("onBytes must be a function");
    }
    this.m = wasm();
    this.onBytes = opts.onBytes;
    this.handle = withScope((s) => {
      const out = s.zeros(4);
      check(s.m, fn(s.m, "streaming_encoder_create_in_memory")(s.string(toJson(metadata)), s.string(hashName(opts.hash)),
        maskOptions(s, opts), this.onBytes ? 0 : 1, out));
      return u32At(s.m, out);
    });
    encoders.register(this, this.handle, this);
    this.deliver();
  }

  private live(): number {
    if (this.handle === 0) throw new InvalidArgumentError("tensogram: StreamingEncoder used after finish() or close()");
    return this.handle;
  }
  private take(): Uint8Array {
    return withScope((s) => {
      const out = s.zeros(8);
      check(s.m, fn(s.m, "streaming_encoder_take")(this.handle, out));
      return takeBytes(s.m, out);
    });
  }
  /** onBytes mode: hands what the core produced to the callback. */
  private deliver(): void {
    if (!this.onBytes) return;
    const chunk = this.take();
    if (chunk.byteLength > 0) this.onBytes(chunk);
  }
  private write(name: string, descriptor: EncodeDescriptor | DataObjectDescriptor, data: Uint8Array): void {
    const h = this.live();
    withScope((s) => {
      const d = toJson(fullDescriptor(descriptor as EncodeDescriptor, this.objectCount));
      check(s.m, fn(s.m, name)(h, s.string(d), s.bytes(data), data.byteLength));
    });
    this.deliver();
  }

  /** Per-object metadata for the next object (merged into its base entry). */
  writePreceder(entry: BaseEntry): void {
    const h = this.live();
    if (typeof entry !== "object" || entry === null || Array.isArray(entry)) {
      throw new InvalidArgumentError("preceder entry must be an object");
    }
    if ("_reserved_" in entry) throw new InvalidArgumentError("preceder entry: _reserved_ cannot be given");
    withScope((s) => check(s.m, fn(s.m, "streaming_encoder_write_preceder")(h, s.string(toJson(entry)))));
    this.deliver();
  }
  writeObject(descriptor: EncodeDescriptor | DataObjectDescriptor, data: EncodeInput["data"]): void {
    this.write("streaming_encoder_write", descriptor, dataBytes(data, this.objectCount));
  }
  writeObjectPreEncoded(descriptor: EncodeDescriptor | DataObjectDescriptor, data: Uint8Array): void {
    if (!(data instanceof Uint8Array)) throw new InvalidArgumentError("data must be a Uint8Array");
    this.write("streaming_encoder_write_pre_encoded", descriptor, data);
  }
  get objectCount(): number {
    return fn(this.m, "streaming_encoder_count")(this.live()) >>> 0;
  }
  get bytesWritten(): number {
    return Number(fn(this.m, "streaming_encoder_bytes_written")(this.live()));
  }
  /** True in onBytes mode. */
  get streaming(): boolean {
    this.live();
    return this.onBytes !== undefined;
  }
  /** Completes the message: buffered mode returns it, onBytes mode delivers the rest and returns an empty array. */
  finish(): Uint8Array {
    const h = this.live();
    check(this.m, fn(this.m, "streaming_encoder_finish")(h));
    try {
      if (this.onBytes) {
        this.deliver();
        return new Uint8Array(0);
      }
      return this.take();
    } finally {
      this.close();
    }
  }
  /** Abandons the message (idempotent). */
  close(): void {
    if (this.handle === 0) return;
    encoders.unregister(this);
    fn(this.m, "streaming_encoder_free")(this.handle);
    this.handle = 0;
  }
}

// ---------------------------------------------------------------------------

export interface StreamDecodeError {
  message: string;
  skippedCount: number;
}

export interface DecodeStreamOptions {
  signal?: AbortSignal;
  /** Largest number of bytes buffered while waiting for a message to complete (default 256 MiB). */
  maxBufferBytes?: number;
  onError?: (err: StreamDecodeError) => void;
}

/** One decoded object of a streamed message. */
export interface DecodedFrame {
  readonly descriptor: DataObjectDescriptor;
  readonly baseEntry: BaseEntry | null;
  readonly byteLength: number;
  data(): TypedArray;
  dataView(): TypedArray;
  close(): void;
}

const MAGIC = [0x54, 0x45, 0x4e, 0x53, 0x4f, 0x47, 0x52, 0x4d]; // "TENSOGRM"

/** The core's preamble reader: total_length of the message at the start of `head`, or null. */
function totalLength(head: Uint8Array): number | null {
  if (head.byteLength < 24 || MAGIC.some((b, i) => head[i] !== b)) return null;
  try {
    return withScope((s) => {
      const total = s.zeros(8);
      const flags = s.zeros(2);
      check(s.m, fn(s.m, "read_preamble")(s.bytes(head.subarray(0, 24)), 24, total, flags));
      return Number(new DataView(s.m.HEAPU8.buffer).getBigUint64(total, true));
    });
  } catch (e) {
    if (e instanceof TensogramError) return null;
    throw e;
  }
}

function framesOf(msg: DecodedMessage): DecodedFrame[] {
  let open = msg.objects.length;
  return msg.objects.map((o, i) => {
    let closed = false;
    const live = () => {
      if (closed) throw new InvalidArgumentError("tensogram: DecodedFrame used after close()");
    };
    const base = msg.metadata.base?.[i];
    return {
      descriptor: o.descriptor,
      baseEntry: base === undefined ? null : base,
      byteLength: o.byteLength,
      data: () => (live(), o.data()),
      dataView: () => (live(), o.dataView()),
      close: () => {
        if (closed) return;
        closed = true;
        if (--open === 0) msg.close();
      },
    };
  });
}

/** Bytes received and not yet consumed, in a buffer that grows by doubling. */
class Pending {
  private data = new Uint8Array(64 * 1024);
  length = 0;
  append(chunk: Uint8Array): void {
    if (this.length + chunk.byteLength > this.data.byteLength) {
      const grown = new Uint8Array(Math.max(2 * this.data.byteLength, this.length + chunk.byteLength));
      grown.set(this.data.subarray(0, this.length));
      this.data = grown;
    }
    this.data.set(chunk, this.length);
    this.length += chunk.byteLength;
  }
  view(): Uint8Array {
    return this.data.subarray(0, this.length);
  }
  consume(n: number): void {
    if (n <= 0) return;
    this.data.copyWithin(0, n, this.length);
    this.length -= n;
  }
}

/**
 * Decodes the messages arriving on `stream`, yielding one frame per data
 * object as soon as its message is complete. A message that fails to decode
 * is skipped and reported through `onError`.
 */
export async function* decodeStream(
  stream: ReadableStream<Uint8Array>, options: DecodeStreamOptions = {},
): AsyncGenerator<DecodedFrame, void, void> {
  if (!stream || typeof (stream as ReadableStream).getReader !== "function") {
    throw new InvalidArgumentError("stream must be a ReadableStream");
  }
  const max = options.maxBufferBytes ?? 256 * 1024 * 1024;
  if (!Number.isSafeInteger(max) || max <= 0) throw new InvalidArgumentError(`maxBufferBytes must be a positive integer, got ${max}`);
  const reader = stream.getReader();
  const abort = () => void reader.cancel().catch(() => undefined);
  options.signal?.addEventListener("abort", abort, { once: true });
  const pending = new Pending();
  let skipped = 0;
  // Length at the last scan that found no whole message: a message of
  // unknown length is looked for again once the buffer has doubled (or the
  // stream ended), so the scans cost O(n) over the stream, not O(n²).
  let scannedAt = 0;
  try {
    for (;;) {
      options.signal?.throwIfAborted();
      const { done, value } = await reader.read();
      if (value && value.byteLength > 0) pending.append(value);
      const buf = pending.view();
      // A message whose preamble announces its length is scanned only once whole.
      const want = totalLength(buf);
      if (want !== null && want > max) throw new StreamingLimitError(`message of ${want} bytes exceeds maxBufferBytes (${max})`);
      const waiting = want !== null && want > 0 ? buf.byteLength < want : scannedAt > 0 && buf.byteLength < 2 * scannedAt;
      if (!done && waiting) {
        if (buf.byteLength > max) throw new StreamingLimitError(`${buf.byteLength} bytes buffered without a complete message (maxBufferBytes ${max})`);
        continue;
      }
      const found = scan(buf);
      let consumed = 0;
      const messages: DecodedMessage[] = [];
      for (const p of found) {
        consumed = p.offset + p.length;
        try {
          messages.push(decode(buf.subarray(p.offset, p.offset + p.length)));
        } catch (e) {
          if (!(e instanceof TensogramError)) throw e;
          skipped++;
          options.onError?.({ message: e.message, skippedCount: skipped });
        }
      }
      pending.consume(consumed);
      scannedAt = consumed > 0 ? 0 : buf.byteLength;
      for (const msg of messages) {
        for (const frame of framesOf(msg)) yield frame;
      }
      if (done) {
        if (pending.length > 0) {
          skipped++;
          options.onError?.({ message: `${pending.length} bytes at the end of the stream are not a complete message`, skippedCount: skipped });
        }
        return;
      }
      if (pending.length > max) {
        throw new StreamingLimitError(`${pending.length} bytes buffered without a complete message (maxBufferBytes ${max})`);
      }
    }
  } finally {
    options.signal?.removeEventListener("abort", abort);
    reader.releaseLock();
  }
}

