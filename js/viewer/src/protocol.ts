// Messages between the page and the decoding worker (worker.ts). Every
// request carries an id; the worker answers each with exactly one reply of
// the same id, `ok: false` with a human-readable message on failure.

/** One data object of a .tgm file, as listed in the field browser. */
export interface FieldEntry {
  msg: number;
  obj: number;
  name: string;
  shape: number[];
  dtype: string;
  /** The object's `base[i]` without `_reserved_`. */
  meta: Record<string, unknown>;
  /** True for coordinate objects (latitude, longitude, level, time...). */
  coordinate: boolean;
}

export interface TgmIndex {
  format: "tgm";
  messages: number;
  fields: FieldEntry[];
  /** Messages that could not be read (shown in the page, the rest stays usable). */
  warnings: string[];
  /** What opening read: reads, bytes, the largest read. */
  reads: ReadStats;
}

/** Reads made by the worker (through TensogramFile), for diagnostics and tests. */
export interface ReadStats {
  reads: number;
  bytes: number;
  largest: number;
}

export interface MtTensor {
  name: string;
  kind: "flat" | "records" | "blobs" | "raw";
  shape: number[];
  dtype: string;
  /** Column names of a record (struct) tensor. */
  columns?: string[];
}

export interface MtIndex {
  format: "metatensor" | "safetensors";
  tensors: MtTensor[];
  metadata: Record<string, string>;
}

export type FileIndex = TgmIndex | MtIndex;

/** Coordinates found in the message of a field: 1-D axes or per-point arrays. */
export interface CoordArrays {
  lat: Float64Array;
  lon: Float64Array;
}

export interface FieldData {
  shape: number[];
  values: Float32Array;
  coords?: CoordArrays;
  /** What showing it read (zero when it was cached). */
  reads?: ReadStats;
}

export interface MtFlat {
  shape: number[];
  values: Float64Array;
}

export interface MtPage {
  total: number;
  columns: string[];
  rows: string[][];
}

export type Request =
  | { id: number; kind: "open"; input: Blob | string; name: string }
  | { id: number; kind: "field"; msg: number; obj: number }
  | { id: number; kind: "point"; frames: { msg: number; obj: number }[]; index: number }
  | { id: number; kind: "mt-flat"; name: string }
  | { id: number; kind: "mt-page"; name: string; start: number; count: number };

export type Reply =
  | { id: number; ok: true; value: unknown }
  | { id: number; ok: false; error: string };

/** Largest decoded object the viewer accepts (elements); beyond it a message says why. */
export const ELEMENT_BUDGET = 64 * 1024 * 1024;
