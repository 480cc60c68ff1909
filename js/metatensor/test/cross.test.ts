// Cross-language tests with the C++ CLI (METATENSOR_CLI): files written by
// C++ (`metatensor from-npy`) read identically by TS and rewritten byte for
// byte; files written by TS pass `metatensor validate --deep` and `metatensor
// dump` reads the values TS wrote.
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { MetatensorFile, MetatensorWriter, openMetatensor, validateDeep } from "@tensogram/metatensor";
import { openFile, openMetatensorFile, writeFile } from "@tensogram/metatensor/node";
import { asDumped, bytesOf, cli, dumpJson, needsCli, tmp, writeNpy } from "./helpers.js";

function concat(...parts: ArrayBufferView[]): Uint8Array {
  const n = parts.reduce((s, p) => s + p.byteLength, 0);
  const out = new Uint8Array(n);
  let at = 0;
  for (const p of parts) {
    out.set(bytesOf(p), at);
    at += p.byteLength;
  }
  return out;
}

/** .npy inputs covering every dtype from-npy maps, structs (padding, nesting, sub-arrays, strings) and strings. */
function makeNpys(dir: string): string[] {
  const files: [string, Parameters<typeof writeNpy>[1], number[], Uint8Array][] = [];
  files.push(["f32", "<f4", [2, 3], bytesOf(new Float32Array([0, 1.5, -2, 3.25, Infinity, -0]))]);
  files.push(["f64", "<f8", [3], bytesOf(new Float64Array([Math.PI, -1e300, 5e-324]))]);
  files.push(["f16", "<f2", [4], bytesOf(new Uint16Array([0x3c00, 0xc000, 0x7bff, 0x0001]))]);
  files.push(["c64", "<c8", [2], bytesOf(new Float32Array([1, -1, 0.5, 2]))]);
  files.push(["i8", "|i1", [3], bytesOf(new Int8Array([-128, 0, 127]))]);
  files.push(["i16", "<i2", [2], bytesOf(new Int16Array([-32768, 32767]))]);
  files.push(["i32", "<i4", [2, 2], bytesOf(new Int32Array([-2147483648, 2147483647, 0, -1]))]);
  files.push(["i64", "<i8", [3], bytesOf(new BigInt64Array([-(2n ** 63n), 2n ** 63n - 1n, 42n]))]);
  files.push(["u8", "|u1", [2], bytesOf(new Uint8Array([0, 255]))]);
  files.push(["u16", "<u2", [1], bytesOf(new Uint16Array([65535]))]);
  files.push(["u32", "<u4", [1], bytesOf(new Uint32Array([4294967295]))]);
  files.push(["u64", "<u8", [2], bytesOf(new BigUint64Array([2n ** 64n - 1n, 2n ** 53n + 1n]))]);
  files.push(["flags", "|b1", [3], new Uint8Array([1, 0, 1])]);
  files.push(["empty", "<f4", [0, 3], new Uint8Array(0)]);
  // Aligned record: id u4 | pad 4 | mass f8 | vel f4[3] | pad 4 | tag U3 | ok b1 | pad 7
  const rec = (id: number, mass: number, vel: number[], tag: string, ok: boolean) => {
    const b = new Uint8Array(48);
    const dv = new DataView(b.buffer);
    dv.setUint32(0, id, true);
    dv.setFloat64(8, mass, true);
    vel.forEach((v, i) => dv.setFloat32(16 + 4 * i, v, true));
    [...tag].forEach((c, i) => dv.setUint32(28 + 4 * i, c.codePointAt(0)!, true));
    dv.setUint8(40, ok ? 1 : 0);
    return b;
  };
  files.push([
    "particles",
    [["id", "<u4"], ["", "|V4"], ["mass", "<f8"], ["vel", "<f4", [3]], ["tag", "<U3"], ["ok", "|b1"], ["", "|V7"]],
    [2],
    concat(rec(7, 1.5, [1, 2, 3], "ab", true), rec(8, -2.5, [4, 5, 6], "é", false)),
  ]);
  // Nested record: pos {x f4, y f4} | n i2 | pad 2
  const nested = new Uint8Array(24);
  const ndv = new DataView(nested.buffer);
  [[1, 2, 3], [4, 5, -6]].forEach(([x, y, n], i) => {
    ndv.setFloat32(12 * i, x!, true);
    ndv.setFloat32(12 * i + 4, y!, true);
    ndv.setInt16(12 * i + 8, n!, true);
  });
  files.push(["points", [["pos", [["x", "<f4"], ["y", "<f4"]]], ["n", "<i2"], ["", "|V2"]], [2], nested]);
  const labels = ["red", "green", "blue", ""];
  const u = new Uint32Array(4 * 5);
  labels.forEach((s, i) => [...s].forEach((c, j) => (u[5 * i + j] = c.codePointAt(0)!)));
  files.push(["labels", "<U5", [2, 2], bytesOf(u)]);
  return files.map(([name, descr, shape, data]) => {
    const p = join(dir, `${name}.npy`);
    writeNpy(p, descr, shape, data);
    return p;
  });
}

async function sameAsDump(f: MetatensorFile, path: string): Promise<void> {
  const d = dumpJson(path);
  assert.deepEqual([...f.names].sort(), Object.keys(d["tensors"]).sort());
  const value = await f.value();
  for (const name of f.names) {
    assert.deepEqual([...f.dims(name)], d["tensors"][name]["dims"], `dims of ${name}`);
    const flat: unknown[] = [];
    const walk = (v: unknown, depth: number) => (depth === 0 ? flat.push(v) : (v as unknown[]).forEach((x) => walk(x, depth - 1)));
    walk(value[name], f.dims(name).length);
    assert.deepEqual(asDumped(flat), d["tensors"][name]["values"], `values of ${name}`);
  }
}

describe("files written by C++ are read identically by TS", needsCli, () => {
  for (const alignment of ["16", "64", "256"]) {
    it(`from-npy, alignment ${alignment}: values, views and a byte-identical rewrite`, async () => {
      const dir = tmp();
      const npys = makeNpys(dir);
      const path = join(dir, "cpp.mt");
      const r = cli("from-npy", ...npys, "-o", path, "--alignment", alignment, "--no-sync");
      assert.equal(r.status, 0, r.stderr);
      const bytes = new Uint8Array(readFileSync(path));
      // Three sources: memory, a Blob, a file handle.
      const fromBuffer = await openMetatensor(bytes);
      const fromBlob = await openMetatensor(new Blob([bytes]));
      const fromPath = await openMetatensorFile(path);
      for (const f of [fromBuffer, fromBlob, fromPath]) {
        await sameAsDump(f, path);
        await validateDeep(f);
      }
      // Typed views.
      const f32 = await fromPath.flat("f32");
      assert.ok(f32.data instanceof Float32Array);
      assert.deepEqual([...f32.shape], [2, 3]);
      assert.equal(f32.data[1], 1.5);
      const u64 = await fromBuffer.flat("u64");
      assert.ok(u64.data instanceof BigUint64Array);
      assert.equal(u64.data[0], 2n ** 64n - 1n);
      assert.equal(u64.copied, false); // aligned in memory: a view, no copy
      assert.equal(u64.data.buffer, bytes.buffer);
      const f16 = await fromBuffer.flat("f16");
      assert.ok(f16.data instanceof Uint16Array);
      assert.deepEqual([...f16.toFloat64()], [1, -2, 65504, 2 ** -24]);
      const parts = await fromBuffer.records("particles");
      assert.equal(parts.at(1).get("mass"), -2.5);
      assert.deepEqual([...(parts.at(0).get("vel") as Float32Array)], [1, 2, 3]);
      assert.equal(parts.at(1).get("tag"), "é");
      const points = await fromBuffer.records("points");
      assert.equal(points.at(1).get("pos.y"), 5);
      assert.equal(points.at([1]).get(["n"]), -6);
      const labels = await fromBuffer.blobs("labels");
      assert.deepEqual(labels.toArray(), ["red", "green", "blue", ""]);
      assert.equal(labels.at([1, 0]), "blue");
      // The TS writer, given the same schema and values, writes the same bytes.
      const w = new MetatensorWriter(fromBuffer.schema, { alignment: fromBuffer.alignment, metadata: Object.fromEntries(fromBuffer.userMetadata) });
      const value = await fromBuffer.value();
      for (const n of fromBuffer.names) {
        // Flat tensors from their typed views (an empty [0, 3] tensor has no
        // inner length in its logical value), the others from logical values.
        const v = await fromBlob.get(n);
        if (v.kind === "flat") w.setFlat(n, v.shape, v.data);
        else w.set(n, value[n]);
      }
      assert.deepEqual(Buffer.from(w.serialize()), Buffer.from(bytes));
      await fromPath.close();
    });
  }
});

/** Schemas and values of every kind, written by TS. */
const F = (kw: string, type = "number") => ({ type, [`TypeDef:${kw}`]: true });
const arr = (items: unknown, extra: Record<string, unknown> = {}) => ({ type: "array", items, ...extra });
const fixed = (items: unknown, n: number) => ({ type: "array", items, minItems: n, maxItems: n });
const struct = (props: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  type: "object", "TypeDef:Struct": true, properties: props, required: Object.keys(props), ...extra,
});

export const TS_CASES: { name: string; schema: Record<string, unknown>; values: Record<string, unknown>; alignment?: number }[] = [
  {
    name: "every flat dtype",
    schema: {
      type: "object",
      properties: {
        b: arr(F("Bool", "boolean")), i8: arr(F("Int8", "integer")), u8: arr(F("Uint8", "integer")), i16: arr(F("Int16", "integer")),
        u16: arr(F("Uint16", "integer")), i32: arr(F("Int32", "integer")), u32: arr(F("Uint32", "integer")),
        i64: arr(F("Int64", "integer")), u64: arr(F("Uint64", "integer")), f16: arr(F("Float16")), bf16: arr(F("BFloat16")),
        f32: arr(arr(F("Float32"), { minItems: 2, maxItems: 2 })), f64: arr(F("Float64")), c64: arr(F("Complex64", "array")),
        e4m3: arr(F("Float8E4M3")), e5m2: arr(F("Float8E5M2")), e8m0: arr(F("Float8E8M0")), e4m3fnuz: arr(F("Float8E4M3FNUZ")),
        e5m2fnuz: arr(F("Float8E5M2FNUZ")), f4: arr(F("Float4E2M1")), f6a: arr(F("Float6E2M3")), f6b: arr(F("Float6E3M2")),
        scalar: F("Float64"),
      },
    },
    values: {
      b: [true, false, true], i8: [-128, 127], u8: [0, 255], i16: [-32768, 7], u16: [65535], i32: [-5, 2147483647], u32: [4294967295],
      i64: [-(2n ** 63n), 2n ** 63n - 1n, 3], u64: [2n ** 64n - 1n, 0], f16: [1, -0.5, 65504, 6e-8], bf16: [1, -3, 1e30],
      f32: [[1, 2], [3.5, -4]], f64: [Math.E, -1e-300], c64: [[1, -1], [0.5, 2]], e4m3: [1, -448, 0.015625], e5m2: [57344, -1, Infinity],
      e8m0: [1, 2 ** -127, 2 ** 127], e4m3fnuz: [240, -0.5], e5m2fnuz: [57344, 1], f4: [0.5, -6, 1, 3], f6a: [7.5, -0.125, 1, 2],
      f6b: [28, -0.0625, 3, 4], scalar: 42.5,
    },
  },
  {
    name: "worked example of §6.7",
    schema: {
      type: "object",
      required: ["labels", "particles", "positions"],
      additionalProperties: false,
      properties: {
        labels: arr(F("String", "string")),
        particles: arr({ $ref: "#/$defs/Particle" }),
        positions: arr(fixed(F("Float32"), 3)),
      },
      $defs: {
        Particle: struct({ id: F("Uint32", "integer"), mass: { ...F("Float64"), minimum: 0 }, vel: fixed(F("Float32"), 3), name: F("String", "string") }),
      },
    },
    values: {
      labels: ["red", "green", "blue"],
      particles: [{ id: 1, mass: 1.5, vel: [1, 2, 3], name: "alpha" }, { id: 2, mass: 2, vel: [4, 5, 6], name: "beta" }],
      positions: [[0, 0, 0], [1, 1, 1]],
    },
  },
  {
    name: "ragged lists, lists of records, nested records, tuples, raised alignment",
    alignment: 16,
    schema: {
      type: "object",
      properties: {
        rows: arr({ type: "array", "TypeDef:List": true, items: F("Float64") }),
        bytes: { type: "array", "TypeDef:List": true, items: F("Uint8", "integer") },
        grid: arr(arr({ type: "array", "TypeDef:List": true, items: F("Int16", "integer") })),
        tracks: arr(struct({
          id: F("Uint8", "integer"),
          hits: { type: "array", "TypeDef:List": true, items: struct({ t: F("Float32"), q: F("Int8", "integer") }) },
          origin: struct({ x: F("Float64"), tag: F("String", "string") }),
          pair: { type: "array", prefixItems: [F("Uint16", "integer"), F("Float32")], items: false },
          m: fixed(fixed(F("Float32"), 2), 2),
          note: { ...F("String", "string"), "TypeDef:Align": 32 },
        }, { "TypeDef:Struct": { align: 64 } })),
        big: { ...arr(F("Float32")), "TypeDef:Align": 256 },
      },
    },
    values: {
      rows: [[1, 2, 3], [], [4.5]],
      bytes: [1, 2, 3, 255],
      grid: [[[1], [2, 3]], [[], [-4, 5, 6]]],
      tracks: [
        { id: 1, hits: [{ t: 0.5, q: -1 }, { t: 1.5, q: 2 }], origin: { x: 1, tag: "a" }, pair: [7, 0.25], m: [[1, 2], [3, 4]], note: "" },
        { id: 2, hits: [], origin: { x: -1, tag: "ümlaut ✓" }, pair: [8, -0.5], m: [[5, 6], [7, 8]], note: "n" },
      ],
      big: [1, 2, 3],
    },
  },
  {
    name: "empty tensors and strings, optional tensor absent",
    schema: {
      type: "object",
      required: ["s"],
      properties: { s: arr(F("String", "string")), e: arr(F("Float32")), absent: arr(F("Int32", "integer")) },
    },
    values: { s: ["", "x", ""], e: [] },
  },
];

describe("files written by TS pass the C++ checks", needsCli, () => {
  for (const c of TS_CASES) {
    it(c.name, async () => {
      const dir = tmp();
      const w = new MetatensorWriter(c.schema, { alignment: c.alignment ?? 64, metadata: { origin: "js test", "ü": "✓" } });
      for (const [k, v] of Object.entries(c.values)) w.set(k, v);
      const path = join(dir, "ts.mt");
      await writeFile(path, w);
      const r = cli("validate", "--deep", path);
      assert.equal(r.status, 0, r.stdout + r.stderr);
      const f = await openMetatensorFile(path);
      await validateDeep(f);
      await sameAsDump(f, path);
      // What TS reads back equals what it was given (up to the dtype's rounding).
      const back = asDumped(await f.value()) as Record<string, unknown>;
      const d = dumpJson(path);
      for (const name of f.names) assert.ok(name in d["tensors"]);
      assert.deepEqual(Object.keys(back).sort(), Object.keys(c.values).sort());
      assert.deepEqual([...f.userMetadata], [["origin", "js test"], ["ü", "✓"]]);
      await f.close();
      // The same bytes written by serialize() and by writeFile().
      assert.deepEqual(Buffer.from(w.serialize()), readFileSync(path));
    });
  }

  it("a TS-written file of every kind: C++ dump values equal TS values exactly", async () => {
    const c = TS_CASES[2]!;
    const w = new MetatensorWriter(c.schema, { alignment: 16 });
    for (const [k, v] of Object.entries(c.values)) w.set(k, v);
    const bytes = w.serialize();
    const dir = tmp();
    writeFileSync(join(dir, "x.mt"), bytes);
    const d = dumpJson(join(dir, "x.mt"));
    assert.deepEqual(d["tensors"]["rows"]["values"], [[1, 2, 3], [], [4.5]]);
    assert.deepEqual(d["tensors"]["tracks"]["values"][1]["origin"], { x: -1, tag: "ümlaut ✓" });
    assert.deepEqual(d["tensors"]["tracks"]["values"][0]["pair"], [7, 0.25]);
    const f = await openMetatensor(bytes);
    const tracks = await f.records("tracks");
    const hits = tracks.at(0).get("hits") as { get(p: string): unknown }[];
    assert.equal(hits[1]!.get("q"), 2);
    const rows = await f.blobs("rows");
    const r0 = rows.at(0) as Float64Array;
    assert.ok(r0 instanceof Float64Array);
    assert.deepEqual([...r0], [1, 2, 3]);
    assert.equal(r0.buffer, bytes.buffer); // a view into the file image
    const big = f.tensors.find((t) => t.name === "big")!;
    assert.equal((f.header.dataOffset + big.begin) % 256, 0);
  });
});

describe("plain safetensors files", () => {
  it("open() gives raw typed tensors for a file without metatensor metadata", async () => {
    const { serializeSafetensors, open } = await import("@tensogram/metatensor");
    const bytes = serializeSafetensors([
      { name: "w", dtype: "F32", shape: [2], data: bytesOf(new Float32Array([1, 2])) },
      { name: "n", dtype: "I64", shape: [1], data: bytesOf(new BigInt64Array([5n])) },
    ], { note: "plain" });
    const f = await open(bytes);
    assert.equal(f.isMetatensor, false);
    assert.deepEqual([...(await f.tensor("w")).data], [1, 2]);
    assert.deepEqual([...(await f.tensor("n")).data], [5n]);
    assert.equal(f.metadata.get("note"), "plain");
    const byPath = join(tmp(), "p.safetensors");
    writeFileSync(byPath, bytes);
    const g = await openFile(byPath);
    assert.equal(g.isMetatensor, false);
    await g.close();
  });
});
