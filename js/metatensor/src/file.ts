// Opening safetensors and metatensor files from any ByteSource: the header
// is read and validated alone (spec 06 §8.1 structural validation, in the
// order of §8.2, as src/metatensor/view/file.cpp), tensors are fetched on
// demand, in parallel, each with one read of exactly its bytes (§9 laziness,
// §10.9), and their BlobRefs are checked before any view is handed out.
import { MetatensorError, fail, quoted } from "./errors.js";
import { compareUtf8, jsonEqual, parseStrictJson } from "./json.js";
import { SafetensorsHeader, TensorEntry, parseHeader, readHeaderLength } from "./safetensors.js";
import {
  CompiledSchema, TensorLayout, TypeLayout, compileSchema, heapName, heapPlacement, layoutTableJson,
  primaryDtype, primaryPlacement, trailingDim,
} from "./schema.js";
import { ByteSource, HttpOptions, Input, checkAbort, toSource } from "./source.js";
import { BlobTensor, FlatTensor, LogicalValue, RecordTensor, TensorView } from "./views.js";

export interface OpenOptions {
  /** Options of the http(s) source when `input` is a URL. */
  http?: HttpOptions;
  signal?: AbortSignal;
}

/** Reads and validates the base layer (§2) of a source: two reads (prefix, header). */
export async function readSafetensorsHeader(src: ByteSource, signal?: AbortSignal): Promise<SafetensorsHeader> {
  const first = await src.read(0, Math.min(8, src.size), signal);
  const n = readHeaderLength(first, src.size);
  const text = await src.read(8, n, signal);
  return parseHeader(text, src.size);
}

/** A safetensors file (metatensor or plain): header, metadata and raw tensor access. */
export class SafetensorsFile {
  private readonly cache = new Map<string, Promise<Uint8Array>>();
  constructor(readonly source: ByteSource, readonly header: SafetensorsHeader) {}

  /** `__metadata__` entries. */
  get metadata(): ReadonlyMap<string, string> {
    return this.header.metadata;
  }
  /** Physical tensors in data order. */
  get tensors(): readonly TensorEntry[] {
    return this.header.tensors;
  }
  get isMetatensor(): boolean {
    return this.header.metadata.has("metatensor.version");
  }
  entry(name: string): TensorEntry {
    const e = this.header.byName.get(name);
    if (!e) throw new MetatensorError("MT_NOT_FOUND", `no tensor ${quoted(name)}`);
    return e;
  }
  /** The bytes of a physical tensor: one read of exactly [abs(t), abs(t) + bytes(t)), cached. */
  tensorBytes(name: string, signal?: AbortSignal): Promise<Uint8Array> {
    const e = this.entry(name);
    let p = this.cache.get(name);
    if (!p) {
      p = this.source.read(this.header.dataOffset + e.begin, e.end - e.begin, signal);
      this.cache.set(name, p);
      p.catch(() => this.cache.delete(name)); // a failed or cancelled read may be retried
    }
    return p;
  }
  /** A physical tensor as a typed view (raw bits for F16/BF16/F8, C64 as float pairs). */
  async tensor(name: string, signal?: AbortSignal): Promise<FlatTensor> {
    const e = this.entry(name);
    return new FlatTensor(name, e.dtype, e.shape, await this.tensorBytes(name, signal));
  }
  async close(): Promise<void> {
    await this.source.close?.();
  }
}

interface Logical {
  layout: TensorLayout;
  primary: TensorEntry;
  heap?: TensorEntry;
  dims: number[];
  count: number;
}

// §3.1: decimal, no sign, no leading zeros, a power of two in [16, 65536].
function parseAlignment(s: string): number | undefined {
  if (!/^[1-9][0-9]{0,5}$/.test(s)) return undefined;
  const a = Number(s);
  return a >= 16 && a <= 65536 && (a & (a - 1)) === 0 ? a : undefined;
}

const RESERVED = new Set(["metatensor.version", "metatensor.endianness", "metatensor.alignment", "metatensor.schema", "metatensor.layout"]);
const PAD = "__pad__";

/** A validated metatensor file: logical tensors as typed views, fetched lazily. */
export class MetatensorFile extends SafetensorsFile {
  readonly alignment: number;
  readonly schema: CompiledSchema;
  readonly layoutTable: Record<string, unknown>;
  private readonly logical = new Map<string, Logical>();
  private readonly checked = new Set<string>();

  constructor(source: ByteSource, header: SafetensorsHeader) {
    super(source, header);
    const md = header.metadata;
    // Step 2: §3.1 keys in table order.
    const version = md.get("metatensor.version");
    if (version === undefined) {
      fail("MT_NOT_METATENSOR", header.hasMetadata ? '__metadata__ has no "metatensor.version" key' : "the header has no __metadata__");
    }
    if (version !== "1") fail("MT_VERSION", `metatensor.version is ${quoted(version)}, expected "1"`);
    const endianness = md.get("metatensor.endianness");
    if (endianness === undefined) fail("MT_ENDIANNESS", "metatensor.endianness is missing");
    if (endianness !== "little") fail("MT_ENDIANNESS", `metatensor.endianness is ${quoted(endianness)}, expected "little"`);
    const alignment = md.get("metatensor.alignment");
    if (alignment === undefined) fail("MT_ALIGNMENT_VALUE", "metatensor.alignment is missing");
    const a = parseAlignment(alignment);
    if (a === undefined) fail("MT_ALIGNMENT_VALUE", `metatensor.alignment is ${quoted(alignment)}, expected a power of two from 16 to 65536 in plain decimal`);
    this.alignment = a;
    const schemaText = md.get("metatensor.schema");
    if (schemaText === undefined) fail("MT_SCHEMA_JSON", "metatensor.schema is missing");
    const schemaDoc = parseStrictJson(schemaText, { syntax: "MT_SCHEMA_JSON", duplicate: "MT_SCHEMA_JSON", what: "schema" });
    const layoutText = md.get("metatensor.layout");
    if (layoutText === undefined) fail("MT_LAYOUT_JSON", "metatensor.layout is missing");
    const table = parseStrictJson(layoutText, { syntax: "MT_LAYOUT_JSON", duplicate: "MT_LAYOUT_JSON", what: "layout table" });
    for (const k of md.keys()) {
      if (k.startsWith("metatensor.") && !RESERVED.has(k)) fail("MT_UNKNOWN_KEY", `unknown reserved __metadata__ key ${quoted(k)}`);
    }
    // Step 3: the schema and the layout it implies.
    this.schema = compileSchema(schemaDoc, "embedded"); // §4.3: a file's schema is read strictly
    for (const t of header.tensors) {
      const l = this.schema.find(t.name);
      if (!l) continue;
      const heap = l.hasHeap ? header.byName.get(heapName(l)) : undefined;
      this.logical.set(t.name, { layout: l, primary: t, heap, dims: [], count: 0 });
    }
    // Step 4: layout table equality (§7).
    const names = [...this.logical.keys()];
    const expected = layoutTableJson(this.schema, names, a);
    if (!jsonEqual(expected, table)) fail("MT_LAYOUT_MISMATCH", "metatensor.layout differs from the layout recomputed from the schema");
    this.layoutTable = table as Record<string, unknown>;
    this.checkTensorSet();
    this.checkDtypesAndShapes();
    this.checkPlacement();
  }

  // Step 5: exactly primaries + heaps + __pad__<j> (§3.2), required present.
  private checkTensorSet(): void {
    let nextPad = 0;
    for (const t of this.header.tensors) {
      const name = t.name;
      if (this.logical.has(name)) continue;
      if (name.endsWith("#heap")) {
        const owner = this.logical.get(name.slice(0, -5));
        if (owner && owner.layout.hasHeap) continue;
        fail("MT_TENSOR_SET", `physical tensor ${quoted(name)} is not the heap of a logical tensor with one`);
      }
      if (name.startsWith(PAD)) {
        if (name !== PAD + nextPad) fail("MT_TENSOR_SET", `padding tensor ${quoted(name)} at data offset ${t.begin} should be named "__pad__${nextPad}"`);
        nextPad++;
        continue;
      }
      fail("MT_TENSOR_SET", `physical tensor ${quoted(name)} is not a root property of the schema`);
    }
    for (const [name, lt] of this.sortedLogical()) {
      if (lt.layout.hasHeap && !lt.heap) fail("MT_TENSOR_SET", `logical tensor ${quoted(name)} has no heap tensor ${quoted(name + "#heap")}`);
    }
    for (const name of [...this.schema.required].sort(compareUtf8)) {
      if (!this.logical.has(name)) fail("MT_TENSOR_SET", `required logical tensor ${quoted(name)} is missing`);
    }
  }

  // Step 6: §5.1 dtypes and shapes.
  private checkDtypesAndShapes(): void {
    for (const [name, lt] of this.sortedLogical()) {
      const l = lt.layout;
      const p = lt.primary;
      if (p.dtype !== primaryDtype(l)) fail("MT_TENSOR_DTYPE", `tensor ${quoted(name)} has dtype ${p.dtype}, the schema needs ${primaryDtype(l)}`);
      const trailing = trailingDim(l);
      const want = l.dims.length + (trailing !== undefined ? 1 : 0);
      if (p.shape.length !== want) fail("MT_SHAPE", `tensor ${quoted(name)} has rank ${p.shape.length}, the schema needs ${want}`);
      if (trailing !== undefined && p.shape[p.shape.length - 1] !== trailing) {
        fail("MT_SHAPE", `tensor ${quoted(name)} has trailing dimension ${p.shape[p.shape.length - 1]}, the ${l.kind === "blob" ? "BlobRef size is " : "record size is "}${trailing}`);
      }
      l.dims.forEach((b, i) => {
        const d = p.shape[i]!;
        if (d < b.min || (b.max !== undefined && d > b.max)) {
          fail("MT_SHAPE", `tensor ${quoted(name)} dimension ${i} is ${d}, the schema allows ${b.min}..${b.max ?? "unbounded"}`);
        }
      });
      lt.dims = p.shape.slice(0, l.dims.length);
      lt.count = lt.dims.reduce((x, y) => x * y, 1);
      if (lt.heap) {
        if (lt.heap.dtype !== "U8") fail("MT_TENSOR_DTYPE", `heap ${quoted(lt.heap.name)} has dtype ${lt.heap.dtype}, expected U8`);
        if (lt.heap.shape.length !== 1) fail("MT_SHAPE", `heap ${quoted(lt.heap.name)} has rank ${lt.heap.shape.length}, expected 1`);
      }
    }
  }

  private sortedLogical(): [string, Logical][] {
    return [...this.logical].sort((x, y) => compareUtf8(x[0], y[0]));
  }

  private placement(t: TensorEntry): number {
    const lt = this.logical.get(t.name);
    if (lt) return primaryPlacement(lt.layout, this.alignment);
    return heapPlacement(this.logical.get(t.name.slice(0, -5))!.layout, this.alignment);
  }

  // Step 7: §3.3 padding tensors, §3.4 header length, §6.6 placement.
  private checkPlacement(): void {
    const ts = this.header.tensors;
    const d = this.header.dataOffset;
    ts.forEach((p, i) => {
      if (!p.name.startsWith(PAD)) return;
      if (p.dtype !== "U8" || p.shape.length !== 1 || p.shape[0] === 0) fail("MT_PADDING", `padding tensor ${quoted(p.name)} must be U8 of shape [k] with k >= 1`);
      let j = i + 1;
      while (j < ts.length && ts[j]!.begin === ts[j]!.end) j++;
      if (j === ts.length) fail("MT_PADDING", `padding tensor ${quoted(p.name)} ends the file`);
      const next = ts[j]!;
      if (next.name.startsWith(PAD)) fail("MT_PADDING", `padding tensor ${quoted(p.name)} is followed by padding tensor ${quoted(next.name)}`);
      const r = this.placement(next);
      const abs = d + p.begin;
      const want = Math.ceil(abs / r) * r - abs;
      if (want === 0) fail("MT_PADDING", `padding tensor ${quoted(p.name)} at file offset ${abs} is not needed: ${quoted(next.name)} needs alignment ${r}`);
      if (p.shape[0] !== want) fail("MT_PADDING", `padding tensor ${quoted(p.name)} is ${p.shape[0]} bytes, ${quoted(next.name)} needs exactly ${want} to reach alignment ${r}`);
    });
    if (d % this.alignment !== 0) fail("MT_MISALIGNED", `data section starts at file offset ${d}, not a multiple of A = ${this.alignment}`);
    for (const t of ts) {
      if (t.name.startsWith(PAD)) continue;
      const r = this.placement(t);
      if (t.begin === t.end) continue;
      if ((d + t.begin) % r !== 0) fail("MT_MISALIGNED", `tensor ${quoted(t.name)} starts at file offset ${d + t.begin}, not a multiple of its alignment ${r}`);
    }
  }

  /** Logical tensor names present in the file, byte-wise sorted. */
  get names(): string[] {
    return [...this.logical.keys()].sort(compareUtf8);
  }
  has(name: string): boolean {
    return this.logical.has(name);
  }
  private get_(name: string): Logical {
    const lt = this.logical.get(name);
    if (!lt) throw new MetatensorError("MT_NOT_FOUND", `no logical tensor ${quoted(name)}`);
    return lt;
  }
  layout(name: string): TensorLayout {
    return this.get_(name).layout;
  }
  /** Logical dims (§5.1). */
  dims(name: string): readonly number[] {
    return this.get_(name).dims;
  }
  /** User metadata: `__metadata__` keys not starting with "metatensor.". */
  get userMetadata(): Map<string, string> {
    return new Map([...this.metadata].filter(([k]) => !k.startsWith("metatensor.")));
  }

  // Bytes of a physical tensor, copied into an aligned buffer when an
  // in-memory image is not aligned to what views need (§9).
  private async aligned(name: string, align: number, signal?: AbortSignal): Promise<Uint8Array> {
    const b = await this.tensorBytes(name, signal);
    if (b.byteOffset % align === 0) return b;
    const c = new Uint8Array(b.byteLength);
    c.set(b);
    return c;
  }

  /**
   * A logical tensor as a typed view. Fetches the primary and (if any) the
   * heap in parallel, each with one read of exactly its bytes, and checks
   * its BlobRefs (§6.4) before returning.
   */
  async get(name: string, options: { signal?: AbortSignal } = {}): Promise<TensorView> {
    const lt = this.get_(name);
    const l = lt.layout;
    const signal = options.signal;
    checkAbort(signal);
    if (l.kind === "flat") {
      const bytes = await this.tensorBytes(name, signal);
      checkAbort(signal);
      return new FlatTensor(name, l.dtype!, lt.dims, bytes);
    }
    const align = l.kind === "struct" ? l.record!.align : 8;
    const heapAlign = heapPlacement(l, 1);
    const [primary, heap] = await Promise.all([
      this.aligned(name, align, signal),
      lt.heap ? this.aligned(lt.heap.name, heapAlign, signal) : Promise.resolve(new Uint8Array(0)),
    ]);
    checkAbort(signal);
    this.checkBlobRefs(name, lt, primary, heap);
    return l.kind === "struct" ? new RecordTensor(name, l.record!, lt.dims, primary, heap) : new BlobTensor(name, l.item!, lt.dims, primary, heap);
  }

  async flat(name: string, options: { signal?: AbortSignal } = {}): Promise<FlatTensor> {
    const v = await this.get(name, options);
    if (v.kind !== "flat") fail("MT_INVALID_ARGUMENT", `${quoted(name)} is a ${v.kind} tensor, not flat`);
    return v;
  }
  async records(name: string, options: { signal?: AbortSignal } = {}): Promise<RecordTensor> {
    const v = await this.get(name, options);
    if (v.kind !== "struct") fail("MT_INVALID_ARGUMENT", `${quoted(name)} is a ${v.kind} tensor, not struct`);
    return v;
  }
  async blobs(name: string, options: { signal?: AbortSignal } = {}): Promise<BlobTensor> {
    const v = await this.get(name, options);
    if (v.kind !== "blob") fail("MT_INVALID_ARGUMENT", `${quoted(name)} is a ${v.kind} tensor, not blob`);
    return v;
  }
  /** Several logical tensors in parallel (all tensors when `names` is omitted). */
  async load(names: readonly string[] = this.names, options: { signal?: AbortSignal } = {}): Promise<Map<string, TensorView>> {
    const views = await Promise.all(names.map((n) => this.get(n, options)));
    return new Map(names.map((n, i) => [n, views[i]!]));
  }
  /** The §8.3 logical value of the file (or of the named tensors). */
  async value(names: readonly string[] = this.names, options: { signal?: AbortSignal } = {}): Promise<Record<string, LogicalValue>> {
    const views = await this.load(names, options);
    const out: Record<string, LogicalValue> = {};
    for (const [n, v] of views) Object.defineProperty(out, n, { value: v.value(), enumerable: true, writable: true, configurable: true });
    return out;
  }

  // Step 8: every BlobRef inside its heap, List blobs aligned (§6.4).
  private checkBlobRefs(name: string, lt: Logical, primary: Uint8Array, heap: Uint8Array): void {
    if (!lt.heap || this.checked.has(name)) return;
    const H = BigInt(heap.byteLength);
    const dv = new DataView(primary.buffer, primary.byteOffset, primary.byteLength);
    const check = (where: string, p: number, t: TypeLayout) => {
      const off = dv.getBigUint64(p, true);
      const len = dv.getBigUint64(p + 8, true);
      if (len > H || off > H - len) fail("MT_BLOB_BOUNDS", `${where}: blob [offset ${off}, length ${len}] exceeds the heap of ${H} bytes`);
      if (t.type === "list" && t.elem) {
        const size = BigInt(t.elem.size);
        if (size === 0n || len % size !== 0n) fail("MT_BLOB_ALIGN", `${where}: list blob length ${len} is not a multiple of the element size ${size}`);
        if (off % BigInt(t.elem.align) !== 0n) fail("MT_BLOB_ALIGN", `${where}: list blob offset ${off} is not a multiple of the element alignment ${t.elem.align}`);
      }
    };
    const l = lt.layout;
    if (l.kind === "blob") {
      for (let i = 0; i < lt.count; i++) check(`${quoted(name)} element ${i}`, i * 16, l.item!);
    } else {
      const slots = blobSlots(l.record!.fields.map((f) => ({ offset: f.offset, type: f.type })));
      const rec = l.record!.size;
      for (let i = 0; i < lt.count; i++) {
        for (const s of slots) check(`${quoted(name)} record ${i} at byte ${s.offset}`, i * rec + s.offset, s.type);
      }
    }
    this.checked.add(name);
  }
}

/** Byte offsets (within a record) of every BlobRef, fixed arrays and nested records expanded. */
export function blobSlots(fields: { offset: number; type: TypeLayout }[]): { offset: number; type: TypeLayout }[] {
  const out: { offset: number; type: TypeLayout }[] = [];
  const visit = (t: TypeLayout, at: number) => {
    const n = t.shape.reduce((x, y) => x * y, 1);
    const esize = t.size / n;
    for (let i = 0; i < n; i++) {
      const p = at + i * esize;
      if (t.type === "string" || t.type === "list") out.push({ offset: p, type: { ...t, shape: [], size: 16 } });
      else if (t.type === "record") for (const f of t.record!.fields) visit(f.type, p + f.offset);
    }
  };
  for (const f of fields) visit(f.type, f.offset);
  return out;
}

/** Opens a file and validates its header: a MetatensorFile, or a SafetensorsFile for plain safetensors files. */
export async function open(input: Input, options: OpenOptions = {}): Promise<MetatensorFile | SafetensorsFile> {
  const src = await toSource(input, options.http);
  const header = await readSafetensorsHeader(src, options.signal);
  if (!header.metadata.has("metatensor.version")) return new SafetensorsFile(src, header);
  return new MetatensorFile(src, header);
}

/** Opens a metatensor file (MT_NOT_METATENSOR for a plain safetensors file). */
export async function openMetatensor(input: Input, options: OpenOptions = {}): Promise<MetatensorFile> {
  const src = await toSource(input, options.http);
  return new MetatensorFile(src, await readSafetensorsHeader(src, options.signal));
}

/** Opens any safetensors file for raw tensor access. */
export async function openSafetensors(input: Input, options: OpenOptions = {}): Promise<SafetensorsFile> {
  const src = await toSource(input, options.http);
  return new SafetensorsFile(src, await readSafetensorsHeader(src, options.signal));
}

