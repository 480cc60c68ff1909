// The forms schema builders (TypeBox) emit, rewritten into the dialect
// (spec 06 §4.3 "Normalisation", §4.6; docs/metatensor.md "Schemas from
// TypeBox"), by the same rules as the C++ `normalize_builder_schema`
// (src/metatensor/schema/builder_forms.cpp):
//
//  * a draft-07 tuple, `"items": [s0, ...]` with `additionalItems`, becomes
//    `"prefixItems": [s0, ...]` with `"items"` taking the place of
//    `additionalItems` (`false` closes the tuple; absent or `true` leaves it
//    open, the draft-07 meaning); a node that already has `prefixItems` is
//    left alone;
//  * a root that is a bare `$ref` (TypeBox `Type.Module({...}).Import("X")`
//    emits `{"$defs": {...}, "$ref": "X"}`) takes the members of the schema
//    it designates (all but its `$id`); `$defs` stays, so references to the
//    definition still resolve there.
//
// Only subschema locations are rewritten (never `const`, `enum`, `default`
// or `examples` values); everything else is left for the dialect checks.
// Schemas *authored* in code or read from a schema file go through this; a
// file's embedded `metatensor.schema` does not (it is read strictly, §4.3).
import { hasOwn, isObject } from "./json.js";
import { MAX_SCHEMA_DEPTH } from "./schema.js";

const SINGLE = ["items", "not", "if", "then", "else", "contains", "additionalItems", "additionalProperties"];
const ARRAYS = ["prefixItems", "allOf", "anyOf", "oneOf", "items"];
const OBJECTS = ["properties", "$defs"];

/** A plain JSON copy: symbol keys (TypeBox kinds) and `undefined` members dropped, `__proto__` kept as data. */
export function plainJson(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(plainJson);
  if (!isObject(v)) return v;
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(v)) {
    if (v[k] === undefined) continue;
    Object.defineProperty(out, k, { value: plainJson(v[k]), enumerable: true, writable: true, configurable: true });
  }
  return out;
}

function set(o: Record<string, unknown>, k: string, v: unknown): void {
  Object.defineProperty(o, k, { value: v, enumerable: true, writable: true, configurable: true });
}

function rewriteTuple(node: Record<string, unknown>): void {
  if (!Array.isArray(node["items"]) || hasOwn(node, "prefixItems")) return;
  const prefix = node["items"] as unknown[];
  delete node["items"];
  let rest: unknown = true; // draft 07: no `additionalItems` allows any further item
  if (hasOwn(node, "additionalItems")) {
    rest = node["additionalItems"];
    delete node["additionalItems"];
  }
  if (prefix.length > 0) set(node, "prefixItems", prefix);
  if (rest !== true) set(node, "items", rest);
}

// The depth bound keeps a hostile document from exhausting the stack (the
// dialect check reports the nesting itself, §8.4).
function rewriteTuples(node: unknown, level: number): void {
  if (!isObject(node) || level > MAX_SCHEMA_DEPTH + 1) return;
  rewriteTuple(node);
  for (const k of SINGLE) if (hasOwn(node, k) && isObject(node[k])) rewriteTuples(node[k], level + 1);
  for (const k of ARRAYS) if (hasOwn(node, k) && Array.isArray(node[k])) for (const sub of node[k] as unknown[]) rewriteTuples(sub, level + 1);
  for (const k of OBJECTS) {
    const o = hasOwn(node, k) ? node[k] : undefined;
    if (isObject(o)) for (const name of Object.keys(o)) rewriteTuples(o[name], level + 1);
  }
}

function findIds(node: unknown, id: string, level: number, out: Record<string, unknown>[]): void {
  if (!isObject(node) || level > MAX_SCHEMA_DEPTH + 1) return;
  if (level > 1 && node["$id"] === id) out.push(node);
  for (const k of SINGLE) if (hasOwn(node, k)) findIds(node[k], id, level + 1, out);
  for (const k of ARRAYS) if (hasOwn(node, k) && Array.isArray(node[k])) for (const sub of node[k] as unknown[]) findIds(sub, id, level + 1, out);
  for (const k of OBJECTS) {
    const o = hasOwn(node, k) ? node[k] : undefined;
    if (isObject(o)) for (const name of Object.keys(o)) findIds(o[name], id, level + 1, out);
  }
}

// §4.3: a JSON Pointer fragment, or exactly one subschema's `$id`.
function rootTarget(root: Record<string, unknown>, ref: string): unknown {
  if (ref.startsWith("#")) {
    let fragment: string;
    try {
      fragment = decodeURIComponent(ref.slice(1));
    } catch {
      return undefined;
    }
    if (fragment === "" || !fragment.startsWith("/")) return undefined; // "#" is the root itself: a cycle
    let at: unknown = root;
    for (const raw of fragment.slice(1).split("/")) {
      const tok = raw.replace(/~1/g, "/").replace(/~0/g, "~");
      if (Array.isArray(at) && /^(0|[1-9][0-9]*)$/.test(tok) && Number(tok) < at.length) at = at[Number(tok)];
      else if (isObject(at) && hasOwn(at, tok)) at = at[tok];
      else return undefined;
    }
    return at;
  }
  const found: Record<string, unknown>[] = [];
  findIds(root, ref, 1, found);
  return found.length === 1 ? found[0] : undefined;
}

function inlineRootRef(root: Record<string, unknown>): Record<string, unknown> | undefined {
  const ref = root["$ref"];
  if (typeof ref !== "string" || hasOwn(root, "properties") || hasOwn(root, "type")) return undefined;
  const target = rootTarget(root, ref);
  if (!isObject(target) || target === root) return undefined;
  const merged: Record<string, unknown> = {};
  for (const k of Object.keys(root)) if (k !== "$ref") set(merged, k, root[k]);
  for (const k of Object.keys(target)) {
    if (k === "$id") continue; // the definition keeps its `$id`: references to it still resolve there
    if (hasOwn(merged, k)) return undefined;
    set(merged, k, plainJson(target[k]));
  }
  return merged;
}

/**
 * Rewrites TypeBox's draft-07 tuples and module roots into the dialect
 * (docs/metatensor.md "Schemas from TypeBox"); returns a plain JSON copy and
 * judges nothing (compile the result to check it).
 */
export function normalizeBuilderSchema(document: unknown): unknown {
  let doc = plainJson(document);
  rewriteTuples(doc, 1);
  // A chain of root references (a module importing an alias) is followed a
  // bounded number of times; a cycle is left for the dialect check (§4.3).
  for (let hop = 0; hop < MAX_SCHEMA_DEPTH && isObject(doc); ++hop) {
    const next = inlineRootRef(doc);
    if (!next) break;
    doc = next;
  }
  return doc;
}
