// TypeBox authoring: the builders emit the dialect (§4.4, §4.7), and on a
// table of valid and invalid values TypeBox's Value.Check (builder schema
// and fromJsonSchema of its JSON), ajv (JSON Schema 2020-12), our writer +
// deep validation and the C++ `metatensor validate --deep` give the same
// verdicts.
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import Ajv2020Module from "ajv/dist/2020.js";
import { Type } from "@sinclair/typebox";
import { MetatensorError, MetatensorWriter, compileSchema, openMetatensor, validateDeep } from "@tensogram/metatensor";
import {
  Blob, Bool, Float16, Float32, Float64, FixedArray, Int16, Int32, Int64, List, Metatensor, String, Struct, Tensor, Tuple,
  Uint16, Uint8, Value, fromJsonSchema, toJsonSchema, Align, Complex64, Float8E4M3,
} from "@tensogram/metatensor/typebox";
import { CLI, cli, tmp } from "./helpers.js";

// ajv is CommonJS: its class is the module's default export.
const Ajv2020 = ((Ajv2020Module as unknown as { default?: unknown }).default ?? Ajv2020Module) as unknown as new (o: object) => {
  compile(s: object): (v: unknown) => boolean;
};

describe("TypeBox builders", () => {
  it("emit the dialect's JSON (§4.7) and TypeBox tuples in the 2020-12 form", () => {
    assert.deepEqual(JSON.parse(JSON.stringify(Float32())), { type: "number", "TypeDef:Float32": true });
    assert.deepEqual(JSON.parse(JSON.stringify(Struct({ b: Int32(), a: Bool() }))), {
      "TypeDef:Struct": true, type: "object", required: ["b", "a"], additionalProperties: false,
      properties: { b: { type: "integer", "TypeDef:Int32": true }, a: { type: "boolean", "TypeDef:Bool": true } },
    });
    const t = JSON.parse(JSON.stringify(Tuple([Uint16(), Float64()])));
    assert.deepEqual(t.prefixItems.length, 2);
    assert.equal(t.items, false);
    // A draft-07 tuple from Type.Tuple is normalised (§4.3).
    const norm = toJsonSchema(Metatensor({ p: Type.Array(Type.Tuple([Uint16(), Float64()])) }));
    const p = (norm["properties"] as any).p.items;
    assert.equal(p.items, false);
    assert.equal(p.prefixItems.length, 2);
    assert.equal(p.additionalItems, undefined);
    const c = compileSchema(norm);
    assert.equal(c.find("p")!.kind, "struct");
  });

  it("a TypeBox module (root $ref into $defs) is accepted by the writer", () => {
    const M = Type.Module({
      Point: Struct({ x: Float32(), y: Float32() }),
      File: Metatensor({ points: Type.Array(Type.Ref("Point")) }),
    });
    const w = new MetatensorWriter(JSON.parse(JSON.stringify(M.Import("File"))));
    w.set("points", [{ x: 1, y: 2 }]);
    assert.ok(w.serialize().length > 0);
  });
});

// The schema of the verdict table: one struct tensor "x" of at most 2 records.
const Rec = Struct({
  id: Uint8({ maximum: 200 }),
  m: Float32({ minimum: 0, exclusiveMaximum: 10 }),
  name: String({ minLength: 1, pattern: "^[a-z]" }),
  tags: List(Int16(), { maxItems: 3 }),
  p: Tuple([Uint16(), Float64({ multipleOf: 0.5 })]),
  big: Int64({ minimum: -5 }),
  flag: Bool(),
  kind: Int32({ enum: [1, 2, 3] }),
  v: FixedArray(Float16(), 2),
});
const Root = Metatensor({ x: Tensor(Rec, [{ max: 2 }]) });
const base = { id: 1, m: 2.5, name: "abc", tags: [1, -2], p: [3, 1.5], big: 7, flag: true, kind: 2, v: [0.5, 1] };
const rec = (patch: Record<string, unknown>) => ({ ...base, ...patch });

// [name, value of x, ajv applies (plain JSON, representable)]
const TABLE: [string, unknown, boolean][] = [
  ["valid", [base, rec({ name: "z", tags: [] })], true],
  ["empty tensor", [], true],
  ["maximum", [rec({ id: 201 })], true],
  ["minimum", [rec({ m: -1 })], true],
  ["exclusiveMaximum", [rec({ m: 10 })], true],
  ["minLength", [rec({ name: "" })], true],
  ["pattern", [rec({ name: "Abc" })], true],
  ["pattern unanchored end ok", [rec({ name: "a-Z" })], true],
  ["List maxItems", [rec({ tags: [1, 2, 3, 4] })], true],
  ["multipleOf", [rec({ p: [3, 1.25] })], true],
  ["Int64 minimum", [rec({ big: -6 })], true],
  ["enum", [rec({ kind: 4 })], true],
  ["too many records", [base, base, base], true],
  ["wrong type", [rec({ flag: 1 })], true],
  ["missing field", [(({ kind: _k, ...r }) => r)(base)], true],
  ["extra field", [rec({ extra: 1 })], true],
  ["NaN passes minimum", [rec({ m: NaN })], false],
  ["bigint Int64", [rec({ big: 2n ** 62n })], false],
  ["Uint8 out of range", [rec({ id: 256 })], false],
  ["Int16 out of range in a List", [rec({ tags: [40000] })], false],
  ["Float16 out of range", [rec({ v: [1e6, 0] })], false],
  ["fixed array length", [rec({ v: [1] })], true],
  ["tuple arity", [rec({ p: [1] })], true],
];

async function ours(value: unknown): Promise<string> {
  try {
    const w = new MetatensorWriter(toJsonSchema(Root));
    w.set("x", value);
    const f = await openMetatensor(w.serialize());
    await validateDeep(f);
    return "valid";
  } catch (e) {
    if (!(e instanceof MetatensorError)) throw e;
    return "invalid";
  }
}

describe("Value.Check, ajv, deep validation and C++ agree", () => {
  it("on a table of valid and invalid values", async () => {
    const json = toJsonSchema(Root);
    const fromJson = fromJsonSchema(json);
    const ajv = new Ajv2020({ strict: false, allErrors: false });
    const validate = ajv.compile(json);
    const rows: string[] = [];
    for (const [name, x, ajvApplies] of TABLE) {
      const tb = Value.Check(Root, { x }) ? "valid" : "invalid";
      const fj = Value.Check(fromJson, { x }) ? "valid" : "invalid";
      const deep = await ours(x);
      const expected = ["valid", "empty tensor", "pattern unanchored end ok", "NaN passes minimum", "bigint Int64"].includes(name) ? "valid" : "invalid";
      const row = [name, expected, tb, fj, deep];
      if (ajvApplies) row.push(validate({ x }) ? "valid" : "invalid");
      if (new Set(row.slice(1)).size !== 1) rows.push(row.join(" | "));
    }
    assert.deepEqual(rows, []);
  });

  it("C++ deep validation gives the same verdicts on the files the TS writer accepts", { skip: CLI === "" && "METATENSOR_CLI is not set" }, async () => {
    const dir = tmp();
    const paths: string[] = [];
    const expect: string[] = [];
    for (const [name, x] of TABLE) {
      let bytes: Uint8Array;
      try {
        const w = new MetatensorWriter(toJsonSchema(Root));
        w.set("x", x);
        bytes = w.serialize();
      } catch {
        continue; // not representable: nothing to give C++
      }
      const p = join(dir, `${paths.length}.mt`);
      writeFileSync(p, bytes);
      paths.push(p);
      expect.push(`${name}: ${Value.Check(Root, { x }) ? "OK" : "INVALID"}`);
    }
    const r = cli("validate", "--deep", ...paths);
    const got = paths.map((p, i) => {
      const line = r.stdout.split("\n").find((l) => l.startsWith(p + ": "))!;
      return `${expect[i]!.split(":")[0]}: ${/: OK/.test(line) ? "OK" : "INVALID"}`;
    });
    assert.deepEqual(got, expect);
    assert.ok(paths.length >= 12);
  });

  it("fromJsonSchema of a file's embedded schema checks the file's logical value", async () => {
    const w = new MetatensorWriter(toJsonSchema(Metatensor({
      c: Tensor(Complex64(), [null]), e: Tensor(Float8E4M3(), [2]), b: Blob(), a: Align(Tensor(Float32(), [null]), 128),
    })));
    w.set("c", [[1, 2]]).set("e", [0.5, 1]).set("b", [1, 2, 3]).set("a", [1]);
    const f = await openMetatensor(w.serialize());
    const schema = fromJsonSchema(f.schema.document);
    assert.equal(Value.Check(schema, await f.value()), true);
    assert.equal(Value.Check(schema, { ...(await f.value()), e: [0.5] }), false);
  });
});
