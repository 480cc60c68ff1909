// Range-request loading against nginx on loopback (the HTTP server the C++
// remote tests use, tests/io/nginx_server.hpp): nginx serves static files
// with Range and If-Range exactly as object stores do. Its access log counts
// what reached the server: opening is one request, one tensor is one range
// request of exactly its bytes, the whole file's tensors read remotely equal
// the same file read from memory. Skipped without nginx unless
// TENSOGRAM_REQUIRE_NGINX=1 (CI), where that is a failure.
import assert from "node:assert/strict";
import { spawn, type ChildProcess } from "node:child_process";
import { accessSync, chmodSync, constants, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { MetatensorError, MetatensorFile, MetatensorWriter, openMetatensor, validateDeep } from "@tensogram/metatensor";
import { asDumped } from "./helpers.js";
import { TS_CASES, bigFlatFile } from "./cases.js";

const NGINX = process.env["TENSOGRAM_NGINX"] || "/usr/sbin/nginx";

function nginxMissing(): string | false {
  try {
    accessSync(NGINX, constants.X_OK);
    return false;
  } catch {
    const why = `nginx not found at ${NGINX} (install nginx-light, or set TENSOGRAM_NGINX)`;
    if (process.env["TENSOGRAM_REQUIRE_NGINX"] === "1") throw new Error(`${why} but TENSOGRAM_REQUIRE_NGINX=1`);
    return why;
  }
}

async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, "127.0.0.1", r));
  const port = (s.address() as { port: number }).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

async function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const c = connect(port, "127.0.0.1");
    c.once("connect", () => {
      c.destroy();
      resolve(true);
    });
    c.once("error", () => resolve(false));
  });
}

interface Entry { uri: string; range: string; status: number; bytes: number }

/** nginx in the foreground with every path in its own prefix directory. */
class Nginx {
  readonly prefix = mkdtempSync(join(tmpdir(), "mt-js-nginx-"));
  readonly root = join(this.prefix, "www");
  port = 0;
  private child: ChildProcess | undefined;

  async start(): Promise<void> {
    chmodSync(this.prefix, 0o755);
    mkdirSync(this.root, { mode: 0o755 });
    let failure = "";
    for (let attempt = 0; attempt < 8; attempt++) {
      this.port = await freePort();
      const p = this.prefix;
      writeFileSync(join(p, "nginx.conf"), [
        "daemon off;", "master_process off;", "worker_processes 1;", `pid "${p}/nginx.pid";`,
        `error_log "${p}/error.log" notice;`, "events { worker_connections 256; }", "http {",
        `  log_format counted '$uri "$http_range" $status $body_bytes_sent';`, `  access_log "${p}/access.log" counted;`,
        `  client_body_temp_path "${p}/body";`, `  proxy_temp_path "${p}/proxy";`, `  fastcgi_temp_path "${p}/fastcgi";`,
        `  uwsgi_temp_path "${p}/uwsgi";`, `  scgi_temp_path "${p}/scgi";`, "  default_type application/octet-stream;",
        `  server { listen 127.0.0.1:${this.port}; root "${this.root}"; location / { } }`, "}", "",
      ].join("\n"));
      this.child = spawn(NGINX, ["-p", `${p}/`, "-c", join(p, "nginx.conf")], { stdio: "ignore" });
      const exited = new Promise<void>((r) => this.child!.once("exit", () => r()));
      let up = false;
      for (let i = 0; i < 200 && !up; i++) {
        const done = await Promise.race([exited.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), 25))]);
        if (done) break;
        up = await accepts(this.port);
      }
      if (up) return;
      this.stop();
      failure = (() => { try { return readFileSync(join(p, "error.log"), "utf8"); } catch { return "no error log"; } })();
      if (!failure.includes("Address already in use")) break;
    }
    throw new Error(`cannot start nginx: ${failure}`);
  }

  url(name: string): string {
    return `http://127.0.0.1:${this.port}/${name}`;
  }

  /** The requests nginx logged since the last call. */
  private seen = 0;
  takeLog(): Entry[] {
    let text = "";
    try {
      text = readFileSync(join(this.prefix, "access.log"), "utf8");
    } catch {
      return [];
    }
    const lines = text.split("\n").filter((l) => l !== "");
    const fresh = lines.slice(this.seen);
    this.seen = lines.length;
    return fresh.map((l) => {
      const m = /^(\S+) "([^"]*)" (\d+) (\d+)$/.exec(l);
      if (!m) throw new Error(`unexpected access log line: ${l}`);
      return { uri: m[1]!, range: m[2]!, status: Number(m[3]), bytes: Number(m[4]) };
    });
  }

  stop(): void {
    this.child?.kill("SIGKILL");
    this.child = undefined;
  }

  remove(): void {
    this.stop();
    rmSync(this.prefix, { recursive: true, force: true });
  }
}

/** The access log is written when a response completes: wait until `n` lines are there. */
async function waitForLog(server: Nginx, n: number, got: Entry[]): Promise<Entry[]> {
  for (let i = 0; i < 200 && got.length < n; i++) {
    await new Promise((r) => setTimeout(r, 10));
    got.push(...server.takeLog());
  }
  return got;
}

describe("range loading from nginx", { skip: nginxMissing() }, () => {
  const server = new Nginx();
  let big: Uint8Array;
  let every: Uint8Array;

  before(async () => {
    await server.start();
    big = bigFlatFile(1_000_000);
    writeFileSync(join(server.root, "big.mt"), big);
    const c = TS_CASES[2]!;
    const e = new MetatensorWriter(c.schema, { alignment: c.alignment ?? 64 });
    for (const [k, v] of Object.entries(c.values)) e.set(k, v);
    every = e.serialize();
    writeFileSync(join(server.root, "every.mt"), every);
  });
  after(() => server.remove());

  it("opening is one request; one tensor is one range request of exactly its bytes", async () => {
    server.takeLog();
    const f = (await openMetatensor(server.url("big.mt"), { http: { headerGuess: 4096 } })) as MetatensorFile;
    const opened = await waitForLog(server, 1, []);
    assert.equal(opened.length, 1);
    assert.equal(opened[0]!.range, "bytes=0-4095");
    assert.equal(opened[0]!.status, 206);
    const b = await f.flat("b");
    assert.equal(b.data[999], -999);
    const fetched = await waitForLog(server, 1, []);
    assert.equal(fetched.length, 1);
    const entry = f.entry("b");
    const abs = f.header.dataOffset + entry.begin;
    assert.equal(fetched[0]!.range, `bytes=${abs}-${abs + 8000 - 1}`);
    assert.equal(fetched[0]!.status, 206);
    assert.equal(fetched[0]!.bytes, 8000);
    // 4 MB of tensor "a" never left the server.
    const total = opened[0]!.bytes + fetched[0]!.bytes;
    assert.ok(total <= 4096 + 8000, `${total} bytes fetched of a ${big.byteLength}-byte file`);
    await f.close();
  });

  it("every kind read over HTTP equals the same file read from memory, and validates deeply", async () => {
    server.takeLog();
    const remote = await openMetatensor(server.url("every.mt"), { http: { headerGuess: 256 } });
    const local = await openMetatensor(every);
    assert.deepEqual(asDumped(await remote.value()), asDumped(await local.value()));
    await validateDeep(remote);
    const log = await waitForLog(server, 2, []);
    // Every request was a range request answered with 206, none of them the whole file.
    for (const e of log) {
      assert.equal(e.status, 206, JSON.stringify(e));
      assert.ok(e.bytes < every.byteLength, JSON.stringify(e));
    }
    // The bytes that came back add up to at most the file once, plus the header guess.
    const sent = log.reduce((s, e) => s + e.bytes, 0);
    assert.ok(sent <= every.byteLength + 256, `${sent} bytes for a ${every.byteLength}-byte file`);
    await remote.close();
  });

  it("a missing file and a truncated file give typed errors", async () => {
    await assert.rejects(openMetatensor(server.url("absent.mt")), MetatensorError);
    writeFileSync(join(server.root, "cut.mt"), big.subarray(0, 100));
    await assert.rejects(openMetatensor(server.url("cut.mt")), MetatensorError);
  });

  it("an AbortSignal cancels a tensor request", async () => {
    const f = await openMetatensor(server.url("big.mt"));
    const ctl = new AbortController();
    ctl.abort();
    await assert.rejects(f.flat("a", { signal: ctl.signal }));
    await f.close();
  });
});
