// nginx on loopback for the viewer's tests (the HTTP server the C++ remote
// tests and @tensogram/metatensor's tests use): the built site at /, test
// files at /files/, and an access log that records each request's Range
// header, status and body size, so tests count exactly what the page asked.

import { spawn, type ChildProcess } from "node:child_process";
import { accessSync, constants, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

export const NGINX = process.env["TENSOGRAM_NGINX"] || "/usr/sbin/nginx";

/** Why the nginx tests are skipped, or false when nginx is there. */
export function nginxMissing(): string | false {
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

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const c = connect(port, "127.0.0.1");
    c.once("connect", () => {
      c.destroy();
      resolve(true);
    });
    c.once("error", () => resolve(false));
  });
}

export interface LogEntry {
  uri: string;
  range: string;
  status: number;
  bytes: number;
}

export class Nginx {
  readonly prefix = mkdtempSync(join(tmpdir(), "tgm-viewer-nginx-"));
  readonly files = join(this.prefix, "files");
  port = 0;
  private child: ChildProcess | undefined;
  private seen = 0;

  constructor(private readonly site: string) {}

  async start(): Promise<void> {
    mkdirSync(this.files);
    let failure = "";
    for (let attempt = 0; attempt < 8; attempt++) {
      this.port = await freePort();
      const p = this.prefix;
      writeFileSync(join(p, "nginx.conf"), [
        "daemon off;", "master_process off;", "worker_processes 1;", `pid "${p}/nginx.pid";`,
        `error_log "${p}/error.log" notice;`, "events { worker_connections 256; }", "http {",
        "  types { text/html html; text/javascript js; text/css css; application/wasm wasm; }",
        "  default_type application/octet-stream;",
        `  log_format counted '$uri "$http_range" $status $body_bytes_sent';`, `  access_log "${p}/access.log" counted;`,
        `  client_body_temp_path "${p}/body";`, `  proxy_temp_path "${p}/proxy";`, `  fastcgi_temp_path "${p}/fastcgi";`,
        `  uwsgi_temp_path "${p}/uwsgi";`, `  scgi_temp_path "${p}/scgi";`,
        `  server { listen 127.0.0.1:${this.port}; root "${this.site}"; location /files/ { alias "${this.files}/"; } }`,
        "}", "",
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
      try {
        failure = readFileSync(join(p, "error.log"), "utf8");
      } catch {
        failure = "no error log";
      }
      if (!failure.includes("Address already in use")) break;
    }
    throw new Error(`cannot start nginx: ${failure}`);
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}/`;
  }

  put(name: string, bytes: Uint8Array): void {
    writeFileSync(join(this.files, name), bytes);
  }

  /** The requests logged since the last call (a line is written when a response completes). */
  takeLog(): LogEntry[] {
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
