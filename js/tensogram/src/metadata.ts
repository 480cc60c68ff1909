// Metadata helpers of the reference's package: dotted-path lookups over
// decoded metadata, per-object lookups, typed getters, computeCommon and the
// deep equality they use. Plain TypeScript over the JavaScript values that
// decode() already returned (nothing of the wire format is read here): the C
// ABI's tgm_metadata_get works on a metadata handle, and handing decoded
// JavaScript values back to the core for a key lookup would cost a JSON
// round trip per call. The rules follow the core's (first match across
// base[i], then _extra_; _reserved_ never visible).

import { InvalidArgumentError } from "./errors.js";
import type { CborValue } from "./json.js";
import type { GlobalMetadata } from "./types.js";

type Map = { [key: string]: CborValue };

function isMap(v: unknown): v is Map {
  return typeof v === "object" && v !== null && !Array.isArray(v) && !ArrayBuffer.isView(v);
}

function checkArgs(meta: unknown, path: unknown): void {
  if (!isMap(meta)) throw new InvalidArgumentError("meta must be a metadata object");
  if (typeof path !== "string") throw new InvalidArgumentError("path must be a string");
}

/** `path` ("mars.param") inside `root`; `undefined` when any step is missing. */
function walk(root: Map, keys: readonly string[]): CborValue | undefined {
  let v: CborValue | undefined = root;
  for (const k of keys) {
    if (!isMap(v) || !Object.prototype.hasOwnProperty.call(v, k)) return undefined;
    v = v[k];
  }
  return v;
}

function lookupIn(entry: unknown, keys: readonly string[]): CborValue | undefined {
  if (!isMap(entry) || keys[0] === "_reserved_") return undefined;
  return walk(entry, keys);
}

function lookup(meta: GlobalMetadata, path: string, obj?: number): CborValue | undefined {
  checkArgs(meta, path);
  if (path === "") return undefined;
  const keys = path.split(".");
  const head = keys[0]!;
  // _reserved_ is the library's own; the reference hides it under both names.
  if (head === "_reserved_" || head === "reserved") return undefined;
  if (obj !== undefined) {
    if (!Number.isInteger(obj) || obj < 0) throw new InvalidArgumentError(`obj must be a non-negative integer, got ${obj}`);
    return lookupIn(meta.base?.[obj], keys);
  }
  if (head === "_extra_" || head === "extra") {
    return keys.length > 1 && isMap(meta._extra_) ? walk(meta._extra_, keys.slice(1)) : undefined;
  }
  for (const entry of meta.base ?? []) {
    const v = lookupIn(entry, keys);
    if (v !== undefined) return v;
  }
  return isMap(meta._extra_) ? walk(meta._extra_, keys) : undefined;
}

/** The value at `path`: first match across `base[i]`, then `_extra_`; `undefined` when absent. */
export function getMetaKey(meta: GlobalMetadata, path: string): CborValue | undefined {
  return lookup(meta, path);
}
export function hasMetaKey(meta: GlobalMetadata, path: string): boolean {
  return lookup(meta, path) !== undefined;
}
/** The value at `path` in `base[obj]` only. */
export function getMetaKeyAt(meta: GlobalMetadata, obj: number, path: string): CborValue | undefined {
  return lookup(meta, path, obj);
}
export function hasMetaKeyAt(meta: GlobalMetadata, obj: number, path: string): boolean {
  return lookup(meta, path, obj) !== undefined;
}

const asString = (v: CborValue | undefined) => (typeof v === "string" ? v : undefined);
const asBool = (v: CborValue | undefined) => (typeof v === "boolean" ? v : undefined);
// JavaScript cannot tell a CBOR float 850.0 from the integer 850.
const asInt = (v: CborValue | undefined) =>
  typeof v === "bigint" || (typeof v === "number" && Number.isInteger(v)) ? v : undefined;
const asFloat = (v: CborValue | undefined) =>
  typeof v === "number" ? v : typeof v === "bigint" ? Number(v) : undefined;

export const getMetaString = (meta: GlobalMetadata, path: string) => asString(lookup(meta, path));
export const getMetaInt = (meta: GlobalMetadata, path: string): number | bigint | undefined => asInt(lookup(meta, path));
export const getMetaFloat = (meta: GlobalMetadata, path: string) => asFloat(lookup(meta, path));
export const getMetaBool = (meta: GlobalMetadata, path: string) => asBool(lookup(meta, path));
export const getMetaStringAt = (meta: GlobalMetadata, obj: number, path: string) => asString(lookup(meta, path, obj));
export const getMetaIntAt = (meta: GlobalMetadata, obj: number, path: string): number | bigint | undefined =>
  asInt(lookup(meta, path, obj));
export const getMetaFloatAt = (meta: GlobalMetadata, obj: number, path: string) => asFloat(lookup(meta, path, obj));
export const getMetaBoolAt = (meta: GlobalMetadata, obj: number, path: string) => asBool(lookup(meta, path, obj));

/** Deep equality of metadata values (NaN equals NaN; a bigint equals the number of the same value). */
export function cborValuesEqual(a: CborValue, b: CborValue): boolean {
  if (typeof a === "number" && typeof b === "number") return a === b || (Number.isNaN(a) && Number.isNaN(b));
  if ((typeof a === "bigint" || typeof a === "number") && (typeof b === "bigint" || typeof b === "number")) {
    return Number.isInteger(Number(a)) && Number.isInteger(Number(b)) && BigInt(a) === BigInt(b);
  }
  if (a === null || b === null || typeof a !== "object" || typeof b !== "object") return a === b;
  if (a instanceof Uint8Array || b instanceof Uint8Array) {
    return a instanceof Uint8Array && b instanceof Uint8Array && a.length === b.length && a.every((x, i) => x === b[i]);
  }
  if (Array.isArray(a) || Array.isArray(b)) {
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((x, i) => cborValuesEqual(x, b[i]!));
  }
  const ka = Object.keys(a);
  if (ka.length !== Object.keys(b).length) return false;
  return ka.every((k) => Object.prototype.hasOwnProperty.call(b, k) && cborValuesEqual(a[k]!, b[k]!));
}

/** The keys whose values are equal in every `base[i]` (`_reserved_` ignored); `{}` without objects. */
export function computeCommon(meta: GlobalMetadata): Record<string, CborValue> {
  checkArgs(meta, "");
  const base = (Array.isArray(meta.base) ? meta.base : []).filter(isMap);
  const out: Record<string, CborValue> = {};
  if (base.length === 0) return out;
  for (const [k, v] of Object.entries(base[0]!)) {
    if (k === "_reserved_") continue;
    if (base.every((e: Map) => Object.prototype.hasOwnProperty.call(e, k) && cborValuesEqual(e[k]!, v))) out[k] = v;
  }
  return out;
}
