// Hostile and broken input gives the typed errors of spec 07 G.8, never a
// crash of the module: truncated and corrupted messages, non-tgm bytes, huge
// declared shapes, wrong arguments, use after close.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  EncodingError, FramingError, InvalidArgumentError, ObjectError, TensogramError, decode,
  decodeMetadata, decodeObject, decodeRange, encode, init, scan, validate,
} from "@tensogram/tensogram";

await init();

const good = encode({ base: [{ name: "x" }] }, [
  { descriptor: { shape: [4, 8], dtype: "float32", compression: "zstd", zstd_level: 3 }, data: new Float32Array(32).fill(1.5) },
]);

function isTensogramError(e: unknown): boolean {
  return e instanceof TensogramError && typeof e.rawMessage === "string" && e.message.length > 0;
}

describe("bad input", () => {
  it("every truncation fails with a TensogramError", () => {
    for (let n = 0; n < good.byteLength; n += 7) {
      assert.throws(() => decode(good.subarray(0, n)), isTensogramError, `truncated to ${n}`);
    }
  });
  it("garbage and non-tgm bytes", () => {
    const junk = new TextEncoder().encode("PK\x03\x04 this is a zip file, not a tensogram message".repeat(4));
    assert.throws(() => decode(junk), (e: unknown) => e instanceof FramingError && e.name === "FramingError");
    assert.throws(() => decodeMetadata(junk), FramingError);
    assert.deepEqual(scan(junk), []);
    assert.deepEqual(scan(new Uint8Array(0)), []);
  });
  it("flipped bytes never crash the module", () => {
    for (let i = 0; i < good.byteLength; i += 5) {
      const bad = good.slice();
      bad[i] = bad[i]! ^ 0x5a;
      try {
        decode(bad, { verifyHash: true }).close();
      } catch (e) {
        assert.ok(isTensogramError(e), `byte ${i}: ${String(e)}`);
      }
    }
    // and the module still works afterwards
    assert.equal(decode(good).objects.length, 1);
  });
  it("a huge declared shape is refused, not allocated", () => {
    // 2^60 elements (2^63 bytes): refused from the descriptor, before any allocation.
    assert.throws(
      () => encode({}, [{ descriptor: { shape: [2 ** 40, 2 ** 20], dtype: "float64" }, data: new Float64Array(4) }]),
      isTensogramError,
    );
    // A shape that does not match the data given.
    assert.throws(
      () => encode({}, [{ descriptor: { shape: [1000, 1000], dtype: "float64" }, data: new Float64Array(4) }]),
      isTensogramError,
    );
  });
  it("object index out of range is an ObjectError", () => {
    assert.throws(() => decodeObject(good, 3), ObjectError);
    assert.throws(() => decodeRange(good, 0, [[30, 5]]), isTensogramError);
  });
  it("argument checks are InvalidArgumentError", () => {
    assert.throws(() => decode("nope" as unknown as Uint8Array), InvalidArgumentError);
    assert.throws(() => decodeObject(good, -1), InvalidArgumentError);
    assert.throws(() => decodeObject(good, 1.5), InvalidArgumentError);
    assert.throws(() => decodeRange(good, 0, [[-1, 2]]), InvalidArgumentError);
    assert.throws(() => encode({ _reserved_: {} }, []), InvalidArgumentError);
    assert.throws(() => encode({}, [{ descriptor: { shape: [1], dtype: "float128" as "float64" }, data: new Float64Array(1) }]), InvalidArgumentError);
    assert.throws(() => validate(good, { mode: "paranoid" as "full" }), InvalidArgumentError);
  });
  it("NaN is refused unless allowed, then restored from its mask", () => {
    const v = Float64Array.from([1, NaN, 3]);
    assert.throws(() => encode({}, [{ descriptor: { shape: [3], dtype: "float64" }, data: v }]), EncodingError);
    const msg = encode({}, [{ descriptor: { shape: [3], dtype: "float64" }, data: v }], { allowNan: true });
    const d = decode(msg);
    const out = d.objects[0]!.data() as Float64Array;
    assert.equal(out[0], 1);
    assert.ok(Number.isNaN(out[1]));
    d.close();
    const raw = decode(msg, { restoreNonFinite: false });
    assert.equal((raw.objects[0]!.data() as Float64Array)[1], 0);
    raw.close();
  });
  it("a closed message refuses data(), close() is idempotent", () => {
    const d = decode(good);
    const o = d.objects[0]!;
    d.close();
    d.close();
    assert.throws(() => o.data(), InvalidArgumentError);
  });
  it("validate never throws for bad content", () => {
    const bad = good.slice(0, good.byteLength - 3);
    const report = validate(bad);
    assert.ok(Array.isArray(report["issues"]) && (report["issues"] as unknown[]).length > 0);
  });
});
