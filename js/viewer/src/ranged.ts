// Byte access for the decoding worker: a picked/dropped file (a Blob, read
// with Blob.slice) or a URL (@tensogram/metatensor's HttpSource: one Range
// request per read, the first 64 KiB kept), behind one interface, and a
// fetch() over it so that @tensogram/tensogram's TensogramFile.fromUrl reads
// a local file exactly as it reads a remote one: HEAD for the size, one
// Range GET per read, never the whole file unless it falls back to that.

/** Random access to the bytes of a file. */
export interface Reader {
  readonly size: number;
  read(offset: number, length: number): Promise<Uint8Array>;
}

/** A Blob read on demand: each read is one Blob.slice, nothing is copied up front. */
export function blobReader(blob: Blob): Reader {
  return {
    size: blob.size,
    read: async (offset, length) => new Uint8Array(await blob.slice(offset, offset + length).arrayBuffer()),
  };
}

import type { ReadStats } from "./protocol.js";

/** "1536 MiB", or bytes below 1 MiB. */
function sizeText(n: number): string {
  return n >= 2 ** 20 ? `${(n / 2 ** 20).toFixed(0)} MiB` : `${n} bytes`;
}

/**
 * A fetch() that answers HEAD and single-range GETs ("bytes=a-b") from a
 * Reader. A GET without a range (TensogramFile.fromUrl's fallback when the
 * file holds a streaming message without its length) is answered only up to
 * `wholeBudget` bytes: beyond, an error says why.
 */
export function readerFetch(reader: Reader, name: string, wholeBudget: number, stats: ReadStats): typeof fetch {
  const f = async (_url: RequestInfo | URL, init?: RequestInit): Promise<Response> => {
    if ((init?.method ?? "GET").toUpperCase() === "HEAD") {
      return new Response(null, {
        status: 200,
        headers: { "Content-Length": String(reader.size), "Accept-Ranges": "bytes" },
      });
    }
    const range = new Headers(init?.headers).get("Range");
    let offset = 0;
    let length = reader.size;
    let status = 200;
    if (range !== null) {
      const m = /^bytes=(\d+)-(\d+)$/.exec(range);
      if (m === null) throw new Error(`unsupported range "${range}"`);
      offset = Number(m[1]);
      length = Math.min(Number(m[2]) + 1, reader.size) - offset;
      if (length <= 0) return new Response(null, { status: 416 });
      status = 206;
    } else if (reader.size > wholeBudget) {
      throw new Error(
        `${name} holds a streaming message without its length (total_length 0), found only by scanning the whole file, ` +
          `and at ${sizeText(reader.size)} too large to be scanned whole (limit ${sizeText(wholeBudget)})`,
      );
    }
    const bytes = await reader.read(offset, length);
    stats.reads++;
    stats.bytes += bytes.byteLength;
    stats.largest = Math.max(stats.largest, bytes.byteLength);
    return new Response(bytes as Uint8Array<ArrayBuffer>, { status });
  };
  return f as typeof fetch;
}
