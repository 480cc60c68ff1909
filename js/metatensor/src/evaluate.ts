// A JSON Schema 2020-12 evaluator for the metatensor dialect's value
// keywords over logical values (spec 06 §8.3): 64-bit integers are bigint
// and compared exactly, NaN fails no bound but every enum/const/multipleOf,
// lengths count code points, `pattern` is an ECMA-262 regex, unanchored.
// `TypeDef:` keywords always pass (structure is checked elsewhere).
import { MetatensorError } from "./errors.js";
import { compareUtf8, hasOwn, isObject, jsonEqual } from "./json.js";

/** Resolves a `$ref` node to its target schema (the compiled schema's table). */
export type RefResolver = (node: Record<string, unknown>) => unknown;

export interface Failure {
  pointer: string;
  keyword: string;
  message: string;
  /** For "required": the missing member (not in `pointer`, which names the object). */
  member?: string;
  /** The schema object whose keyword failed (absent for a `false` schema). */
  schema?: Record<string, unknown>;
}

// Value descriptions as the C++ evaluator writes them (json_schema.cpp
// `describe`), so that messages read the same in both languages.
function describe(v: unknown): string {
  if (typeof v === "number") return Number.isNaN(v) ? "NaN" : v === Infinity ? "Infinity" : v === -Infinity ? "-Infinity" : String(v);
  if (typeof v === "bigint") return String(v);
  const arr = items(v);
  if (arr) return `an array of ${arr.length} items`;
  if (isObject(v)) return `an object of ${Object.keys(v).length} members`;
  const text = JSON.stringify(v) ?? String(v);
  return text.length > 80 ? text.slice(0, 80) + "..." : text;
}
const TYPE_ORDER = ["null", "boolean", "object", "array", "number", "string", "integer"];
function typeList(t: unknown): string {
  const ts = Array.isArray(t) ? t : [t];
  return TYPE_ORDER.filter((n) => ts.includes(n)).join(" or ");
}
function typeName(v: unknown): string {
  if (typeof v === "bigint") return "integer";
  if (typeof v === "number") return Number.isInteger(v) ? "integer" : "number";
  if (v === null) return "null";
  if (items(v)) return "array";
  return isObject(v) ? "object" : typeof v;
}

function ptrToken(t: string | number): string {
  return "/" + String(t).replace(/~/g, "~0").replace(/\//g, "~1");
}

function isNum(v: unknown): v is number | bigint {
  return typeof v === "number" || typeof v === "bigint";
}

function typeOk(v: unknown, t: unknown): boolean {
  switch (t) {
    case "null": return v === null;
    case "boolean": return typeof v === "boolean";
    case "number": return isNum(v);
    case "integer": return typeof v === "bigint" || (typeof v === "number" && Number.isInteger(v));
    case "string": return typeof v === "string";
    case "array": return Array.isArray(v) || ArrayBuffer.isView(v);
    case "object": return isObject(v);
    default: return false;
  }
}

/** Deep equality of logical values (typed views compare as arrays). */
function equal(a: unknown, b: unknown): boolean {
  if (typeof a === "number" && Number.isNaN(a)) return false;
  if (typeof b === "number" && Number.isNaN(b)) return false;
  if (ArrayBuffer.isView(a)) a = Array.from(a as unknown as ArrayLike<unknown>);
  if (ArrayBuffer.isView(b)) b = Array.from(b as unknown as ArrayLike<unknown>);
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => equal(x, b[i]));
  if (isObject(a) && isObject(b)) {
    const ka = Object.keys(a);
    return ka.length === Object.keys(b).length && ka.every((k) => hasOwn(b, k) && equal(a[k], b[k]));
  }
  return jsonEqual(a, b);
}

function cmp(v: number | bigint, bound: unknown): number | undefined {
  if (typeof bound !== "number") return undefined;
  if (typeof v === "number" && Number.isNaN(v)) return undefined;
  // JS compares bigint with number exactly.
  return v < bound ? -1 : v > bound ? 1 : 0;
}

function multipleOf(v: number | bigint, m: number): boolean {
  if (typeof v === "bigint") {
    if (Number.isInteger(m)) return v % BigInt(m) === 0n;
    v = Number(v);
  }
  if (!Number.isFinite(v)) return false;
  const q = v / m;
  return Number.isFinite(q) && Number.isInteger(q);
}

function codePoints(s: string): number {
  let n = 0;
  for (const _ of s) n++;
  return n;
}

const regexCache = new Map<string, RegExp>();
export function compilePattern(p: string): RegExp {
  let r = regexCache.get(p);
  if (!r) {
    try {
      r = new RegExp(p, "u");
    } catch (e) {
      throw new MetatensorError("MT_SCHEMA_UNSUPPORTED", `pattern ${JSON.stringify(p)}: ${(e as Error).message}`);
    }
    regexCache.set(p, r);
  }
  return r;
}

function items(v: unknown): unknown[] | undefined {
  if (Array.isArray(v)) return v;
  if (ArrayBuffer.isView(v)) return Array.from(v as unknown as ArrayLike<unknown>);
  return undefined;
}

/** The first failure of `value` against `schema`, or undefined when valid. */
export function evaluate(schema: unknown, value: unknown, resolve: RefResolver, pointer = ""): Failure | undefined {
  if (schema === true) return undefined;
  if (schema === false) return { pointer, keyword: "false", message: "the schema false admits no value" };
  if (!isObject(schema)) return undefined;
  const s = schema;
  const bad = (keyword: string, message: string): Failure => ({ pointer, keyword, message, schema: s });

  if (hasOwn(s, "$ref")) {
    const f = evaluate(resolve(s), value, resolve, pointer);
    if (f) return f;
  }
  if (hasOwn(s, "type")) {
    const t = s["type"];
    const ok = Array.isArray(t) ? t.some((x) => typeOk(value, x)) : typeOk(value, t);
    if (!ok) return bad("type", `expected ${typeList(t)}, got ${typeName(value)}`);
  }
  if (hasOwn(s, "enum") && Array.isArray(s["enum"]) && !s["enum"].some((e) => equal(value, e))) return bad("enum", `${describe(value)} is not one of the enumerated values`);
  if (hasOwn(s, "const") && !equal(value, s["const"])) return bad("const", `${describe(value)} is not the constant ${describe(s["const"])}`);
  if (isNum(value)) {
    const checks: [string, (c: number) => boolean, string][] = [
      ["minimum", (c) => c < 0, "is less than the minimum"], ["maximum", (c) => c > 0, "is greater than the maximum"],
      ["exclusiveMinimum", (c) => c <= 0, "is not greater than the exclusive minimum"], ["exclusiveMaximum", (c) => c >= 0, "is not less than the exclusive maximum"],
    ];
    for (const [kw, fails, says] of checks) {
      if (!hasOwn(s, kw)) continue;
      const c = cmp(value, s[kw]);
      if (c !== undefined && fails(c)) return bad(kw, `${describe(value)} ${says} ${describe(s[kw])}`);
    }
    if (hasOwn(s, "multipleOf") && typeof s["multipleOf"] === "number" && !multipleOf(value, s["multipleOf"])) {
      return bad("multipleOf", `${describe(value)} is not a multiple of ${describe(s["multipleOf"])}`);
    }
  }
  if (typeof value === "string") {
    const n = hasOwn(s, "minLength") || hasOwn(s, "maxLength") ? codePoints(value) : 0;
    if (typeof s["minLength"] === "number" && n < s["minLength"]) return bad("minLength", `string of ${n} code points is shorter than the minimum length ${s["minLength"]}`);
    if (typeof s["maxLength"] === "number" && n > s["maxLength"]) return bad("maxLength", `string of ${n} code points is longer than the maximum length ${s["maxLength"]}`);
    if (typeof s["pattern"] === "string" && !compilePattern(s["pattern"]).test(value)) return bad("pattern", `does not match ${JSON.stringify(s["pattern"])}`);
  }
  const arr = items(value);
  if (arr) {
    if (typeof s["minItems"] === "number" && arr.length < s["minItems"]) return bad("minItems", `array of ${arr.length} items has fewer than ${s["minItems"]}`);
    if (typeof s["maxItems"] === "number" && arr.length > s["maxItems"]) return bad("maxItems", `array of ${arr.length} items has more than ${s["maxItems"]}`);
    if (s["uniqueItems"] === true) {
      for (let i = 0; i < arr.length; i++) for (let j = i + 1; j < arr.length; j++) if (equal(arr[i], arr[j])) return bad("uniqueItems", `items ${i} and ${j} are equal`);
    }
    let prefix = 0;
    if (Array.isArray(s["prefixItems"])) {
      const pi = s["prefixItems"];
      prefix = pi.length;
      for (let i = 0; i < Math.min(prefix, arr.length); i++) {
        const f = evaluate(pi[i], arr[i], resolve, pointer + ptrToken(i));
        if (f) return f;
      }
    }
    if (hasOwn(s, "items")) {
      for (let i = prefix; i < arr.length; i++) {
        const f = evaluate(s["items"], arr[i], resolve, pointer + ptrToken(i));
        if (f) return f;
      }
    }
    if (hasOwn(s, "contains")) {
      const n = arr.filter((x, i) => !evaluate(s["contains"], x, resolve, pointer + ptrToken(i))).length;
      const min = typeof s["minContains"] === "number" ? s["minContains"] : 1;
      if (n < min) return bad("contains", `${n} items match contains, at least ${min} needed`);
      if (typeof s["maxContains"] === "number" && n > s["maxContains"]) return bad("maxContains", `${n} items match contains, at most ${s["maxContains"]} allowed`);
    }
  }
  if (isObject(value)) {
    // As the C++ evaluator (json_schema.cpp eval_object): required first,
    // then the listed properties and the unlisted members, each in UTF-8
    // order, so both report the same first violation.
    if (Array.isArray(s["required"])) {
      for (const r of s["required"]) {
        if (typeof r === "string" && !hasOwn(value, r)) return { ...bad("required", `missing the required member ${JSON.stringify(r)}`), member: r };
      }
    }
    const props = isObject(s["properties"]) ? s["properties"] : {};
    for (const k of Object.keys(props).sort(compareUtf8)) {
      if (!hasOwn(value, k)) continue;
      const f = evaluate(props[k], value[k], resolve, pointer + ptrToken(k));
      if (f) return f;
    }
    if (s["additionalProperties"] === false) {
      for (const k of Object.keys(value).sort(compareUtf8)) {
        if (!hasOwn(props, k)) return { pointer: pointer + ptrToken(k), keyword: "additionalProperties", message: `member ${JSON.stringify(k)} is not listed in "properties"`, schema: s };
      }
    }
  }
  if (Array.isArray(s["allOf"])) {
    for (const sub of s["allOf"]) {
      const f = evaluate(sub, value, resolve, pointer);
      if (f) return f;
    }
  }
  if (Array.isArray(s["anyOf"]) && !s["anyOf"].some((sub) => !evaluate(sub, value, resolve, pointer))) return bad("anyOf", `value matches none of the ${s["anyOf"].length} "anyOf" subschemas`);
  if (Array.isArray(s["oneOf"])) {
    const n = s["oneOf"].filter((sub) => !evaluate(sub, value, resolve, pointer)).length;
    if (n !== 1) return bad("oneOf", n === 0 ? 'value matches none of the "oneOf" subschemas' : 'value matches more than one of the "oneOf" subschemas');
  }
  if (hasOwn(s, "not") && !evaluate(s["not"], value, resolve, pointer)) return bad("not", 'value matches the "not" subschema');
  if (hasOwn(s, "if")) {
    const branch = evaluate(s["if"], value, resolve, pointer) ? "else" : "then";
    if (hasOwn(s, branch)) {
      const f = evaluate(s[branch], value, resolve, pointer);
      if (f) return f;
    }
  }
  return undefined;
}
