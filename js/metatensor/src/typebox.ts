// TypeBox authoring (spec 06 §4.7): builders for the binary kinds that emit
// the dialect's JSON (the `TypeDef:` keywords are ordinary string-keyed
// options, so JSON.stringify gives the schema a file embeds) and register
// TypeBox validators for them, so that `Value.Check(schema, value)` agrees
// with what the writer accepts and deep validation (§8.3) passes.
import { Kind, Type, TypeRegistry, type SchemaOptions, type TSchema, type TObject, type TArray, type TProperties, type Static } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import { DType, dtypeBits, isInteger } from "./dtypes.js";
import { encodeSmallFloat } from "./encode.js";
import { evaluate } from "./evaluate.js";
import { hasOwn, isObject } from "./json.js";
import { SCALAR_KEYWORDS, compileSchema, scalarKeyword } from "./schema.js";
import { normalizeSchema } from "./writer.js";

/** A dialect leaf: TypeBox kind "TypeDef:<Name>", checked by our validator. */
export interface TScalar<T = number> extends TSchema {
  [Kind]: string;
  static: T;
}
export interface TStringBlob extends TSchema {
  [Kind]: "TypeDef:String";
  static: string;
  type: "string";
}
export interface TList<T extends TSchema = TSchema> extends TSchema {
  [Kind]: "TypeDef:List";
  static: Static<T>[];
  type: "array";
  items: T;
}
export interface TTupleRecord<T extends TSchema[] = TSchema[]> extends TSchema {
  [Kind]: "Metatensor:Tuple";
  static: { [K in keyof T]: T[K] extends TSchema ? Static<T[K]> : never };
  type: "array";
  prefixItems: T;
}
export interface TDialectNode extends TSchema {
  [Kind]: "Metatensor:Node";
  static: unknown;
}

const noRefs = () => undefined;

/** Strips what is not part of one node's own value keywords, for the evaluator. */
function ownKeywords(schema: Record<string, unknown>, drop: string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(schema)) if (!drop.includes(k)) out[k] = schema[k];
  return out;
}

/** True when `v` is representable in `t` as the writer encodes it (§8.3 in reverse). */
export function representable(t: DType, v: unknown): boolean {
  if (t === "BOOL") return typeof v === "boolean";
  if (t === "C64") return Array.isArray(v) && v.length === 2 && representable("F32", v[0]) && representable("F32", v[1]);
  if (isInteger(t)) {
    let i: bigint;
    if (typeof v === "bigint") i = v;
    else if (typeof v === "number" && Number.isInteger(v)) i = BigInt(v);
    else return false;
    const bits = BigInt(dtypeBits(t));
    const signed = t.startsWith("I");
    const lo = signed ? -(1n << (bits - 1n)) : 0n;
    const hi = signed ? (1n << (bits - 1n)) - 1n : (1n << bits) - 1n;
    return i >= lo && i <= hi;
  }
  if (typeof v !== "number") return false;
  if (t === "F64") return true;
  if (t === "F32") return !Number.isFinite(v) || Number.isFinite(Math.fround(v));
  try {
    encodeSmallFloat(t, v);
    return true;
  } catch {
    return false;
  }
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
let registered = false;
/** Registers the TypeBox validators of the dialect's kinds (done on import; idempotent). */
export function registerTypeDefKinds(): void {
  if (registered) return;
  registered = true;
  for (const s of SCALAR_KEYWORDS) {
    TypeRegistry.Set(s.name, (schema: Record<string, unknown>, value: unknown) =>
      representable(s.dtype, value) && !evaluate(ownKeywords(schema, []), value, noRefs));
  }
  TypeRegistry.Set("TypeDef:String", (schema: Record<string, unknown>, value: unknown) =>
    typeof value === "string" && !LONE_SURROGATE.test(value) && !evaluate(ownKeywords(schema, []), value, noRefs));
  TypeRegistry.Set("TypeDef:List", (schema: Record<string, unknown>, value: unknown) => {
    const arr = Array.isArray(value) ? value : ArrayBuffer.isView(value) ? Array.from(value as unknown as ArrayLike<unknown>) : undefined;
    if (!arr) return false;
    const items = schema["items"] as TSchema;
    return arr.every((x) => Value.Check(items, x)) && !evaluate(ownKeywords(schema, ["items"]), arr, noRefs);
  });
  TypeRegistry.Set("Metatensor:Tuple", (schema: Record<string, unknown>, value: unknown) => {
    const items = schema["prefixItems"] as TSchema[];
    return Array.isArray(value) && value.length === items.length && items.every((s, i) => Value.Check(s, value[i])) &&
      !evaluate(ownKeywords(schema, ["prefixItems", "items"]), value, noRefs);
  });
  TypeRegistry.Set("Metatensor:Node", (schema: Record<string, unknown>, value: unknown) => {
    const check = (schema as { [CHECK]?: (v: unknown) => boolean })[CHECK];
    return check ? check(value) : !evaluate(schema, value, noRefs);
  });
}
const CHECK = Symbol("metatensor.check");
registerTypeDefKinds();

function scalar<T = number>(t: DType, type: string, options: SchemaOptions = {}): TScalar<T> {
  const kw = scalarKeyword(t);
  return { ...options, [Kind]: kw, type, [kw]: true } as unknown as TScalar<T>;
}

export const Bool = (o?: SchemaOptions) => scalar<boolean>("BOOL", "boolean", o);
export const Int8 = (o?: SchemaOptions) => scalar("I8", "integer", o);
export const Uint8 = (o?: SchemaOptions) => scalar("U8", "integer", o);
export const Int16 = (o?: SchemaOptions) => scalar("I16", "integer", o);
export const Uint16 = (o?: SchemaOptions) => scalar("U16", "integer", o);
export const Int32 = (o?: SchemaOptions) => scalar("I32", "integer", o);
export const Uint32 = (o?: SchemaOptions) => scalar("U32", "integer", o);
/** 64-bit integers: bigint (or safe integer numbers) in JS. */
export const Int64 = (o?: SchemaOptions) => scalar<bigint | number>("I64", "integer", o);
export const Uint64 = (o?: SchemaOptions) => scalar<bigint | number>("U64", "integer", o);
export const Float16 = (o?: SchemaOptions) => scalar("F16", "number", o);
export const BFloat16 = (o?: SchemaOptions) => scalar("BF16", "number", o);
export const Float32 = (o?: SchemaOptions) => scalar("F32", "number", o);
export const Float64 = (o?: SchemaOptions) => scalar("F64", "number", o);
export const Complex64 = (o?: SchemaOptions) => scalar<[number, number]>("C64", "array", o);
export const Float8E4M3 = (o?: SchemaOptions) => scalar("F8_E4M3", "number", o);
export const Float8E5M2 = (o?: SchemaOptions) => scalar("F8_E5M2", "number", o);
export const Float8E8M0 = (o?: SchemaOptions) => scalar("F8_E8M0", "number", o);
export const Float8E4M3FNUZ = (o?: SchemaOptions) => scalar("F8_E4M3FNUZ", "number", o);
export const Float8E5M2FNUZ = (o?: SchemaOptions) => scalar("F8_E5M2FNUZ", "number", o);
export const Float4E2M1 = (o?: SchemaOptions) => scalar("F4", "number", o);
export const Float6E2M3 = (o?: SchemaOptions) => scalar("F6_E2M3", "number", o);
export const Float6E3M2 = (o?: SchemaOptions) => scalar("F6_E3M2", "number", o);

/** The leaf builder of a dtype name ("F32") or its lower-case alias ("f32", "float32"). */
export function Scalar(dtype: DType | string, options?: SchemaOptions): TScalar<unknown> {
  const t = parseDType(dtype);
  const kw = SCALAR_KEYWORDS.find((s) => s.dtype === t)!;
  const type = kw.types.includes("boolean") ? "boolean" : kw.types.includes("array") ? "array" : t === "F16" || t === "BF16" || t === "F32" || t === "F64" || !kw.types.includes("integer") ? "number" : "integer";
  return scalar(t, type, options);
}

const ALIASES: Record<string, DType> = {
  bool: "BOOL", u8: "U8", uint8: "U8", i8: "I8", int8: "I8", u16: "U16", uint16: "U16", i16: "I16", int16: "I16",
  u32: "U32", uint32: "U32", i32: "I32", int32: "I32", u64: "U64", uint64: "U64", i64: "I64", int64: "I64",
  f16: "F16", float16: "F16", bf16: "BF16", bfloat16: "BF16", f32: "F32", float32: "F32", f64: "F64", float64: "F64",
  c64: "C64", complex64: "C64",
};
/** "F32", "f32", "float32" → "F32". */
export function parseDType(s: string): DType {
  const t = ALIASES[s.toLowerCase()] ?? (SCALAR_KEYWORDS.find((k) => k.dtype === s)?.dtype);
  if (!t) throw new TypeError(`unknown dtype ${JSON.stringify(s)}`);
  return t;
}

/**
 * A record type (§4.4 TypeDef:Struct): every property required, field order
 * = declaration order, closed (`additionalProperties: false`) because a
 * record has no room for other members: the writer refuses them too.
 */
export function Struct<T extends TProperties>(properties: T, options: SchemaOptions & { align?: number } = {}): TObject<T> {
  const { align, ...rest } = options;
  return Type.Object(properties, { additionalProperties: false, ...rest, "TypeDef:Struct": align === undefined ? true : { align } }) as TObject<T>;
}

/** A variable-length UTF-8 string (§4.4 TypeDef:String). */
export function String(options: SchemaOptions = {}): TStringBlob {
  return { ...options, [Kind]: "TypeDef:String", type: "string", "TypeDef:String": true } as unknown as TStringBlob;
}
export const Utf8 = String;

/** A variable-length list of a fixed-size type (§4.4 TypeDef:List). */
export function List<T extends TSchema>(items: T, options: SchemaOptions = {}): TList<T> {
  return { ...options, [Kind]: "TypeDef:List", type: "array", "TypeDef:List": true, items } as unknown as TList<T>;
}
/** A blob of bytes (a List of Uint8), or with `items` a List of them. */
export function Blob<T extends TSchema = TScalar>(items?: T, options: SchemaOptions = {}): TList<T> {
  return List((items ?? Uint8()) as T, options);
}

/** A fixed array inside a record (§4.5): exactly `n` items. */
export function FixedArray<T extends TSchema>(items: T, n: number, options: SchemaOptions = {}): TArray<T> {
  return Type.Array(items, { ...options, minItems: n, maxItems: n });
}
/** A tuple in the 2020-12 form the dialect needs (§4.5): prefixItems + items: false. */
export function Tuple<T extends TSchema[]>(items: [...T], options: SchemaOptions = {}): TTupleRecord<T> {
  return { ...options, [Kind]: "Metatensor:Tuple", type: "array", prefixItems: items, items: false, minItems: items.length, maxItems: items.length } as unknown as TTupleRecord<T>;
}
/**
 * A tensor of `element`: one array level per dimension, innermost last;
 * a number fixes a dimension, null leaves it free (`Tensor(Float32(), [null, 3])`).
 */
export function Tensor<T extends TSchema>(element: T, shape: readonly (number | null | { min?: number; max?: number })[]): TSchema {
  let s: TSchema = element;
  for (let i = shape.length - 1; i >= 0; i--) {
    const d = shape[i];
    const o: Record<string, number> = {};
    if (typeof d === "number") o["minItems"] = o["maxItems"] = d;
    else if (d && typeof d === "object") {
      if (d.min !== undefined) o["minItems"] = d.min;
      if (d.max !== undefined) o["maxItems"] = d.max;
    }
    s = Type.Array(s, o);
  }
  return s;
}
/** Raises a struct field's, tuple element's or root property's alignment (§4.4 TypeDef:Align). */
export function Align<T extends TSchema>(schema: T, align: number): T {
  return { ...schema, "TypeDef:Align": align } as T;
}

/** The root schema of a file: each property is a logical tensor; `optional` ones may be absent. */
export function Metatensor<T extends TProperties>(tensors: T, options: SchemaOptions & { optional?: (keyof T)[]; closed?: boolean } = {}): TObject<T> {
  const { optional = [], closed = true, ...rest } = options;
  const props: Record<string, TSchema> = {};
  for (const k of Object.keys(tensors)) props[k] = optional.includes(k) ? Type.Optional(tensors[k]!) : tensors[k]!;
  return Type.Object(props, { $schema: "https://json-schema.org/draft/2020-12/schema", ...rest, ...(closed ? { additionalProperties: false } : {}) }) as unknown as TObject<T>;
}

/** The dialect JSON of a TypeBox schema (what a file embeds), normalised (§4.3). */
export function toJsonSchema(schema: TSchema): Record<string, unknown> {
  return normalizeSchema(JSON.parse(JSON.stringify(schema)));
}

// fromJsonSchema: dialect JSON → checkable TypeBox schema.
const ANNOTATIONS_OK = new Set(["$id", "$comment", "title", "description", "default", "examples", "deprecated", "readOnly", "writeOnly", "format", "contentEncoding", "contentMediaType", "$schema", "$defs"]);

/**
 * Turns a plain dialect schema (e.g. read from a file's `metatensor.schema`)
 * into a TypeBox schema that `Value.Check` can check: leaves and Lists get
 * our kinds, objects and arrays TypeBox's own, `$ref`s are followed, and
 * nodes with combinators are checked by our evaluator.
 */
export function fromJsonSchema(document: unknown): TSchema {
  const doc = normalizeSchema(document);
  const compiled = compileSchema(doc); // dialect errors surface here (MT_*)
  const resolve = (n: Record<string, unknown>) => compiled.refTarget(n);
  const memo = new Map<unknown, TSchema>();
  const conv = (node: unknown): TSchema => {
    if (node === true) return Type.Any();
    if (node === false) return Type.Never();
    if (!isObject(node)) return Type.Any();
    const known = memo.get(node);
    if (known) return known;
    let out: TSchema;
    const keys = Object.keys(node);
    const combinators = keys.some((k) => ["allOf", "anyOf", "oneOf", "not", "if", "then", "else", "contains", "uniqueItems", "enum", "const"].includes(k));
    const plain = ownKeywords(node, ["properties", "items", "prefixItems", "$defs", "$ref", "required", "additionalProperties"]);
    if (hasOwn(node, "$ref")) {
      const target = conv(resolve(node));
      const extra = keys.filter((k) => k !== "$ref" && !ANNOTATIONS_OK.has(k) && k !== "TypeDef:Align");
      out = extra.length === 0 ? target : node_(node, (v) => Value.Check(target, v) && !evaluate(ownKeywords(node, ["$ref"]), v, resolve));
    } else if (combinators && !keys.some((k) => k.startsWith("TypeDef:"))) {
      out = node_(node, (v) => !evaluate(node, v, resolve));
    } else {
      const kw = keys.find((k) => k.startsWith("TypeDef:") && k !== "TypeDef:Align");
      const sk = kw ? SCALAR_KEYWORDS.find((s) => s.name === kw) : undefined;
      if (sk) out = { ...plain, [Kind]: sk.name } as unknown as TSchema;
      else if (kw === "TypeDef:String") out = { ...plain, [Kind]: "TypeDef:String" } as unknown as TSchema;
      else if (kw === "TypeDef:List") out = { ...plain, [Kind]: "TypeDef:List", items: conv(node["items"]) } as unknown as TSchema;
      else if (hasOwn(node, "prefixItems")) out = { ...plain, [Kind]: "Metatensor:Tuple", prefixItems: (node["prefixItems"] as unknown[]).map((s) => conv(s)), items: false } as unknown as TSchema;
      else if (hasOwn(node, "items")) out = Type.Array(conv(node["items"]), plain);
      else if (isObject(node["properties"])) {
        const req = new Set(Array.isArray(node["required"]) ? (node["required"] as string[]) : []);
        const props: Record<string, TSchema> = {};
        for (const [k, s] of Object.entries(node["properties"] as Record<string, unknown>)) props[k] = req.has(k) ? conv(s) : Type.Optional(conv(s));
        out = Type.Object(props, { ...plain, ...(node["additionalProperties"] === false ? { additionalProperties: false } : {}) });
      } else out = node_(node, (v) => !evaluate(node, v, resolve));
    }
    memo.set(node, out);
    return out;
  };
  return conv(doc);
}

function node_(json: Record<string, unknown>, check: (v: unknown) => boolean): TDialectNode {
  return { ...json, [Kind]: "Metatensor:Node", [CHECK]: check } as unknown as TDialectNode;
}

export { Type, Value };
