// JSX authoring (the concept's <Struct>/<Field>/<Tensor> example) and
// diffLayouts: every pair of a shared table of schemas gets the same report
// from diffLayouts as from `metatensor diff --json` (§11).
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { MetatensorWriter, diffLayouts, openMetatensor, validateDeep } from "@tensogram/metatensor";
import { ArrayOf, Blob, Field, Struct, Tensor, render } from "@tensogram/metatensor/jsx";
import { CLI, cli, tmp } from "./helpers.js";

const ConvNet = (
  <Struct name="ConvNet">
    <Field name="conv1">
      <Struct>
        <Field name="weight"><Tensor dtype="f32" shape={[20, 1, 5, 5]} /></Field>
        <Field name="bias"><Tensor dtype="f32" shape={[20]} /></Field>
        <Field name="running_mean"><Tensor dtype="f32" shape={[20]} /></Field>
        <Field name="running_var"><Tensor dtype="f32" shape={[20]} /></Field>
      </Struct>
    </Field>
    <Field name="conv2">
      <Struct>
        <Field name="weight"><Tensor dtype="f32" shape={[20, 20, 5, 5]} /></Field>
        <Field name="bias"><Tensor dtype="f32" shape={[20]} /></Field>
      </Struct>
    </Field>
  </Struct>
);

describe("JSX layouts", () => {
  it("the concept's ConvNet renders to a schema and layout table, and a file written from it validates", async () => {
    const r = render(ConvNet);
    const conv1 = (r.layout["tensors"] as any).conv1;
    assert.equal(conv1.kind, "struct");
    assert.equal(conv1.rank, 0);
    assert.deepEqual(conv1.record.fields.map((f: any) => [f.name, f.offset, f.type, f.shape]), [
      ["weight", 0, "F32", [20, 1, 5, 5]], ["bias", 2000, "F32", [20]], ["running_mean", 2080, "F32", [20]], ["running_var", 2160, "F32", [20]],
    ]);
    assert.equal(conv1.record.size, 2240);
    const zeros = (n: number): number[] => Array(n).fill(0);
    const nest = (shape: number[]): unknown => (shape.length === 0 ? 0 : Array.from({ length: shape[0]! }, () => nest(shape.slice(1))));
    const w = new MetatensorWriter(r.json);
    w.set("conv1", { weight: nest([20, 1, 5, 5]), bias: zeros(20), running_mean: zeros(20), running_var: zeros(20).map(() => 1) });
    w.set("conv2", { weight: nest([20, 20, 5, 5]), bias: zeros(20) });
    const bytes = w.serialize();
    const f = await openMetatensor(bytes);
    await validateDeep(f);
    const c1 = await f.records("conv1");
    assert.deepEqual([...(c1.at(0).get("running_var") as Float32Array)].slice(0, 3), [1, 1, 1]);
    if (CLI !== "") {
      const p = join(tmp(), "convnet.mt");
      writeFileSync(p, bytes);
      const v = cli("validate", "--deep", p);
      assert.equal(v.status, 0, v.stdout + v.stderr);
    }
  });

  it("ArrayOf, Blob and root Tensors give the three kinds", () => {
    const r = render(
      <Struct name="Dataset">
        <Field name="images"><Tensor dtype="u8" shape={[null, 28, 28]} /></Field>
        <Field name="labels"><ArrayOf><Blob type="string" /></ArrayOf></Field>
        <Field name="rows" optional><ArrayOf max={100}><Blob><Tensor dtype="float64" /></Blob></ArrayOf></Field>
        <Field name="items">
          <ArrayOf>
            <Struct name="Item">
              <Field name="id"><Tensor dtype="u32" /></Field>
              <Field name="pos" align={16}><Tensor dtype="f32" shape={[3]} /></Field>
              <Field name="tags"><ArrayOf><Tensor dtype="i16" /></ArrayOf></Field>
              <Field name="name" default=""><Blob type="string" /></Field>
            </Struct>
          </ArrayOf>
        </Field>
      </Struct>,
    );
    const t = r.layout["tensors"] as any;
    assert.deepEqual([t.images.kind, t.images.rank, t.images.dtype], ["flat", 3, "U8"]);
    assert.deepEqual([t.labels.kind, t.labels.item.type], ["blob", "string"]);
    assert.deepEqual([t.rows.kind, t.rows.item.type, t.rows.item.elem.type], ["blob", "list", "F64"]);
    assert.deepEqual(t.items.record.fields.map((f: any) => [f.name, f.offset, f.type]), [["id", 0, "U32"], ["pos", 16, "F32"], ["tags", 32, "list"], ["name", 48, "string"]]);
    assert.deepEqual(r.compiled.required, new Set(["images", "labels", "items"]));
  });
});

// Schemas for the diff table, authored in JSX (and a few as raw JSON).
const layer = (props: { w?: string; shape?: number[]; extra?: boolean; bias?: boolean; defaultOnExtra?: boolean; align?: number; biasAlign?: number; title?: string }) => (
  <Struct name="Model">
    <Field name="layer">
      <Struct>
        <Field name="weight" align={props.align}><Tensor dtype={props.w ?? "f32"} shape={props.shape ?? [4, 4]} /></Field>
        {props.bias !== false && <Field name="bias" align={props.biasAlign}><Tensor dtype="f32" shape={[4]} /></Field>}
        {props.extra && <Field name="scale" default={props.defaultOnExtra ? 1 : undefined}><Tensor dtype="f64" /></Field>}
      </Struct>
    </Field>
    <Field name="names"><ArrayOf max={10}><Blob type="string" /></ArrayOf></Field>
  </Struct>
);
const base = render(layer({})).json;
const j = (x: unknown) => JSON.parse(JSON.stringify(x));
const variant = (edit: (s: any) => void) => {
  const s = j(base);
  edit(s);
  return s;
};
export const DIFF_PAIRS: [string, unknown, unknown][] = [
  ["identical", base, base],
  ["annotation", base, variant((s) => { s.properties.layer.description = "the layer"; })],
  ["dtype widened", base, render(layer({ w: "f64" })).json],
  ["dtype narrowed", render(layer({ w: "f64" })).json, base],
  ["fixed shape changed", base, render(layer({ shape: [8, 4] })).json],
  ["field removed", base, render(layer({ bias: false })).json],
  ["field added with default", base, render(layer({ extra: true, defaultOnExtra: true })).json],
  ["field added without default", base, render(layer({ extra: true })).json],
  ["field align raised", base, render(layer({ biasAlign: 64 })).json],
  ["struct align raised", base, variant((s) => { s.properties.layer["TypeDef:Struct"] = { align: 64 }; })],
  ["root align", base, variant((s) => { s.properties.layer["TypeDef:Align"] = 256; })],
  ["root property added", base, variant((s) => { s.properties.extra = { type: "array", items: { type: "integer", "TypeDef:Int8": true } }; })],
  ["root property added required", base, variant((s) => { s.properties.extra = { type: "array", items: { type: "integer", "TypeDef:Int8": true } }; s.required.push("extra"); })],
  ["root property removed", base, variant((s) => { delete s.properties.names; s.required = s.required.filter((x: string) => x !== "names"); })],
  ["became required", variant((s) => { s.required = ["layer"]; }), base],
  ["dim bound tightened", base, variant((s) => { s.properties.names.maxItems = 2; s.properties.names.minItems = 1; })],
  ["string to bytes", base, variant((s) => { s.properties.names.items = { type: "array", "TypeDef:List": true, items: { type: "integer", "TypeDef:Uint8": true } }; })],
  ["bytes to string", variant((s) => { s.properties.names.items = { type: "array", "TypeDef:List": true, items: { type: "integer", "TypeDef:Uint8": true } }; }), base],
  ["kind changed", base, variant((s) => { s.properties.names = { type: "array", items: { type: "number", "TypeDef:Float32": true } }; })],
  ["rank changed", base, variant((s) => { s.properties.names = { type: "array", items: s.properties.names }; })],
  ["signedness", variant((s) => { s.properties.names = { type: "array", items: { type: "integer", "TypeDef:Int32": true } }; }), variant((s) => { s.properties.names = { type: "array", items: { type: "integer", "TypeDef:Uint32": true } }; })],
  ["u8 to i16", variant((s) => { s.properties.names = { type: "array", items: { type: "integer", "TypeDef:Uint8": true } }; }), variant((s) => { s.properties.names = { type: "array", items: { type: "integer", "TypeDef:Int16": true } }; })],
  ["tuple arity", variant((s) => { s.properties.t = { type: "array", items: { type: "array", prefixItems: [{ type: "number", "TypeDef:Float32": true }], items: false } }; }), variant((s) => { s.properties.t = { type: "array", items: { type: "array", prefixItems: [{ type: "number", "TypeDef:Float32": true }, { type: "number", "TypeDef:Float32": true }], items: false } }; })],
  ["$defs restructured", variant((s) => { s.$defs = { L: s.properties.layer }; s.properties.layer = { $ref: "#/$defs/L" }; }), base],
  ["reordered fields", base, variant((s) => { s.properties.layer.required.reverse(); })],
];

describe("diffLayouts agrees with `metatensor diff --json`", { skip: CLI === "" && "METATENSOR_CLI is not set" }, () => {
  it(`on ${DIFF_PAIRS.length} schema pairs`, () => {
    const dir = tmp();
    const mismatches: string[] = [];
    const verdicts = new Set<string>();
    DIFF_PAIRS.forEach(([name, a, b], i) => {
      const pa = join(dir, `${i}a.json`);
      const pb = join(dir, `${i}b.json`);
      writeFileSync(pa, JSON.stringify(a));
      writeFileSync(pb, JSON.stringify(b));
      const r = cli("diff", "--json", pa, pb);
      assert.ok([0, 1, 3].includes(r.status), `${name}: ${r.stderr}`);
      const cpp = JSON.parse(r.stdout);
      const ts = diffLayouts(a, b);
      verdicts.add(ts.verdict);
      const mine = { verdict: ts.verdict, changes: ts.changes, dimension_warnings: ts.dimension_warnings };
      try {
        assert.deepEqual(mine, cpp);
      } catch {
        mismatches.push(`${name}:\n  TS  ${JSON.stringify(mine)}\n  C++ ${JSON.stringify(cpp)}`);
      }
    });
    assert.deepEqual(mismatches, []);
    assert.deepEqual([...verdicts].sort(), ["compatible", "convertible", "identical layout", "incompatible", "view-compatible"]);
  });

  it("accepts rendered JSX trees directly: changing a <Tensor> shape is incompatible", () => {
    const d = diffLayouts(render(layer({})), render(layer({ shape: [4, 8] })));
    assert.equal(d.verdict, "incompatible");
    assert.equal(d.changes[0]!.path, "layer.weight");
  });
});
