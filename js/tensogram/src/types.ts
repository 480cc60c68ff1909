// The records of the reference's package (spec 07 G.3, G.4).

import type { Dtype } from "./dtype.js";
import type { CborValue } from "./json.js";

export type BaseEntry = Record<string, CborValue>;

/** Message metadata: `base` (one entry per object), `_extra_`, `_reserved_`, plus `version` on decode. */
export interface GlobalMetadata {
  version?: number;
  base?: BaseEntry[];
  _extra_?: Record<string, CborValue>;
  _reserved_?: Record<string, CborValue>;
  [key: string]: CborValue | undefined;
}

/** One object's descriptor (spec 02 §4): the fixed keys plus codec parameters. */
export interface DataObjectDescriptor {
  type: string;
  ndim: number;
  shape: number[];
  strides: number[];
  dtype: Dtype;
  byte_order: "big" | "little";
  encoding: string;
  filter: string;
  compression: string;
  [param: string]: CborValue | undefined;
}

/**
 * A descriptor as given to `encode`: `shape` and `dtype` are required; `type`
 * (ntensor), `ndim`, `strides` (C order), `byte_order` (little, the
 * WebAssembly byte order) and `encoding`/`filter`/`compression` (none) are
 * filled in when absent.
 */
export type EncodeDescriptor = Partial<DataObjectDescriptor> & { shape: number[]; dtype: Dtype };

export type MaskMethod = "none" | "rle" | "roaring" | "lz4" | "zstd" | "blosc2";

export interface EncodeInput {
  descriptor: EncodeDescriptor;
  /** The raw elements in native (little-endian) order. */
  data: ArrayBufferView | { bits: Uint16Array } | { data: Float32Array | Float64Array };
}

export interface PreEncodedInput {
  descriptor: EncodeDescriptor;
  data: Uint8Array;
}

export interface EncodeOptions {
  hash?: "xxh3" | false;
  allowNan?: boolean;
  allowInf?: boolean;
  nanMaskMethod?: MaskMethod;
  posInfMaskMethod?: MaskMethod;
  negInfMaskMethod?: MaskMethod;
  smallMaskThresholdBytes?: number;
}

export interface EncodePreEncodedOptions {
  hash?: "xxh3" | false;
}

export interface DecodeOptions {
  /** Put NaN/Inf back where the masks say (default true). */
  restoreNonFinite?: boolean;
  /** Check every frame's xxh3 hash (default false). */
  verifyHash?: boolean;
}

export interface DecodeRangeOptions {
  /** One joined part instead of one per range. */
  join?: boolean;
}

export type RangePair = readonly [number | bigint, number | bigint];

export interface MessagePosition {
  offset: number;
  length: number;
}

export type HashAlgorithm = "xxh3";

export interface ValidateOptions {
  mode?: "quick" | "default" | "checksum" | "full";
  canonical?: boolean;
}

export interface SimplePackingParams {
  sp_reference_value: number;
  sp_binary_scale_factor: number;
  sp_decimal_scale_factor: number;
  sp_bits_per_value: number;
}
