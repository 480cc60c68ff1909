// A program a user of the published package would write: it installs
// @tensogram/metatensor from the tarball `npm pack` made (only the files the
// package ships), type-checks against its declarations and runs every entry
// point: ".", "./node", "./typebox", "./jsx" and the JSX runtime.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { MetatensorWriter, openMetatensor, validateDeep, type MetatensorFile } from "@tensogram/metatensor";
import { openMetatensorFile, writeFile } from "@tensogram/metatensor/node";
import { Value } from "@sinclair/typebox/value";
import * as MT from "@tensogram/metatensor/typebox";
import { Field, Struct, Tensor, render } from "@tensogram/metatensor/jsx";

const Particle = MT.Struct({ id: MT.Uint32(), mass: MT.Float64({ minimum: 0 }), name: MT.String() });
const schema = MT.Metatensor({ particles: MT.Tensor(Particle, [null]), rows: MT.Tensor(MT.List(MT.Float32()), [null]) });
const value = { particles: [{ id: 1, mass: 2.5, name: "α" }], rows: [[1, 2], []] };
assert.ok(Value.Check(schema, value));
assert.ok(!Value.Check(schema, { ...value, particles: [{ id: 1, mass: -1, name: "x" }] }));

const w = new MetatensorWriter(MT.toJsonSchema(schema));
for (const [k, v] of Object.entries(value)) w.set(k, v);
const dir = mkdtempSync(join(tmpdir(), "mt-consumer-"));
try {
  const path = join(dir, "p.mt");
  await writeFile(path, w);
  const f: MetatensorFile = await openMetatensorFile(path);
  await validateDeep(f);
  assert.equal((await f.records("particles")).at(0).get("name"), "α");
  assert.deepEqual([...((await f.blobs("rows")).at(0) as Float32Array)], [1, 2]);
  await f.close();
  const again = await openMetatensor(w.serialize());
  assert.deepEqual(again.names, f.names);
} finally {
  rmSync(dir, { recursive: true, force: true });
}

const model = (
  <Struct name="Model">
    <Field name="w"><Tensor dtype="f32" shape={[2, 3]} /></Field>
  </Struct>
);
const rendered = render(model);
assert.equal((rendered.layout["tensors"] as Record<string, { kind: string }>)["w"]?.kind, "flat");
console.log("packed package: every entry point works");
