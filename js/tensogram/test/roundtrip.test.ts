// Encode → decode round trips in the WebAssembly build: every dtype through
// the lossless pipelines, float64 through the lossy ones (within their
// bounds), decodeObject / decodeRange / decodeMetadata / scan on the result,
// szip objects written by the native CLI decoding (our own decoder without
// libaec), and szip objects written here (our own encoder without libaec)
// decoding back to their values.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  DTYPE_BYTE_WIDTH, EncodingError, decode, decodeMetadata, decodeObject, decodeRange, doctor, encode, scan,
  computeHash, validate, Float16Polyfill, ComplexArray, numberToFloat16Bits,
  float16BitsToNumber, numberToBfloat16Bits, bfloat16BitsToNumber, simplePackingComputeParams,
  type Dtype, type EncodeDescriptor,
} from "@tensogram/tensogram";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ALL_DTYPES, HAVE_CLI, bytes, cli, npyBytes, npyData, rawBytes, rng, sampleBytes, tmp } from "./helpers.js";

const SHAPE = [6, 50];
const N = SHAPE[0]! * SHAPE[1]!;

type Pipeline = { name: string; params: (d: Dtype) => Partial<EncodeDescriptor> };
const width = (d: Dtype) => Math.max(DTYPE_BYTE_WIDTH[d], 1);
const LOSSLESS: Pipeline[] = [
  { name: "none", params: () => ({}) },
  { name: "zstd", params: () => ({ compression: "zstd", zstd_level: 3 }) },
  { name: "lz4", params: () => ({ compression: "lz4" }) },
  { name: "shuffle+zstd", params: (d) => ({ filter: "shuffle", shuffle_element_size: width(d), compression: "zstd", zstd_level: 1 }) },
  { name: "blosc2", params: () => ({ compression: "blosc2", blosc2_codec: "lz4", blosc2_clevel: 5 }) },
  { name: "blosc2-zstd", params: () => ({ compression: "blosc2", blosc2_codec: "zstd", blosc2_clevel: 3 }) },
  { name: "blosc2-zlib", params: () => ({ compression: "blosc2", blosc2_codec: "zlib", blosc2_clevel: 3 }) },
];

function descriptor(dtype: Dtype, extra: Partial<EncodeDescriptor>): EncodeDescriptor {
  return { shape: SHAPE, dtype, ...extra };
}

describe("lossless round trips, every dtype", () => {
  for (const dtype of ALL_DTYPES) {
    for (const p of LOSSLESS) {
      if (dtype === "bitmask" && p.name.startsWith("shuffle")) continue;
      if (dtype === "bitmask" && p.name.startsWith("blosc2")) {
        // A bitmask has blosc2 typesize 0, which c-blosc2 refuses
        // (InvalidParam): the reference fails the same way (spec 03 §3.2).
        it(`${dtype} / ${p.name} is refused (typesize 0)`, () => {
          const data = sampleBytes(dtype, N);
          assert.throws(() => encode({}, [{ descriptor: descriptor(dtype, p.params(dtype)), data }]),
            (e: unknown) => e instanceof EncodingError && /typesize 0/.test(e.message));
        });
        continue;
      }
      it(`${dtype} / ${p.name}`, () => {
        const data = sampleBytes(dtype, N);
        const msg = encode({ base: [{ name: `${dtype}-${p.name}` }] }, [{ descriptor: descriptor(dtype, p.params(dtype)), data }]);
        const d = decode(msg, { verifyHash: true });
        try {
          assert.equal(d.objects.length, 1);
          const o = d.objects[0]!;
          assert.equal(o.descriptor.dtype, dtype);
          assert.deepEqual(o.descriptor.shape, SHAPE);
          assert.equal(o.descriptor.compression, p.name.includes("zstd") && !p.name.startsWith("blosc2") ? "zstd" : p.name.startsWith("blosc2") ? "blosc2" : p.name === "lz4" ? "lz4" : "none");
          assert.equal(o.byteLength, data.byteLength);
          const view = o.data();
          assert.deepEqual(rawBytes(view), data);
          assert.deepEqual(rawBytes(o.dataView()), data);
          assert.equal(d.metadata.version, 3);
          assert.deepEqual(d.metadata.base?.[0]?.["name"], `${dtype}-${p.name}`);
        } finally {
          d.close();
        }
      });
    }
  }
});


describe("typed views", () => {
  it("map each dtype to the reference's array type", () => {
    const expect: Record<Dtype, string> = {
      float32: "Float32Array", float64: "Float64Array", int8: "Int8Array", int16: "Int16Array", int32: "Int32Array",
      int64: "BigInt64Array", uint8: "Uint8Array", uint16: "Uint16Array", uint32: "Uint32Array",
      uint64: "BigUint64Array", bitmask: "Uint8Array", float16: "Float16Polyfill", bfloat16: "Bfloat16Array",
      complex64: "ComplexArray", complex128: "ComplexArray",
    };
    for (const dtype of ALL_DTYPES) {
      const msg = encode({}, [{ descriptor: descriptor(dtype, {}), data: sampleBytes(dtype, N) }]);
      const d = decode(msg);
      assert.equal(d.objects[0]!.data().constructor.name, expect[dtype], dtype);
      d.close();
    }
  });
  it("float16 and bfloat16 converters round to nearest even and keep specials", () => {
    for (const x of [0, -0, 1, -2.5, 65504, 6.103515625e-5, 5.960464477539063e-8, Infinity, -Infinity]) {
      assert.equal(float16BitsToNumber(numberToFloat16Bits(x)), x);
    }
    assert.ok(Number.isNaN(float16BitsToNumber(numberToFloat16Bits(NaN))));
    assert.equal(float16BitsToNumber(numberToFloat16Bits(1 + 2 ** -11)), 1); // tie → even
    assert.equal(float16BitsToNumber(numberToFloat16Bits(1e6)), Infinity);
    // 1.5·2^126 ≈ 1.28e38: a large value bfloat16's 8-bit significand holds exactly.
    for (const x of [0, 1, -3.5, 1.5 * 2 ** 126, Infinity]) assert.equal(bfloat16BitsToNumber(numberToBfloat16Bits(x)), x);
    assert.equal(numberToBfloat16Bits(1 + 2 ** -8), 0x3f80); // tie → even
    const f = Float16Polyfill.from([1, 2.5, -4]);
    assert.deepEqual(f.toArray(), [1, 2.5, -4]);
  });
  it("complex values are interleaved (re, im)", () => {
    const data = Float64Array.from([1, 2, 3, 4]);
    const msg = encode({}, [{ descriptor: { shape: [2], dtype: "complex128" }, data }]);
    const d = decode(msg);
    const c = d.objects[0]!.data() as ComplexArray;
    assert.equal(c.length, 2);
    assert.deepEqual(c.get(1), { re: 3, im: 4 });
    assert.deepEqual(c.toArray(), [[1, 2], [3, 4]]);
    d.close();
  });
  it("64-bit integers are BigInt, metadata integers beyond 2^53 too", () => {
    const big = (1n << 62n) + 3n;
    const msg = encode({ base: [{ count: big, small: 7 }] }, [{ descriptor: { shape: [2], dtype: "int64" }, data: BigInt64Array.from([big, -big]) }]);
    const d = decode(msg);
    assert.deepEqual(Array.from(d.objects[0]!.data() as BigInt64Array), [big, -big]);
    assert.equal(d.metadata.base?.[0]?.["count"], big);
    assert.equal(d.metadata.base?.[0]?.["small"], 7);
    d.close();
  });
});

describe("lossy pipelines (float64)", () => {
  const values = Float64Array.from({ length: N }, (_, i) => 280 + 20 * Math.sin(i / 9));
  const maxErr = (a: Float64Array, b: Float64Array) => a.reduce((m, x, i) => Math.max(m, Math.abs(x - b[i]!)), 0);
  it("simple_packing (+ zstd)", () => {
    const sp = simplePackingComputeParams(values, 16);
    assert.equal(sp.sp_bits_per_value, 16);
    const msg = encode({}, [{ descriptor: { shape: SHAPE, dtype: "float64", encoding: "simple_packing", ...sp, compression: "zstd", zstd_level: 3 }, data: values }]);
    const d = decode(msg);
    const out = d.objects[0]!.data() as Float64Array;
    assert.ok(maxErr(values, out) < 40 / 2 ** 15, `error ${maxErr(values, out)}`);
    d.close();
  });
  it("zfp fixed_accuracy", () => {
    const msg = encode({}, [{ descriptor: { shape: SHAPE, dtype: "float64", compression: "zfp", zfp_mode: "fixed_accuracy", zfp_tolerance: 1e-3 }, data: values }]);
    const d = decode(msg);
    assert.ok(maxErr(values, d.objects[0]!.data() as Float64Array) <= 1e-3);
    d.close();
  });
  it("sz3 abs", () => {
    const msg = encode({}, [{ descriptor: { shape: SHAPE, dtype: "float64", compression: "sz3", sz3_error_bound_mode: "abs", sz3_error_bound: 1e-2 }, data: values }]);
    // The sz3 payload is under half the raw values: compared with the same
    // message uncompressed, as the ≈ 560 bytes of framing, metadata and hash
    // of this small message are not the codec's (the native build writes the
    // same 1344 bytes).
    const raw = encode({}, [{ descriptor: { shape: SHAPE, dtype: "float64" }, data: values }]);
    assert.ok(raw.byteLength - msg.byteLength > values.byteLength / 2, `${msg.byteLength} vs ${raw.byteLength}`);
    const d = decode(msg);
    assert.ok(maxErr(values, d.objects[0]!.data() as Float64Array) <= 1e-2);
    d.close();
  });
});

describe("codecs built into this build", () => {
  const built = (name: string) => {
    const features = doctor()["features"] as { name: string; state: string }[];
    return features.find((f) => f.name === name)?.state === "on";
  };
  it("doctor lists every codec as built in, szip included (libaec or our own coder)", () => {
    for (const c of ["szip", "zstd", "lz4", "blosc2", "zfp", "sz3"]) assert.ok(built(c), `${c} should be built in`);
  });
});

// szip objects encoded in this build (our own CCSDS 121.0-B encoder when
// libaec is absent) decode back to their values: lossless for integers under
// several block sizes, RSIs and flags (sample counts ending mid-block and
// mid-RSI), within the packing's bound for simple_packing, whole, by object
// and by range (from the RSI offsets the encoder recorded).
describe("szip encoding", () => {
  const next = rng(23);
  const cases: { name: string; dtype: Dtype; data: Uint8Array; params: Record<string, unknown> }[] = [
    { name: "uint16 defaults", dtype: "uint16", data: sampleBytes("uint16", 3001, 2), params: { szip_rsi: 128, szip_block_size: 16, szip_flags: 8 } },
    { name: "int32 signed, preprocessed, rsi 3 block 8", dtype: "int32", data: sampleBytes("int32", 1001, 3), params: { szip_rsi: 3, szip_block_size: 8, szip_flags: 9 } },
    {
      name: "int32 zero stretches, block 64 rsi 4096", dtype: "int32",
      data: bytes(Int32Array.from({ length: 9000 }, (_, i) => (i % 3000 < 2000 ? 0 : Math.floor((next() - 0.5) * 2 ** 31)))),
      params: { szip_rsi: 4096, szip_block_size: 64, szip_flags: 8 },
    },
    { name: "uint8 no preprocessing, block 32 rsi 7", dtype: "uint8", data: sampleBytes("uint8", 777, 4), params: { szip_rsi: 7, szip_block_size: 32, szip_flags: 0 } },
  ];
  for (const c of cases) {
    it(`${c.name} round-trips`, () => {
      const msg = encode({}, [{ descriptor: { shape: [c.data.byteLength / DTYPE_BYTE_WIDTH[c.dtype]], dtype: c.dtype, compression: "szip", ...c.params }, data: c.data }]);
      const d = decode(msg, { verifyHash: true });
      const o = d.objects[0]!;
      assert.equal(o.descriptor.compression, "szip");
      assert.ok((o.descriptor["szip_block_offsets"] as unknown[]).length >= 1);
      assert.deepEqual(rawBytes(o.data()), c.data);
      d.close();
      const w = DTYPE_BYTE_WIDTH[c.dtype];
      const count = c.data.byteLength / w;
      const r = decodeRange(msg, 0, [[count - 300, 300]], { join: true });
      assert.deepEqual(rawBytes(r.parts[0]!), c.data.subarray((count - 300) * w));
    });
  }
  it("simple_packing 24 + szip round-trips within the packing's bound", () => {
    const values = Float64Array.from({ length: 5003 }, (_, i) => 280 + 20 * Math.sin(i / 9) + next());
    const sp = simplePackingComputeParams(values, 24);
    const msg = encode({}, [{ descriptor: { shape: [values.length], dtype: "float64", encoding: "simple_packing", ...sp, compression: "szip", szip_rsi: 32, szip_block_size: 16, szip_flags: 8 }, data: values }]);
    const d = decode(msg);
    const out = d.objects[0]!.data() as Float64Array;
    const err = values.reduce((m, x, i) => Math.max(m, Math.abs(x - out[i]!)), 0);
    assert.ok(err < 42 / 2 ** 23, `error ${err}`);
    d.close();
  });
});

// szip objects written by the native CLI (libaec) decode in this build (our
// own decoder when libaec is absent) to the bytes `tensogram to-npy` writes:
// simple_packing + szip (the weather pipeline) and raw integers under
// several szip options, whole, by object and by range.
describe("szip decoding", { skip: !HAVE_CLI && "no C++ CLI (TENSOGRAM_CLI)" }, () => {
  const dir = tmp("tgm-js-szip-");
  const n = 5000;
  const next = rng(7);
  const field = new Float64Array(n);
  let v = 280;
  for (let i = 0; i < n; i++) field[i] = v += (next() - 0.5) * 2;
  const ints = Int32Array.from({ length: n }, (_, i) => (i % 900 < 400 ? 0 : Math.floor((next() - 0.5) * 2 ** 31)));
  writeFileSync(join(dir, "field.npy"), npyBytes("<f8", [n], bytes(field)));
  writeFileSync(join(dir, "ints.npy"), npyBytes("<i4", [n], bytes(ints)));
  const cases: { name: string; npy: string; args: string[] }[] = [
    { name: "simple_packing 16 + szip", npy: "field.npy", args: ["--encoding", "simple_packing", "--bits", "16", "--compression", "szip"] },
    { name: "simple_packing 24 + szip rsi 7 block 32", npy: "field.npy", args: ["--encoding", "simple_packing", "--bits", "24", "--compression", "szip", "--szip-rsi", "7", "--szip-block-size", "32"] },
    { name: "int32 szip", npy: "ints.npy", args: ["--compression", "szip", "--szip-block-size", "8", "--szip-rsi", "64"] },
    { name: "int32 szip signed, no preprocessing", npy: "ints.npy", args: ["--compression", "szip", "--szip-flags", "1"] },
  ];
  cases.forEach((c, k) => {
    it(`${c.name} decodes as the native CLI decodes it`, () => {
      const file = join(dir, `${k}.tgm`);
      cli("convert-npy", ...c.args, "-o", file, join(dir, c.npy));
      const out = join(dir, `out${k}`);
      cli("to-npy", file, "-o", out);
      const expected = npyData(join(out, readdirSync(out).filter((f) => f.endsWith(".npy"))[0]!));
      const buf = new Uint8Array(readFileSync(file));
      const d = decode(buf);
      try {
        assert.equal(d.objects[0]!.descriptor.compression, "szip");
        assert.deepEqual(rawBytes(d.objects[0]!.data()), new Uint8Array(expected));
      } finally {
        d.close();
      }
      const one = decodeObject(buf, 0);
      assert.deepEqual(rawBytes(one.objects[0]!.data()), new Uint8Array(expected));
      one.close();
      const width = expected.byteLength / n;
      const r = decodeRange(buf, 0, [[1234, 777], [n - 3, 3]], { join: true });
      const want = new Uint8Array([...expected.subarray(1234 * width, (1234 + 777) * width), ...expected.subarray((n - 3) * width)]);
      assert.deepEqual(rawBytes(r.parts[0]!), want);
    });
  });
});

describe("partial decoding", () => {
  const a = Float32Array.from({ length: 100 }, (_, i) => i * 0.5);
  const b = Int16Array.from({ length: 10 }, (_, i) => -i);
  const msg = encode({ base: [{ name: "a" }, { name: "b" }], experiment: "x" }, [
    { descriptor: { shape: [10, 10], dtype: "float32" }, data: a },
    { descriptor: { shape: [10], dtype: "int16", compression: "lz4" }, data: b },
  ]);
  it("decodeObject returns one object with the message metadata", () => {
    const d = decodeObject(msg, 1);
    assert.equal(d.objects.length, 1);
    assert.deepEqual(Array.from(d.objects[0]!.data() as Int16Array), Array.from(b));
    assert.equal(d.metadata.base?.[1]?.["name"], "b");
    d.close();
  });
  it("decodeRange returns the ranges, separately or joined", () => {
    const r = decodeRange(msg, 0, [[2, 3], [50n, 2]]);
    assert.equal(r.descriptor.dtype, "float32");
    assert.deepEqual(r.parts.map((p) => Array.from(p as Float32Array)), [[1, 1.5, 2], [25, 25.5]]);
    const j = decodeRange(msg, 0, [[2, 3], [50, 2]], { join: true });
    assert.deepEqual(j.parts.map((p) => Array.from(p as Float32Array)), [[1, 1.5, 2, 25, 25.5]]);
  });
  it("decodeMetadata adds version 3 and keeps _extra_", () => {
    const m = decodeMetadata(msg);
    assert.equal(m.version, 3);
    assert.deepEqual(m._extra_, { experiment: "x" });
    assert.equal(m.base?.length, 2);
  });
  it("scan finds each message and skips garbage", () => {
    const junk = new Uint8Array(17).fill(0xab);
    const all = new Uint8Array([...junk, ...msg, ...junk, ...msg]);
    assert.deepEqual(scan(all), [
      { offset: 17, length: msg.byteLength },
      { offset: 34 + msg.byteLength, length: msg.byteLength },
    ]);
  });
  it("validate reports a clean message and computeHash is xxh3-64", () => {
    const report = validate(msg, { mode: "full" });
    assert.deepEqual(report["issues"], []);
    assert.match(computeHash(new Uint8Array([1, 2, 3])), /^[0-9a-f]{16}$/);
    assert.equal(computeHash(new Uint8Array(0)), "2d06800538d394c2"); // XXH3_64("") (xxHash's test vector)
  });
});
