// The compact JSON of the writer is nlohmann::json::dump()'s: checked on
// floats of every magnitude by letting the C++ tool re-serialise the schema
// a TS-written file embeds (its `dump -j` output prints the same number
// tokens only if ours were already in nlohmann's form), plus strict parsing.
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { MetatensorError, MetatensorWriter, dumpJson, parseStrictJson } from "@tensogram/metatensor";
import { CLI, cli, tmp } from "./helpers.js";

const FLOATS = [0.1, -2.5, 1e-7, 123.456, 1e15, 1e16, 1.5e300, -4.9e-324, 0.0001, 0.00001, 1e21, 12345678901234.5, 2 ** 53 + 2, 3.0, -0.5e-10, 100, 1e-5];

describe("JSON", () => {
  it("number tokens match nlohmann's dump for floats of every magnitude", { skip: CLI === "" && "METATENSOR_CLI is not set" }, () => {
    const schema = {
      type: "object",
      properties: { x: { type: "array", items: { type: "number", "TypeDef:Float64": true, enum: FLOATS, title: "ünïcode \u0001 \"q\" / \\" } } },
    };
    const w = new MetatensorWriter(schema);
    w.set("x", [0.1]);
    const p = join(tmp(), "f.mt");
    writeFileSync(p, w.serialize());
    const r = cli("dump", "-j", "-n", "0", p);
    assert.equal(r.status, 0, r.stderr);
    const enumText = /"enum": \[([^\]]*)\]/.exec(r.stdout)![1]!.split(",").map((s) => s.trim());
    assert.deepEqual(enumText, FLOATS.map((f) => dumpJson(f)));
    const title = /"title": ("(?:[^"\\]|\\.)*")/.exec(r.stdout)![1]!;
    assert.equal(title, dumpJson(schema.properties.x.items.title));
  });

  it("strict parsing: duplicates, depth, lone surrogates, big integers", () => {
    const o = { syntax: "MT_SCHEMA_JSON", duplicate: "ST_DUPLICATE_KEY", what: "t" } as const;
    const code = (t: string, extra = {}) => {
      try {
        parseStrictJson(t, { ...o, ...extra });
        return "OK";
      } catch (e) {
        return (e as MetatensorError).code;
      }
    };
    assert.equal(code('{"a":1,"b":{"a":2}}'), "OK");
    assert.equal(code('{"a":1,"a":2}'), "ST_DUPLICATE_KEY");
    assert.equal(code('{"a":1,"a":2,}'), "MT_SCHEMA_JSON"); // syntax before duplicates
    assert.equal(code("[".repeat(65) + "]".repeat(65)), "MT_LIMIT");
    assert.equal(code("[".repeat(64) + "]".repeat(64)), "OK");
    assert.equal(code('"\\ud800"'), "MT_SCHEMA_JSON");
    assert.equal(code("9007199254740992"), "MT_SCHEMA_JSON");
    assert.equal(code("-9007199254740991"), "OK");
    assert.equal(parseStrictJson("18446744073709551615", { ...o, bigint: true }), 2n ** 64n - 1n);
    assert.deepEqual(Object.keys(parseStrictJson('{"__proto__":1}', o) as object), ["__proto__"]);
    assert.equal(dumpJson({ b: 1, a: [true, null, "x"], "é": 2, "\u{1F600}": 3, "\uffff": 4 }), '{"a":[true,null,"x"],"b":1,"é":2,"\uffff":4,"\u{1F600}":3}');
  });
});
