// Metadata helpers over decoded metadata (getMetaKey & co., computeCommon,
// cborValuesEqual) and the dtype utilities, on metadata that went through the
// C++ encoder and decoder.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  DTYPE_BYTE_WIDTH, SUPPORTED_DTYPES, cborValuesEqual, computeCommon, decode, encode, getMetaBool, getMetaBoolAt,
  getMetaFloat, getMetaFloatAt, getMetaInt, getMetaIntAt, getMetaKey, getMetaKeyAt, getMetaString, getMetaStringAt,
  hasMetaKey, hasMetaKeyAt, isDtype, payloadByteSize, shapeElementCount, typedArrayFor, InvalidArgumentError,
  ComplexArray, Bfloat16Array, type GlobalMetadata,
} from "@tensogram/tensogram";
import "./helpers.js";

function roundTrip(meta: GlobalMetadata): GlobalMetadata {
  const n = meta.base?.length ?? 0;
  const objects = Array.from({ length: n }, () => ({ descriptor: { shape: [1], dtype: "uint8" as const }, data: new Uint8Array(1) }));
  const msg = decode(encode(meta, objects));
  const out = msg.metadata;
  msg.close();
  return out;
}

const META = roundTrip({
  base: [
    { mars: { param: "2t", levelist: 850, step: 6 }, units: "K", scale: 0.5, ok: true, big: 2n ** 60n, nul: null },
    { mars: { param: "msl", levelist: 850, step: 6 }, units: "Pa", scale: 850.0, ok: false, only1: "x" },
  ],
  _extra_: { units: "extra-units", centre: "ecmwf", nested: { k: [1, 2, { z: "deep" }] } },
  experiment: "exp01",
});

describe("getMetaKey and friends", () => {
  it("first match across base[i], then _extra_", () => {
    assert.equal(getMetaKey(META, "mars.param"), "2t");
    assert.equal(getMetaKey(META, "units"), "K");
    assert.equal(getMetaKey(META, "only1"), "x");
    assert.equal(getMetaKey(META, "centre"), "ecmwf");
    assert.equal(getMetaKey(META, "experiment"), "exp01"); // a top-level key lands in _extra_
    assert.deepEqual(getMetaKey(META, "nested.k"), [1, 2, { z: "deep" }]);
    assert.equal(getMetaKey(META, "mars.nope"), undefined);
    assert.equal(getMetaKey(META, "mars.param.deeper"), undefined);
    assert.equal(hasMetaKey(META, "mars.step"), true);
    assert.equal(hasMetaKey(META, "absent"), false);
  });
  it("null is a stored value, undefined is absence", () => {
    assert.equal(getMetaKey(META, "nul"), null);
    assert.equal(hasMetaKey(META, "nul"), true);
  });
  it("_extra_. and extra. prefixes target _extra_; _reserved_ and reserved are hidden", () => {
    assert.equal(getMetaKey(META, "_extra_.units"), "extra-units");
    assert.equal(getMetaKey(META, "extra.units"), "extra-units");
    assert.equal(getMetaKey(META, "_extra_.only1"), undefined);
    assert.ok(META.base?.[0]?.["_reserved_"] !== undefined, "decode gives each base entry its _reserved_");
    assert.equal(getMetaKey(META, "_reserved_"), undefined);
    assert.equal(getMetaKey(META, "_reserved_.tensor"), undefined);
    assert.equal(getMetaKey(META, "reserved.tensor"), undefined);
    assert.equal(hasMetaKeyAt(META, 0, "_reserved_"), false);
  });
  it("per-object variants", () => {
    assert.equal(getMetaKeyAt(META, 1, "mars.param"), "msl");
    assert.equal(getMetaKeyAt(META, 0, "only1"), undefined);
    assert.equal(getMetaKeyAt(META, 1, "centre"), undefined); // no fall-back to _extra_
    assert.equal(getMetaKeyAt(META, 5, "units"), undefined);
    assert.equal(hasMetaKeyAt(META, 1, "only1"), true);
    assert.equal(getMetaStringAt(META, 1, "units"), "Pa");
    assert.equal(getMetaIntAt(META, 1, "mars.levelist"), 850);
    assert.equal(getMetaFloatAt(META, 0, "scale"), 0.5);
    assert.equal(getMetaBoolAt(META, 1, "ok"), false);
    assert.throws(() => getMetaKeyAt(META, -1, "units"), InvalidArgumentError);
  });
  it("typed getters take the exact JavaScript type only", () => {
    assert.equal(getMetaString(META, "units"), "K");
    assert.equal(getMetaString(META, "mars.step"), undefined);
    assert.equal(getMetaInt(META, "mars.step"), 6);
    assert.equal(getMetaInt(META, "big"), 2n ** 60n);
    assert.equal(getMetaInt(META, "scale"), undefined); // 0.5
    assert.equal(getMetaIntAt(META, 1, "scale"), 850); // a float 850.0 cannot be told apart
    assert.equal(getMetaFloat(META, "big"), 2 ** 60);
    assert.equal(getMetaFloat(META, "units"), undefined);
    assert.equal(getMetaBool(META, "ok"), true);
    assert.equal(getMetaBool(META, "units"), undefined);
    assert.throws(() => getMetaKey(null as unknown as GlobalMetadata, "a"), InvalidArgumentError);
    assert.throws(() => getMetaKey(META, 3 as unknown as string), InvalidArgumentError);
  });
});

describe("computeCommon and cborValuesEqual", () => {
  it("keys equal in every base entry", () => {
    assert.deepEqual(computeCommon(META), {});
    const m = roundTrip({
      base: [
        { mars: { class: "od", step: 6 }, levelist: 850, nan: 1, only: 1 },
        { mars: { class: "od", step: 6 }, levelist: 850, nan: 1 },
        { mars: { class: "od", step: 12 }, levelist: 850, nan: 1 },
      ],
    });
    assert.deepEqual(computeCommon(m), { levelist: 850, nan: 1 });
    assert.deepEqual(computeCommon({ base: [] }), {});
    assert.deepEqual(computeCommon({}), {});
  });
  it("deep equality", () => {
    assert.ok(cborValuesEqual(NaN, NaN));
    assert.ok(cborValuesEqual({ a: [1, { b: "x" }] }, { a: [1, { b: "x" }] }));
    assert.ok(!cborValuesEqual({ a: [1, { b: "x" }] }, { a: [1, { b: "y" }] }));
    assert.ok(!cborValuesEqual({ a: 1 }, { a: 1, b: 2 }));
    assert.ok(!cborValuesEqual([1, 2], [2, 1]));
    assert.ok(cborValuesEqual(5n, 5));
    assert.ok(!cborValuesEqual(5.5, 5));
    assert.ok(!cborValuesEqual("1", 1));
    assert.ok(!cborValuesEqual(null, { }));
    assert.ok(cborValuesEqual(new Uint8Array([1, 2]), new Uint8Array([1, 2])));
    assert.ok(!cborValuesEqual(new Uint8Array([1, 2]), [1, 2]));
  });
});

describe("dtype utilities", () => {
  it("widths, sizes, counts, the set", () => {
    assert.equal(SUPPORTED_DTYPES.size, 15);
    for (const d of SUPPORTED_DTYPES) assert.ok(isDtype(d));
    assert.ok(!isDtype("float128") && !isDtype(4));
    assert.equal(DTYPE_BYTE_WIDTH.complex128, 16);
    assert.equal(DTYPE_BYTE_WIDTH.bitmask, 0);
    assert.equal(payloadByteSize("bitmask", 17), 3);
    assert.equal(payloadByteSize("float64", 5), 40);
    assert.equal(shapeElementCount([]), 1);
    assert.equal(shapeElementCount([3, 4, 5]), 60);
    assert.ok(Object.isFrozen(DTYPE_BYTE_WIDTH));
  });
  it("typedArrayFor copies or views", () => {
    const bytes = new Uint8Array(new Float64Array([1, -2, 3, 4]).buffer);
    const c = typedArrayFor("complex128", bytes) as ComplexArray;
    assert.ok(c instanceof ComplexArray);
    assert.deepEqual(c.toArray(), [[1, -2], [3, 4]]);
    const view = typedArrayFor("float64", bytes, false) as Float64Array;
    const copy = typedArrayFor("float64", bytes, true) as Float64Array;
    bytes.fill(0);
    assert.equal(view[0], 0);
    assert.equal(copy[0], 1);
    assert.ok(typedArrayFor("bfloat16", new Uint8Array(4)) instanceof Bfloat16Array);
  });
});
