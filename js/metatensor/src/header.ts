// Header schemas, "a model is one struct" (docs/metatensor.md "Header
// schemas", an extension of spec 06; the same rule as the C++
// metatensor/header_schema.hpp): the safetensors header grouped by dotted
// tensor names (`conv1.weight` is the member `weight` of the member `conv1`)
// and validated by the JSON Schema evaluator; the same grouping gives typed
// access to the validated file (`model.conv1.weight`).
import { MetatensorError, quoted } from "./errors.js";
import { Failure, evaluate } from "./evaluate.js";
import { normalizeBuilderSchema } from "./builder.js";
import { parseStrictJson } from "./json.js";
import { TensorEntry } from "./safetensors.js";
import { dialectTable } from "./schema.js";
import type { SafetensorsFile } from "./file.js";
import type { FlatTensor } from "./views.js";

/**
 * A schema document read as the C++ `json_schema_evaluator` reads it: the
 * TypeBox forms are rewritten first (builder.ts), then the dialect checks of
 * §4.1–§4.3 and §8.4 run once (MT_SCHEMA_DIALECT, MT_LIMIT, ...).
 */
export class JsonSchemaEvaluator {
  /** The rewritten document (plain JSON Schema 2020-12). */
  readonly document: unknown;
  private readonly table: ReturnType<typeof dialectTable>;
  constructor(document: unknown) {
    this.document = normalizeBuilderSchema(document);
    this.table = dialectTable(this.document);
  }
  /**
   * The first violation of `value` (JSON Pointer, keyword, message), or
   * undefined when valid; the message ends with the schema location, as the
   * C++ (`... (schema location /properties/a)`).
   */
  validate(value: unknown): Failure | undefined {
    const f = evaluate(this.document, value, this.table.resolve);
    if (!f) return undefined;
    const where = f.schema ? this.table.pointerOf(f.schema) : undefined;
    return where === undefined ? f : { ...f, message: `${f.message} (${where === "" ? "schema root" : `schema location ${where}`})` };
  }
}

/** A schema of the safetensors header itself, whose leaves are TensorRef objects `{dtype, shape, data_offsets}`. */
export class HeaderSchema extends JsonSchemaEvaluator {
  /** Parses schema text strictly (§3.1, MT_SCHEMA_JSON) and reads it. */
  static fromText(text: string): HeaderSchema {
    return new HeaderSchema(parseStrictJson(text, { syntax: "MT_SCHEMA_JSON", duplicate: "MT_SCHEMA_JSON", what: "header schema" }));
  }
}

// §3.3: padding tensors exist only to align the next tensor; a header schema
// describes the tensors a user wrote.
const PAD = "__pad__";

/** A node of the grouped header: one tensor, or a group of members (the root is the group ""). */
export class TensorGroup {
  /** @internal */
  readonly children = new Map<string, TensorGroup>();
  /** @internal */
  tensorEntry: TensorEntry | undefined;
  /** @internal */
  constructor(readonly file: SafetensorsFile, readonly name: string) {}

  get isTensor(): boolean {
    return this.tensorEntry !== undefined;
  }
  has(member: string): boolean {
    return this.children.has(member);
  }
  /** Member names, in the order of the header. */
  members(): string[] {
    return [...this.children.keys()];
  }
  /** The member `member`; MT_NOT_FOUND when there is none. */
  get(member: string): TensorGroup {
    const g = this.children.get(member);
    if (!g) throw new MetatensorError("MT_NOT_FOUND", `no tensor or group ${quoted(this.name === "" ? member : `${this.name}.${member}`)} in the file`);
    return g;
  }
  /** The member at a dotted path ("conv1.weight"), from this group. */
  at(dotted: string): TensorGroup {
    return dotted.split(".").reduce<TensorGroup>((g, m) => g.get(m), this);
  }
  /** The header entry of this tensor; MT_INVALID_ARGUMENT for a group. */
  entry(): TensorEntry {
    if (!this.tensorEntry) {
      throw new MetatensorError("MT_INVALID_ARGUMENT", `${this.name === "" ? "the root" : quoted(this.name)} is a group of tensors, not a tensor`);
    }
    return this.tensorEntry;
  }
  /** This tensor as a typed view (one read of its bytes). */
  tensor(options: { signal?: AbortSignal } = {}): Promise<FlatTensor> {
    return this.file.tensor(this.entry().name, options.signal);
  }
  /** Every tensor at or below this node. */
  tensors(): TensorEntry[] {
    const out: TensorEntry[] = [];
    const collect = (g: TensorGroup): void => {
      if (g.tensorEntry) out.push(g.tensorEntry);
      for (const c of g.children.values()) collect(c);
    };
    collect(this);
    return out;
  }
  /**
   * Every tensor at or below this node fetched (in parallel) as a typed view,
   * nested as the groups: `(await model.load()).conv1.weight.data`.
   */
  async load<T = Grouped>(options: { signal?: AbortSignal } = {}): Promise<T> {
    const build = async (g: TensorGroup): Promise<Grouped | FlatTensor> => {
      if (g.tensorEntry) return g.tensor(options);
      const names = [...g.children.keys()];
      const values = await Promise.all(names.map((n) => build(g.children.get(n)!)));
      const out: Grouped = {};
      names.forEach((n, i) => Object.defineProperty(out, n, { value: values[i], enumerable: true, writable: true, configurable: true }));
      return out;
    };
    return (await build(this)) as T;
  }
  /** The header entries as the header schema sees them: `{dtype, shape, data_offsets}` leaves. */
  toJSON(): unknown {
    if (this.tensorEntry) {
      const e = this.tensorEntry;
      return { dtype: e.dtype, shape: [...e.shape], data_offsets: [e.begin, e.end] };
    }
    const out: Record<string, unknown> = {};
    for (const [k, g] of this.children) Object.defineProperty(out, k, { value: g.toJSON(), enumerable: true, writable: true, configurable: true });
    return out;
  }
}

/** Loaded groups: members are groups or typed views. */
export interface Grouped {
  [member: string]: Grouped | FlatTensor;
}

/**
 * The header grouped by dotted names (every `.` splits, every part, even an
 * empty one, is a member name). A name that is both a tensor and a group is
 * MT_HEADER_SCHEMA; `__metadata__` and, in a metatensor file, the `__pad__`
 * tensors are not part of it.
 */
export function groupTensors(file: SafetensorsFile): TensorGroup {
  const root = new TensorGroup(file, "");
  const skipPadding = file.isMetatensor;
  for (const t of file.tensors) {
    if (skipPadding && t.name.startsWith(PAD)) continue;
    const tokens = t.name.split(".");
    let at = root;
    tokens.forEach((tok, i) => {
      if (at.tensorEntry) {
        throw new MetatensorError("MT_HEADER_SCHEMA", `tensor ${quoted(at.name)} is also the group of ${quoted(t.name)} (dotted names nest)`);
      }
      let next = at.children.get(tok);
      if (!next) {
        next = new TensorGroup(file, tokens.slice(0, i + 1).join("."));
        at.children.set(tok, next);
      }
      at = next;
    });
    if (at.tensorEntry || at.children.size > 0) {
      throw new MetatensorError("MT_HEADER_SCHEMA", `tensor ${quoted(t.name)} is also a group of other tensors (dotted names nest)`);
    }
    at.tensorEntry = t;
  }
  return root;
}

/** The grouped header as JSON (what a header schema validates). */
export function groupedHeader(file: SafetensorsFile): unknown {
  return groupTensors(file).toJSON();
}

function pointerTokens(p: string): string[] {
  return p === "" ? [] : p.slice(1).split("/").map((t) => t.replace(/~1/g, "/").replace(/~0/g, "~"));
}

/**
 * Validates the file's grouped header against a header schema (a
 * HeaderSchema, or a schema document such as TypeBox emits) and returns the
 * grouping for typed access. The first violation is MT_HEADER_SCHEMA naming
 * the tensor by its dotted name and the JSON Pointer of the value, as the C++:
 * `tensor "conv1.bias" (/conv1/bias/dtype): ...`, `"conv2.running_var" is
 * missing (/conv2): ...`, `group "conv3" (/conv3): member "conv3" is not listed in "properties"`.
 */
export function validateHeader(file: SafetensorsFile, schema: HeaderSchema | unknown): TensorGroup {
  const s = schema instanceof JsonSchemaEvaluator ? schema : new HeaderSchema(schema);
  const root = groupTensors(file);
  const v = s.validate(root.toJSON());
  if (!v) return root;
  // Name what failed by its dotted name: follow the pointer down the groups
  // until it reaches a tensor (the rest of the pointer is inside its entry).
  let at = root;
  for (const tok of pointerTokens(v.pointer)) {
    if (at.isTensor || !at.has(tok)) break;
    at = at.get(tok);
  }
  let subject: string;
  if (v.keyword === "required" && !at.isTensor) subject = `${quoted(at.name === "" ? v.member! : `${at.name}.${v.member!}`)} is missing`;
  else if (at.isTensor) subject = `tensor ${quoted(at.name)}`;
  else if (at.name !== "") subject = `group ${quoted(at.name)}`;
  else subject = "the header";
  throw new MetatensorError("MT_HEADER_SCHEMA", `${subject} (${v.pointer === "" ? "/" : v.pointer}): ${v.message}`);
}
