// The dialect reads what TypeBox emits, by the C++ rules
// (tests/metatensor/typebox_dialect_test.cpp, docs/metatensor.md "Schemas
// from TypeBox"): draft-07 tuples and module roots are rewritten wherever a
// schema is authored (compileSchema, the writer, JsonSchemaEvaluator, header
// schemas); a file's embedded schema is read strictly (§4.3).
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  JsonSchemaEvaluator, MetatensorError, MetatensorWriter, compileSchema, normalizeBuilderSchema, openMetatensor, validateDeep,
} from "@tensogram/metatensor";
import { typeboxData } from "./helpers.js";

const data = typeboxData;

function code(f: () => unknown): string {
  try {
    f();
  } catch (e) {
    assert.ok(e instanceof MetatensorError, String(e));
    return e.code;
  }
  return "none";
}

function eachObject(v: unknown, f: (o: Record<string, unknown>) => void): void {
  if (Array.isArray(v)) v.forEach((x) => eachObject(x, f));
  else if (v && typeof v === "object") {
    f(v as Record<string, unknown>);
    Object.values(v).forEach((x) => eachObject(x, f));
  }
}

const enc = new TextEncoder();
const dec = new TextDecoder();
/** The file with its header's `metatensor.schema` replaced (header padded to keep D aligned to 64). */
function withSchema(bytes: Uint8Array, schema: unknown): Uint8Array {
  const n = Number(new DataView(bytes.buffer, bytes.byteOffset).getBigUint64(0, true));
  const h = JSON.parse(dec.decode(bytes.subarray(8, 8 + n)));
  h.__metadata__["metatensor.schema"] = JSON.stringify(schema);
  const text = enc.encode(JSON.stringify(h));
  const len = text.length + ((64 - ((8 + text.length) % 64)) % 64);
  const out = new Uint8Array(8 + len + (bytes.length - 8 - n)).fill(0x20, 8, 8 + len);
  new DataView(out.buffer).setBigUint64(0, BigInt(len), true);
  out.set(text, 8);
  out.set(bytes.subarray(8 + n), 8 + len);
  return out;
}

describe("TypeBox output in the dialect", () => {
  it("draft-07 tuple records compile (the C++ layout) and the compiled document is 2020-12", () => {
    const raw = data("particles_tuple.json");
    const s = compileSchema(raw);
    const p = s.find("particles")!;
    assert.equal(p.kind, "struct");
    const r = p.record!;
    assert.deepEqual(r.fields.map((f) => [f.name, f.offset]), [["id", 0], ["pos", 4], ["span", 16], ["mass", 32]]);
    assert.ok(r.fields[1]!.type.record!.tuple);
    assert.equal(r.fields[1]!.type.record!.fields.length, 3);
    assert.equal(r.fields[2]!.type.record!.fields[0]!.type.scalar, "I64");
    assert.equal(r.size, 40);
    assert.equal(s.find("grid")!.kind, "flat");
    eachObject(s.document, (o) => {
      assert.ok(!("additionalItems" in o), JSON.stringify(o));
      assert.ok(!Array.isArray(o["items"]), JSON.stringify(o));
    });
    const pos = (s.document as any).properties.particles.items.properties.pos;
    assert.equal(pos.prefixItems.length, 3);
    assert.equal(pos.items, false);
    assert.equal(pos.title, "position");
    // Embedded (a file's schema) is §4.3 exactly; the rewritten one passes.
    assert.equal(code(() => compileSchema(raw, "embedded")), "MT_SCHEMA_DIALECT");
    assert.deepEqual(compileSchema(s.document, "embedded").find("particles")!.record, r);
  });

  it("a module root compiles; strictly it is refused", () => {
    const raw = data("module_particles.json");
    assert.equal(code(() => compileSchema(raw, "embedded")), "MT_SCHEMA_DIALECT");
    const tuplesRewritten = structuredClone(raw);
    tuplesRewritten.$defs.Vec3 = normalizeBuilderSchema(raw.$defs.Vec3);
    assert.equal(code(() => compileSchema(tuplesRewritten, "embedded")), "MT_SCHEMA_TYPE");
    const s = compileSchema(raw);
    assert.deepEqual(s.names(), ["particles"]);
    const r = s.find("particles")!.record!;
    assert.equal(r.fields[1]!.name, "pos");
    assert.ok(r.fields[1]!.type.record!.tuple);
    assert.equal(r.size, 20);
    assert.equal(s.document["$ref"], undefined);
    assert.equal(s.document["additionalProperties"], false);
    assert.equal((s.document as any).$defs.File.$id, "File");
    assert.equal(s.document["$id"], undefined);
  });

  it("written files embed the 2020-12 form and validate; a file embedding the draft-07 form is refused", async () => {
    for (const name of ["particles_tuple.json", "module_particles.json"]) {
      const module = name === "module_particles.json";
      const w = new MetatensorWriter(data(name));
      const particles = module
        ? [{ id: 1, pos: [1, 2, 3], mass: 0.5 }]
        : [{ id: 1, pos: [1, 2, 3], span: [-4n, 2.5], mass: 0.5 }, { id: 2, pos: [4, 5, 6], span: [9n, 0], mass: 1 }];
      w.set("particles", particles);
      if (!module) w.set("grid", [[1, 2], [3, 4]]);
      const bytes = w.serialize();
      const f = await openMetatensor(bytes);
      await validateDeep(f);
      assert.deepEqual((await f.value(["particles"]))["particles"], particles);
      const embedded = JSON.parse(f.metadata.get("metatensor.schema")!);
      compileSchema(embedded, "embedded");
      // The same file embedding TypeBox's own JSON: refused, as by the C++ reader.
      await assert.rejects(openMetatensor(withSchema(bytes, data(name))), (e: MetatensorError) => e.code === "MT_SCHEMA_DIALECT");
    }
  });

  it("the evaluator reads draft-07 tuples and module roots", () => {
    const ev = new JsonSchemaEvaluator(data("particles_tuple.json"));
    const value = (span: number[]) => ({ particles: [{ id: 1, pos: [1, 2, 3], span, mass: 1 }], grid: [] });
    assert.equal(ev.validate(value([1, 2])), undefined);
    let v = ev.validate(value([1, -2]));
    assert.equal(v?.pointer, "/particles/0/span/1");
    assert.equal(v?.keyword, "minimum");
    v = ev.validate(value([1, 2, 3]));
    assert.equal(v?.pointer, "/particles/0/span");
    v = ev.validate(value([1]));
    assert.equal(v?.keyword, "minItems");
    assert.deepEqual(ev.document, normalizeBuilderSchema(data("particles_tuple.json")));

    const mod = new JsonSchemaEvaluator(data("module_particles.json"));
    const good = { particles: [{ id: 1, pos: [1, 2, 3], mass: 0 }] };
    assert.equal(mod.validate(good), undefined);
    assert.equal(mod.validate({ particles: [{ id: 1, pos: [1, 2, 3], mass: -1 }] })?.pointer, "/particles/0/mass");
    assert.equal(mod.validate({ ...good, extra: 1 })?.keyword, "additionalProperties");
    assert.equal(mod.validate({ particles: [{ id: 1, pos: [1, 2, 3, 4], mass: 0 }] })?.pointer, "/particles/0/pos");
  });

  it("normalizeBuilderSchema: draft-07 tuples, case by case", () => {
    const s = { type: "string" };
    const n = { type: "number" };
    assert.deepEqual(normalizeBuilderSchema({ items: [s] }), { prefixItems: [s] }); // open, as in draft 07
    assert.deepEqual(normalizeBuilderSchema({ items: [s], additionalItems: true }), { prefixItems: [s] });
    assert.deepEqual(normalizeBuilderSchema({ items: [s], additionalItems: false }), { prefixItems: [s], items: false });
    assert.deepEqual(normalizeBuilderSchema({ items: [s], additionalItems: n }), { prefixItems: [s], items: n });
    assert.deepEqual(normalizeBuilderSchema({ items: [], additionalItems: false }), { items: false });
    const out = normalizeBuilderSchema({
      $defs: { T: { items: [s], additionalItems: false } },
      anyOf: [{ items: [s] }],
      properties: { p: { items: { items: [s], additionalItems: false } } },
    }) as any;
    assert.deepEqual(out.$defs.T, { prefixItems: [s], items: false });
    assert.deepEqual(out.anyOf[0], { prefixItems: [s] });
    assert.deepEqual(out.properties.p.items, { prefixItems: [s], items: false });
    // Left alone: values that are not schemas, a node with both forms, a lone additionalItems.
    for (const doc of [
      { const: { items: [1] }, default: { items: [s] }, "x-note": { items: [s] } },
      { prefixItems: [s], items: [s] },
      { items: s, additionalItems: false },
    ]) assert.deepEqual(normalizeBuilderSchema(doc), doc);
  });

  it("normalizeBuilderSchema: root references", () => {
    const obj = { type: "object", properties: { x: { type: "number" } } };
    let out = normalizeBuilderSchema({ $defs: { A: { ...obj, $id: "A" } }, $ref: "A", title: "t" }) as any;
    assert.equal(out.type, "object");
    assert.deepEqual(out.properties, obj.properties);
    assert.equal(out.title, "t");
    assert.equal(out.$ref, undefined);
    assert.equal(out.$id, undefined);
    assert.equal(out.$defs.A.$id, "A");
    out = normalizeBuilderSchema({ $defs: { A: obj, B: { $ref: "#/$defs/A" } }, $ref: "#/$defs/B" });
    assert.deepEqual(out.properties, obj.properties);
    assert.equal(out.$ref, undefined);
    for (const doc of [
      { $ref: "Nowhere", $defs: { A: obj } },
      { $ref: "#", $defs: { A: obj } },
      { $ref: "#/$defs/A", type: "object", $defs: { A: obj } },
    ]) {
      assert.deepEqual(normalizeBuilderSchema(doc), doc);
      assert.notEqual(code(() => compileSchema(doc)), "none");
    }
    assert.notEqual(code(() => compileSchema({ $ref: "#/$defs/A", $defs: { A: { $ref: "#" } } })), "none");
  });

  it("open tuples are not laid out", () => {
    const f32 = { type: "number", "TypeDef:Float32": true };
    const open = { type: "object", properties: { x: { type: "array", items: [f32, f32] } } };
    assert.equal(code(() => compileSchema(open, "embedded")), "MT_SCHEMA_DIALECT");
    assert.equal(code(() => compileSchema(open)), "MT_SCHEMA_TYPE"); // §4.5: not closed
    const closed = { type: "object", properties: { x: { type: "array", items: [f32, f32], additionalItems: false } } };
    const s = compileSchema(closed);
    assert.equal(s.find("x")!.kind, "struct");
    assert.equal(s.find("x")!.record!.size, 8);
  });
});
