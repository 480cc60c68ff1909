// Vite builds the viewer into dist/ (a static site). `VIEWER_FILE=path` makes
// the dev and preview servers also serve that one local file at
// /local/<name>, with Range requests, so `make viewer FILE=out/demo.tgm` can
// open it with ?url=/local/<name> (the page itself never reads the disk).
// Both servers also answer /api/proxy?url=<http(s) URL> (spec 07 H.1): the
// page opens a file on another server through it when that server does not
// allow the page's origin (no CORS), forwarding Range requests.

import { createReadStream, readFileSync, statSync } from "node:fs";
import { Readable } from "node:stream";
import type { ReadableStream as WebReadableStream } from "node:stream/web";
import { basename, resolve } from "node:path";
import type { Connect, Plugin } from "vite";
import { defineConfig } from "vite";

function serveLocalFile(): Plugin {
  const file = process.env["VIEWER_FILE"] || undefined;
  const handler: Connect.NextHandleFunction = (req, res, next) => {
    if (file === undefined || req.url !== `/local/${encodeURIComponent(basename(file))}`) return next();
    const path = resolve(file);
    let size: number;
    try {
      size = statSync(path).size;
    } catch {
      res.statusCode = 404;
      res.end(`${path}: not found`);
      return;
    }
    res.setHeader("Content-Type", "application/octet-stream");
    res.setHeader("Accept-Ranges", "bytes");
    // One range "bytes=a-b" (what the viewer's readers send), else the whole file.
    const range = /^bytes=(\d+)-(\d*)$/.exec(req.headers.range ?? "");
    if (range !== null) {
      const start = Number(range[1]);
      const end = Math.min(range[2] ? Number(range[2]) : size - 1, size - 1);
      if (start > end) {
        res.statusCode = 416;
        res.setHeader("Content-Range", `bytes */${size}`);
        res.end();
        return;
      }
      res.statusCode = 206;
      res.setHeader("Content-Range", `bytes ${start}-${end}/${size}`);
      res.setHeader("Content-Length", String(end - start + 1));
      createReadStream(path, { start, end }).pipe(res);
      return;
    }
    res.setHeader("Content-Length", String(size));
    createReadStream(path).pipe(res);
  };
  return {
    name: "tensogram-viewer-local-file",
    configureServer: (s) => void s.middlewares.use(handler),
    configurePreviewServer: (s) => void s.middlewares.use(handler),
  };
}

/**
 * GET/HEAD /api/proxy?url=<http(s) URL>: the upstream response, streamed, with
 * the request's Range forwarded and Accept-Ranges, Content-Range,
 * Content-Length and Content-Type passed back; 400 without a usable url, 502
 * when the upstream cannot be reached. Every answer carries
 * X-Tensogram-Proxy: 1, which is how the page knows the proxy is there.
 */
function fetchProxy(): Plugin {
  const handler: Connect.NextHandleFunction = (req, res, next) => {
    const u = new URL(req.url ?? "/", "http://proxy.invalid");
    if (u.pathname !== "/api/proxy") return next();
    res.setHeader("X-Tensogram-Proxy", "1");
    const target = u.searchParams.get("url") ?? "";
    if (!/^https?:\/\/[^/?#]+/i.test(target) || (req.method !== "GET" && req.method !== "HEAD")) {
      res.statusCode = 400;
      res.setHeader("Content-Type", "text/plain");
      res.end("usage: GET /api/proxy?url=<http(s) URL>");
      return;
    }
    const abort = new AbortController();
    res.on("close", () => abort.abort());
    const headers: Record<string, string> = {};
    if (typeof req.headers.range === "string") headers["Range"] = req.headers.range;
    fetch(target, { method: req.method, headers, signal: abort.signal, redirect: "follow" }).then(
      (up) => {
        res.statusCode = up.status;
        for (const h of ["Accept-Ranges", "Content-Range", "Content-Length", "Content-Type"]) {
          const v = up.headers.get(h);
          if (v !== null) res.setHeader(h, v);
        }
        if (up.body === null || req.method === "HEAD") {
          res.end();
          return;
        }
        Readable.fromWeb(up.body as unknown as WebReadableStream).on("error", () => res.destroy()).pipe(res);
      },
      (e: unknown) => {
        if (res.headersSent) return void res.destroy();
        res.statusCode = 502;
        res.setHeader("Content-Type", "text/plain");
        res.end(`cannot reach ${target}: ${(e as Error).message}`);
      },
    );
  };
  return {
    name: "tensogram-viewer-fetch-proxy",
    configureServer: (s) => void s.middlewares.use(handler),
    configurePreviewServer: (s) => void s.middlewares.use(handler),
  };
}

const version = (pkg: string) => (JSON.parse(readFileSync(new URL(pkg, import.meta.url), "utf8")) as { version: string }).version;

export default defineConfig({
  base: "./",
  // The versions shown in the sidebar's header.
  define: {
    __VIEWER_VERSION__: JSON.stringify(version("./package.json")),
    __TENSOGRAM_VERSION__: JSON.stringify(version("../tensogram/package.json")),
  },
  plugins: [serveLocalFile(), fetchProxy()],
  worker: { format: "es" },
  build: { target: "es2022", chunkSizeWarningLimit: 2048 },
  server: { host: "127.0.0.1" },
  preview: { host: "127.0.0.1" },
});
