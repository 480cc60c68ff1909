// Where the bytes of a file come from: memory, a Blob/File, an http(s) URL
// with Range requests (spec 06 §10.9), or (src/node.ts) a file handle.
import { MetatensorError } from "./errors.js";

/** Random access to the bytes of one file. */
export interface ByteSource {
  /** File size in bytes. */
  readonly size: number;
  /** Bytes [offset, offset + length); rejects with MT_BAD_RANGE / MT_CANCELLED. */
  read(offset: number, length: number, signal?: AbortSignal): Promise<Uint8Array>;
  /** The whole file, when it is in memory (reads are then zero-copy views). */
  readonly image?: Uint8Array;
  /** For messages: a path, a URL, "buffer". */
  readonly description: string;
  close?(): Promise<void>;
}

export function checkAbort(signal?: AbortSignal): void {
  if (signal?.aborted) throw new MetatensorError("MT_CANCELLED", "request cancelled", { cause: signal.reason });
}

function checkRange(size: number, offset: number, length: number, what: string): void {
  if (!(offset >= 0 && length >= 0 && offset + length <= size)) {
    throw new MetatensorError("MT_BAD_RANGE", `${what}: bytes [${offset}, ${offset + length}) outside a file of ${size} bytes`);
  }
}

/** A file held in memory; reads are subarray views (no copy). */
export class BufferSource implements ByteSource {
  readonly image: Uint8Array;
  readonly size: number;
  readonly description = "buffer";
  constructor(data: Uint8Array | ArrayBuffer) {
    this.image = data instanceof Uint8Array ? data : new Uint8Array(data);
    this.size = this.image.byteLength;
  }
  async read(offset: number, length: number, signal?: AbortSignal): Promise<Uint8Array> {
    checkAbort(signal);
    checkRange(this.size, offset, length, this.description);
    return this.image.subarray(offset, offset + length);
  }
}

/** A Blob or File (browser or Node 18+): each read slices the blob. */
export class BlobSource implements ByteSource {
  readonly size: number;
  readonly description: string;
  constructor(readonly blob: Blob) {
    this.size = blob.size;
    this.description = (blob as { name?: string }).name ?? "blob";
  }
  async read(offset: number, length: number, signal?: AbortSignal): Promise<Uint8Array> {
    checkAbort(signal);
    checkRange(this.size, offset, length, this.description);
    const buf = await this.blob.slice(offset, offset + length).arrayBuffer();
    checkAbort(signal);
    return new Uint8Array(buf);
  }
}

export interface HttpOptions {
  /** Bytes asked for by the first request (header guess). Default 65536. */
  headerGuess?: number;
  /** Extra request headers (authorisation...). */
  headers?: Record<string, string>;
  /** The fetch to use (default globalThis.fetch, Node 18+). */
  fetch?: typeof fetch;
  signal?: AbortSignal;
}

/** Counters of an HttpSource, for tests and diagnostics. */
export interface HttpStats {
  requests: number;
  bytes: number;
}

function parseContentRange(v: string | null): { start: number; end: number; total: number } | undefined {
  const m = v ? /^bytes (\d+)-(\d+)\/(\d+)$/.exec(v.trim()) : null;
  if (!m) return undefined;
  return { start: Number(m[1]), end: Number(m[2]), total: Number(m[3]) };
}

/**
 * A file behind an http(s) URL read with Range requests (§10.9): the first
 * request fetches a guessed prefix and learns the size; later reads send
 * one Range request each, pinned to the first response's ETag with If-Range.
 */
export class HttpSource implements ByteSource {
  readonly stats: HttpStats = { requests: 0, bytes: 0 };
  size = 0;
  readonly description: string;
  private etag: string | undefined;
  private prefix: Uint8Array = new Uint8Array(0);
  private readonly fetchFn: typeof fetch;

  private constructor(readonly url: string, readonly options: HttpOptions) {
    this.description = url;
    this.fetchFn = options.fetch ?? globalThis.fetch.bind(globalThis);
  }

  static async open(url: string, options: HttpOptions = {}): Promise<HttpSource> {
    const s = new HttpSource(url, options);
    await s.start(options.headerGuess ?? 65536, options.signal);
    return s;
  }

  private async request(start: number, endInclusive: number, signal?: AbortSignal): Promise<Response> {
    checkAbort(signal);
    const headers: Record<string, string> = { ...this.options.headers, Range: `bytes=${start}-${endInclusive}` };
    if (this.etag) headers["If-Range"] = this.etag;
    this.stats.requests++;
    try {
      return await this.fetchFn(this.url, { headers, signal });
    } catch (e) {
      if (signal?.aborted) throw new MetatensorError("MT_CANCELLED", `${this.url}: request cancelled`, { cause: e });
      throw new MetatensorError("MT_BAD_RANGE", `${this.url}: request for bytes ${start}-${endInclusive} failed: ${(e as Error).message}`, { cause: e });
    }
  }

  private async body(r: Response, signal?: AbortSignal): Promise<Uint8Array> {
    try {
      const b = new Uint8Array(await r.arrayBuffer());
      this.stats.bytes += b.byteLength;
      return b;
    } catch (e) {
      if (signal?.aborted) throw new MetatensorError("MT_CANCELLED", `${this.url}: request cancelled`, { cause: e });
      throw new MetatensorError("MT_BAD_RANGE", `${this.url}: reading the response failed: ${(e as Error).message}`, { cause: e });
    }
  }

  private async start(guess: number, signal?: AbortSignal): Promise<void> {
    const r = await this.request(0, Math.max(8, guess) - 1, signal);
    if (r.status === 404) throw new MetatensorError("MT_NOT_FOUND", `${this.url}: HTTP 404`);
    if (r.status === 416) {
      // Shorter than 8 bytes or empty: the base layer reports it (§2 rule 1).
      const cr = /\/(\d+)$/.exec(r.headers.get("content-range") ?? "");
      await r.arrayBuffer().catch(() => undefined);
      this.size = cr ? Number(cr[1]) : 0;
      this.prefix = new Uint8Array(0);
      if (this.size > 0) this.prefix = await this.read(0, this.size, signal);
      return;
    }
    if (r.status === 200) {
      // No range support: the whole file came back.
      this.prefix = await this.body(r, signal);
      this.size = this.prefix.byteLength;
      return;
    }
    if (r.status !== 206) {
      await r.arrayBuffer().catch(() => undefined);
      throw new MetatensorError("MT_BAD_RANGE", `${this.url}: HTTP ${r.status} for the header request`);
    }
    const cr = parseContentRange(r.headers.get("content-range"));
    if (!cr || cr.start !== 0) throw new MetatensorError("MT_PROTOCOL_ERROR", `${this.url}: 206 without a usable Content-Range`);
    this.etag = r.headers.get("etag") ?? undefined;
    this.size = cr.total;
    this.prefix = await this.body(r, signal);
    if (this.prefix.byteLength !== cr.end + 1) throw new MetatensorError("MT_PROTOCOL_ERROR", `${this.url}: short response body`);
  }

  async read(offset: number, length: number, signal?: AbortSignal): Promise<Uint8Array> {
    checkAbort(signal);
    checkRange(this.size, offset, length, this.url);
    if (offset + length <= this.prefix.byteLength) return this.prefix.subarray(offset, offset + length);
    if (length === 0) return new Uint8Array(0);
    const r = await this.request(offset, offset + length - 1, signal);
    if (r.status !== 206) {
      await r.arrayBuffer().catch(() => undefined);
      throw new MetatensorError("MT_BAD_RANGE", `${this.url}: HTTP ${r.status} for bytes ${offset}-${offset + length - 1}${r.status === 200 ? " (the file changed or ranges are not supported)" : ""}`);
    }
    const cr = parseContentRange(r.headers.get("content-range"));
    const b = await this.body(r, signal);
    if (!cr || cr.start !== offset || cr.end !== offset + length - 1 || cr.total !== this.size || b.byteLength !== length) {
      throw new MetatensorError("MT_PROTOCOL_ERROR", `${this.url}: response does not match the requested range ${offset}-${offset + length - 1}`);
    }
    return b;
  }
}

/** Anything the readers accept. */
export type Input = ByteSource | Uint8Array | ArrayBuffer | Blob | string | URL;

export async function toSource(input: Input, http?: HttpOptions): Promise<ByteSource> {
  if (input instanceof Uint8Array || input instanceof ArrayBuffer) return new BufferSource(input);
  if (typeof Blob !== "undefined" && input instanceof Blob) return new BlobSource(input);
  if (typeof input === "string" || input instanceof URL) {
    const url = String(input);
    if (/^https?:\/\//i.test(url)) return HttpSource.open(url, http);
    throw new MetatensorError("MT_INVALID_ARGUMENT", `${url}: not an http(s) URL (file paths: import { openFile } from "@tensogram/metatensor/node")`);
  }
  return input as ByteSource;
}
