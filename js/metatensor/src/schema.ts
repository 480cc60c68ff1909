// The schema dialect and the layout it implies (spec 06 §4–§7), ported from
// src/metatensor/schema/{schema_compile,dialect_check,layout_compiler,
// layout_table}.cpp so that both languages accept the same schemas, report
// the same error names for the same first failure, and compute the same
// layout table (the writer's byte-identity depends on it).
import { DType, dtypeAlign, dtypeBits, isSubByte } from "./dtypes.js";
import { ErrorCode, MetatensorError, quoted } from "./errors.js";
import { compilePattern } from "./evaluate.js";
import { compareUtf8, hasOwn, isObject, jsonEqual, parseStrictJson } from "./json.js";
import { normalizeBuilderSchema } from "./builder.js";

export const SCHEMA_DIALECT_URI = "https://json-schema.org/draft/2020-12/schema";
export const MAX_SCHEMA_DEPTH = 64;
export const MAX_RECORD_SIZE = 2 ** 24;
export const MAX_RECORD_FIELDS = 65536;
export const MAX_LOGICAL_TENSORS = 2 ** 20;

/** §4.4 scalar keywords, with the JSON `type`s each allows. */
export const SCALAR_KEYWORDS: ReadonlyArray<{ name: string; dtype: DType; types: readonly string[] }> = [
  { name: "TypeDef:Bool", dtype: "BOOL", types: ["boolean"] },
  { name: "TypeDef:Int8", dtype: "I8", types: ["integer", "number"] },
  { name: "TypeDef:Uint8", dtype: "U8", types: ["integer", "number"] },
  { name: "TypeDef:Int16", dtype: "I16", types: ["integer", "number"] },
  { name: "TypeDef:Uint16", dtype: "U16", types: ["integer", "number"] },
  { name: "TypeDef:Int32", dtype: "I32", types: ["integer", "number"] },
  { name: "TypeDef:Uint32", dtype: "U32", types: ["integer", "number"] },
  { name: "TypeDef:Int64", dtype: "I64", types: ["integer", "number"] },
  { name: "TypeDef:Uint64", dtype: "U64", types: ["integer", "number"] },
  { name: "TypeDef:Float16", dtype: "F16", types: ["integer", "number"] },
  { name: "TypeDef:BFloat16", dtype: "BF16", types: ["integer", "number"] },
  { name: "TypeDef:Float32", dtype: "F32", types: ["integer", "number"] },
  { name: "TypeDef:Float64", dtype: "F64", types: ["integer", "number"] },
  { name: "TypeDef:Complex64", dtype: "C64", types: ["array"] },
  { name: "TypeDef:Float8E4M3", dtype: "F8_E4M3", types: ["number"] },
  { name: "TypeDef:Float8E5M2", dtype: "F8_E5M2", types: ["number"] },
  { name: "TypeDef:Float8E8M0", dtype: "F8_E8M0", types: ["number"] },
  { name: "TypeDef:Float8E4M3FNUZ", dtype: "F8_E4M3FNUZ", types: ["number"] },
  { name: "TypeDef:Float8E5M2FNUZ", dtype: "F8_E5M2FNUZ", types: ["number"] },
  { name: "TypeDef:Float4E2M1", dtype: "F4", types: ["number"] },
  { name: "TypeDef:Float6E2M3", dtype: "F6_E2M3", types: ["number"] },
  { name: "TypeDef:Float6E3M2", dtype: "F6_E3M2", types: ["number"] },
];
const SCALARS = new Map(SCALAR_KEYWORDS.map((s) => [s.name, s]));
export const KW_STRUCT = "TypeDef:Struct";
export const KW_STRING = "TypeDef:String";
export const KW_LIST = "TypeDef:List";
export const KW_ALIGN = "TypeDef:Align";

/** The scalar `TypeDef:` keyword of a dtype ("TypeDef:Float32"). */
export function scalarKeyword(t: DType): string {
  return SCALAR_KEYWORDS.find((s) => s.dtype === t)!.name;
}

const REJECTED = new Set([
  "$anchor", "$dynamicRef", "$dynamicAnchor", "$recursiveRef", "$recursiveAnchor", "$vocabulary", "definitions",
  "additionalItems", "unevaluatedItems", "unevaluatedProperties", "patternProperties", "propertyNames",
  "dependentRequired", "dependentSchemas", "dependencies", "minProperties", "maxProperties",
]);
const STRUCTURE = new Set(["type", "properties", "required", "items", "prefixItems", "minItems", "maxItems", "additionalProperties"]);
const isTypedef = (k: string) => k.startsWith("TypeDef:");
const knownTypedef = (k: string) => SCALARS.has(k) || k === KW_STRUCT || k === KW_STRING || k === KW_LIST || k === KW_ALIGN;

export type ValueType = "scalar" | "record" | "string" | "list";

/** A type inside a record or a List (§6.1): element type plus fixed-array dims. */
export interface TypeLayout {
  type: ValueType;
  scalar?: DType;
  shape: number[];
  record?: RecordLayout;
  elem?: TypeLayout;
  size: number;
  align: number;
  pointer: string;
}
export interface FieldLayout {
  name: string;
  offset: number;
  type: TypeLayout;
  hasDefault: boolean;
  default?: unknown;
  pointer: string;
}
export interface RecordLayout {
  size: number;
  align: number;
  fields: FieldLayout[];
  tuple: boolean;
}
export type TensorKind = "flat" | "struct" | "blob";
export interface DimensionBounds {
  min: number;
  max?: number;
  pointer: string;
}
/** One logical tensor (a root property, §5). */
export interface TensorLayout {
  name: string;
  kind: TensorKind;
  dims: DimensionBounds[];
  dtype?: DType;
  record?: RecordLayout;
  item?: TypeLayout;
  hasHeap: boolean;
  rootAlign: number;
  elementPointer: string;
}

export function rank(t: TensorLayout): number {
  return t.dims.length;
}
export function heapName(t: TensorLayout): string {
  return t.name + "#heap";
}
export function primaryDtype(t: TensorLayout): DType {
  return t.kind === "flat" ? t.dtype! : "U8";
}
export function trailingDim(t: TensorLayout): number | undefined {
  return t.kind === "struct" ? t.record!.size : t.kind === "blob" ? 16 : undefined;
}
function listAlign(t: TypeLayout): number {
  if (t.type === "list") return t.elem ? t.elem.align : 1;
  if (t.type === "record") return Math.max(1, ...t.record!.fields.map((f) => listAlign(f.type)));
  return 1;
}
export function primaryPlacement(t: TensorLayout, a: number): number {
  const ea = t.kind === "flat" ? dtypeAlign(t.dtype!) : t.kind === "struct" ? t.record!.align : 8;
  return Math.max(a, ea, t.rootAlign);
}
export function heapPlacement(t: TensorLayout, a: number): number {
  const ea = t.kind === "flat" ? 1 : t.kind === "struct" ? Math.max(1, ...t.record!.fields.map((f) => listAlign(f.type))) : listAlign(t.item!);
  return Math.max(a, ea, t.rootAlign);
}
export function typeHasBlobs(t: TypeLayout): boolean {
  if (t.type === "string" || t.type === "list") return true;
  if (t.type === "record") return recordHasBlobs(t.record!);
  return false;
}
export function recordHasBlobs(r: RecordLayout): boolean {
  return r.fields.some((f) => typeHasBlobs(f.type));
}

function fail(code: ErrorCode, ptr: string, msg: string): never {
  throw new MetatensorError(code, `${ptr === "" ? "schema root" : `schema ${ptr}`}: ${msg}`);
}

function pointerToken(t: string): string {
  return "/" + t.replace(/~/g, "~0").replace(/\//g, "~1");
}

const isPow2 = (v: number) => Number.isInteger(v) && v > 0 && (v & (v - 1)) === 0 && v <= 2 ** 30;
const alignUp = (x: number, a: number) => Math.ceil(x / a) * a;

interface Node {
  value: unknown;
  pointer: string;
  level: number;
  children: Map<string, Node[]>;
  refTarget?: Node;
}

const APPLIED = ["properties", "items", "prefixItems", "allOf", "anyOf", "oneOf", "not", "if", "then", "else", "contains"];
const CHILD_KEYWORDS = ["$defs", ...APPLIED];

/** A schema checked against the dialect and compiled (§4–§6). */
export class CompiledSchema {
  readonly document: Record<string, unknown>;
  readonly tensors: ReadonlyMap<string, TensorLayout>;
  readonly required: ReadonlySet<string>;
  /** @internal */
  readonly nodes: Map<string, Node>;
  /** @internal */
  readonly byValue: Map<unknown, Node>;
  constructor(document: Record<string, unknown>, tensors: Map<string, TensorLayout>, required: Set<string>, nodes: Map<string, Node>) {
    this.document = document;
    this.tensors = tensors;
    this.required = required;
    this.nodes = nodes;
    this.byValue = new Map([...nodes.values()].filter((n) => typeof n.value === "object").map((n) => [n.value, n]));
  }
  find(name: string): TensorLayout | undefined {
    return this.tensors.get(name);
  }
  /** Names of the root properties, byte-wise sorted. */
  names(): string[] {
    return [...this.tensors.keys()];
  }
  /** The `$ref` target of a schema object of this document, if it has one. */
  refTarget(node: unknown): unknown {
    return this.byValue.get(node)?.refTarget?.value;
  }
  /** The root property's schema with `$ref`s followed. */
  propertySchema(name: string): unknown {
    let n = this.nodes.get("/properties" + pointerToken(name))!;
    while (n.refTarget) n = n.refTarget;
    return n.value;
  }
}

class DocumentTable {
  nodes = new Map<string, Node>();
  ids = new Map<string, Node[]>();
  refs: Node[] = [];
  constructor(readonly root: unknown) {
    const queue: Node[] = [this.add(root, "", 1)];
    while (queue.length > 0) {
      const n = queue.shift()!;
      if (!isObject(n.value) || n.level > MAX_SCHEMA_DEPTH) continue;
      for (const k of CHILD_KEYWORDS) {
        if (!hasOwn(n.value, k)) continue;
        const v = n.value[k];
        const base = n.pointer + pointerToken(k);
        const kids: Node[] = [];
        const child = (sub: unknown, token?: string) => {
          const c = this.add(sub, token === undefined ? base : base + pointerToken(token), n.level + 1);
          kids.push(c);
          queue.push(c);
        };
        if (k === "$defs" || k === "properties") {
          if (isObject(v)) for (const key of Object.keys(v).sort(compareUtf8)) child(v[key], key);
        } else if (k === "prefixItems" || k === "allOf" || k === "anyOf" || k === "oneOf") {
          if (Array.isArray(v)) v.forEach((s, i) => child(s, String(i)));
        } else if (k === "items") {
          if (!Array.isArray(v)) child(v);
        } else child(v);
        n.children.set(k, kids);
      }
    }
  }
  add(value: unknown, pointer: string, level: number): Node {
    const n: Node = { value, pointer, level, children: new Map() };
    this.nodes.set(pointer, n);
    if (isObject(value)) {
      if (typeof value["$id"] === "string") {
        const list = this.ids.get(value["$id"]) ?? [];
        list.push(n);
        this.ids.set(value["$id"], list);
      }
      if (typeof value["$ref"] === "string") this.refs.push(n);
    }
    return n;
  }
  kids(n: Node, k: string): Node[] {
    return n.children.get(k) ?? [];
  }
}

// Pass 1: the dialect walk (§4.1–§4.3, §8.4).
function walk(t: DocumentTable, n: Node, valueOnly: boolean): void {
  const ptr = n.pointer;
  const node = n.value;
  if (n.level > MAX_SCHEMA_DEPTH) fail("MT_LIMIT", ptr, `schema nested deeper than ${MAX_SCHEMA_DEPTH} levels (§8.4)`);
  if (typeof node === "boolean") return;
  if (!isObject(node)) fail("MT_SCHEMA_DIALECT", ptr, "a schema must be an object or a boolean (§4.1)");
  const keys = Object.keys(node).sort(compareUtf8);
  for (const k of keys) {
    if (isTypedef(k) && !knownTypedef(k)) fail("MT_UNKNOWN_TYPEDEF", ptr, `unknown keyword ${quoted(k)} (§4.3)`);
  }
  for (const k of keys) {
    const v = node[k];
    if (REJECTED.has(k)) fail("MT_SCHEMA_DIALECT", ptr, `keyword ${quoted(k)} is not allowed (§4.3)`);
    if (k === "$schema" && v !== SCHEMA_DIALECT_URI) fail("MT_SCHEMA_DIALECT", ptr, `$schema must be ${quoted(SCHEMA_DIALECT_URI)} (§4.1)`);
    if (k === "additionalProperties" && v !== false) fail("MT_SCHEMA_DIALECT", ptr, "additionalProperties must be false (§4.3)");
    if (k === "items" && Array.isArray(v)) fail("MT_SCHEMA_DIALECT", ptr, "items must be a single schema, not an array; use prefixItems (§4.3)");
    const structure = STRUCTURE.has(k) || isTypedef(k) || k === "$ref";
    if (valueOnly && structure && k !== "type") {
      fail("MT_SCHEMA_DIALECT", ptr, `structure keyword ${quoted(k)} inside a combinator subschema (§4.2: only value keywords, annotations and type)`);
    }
    if (k !== "$ref" && hasOwn(node, "$ref") && structure && k !== KW_ALIGN) {
      fail("MT_SCHEMA_DIALECT", ptr, `structure keyword ${quoted(k)} next to $ref (§4.3)`);
    }
  }
  if (hasOwn(node, "$ref") && typeof node["$ref"] !== "string") fail("MT_SCHEMA_DIALECT", ptr, "$ref must be a string (§4.3)");
  if (hasOwn(node, "properties")) {
    if (!isObject(node["properties"])) fail("MT_SCHEMA_DIALECT", ptr, "properties must be an object");
    for (const c of t.kids(n, "properties")) walk(t, c, false);
  }
  if (hasOwn(node, "items")) for (const c of t.kids(n, "items")) walk(t, c, false);
  if (hasOwn(node, "prefixItems")) {
    if (!Array.isArray(node["prefixItems"])) fail("MT_SCHEMA_DIALECT", ptr, "prefixItems must be an array");
    for (const c of t.kids(n, "prefixItems")) walk(t, c, false);
  }
  for (const kw of ["allOf", "anyOf", "oneOf"]) {
    if (!hasOwn(node, kw)) continue;
    const v = node[kw];
    if (!Array.isArray(v) || v.length === 0) fail("MT_SCHEMA_DIALECT", ptr, `${quoted(kw)} must be a non-empty array`);
    for (const c of t.kids(n, kw)) walk(t, c, true);
  }
  for (const kw of ["not", "if", "then", "else", "contains"]) for (const c of t.kids(n, kw)) walk(t, c, true);
  if (hasOwn(node, "$defs")) {
    if (!isObject(node["$defs"])) fail("MT_SCHEMA_DIALECT", ptr, "$defs must be an object");
    for (const c of t.kids(n, "$defs")) walk(t, c, false);
  }
}

function percentDecode(s: string): string | undefined {
  try {
    return decodeURIComponent(s);
  } catch {
    return undefined;
  }
}

// Pass 2a: `$ref` targets (§4.3).
function resolveRefs(t: DocumentTable): void {
  for (const n of t.refs) {
    const text = (n.value as Record<string, unknown>)["$ref"] as string;
    let target: Node | undefined;
    if (text.startsWith("#")) {
      const frag = percentDecode(text.slice(1));
      if (frag !== undefined && (frag === "" || frag.startsWith("/"))) {
        const tokens = frag === "" ? [] : frag.slice(1).split("/");
        if (tokens.every((tok) => !/~[^01]|~$/.test(tok))) {
          const ptr = tokens.map((tok) => pointerToken(tok.replace(/~1/g, "/").replace(/~0/g, "~"))).join("");
          target = t.nodes.get(ptr);
        }
      }
    }
    if (!target) {
      const ids = t.ids.get(text) ?? [];
      if (ids.length > 1) fail("MT_SCHEMA_DIALECT", n.pointer, `$ref ${quoted(text)} matches the $id of several subschemas`);
      target = ids[0];
    }
    if (!target) {
      fail("MT_SCHEMA_DIALECT", n.pointer, `$ref ${quoted(text)} is neither a JSON Pointer fragment to a subschema of this document nor the $id of one (§4.3)`);
    }
    n.refTarget = target;
  }
}

// Pass 2b: reference cycles and nesting through references.
function checkCycles(t: DocumentTable): void {
  const height = new Map<Node, number>(); // 0 = on the current path
  const tooDeep = (n: Node): never => fail("MT_LIMIT", n.pointer, `schema nested deeper than ${MAX_SCHEMA_DEPTH} levels through $ref (§8.4)`);
  const visit = (n: Node, depth: number): number => {
    const h0 = height.get(n);
    if (h0 !== undefined) {
      if (h0 === 0) return 0;
      if (depth - 1 + h0 > MAX_SCHEMA_DEPTH) tooDeep(n);
      return h0;
    }
    if (depth > MAX_SCHEMA_DEPTH) tooDeep(n);
    height.set(n, 0);
    let h = 0;
    const step = (next: Node) => {
      if (height.get(next) === 0) fail("MT_SCHEMA_DIALECT", n.pointer, `reference cycle through ${quoted(next.pointer)} (§4.3)`);
      h = Math.max(h, visit(next, depth + 1));
    };
    for (const k of APPLIED) for (const c of t.kids(n, k)) step(c);
    if (n.refTarget) step(n.refTarget);
    height.set(n, h + 1);
    return h + 1;
  };
  const tree = [...t.nodes.values()].sort((a, b) => compareUtf8(a.pointer, b.pointer));
  for (const n of tree) visit(n, 1);
}

// Pass 3: kinds and layout (layout_compiler.cpp).
type NodeKind = "boolean" | "scalar" | "structure" | "tuple" | "string" | "list" | "array" | "other";
interface Resolved {
  n: Node;
  node: unknown;
  ptr: string;
  align: number;
  alignPtr?: string;
}

function nonNegInt(v: unknown): number {
  return typeof v === "number" && Number.isInteger(v) && v >= 0 ? v : 0;
}
function readUint(v: unknown, ptr: string, kw: string): number {
  if (typeof v === "number" && Number.isInteger(v) && v >= 0 && v <= Number.MAX_SAFE_INTEGER) return v;
  fail("MT_SCHEMA_TYPE", ptr, `${quoted(kw)} must be a non-negative integer`);
}
function checkType(node: Record<string, unknown>, ptr: string, allowed: readonly string[]): void {
  if (!hasOwn(node, "type")) return;
  const t = node["type"];
  const ok = (x: unknown) => typeof x === "string" && allowed.includes(x);
  const good = Array.isArray(t) ? t.length > 0 && t.every(ok) : ok(t);
  if (!good) fail("MT_SCHEMA_TYPE", ptr, `"type" ${JSON.stringify(t)} is not allowed here (§4.4)`);
}
function requireTrue(node: Record<string, unknown>, ptr: string, kw: string): void {
  if (node[kw] !== true) fail("MT_SCHEMA_TYPE", ptr, `${quoted(kw)} must be true (§4.4)`);
}
function forbid(node: Record<string, unknown>, ptr: string, what: string, kws: string[]): void {
  for (const kw of kws) if (hasOwn(node, kw)) fail("MT_SCHEMA_TYPE", ptr, `${what} must not carry ${quoted(kw)}`);
}

class Compiler {
  records = new Map<Node, RecordLayout>();
  fieldCounts = new Map<RecordLayout, number>();
  constructor(readonly t: DocumentTable) {}

  resolve(n: Node): Resolved {
    const r: Resolved = { n, node: n.value, ptr: n.pointer, align: 1 };
    for (;;) {
      const node = n.value;
      if (isObject(node)) {
        if (hasOwn(node, KW_ALIGN)) {
          const a = nonNegInt(node[KW_ALIGN]);
          if (!isPow2(a) || a > 65536) fail("MT_SCHEMA_TYPE", n.pointer, "TypeDef:Align must be a power of two between 1 and 65536 (§4.4)");
          r.align = Math.max(r.align, a);
          if (r.alignPtr === undefined) r.alignPtr = n.pointer;
        }
        if (n.refTarget) {
          n = n.refTarget;
          continue;
        }
      }
      r.n = n;
      r.node = node;
      r.ptr = n.pointer;
      return r;
    }
  }
  defaultAlongRefs(n: Node): { has: boolean; value?: unknown } {
    for (;;) {
      if (!isObject(n.value)) return { has: false };
      if (hasOwn(n.value, "default")) return { has: true, value: n.value["default"] };
      if (!n.refTarget) return { has: false };
      n = n.refTarget;
    }
  }
  noAlign(r: Resolved): void {
    if (r.alignPtr !== undefined) fail("MT_SCHEMA_TYPE", r.alignPtr, "TypeDef:Align is only allowed on a struct field, a tuple element or a root property (§4.4)");
  }
  classify(r: Resolved): { kind: NodeKind; scalar?: (typeof SCALAR_KEYWORDS)[number] } {
    const n = r.node;
    if (typeof n === "boolean") return { kind: "boolean" };
    if (!isObject(n)) return { kind: "other" };
    let kindKw: string | undefined;
    for (const k of Object.keys(n).sort(compareUtf8)) {
      if (!isTypedef(k) || k === KW_ALIGN) continue;
      if (kindKw !== undefined) fail("MT_SCHEMA_TYPE", r.ptr, `carries both ${quoted(kindKw)} and ${quoted(k)} (§4.4)`);
      kindKw = k;
    }
    if (kindKw !== undefined) {
      const s = SCALARS.get(kindKw);
      if (s) return { kind: "scalar", scalar: s };
      if (kindKw === KW_STRUCT) return { kind: "structure" };
      if (kindKw === KW_STRING) return { kind: "string" };
      return { kind: "list" };
    }
    if (hasOwn(n, "prefixItems")) return { kind: "tuple" };
    if (hasOwn(n, "items")) return { kind: "array" };
    return { kind: "other" };
  }
  checkScalar(r: Resolved, s: (typeof SCALAR_KEYWORDS)[number]): void {
    const node = r.node as Record<string, unknown>;
    requireTrue(node, r.ptr, s.name);
    forbid(node, r.ptr, "a scalar leaf", ["properties", "items", "prefixItems"]);
    checkType(node, r.ptr, s.types);
  }
  itemsOf(r: Resolved): Node {
    return this.t.kids(r.n, "items")[0]!;
  }

  compileTensor(name: string): TensorLayout {
    let cur = this.resolve(this.t.nodes.get("/properties" + pointerToken(name))!);
    const out: TensorLayout = { name, kind: "flat", dims: [], hasHeap: false, rootAlign: cur.align, elementPointer: "" };
    let c = this.classify(cur);
    while (c.kind === "array" && isObject((cur.node as Record<string, unknown>)["items"])) {
      const node = cur.node as Record<string, unknown>;
      checkType(node, cur.ptr, ["array"]);
      const b: DimensionBounds = { min: 0, pointer: cur.ptr };
      if (hasOwn(node, "minItems")) b.min = readUint(node["minItems"], cur.ptr, "minItems");
      if (hasOwn(node, "maxItems")) b.max = readUint(node["maxItems"], cur.ptr, "maxItems");
      out.dims.push(b);
      if (out.dims.length > 32) fail("MT_LIMIT", cur.ptr, "rank above 32 (§8.4)");
      cur = this.resolve(this.itemsOf(cur));
      this.noAlign(cur);
      c = this.classify(cur);
    }
    out.elementPointer = cur.ptr;
    switch (c.kind) {
      case "scalar":
        this.checkScalar(cur, c.scalar!);
        out.kind = "flat";
        out.dtype = c.scalar!.dtype;
        break;
      case "structure":
      case "tuple":
        out.kind = "struct";
        out.record = this.recordOf(cur, c.kind);
        out.hasHeap = recordHasBlobs(out.record);
        break;
      case "string":
      case "list":
        out.kind = "blob";
        out.item = this.compileTypeAt(cur, c);
        out.hasHeap = true;
        break;
      default:
        fail("MT_SCHEMA_TYPE", cur.ptr, `the element of logical tensor ${quoted(name)} is not a scalar leaf, struct, tuple, String or List (§5.1)`);
    }
    return out;
  }

  compileTypeAt(r: Resolved, c: ReturnType<Compiler["classify"]>): TypeLayout {
    const t = this.compileTypeKind(r, c);
    t.pointer = r.ptr;
    return t;
  }

  compileTypeKind(r: Resolved, c: ReturnType<Compiler["classify"]>): TypeLayout {
    const node = r.node as Record<string, unknown>;
    switch (c.kind) {
      case "scalar": {
        const s = c.scalar!;
        this.checkScalar(r, s);
        if (isSubByte(s.dtype)) fail("MT_SCHEMA_TYPE", r.ptr, `${quoted(s.name)} is a sub-byte type, allowed in flat tensors only (§4.4)`);
        return { type: "scalar", scalar: s.dtype, shape: [], size: dtypeBits(s.dtype) / 8, align: dtypeAlign(s.dtype), pointer: "" };
      }
      case "structure":
      case "tuple": {
        const rec = this.recordOf(r, c.kind);
        return { type: "record", record: rec, shape: [], size: rec.size, align: rec.align, pointer: "" };
      }
      case "string":
        requireTrue(node, r.ptr, KW_STRING);
        checkType(node, r.ptr, ["string"]);
        forbid(node, r.ptr, "a TypeDef:String node", ["properties", "items", "prefixItems"]);
        return { type: "string", shape: [], size: 16, align: 8, pointer: "" };
      case "list": {
        requireTrue(node, r.ptr, KW_LIST);
        checkType(node, r.ptr, ["array"]);
        forbid(node, r.ptr, "a TypeDef:List node", ["properties", "prefixItems"]);
        if (!hasOwn(node, "items")) fail("MT_SCHEMA_TYPE", r.ptr, "TypeDef:List needs items (§4.4)");
        const e = this.resolve(this.itemsOf(r));
        this.noAlign(e);
        const elem = this.compileTypeAt(e, this.classify(e));
        if (typeHasBlobs(elem)) fail("MT_SCHEMA_TYPE", e.ptr, "a List element must be fixed-size: no String or List anywhere inside (§4.4)");
        return { type: "list", elem, shape: [], size: 16, align: 8, pointer: "" };
      }
      case "array": {
        checkType(node, r.ptr, ["array"]);
        let len = 0;
        if (hasOwn(node, "minItems") && hasOwn(node, "maxItems")) {
          len = readUint(node["minItems"], r.ptr, "minItems");
          if (readUint(node["maxItems"], r.ptr, "maxItems") !== len) len = 0;
        }
        if (len === 0) {
          fail("MT_SCHEMA_TYPE", r.ptr, "an array inside a record or List must be a fixed array (minItems == maxItems >= 1), a tuple or a TypeDef:List (§4.5)");
        }
        const e = this.resolve(this.itemsOf(r));
        this.noAlign(e);
        const t = this.compileTypeAt(e, this.classify(e));
        if (len > Math.floor(MAX_RECORD_SIZE / t.size)) fail("MT_LIMIT", r.ptr, "fixed array larger than 2^24 bytes (§6.2, §8.4)");
        t.shape.unshift(len);
        t.size *= len;
        return t;
      }
      default:
        fail("MT_SCHEMA_TYPE", r.ptr, "not a scalar leaf, struct, tuple, fixed array, String or List (§4.4, §4.5)");
    }
  }

  nestedFields(t: TypeLayout): number {
    if (t.type === "record") return this.fieldCounts.get(t.record!)!;
    if (t.type === "list") return this.nestedFields(t.elem!);
    return 0;
  }

  recordOf(r: Resolved, kind: NodeKind): RecordLayout {
    const known = this.records.get(r.n);
    if (known) return known;
    const rec = kind === "structure" ? this.compileStruct(r) : this.compileTuple(r);
    let count = 0;
    for (const f of rec.fields) {
      count += 1 + this.nestedFields(f.type);
      if (count > MAX_RECORD_FIELDS) fail("MT_LIMIT", r.ptr, "record with more than 65,536 fields, counting nested fields (§6.2, §8.4)");
    }
    this.fieldCounts.set(rec, count);
    this.records.set(r.n, rec);
    return rec;
  }

  compileStruct(r: Resolved): RecordLayout {
    const n = r.node as Record<string, unknown>;
    let structAlign = 1;
    const v = n[KW_STRUCT];
    if (isObject(v)) {
      const av = hasOwn(v, "align") ? nonNegInt(v["align"]) : 0;
      if (Object.keys(v).length !== 1 || !isPow2(av) || av > 4096) {
        fail("MT_SCHEMA_TYPE", r.ptr, 'TypeDef:Struct must be true or {"align": n}, n a power of two between 1 and 4096 (§4.4)');
      }
      structAlign = av;
    } else if (v !== true) fail("MT_SCHEMA_TYPE", r.ptr, 'TypeDef:Struct must be true or {"align": n} (§4.4)');
    checkType(n, r.ptr, ["object"]);
    forbid(n, r.ptr, "a TypeDef:Struct node", ["items", "prefixItems"]);
    const props = n["properties"];
    if (!isObject(props) || Object.keys(props).length === 0) fail("MT_SCHEMA_TYPE", r.ptr, "TypeDef:Struct needs properties with at least one member (§4.4)");
    const req = n["required"];
    if (!Array.isArray(req)) fail("MT_SCHEMA_TYPE", r.ptr, "TypeDef:Struct needs required listing every property (§4.4)");
    if (req.length > MAX_RECORD_FIELDS) fail("MT_LIMIT", r.ptr, "record with more than 65,536 fields (§6.2, §8.4)");
    const seen = new Set<string>();
    for (const f of req) {
      if (typeof f !== "string" || !hasOwn(props, f)) fail("MT_SCHEMA_TYPE", r.ptr, `required entry ${JSON.stringify(f)} is not a property (§4.4)`);
      if (seen.has(f)) fail("MT_SCHEMA_TYPE", r.ptr, `required lists ${JSON.stringify(f)} twice (§4.4)`);
      seen.add(f);
    }
    for (const k of Object.keys(props).sort(compareUtf8)) {
      if (!seen.has(k)) fail("MT_SCHEMA_TYPE", r.ptr, `property ${quoted(k)} is missing from required (§4.4)`);
    }
    const names = req as string[];
    const kids = this.t.kids(r.n, "properties");
    const byPtr = new Map(kids.map((k) => [k.pointer, k]));
    return this.layOut(r.ptr, names, (i) => byPtr.get(r.ptr + "/properties" + pointerToken(names[i]!))!, structAlign, false);
  }

  compileTuple(r: Resolved): RecordLayout {
    const n = r.node as Record<string, unknown>;
    checkType(n, r.ptr, ["array"]);
    forbid(n, r.ptr, "a tuple", ["properties"]);
    const items = n["prefixItems"] as unknown[];
    const k = items.length;
    if (k === 0) fail("MT_SCHEMA_TYPE", r.ptr, "a tuple needs at least one prefixItems schema (§4.5)");
    if (n["items"] !== false) fail("MT_SCHEMA_TYPE", r.ptr, 'a tuple must have "items": false (§4.5)');
    for (const kw of ["minItems", "maxItems"]) {
      if (hasOwn(n, kw) && readUint(n[kw], r.ptr, kw) !== k) fail("MT_SCHEMA_TYPE", r.ptr, `${kw} of a tuple must equal the prefixItems count (§4.5)`);
    }
    const names = items.map((_, i) => String(i));
    const elements = this.t.kids(r.n, "prefixItems");
    return this.layOut(r.ptr, names, (i) => elements[i]!, 1, true);
  }

  // §6.2: the C record rule.
  layOut(ptr: string, names: string[], nodeOf: (i: number) => Node, structAlign: number, tuple: boolean): RecordLayout {
    const rec: RecordLayout = { size: 0, align: structAlign, fields: [], tuple };
    let cursor = 0;
    names.forEach((name, i) => {
      const fieldNode = nodeOf(i);
      const r = this.resolve(fieldNode);
      const type = this.compileTypeAt(r, this.classify(r));
      const fa = Math.max(type.align, r.align);
      const d = this.defaultAlongRefs(fieldNode);
      const offset = alignUp(cursor, fa);
      cursor = offset + type.size;
      if (cursor > MAX_RECORD_SIZE) fail("MT_LIMIT", ptr, "record larger than 2^24 bytes (§6.2, §8.4)");
      rec.align = Math.max(rec.align, fa);
      rec.fields.push({ name, offset, type, hasDefault: d.has, default: d.value, pointer: fieldNode.pointer });
    });
    rec.size = alignUp(cursor, rec.align);
    if (rec.size > MAX_RECORD_SIZE) fail("MT_LIMIT", ptr, "record larger than 2^24 bytes (§6.2, §8.4)");
    return rec;
  }
}

function checkName(name: string, ptr: string): void {
  if (name === "") fail("MT_SCHEMA_NAME", ptr, "a logical tensor name must not be empty (§3.2)");
  if (name.startsWith("__")) fail("MT_SCHEMA_NAME", ptr, 'logical tensor name must not begin with "__" (§3.2)');
  if (name.includes("#")) fail("MT_SCHEMA_NAME", ptr, "logical tensor name must not contain '#' (§3.2)");
}

/**
 * The dialect checks of §4.1–§4.3 and §8.4 alone (keywords, `$ref` targets,
 * cycles, nesting, `pattern` compilation), for a schema that is not a whole
 * file's root (a value schema, a test-suite schema). Returns the `$ref`
 * resolver the evaluator needs.
 */
export function checkDialect(document: unknown): (node: Record<string, unknown>) => unknown {
  return dialectTable(document).resolve;
}

/**
 * @internal checkDialect plus the JSON Pointer of every schema object of the
 * document (for "schema location" in messages, as the C++ evaluator).
 */
export function dialectTable(document: unknown): { resolve: (node: Record<string, unknown>) => unknown; pointerOf: (node: unknown) => string | undefined } {
  const table = new DocumentTable(document);
  walk(table, table.nodes.get("")!, false);
  resolveRefs(table);
  checkCycles(table);
  for (const n of table.nodes.values()) {
    if (isObject(n.value) && typeof n.value["pattern"] === "string") compilePattern(n.value["pattern"]);
  }
  const byValue = new Map([...table.nodes.values()].filter((n) => typeof n.value === "object").map((n) => [n.value, n]));
  return { resolve: (node) => byValue.get(node)?.refTarget?.value, pointerOf: (node) => byValue.get(node)?.pointer };
}

/**
 * Where a schema comes from, which decides whether builder forms are read
 * (as the C++ `schema_source`): "authored" (written in code or by TypeBox,
 * read from a schema file) rewrites TypeBox's draft-07 tuples and module
 * roots first (builder.ts); "embedded" (a file's `metatensor.schema`) is the
 * dialect of §4 exactly, so every reader agrees on which files are valid.
 */
export type SchemaSource = "authored" | "embedded";

/**
 * Checks a schema document against the dialect (§4) and computes every
 * logical tensor's layout (§5–§6.5). Throws MetatensorError with
 * MT_SCHEMA_DIALECT, MT_UNKNOWN_TYPEDEF, MT_SCHEMA_TYPE, MT_SCHEMA_NAME or MT_LIMIT
 * (pointers name nodes of the rewritten document, for an authored schema).
 */
export function compileSchema(document: unknown, source: SchemaSource = "authored"): CompiledSchema {
  if (source === "authored") {
    const rewritten = normalizeBuilderSchema(document);
    if (!jsonEqual(rewritten, document)) document = rewritten;
  }
  if (isObject(document) && hasOwn(document, "$schema") && document["$schema"] !== SCHEMA_DIALECT_URI) {
    fail("MT_SCHEMA_DIALECT", "", `$schema must be ${quoted(SCHEMA_DIALECT_URI)} (§4.1)`);
  }
  if (!isObject(document)) fail("MT_SCHEMA_TYPE", "", "the root schema must be an object (§4.6)");
  const p0 = document["properties"];
  if (isObject(p0) && Object.keys(p0).length > MAX_LOGICAL_TENSORS) fail("MT_LIMIT", "/properties", "more than 2^20 logical tensors (§8.4)");
  const table = new DocumentTable(document);
  walk(table, table.nodes.get("")!, false);
  resolveRefs(table);
  checkCycles(table);
  for (const n of table.nodes.values()) {
    if (isObject(n.value) && typeof n.value["pattern"] === "string") compilePattern(n.value["pattern"]);
  }
  if (document["type"] !== "object") fail("MT_SCHEMA_TYPE", "", 'the root must have "type": "object" (§4.6)');
  for (const k of Object.keys(document).sort(compareUtf8)) {
    if (isTypedef(k)) fail("MT_SCHEMA_TYPE", "", `the root must not carry ${quoted(k)} (§4.6)`);
  }
  if (!hasOwn(document, "properties")) fail("MT_SCHEMA_TYPE", "", "the root must have properties (§4.6)");
  const props = document["properties"] as Record<string, unknown>;
  const required = new Set<string>();
  if (hasOwn(document, "required")) {
    const req = document["required"];
    if (!Array.isArray(req)) fail("MT_SCHEMA_TYPE", "/required", "required must be an array of property names");
    for (const r of req) {
      if (typeof r !== "string" || !hasOwn(props, r)) fail("MT_SCHEMA_TYPE", "/required", `required entry ${JSON.stringify(r)} is not a root property (§4.6)`);
      required.add(r);
    }
  }
  const c = new Compiler(table);
  const tensors = new Map<string, TensorLayout>();
  for (const name of Object.keys(props).sort(compareUtf8)) {
    checkName(name, "/properties" + pointerToken(name));
    tensors.set(name, c.compileTensor(name));
  }
  return new CompiledSchema(document, tensors, required, table.nodes);
}

/** Parses schema text strictly (§3.1, MT_SCHEMA_JSON) and compiles it. */
export function compileSchemaText(text: string, source: SchemaSource = "authored"): CompiledSchema {
  return compileSchema(parseStrictJson(text, { syntax: "MT_SCHEMA_JSON", duplicate: "MT_SCHEMA_JSON", what: "schema" }), source);
}

// §7 layout table.
function typeName(t: TypeLayout): string {
  return t.type === "scalar" ? t.scalar! : t.type === "record" ? "struct" : t.type;
}
export function typeJson(t: TypeLayout): Record<string, unknown> {
  const out: Record<string, unknown> = { type: typeName(t), shape: [...t.shape] };
  if (t.type === "record" && t.record) out["record"] = recordJson(t.record);
  if (t.type === "list" && t.elem) out["elem"] = typeJson(t.elem);
  return out;
}
export function recordJson(r: RecordLayout): Record<string, unknown> {
  return {
    size: r.size,
    align: r.align,
    fields: r.fields.map((f) => ({ ...typeJson(f.type), name: f.name, offset: f.offset })),
  };
}

/** The §7 layout table for the logical tensors `present`, file alignment `a`. */
export function layoutTableJson(schema: CompiledSchema, present: Iterable<string>, a: number): Record<string, unknown> {
  if (!isPow2(a)) throw new MetatensorError("MT_INVALID_ARGUMENT", `layout table: file alignment ${a} is not a power of two`);
  const tensors: Record<string, unknown> = {};
  for (const name of present) {
    const t = schema.find(name);
    if (!t) throw new MetatensorError("MT_INVALID_ARGUMENT", `layout table: ${quoted(name)} is not a root property of the schema`);
    const e: Record<string, unknown> = { kind: t.kind, data: t.name };
    if (t.hasHeap) e["heap"] = heapName(t);
    e["rank"] = t.dims.length;
    e["align"] = primaryPlacement(t, a);
    if (t.kind === "flat") e["dtype"] = t.dtype;
    else if (t.kind === "struct") e["record"] = recordJson(t.record!);
    else {
      const item: Record<string, unknown> = { type: typeName(t.item!) };
      if (t.item!.type === "list" && t.item!.elem) item["elem"] = typeJson(t.item!.elem);
      e["item"] = item;
    }
    Object.defineProperty(tensors, name, { value: e, enumerable: true, writable: true, configurable: true });
  }
  return { tensors };
}

