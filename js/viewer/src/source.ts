// Where a file's bytes come from. The page only needs `readAll` today (one
// whole read: a local File, or one GET of a URL). The interface has room for
// ranged reads: when @tensogram/tensogram's TensogramFile.fromUrl (HTTP Range
// requests, one per message/object) is available, a RangeSource implements
// `readRange` and the worker asks for the messages it shows instead of the
// whole file.

export interface ViewerSource {
  /** What the page shows as the file's name. */
  readonly name: string;
  /** Size in bytes when known before reading. */
  readonly size: number | undefined;
  /** The whole file. */
  readAll(signal?: AbortSignal): Promise<ArrayBuffer>;
  /** Bytes [offset, offset + length), for sources that support ranged reads. */
  readRange?(offset: number, length: number, signal?: AbortSignal): Promise<ArrayBuffer>;
}

/** Largest file read whole into the page (bytes). */
export const WHOLE_FILE_BUDGET = 2 * 1024 * 1024 * 1024 - 1;

function tooBig(name: string, size: number): Error {
  return new Error(
    `${name} is ${(size / 2 ** 20).toFixed(0)} MiB: larger than this viewer reads in one piece ` +
      `(${(WHOLE_FILE_BUDGET / 2 ** 30).toFixed(0)} GiB)`,
  );
}

/** A file chosen with the picker or dropped on the page. */
export class LocalFileSource implements ViewerSource {
  readonly name: string;
  readonly size: number;
  constructor(private readonly file: Blob & { name?: string }) {
    this.name = file.name ?? "file";
    this.size = file.size;
  }
  async readAll(): Promise<ArrayBuffer> {
    if (this.size > WHOLE_FILE_BUDGET) throw tooBig(this.name, this.size);
    return this.file.arrayBuffer();
  }
  async readRange(offset: number, length: number): Promise<ArrayBuffer> {
    return this.file.slice(offset, offset + length).arrayBuffer();
  }
}

/** A file at a URL, fetched with one GET. */
export class UrlSource implements ViewerSource {
  readonly name: string;
  readonly size: number | undefined = undefined;
  constructor(private readonly url: string) {
    let name = url;
    try {
      const u = new URL(url, globalThis.location?.href);
      name = decodeURIComponent(u.pathname.split("/").pop() || u.host);
    } catch {
      /* keep the text as given */
    }
    this.name = name;
  }
  async readAll(signal?: AbortSignal): Promise<ArrayBuffer> {
    let r: Response;
    try {
      r = await fetch(this.url, signal ? { signal } : {});
    } catch (e) {
      throw new Error(`cannot fetch ${this.url}: ${(e as Error).message} (server down, wrong address or no CORS)`);
    }
    if (!r.ok) throw new Error(`cannot fetch ${this.url}: HTTP ${r.status} ${r.statusText}`.trim());
    const len = Number(r.headers.get("content-length") ?? NaN);
    if (Number.isFinite(len) && len > WHOLE_FILE_BUDGET) throw tooBig(this.name, len);
    return r.arrayBuffer();
  }
}
