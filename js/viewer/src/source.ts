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

/**
 * A file at a URL (relative URLs are taken relative to the page); `via`: the
 * address it is read through instead (the proxy), the name stays the file's.
 */
export class UrlSource implements ViewerSource {
  readonly name: string;
  readonly input: string;
  constructor(url: string, via?: string) {
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
    this.input = via ?? href;
  }
}

/**
 * The source for a typed URL: a file on another server goes through the
 * page's own /api/proxy when the page's server has one (`make viewer`, the
 * dev server: vite.config.ts), since that server need not allow this origin;
 * anything else is read directly. Costs one request to the page's server,
 * only for URLs of other origins.
 */
export async function urlSource(url: string): Promise<UrlSource> {
  let u: URL;
  try {
    u = new URL(url, location.href);
  } catch {
    return new UrlSource(url);
  }
  if (u.origin === location.origin || !/^https?:$/.test(u.protocol)) return new UrlSource(url);
  const proxy = new URL("api/proxy", location.href);
  const here = await fetch(proxy, { method: "HEAD" }).then((r) => r.headers.get("X-Tensogram-Proxy") === "1", () => false);
  if (!here) return new UrlSource(url);
  proxy.searchParams.set("url", u.href);
  return new UrlSource(u.href, proxy.href);
}
