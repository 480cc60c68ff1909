// The official JSON Schema Test Suite (draft 2020-12, the shared fixture
// the C++ tests use): every group our dialect accepts is evaluated exactly
// as the suite says; groups it rejects use keywords of §4.3.
import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { MetatensorError, checkDialect, evaluate } from "@tensogram/metatensor";

const dir = process.env["TENSOGRAM_FIXTURES"] ? join(process.env["TENSOGRAM_FIXTURES"], "json-schema-test-suite") : "/work/shared/fixtures/json-schema-test-suite";

describe("JSON Schema Test Suite (2020-12)", { skip: !existsSync(join(dir, "type.json")) && `suite not found at ${dir}` }, () => {
  it("accepted groups evaluate as the suite expects", () => {
    let evaluated = 0;
    let rejected = 0;
    const failures: string[] = [];
    for (const file of readdirSync(dir).filter((f) => f.endsWith(".json")).sort()) {
      const groups = JSON.parse(readFileSync(join(dir, file), "utf8")) as { description: string; schema: unknown; tests: { description: string; data: unknown; valid: boolean }[] }[];
      for (const g of groups) {
        let resolve: (n: Record<string, unknown>) => unknown;
        try {
          resolve = checkDialect(g.schema);
        } catch (e) {
          if (!(e instanceof MetatensorError) || !["MT_SCHEMA_DIALECT", "MT_UNKNOWN_TYPEDEF", "MT_SCHEMA_UNSUPPORTED", "MT_LIMIT"].includes(e.code)) {
            failures.push(`${file} / ${g.description}: ${String(e)}`);
          }
          rejected++;
          continue;
        }
        evaluated++;
        for (const t of g.tests) {
          const ok = evaluate(g.schema, t.data, resolve) === undefined;
          if (ok !== t.valid) failures.push(`${file} / ${g.description} / ${t.description}: expected ${t.valid}`);
        }
      }
    }
    assert.deepEqual(failures, []);
    assert.ok(evaluated > 200, `${evaluated} groups evaluated, ${rejected} rejected`);
  });
});
