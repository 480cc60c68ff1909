// JSX authoring of layouts (the concept's <Struct>/<Field>/<Tensor>): a
// tree of layout nodes rendered to a TypeBox schema in the dialect (spec 06
// §4) plus its §7 layout table. Version control of a model's layout is a
// diff of two renders (diffLayouts, §11).
import type { TSchema } from "@sinclair/typebox";
import { Type } from "@sinclair/typebox";
import { MetatensorError } from "./errors.js";
import { flattenChildren, type Child } from "./jsx-runtime.js";
import { CompiledSchema, compileSchema, layoutTableJson } from "./schema.js";
import { FixedArray, List, Metatensor, Scalar, String as StringBlob, Struct as StructSchema, Tensor as TensorSchema, toJsonSchema, Uint8 } from "./typebox.js";

export interface LayoutNode {
  $$layout: "Struct" | "Field" | "Tensor" | "Blob" | "ArrayOf" | "Fragment";
  props: Record<string, unknown>;
  children: LayoutNode[];
}

type Dim = number | null;

/** A record (inside a field or an ArrayOf), or the root of a file when rendered directly. */
export function Struct(props: { name?: string; align?: number; description?: string; children?: Child }): LayoutNode {
  return { $$layout: "Struct", props, children: flattenChildren(props.children) };
}
/** A named member of a Struct: a logical tensor at the root, a record field below. */
export function Field(props: { name: string; align?: number; default?: unknown; description?: string; optional?: boolean; children?: Child }): LayoutNode {
  return { $$layout: "Field", props, children: flattenChildren(props.children) };
}
/**
 * Scalars of `dtype` ("f32", "F32", "int64"...) with `shape`: at the root,
 * the dims of a flat tensor (null = free); inside a record, a fixed array
 * (every dim a number); no shape = one scalar.
 */
export function Tensor(props: { dtype: string; shape?: readonly Dim[]; minimum?: number; maximum?: number; children?: never }): LayoutNode {
  return { $$layout: "Tensor", props, children: [] };
}
/** Variable-length data: a UTF-8 string (`type="string"`), bytes (default), or a List of its child. */
export function Blob(props: { type?: "string" | "bytes"; children?: Child }): LayoutNode {
  return { $$layout: "Blob", props, children: flattenChildren(props.children) };
}
/** An array of its child: a dimension at the root (`length`/`min`/`max` bound it); in a record, a fixed array with `length`, a List without. */
export function ArrayOf(props: { length?: number; min?: number; max?: number; children?: Child }): LayoutNode {
  return { $$layout: "ArrayOf", props, children: flattenChildren(props.children) };
}

function only(n: LayoutNode): LayoutNode {
  if (n.children.length !== 1) throw new MetatensorError("MT_SCHEMA_TYPE", `<${n.$$layout}> needs exactly one child, got ${n.children.length}`);
  return n.children[0]!;
}

function annotations(p: Record<string, unknown>): Record<string, unknown> {
  const o: Record<string, unknown> = {};
  if (p["description"] !== undefined) o["description"] = p["description"];
  if (p["minimum"] !== undefined) o["minimum"] = p["minimum"];
  if (p["maximum"] !== undefined) o["maximum"] = p["maximum"];
  return o;
}

function structOf(n: LayoutNode): TSchema {
  const props: Record<string, TSchema> = {};
  for (const f of n.children) {
    if (f.$$layout !== "Field") throw new MetatensorError("MT_SCHEMA_TYPE", `<Struct> children must be <Field>s, got <${f.$$layout}>`);
    props[f.props["name"] as string] = fieldOf(f, false);
  }
  const o: Record<string, unknown> = {};
  if (n.props["name"] !== undefined) o["title"] = n.props["name"];
  if (n.props["description"] !== undefined) o["description"] = n.props["description"];
  if (n.props["align"] !== undefined) o["align"] = n.props["align"];
  return StructSchema(props, o);
}

function fieldOf(f: LayoutNode, root: boolean): TSchema {
  let s = root ? rootType(only(f)) : recordType(only(f));
  const extra: Record<string, unknown> = {};
  if (f.props["align"] !== undefined) extra["TypeDef:Align"] = f.props["align"];
  if (f.props["default"] !== undefined) extra["default"] = f.props["default"];
  if (f.props["description"] !== undefined) extra["description"] = f.props["description"];
  if (Object.keys(extra).length > 0) s = { ...s, ...extra } as TSchema;
  return s;
}

// A type inside a record or a List: fixed-size arrays, records, strings, Lists.
function recordType(n: LayoutNode): TSchema {
  switch (n.$$layout) {
    case "Tensor": {
      const shape = (n.props["shape"] as Dim[] | undefined) ?? [];
      let s: TSchema = Scalar(n.props["dtype"] as string, annotations(n.props));
      for (let i = shape.length - 1; i >= 0; i--) {
        const d = shape[i];
        if (typeof d !== "number" || d < 1) throw new MetatensorError("MT_SCHEMA_TYPE", "a <Tensor> inside a record needs a fixed shape (§4.5)");
        s = FixedArray(s, d);
      }
      return s;
    }
    case "Struct": return structOf(n);
    case "Blob": return blobOf(n);
    case "ArrayOf": {
      const len = n.props["length"] as number | undefined;
      const e = recordType(only(n));
      return len === undefined ? List(e) : FixedArray(e, len);
    }
    default: throw new MetatensorError("MT_SCHEMA_TYPE", `<${n.$$layout}> is not a type`);
  }
}

function blobOf(n: LayoutNode): TSchema {
  if (n.props["type"] === "string") return StringBlob();
  if (n.children.length === 0) return List(Uint8());
  return List(recordType(only(n)));
}

// The type of a logical tensor: dims from ArrayOf and root <Tensor shape>.
function rootType(n: LayoutNode): TSchema {
  switch (n.$$layout) {
    case "Tensor": {
      const shape = (n.props["shape"] as Dim[] | undefined) ?? [];
      return TensorSchema(Scalar(n.props["dtype"] as string, annotations(n.props)), shape.map((d) => (d === null || d < 0 ? null : d)));
    }
    case "ArrayOf": {
      const o: Record<string, number> = {};
      const len = n.props["length"] as number | undefined;
      if (len !== undefined) o["minItems"] = o["maxItems"] = len;
      if (n.props["min"] !== undefined) o["minItems"] = n.props["min"] as number;
      if (n.props["max"] !== undefined) o["maxItems"] = n.props["max"] as number;
      return Type.Array(rootType(only(n)), o);
    }
    default: return recordType(n);
  }
}

export interface Rendered {
  /** The root TypeBox schema (each root property a logical tensor). */
  schema: TSchema;
  /** Its dialect JSON (what a file embeds as `metatensor.schema`). */
  json: Record<string, unknown>;
  compiled: CompiledSchema;
  /** The §7 layout table of every logical tensor at file alignment `alignment`. */
  layout: Record<string, unknown>;
}

/** Renders a layout tree whose root is a <Struct> of <Field>s (the logical tensors). */
export function render(root: LayoutNode, options: { alignment?: number } = {}): Rendered {
  if (root.$$layout !== "Struct") throw new MetatensorError("MT_SCHEMA_TYPE", "the root of a layout must be a <Struct>");
  const props: Record<string, TSchema> = {};
  const optional: string[] = [];
  for (const f of root.children) {
    if (f.$$layout !== "Field") throw new MetatensorError("MT_SCHEMA_TYPE", `<Struct> children must be <Field>s, got <${f.$$layout}>`);
    const name = f.props["name"] as string;
    props[name] = fieldOf(f, true);
    if (f.props["optional"]) optional.push(name);
  }
  const o: Record<string, unknown> = { optional };
  if (root.props["name"] !== undefined) o["title"] = root.props["name"];
  const schema = Metatensor(props, o);
  const json = toJsonSchema(schema);
  const compiled = compileSchema(json);
  return { schema, json, compiled, layout: layoutTableJson(compiled, compiled.names(), options.alignment ?? 64) };
}
