// Vite builds the viewer into dist/ (a static site). `VIEWER_FILE=path` makes
// the dev and preview servers also serve that one local file at
// /local/<name>, with Range requests, so `make viewer FILE=out/demo.tgm` can
// open it with ?url=/local/<name> (the page itself never reads the disk).

import { createReadStream, statSync } from "node:fs";
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

export default defineConfig({
  base: "./",
  plugins: [serveLocalFile()],
  worker: { format: "es" },
  build: { target: "es2022", chunkSizeWarningLimit: 2048 },
  server: { host: "127.0.0.1" },
  preview: { host: "127.0.0.1" },
});
