// The packed @tensogram/tensogram as a user's `npm install` leaves it
// (tests/js/run_tensogram_js_tests.sh): both entry points resolve, the
// WebAssembly module shipped in the tarball loads, and a message makes the
// round trip through encode, TensogramFile and decode. Exits non-zero on any
// difference.
import assert from "node:assert/strict";
import * as tg from "@tensogram/tensogram";
import createModule from "@tensogram/tensogram/wasm";

assert.equal(typeof createModule, "function", "the ./wasm entry point is the module factory");
await tg.init();
const values = new Float64Array(1000).map((_, i) => Math.sin(i / 50) * 40 + 280);
const message = tg.encode({ base: [{ mars: { param: "2t", step: 6 } }] }, [
  { descriptor: { shape: [20, 50], dtype: "float64", compression: "zstd", zstd_level: 3 }, data: values },
]);
assert.deepEqual(tg.scan(message), [{ offset: 0, length: message.byteLength }]);
const file = tg.TensogramFile.fromBytes(message);
assert.equal(file.messageCount, 1);
const decoded = await file.message(0, { verifyHash: true });
assert.deepEqual(Array.from(decoded.objects[0].data()), Array.from(values));
assert.equal(tg.getMetaString(decoded.metadata, "mars.param"), "2t");
decoded.close();
const report = tg.validateBuffer(message, { mode: "full" });
assert.deepEqual(report.file_issues, []);
console.log(`packed @tensogram/tensogram: ok (${message.byteLength}-byte message)`);
