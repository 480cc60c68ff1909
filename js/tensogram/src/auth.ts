// S3-style request signing for `TensogramFile.fromUrl` (the reference's
// TS/auth helpers): AWS Signature Version 4 with the Authorization header,
// computed with WebCrypto (`globalThis.crypto.subtle`, Node >= 20 and
// browsers), no dependency. Read-only use: the signing fetch accepts GET and
// HEAD without a body; other clouds are expected to use presigned URLs.
//
// The algorithm, as AWS documents it ("Signing AWS API requests", IAM user
// guide; "Authenticating Requests (AWS Signature Version 4)", S3 API
// reference):
//   canonical request = method \n canonical URI \n canonical query \n
//                       canonical headers \n signed header names \n payload hash
//   string to sign    = "AWS4-HMAC-SHA256" \n amz-date \n scope \n hex(SHA-256(canonical request))
//   signing key       = HMAC(HMAC(HMAC(HMAC("AWS4" + secret, yyyymmdd), region), service), "aws4_request")
//   signature         = hex(HMAC(signing key, string to sign))
import { InvalidArgumentError, IoError } from "./errors.js";

export interface SigV4Credentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
  region: string;
  /** Signing name of the service; default `"s3"`. */
  service?: string;
}

export interface SigV4Input {
  method: string;
  url: URL;
  headers: Headers;
  /** Hex SHA-256 of the body, or `"UNSIGNED-PAYLOAD"` (S3). */
  payloadHash: string;
  timestamp: Date;
  /** Also send and sign `x-amz-content-sha256: payloadHash` (S3 requires it). */
  includeContentSha256?: boolean;
}

export interface SigV4Result {
  /** The Authorization header value. */
  authorization: string;
  /** The input headers plus x-amz-date, x-amz-security-token, x-amz-content-sha256 and authorization. */
  headers: Headers;
}

export interface AwsSigV4FetchOptions {
  /** The fetch that sends the signed requests; default the global fetch. */
  fetchImpl?: typeof fetch;
}

/** Hex SHA-256 of the empty body: the payload hash of a GET or HEAD. */
export const EMPTY_PAYLOAD_SHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

// Headers never signed: the existing signature, and headers that proxies or
// the HTTP stack may add, drop or rewrite on the way (as the AWS SDKs do).
const UNSIGNABLE = new Set([
  "authorization", "user-agent", "expect", "x-amzn-trace-id", "connection", "keep-alive", "proxy-authenticate",
  "proxy-authorization", "te", "trailer", "transfer-encoding", "upgrade", "content-length",
]);

const encoder = new TextEncoder();

function subtle(): SubtleCrypto {
  const s = globalThis.crypto?.subtle;
  if (!s) throw new IoError("AWS signing needs WebCrypto (globalThis.crypto.subtle)");
  return s;
}

function hex(bytes: ArrayBuffer): string {
  return Array.from(new Uint8Array(bytes), (b) => b.toString(16).padStart(2, "0")).join("");
}

async function sha256Hex(text: string): Promise<string> {
  return hex(await subtle().digest("SHA-256", encoder.encode(text)));
}

async function hmac(key: ArrayBuffer, text: string): Promise<ArrayBuffer> {
  const k = await subtle().importKey("raw", key, { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  return subtle().sign("HMAC", k, encoder.encode(text));
}

/**
 * AWS URI encoding: every UTF-8 byte except the unreserved characters
 * A-Z a-z 0-9 - _ . ~ becomes %XX (upper-case hex); '/' too unless kept.
 */
function uriEncode(text: string, keepSlash: boolean): string {
  let out = "";
  for (const byte of encoder.encode(text)) {
    const c = String.fromCharCode(byte);
    if (/[A-Za-z0-9\-_.~]/.test(c) || (keepSlash && c === "/")) out += c;
    else out += `%${byte.toString(16).toUpperCase().padStart(2, "0")}`;
  }
  return out;
}

/** Percent-decoding that leaves a malformed sequence as literal text. */
function decode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/**
 * The canonical URI. S3 signs the object key as it is (no normalisation),
 * URI-encoded once: the URL's path is decoded segment by segment and
 * re-encoded with the strict AWS rule, because WHATWG URLs leave characters
 * such as ( ) ! * ' unencoded. Other services sign the path as sent, with dot
 * segments and empty segments removed, URI-encoded a second time.
 */
function canonicalUri(url: URL, service: string): string {
  const path = url.pathname || "/";
  if (service === "s3") return path.split("/").map((seg) => uriEncode(decode(seg), false)).join("/");
  const kept: string[] = [];
  for (const seg of path.split("/")) {
    if (seg === "" || seg === ".") continue;
    if (seg === "..") kept.pop();
    else kept.push(seg);
  }
  const trailing = path.endsWith("/") && kept.length > 0 ? "/" : "";
  return uriEncode(`/${kept.join("/")}${trailing}`, true);
}

/** Parameters sorted by encoded name, then encoded value; '+' stays a literal plus. */
function canonicalQuery(url: URL): string {
  const query = url.search.startsWith("?") ? url.search.slice(1) : url.search;
  const pairs: [string, string][] = [];
  for (const part of query.split("&")) {
    if (part === "") continue;
    const eq = part.indexOf("=");
    const name = eq < 0 ? part : part.slice(0, eq);
    const value = eq < 0 ? "" : part.slice(eq + 1);
    pairs.push([uriEncode(decode(name), false), uriEncode(decode(value), false)]);
  }
  pairs.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0));
  return pairs.map(([n, v]) => `${n}=${v}`).join("&");
}

function amzDate(t: Date): string {
  return t.toISOString().replace(/[-:]/g, "").replace(/\.\d{3}/, "");
}

function checkCredentials(creds: SigV4Credentials): void {
  if (typeof creds !== "object" || creds === null) throw new InvalidArgumentError("AWS credentials are missing");
  for (const key of ["accessKeyId", "secretAccessKey", "region"] as const) {
    const v = creds[key];
    if (typeof v !== "string" || v === "") throw new InvalidArgumentError(`AWS credentials: ${key} is missing or empty`);
  }
  if (creds.sessionToken !== undefined && typeof creds.sessionToken !== "string") {
    throw new InvalidArgumentError("AWS credentials: sessionToken must be a string");
  }
  if (creds.service !== undefined && (typeof creds.service !== "string" || creds.service === "")) {
    throw new InvalidArgumentError("AWS credentials: service must be a non-empty string");
  }
}

/**
 * Signs one request with AWS Signature Version 4. Every header of
 * `input.headers` is signed (names lower-cased, values trimmed with inner
 * runs of whitespace collapsed) except the unsignable ones above, plus
 * `host` (from the URL), `x-amz-date`, `x-amz-security-token` when the
 * credentials carry a session token and `x-amz-content-sha256` when asked.
 */
export async function signAwsV4Request(input: SigV4Input, creds: SigV4Credentials): Promise<SigV4Result> {
  checkCredentials(creds);
  if (typeof input !== "object" || input === null) throw new InvalidArgumentError("signAwsV4Request: input is missing");
  if (!(input.url instanceof URL)) throw new InvalidArgumentError("signAwsV4Request: input.url must be a URL");
  if (!(input.headers instanceof Headers)) throw new InvalidArgumentError("signAwsV4Request: input.headers must be a Headers");
  if (typeof input.method !== "string" || input.method === "") throw new InvalidArgumentError("signAwsV4Request: input.method is missing");
  if (typeof input.payloadHash !== "string" || input.payloadHash === "") {
    throw new InvalidArgumentError("signAwsV4Request: input.payloadHash is missing");
  }
  if (!(input.timestamp instanceof Date) || Number.isNaN(input.timestamp.getTime())) {
    throw new InvalidArgumentError("signAwsV4Request: input.timestamp must be a valid Date");
  }
  const service = creds.service ?? "s3";
  const when = amzDate(input.timestamp);
  const day = when.slice(0, 8);
  const scope = `${day}/${creds.region}/${service}/aws4_request`;

  const headers = new Headers(input.headers);
  headers.delete("authorization");
  headers.delete("host"); // fetch sets Host from the URL; it is signed from the URL below
  headers.set("x-amz-date", when);
  if (creds.sessionToken) headers.set("x-amz-security-token", creds.sessionToken);
  if (input.includeContentSha256) headers.set("x-amz-content-sha256", input.payloadHash);

  const signed = new Map<string, string>([["host", input.url.host]]);
  headers.forEach((value, name) => {
    if (!UNSIGNABLE.has(name)) signed.set(name, value.trim().replace(/\s+/g, " "));
  });
  const names = [...signed.keys()].sort();
  const signedHeaders = names.join(";");
  const canonicalRequest = [
    input.method.toUpperCase(),
    canonicalUri(input.url, service),
    canonicalQuery(input.url),
    names.map((n) => `${n}:${signed.get(n)}\n`).join(""),
    signedHeaders,
    input.payloadHash,
  ].join("\n");
  const stringToSign = ["AWS4-HMAC-SHA256", when, scope, await sha256Hex(canonicalRequest)].join("\n");

  const secret = encoder.encode(`AWS4${creds.secretAccessKey}`);
  let key = await hmac(secret.buffer.slice(secret.byteOffset, secret.byteOffset + secret.byteLength) as ArrayBuffer, day);
  for (const part of [creds.region, service, "aws4_request"]) key = await hmac(key, part);
  const signature = hex(await hmac(key, stringToSign));

  const authorization =
    `AWS4-HMAC-SHA256 Credential=${creds.accessKeyId}/${scope}, SignedHeaders=${signedHeaders}, Signature=${signature}`;
  headers.set("authorization", authorization);
  return { authorization, headers };
}

/**
 * A fetch that signs each request with `creds` (at the current time) and
 * sends it with `options.fetchImpl` (default: the global fetch); for
 * `TensogramFile.fromUrl(url, { fetch: createAwsSigV4Fetch(creds) })`.
 * GET and HEAD only, without a body. Range headers are signed, as the AWS
 * SDKs and S3's own documented example do. S3 requests (service "s3") carry
 * `x-amz-content-sha256` with the hash of the empty body.
 */
export function createAwsSigV4Fetch(creds: SigV4Credentials, options: AwsSigV4FetchOptions = {}): typeof fetch {
  checkCredentials(creds);
  const fixed: SigV4Credentials = { ...creds };
  const service = fixed.service ?? "s3";
  const signingFetch = async (input: RequestInfo | URL, init?: RequestInit): Promise<Response> => {
    const send = options.fetchImpl ?? globalThis.fetch;
    if (typeof send !== "function") throw new IoError("no fetch() in this environment");
    let url: URL;
    let method = "GET";
    let headers: Headers;
    let signal: AbortSignal | null | undefined;
    if (typeof Request !== "undefined" && input instanceof Request) {
      url = new URL(input.url);
      method = input.method;
      headers = new Headers(input.headers);
      signal = input.signal;
      if (input.body !== null) throw new InvalidArgumentError("AWS signing fetch: request bodies are not supported (read-only)");
    } else if (input instanceof URL || typeof input === "string") {
      try {
        url = new URL(input);
      } catch {
        throw new InvalidArgumentError(`AWS signing fetch: not an absolute URL: ${String(input)}`);
      }
      headers = new Headers();
    } else {
      throw new InvalidArgumentError("AWS signing fetch: input must be a URL, a URL string or a Request");
    }
    if (init?.method !== undefined) method = init.method;
    if (init?.headers !== undefined) new Headers(init.headers).forEach((v, n) => headers.set(n, v));
    if (init?.signal !== undefined) signal = init.signal;
    if (init?.body !== undefined && init.body !== null) {
      throw new InvalidArgumentError("AWS signing fetch: request bodies are not supported (read-only)");
    }
    method = method.toUpperCase();
    if (method !== "GET" && method !== "HEAD") {
      throw new InvalidArgumentError(`AWS signing fetch: only GET and HEAD are signed (read-only), got ${method}`);
    }
    const signed = await signAwsV4Request(
      { method, url, headers, payloadHash: EMPTY_PAYLOAD_SHA256, timestamp: new Date(), includeContentSha256: service === "s3" },
      fixed,
    );
    return send(url, { method, headers: signed.headers, ...(signal ? { signal } : {}) });
  };
  return signingFetch as typeof fetch;
}
