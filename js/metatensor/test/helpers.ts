// Shared helpers of the tests: the C++ CLI (METATENSOR_CLI), temporary
// files, and a small .npy writer so that the C++ `metatensor from-npy` can
// produce reference files of every kind it supports.
import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseStrictJson } from "@tensogram/metatensor";

export const CLI = process.env["METATENSOR_CLI"] ?? "";
/** `{ skip }` option for tests that need the C++ CLI. */
// The repository's TypeBox outputs (tests/metatensor/data/typebox), shared with
// the C++ tests: TYPEBOX_DATA_DIR when the package is tested from a copy
// (tests/js/run_js_tests.sh), else found from dist-test/ in the source tree.
const typeboxDataDir =
  process.env["TYPEBOX_DATA_DIR"] ??
  join(dirname(fileURLToPath(import.meta.url)), "..", "..", "..", "tests", "metatensor", "data", "typebox");

export function typeboxData(name: string): any {
  return JSON.parse(readFileSync(join(typeboxDataDir, name), "utf8"));
}

export const needsCli = { skip: CLI === "" ? "METATENSOR_CLI is not set (path of the C++ metatensor tool)" : false };

export function tmp(): string {
  return mkdtempSync(join(tmpdir(), "mt-js-"));
}

/** Runs the CLI; returns exit status, stdout and stderr. */
export function cli(...args: string[]): { status: number; stdout: string; stderr: string } {
  const r = spawnSync(CLI, args, { encoding: "utf8", maxBuffer: 1 << 28 });
  return { status: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}

/** `metatensor dump -j -n 0 FILE` parsed; 64-bit integers beyond 2^53 as bigint. */
export function dumpJson(file: string): Record<string, any> {
  const out = execFileSync(CLI, ["dump", "-j", "-n", "0", file], { encoding: "utf8", maxBuffer: 1 << 28 });
  return parseStrictJson(out, { syntax: "MT_VALUE", duplicate: "MT_VALUE", what: "dump", bigint: true }) as Record<string, any>;
}

/** The logical value as `dump -j` prints it: NaN/inf as null, bigint kept, typed arrays as arrays. */
export function asDumped(v: unknown): unknown {
  if (typeof v === "number") return Number.isFinite(v) ? v : null;
  if (typeof v === "bigint") return Number.isSafeInteger(Number(v)) ? Number(v) : v;
  if (ArrayBuffer.isView(v)) return Array.from(v as unknown as ArrayLike<unknown>, asDumped);
  if (Array.isArray(v)) return v.map(asDumped);
  if (v && typeof v === "object") return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, asDumped(x)]));
  return v;
}

export function bigintSafe(v: unknown): unknown {
  return asDumped(v);
}

// --- .npy writer (NumPy format 1.0) -----------------------------------------

export type NpyDescr = string | [string, NpyDescr, number[]?][];

function pyDescr(d: NpyDescr): string {
  if (typeof d === "string") return `'${d}'`;
  return "[" + d.map(([n, t, s]) => `('${n}', ${pyDescr(t)}${s ? `, (${s.join(", ")}${s.length === 1 ? "," : ""})` : ""})`).join(", ") + "]";
}

/** Writes a .npy file with `descr`, `shape` and raw little-endian `data`. */
export function writeNpy(path: string, descr: NpyDescr, shape: number[], data: Uint8Array): void {
  const shapeText = `(${shape.join(", ")}${shape.length === 1 ? "," : ""})`;
  let header = `{'descr': ${pyDescr(descr)}, 'fortran_order': False, 'shape': ${shapeText}, }`;
  const total = 10 + header.length + 1;
  header += " ".repeat((64 - (total % 64)) % 64) + "\n";
  const head = new Uint8Array(10 + header.length);
  head.set([0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, 1, 0]);
  new DataView(head.buffer).setUint16(8, header.length, true);
  head.set(new TextEncoder().encode(header), 10);
  const out = new Uint8Array(head.length + data.byteLength);
  out.set(head);
  out.set(data, head.length);
  writeFileSync(path, out);
}

export function bytesOf(a: ArrayBufferView): Uint8Array {
  return new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
}
