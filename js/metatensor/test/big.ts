// A sparse 1 GiB metatensor file (one F32 tensor of 2^28 zeros plus a small
// F64 tensor) made without allocating 1 GiB: the header is built by the same
// functions the writer uses, the data section is a hole.
import { openSync, closeSync, writeSync, ftruncateSync } from "node:fs";
import { compileSchema, dumpJson, layoutTableJson, planSafetensors } from "@tensogram/metatensor";

export const BIG_ELEMENTS = 2 ** 28;

export function makeSparseFile(path: string, elements = BIG_ELEMENTS): { size: number; headerBytes: number; smallAt: number } {
  const schema = {
    type: "object",
    properties: {
      big: { type: "array", items: { type: "number", "TypeDef:Float32": true } },
      small: { type: "array", items: { type: "number", "TypeDef:Float64": true } },
    },
  };
  const c = compileSchema(schema);
  const md = new Map([
    ["metatensor.alignment", "64"],
    ["metatensor.endianness", "little"],
    ["metatensor.layout", dumpJson(layoutTableJson(c, ["big", "small"], 64))],
    ["metatensor.schema", dumpJson(schema)],
    ["metatensor.version", "1"],
  ]);
  const small = new Float64Array(16).map((_, i) => i + 0.5);
  // Only `byteLength` of the big tensor is read when planning (§3.5 order: both R = 64, then by name).
  const big = { byteLength: elements * 4 } as Uint8Array;
  const plan = planSafetensors(
    [{ name: "big", dtype: "F32", shape: [elements], data: big }, { name: "small", dtype: "F64", shape: [16], data: new Uint8Array(small.buffer) }],
    md, { headerAlignment: 64, alwaysWriteMetadata: true, keepOrder: true });
  const fd = openSync(path, "w");
  writeSync(fd, plan.head, 0, plan.head.length, 0);
  const smallAt = plan.head.length + elements * 4;
  writeSync(fd, new Uint8Array(small.buffer), 0, 128, smallAt);
  ftruncateSync(fd, plan.size);
  closeSync(fd);
  return { size: plan.size, headerBytes: plan.head.length, smallAt };
}
