// The reference's fixture files (shared/fixtures/tgm, written by the Rust
// implementation) decoded in the WebAssembly build: the values equal what
// the C++ CLI writes with `tensogram to-npy`, the metadata equals
// `tensogram dump -j`, scan finds the messages `tensogram info` counts, and
// the legacy-hash files fail `verifyHash` with MissingHashError (fixture
// README).
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { MissingHashError, decode, decodeMetadata, scan, validate } from "@tensogram/tensogram";
import { FIXTURES, HAVE_CLI, HAVE_FIXTURES, cli, npyData, rawBytes, tmp } from "./helpers.js";

const dir = join(FIXTURES, "tgm");
const files = HAVE_FIXTURES ? readdirSync(dir).filter((f) => f.endsWith(".tgm")).sort() : [];

/** The JSON documents `tensogram dump -j` prints one after another. */
function splitJsonDocuments(text: string): unknown[] {
  const docs: unknown[] = [];
  let depth = 0;
  let start = -1;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === "\\") i++;
      else if (c === '"') inString = false;
      continue;
    }
    if (c === '"') inString = true;
    else if (c === "{") {
      if (depth++ === 0) start = i;
    } else if (c === "}" && --depth === 0) {
      docs.push(JSON.parse(text.slice(start, i + 1)));
    }
  }
  return docs;
}

/** A base entry without the library's `_reserved_` section. */
function userKeys(entry: Record<string, unknown> | undefined): Record<string, unknown> {
  const { _reserved_: _ignored, ...rest } = entry ?? {};
  return rest;
}

describe("reference fixtures", { skip: !HAVE_FIXTURES && "no fixtures directory (TENSOGRAM_FIXTURES)" }, () => {
  for (const f of files) {
    it(f, { skip: !HAVE_CLI && "no C++ CLI (TENSOGRAM_CLI)" }, () => {
      const buf = new Uint8Array(readFileSync(join(dir, f)));
      const positions = scan(buf);
      assert.ok(positions.length > 0);
      const out = tmp();
      cli("to-npy", join(dir, f), "-o", out);
      const dumped = splitJsonDocuments(cli("dump", "-j", join(dir, f))) as { base: Record<string, unknown>[] }[];
      assert.equal(dumped.length, positions.length, `${f}: dump -j documents vs scan`);
      const files = new Set(readdirSync(out));
      positions.forEach((p, i) => {
        const one = buf.subarray(p.offset, p.offset + p.length);
        const d = decode(one);
        try {
          d.objects.forEach((o, j) => {
            const npy = `${i}_${j}.npy`;
            assert.ok(files.has(npy), `${f}: ${npy} missing`);
            const expected = npyData(join(out, npy));
            assert.deepEqual(rawBytes(o.data()), new Uint8Array(expected), `${f}: message ${i} object ${j}`);
          });
          const meta = decodeMetadata(one);
          assert.equal(meta.version, 3);
          const base = meta.base ?? [];
          assert.equal(base.length, dumped[i]!.base.length);
          base.forEach((b, j) => assert.deepEqual(userKeys(b), userKeys(dumped[i]!.base[j]), `${f}: message ${i} base[${j}]`));
        } finally {
          d.close();
        }
      });
    });
  }

  it("legacy-hash files fail verifyHash with MissingHashError, hash-flagged ones verify", () => {
    const legacy = new Uint8Array(readFileSync(join(dir, "single-msg.tgm")));
    assert.throws(() => decode(legacy, { verifyHash: true }), (e: unknown) => e instanceof MissingHashError && e.name === "MissingHashError");
    const flagged = new Uint8Array(readFileSync(join(dir, "hash_xxh3.tgm")));
    decode(flagged, { verifyHash: true }).close();
    const report = validate(flagged, { mode: "checksum" });
    assert.deepEqual(report["issues"], []);
  });
});
