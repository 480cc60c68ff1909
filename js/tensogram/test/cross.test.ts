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
import { HAVE_CLI, bytes, cli, npyBytes, npyData, rawBytes, rng, sampleBytes, tmp } from "./helpers.js";

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

// szip: the bytes this build writes (our own CCSDS 121.0-B encoder when the
// module has no libaec) are the bytes the native library writes with libaec.
// Each object is written by the C++ CLI, then encoded again in Node from the
// same values with the descriptor's parameters (its szip_block_offsets left
// to the encoder): the RSI offsets must be the CLI's and the data frames
// must hash alike (payload, descriptor and offsets); the CLI decodes Node's
// message to the values Node decodes. Sample counts end mid-block and
// mid-RSI; widths 8..32 bits, with and without preprocessing and sign.
describe("szip: Node writes the bytes C++ writes", { skip: !HAVE_CLI && "no C++ CLI (TENSOGRAM_CLI)" }, () => {
  const dir = tmp("tgm-js-szipenc-");
  const n = 5003;
  const next = rng(31);
  const field = new Float64Array(n);
  let v = 280;
  for (let i = 0; i < n; i++) field[i] = v += (next() - 0.5) * 2;
  const ints = Int32Array.from({ length: n }, (_, i) => (i % 1900 < 900 ? 0 : Math.floor((next() - 0.5) * 2 ** 31)));
  const inputs: Record<string, { descr: string; dtype: Dtype; data: Uint8Array }> = {
    field: { descr: "<f8", dtype: "float64", data: bytes(field) },
    ints: { descr: "<i4", dtype: "int32", data: bytes(ints) },
    shorts: { descr: "<i2", dtype: "int16", data: sampleBytes("int16", n, 9) },
    octets: { descr: "|u1", dtype: "uint8", data: sampleBytes("uint8", n, 10) },
    floats: { descr: "<f4", dtype: "float32", data: sampleBytes("float32", n, 11) },
  };
  for (const [name, x] of Object.entries(inputs)) writeFileSync(join(dir, `${name}.npy`), npyBytes(x.descr, [n], x.data));
  const cases: { name: string; input: string; args: string[] }[] = [
    { name: "simple_packing 16 + szip", input: "field", args: ["--encoding", "simple_packing", "--bits", "16", "--compression", "szip"] },
    { name: "simple_packing 24 + szip rsi 7 block 32", input: "field", args: ["--encoding", "simple_packing", "--bits", "24", "--compression", "szip", "--szip-rsi", "7", "--szip-block-size", "32"] },
    { name: "simple_packing 8 + szip rsi 3 block 8", input: "field", args: ["--encoding", "simple_packing", "--bits", "8", "--compression", "szip", "--szip-rsi", "3", "--szip-block-size", "8"] },
    { name: "int32 szip block 8 rsi 64 (zero runs)", input: "ints", args: ["--compression", "szip", "--szip-block-size", "8", "--szip-rsi", "64"] },
    { name: "int32 szip signed, no preprocessing", input: "ints", args: ["--compression", "szip", "--szip-flags", "1"] },
    { name: "int16 szip signed, preprocessed, block 64", input: "shorts", args: ["--compression", "szip", "--szip-flags", "9", "--szip-block-size", "64"] },
    { name: "uint8 szip rsi 4096", input: "octets", args: ["--compression", "szip", "--szip-rsi", "4096"] },
    { name: "float32 szip", input: "floats", args: ["--compression", "szip", "--szip-rsi", "20"] },
  ];
  cases.forEach((c, k) => {
    it(c.name, () => {
      const x = inputs[c.input]!;
      const file = join(dir, `cpp${k}.tgm`);
      cli("convert-npy", ...c.args, "-o", file, join(dir, `${c.input}.npy`));
      const cpp = new Uint8Array(readFileSync(file));
      const d = decode(cpp, { verifyHash: true });
      const descriptor = { ...d.objects[0]!.descriptor } as Record<string, unknown>;
      d.close();
      assert.equal(descriptor["compression"], "szip");
      const cppOffsets = descriptor["szip_block_offsets"];
      delete descriptor["szip_block_offsets"];
      delete descriptor["hash"];
      const node = encode({}, [{ descriptor: descriptor as unknown as DataObjectDescriptor, data: x.data }]);
      const back = decode(node, { verifyHash: true });
      assert.deepEqual(back.objects[0]!.descriptor["szip_block_offsets"], cppOffsets);
      const values = rawBytes(back.objects[0]!.data());
      back.close();
      assert.equal(objectHash(node), objectHash(cpp), `${c.name}: data frames differ`);
      const nodeFile = join(dir, `node${k}.tgm`);
      writeFileSync(nodeFile, node);
      const out = join(dir, `out${k}`);
      cli("to-npy", nodeFile, "-o", out);
      assert.deepEqual(new Uint8Array(npyData(join(out, "0_0.npy"))), values);
    });
  });
});

/** The stored xxh3 hash of object 0's data frame. */
function objectHash(msg: Uint8Array): string {
  const d = decode(msg, { verifyHash: true });
  const h = d.objects[0]!.descriptor.hash as { type: string; value: string } | undefined;
  d.close();
  assert.ok(h !== undefined && /^[0-9a-f]{16}$/.test(h.value), "no frame hash");
  return h.value;
}
