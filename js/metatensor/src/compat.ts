// Schema evolution (spec 06 §11): how a reader schema relates to the schema
// a file was written with, per logical tensor and field path. A port of
// src/metatensor/schema/compatibility.cpp: same classes, same change lines,
// same order, so `diffLayouts` and `metatensor diff` agree.
import { DType } from "./dtypes.js";
import { MetatensorError } from "./errors.js";
import { compareUtf8, jsonEqual } from "./json.js";
import { CompiledSchema, RecordLayout, TensorLayout, TypeLayout, compileSchema } from "./schema.js";
import { normalizeSchema } from "./writer.js";

export type CompatibilityClass = "identical layout" | "compatible" | "view-compatible" | "convertible" | "incompatible";
const ORDER: CompatibilityClass[] = ["identical layout", "compatible", "view-compatible", "convertible", "incompatible"];
const worst = (a: CompatibilityClass, b: CompatibilityClass) => (ORDER.indexOf(a) >= ORDER.indexOf(b) ? a : b);
const lt = (a: CompatibilityClass, b: CompatibilityClass) => ORDER.indexOf(a) < ORDER.indexOf(b);

export interface SchemaChange {
  path: string;
  pointer: string;
  change: string;
  class: CompatibilityClass;
}
export interface DimensionWarning {
  path: string;
  pointer: string;
  change: string;
}
export interface CompatibilityReport {
  verdict: CompatibilityClass;
  changes: SchemaChange[];
  tensors: Record<string, CompatibilityClass>;
  dimension_warnings: DimensionWarning[];
}

const EDGES: Partial<Record<DType, DType[]>> = {
  BOOL: ["U8"], I8: ["I16", "F32", "F64"], I16: ["I32", "F32", "F64"], I32: ["I64", "F64"],
  U8: ["U16", "I16", "F32", "F64"], U16: ["U32", "I32", "F32", "F64"], U32: ["U64", "I64", "F64"],
  F16: ["F32"], BF16: ["F32"], F32: ["F64"],
};

/** §11.4: an exact widening conversion (or a composition). Equal types are not a widening. */
export function isWidening(from: DType, to: DType): boolean {
  if (from === to) return false;
  const seen = new Set<DType>();
  const todo = [from];
  while (todo.length > 0) {
    for (const next of EDGES[todo.pop()!] ?? []) {
      if (next === to) return true;
      if (!seen.has(next)) {
        seen.add(next);
        todo.push(next);
      }
    }
  }
  return false;
}

const dimsText = (s: readonly number[]) => "[" + s.join(", ") + "]";
function typeText(t: TypeLayout): string {
  const base = t.type === "scalar" ? t.scalar! : t.type === "record" ? (t.record?.tuple ? "tuple" : "struct") : t.type === "string" ? "string" : "list of " + (t.elem ? typeText(t.elem) : "?");
  return t.shape.length === 0 ? base : base + dimsText(t.shape);
}
const rootPointer = (name: string) => "/properties/" + name.replace(/~/g, "~0").replace(/\//g, "~1");
const sameShape = (a: readonly number[], b: readonly number[]) => a.length === b.length && a.every((x, i) => x === b[i]);

class Differ {
  changes: SchemaChange[] = [];
  add(path: string, change: string, c: CompatibilityClass, pointer: string): void {
    this.changes.push({ path, pointer, change, class: c });
  }
  type(w: TypeLayout, r: TypeLayout, path: string, ptr: string): CompatibilityClass {
    if (w.type !== r.type) {
      const bytesList = (t: TypeLayout) => t.type === "list" && !!t.elem && t.elem.type === "scalar" && t.elem.scalar === "U8" && t.elem.shape.length === 0;
      if (sameShape(w.shape, r.shape) && ((w.type === "string" && bytesList(r)) || (bytesList(w) && r.type === "string"))) {
        this.add(path, `${typeText(w)} -> ${typeText(r)}${r.type === "string" ? " (needs a UTF-8 check)" : ""}`, "convertible", ptr);
        return "convertible";
      }
      this.add(path, `kind changed: ${typeText(w)} -> ${typeText(r)}`, "incompatible", ptr);
      return "incompatible";
    }
    if (!sameShape(w.shape, r.shape)) {
      this.add(path, `fixed-array shape changed: ${dimsText(w.shape)} -> ${dimsText(r.shape)}`, "incompatible", ptr);
      return "incompatible";
    }
    switch (w.type) {
      case "scalar":
        if (w.scalar === r.scalar) return "identical layout";
        if (isWidening(w.scalar!, r.scalar!)) {
          this.add(path, `${w.scalar} -> ${r.scalar} (widening)`, "convertible", ptr);
          return "convertible";
        }
        this.add(path, `${w.scalar} -> ${r.scalar} (not a widening)`, "incompatible", ptr);
        return "incompatible";
      case "string": return "identical layout";
      case "list": return this.type(w.elem!, r.elem!, path + "[]", r.elem!.pointer);
      case "record": return this.record(w.record!, r.record!, path, ptr);
    }
  }
  record(w: RecordLayout, r: RecordLayout, path: string, ptr: string): CompatibilityClass {
    if (w.tuple !== r.tuple) {
      this.add(path, `${w.tuple ? "tuple" : "struct"} -> ${r.tuple ? "tuple" : "struct"}`, "incompatible", ptr);
      return "incompatible";
    }
    if (w.tuple && w.fields.length !== r.fields.length) {
      this.add(path, `tuple arity ${w.fields.length} -> ${r.fields.length}`, "incompatible", ptr);
      return "incompatible";
    }
    let verdict: CompatibilityClass = "identical layout";
    const sub = (n: string) => path + "." + n;
    for (const rf of r.fields) {
      const wf = w.fields.find((f) => f.name === rf.name);
      if (!wf) {
        if (rf.hasDefault) {
          this.add(sub(rf.name), "field added with a default", "view-compatible", rf.pointer);
          verdict = worst(verdict, "view-compatible");
        } else {
          this.add(sub(rf.name), "field added without a default", "incompatible", rf.pointer);
          verdict = worst(verdict, "incompatible");
        }
        continue;
      }
      let c = this.type(wf.type, rf.type, sub(rf.name), rf.pointer);
      if (wf.offset !== rf.offset && lt(c, "view-compatible")) {
        this.add(sub(rf.name), `offset ${wf.offset} -> ${rf.offset}`, "view-compatible", rf.pointer);
        c = "view-compatible";
      }
      verdict = worst(verdict, c);
    }
    for (const wf of w.fields) {
      if (!r.fields.some((f) => f.name === wf.name)) {
        this.add(sub(wf.name), "field removed", "view-compatible", wf.pointer);
        verdict = worst(verdict, "view-compatible");
      }
    }
    if (lt(verdict, "view-compatible") && (w.size !== r.size || w.align !== r.align)) {
      this.add(path, `record size/alignment ${w.size}/${w.align} -> ${r.size}/${r.align}`, "view-compatible", ptr);
      verdict = "view-compatible";
    }
    return verdict;
  }
  tensor(w: TensorLayout, r: TensorLayout): CompatibilityClass {
    const path = r.name;
    const root = rootPointer(r.name);
    if (w.kind !== r.kind) {
      this.add(path, `kind changed: ${w.kind} -> ${r.kind}`, "incompatible", root);
      return "incompatible";
    }
    if (w.dims.length !== r.dims.length) {
      this.add(path, `rank changed: ${w.dims.length} -> ${r.dims.length}`, "incompatible", root);
      return "incompatible";
    }
    if (w.kind === "flat") {
      const a: TypeLayout = { type: "scalar", scalar: w.dtype, shape: [], size: 0, align: 1, pointer: "" };
      const b: TypeLayout = { type: "scalar", scalar: r.dtype, shape: [], size: 0, align: 1, pointer: "" };
      return this.type(a, b, path, r.elementPointer);
    }
    if (w.kind === "struct") return this.record(w.record!, r.record!, path, r.elementPointer);
    return this.type(w.item!, r.item!, path + "[item]", r.elementPointer);
  }
}

function checkDimensions(w: TensorLayout, r: TensorLayout, out: DimensionWarning[]): void {
  for (let i = 0; i < Math.min(w.dims.length, r.dims.length); i++) {
    const wb = w.dims[i]!;
    const rb = r.dims[i]!;
    const path = `${r.name}[dim ${i}]`;
    if (rb.min > wb.min) out.push({ path, pointer: rb.pointer, change: `minItems ${wb.min} -> ${rb.min}: files with fewer than ${rb.min} items fail (MT_SHAPE)` });
    if (rb.max !== undefined && (wb.max === undefined || wb.max > rb.max)) {
      out.push({ path, pointer: rb.pointer, change: `maxItems ${wb.max ?? "(none)"} -> ${rb.max}: files with more than ${rb.max} items fail (MT_SHAPE)` });
    }
  }
}

function toCompiled(s: unknown): CompiledSchema {
  if (s instanceof CompiledSchema) return s;
  if (s && typeof s === "object" && "schema" in s && "layout" in s) return toCompiled((s as { schema: unknown }).schema);
  return compileSchema(normalizeSchema(JSON.parse(JSON.stringify(s))));
}

/**
 * Classifies reading files written with `writer` through `reader` (§11.2–
 * §11.5). Accepts compiled schemas, dialect JSON, TypeBox schemas or the
 * result of JSX `render()`. The same report as `metatensor diff --json`.
 */
export function diffLayouts(writer: unknown, reader: unknown): CompatibilityReport {
  const w = toCompiled(writer);
  const r = toCompiled(reader);
  const d = new Differ();
  const names = [...new Set([...w.tensors.keys(), ...r.tensors.keys()])].sort(compareUtf8);
  const report: CompatibilityReport = { verdict: "identical layout", changes: [], tensors: {}, dimension_warnings: [] };
  for (const name of names) {
    const wt = w.find(name);
    const rt = r.find(name);
    const requires = r.required.has(name);
    const before = d.changes.length;
    let c: CompatibilityClass = "identical layout";
    const root = rootPointer(name);
    if (!wt) {
      c = requires ? "incompatible" : "compatible";
      d.add(name, requires ? "root property added to required (files without it fail)" : "root property added (absent in old files)", c, root);
    } else if (!rt) {
      c = "compatible";
      d.add(name, "root property removed (the reader ignores it)", c, root);
    } else {
      if (requires && !w.required.has(name)) {
        d.add(name, "root property became required (old files may lack it)", "incompatible", root);
        c = "incompatible";
      }
      c = worst(c, d.tensor(wt, rt));
      if (wt.dims.length === rt.dims.length) checkDimensions(wt, rt, report.dimension_warnings);
      if (c === "identical layout") {
        const wp = (w.document["properties"] as Record<string, unknown>)[name];
        const rp = (r.document["properties"] as Record<string, unknown>)[name];
        if (!jsonEqual(wp, rp) || !jsonEqual(w.propertySchema(name), r.propertySchema(name))) {
          d.add(name, "annotations, value constraints or $ref structure changed", "identical layout", root);
        } else if (wt.rootAlign !== rt.rootAlign) {
          d.add(name, "TypeDef:Align on the root property changed", "identical layout", root);
        }
      }
    }
    if (d.changes.length === before) d.add(name, "unchanged", "identical layout", root);
    report.tensors[name] = c;
    report.verdict = worst(report.verdict, c);
  }
  report.changes = d.changes;
  return report;
}

/** Throws MT_SCHEMA_INCOMPATIBLE naming the first incompatible change. */
export function requireCompatible(report: CompatibilityReport): void {
  if (report.verdict !== "incompatible") return;
  const c = report.changes.find((x) => x.class === "incompatible")!;
  throw new MetatensorError("MT_SCHEMA_INCOMPATIBLE", `${c.pointer}: ${c.path}: ${c.change}`);
}
