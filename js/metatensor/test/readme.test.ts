// The README's examples are tested: every ```ts / ```tsx block is compiled
// with TypeScript (JSX through our runtime) and run as an ES module inside
// the package, so its bare imports resolve to the package itself.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import ts from "typescript";

const here = dirname(fileURLToPath(import.meta.url));
const pkg = join(here, "..");
const readme = readFileSync(join(pkg, "README.md"), "utf8");
const blocks = [...readme.matchAll(/^```(ts|tsx)\n([\s\S]*?)^```$/gm)].map((m) => ({ lang: m[1]!, code: m[2]! }));

describe("README examples", () => {
  it("has examples for reading, writing, TypeBox and JSX", () => {
    assert.ok(blocks.length >= 6, `${blocks.length} tested blocks`);
    assert.ok(blocks.some((b) => b.lang === "tsx"));
  });
  it("type-check against the package's declarations (strict)", () => {
    const check = join(here, "readme-check");
    rmSync(check, { recursive: true, force: true });
    mkdirSync(check);
    const files = blocks.map((b, i) => {
      const f = join(check, `example-${i}.${b.lang}`);
      writeFileSync(f, `export {};\n${b.code}`);
      return f;
    });
    const program = ts.createProgram(files, {
      strict: true, noEmit: true, module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext,
      target: ts.ScriptTarget.ES2022, jsx: ts.JsxEmit.ReactJSX, jsxImportSource: "@tensogram/metatensor", types: ["node"], skipLibCheck: true,
    });
    const diagnostics = ts.getPreEmitDiagnostics(program).map((d) => ts.flattenDiagnosticMessageText(d.messageText, "\n") + (d.file ? ` (${d.file.fileName})` : ""));
    rmSync(check, { recursive: true, force: true });
    assert.deepEqual(diagnostics, []);
  });
  blocks.forEach((b, i) => {
    it(`example ${i + 1} (${b.code.split("\n").find((l) => l.includes("from \"@tensogram"))?.replace(/.*from /, "") ?? b.lang}) runs`, () => {
      const out = ts.transpileModule(b.code, {
        compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022, jsx: ts.JsxEmit.ReactJSX, jsxImportSource: "@tensogram/metatensor" },
        fileName: `example.${b.lang}`,
      });
      const file = join(here, `readme-example-${i}.mjs`);
      writeFileSync(file, out.outputText);
      try {
        const r = spawnSync(process.execPath, [file], { encoding: "utf8" });
        assert.equal(r.status, 0, r.stderr);
      } finally {
        rmSync(file, { force: true });
      }
    });
  });
});
