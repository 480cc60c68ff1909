// Schemas and logical values of every kind, shared by the tests.
import { MetatensorWriter } from "@tensogram/metatensor";

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

/**
 * A file whose flat tensor "a" (`count` float32 values, i) dwarfs the rest —
 * "b" (1000 float64, -i) and strings "s" — so that "only its bytes" is measurable
 * in the range-request tests.
 */
export function bigFlatFile(count: number): Uint8Array {
  const w = new MetatensorWriter({
    type: "object",
    properties: {
      a: { type: "array", items: { type: "number", "TypeDef:Float32": true } },
      b: { type: "array", items: { type: "number", "TypeDef:Float64": true } },
      s: { type: "array", items: { type: "string", "TypeDef:String": true } },
    },
  });
  w.setFlat("a", [count], Float32Array.from({ length: count }, (_, i) => i));
  w.setFlat("b", [1000], Float64Array.from({ length: 1000 }, (_, i) => -i));
  w.set("s", ["x", "yy", "zzz"]);
  return w.serialize();
}
