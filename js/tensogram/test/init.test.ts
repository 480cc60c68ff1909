// init() (spec 07 G.2): every call before it fails with InvalidArgumentError;
// concurrent and repeated calls share one instantiation; the .wasm can be
// handed over as bytes or as a compiled WebAssembly.Module. (node --test
// runs each file in its own process, so the module starts unloaded here.)
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, it } from "node:test";
import { InvalidArgumentError, decode, encode, init, scan } from "@tensogram/tensogram";

describe("init", () => {
  it("is required before any other call", () => {
    assert.throws(() => scan(new Uint8Array(4)), (e: unknown) =>
      e instanceof InvalidArgumentError && e.message === "tensogram: init() must be awaited before using any other API");
  });
  it("loads once, whatever the number of callers", async () => {
    const wasmPath = new URL("../dist/wasm/tensogram_wasm.wasm", import.meta.url);
    const module = await WebAssembly.compile(readFileSync(wasmPath));
    await Promise.all([init({ wasmInput: module }), init(), init()]);
    await init();
    const msg = encode({}, [{ descriptor: { shape: [3], dtype: "uint8" }, data: new Uint8Array([1, 2, 3]) }]);
    const d = decode(msg);
    assert.deepEqual(Array.from(d.objects[0]!.data() as Uint8Array), [1, 2, 3]);
    d.close();
  });
});
