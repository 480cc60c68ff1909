// Test helpers: a static server on loopback for the built site (dist/) and
// for test files, counting requests; headless Chromium through
// puppeteer-core; the two with a temporary directory as one session per
// test file; a PNG comparison with a pixel tolerance.

import { createServer, type Server } from "node:http";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, extname, join, normalize, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { PNG } from "pngjs";
import puppeteer, { type Browser } from "puppeteer-core";

const TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript",
  ".css": "text/css",
  ".wasm": "application/wasm",
  ".json": "application/json",
  ".png": "image/png",
};

export interface TestServer {
  url: string;
  /** Files served at /files/<name>. */
  files: Map<string, Uint8Array>;
  /** Requests per path. */
  requests: Map<string, number>;
  /** Every request for /files/: "path range". */
  ranges: string[];
  /** Every request for /files/, with the body size sent. */
  log: ServedRequest[];
  /** Files served without range support (always 200 with the whole body). */
  noRanges: Set<string>;
  close(): Promise<void>;
}

export interface ServedRequest {
  path: string;
  method: string;
  /** The Range header, or "" */
  range: string;
  status: number;
  bytes: number;
}

export async function serve(root: string): Promise<TestServer> {
  const files = new Map<string, Uint8Array>();
  const requests = new Map<string, number>();
  const ranges: string[] = [];
  const log: ServedRequest[] = [];
  const noRanges = new Set<string>();
  const server: Server = createServer((req, res) => {
    const path = decodeURIComponent(new URL(req.url ?? "/", "http://x").pathname);
    requests.set(path, (requests.get(path) ?? 0) + 1);
    if (path.startsWith("/files/")) {
      const body = files.get(path.slice("/files/".length));
      if (body === undefined) {
        res.writeHead(404, { "Content-Type": "text/plain" }).end("not found");
        return;
      }
      // Single ranges "bytes=a-b" (what the readers send); the log records each.
      const range = /^bytes=(\d+)-(\d+)$/.exec(req.headers.range ?? "");
      ranges.push(`${path} ${req.headers.range ?? "whole"}`);
      const ranged = !noRanges.has(path.slice("/files/".length));
      const entry = { path, method: req.method ?? "GET", range: req.headers.range ?? "", status: 200, bytes: 0 };
      log.push(entry);
      const sent = (status: number, bytes: number) => {
        entry.status = status;
        entry.bytes = req.method === "HEAD" ? 0 : bytes;
      };
      if (range !== null && ranged) {
        const start = Number(range[1]);
        if (start >= body.byteLength) {
          res.writeHead(416, { "Content-Range": `bytes */${body.byteLength}` }).end();
          return;
        }
        const end = Math.min(Number(range[2]), body.byteLength - 1);
        sent(206, end - start + 1);
        res.writeHead(206, {
          "Content-Type": "application/octet-stream",
          "Content-Range": `bytes ${start}-${end}/${body.byteLength}`,
          "Content-Length": end - start + 1,
        }).end(body.subarray(start, end + 1));
        return;
      }
      sent(200, body.byteLength);
      res.writeHead(200, {
        "Content-Type": "application/octet-stream",
        "Content-Length": body.byteLength,
        ...(ranged ? { "Accept-Ranges": "bytes" } : {}),
      }).end(body);
      return;
    }
    const rel = normalize(path === "/" ? "/index.html" : path).replace(/^(\.\.[/\\])+/, "");
    const file = join(root, rel);
    if (!file.startsWith(root) || !existsSync(file)) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { "Content-Type": TYPES[extname(file)] ?? "application/octet-stream" }).end(readFileSync(file));
  });
  await new Promise<void>((ok) => server.listen(0, "127.0.0.1", ok));
  const addr = server.address();
  const port = typeof addr === "object" && addr !== null ? addr.port : 0;
  return {
    url: `http://127.0.0.1:${port}/`,
    files,
    requests,
    ranges,
    log,
    noRanges,
    close: () => new Promise<void>((ok) => server.close(() => ok())),
  };
}

/** The viewer as `npm run build` leaves it (the tests run from dist-test/test/). */
export const SITE = join(resolve(dirname(fileURLToPath(import.meta.url)), "../.."), "dist");

export const CHROMIUM = process.env["CHROMIUM"] ?? "/usr/bin/chromium";

export function launch(): Promise<Browser> {
  return puppeteer.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ["--no-sandbox", "--disable-gpu", "--font-render-hinting=none", "--force-color-profile=srgb"],
    defaultViewport: { width: 1100, height: 720, deviceScaleFactor: 1 },
  });
}

/**
 * What each browser test file runs in: the built site (dist/) served on
 * loopback, a headless Chromium, and a temporary directory for the files the
 * tests make; `close` stops both and removes the directory.
 */
export interface BrowserSession {
  server: TestServer;
  browser: Browser;
  tmp: string;
  close(): Promise<void>;
}

export async function startSession(tmpPrefix: string): Promise<BrowserSession> {
  const tmp = mkdtempSync(join(tmpdir(), tmpPrefix));
  const server = await serve(SITE);
  const browser = await launch();
  return {
    server,
    browser,
    tmp,
    close: async () => {
      await browser.close();
      await server.close();
      rmSync(tmp, { recursive: true, force: true });
    },
  };
}

export interface Diff {
  differing: number;
  total: number;
}

/** Pixels whose channels differ by more than `tolerance` (0…255). */
export function comparePng(a: Uint8Array, b: Uint8Array, tolerance = 24): Diff {
  const pa = PNG.sync.read(Buffer.from(a));
  const pb = PNG.sync.read(Buffer.from(b));
  if (pa.width !== pb.width || pa.height !== pb.height) return { differing: Infinity, total: pa.width * pa.height };
  let differing = 0;
  for (let k = 0; k < pa.data.length; k += 4) {
    for (let c = 0; c < 3; c++) {
      if (Math.abs(pa.data[k + c]! - pb.data[k + c]!) > tolerance) {
        differing++;
        break;
      }
    }
  }
  return { differing, total: pa.width * pa.height };
}

/**
 * Compares a screenshot with the reference PNG in test/reference/; with
 * UPDATE_SCREENSHOTS=1 the reference is (re)written instead.
 */
export function checkScreenshot(refDir: string, name: string, png: Uint8Array, maxFraction = 0.005): Diff & { updated: boolean } {
  const path = join(refDir, name);
  if (process.env["UPDATE_SCREENSHOTS"] === "1" || !existsSync(path)) {
    if (process.env["UPDATE_SCREENSHOTS"] !== "1") throw new Error(`${path} missing: run with UPDATE_SCREENSHOTS=1 to create it`);
    writeFileSync(path, png);
    return { differing: 0, total: 0, updated: true };
  }
  const d = comparePng(readFileSync(path), png);
  if (!(d.differing <= maxFraction * d.total)) {
    writeFileSync(path.replace(/\.png$/, ".actual.png"), png);
    throw new Error(`${name}: ${d.differing} of ${d.total} pixels differ (allowed ${Math.floor(maxFraction * d.total)}); actual image written next to the reference`);
  }
  return { ...d, updated: false };
}

/** The distinct RGB colours of a PNG. */
export function distinctColours(png: Uint8Array): number {
  const p = PNG.sync.read(Buffer.from(png));
  const seen = new Set<number>();
  for (let k = 0; k < p.data.length; k += 4) seen.add((p.data[k]! << 16) | (p.data[k + 1]! << 8) | p.data[k + 2]!);
  return seen.size;
}
