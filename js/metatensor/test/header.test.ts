// Header schemas, "a model is one struct" (docs/metatensor.md "Header
// schemas"): the concept paper's TensorRef / Layer / Model built with
// TypeBox, a file written from it, validated, with the failures named as the
// C++ names them (tests/metatensor/header_schema_test.cpp, whose TypeBox
// output in tests/metatensor/data/typebox/ both read), and grouped
// typed access.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { Type, type TSchema } from "@sinclair/typebox";
import {
  FlatTensor, HeaderSchema, MetatensorError, MetatensorWriter, TensorGroup, groupTensors, groupedHeader, openMetatensor, openSafetensors,
  serializeSafetensors, validateHeader, type DType, type SafetensorsFile,
} from "@tensogram/metatensor";
import { Float32 } from "@tensogram/metatensor/typebox";
import { CLI, tmp, typeboxData } from "./helpers.js";

// The C++ CLI, when it has `validate --header-schema` (METATENSOR_CLI).
const headerCli = CLI !== "" && spawnSync(CLI, ["validate", "--help"], { encoding: "utf8" }).stdout.includes("--header-schema");

const data = typeboxData;

// The concept paper's example, verbatim.
const TensorRef = Type.Object({
  dtype: Type.Union([Type.Literal("F32"), Type.Literal("I16")]),
  shape: Type.Array(Type.Number()),
  data_offsets: Type.Tuple([Type.Number(), Type.Number()]),
});
const Layer = Type.Object({ weight: TensorRef, bias: TensorRef, running_mean: TensorRef, running_var: TensorRef });
const Model = Type.Object({ conv1: Layer, conv2: Layer }, { additionalProperties: false });

interface Spec { name: string; dtype: DType; shape: number[] }
function conceptTensors(): Spec[] {
  const out: Spec[] = [];
  for (const layer of ["conv1", "conv2"]) {
    const inputs = layer === "conv1" ? 1 : 20;
    out.push({ name: `${layer}.weight`, dtype: "F32", shape: [20, inputs, 5, 5] });
    for (const t of ["bias", "running_mean", "running_var"]) out.push({ name: `${layer}.${t}`, dtype: "F32", shape: [20] });
  }
  return out;
}
const count = (shape: readonly number[]) => shape.reduce((a, b) => a * b, 1);
// Element i of every tensor holds seed(name) + i, so views can be checked.
const seed = (name: string) => [...name].reduce((h, c) => (h * 31 + c.charCodeAt(0)) % 1000, 7);
const bits: Partial<Record<DType, number>> = { F32: 32, F64: 64, F16: 16, I16: 16, U8: 8 };

function plainFile(specs: Spec[]): Promise<SafetensorsFile> {
  return openSafetensors(plainBytes(specs));
}
function plainBytes(specs: Spec[]): Uint8Array {
  return serializeSafetensors(specs.map((s) => {
    const n = count(s.shape);
    const b = new Uint8Array((n * bits[s.dtype]!) / 8);
    if (s.dtype === "F32") new Float32Array(b.buffer).set(Array.from({ length: n }, (_, i) => seed(s.name) + i));
    return { name: s.name, dtype: s.dtype, shape: s.shape, data: b };
  }));
}
const without = (specs: Spec[], name: string) => specs.filter((s) => s.name !== name);
const withTensor = (specs: Spec[], t: Spec) => [...without(specs, t.name), t];

/** The MT_HEADER_SCHEMA message of validating `specs` against `schema`. */
async function failure(specs: Spec[], schema: unknown): Promise<string> {
  const f = await plainFile(specs);
  try {
    validateHeader(f, schema);
  } catch (e) {
    assert.ok(e instanceof MetatensorError);
    assert.equal(e.code, "MT_HEADER_SCHEMA", e.message);
    return e.message;
  }
  assert.fail("the header was accepted");
}

describe("header schemas", () => {
  it("TypeBox emits the schemas of the shared test data (the C++ tests read the same JSON)", () => {
    assert.deepEqual(JSON.parse(JSON.stringify(Model)), data("concept_model.json"));
  });

  it("the concept model validates a metatensor file written by our writer (padding skipped), with typed access", async () => {
    const props: Record<string, TSchema> = {};
    for (const s of conceptTensors()) props[s.name] = s.shape.reduce<TSchema>((item) => Type.Array(item), Float32());
    const w = new MetatensorWriter(Type.Object(props));
    for (const s of conceptTensors()) {
      w.setFlat(s.name, s.shape, Float32Array.from({ length: count(s.shape) }, (_, i) => seed(s.name) + i));
    }
    const f = await openMetatensor(w.serialize());
    assert.ok(f.tensors.some((t) => t.name.startsWith("__pad__")), "the test wants a file with padding tensors");
    for (const schema of [Model, data("concept_model.json"), data("concept_module.json"), HeaderSchema.fromText(JSON.stringify(data("concept_module.json")))]) {
      const model = validateHeader(f, schema);
      assert.deepEqual(model.members(), ["conv1", "conv2"]);
      const w1 = model.get("conv1").get("weight");
      assert.ok(w1.isTensor);
      assert.equal(w1.name, "conv1.weight");
      assert.deepEqual(w1.entry().shape, [20, 1, 5, 5]);
      assert.equal(model.get("conv1").tensors().length, 4);
      assert.equal(model.tensors().length, 8);
      const rv = await model.at("conv2.running_var").tensor();
      assert.ok(rv.data instanceof Float32Array);
      assert.equal(rv.data.length, 20);
      assert.equal(rv.data[7], seed("conv2.running_var") + 7);
      // The logical tensor of the metatensor reader is the same bytes.
      assert.deepEqual(Array.from(rv.data), Array.from((await f.flat("conv2.running_var")).data as Float32Array));
      // All of it, nested as the model: model.conv1.weight is a typed view.
      const loaded = await model.load<{ conv1: { weight: FlatTensor }; conv2: { bias: FlatTensor } }>();
      assert.ok(loaded.conv1.weight instanceof FlatTensor);
      assert.equal(loaded.conv1.weight.data[3], seed("conv1.weight") + 3);
      assert.deepEqual(loaded.conv2.bias.shape, [20]);
    }
  });

  it("a plain safetensors file: the Union allows I16", async () => {
    const f = await plainFile(withTensor(conceptTensors(), { name: "conv1.bias", dtype: "I16", shape: [20] }));
    assert.ok(validateHeader(f, Model) instanceof TensorGroup);
  });

  it("failures name the tensor and the pointer, as the C++", async () => {
    const good = conceptTensors();
    validateHeader(await plainFile(good), Model);
    // A missing tensor.
    let m = await failure(without(good, "conv2.running_var"), Model);
    assert.equal(m, 'MT_HEADER_SCHEMA: "conv2.running_var" is missing (/conv2): missing the required member "running_var" (schema location /properties/conv2)');
    m = await failure(good.filter((s) => !s.name.startsWith("conv2.")), Model);
    assert.ok(m.includes('"conv2" is missing (/)'), m);
    // A wrong dtype.
    m = await failure(withTensor(good, { name: "conv1.bias", dtype: "F64", shape: [20] }), Model);
    assert.equal(m, 'MT_HEADER_SCHEMA: tensor "conv1.bias" (/conv1/bias/dtype): value matches none of the 2 "anyOf" subschemas (schema location /properties/conv1/properties/bias/properties/dtype)');
    // An extra tensor: Model has additionalProperties false, Layer does not.
    m = await failure(withTensor(good, { name: "conv3.weight", dtype: "F32", shape: [2] }), Model);
    assert.equal(m, 'MT_HEADER_SCHEMA: group "conv3" (/conv3): member "conv3" is not listed in "properties" (schema root)');
    m = await failure(withTensor(good, { name: "head", dtype: "F32", shape: [2] }), Model);
    assert.ok(m.includes('tensor "head" (/head)'), m);
    validateHeader(await plainFile(withTensor(good, { name: "conv1.extra", dtype: "F32", shape: [2] })), Model);
    // A group where a TensorRef is expected.
    m = await failure(withTensor(without(good, "conv1.bias"), { name: "conv1.bias.x", dtype: "F32", shape: [2] }), Model);
    assert.ok(m.includes('"conv1.bias.dtype" is missing (/conv1/bias)'), m);
  });

  it("exact dtypes and shapes (Literal, tuples of Literals, Optional)", async () => {
    const schema = data("exact_model.json");
    const good: Spec[] = [
      { name: "conv1.weight", dtype: "F32", shape: [20, 1, 5, 5] },
      { name: "conv1.bias", dtype: "F32", shape: [20] },
      { name: "fc.weight", dtype: "F32", shape: [10, 20] },
    ];
    validateHeader(await plainFile(good), schema);
    validateHeader(await plainFile(withTensor(good, { name: "fc.bias", dtype: "F32", shape: [10] })), schema);
    const cases: [Spec, string][] = [
      [{ name: "conv1.weight", dtype: "F32", shape: [20, 1, 5, 4] }, 'tensor "conv1.weight" (/conv1/weight/shape/3): 4 is not the constant 5 (schema location /properties/conv1/properties/weight/properties/shape/prefixItems/3)'],
      [{ name: "conv1.weight", dtype: "F32", shape: [20, 1, 5] }, 'tensor "conv1.weight" (/conv1/weight/shape): array of 3 items has fewer than 4'],
      [{ name: "conv1.weight", dtype: "F16", shape: [20, 1, 5, 5] }, 'tensor "conv1.weight" (/conv1/weight/dtype): "F16" is not the constant "F32"'],
      [{ name: "fc.bias", dtype: "F32", shape: [12] }, 'tensor "fc.bias" (/fc/bias/shape/0): 12 is greater than the maximum 10'],
      [{ name: "conv1.extra", dtype: "F32", shape: [1] }, 'tensor "conv1.extra" (/conv1/extra)'],
    ];
    for (const [t, expected] of cases) {
      const m = await failure(withTensor(good, t), schema);
      assert.ok(m.includes(expected), `${m} (wanted ${expected})`);
    }
  });

  it("the grouped header", async () => {
    const f = await plainFile([{ name: "a.b", dtype: "U8", shape: [3] }, { name: "a.c.d", dtype: "I16", shape: [] }, { name: "e", dtype: "F64", shape: [0] }]);
    const g = groupedHeader(f) as any;
    assert.deepEqual(Object.keys(g).sort(), ["a", "e"]);
    assert.equal(g.a.b.dtype, "U8");
    assert.deepEqual(g.a.b.shape, [3]);
    const t = f.entry("a.c.d");
    assert.deepEqual(g.a.c.d, { dtype: "I16", shape: [], data_offsets: [t.begin, t.end] });
    assert.deepEqual(g.e.shape, [0]);
    const root = groupTensors(f);
    assert.ok(root.has("a"));
    assert.ok(!root.get("a").isTensor);
    assert.equal(root.get("a").get("c").get("d").name, "a.c.d");
    assert.throws(() => root.get("a").get("x"), (e: MetatensorError) => e.code === "MT_NOT_FOUND" && e.message.includes('"a.x"'));
    assert.throws(() => root.get("a").entry(), (e: MetatensorError) => e.code === "MT_INVALID_ARGUMENT");
    assert.throws(() => root.get("e").get("f"), (e: MetatensorError) => e.code === "MT_NOT_FOUND");
  });

  it("a name that is both a tensor and a group is MT_HEADER_SCHEMA", async () => {
    for (const specs of [
      [{ name: "a", dtype: "U8", shape: [1] }, { name: "a.b", dtype: "U8", shape: [1] }],
      [{ name: "a.b", dtype: "U8", shape: [1] }, { name: "a", dtype: "U8", shape: [1] }],
    ] as Spec[][]) {
      const f = await plainFile(specs);
      assert.throws(() => groupTensors(f), (e: MetatensorError) => e.code === "MT_HEADER_SCHEMA" && e.message.includes('"a"'));
    }
  });

  it("schema errors", () => {
    assert.throws(() => new HeaderSchema({ patternProperties: {} }), (e: MetatensorError) => e.code === "MT_SCHEMA_DIALECT");
    assert.throws(() => HeaderSchema.fromText('{"type":"object","type":"object"}'), (e: MetatensorError) => e.code === "MT_SCHEMA_JSON");
    assert.throws(() => HeaderSchema.fromText("{"), (e: MetatensorError) => e.code === "MT_SCHEMA_JSON");
    const s = HeaderSchema.fromText(JSON.stringify(data("concept_module.json")));
    assert.equal((s.document as Record<string, unknown>)["$ref"], undefined); // the module root was read
  });

  it("the C++ `metatensor validate --header-schema` gives the same verdicts and messages", { skip: headerCli ? false : "METATENSOR_CLI lacks --header-schema" }, async () => {
    const dir = tmp();
    const good = conceptTensors();
    const exact: Spec[] = [
      { name: "conv1.weight", dtype: "F32", shape: [20, 1, 5, 5] }, { name: "conv1.bias", dtype: "F32", shape: [20] }, { name: "fc.weight", dtype: "F32", shape: [10, 20] },
    ];
    const cases: [string, unknown, Spec[]][] = [
      ["model-good", Model, good],
      ["model-missing", Model, without(good, "conv2.running_var")],
      ["model-dtype", Model, withTensor(good, { name: "conv1.bias", dtype: "F64", shape: [20] })],
      ["model-extra", Model, withTensor(good, { name: "conv3.weight", dtype: "F32", shape: [2] })],
      ["model-nest", Model, [...good, { name: "conv1.bias.x", dtype: "F32", shape: [1] }]],
      ["module-group", data("concept_module.json"), withTensor(without(good, "conv1.bias"), { name: "conv1.bias.x", dtype: "F32", shape: [2] })],
      ["exact-good", data("exact_model.json"), exact],
      ["exact-shape", data("exact_model.json"), withTensor(exact, { name: "conv1.weight", dtype: "F32", shape: [20, 1, 5, 4] })],
      ["exact-rank", data("exact_model.json"), withTensor(exact, { name: "conv1.weight", dtype: "F32", shape: [20, 1, 5] })],
      ["exact-max", data("exact_model.json"), withTensor(exact, { name: "fc.bias", dtype: "F32", shape: [12] })],
    ];
    for (const [name, schema, specs] of cases) {
      const file = join(dir, `${name}.safetensors`);
      const schemaFile = join(dir, `${name}.schema.json`);
      writeFileSync(file, plainBytes(specs));
      writeFileSync(schemaFile, JSON.stringify(schema));
      let ts: string | undefined;
      try {
        validateHeader(await plainFile(specs), schema);
      } catch (e) {
        assert.ok(e instanceof MetatensorError && e.code === "MT_HEADER_SCHEMA", String(e));
        ts = e.detail;
      }
      const r = spawnSync(CLI, ["validate", "-j", "--header-schema", schemaFile, file], { encoding: "utf8" });
      const verdict = JSON.parse(r.stdout)[0];
      assert.equal(verdict.valid, ts === undefined, `${name}: ${r.stdout}`);
      if (ts !== undefined) {
        assert.equal(verdict.error.code, "MT_HEADER_SCHEMA", name);
        // The C++ message ends "MT_HEADER_SCHEMA: <file>: <detail>".
        assert.ok(String(verdict.error.message).endsWith(`MT_HEADER_SCHEMA: ${file}: ${ts}`), `${name}: C++ ${verdict.error.message} / TS ${ts}`);
      }
    }
  });
});
