// Where a file's bytes come from. A source hands the worker something it can
// read lazily: a Blob (a picked or dropped file: slices are read on demand,
// nothing is copied up front) or an absolute http(s) URL (read with HTTP
// Range requests, through @tensogram/metatensor's HttpSource: one request for
// the first 64 KiB, then one per range needed). The worker reads either
// format lazily from there (ranged.ts, worker.ts): metatensor files their
// header then each tensor shown; .tgm files their preambles and layouts, then
// each object shown (TensogramFile.fromUrl over the same reader).

export interface ViewerSource {
  /** What the page shows as the file's name. */
  readonly name: string;
  /** What the worker reads: a Blob or an absolute URL. */
  readonly input: Blob | string;
}

/** A file chosen with the picker or dropped on the page. */
export class LocalFileSource implements ViewerSource {
  readonly name: string;
  constructor(readonly input: Blob & { name?: string }) {
    this.name = input.name ?? "file";
  }
}

/** A file at a URL (relative URLs are taken relative to the page). */
export class UrlSource implements ViewerSource {
  readonly name: string;
  readonly input: string;
  constructor(url: string) {
    let name = url;
    let href = url;
    try {
      const u = new URL(url, globalThis.location?.href);
      href = u.href;
      name = decodeURIComponent(u.pathname.split("/").pop() || u.host);
    } catch {
      /* keep the text as given: the worker reports it */
    }
    this.name = name;
    this.input = href;
  }
}
