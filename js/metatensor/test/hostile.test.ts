// Hostile headers, truncated files and corrupted data: the TS reader
// reports a MetatensorError (never a RangeError from a DataView), and, when
// the C++ CLI is available, the same first error name as `metatensor
// validate --deep` on every file of a generated corpus (§8.2 order).
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { MetatensorError, MetatensorFile, MetatensorWriter, open, validateDeep } from "@tensogram/metatensor";
import { CLI, cli, tmp } from "./helpers.js";
import { TS_CASES } from "./cases.js";

/** TS verdict of one file: "OK", "PLAIN" or the error name. */
async function verdict(bytes: Uint8Array): Promise<string> {
  try {
    const f = await open(bytes);
    if (!(f instanceof MetatensorFile)) return "PLAIN";
    await validateDeep(f);
    return "OK";
  } catch (e) {
    if (!(e instanceof MetatensorError)) throw new Error(`not a MetatensorError: ${String(e)}`, { cause: e });
    return e.code;
  }
}

/** C++ verdicts of many files with one `metatensor validate --deep` run. */
function cppVerdicts(paths: string[]): string[] {
  const r = cli("validate", "--deep", ...paths);
  const lines = r.stdout.split("\n").filter((l) => l.length > 0);
  return paths.map((p) => {
    const line = lines.find((l) => l.startsWith(p + ": "));
    if (!line) return `?? ${r.stderr}`;
    if (/: OK/.test(line)) return "OK";
    if (/no metatensor schema/.test(line)) return "PLAIN";
    const m = /INVALID: (?:[a-z ]+ error: )?([A-Z0-9_]+):/.exec(line);
    return m ? m[1]! : `?? ${line}`;
  });
}

function build(c: (typeof TS_CASES)[number]): Uint8Array {
  const w = new MetatensorWriter(c.schema, { alignment: c.alignment ?? 64 });
  for (const [k, v] of Object.entries(c.values)) w.set(k, v);
  return w.serialize();
}

const enc = new TextEncoder();
const dec = new TextDecoder();

/** Splits a file into header text and data; rebuilds with a new header padded to keep D a multiple of `pad`. */
function withHeader(bytes: Uint8Array, edit: (h: string) => string, pad = 64): Uint8Array {
  const n = Number(new DataView(bytes.buffer, bytes.byteOffset).getBigUint64(0, true));
  const text = dec.decode(bytes.subarray(8, 8 + n)).trimEnd();
  const data = bytes.subarray(8 + n);
  let h = enc.encode(edit(text));
  const total = 8 + h.length;
  const padded = new Uint8Array(h.length + ((pad - (total % pad)) % pad)).fill(0x20);
  padded.set(h);
  h = padded;
  const out = new Uint8Array(8 + h.length + data.length);
  new DataView(out.buffer).setBigUint64(0, BigInt(h.length), true);
  out.set(h, 8);
  out.set(data, 8 + h.length);
  return out;
}
function withJson(bytes: Uint8Array, edit: (h: any) => void, pad = 64): Uint8Array {
  return withHeader(bytes, (t) => {
    const h = JSON.parse(t);
    edit(h);
    return JSON.stringify(h);
  }, pad);
}
function editSchema(edit: (s: any) => void) {
  return (h: any) => {
    const s = JSON.parse(h.__metadata__["metatensor.schema"]);
    edit(s);
    h.__metadata__["metatensor.schema"] = JSON.stringify(s);
  };
}

/** A corpus of hostile variants of valid files, with a name per case. */
function corpus(): [string, Uint8Array][] {
  const worked = build(TS_CASES[1]!);
  const ragged = build(TS_CASES[2]!);
  const flat = build(TS_CASES[0]!);
  const out: [string, Uint8Array][] = [];
  const add = (name: string, b: Uint8Array) => out.push([name, b]);
  const md = (k: string, v: string | undefined) => (h: any) => {
    if (v === undefined) delete h.__metadata__[k];
    else h.__metadata__[k] = v;
  };
  add("valid worked", worked);
  add("valid ragged", ragged);
  add("valid flat", flat);
  add("empty", new Uint8Array(0));
  add("7 bytes", worked.subarray(0, 7));
  add("huge N", (() => { const b = worked.slice(); new DataView(b.buffer).setBigUint64(0, 2n ** 62n, true); return b; })());
  add("N too large by one", (() => { const b = worked.slice(0, 200); return b; })());
  add("bad utf8", withHeader(worked, (t) => t.replace('"labels"', '"lab\udcffels"')));
  add("bad utf8 raw", (() => { const b = worked.slice(); b[20] = 0xff; return b; })());
  add("BOM", withHeader(worked, (t) => "\ufeff" + t));
  add("leading ws", withHeader(worked, (t) => "  \n" + t));
  add("NUL", withHeader(worked, (t) => t + "\u0000"));
  add("not object", withHeader(worked, () => "[1,2]"));
  add("trailing garbage", withHeader(worked, (t) => t + "x"));
  add("dup tensor", withHeader(worked, (t) => t.replace(/\}$/, ',"positions":{"dtype":"U8","shape":[0],"data_offsets":[0,0]}}')));
  add("dup metadata key", withHeader(worked, (t) => t.replace('{"__metadata__":{', '{"__metadata__":{"a":"1","a":"2",')));
  add("dup field", withHeader(worked, (t) => t.replace('"dtype":"F32"', '"dtype":"F32","dtype":"F32"')));
  add("metadata null", withJson(flat, (h) => { h.__metadata__ = null; }));
  add("no metadata", withJson(flat, (h) => { delete h.__metadata__; }));
  add("metadata number", withJson(flat, (h) => { h.__metadata__.x = 1; }));
  add("metadata array", withJson(flat, (h) => { h.__metadata__ = []; }));
  add("entry string", withJson(worked, (h) => { h.labels = "x"; }));
  add("entry extra field", withJson(worked, (h) => { h.labels.extra = 1; }));
  add("entry missing shape", withJson(worked, (h) => { delete h.labels.shape; }));
  add("bad dtype", withJson(worked, (h) => { h.labels.dtype = "u8"; }));
  add("dtype number", withJson(worked, (h) => { h.labels.dtype = 3; }));
  add("shape float", withHeader(worked, (t) => t.replace('"shape":[3,16]', '"shape":[3.0,16]')));
  add("shape exp", withHeader(worked, (t) => t.replace('"shape":[3,16]', '"shape":[3e0,16]')));
  add("shape negative", withHeader(worked, (t) => t.replace('"shape":[3,16]', '"shape":[-3,16]')));
  add("shape 2^53", withHeader(worked, (t) => t.replace('"shape":[3,16]', '"shape":[9007199254740992,16]')));
  add("shape 2^64", withHeader(worked, (t) => t.replace('"shape":[3,16]', '"shape":[18446744073709551616,16]')));
  add("rank 33", withJson(worked, (h) => { h.labels.shape = Array(33).fill(1); }));
  add("offsets 3", withJson(worked, (h) => { h.labels.data_offsets = [0, 48, 1]; }));
  add("offsets reversed", withJson(worked, (h) => { h.labels.data_offsets = [48, 0]; }));
  add("size mismatch", withJson(worked, (h) => { h.labels.shape = [2, 16]; }));
  add("overflow", withJson(worked, (h) => { h.labels.shape = [4294967296, 4294967296, 4294967296]; }));
  add("subbyte", withJson(flat, (h) => { h.f4.shape = [3]; h.f4.data_offsets = [h.f4.data_offsets[0], h.f4.data_offsets[0] + 1]; }));
  add("hole", withJson(worked, (h) => { h.labels.data_offsets = [1, 49]; }));
  add("incomplete", worked.subarray(0, worked.length - 1));
  add("trailing byte", (() => { const b = new Uint8Array(worked.length + 1); b.set(worked); return b; })());
  add("not metatensor", withJson(worked, md("metatensor.version", undefined)));
  add("version 2", withJson(worked, md("metatensor.version", "2")));
  add("big endian", withJson(worked, md("metatensor.endianness", "big")));
  add("no endianness", withJson(worked, md("metatensor.endianness", undefined)));
  for (const a of ["8", "064", "+64", "96", "131072", "", "64 "]) add(`alignment ${JSON.stringify(a)}`, withJson(worked, md("metatensor.alignment", a)));
  add("alignment 128", withJson(worked, md("metatensor.alignment", "128")));
  add("alignment 16", withJson(worked, md("metatensor.alignment", "16")));
  add("schema missing", withJson(worked, md("metatensor.schema", undefined)));
  add("schema bad json", withJson(worked, md("metatensor.schema", "{")));
  add("schema dup key", withJson(worked, md("metatensor.schema", '{"type":"object","type":"object","properties":{}}')));
  add("schema big int", withJson(worked, md("metatensor.schema", '{"type":"object","properties":{},"x":9007199254740993}')));
  add("layout missing", withJson(worked, md("metatensor.layout", undefined)));
  add("layout bad", withJson(worked, md("metatensor.layout", '{"tensors":')));
  add("unknown key", withJson(worked, md("metatensor.compression", "none")));
  add("user key", withJson(worked, md("user.note", "fine")));
  add("layout offset", withJson(worked, (h) => { h.__metadata__["metatensor.layout"] = h.__metadata__["metatensor.layout"].replace('"offset":8', '"offset":9'); }));
  add("layout extra member", withJson(worked, (h) => { const l = JSON.parse(h.__metadata__["metatensor.layout"]); l.tensors.labels.x = 1; h.__metadata__["metatensor.layout"] = JSON.stringify(l); }));
  add("layout reordered", withJson(worked, (h) => { const l = JSON.parse(h.__metadata__["metatensor.layout"]); const t = l.tensors; l.tensors = Object.fromEntries(Object.entries(t).reverse()); h.__metadata__["metatensor.layout"] = JSON.stringify(l); }));
  for (const kw of ["$anchor", "definitions", "additionalItems", "patternProperties", "minProperties", "$dynamicRef"]) {
    add(`schema ${kw}`, withJson(worked, editSchema((s) => { s.properties.labels[kw] = kw === "minProperties" ? 1 : "x"; })));
  }
  add("schema items array", withJson(worked, editSchema((s) => { s.properties.positions.items = [{ type: "number" }]; })));
  add("schema unknown typedef", withJson(worked, editSchema((s) => { s.properties.labels.items["TypeDef:Float128"] = true; })));
  add("schema $schema", withJson(worked, editSchema((s) => { s.$schema = "http://json-schema.org/draft-07/schema#"; })));
  add("schema additionalProperties true", withJson(worked, editSchema((s) => { s.additionalProperties = true; })));
  add("schema ref cycle", withJson(worked, editSchema((s) => { s.$defs.A = { $ref: "#/$defs/B" }; s.$defs.B = { $ref: "#/$defs/A" }; })));
  add("schema dangling ref", withJson(worked, editSchema((s) => { s.properties.particles.items.$ref = "#/$defs/Nope"; })));
  add("schema ref by id", withJson(worked, editSchema((s) => { s.$defs.Particle.$id = "urn:p"; s.properties.particles.items.$ref = "urn:p"; })));
  add("schema ref with structure", withJson(worked, editSchema((s) => { s.properties.particles.items.type = "object"; })));
  add("schema struct missing required", withJson(worked, editSchema((s) => { s.$defs.Particle.required.pop(); })));
  add("schema struct reordered", withJson(worked, editSchema((s) => { s.$defs.Particle.required.reverse(); })));
  add("schema struct dup required", withJson(worked, editSchema((s) => { s.$defs.Particle.required.push("id"); })));
  add("schema struct align", withJson(worked, editSchema((s) => { s.$defs.Particle["TypeDef:Struct"] = { align: 3 }; })));
  add("schema struct align 16", withJson(worked, editSchema((s) => { s.$defs.Particle["TypeDef:Struct"] = { align: 16 }; })));
  add("schema scalar false", withJson(worked, editSchema((s) => { s.properties.positions.items.items["TypeDef:Float32"] = false; })));
  add("schema two kinds", withJson(worked, editSchema((s) => { s.properties.positions.items.items["TypeDef:Float64"] = true; })));
  add("schema bad type", withJson(worked, editSchema((s) => { s.properties.positions.items.items.type = "string"; })));
  add("schema dtype changed", withJson(worked, editSchema((s) => { s.properties.positions.items.items = { type: "number", "TypeDef:Float64": true }; })));
  add("schema fixed changed", withJson(worked, editSchema((s) => { s.properties.positions.items.minItems = 2; s.properties.positions.items.maxItems = 2; })));
  add("schema dim bounds", withJson(worked, editSchema((s) => { s.properties.labels.maxItems = 2; })));
  add("schema name __", withJson(worked, editSchema((s) => { s.properties.__x = s.properties.labels; })));
  add("schema name #", withJson(worked, editSchema((s) => { s.properties["a#b"] = s.properties.labels; })));
  add("schema root typedef", withJson(worked, editSchema((s) => { s["TypeDef:Struct"] = true; })));
  add("schema root not object", withJson(worked, editSchema((s) => { s.type = "array"; })));
  add("schema required missing prop", withJson(worked, editSchema((s) => { s.required.push("nope"); })));
  add("schema align bad", withJson(worked, editSchema((s) => { s.properties.labels["TypeDef:Align"] = 3; })));
  add("schema align on dim", withJson(worked, editSchema((s) => { s.properties.positions.items["TypeDef:Align"] = 8; })));
  add("schema list of string", withJson(ragged, editSchema((s) => { s.properties.rows.items.items = { type: "string", "TypeDef:String": true }; })));
  add("schema subbyte in record", withJson(worked, editSchema((s) => { s.$defs.Particle.properties.id = { type: "number", "TypeDef:Float4E2M1": true }; })));
  add("schema combinator structure", withJson(worked, editSchema((s) => { s.properties.labels.items.allOf = [{ properties: {} }]; })));
  add("schema combinator ok", withJson(worked, editSchema((s) => { s.properties.labels.items.anyOf = [{ const: "red" }, { minLength: 4 }]; })));
  add("schema deep value fail", withJson(worked, editSchema((s) => { s.properties.labels.items.maxLength = 3; })));
  add("schema pattern", withJson(worked, editSchema((s) => { s.properties.labels.items.pattern = "^[a-z]+$"; })));
  add("schema pattern fail", withJson(worked, editSchema((s) => { s.properties.labels.items.pattern = "e$"; })));
  add("schema nested too deep", withJson(worked, editSchema((s) => { let n: any = { type: "number" }; for (let i = 0; i < 70; i++) n = { allOf: [n] }; s.properties.labels.items.allOf = [n]; })));
  add("extra tensor", withJson(flat, (h) => { h.zzz = { dtype: "U8", shape: [0], data_offsets: [h.f64.data_offsets[1], h.f64.data_offsets[1]] }; const t = h.f64; h.zzz.data_offsets = [t.data_offsets[0], t.data_offsets[0]]; }));
  add("missing heap", withJson(worked, (h) => { h["labels#x"] = h["labels#heap"]; delete h["labels#heap"]; }));
  add("heap of flat", withJson(worked, (h) => { h["positions#heap"] = h["labels#heap"]; delete h["labels#heap"]; }));
  add("pad renamed", withJson(worked, (h) => { h.__pad__7 = h.__pad__0; delete h.__pad__0; }));
  add("pad as tensor name", withJson(worked, (h) => { h.__pad__0.dtype = "I8"; }));
  add("pad wrong size", withJson(worked, (h) => { const p = h.__pad__0; const l = h.labels; p.shape = [p.shape[0] - 8]; p.data_offsets[1] -= 8; l.data_offsets[0] -= 8; l.data_offsets[1] -= 8; }));
  add("dtype mismatch", withJson(worked, (h) => { h.positions.dtype = "I32"; }));
  add("rank mismatch", withJson(worked, (h) => { h.positions.shape = [6]; }));
  add("trailing dim", withJson(worked, (h) => { h.labels.shape = [6, 8]; }));
  add("heap dtype", withJson(worked, (h) => { h["labels#heap"].dtype = "I8"; }));
  add("heap rank", withJson(worked, (h) => { h["labels#heap"].shape = [1, h["labels#heap"].shape[0]]; }));
  add("misaligned D", withJson(worked, () => undefined, 8));
  // Data corruption: blob refs, bools, utf8, padding, values.
  const patch = (b: Uint8Array, name: string, at: number, bytes: number[] | bigint, file = b) => {
    const c = file.slice();
    const n = Number(new DataView(c.buffer).getBigUint64(0, true));
    const h = JSON.parse(dec.decode(c.subarray(8, 8 + n)));
    const abs = 8 + n + h[name].data_offsets[0] + at;
    if (typeof bytes === "bigint") new DataView(c.buffer).setBigUint64(abs, bytes, true);
    else c.set(bytes, abs);
    return c;
  };
  add("blob offset out", patch(worked, "labels", 0, 1000n));
  add("blob length huge", patch(worked, "labels", 8, 2n ** 64n - 1n));
  add("blob overflow", patch(worked, "labels", 0, 2n ** 64n - 2n));
  add("blob overlap ok", patch(worked, "labels", 16, 0n));
  add("list misaligned", patch(ragged, "rows", 0, 4n));
  add("list length", patch(ragged, "rows", 8, 12n));
  add("bool 2", patch(flat, "b", 1, [2]));
  add("utf8 bad", patch(worked, "labels#heap", 0, [0xc3, 0x28]));
  add("nonzero pad tensor", patch(worked, "__pad__0", 0, [1]));
  add("nonzero record pad", patch(worked, "particles", 4, [1]));
  add("nonzero record tail", patch(worked, "particles", 44, [1]));
  add("heap gap", patch(worked, "labels", 40, [3]));
  add("mass negative", patch(worked, "particles", 8, [0, 0, 0, 0, 0, 0, 0xf0, 0xbf]));
  add("mass NaN", patch(worked, "particles", 8, [0, 0, 0, 0, 0, 0, 0xf8, 0x7f]));
  // Truncations at every length up to the end of the header, then in the data.
  const n = Number(new DataView(worked.buffer).getBigUint64(0, true));
  for (let k = 0; k < 8 + n + 64; k += k < 16 ? 1 : 37) add(`truncated ${k}`, worked.subarray(0, k));
  // Random corruption (deterministic PRNG): 1–3 bytes anywhere.
  let seed = 12345;
  const rnd = (m: number) => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), seed % m);
  for (const base of [worked, ragged, flat]) {
    for (let i = 0; i < 60; i++) {
      const c = base.slice();
      const k = 1 + rnd(3);
      for (let j = 0; j < k; j++) c[rnd(c.length)] = rnd(256);
      add(`random ${out.length}`, c);
    }
  }
  return out;
}

describe("hostile input", () => {
  it("every corpus file gives a typed verdict (no raw exception)", async () => {
    const verdicts = new Map<string, string>();
    for (const [name, b] of corpus()) verdicts.set(name, await verdict(b));
    assert.equal(verdicts.get("valid worked"), "OK");
    assert.equal(verdicts.get("empty"), "ST_HEADER_TOO_SMALL");
    assert.equal(verdicts.get("dup tensor"), "ST_DUPLICATE_KEY");
    assert.equal(verdicts.get("shape 2^53"), "ST_ENTRY");
    assert.equal(verdicts.get("schema ref cycle"), "MT_SCHEMA_DIALECT");
    assert.equal(verdicts.get("blob overflow"), "MT_BLOB_BOUNDS");
    assert.equal(verdicts.get("list misaligned"), "MT_BLOB_ALIGN");
    assert.equal(verdicts.get("mass NaN"), "OK"); // NaN passes minimum (§8.3)
    assert.equal(verdicts.get("mass negative"), "MT_VALUE");
    assert.equal(verdicts.get("not metatensor"), "PLAIN");
  });

  it("the same first error name as `metatensor validate --deep` on every corpus file", { skip: CLI === "" && "METATENSOR_CLI is not set" }, async () => {
    const dir = tmp();
    const files = corpus();
    const paths = files.map(([, b], i) => {
      const p = join(dir, `c${i}.mt`);
      writeFileSync(p, b);
      return p;
    });
    const cpp = cppVerdicts(paths);
    const diffs: string[] = [];
    for (let i = 0; i < files.length; i++) {
      const ts = await verdict(files[i]![1]);
      if (ts !== cpp[i]) diffs.push(`${files[i]![0]}: TS ${ts}, C++ ${cpp[i]}`);
    }
    assert.deepEqual(diffs, []);
    const codes = new Set(cpp);
    if (process.env["MT_SHOW"]) console.log([...codes].join(" "));
    assert.ok(codes.size >= 30, `only ${codes.size} distinct verdicts: ${[...codes].join(" ")}`);
    assert.ok(files.length > 250);
  });

  it("a truncated file read through a file handle after opening is ST_INCOMPLETE, not a RangeError", async () => {
    const { openMetatensorFile } = await import("@tensogram/metatensor/node");
    const { truncateSync } = await import("node:fs");
    const p = join(tmp(), "t.mt");
    const b = build(TS_CASES[1]!);
    writeFileSync(p, b);
    const f = await openMetatensorFile(p);
    truncateSync(p, b.length - 40);
    await assert.rejects(f.get("positions"), (e) => e instanceof MetatensorError && e.code === "ST_INCOMPLETE");
    await f.close();
  });
});
