// validateBuffer and validateFile against the C++ CLI's `tensogram validate
// --json` on the shared fixtures, each wrapped in bytes outside any message
// (garbage before, trailing bytes after), in every mode.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { encode, InvalidArgumentError, IoError, validateBuffer, validateFile } from "@tensogram/tensogram";
import { CLI, FIXTURES, HAVE_CLI, HAVE_FIXTURES, tmp } from "./helpers.js";

/** `tensogram validate --json` (exit status 1 when it finds problems, as here). */
function nativeReport(flags: readonly string[], path: string): Record<string, unknown> {
  const r = spawnSync(CLI, ["validate", "--json", ...flags, path], { encoding: "utf8", maxBuffer: 1 << 28 });
  assert.ok(r.status === 0 || r.status === 1, r.stderr);
  return (JSON.parse(r.stdout) as Record<string, unknown>[])[0]!;
}

const MODES = [
  { mode: "quick", flags: ["--quick"] },
  { mode: "default", flags: [] },
  { mode: "checksum", flags: ["--checksum"] },
  { mode: "full", flags: ["--full"] },
] as const;

function wrapped(body: Uint8Array, before: number, after: number): Uint8Array {
  const out = new Uint8Array(before + body.byteLength + after);
  out.fill(0x5a, 0, before);
  out.set(body, before);
  out.fill(0x00, before + body.byteLength);
  return out;
}

describe("validateBuffer vs tensogram validate", { skip: (!HAVE_CLI || !HAVE_FIXTURES) && "no CLI or fixtures" }, () => {
  const files = HAVE_FIXTURES ? readdirSync(join(FIXTURES, "tgm")).filter((f) => f.endsWith(".tgm")) : [];
  const dir = tmp();
  for (const name of files) {
    it(name, async () => {
      const buf = wrapped(readFileSync(join(FIXTURES, "tgm", name)), 7, 13);
      const path = join(dir, name);
      writeFileSync(path, buf);
      for (const { mode, flags } of MODES) {
        const native = nativeReport(flags, path);
        const ours = validateBuffer(buf, { mode });
        assert.deepEqual(ours.file_issues, native["file_issues"], `${name} ${mode}`);
        assert.deepEqual(ours.messages, native["message_reports"], `${name} ${mode}`);
        assert.equal(ours.messages.length, native["messages"]);
        assert.deepEqual(await validateFile(path, { mode }), ours);
      }
      const issues = validateBuffer(buf).file_issues.map((i) => i.description);
      assert.deepEqual(issues, [
        "7 unrecognized bytes at offset 0",
        `13 trailing bytes after last message at offset ${buf.byteLength - 13}`,
      ]);
    });
  }
});

describe("validateBuffer", () => {
  it("a clean buffer of messages has no file issues and one report per message", () => {
    const msg = encode({ base: [{ a: 1 }] }, [{ descriptor: { shape: [3], dtype: "float32" }, data: new Float32Array([1, 2, 3]) }]);
    const two = new Uint8Array(2 * msg.byteLength);
    two.set(msg);
    two.set(msg, msg.byteLength);
    const r = validateBuffer(two, { mode: "full" });
    assert.deepEqual(r.file_issues, []);
    assert.equal(r.messages.length, 2);
    for (const m of r.messages) {
      assert.deepEqual(m["issues"], []);
      assert.equal(m["hash_verified"], true);
    }
    // A flipped payload byte: a hash mismatch in message 2 only.
    const bad = two.slice();
    bad[msg.byteLength + 200]! ^= 0xff;
    const r2 = validateBuffer(bad);
    assert.deepEqual(r2.messages[0]!["issues"], []);
    assert.notDeepEqual(r2.messages[1]!["issues"], []);
  });

  it("bytes with no message, an empty buffer, bad arguments", async () => {
    const r = validateBuffer(new Uint8Array(100).fill(3));
    assert.deepEqual(r.messages, []);
    assert.deepEqual(r.file_issues, [{ byte_offset: 0, length: 100, description: "100 bytes with no valid messages" }]);
    assert.deepEqual(validateBuffer(new Uint8Array(0)), { file_issues: [], messages: [] });
    assert.throws(() => validateBuffer(new Uint8Array(4), { mode: "thorough" as "full" }), InvalidArgumentError);
    assert.throws(() => validateBuffer([1, 2] as unknown as Uint8Array), InvalidArgumentError);
    await assert.rejects(validateFile(join(tmp(), "missing.tgm")), IoError);
  });
});
