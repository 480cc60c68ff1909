// Cross-language tests with the C++ CLI (METATENSOR_CLI): files written by
// C++ (`metatensor from-npy`, and `metatensor from-json` for every kind
// including ragged lists) read identically by TS and rewritten byte for
// byte; files written by TS pass `metatensor validate --deep` and `metatensor
// dump` reads the values TS wrote.
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { MetatensorFile, MetatensorWriter, openMetatensor, validateDeep } from "@tensogram/metatensor";
import { openFile, openMetatensorFile, writeFile } from "@tensogram/metatensor/node";
import { asDumped, bytesOf, cli, dumpJson, needsCli, tmp, writeNpy } from "./helpers.js";
import { TS_CASES } from "./cases.js";

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

/** JSON text of a logical value: bigints as exact integer literals (JSON.stringify refuses them). */
function logicalJson(v: unknown): string {
  const marks: string[] = [];
  const text = JSON.stringify(v, (_k, x: unknown) => {
    if (typeof x === "bigint") {
      marks.push(x.toString());
      return `\u0000big${marks.length - 1}`;
    }
    if (typeof x === "number" && !Number.isFinite(x)) throw new Error("non-finite values cannot be written as JSON");
    return x;
  });
  return text.replace(/"\\u0000big(\d+)"/g, (_m, i: string) => marks[Number(i)]!);
}

/** `v` with every non-finite number replaced by 0 (JSON cannot carry them to `from-json`). */
function finiteOnly(v: unknown): unknown {
  if (typeof v === "number") return Number.isFinite(v) ? v : 0;
  if (Array.isArray(v)) return v.map(finiteOnly);
  if (v && typeof v === "object") return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, finiteOnly(x)]));
  return v;
}

describe("files of every kind written by C++ (`metatensor from-json`) are read identically by TS", needsCli, () => {
  for (const c of TS_CASES) {
    it(c.name, async () => {
      const dir = tmp();
      const values = finiteOnly(c.values) as Record<string, unknown>;
      writeFileSync(join(dir, "schema.json"), JSON.stringify(c.schema));
      writeFileSync(join(dir, "values.json"), logicalJson(values));
      const out = join(dir, "cpp.mt");
      const r = cli("from-json", join(dir, "schema.json"), join(dir, "values.json"), "-o", out,
        "--alignment", String(c.alignment ?? 64), "--metadata", "origin=C++", "--no-sync");
      assert.equal(r.status, 0, r.stdout + r.stderr);
      const bytes = new Uint8Array(readFileSync(out));
      // TS reads what C++ wrote: every tensor's logical value, the user metadata, a deep validation.
      const f = await openMetatensor(bytes);
      await validateDeep(f);
      assert.deepEqual([...f.userMetadata], [["origin", "C++"]]);
      // The TS writer, given the same schema and values, writes the same bytes,
      // and TS reads the same logical value from both files (values rounded to
      // the dtype, e.g. BF16, the same way by both writers).
      const w = new MetatensorWriter(c.schema, { alignment: c.alignment ?? 64, metadata: { origin: "C++" } });
      for (const [k, v] of Object.entries(values)) w.set(k, v);
      const tsBytes = w.serialize();
      assert.deepEqual(Buffer.from(tsBytes), Buffer.from(bytes));
      const cppValue = asDumped(await f.value()) as Record<string, unknown>;
      assert.deepEqual(cppValue, asDumped(await (await openMetatensor(tsBytes)).value()));
      assert.deepEqual(Object.keys(cppValue).sort(), Object.keys(values).sort());
      // Every tensor through its typed accessor too, not only the logical value.
      for (const t of f.names) {
        const v = await f.get(t);
        assert.ok(["flat", "struct", "blob"].includes(v.kind), `${t}: ${v.kind}`);
      }
    });
  }

  it("ragged lists of a C++-written file are typed views into the file image", async () => {
    const c = TS_CASES[2]!;
    const dir = tmp();
    writeFileSync(join(dir, "schema.json"), JSON.stringify(c.schema));
    writeFileSync(join(dir, "values.json"), logicalJson(c.values));
    const out = join(dir, "cpp.mt");
    const r = cli("from-json", join(dir, "schema.json"), join(dir, "values.json"), "-o", out, "--alignment", "16");
    assert.equal(r.status, 0, r.stdout + r.stderr);
    const bytes = new Uint8Array(readFileSync(out));
    const f = await openMetatensor(bytes);
    const rows = await f.blobs("rows");
    const r0 = rows.at(0) as Float64Array;
    assert.ok(r0 instanceof Float64Array);
    assert.deepEqual([...r0], [1, 2, 3]);
    assert.equal(r0.buffer, bytes.buffer);
    assert.equal((rows.at(1) as Float64Array).length, 0);
    const grid = await f.blobs("grid");
    assert.deepEqual([...(grid.at([1, 1]) as Int16Array)], [-4, 5, 6]);
    const tracks = await f.records("tracks");
    const hits = tracks.at(0).get("hits") as { get(p: string): unknown }[];
    assert.equal(hits.length, 2);
    assert.equal(hits[0]!.get("t"), 0.5);
    assert.equal(tracks.at(1).get("origin.tag"), "ümlaut ✓");
  });
});

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
