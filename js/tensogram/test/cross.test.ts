// Cross-language tests with the C++ CLI (TENSOGRAM_CLI): messages encoded in
// Node decode in C++ (`tensogram to-npy`, `validate --full`) to the same
// values, and messages written by C++ (`tensogram convert-npy`) decode in
// Node; re-encoding the C++ message's objects in Node with the descriptors
// Node decoded gives byte-identical data frames for the deterministic
// pipelines: equal xxh3 hashes of the frame bodies, each verified against
// its frame on decode.
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { decode, encode, scan, type DataObjectDescriptor, type Dtype } from "@tensogram/tensogram";
import { HAVE_CLI, cli, npyBytes, npyData, rawBytes, sampleBytes, tmp } from "./helpers.js";

const NPY_DESCR: Partial<Record<Dtype, string>> = {
  float32: "<f4", float64: "<f8", int8: "|i1", int16: "<i2", int32: "<i4", int64: "<i8", uint8: "|u1",
  uint16: "<u2", uint32: "<u4", uint64: "<u8", complex64: "<c8", complex128: "<c16",
};

const PIPELINES: { name: string; params: Record<string, unknown>; flags: string[] }[] = [
  { name: "none", params: {}, flags: [] },
  { name: "zstd", params: { compression: "zstd", zstd_level: 3 }, flags: ["--compression", "zstd"] },
  { name: "lz4", params: { compression: "lz4" }, flags: ["--compression", "lz4"] },
  { name: "blosc2", params: { compression: "blosc2", blosc2_codec: "lz4", blosc2_clevel: 5 }, flags: ["--compression", "blosc2"] },
];

describe("Node → C++", { skip: !HAVE_CLI && "no C++ CLI (TENSOGRAM_CLI)" }, () => {
  for (const p of PIPELINES) {
    for (const dtype of ["float32", "float64", "int16", "uint64", "complex64"] as Dtype[]) {
      it(`${dtype} / ${p.name}`, () => {
        const data = sampleBytes(dtype, 240, 3);
        const msg = encode({ base: [{ mars: { param: "2t" } }], run: "js" }, [
          { descriptor: { shape: [12, 20], dtype, ...p.params }, data },
        ]);
        const dir = tmp();
        const file = join(dir, "node.tgm");
        writeFileSync(file, msg);
        const report = JSON.parse(cli("validate", "--full", "--json", file)) as unknown;
        assert.doesNotMatch(JSON.stringify(report), /"severity":\s*"error"/, JSON.stringify(report));
        cli("to-npy", file, "-o", join(dir, "npy"));
        assert.deepEqual(new Uint8Array(npyData(join(dir, "npy", "0_0.npy"))), data);
        const dumped = JSON.parse(cli("dump", "-j", file)) as { base: { mars: { param: string } }[] };
        assert.equal(dumped.base[0]!.mars.param, "2t");
      });
    }
  }
});

describe("C++ → Node", { skip: !HAVE_CLI && "no C++ CLI (TENSOGRAM_CLI)" }, () => {
  for (const p of PIPELINES) {
    for (const dtype of ["float32", "float64", "int32", "uint8", "complex128"] as Dtype[]) {
      it(`${dtype} / ${p.name}`, () => {
        const data = sampleBytes(dtype, 300, 5);
        const dir = tmp();
        const npy = join(dir, "in.npy");
        writeFileSync(npy, npyBytes(NPY_DESCR[dtype]!, [15, 20], data));
        const file = join(dir, "cpp.tgm");
        cli("convert-npy", npy, "-o", file, "--meta", "mars.param=msl", ...p.flags);
        const buf = new Uint8Array(readFileSync(file));
        assert.equal(scan(buf).length, 1);
        const d = decode(buf, { verifyHash: true });
        const o = d.objects[0]!;
        assert.equal(o.descriptor.dtype, dtype);
        assert.deepEqual(o.descriptor.shape, [15, 20]);
        assert.deepEqual(rawBytes(o.data()), data);
        assert.deepEqual((d.metadata.base?.[0]?.["mars"] as Record<string, unknown>)["param"], "msl");
        // Same descriptor, same bytes → the same data frame (its xxh3 hash).
        const again = encode({ base: [{ mars: { param: "msl" } }] }, [{ descriptor: o.descriptor as DataObjectDescriptor, data }]);
        const cppHash = objectHash(buf);
        const nodeHash = objectHash(again);
        assert.equal(nodeHash, cppHash, `${dtype}/${p.name}: data frames differ`);
        d.close();
      });
    }
  }
});

/** The stored xxh3 hash of object 0's data frame. */
function objectHash(msg: Uint8Array): string {
  const d = decode(msg, { verifyHash: true });
  const h = d.objects[0]!.descriptor.hash as { type: string; value: string } | undefined;
  d.close();
  assert.ok(h !== undefined && /^[0-9a-f]{16}$/.test(h.value), "no frame hash");
  return h.value;
}
