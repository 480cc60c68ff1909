// AWS Signature Version 4 helpers (src/auth.ts). Three independent checks:
// (1) the signatures AWS publishes in its documentation, (2) botocore, the
// AWS SDK for Python (Debian's python3-botocore, run through
// test/sigv4_botocore.py at a pinned time), signing the same requests, and
// (3) a loopback HTTP server that refuses unsigned requests and records the
// headers it receives, which botocore then re-signs from the request line
// and headers as S3 would, while TensogramFile.fromUrl reads a file through
// the signing fetch with Range GETs.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, it, mock } from "node:test";
import {
  createAwsSigV4Fetch, EMPTY_PAYLOAD_SHA256, encode, InvalidArgumentError, IoError, signAwsV4Request, TensogramFile,
  type SigV4Credentials, type DecodedMessage,
} from "@tensogram/tensogram";
import { rawBytes, sampleBytes } from "./helpers.js";

const here = dirname(fileURLToPath(import.meta.url));
const BOTOCORE_SCRIPT = resolve(here, "../test/sigv4_botocore.py");
// Debian's python3-botocore installs for the system Python; TENSOGRAM_PYTHON overrides.
const PYTHON = process.env["TENSOGRAM_PYTHON"] ?? (existsSync("/usr/bin/python3") ? "/usr/bin/python3" : "python3");

interface BotoRequest {
  method: string;
  url: string;
  headers: [string, string][];
  timestamp: string;
  credentials: SigV4Credentials;
  unsignedPayload?: boolean;
}

/** botocore's Authorization header for each request, or a reason it cannot run. */
function botocore(requests: BotoRequest[]): string[] {
  const r = spawnSync(PYTHON, [BOTOCORE_SCRIPT], { input: JSON.stringify(requests), encoding: "utf8" });
  if (r.status !== 0) throw new Error(`sigv4_botocore.py failed (${r.status}): ${r.stderr}`);
  return JSON.parse(r.stdout) as string[];
}

const BOTOCORE_MISSING = (() => {
  const r = spawnSync(PYTHON, [BOTOCORE_SCRIPT], { input: "[]", encoding: "utf8" });
  if (r.error) return `no python3 (${r.error.message})`;
  if (r.status === 3) return "botocore is not installed (apt-get install python3-botocore)";
  if (r.status !== 0) return `sigv4_botocore.py failed: ${r.stderr}`;
  return false;
})();
if (BOTOCORE_MISSING) console.log(`# auth.test: skipping the botocore cross-checks: ${BOTOCORE_MISSING}`);

/** Splits an Authorization value into its parts (AWS writes ", " or "," between them). */
function parts(authorization: string): Record<string, string> {
  const m = /^AWS4-HMAC-SHA256 (.*)$/.exec(authorization);
  assert.ok(m, authorization);
  return Object.fromEntries(m[1]!.split(/,\s*/).map((p) => p.split("=") as [string, string]));
}

// "Signing AWS API requests" example of the AWS General Reference / IAM user
// guide (https://docs.aws.amazon.com/general/latest/gr/sigv4_signing.html and
// its "Examples of the complete Signature Version 4 signing process"): IAM
// ListUsers, access key AKIDEXAMPLE, 2015-08-30T12:36:00Z.
const IAM_EXAMPLE: SigV4Credentials = {
  accessKeyId: "AKIDEXAMPLE", secretAccessKey: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", region: "us-east-1", service: "iam",
};
// S3 API reference, "Signature Calculations for the Authorization Header:
// Transferring Payload in a Single Chunk", Example: GET Object
// (https://docs.aws.amazon.com/AmazonS3/latest/API/sig-v4-header-based-auth.html):
// the first 10 bytes of examplebucket/test.txt, 2013-05-24T00:00:00Z.
const S3_EXAMPLE: SigV4Credentials = {
  accessKeyId: "AKIAIOSFODNN7EXAMPLE", secretAccessKey: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", region: "us-east-1",
};
const S3_EXAMPLE_SIGNATURE = "f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41";

describe("signAwsV4Request: AWS's documented examples", () => {
  it("IAM ListUsers GET (AKIDEXAMPLE, 20150830T123600Z)", async () => {
    const r = await signAwsV4Request({
      method: "GET",
      url: new URL("https://iam.amazonaws.com/?Action=ListUsers&Version=2010-05-08"),
      headers: new Headers({ "Content-Type": "application/x-www-form-urlencoded; charset=utf-8" }),
      payloadHash: EMPTY_PAYLOAD_SHA256,
      timestamp: new Date(Date.UTC(2015, 7, 30, 12, 36, 0)),
    }, IAM_EXAMPLE);
    assert.equal(r.authorization,
      "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/iam/aws4_request, " +
      "SignedHeaders=content-type;host;x-amz-date, " +
      "Signature=5d672d79c15b13162d9279b0855cfba6789a8edb4c82c400e06b5924a6f2b5d7");
    assert.equal(r.headers.get("x-amz-date"), "20150830T123600Z");
    assert.equal(r.headers.get("authorization"), r.authorization);
    assert.equal(r.headers.get("content-type"), "application/x-www-form-urlencoded; charset=utf-8");
    assert.equal(r.headers.has("x-amz-content-sha256"), false);
  });

  const s3Input = (range: string) => ({
    method: "GET",
    url: new URL("https://examplebucket.s3.amazonaws.com/test.txt"),
    headers: new Headers({ Range: range }),
    payloadHash: EMPTY_PAYLOAD_SHA256,
    timestamp: new Date(Date.UTC(2013, 4, 24)),
    includeContentSha256: true,
  });

  it("S3 GET Object with Range and x-amz-content-sha256 (AKIAIOSFODNN7EXAMPLE, 20130524T000000Z)", async () => {
    const r = await signAwsV4Request(s3Input("bytes=0-9"), S3_EXAMPLE);
    assert.deepEqual(parts(r.authorization), {
      Credential: "AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request",
      SignedHeaders: "host;range;x-amz-content-sha256;x-amz-date",
      Signature: S3_EXAMPLE_SIGNATURE,
    });
    assert.equal(r.headers.get("x-amz-content-sha256"), EMPTY_PAYLOAD_SHA256);
    assert.equal(r.headers.get("range"), "bytes=0-9");
    // The range is signed: another range is another signature.
    const other = await signAwsV4Request(s3Input("bytes=0-10"), S3_EXAMPLE);
    assert.notEqual(parts(other.authorization)["Signature"], S3_EXAMPLE_SIGNATURE);
    // So are the secret key and the time.
    const wrongKey = await signAwsV4Request(s3Input("bytes=0-9"), { ...S3_EXAMPLE, secretAccessKey: "x" });
    assert.notEqual(parts(wrongKey.authorization)["Signature"], S3_EXAMPLE_SIGNATURE);
  });

  it("createAwsSigV4Fetch sends the documented S3 request at the documented time", async () => {
    const seen: { url: string; init: RequestInit | undefined }[] = [];
    const fetchImpl = (async (url: RequestInfo | URL, init?: RequestInit) => {
      seen.push({ url: String(url), init });
      return new Response("0123456789", { status: 206 });
    }) as typeof fetch;
    const signed = createAwsSigV4Fetch(S3_EXAMPLE, { fetchImpl });
    mock.timers.enable({ apis: ["Date"], now: Date.UTC(2013, 4, 24) });
    let res: Response;
    try {
      res = await signed("https://examplebucket.s3.amazonaws.com/test.txt", { headers: { Range: "bytes=0-9" } });
    } finally {
      mock.timers.reset();
    }
    assert.equal(await res.text(), "0123456789");
    assert.equal(seen.length, 1);
    assert.equal(seen[0]!.url, "https://examplebucket.s3.amazonaws.com/test.txt");
    assert.equal(seen[0]!.init?.method, "GET");
    const h = new Headers(seen[0]!.init?.headers);
    assert.equal(h.get("range"), "bytes=0-9");
    assert.equal(h.get("x-amz-date"), "20130524T000000Z");
    assert.equal(h.get("x-amz-content-sha256"), EMPTY_PAYLOAD_SHA256);
    assert.equal(parts(h.get("authorization") ?? "")["Signature"], S3_EXAMPLE_SIGNATURE);
  });
});

describe("signAwsV4Request and createAwsSigV4Fetch: bad arguments", () => {
  const input = () => ({ method: "GET", url: new URL("https://b.s3.amazonaws.com/k"), headers: new Headers(), payloadHash: EMPTY_PAYLOAD_SHA256, timestamp: new Date() });
  it("missing credentials or region", async () => {
    for (const bad of [
      { ...S3_EXAMPLE, accessKeyId: "" }, { ...S3_EXAMPLE, secretAccessKey: undefined }, { ...S3_EXAMPLE, region: "" },
      { ...S3_EXAMPLE, region: undefined }, { ...S3_EXAMPLE, service: "" }, null, undefined,
    ]) {
      await assert.rejects(signAwsV4Request(input(), bad as unknown as SigV4Credentials), InvalidArgumentError);
      assert.throws(() => createAwsSigV4Fetch(bad as unknown as SigV4Credentials), InvalidArgumentError);
    }
  });
  it("non-URL input, bad timestamp, missing payload hash", async () => {
    await assert.rejects(signAwsV4Request({ ...input(), url: "https://b/k" as unknown as URL }, S3_EXAMPLE), InvalidArgumentError);
    await assert.rejects(signAwsV4Request({ ...input(), timestamp: new Date(NaN) }, S3_EXAMPLE), InvalidArgumentError);
    await assert.rejects(signAwsV4Request({ ...input(), payloadHash: "" }, S3_EXAMPLE), InvalidArgumentError);
    let called = 0;
    const f = createAwsSigV4Fetch(S3_EXAMPLE, { fetchImpl: (async () => { called++; return new Response(""); }) as typeof fetch });
    await assert.rejects(f("data.tgm"), (e: Error) => e instanceof InvalidArgumentError && /absolute URL/.test(e.message));
    await assert.rejects(f(42 as unknown as string), InvalidArgumentError);
    await assert.rejects(f("https://b.s3.amazonaws.com/k", { method: "PUT" }), InvalidArgumentError);
    await assert.rejects(f("https://b.s3.amazonaws.com/k", { body: "x" }), InvalidArgumentError);
    assert.equal(called, 0);
    await f(new URL("https://b.s3.amazonaws.com/k"), { method: "head" });
    await f(new Request("https://b.s3.amazonaws.com/k"));
    assert.equal(called, 2);
  });
});

/** A request as the JS signer and as botocore see it. */
interface Case {
  name: string;
  method: string;
  origin: string;
  key: string; // decoded path
  query: [string, string][]; // decoded names and values
  headers: [string, string][];
  creds: SigV4Credentials;
  unsignedPayload?: boolean; // S3 only: UNSIGNED-PAYLOAD instead of the empty-body hash
}

const SESSION: SigV4Credentials = { ...S3_EXAMPLE, region: "eu-west-2", sessionToken: "FQoGZXIvYXdzEXAMPLE//token+with/slashes==" };
const CASES: Case[] = [
  { name: "S3 GET with range", method: "GET", origin: "https://examplebucket.s3.amazonaws.com", key: "/test.txt", query: [], headers: [["Range", "bytes=0-9"]], creds: S3_EXAMPLE },
  { name: "S3 HEAD, unsigned payload", method: "HEAD", origin: "https://bucket.s3.eu-west-2.amazonaws.com", key: "/data/era5.tgm", query: [], headers: [], creds: { ...S3_EXAMPLE, region: "eu-west-2" }, unsignedPayload: true },
  { name: "S3 key with spaces, unicode and reserved characters", method: "GET", origin: "https://bucket.s3.amazonaws.com", key: "/données/ü € 2t/x(1)!*'~;=@,$&.tgm", query: [], headers: [["Range", "bytes=100-1099"]], creds: S3_EXAMPLE },
  { name: "S3 query string, unsorted, empty value, reserved characters", method: "GET", origin: "https://bucket.s3.amazonaws.com", key: "/k", query: [["versionId", "3/L4kqtJl40Nr8X8gdRQBpUMLUo a+b"], ["partNumber", "1"], ["acl", ""], ["Zeta", "é"]], headers: [], creds: S3_EXAMPLE },
  { name: "S3 session token, path-style endpoint with port", method: "GET", origin: "http://127.0.0.1:9000", key: "/bucket/dir/file name.tgm", query: [], headers: [["Range", "bytes=0-262143"], ["X-Custom", "  a   b  "]], creds: SESSION },
  { name: "S3 session token, unsigned payload", method: "GET", origin: "https://bucket.s3.amazonaws.com", key: "/k", query: [["x-id", "GetObject"]], headers: [["Range", "bytes=5-"]], creds: SESSION, unsignedPayload: true },
  { name: "other service: path encoded twice, dot segments", method: "GET", origin: "https://example.amazonaws.com", key: "/example space/ü/./a/../b", query: [["Param2", "value2"], ["Param1", "value1"]], headers: [["My-Header1", "value1"]], creds: { ...IAM_EXAMPLE, service: "service" } },
  { name: "other service with a session token", method: "GET", origin: "https://iam.amazonaws.com", key: "/", query: [["Action", "ListUsers"], ["Version", "2010-05-08"]], headers: [["Content-Type", "application/x-www-form-urlencoded; charset=utf-8"]], creds: { ...IAM_EXAMPLE, sessionToken: "tok" } },
];

/** Python's quote(text, safe): what botocore's serializers do to keys and parameters. */
function pyQuote(text: string, safe: string): string {
  let out = "";
  for (const byte of new TextEncoder().encode(text)) {
    const c = String.fromCharCode(byte);
    out += /[A-Za-z0-9_.\-~]/.test(c) || safe.includes(c) ? c : `%${byte.toString(16).toUpperCase().padStart(2, "0")}`;
  }
  return out;
}

describe("signAwsV4Request against botocore", { skip: BOTOCORE_MISSING }, () => {
  it("the same Authorization header for every case", async () => {
    const ts = new Date(Date.UTC(2024, 1, 29, 23, 59, 7));
    const ours: string[] = [];
    const theirs: BotoRequest[] = [];
    for (const c of CASES) {
      const s3 = (c.creds.service ?? "s3") === "s3";
      // JS: the URL as a WHATWG URL writes it (it leaves ( ) ! * ' ; = @ , $ & unencoded in paths).
      const url = new URL(c.origin);
      url.pathname = c.key;
      url.search = c.query.map(([n, v]) => `${encodeURIComponent(n)}=${encodeURIComponent(v)}`).join("&");
      const r = await signAwsV4Request({
        method: c.method, url, headers: new Headers(c.headers),
        payloadHash: c.unsignedPayload ? "UNSIGNED-PAYLOAD" : EMPTY_PAYLOAD_SHA256, timestamp: ts, includeContentSha256: s3,
      }, c.creds);
      ours.push(r.authorization);
      // botocore: the URL as its serializers write it (S3 keys quoted with safe "/~", parameters with
      // safe "-_.~"); other services sign the path as sent, so they get the same path as the JS side.
      const path = s3 ? pyQuote(c.key, "/") : url.pathname;
      const query = c.query.map(([n, v]) => `${pyQuote(n, "")}=${pyQuote(v, "")}`).join("&");
      theirs.push({
        method: c.method, url: `${c.origin}${path}${query ? `?${query}` : ""}`, headers: c.headers,
        timestamp: "20240229T235907Z", credentials: c.creds, ...(s3 ? { unsignedPayload: c.unsignedPayload ?? false } : {}),
      });
    }
    const expected = botocore(theirs);
    for (let i = 0; i < CASES.length; i++) assert.equal(ours[i], expected[i], CASES[i]!.name);
    // Not vacuous: botocore disagrees when the signed request differs.
    const [changed] = botocore([{ ...theirs[0]!, headers: [["Range", "bytes=0-8"]] }]);
    assert.notEqual(changed, ours[0]);
  });
});

interface Hit {
  method: string;
  url: string;
  headers: Record<string, string>;
}

describe("createAwsSigV4Fetch with TensogramFile.fromUrl", () => {
  it("reads a file through signed Range GETs that botocore verifies", async () => {
    const small = sampleBytes("int32", 50, 12);
    const big = sampleBytes("float64", 100 * 1000, 11);
    const msgs = [
      encode({ base: [{ name: "first" }] }, [{ descriptor: { shape: [50], dtype: "int32" }, data: small }]),
      encode({ base: [{ name: "big" }] }, [{ descriptor: { shape: [400, 250], dtype: "float64" }, data: big }]),
      encode({ base: [{ name: "last" }] }, [{ descriptor: { shape: [5, 10], dtype: "int32", compression: "zstd" }, data: small }]),
    ];
    const body = new Uint8Array(msgs.reduce((n, m) => n + m.byteLength, 0));
    msgs.reduce((at, m) => (body.set(m, at), at + m.byteLength), 0);

    const hits: Hit[] = [];
    // Refuses what is not signed, as S3 would; serves byte ranges.
    const server = createServer((req, res) => {
      const headers: Record<string, string> = {};
      for (const [n, v] of Object.entries(req.headers)) if (typeof v === "string") headers[n] = v;
      hits.push({ method: req.method ?? "", url: req.url ?? "", headers });
      if (!/^AWS4-HMAC-SHA256 Credential=/.test(headers["authorization"] ?? "") || !headers["x-amz-date"]) {
        res.writeHead(403).end("AccessDenied");
        return;
      }
      const m = /^bytes=(\d+)-(\d+)$/.exec(headers["range"] ?? "");
      const base = { "Accept-Ranges": "bytes", "Content-Type": "application/octet-stream" };
      if (m) {
        const a = Number(m[1]);
        const b = Math.min(Number(m[2]), body.byteLength - 1);
        const part = body.subarray(a, b + 1);
        res.writeHead(206, { ...base, "Content-Length": String(part.byteLength), "Content-Range": `bytes ${a}-${b}/${body.byteLength}` });
        res.end(req.method === "HEAD" ? undefined : part);
        return;
      }
      res.writeHead(200, { ...base, "Content-Length": String(body.byteLength) });
      res.end(req.method === "HEAD" ? undefined : body);
    });
    await new Promise<void>((ok) => server.listen(0, "127.0.0.1", ok));
    try {
      const { port } = server.address() as AddressInfo;
      const url = `http://127.0.0.1:${port}/bucket/run 1/data(2).tgm?versionId=v1`;
      const creds: SigV4Credentials = { ...SESSION };

      // Unsigned, the server refuses: every byte below came through signing.
      await assert.rejects(TensogramFile.fromUrl(url), IoError);
      hits.length = 0;

      const f = await TensogramFile.fromUrl(url, { fetch: createAwsSigV4Fetch(creds), headers: { "X-Trace": "t1" } });
      assert.equal(f.source, "remote");
      assert.equal(f.messageCount, 3);
      const got: DecodedMessage[] = [];
      for (let i = 0; i < 3; i++) got.push(await f.messageObject(i, 0));
      assert.deepEqual(rawBytes(got[0]!.objects[0]!.data()), small);
      assert.deepEqual(rawBytes(got[1]!.objects[0]!.data()), big);
      assert.deepEqual(rawBytes(got[2]!.objects[0]!.data()), small);
      for (const m of got) m.close();
      f.close();

      assert.ok(hits.length >= 4, `${hits.length} requests`);
      assert.equal(hits[0]!.method, "HEAD");
      const ranged = hits.filter((h) => h.headers["range"] !== undefined);
      assert.ok(ranged.length >= 3, `${ranged.length} range requests`);
      for (const h of hits) {
        const p = parts(h.headers["authorization"] ?? "");
        assert.equal(p["Credential"], `${creds.accessKeyId}/${h.headers["x-amz-date"]!.slice(0, 8)}/eu-west-2/s3/aws4_request`);
        const signedNames = p["SignedHeaders"]!.split(";");
        for (const n of ["host", "x-amz-date", "x-amz-content-sha256", "x-amz-security-token", "x-trace"]) assert.ok(signedNames.includes(n), n);
        assert.equal(signedNames.includes("range"), h.headers["range"] !== undefined);
        assert.equal(h.headers["x-amz-security-token"], creds.sessionToken);
        assert.equal(h.headers["x-amz-content-sha256"], EMPTY_PAYLOAD_SHA256);
      }
      if (BOTOCORE_MISSING) return;
      // The server's check, as S3 makes it: re-sign each received request (the request line with
      // its key and parameters decoded and re-encoded strictly, the headers it names as signed, its
      // x-amz-date) with botocore and compare.
      const requests: BotoRequest[] = hits.map((h) => {
        const names = parts(h.headers["authorization"]!)["SignedHeaders"]!.split(";");
        const [path, query = ""] = h.url.split("?") as [string, string?];
        const q = query.split("&").filter((p) => p !== "").map((p) => {
          const [n = "", v = ""] = p.split("=");
          return `${pyQuote(decodeURIComponent(n), "")}=${pyQuote(decodeURIComponent(v), "")}`;
        });
        return {
          method: h.method, url: `http://127.0.0.1:${port}${pyQuote(decodeURIComponent(path), "/")}${q.length ? `?${q.join("&")}` : ""}`,
          headers: names.filter((n) => n !== "host").map((n) => [n, h.headers[n]!] as [string, string]),
          timestamp: h.headers["x-amz-date"]!, credentials: creds, unsignedPayload: false,
        };
      });
      const expected = botocore(requests);
      hits.forEach((h, i) => assert.equal(h.headers["authorization"], expected[i], `${h.method} ${h.url} ${h.headers["range"] ?? ""}`));
    } finally {
      await new Promise<void>((ok) => server.close(() => ok()));
    }
  });
});
