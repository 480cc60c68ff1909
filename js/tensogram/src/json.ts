// JSON in and out of the C ABI (spec 04 C.3) without losing 64-bit integers:
// integers beyond Number.MAX_SAFE_INTEGER come out as bigint (spec 07 G.3),
// and bigint values go in as plain JSON integers.

import { InvalidArgumentError, MetadataError } from "./errors.js";

export type CborValue =
  | null | boolean | number | bigint | string | Uint8Array | CborValue[] | { [key: string]: CborValue };

/** JSON text of `v`; bigint as an integer, non-finite numbers and bytes refused. */
export function toJson(v: unknown, path = "metadata"): string {
  if (v === null) return "null";
  switch (typeof v) {
    case "boolean":
      return v ? "true" : "false";
    case "bigint":
      return v.toString();
    case "number":
      if (!Number.isFinite(v)) {
        throw new InvalidArgumentError(`${path}: ${v} cannot be passed as JSON to the core`);
      }
      return JSON.stringify(v);
    case "string":
      return JSON.stringify(v);
    case "object": {
      if (Array.isArray(v)) return `[${v.map((x, i) => toJson(x, `${path}[${i}]`)).join(",")}]`;
      if (ArrayBuffer.isView(v)) throw new InvalidArgumentError(`${path}: byte strings are not supported here`);
      const parts: string[] = [];
      for (const [k, x] of Object.entries(v as Record<string, unknown>)) {
        if (x === undefined) continue;
        parts.push(`${JSON.stringify(k)}:${toJson(x, `${path}.${k}`)}`);
      }
      return `{${parts.join(",")}}`;
    }
    default:
      throw new InvalidArgumentError(`${path}: a ${typeof v} cannot be passed as metadata`);
  }
}

/** Parses JSON written by the core; unsafe integers become bigint. */
export function fromJson(text: string): CborValue {
  let i = 0;
  const fail = (what: string): never => {
    throw new MetadataError(`invalid JSON from the core at ${i}: ${what}`);
  };
  const ws = () => {
    while (i < text.length && " \t\r\n".includes(text[i]!)) i++;
  };
  const value = (): CborValue => {
    ws();
    const c = text[i];
    if (c === "{") {
      i++;
      const out: Record<string, CborValue> = {};
      ws();
      if (text[i] === "}") {
        i++;
        return out;
      }
      for (;;) {
        ws();
        const k = value();
        if (typeof k !== "string") fail("object key");
        ws();
        if (text[i++] !== ":") fail("':'");
        out[k as string] = value();
        ws();
        const d = text[i++];
        if (d === "}") return out;
        if (d !== ",") fail("',' or '}'");
      }
    }
    if (c === "[") {
      i++;
      const out: CborValue[] = [];
      ws();
      if (text[i] === "]") {
        i++;
        return out;
      }
      for (;;) {
        out.push(value());
        ws();
        const d = text[i++];
        if (d === "]") return out;
        if (d !== ",") fail("',' or ']'");
      }
    }
    if (c === '"') {
      const start = i;
      i++;
      while (i < text.length && text[i] !== '"') i += text[i] === "\\" ? 2 : 1;
      i++;
      return JSON.parse(text.slice(start, i)) as string;
    }
    const m = /^-?(?:0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?|^true|^false|^null/.exec(text.slice(i, i + 400));
    if (m === null) return fail("value");
    i += m[0].length;
    if (m[0] === "true") return true;
    if (m[0] === "false") return false;
    if (m[0] === "null") return null;
    if (m[1] === undefined && m[2] === undefined) {
      const n = Number(m[0]);
      return Number.isSafeInteger(n) ? n : BigInt(m[0]);
    }
    return Number(m[0]);
  };
  const v = value();
  ws();
  if (i !== text.length) fail("trailing text");
  return v;
}
