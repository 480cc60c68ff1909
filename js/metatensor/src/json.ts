// Strict JSON for the header and the embedded documents (spec 06 §2 rules
// 3–4 and 7, §3.1, §8.4), and the compact serialisation the C++ writer uses
// (nlohmann::json::dump(): object members sorted by UTF-8 byte value, no
// whitespace), which the canonical form of §3.5 depends on.
import { ErrorCode, MetatensorError, quoted } from "./errors.js";

export type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

/** A number written with a fraction or exponent, kept apart in header mode (§2 rule 7). */
export class JsonFloat {
  constructor(readonly value: number, readonly text: string) {}
}

/** Nesting limit of the C++ parser (src/metatensor/strict_json.hpp). */
export const MAX_JSON_DEPTH = 64;
export const MAX_SAFE = Number.MAX_SAFE_INTEGER; // 2^53 - 1

export interface ParseOptions {
  /** Error for syntax errors. */
  syntax: ErrorCode;
  /** Error for a duplicate key (rule 4). */
  duplicate: ErrorCode;
  /** What is parsed, for messages ("header", "schema"). */
  what: string;
  /**
   * Header mode: numbers with a fraction or exponent become JsonFloat and
   * integers beyond 2^53 - 1 become bigint, so rule 7 can name them.
   * Otherwise an integer beyond ±(2^53 - 1) is a syntax-code error (§3.1).
   */
  header?: boolean;
  /** Integers beyond ±(2^53 - 1) become bigint instead of failing. */
  bigint?: boolean;
}

/** Sets a member; `__proto__` becomes an own property, not the prototype. */
export function setMember(o: Record<string, unknown>, k: string, v: unknown): void {
  if (k === "__proto__") Object.defineProperty(o, k, { value: v, enumerable: true, writable: true, configurable: true });
  else o[k] = v;
}

export function hasOwn(o: object, k: string): boolean {
  return Object.prototype.hasOwnProperty.call(o, k);
}

class Parser {
  i = 0;
  duplicate: string | undefined;
  tooDeep = false;
  depth = 0;
  constructor(readonly s: string, readonly o: ParseOptions) {}

  err(msg: string): never {
    throw new MetatensorError(this.o.syntax, `${this.o.what} is not one JSON value: ${msg} at character ${this.i}`);
  }
  ws(): void {
    const s = this.s;
    while (this.i < s.length) {
      const c = s.charCodeAt(this.i);
      if (c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d) this.i++;
      else break;
    }
  }
  value(): unknown {
    this.ws();
    const c = this.s[this.i];
    switch (c) {
      case "{": return this.object();
      case "[": return this.array();
      case '"': return this.string();
      case "t": return this.lit("true", true);
      case "f": return this.lit("false", false);
      case "n": return this.lit("null", null);
      default:
        if (c === "-" || (c !== undefined && c >= "0" && c <= "9")) return this.number();
        return this.err(c === undefined ? "unexpected end" : `unexpected ${quoted(c)}`);
    }
  }
  lit(word: string, v: unknown): unknown {
    if (this.s.startsWith(word, this.i)) {
      this.i += word.length;
      return v;
    }
    return this.err("invalid literal");
  }
  open(): void {
    if (++this.depth > MAX_JSON_DEPTH) this.tooDeep = true;
  }
  object(): unknown {
    this.i++;
    this.open();
    const out: Record<string, unknown> = {};
    const seen = new Set<string>();
    this.ws();
    if (this.s[this.i] === "}") {
      this.i++;
      this.depth--;
      return out;
    }
    for (;;) {
      this.ws();
      if (this.s[this.i] !== '"') this.err("expected a string key");
      const k = this.string();
      if (seen.has(k)) {
        if (this.duplicate === undefined) this.duplicate = k;
      } else seen.add(k);
      this.ws();
      if (this.s[this.i] !== ":") this.err("expected ':'");
      this.i++;
      const v = this.value();
      setMember(out, k, v);
      this.ws();
      const c = this.s[this.i++];
      if (c === "}") break;
      if (c !== ",") this.err("expected ',' or '}'");
    }
    this.depth--;
    return out;
  }
  array(): unknown {
    this.i++;
    this.open();
    const out: unknown[] = [];
    this.ws();
    if (this.s[this.i] === "]") {
      this.i++;
      this.depth--;
      return out;
    }
    for (;;) {
      out.push(this.value());
      this.ws();
      const c = this.s[this.i++];
      if (c === "]") break;
      if (c !== ",") this.err("expected ',' or ']'");
    }
    this.depth--;
    return out;
  }
  string(): string {
    const s = this.s;
    this.i++; // opening quote
    let out = "";
    let start = this.i;
    for (;;) {
      if (this.i >= s.length) this.err("unterminated string");
      const c = s.charCodeAt(this.i);
      if (c === 0x22) {
        out += s.slice(start, this.i);
        this.i++;
        return out;
      }
      if (c < 0x20) this.err("control character in a string");
      if (c === 0x5c) {
        out += s.slice(start, this.i);
        const e = s[this.i + 1];
        this.i += 2;
        switch (e) {
          case '"': out += '"'; break;
          case "\\": out += "\\"; break;
          case "/": out += "/"; break;
          case "b": out += "\b"; break;
          case "f": out += "\f"; break;
          case "n": out += "\n"; break;
          case "r": out += "\r"; break;
          case "t": out += "\t"; break;
          case "u": {
            const u = this.hex4();
            if (u >= 0xd800 && u <= 0xdbff) {
              if (s[this.i] !== "\\" || s[this.i + 1] !== "u") this.err("lone surrogate escape");
              this.i += 2;
              const l = this.hex4();
              if (l < 0xdc00 || l > 0xdfff) this.err("lone surrogate escape");
              out += String.fromCharCode(u, l);
            } else if (u >= 0xdc00 && u <= 0xdfff) {
              this.err("lone surrogate escape");
            } else out += String.fromCharCode(u);
            break;
          }
          default: this.err("invalid escape");
        }
        start = this.i;
        continue;
      }
      this.i++;
    }
  }
  hex4(): number {
    const h = this.s.slice(this.i, this.i + 4);
    if (!/^[0-9a-fA-F]{4}$/.test(h)) this.err("invalid \\u escape");
    this.i += 4;
    return parseInt(h, 16);
  }
  number(): unknown {
    const s = this.s;
    const m = /^-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?/.exec(s.slice(this.i, this.i + 400));
    if (!m) return this.err("invalid number");
    let text = m[0];
    if (text.length === 400) {
      const r = /^-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?/.exec(s.slice(this.i));
      text = r![0];
    }
    this.i += text.length;
    const isFloat = m[1] !== undefined || m[2] !== undefined;
    const v = Number(text);
    if (isFloat) {
      if (!Number.isFinite(v)) this.err("number out of range");
      return this.o.header ? new JsonFloat(v, text) : v;
    }
    if (Math.abs(v) > MAX_SAFE) {
      if (this.o.header || this.o.bigint) return BigInt(text);
      throw new MetatensorError(this.o.syntax, `${this.o.what}: integer ${text} exceeds 2^53-1`);
    }
    return v === 0 ? 0 : v; // "-0" is the integer 0
  }
}

/** Parses one JSON value (§2 rules 3–4): complete parse first, then duplicate keys, then depth. */
export function parseStrictJson(text: string, o: ParseOptions): unknown {
  if (text.charCodeAt(0) === 0xfeff) throw new MetatensorError(o.syntax, `${o.what} starts with a byte-order mark`);
  const p = new Parser(text, o);
  const v = p.value();
  p.ws();
  if (p.i !== text.length) p.err("trailing characters");
  if (p.duplicate !== undefined) throw new MetatensorError(o.duplicate, `duplicate key ${quoted(p.duplicate)} in a ${o.what} object`);
  if (p.tooDeep) throw new MetatensorError("MT_LIMIT", `${o.what} JSON nested deeper than ${MAX_JSON_DEPTH} levels`);
  return v;
}

/** UTF-8 byte order of two strings (= code point order). */
export function compareUtf8(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    // Surrogates (code points above U+FFFF) sort after U+E000..U+FFFF in UTF-8.
    const hx = x >= 0xd800 && x <= 0xdfff;
    const hy = y >= 0xd800 && y <= 0xdfff;
    if (hx !== hy) return hx ? 1 : -1;
    return x - y;
  }
  return a.length - b.length;
}

// nlohmann's dump of a double: shortest digits, then format_buffer() with
// min_exp = -4 and max_exp = 15 (the digits10 of double).
function dumpFloat(v: number): string {
  if (!Number.isFinite(v)) return "null";
  if (v === 0) return Object.is(v, -0) ? "-0.0" : "0.0";
  const neg = v < 0;
  const [mant, expText] = Math.abs(v).toExponential().split("e");
  const digits = mant!.replace(".", "");
  const k = digits.length;
  const n = Number(expText) + 1;
  let out: string;
  if (k <= n && n <= 15) out = digits + "0".repeat(n - k) + ".0";
  else if (0 < n && n <= 15) out = digits.slice(0, n) + "." + digits.slice(n);
  else if (-4 < n && n <= 0) out = "0." + "0".repeat(-n) + digits;
  else {
    const e = n - 1;
    const ae = Math.abs(e);
    out = (k === 1 ? digits : digits[0] + "." + digits.slice(1)) + "e" + (e < 0 ? "-" : "+") + (ae < 10 ? "0" + ae : String(ae));
  }
  return neg ? "-" + out : out;
}

// Integral numbers up to 2^53 - 1 are written as integers; larger ones as
// floats, since embedded documents may not hold integers above 2^53 - 1
// (§3.1) and a double of that size is what nlohmann would hold anyway.
function dumpNumber(v: number): string {
  if (Number.isInteger(v) && Math.abs(v) <= MAX_SAFE) return String(v === 0 ? 0 : v);
  return dumpFloat(v);
}

/**
 * Compact JSON as nlohmann::json::dump() writes it: members sorted by UTF-8
 * bytes, integers without fraction, strings escaped as JSON.stringify does
 * (the same escapes nlohmann uses for valid UTF-8 text).
 */
export function dumpJson(v: unknown): string {
  if (v === null || v === undefined) return "null";
  switch (typeof v) {
    case "boolean": return v ? "true" : "false";
    case "number": return dumpNumber(v);
    case "bigint": return v.toString();
    case "string": return JSON.stringify(v);
    case "object": {
      if (v instanceof JsonFloat) return dumpFloat(v.value);
      if (Array.isArray(v)) return "[" + v.map(dumpJson).join(",") + "]";
      const keys = Object.keys(v).filter((k) => (v as Record<string, unknown>)[k] !== undefined).sort(compareUtf8);
      return "{" + keys.map((k) => JSON.stringify(k) + ":" + dumpJson((v as Record<string, unknown>)[k])).join(",") + "}";
    }
    default: throw new MetatensorError("MT_INVALID_ARGUMENT", `cannot serialise a ${typeof v} as JSON`);
  }
}

/** JSON equality as nlohmann compares values: numbers numerically, object members unordered. */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if ((typeof a === "number" || typeof a === "bigint") && (typeof b === "number" || typeof b === "bigint")) {
    // eslint-disable-next-line eqeqeq
    return a == b;
  }
  if (a instanceof JsonFloat) return jsonEqual(a.value, b);
  if (b instanceof JsonFloat) return jsonEqual(a, b.value);
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const bb = b as unknown[];
    return a.length === bb.length && a.every((x, i) => jsonEqual(x, bb[i]));
  }
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  if (ka.length !== kb.length) return false;
  return ka.every((k) => hasOwn(b, k) && jsonEqual((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]));
}

export function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v) && !(v instanceof JsonFloat);
}
