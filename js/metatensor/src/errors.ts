// The error names of spec 06 (§2, §3, §4, §6, §8, §11), spelled as the C++
// library spells them (src/metatensor/error.cpp), plus the streaming codes
// of §10.6 that apply to range requests (MT_BAD_RANGE, MT_CANCELLED,
// MT_NOT_FOUND, MT_PROTOCOL_ERROR).

/** Every error name a MetatensorError can carry. */
export type ErrorCode =
  | "ST_HEADER_TOO_SMALL" | "ST_HEADER_TOO_LARGE" | "ST_HEADER_LENGTH" | "ST_HEADER_UTF8"
  | "ST_HEADER_JSON" | "ST_DUPLICATE_KEY" | "ST_METADATA" | "ST_ENTRY" | "ST_DTYPE" | "ST_OFFSETS"
  | "ST_SUBBYTE" | "ST_SIZE_MISMATCH" | "ST_OVERFLOW" | "ST_INCOMPLETE"
  | "MT_NOT_METATENSOR" | "MT_VERSION" | "MT_ENDIANNESS" | "MT_ALIGNMENT_VALUE" | "MT_SCHEMA_JSON"
  | "MT_LAYOUT_JSON" | "MT_LAYOUT_MISMATCH" | "MT_UNKNOWN_KEY" | "MT_SCHEMA_NAME" | "MT_TENSOR_SET"
  | "MT_PADDING" | "MT_MISALIGNED" | "MT_SCHEMA_DIALECT" | "MT_UNKNOWN_TYPEDEF" | "MT_SCHEMA_TYPE"
  | "MT_SCHEMA_UNSUPPORTED" | "MT_SHAPE" | "MT_TENSOR_DTYPE" | "MT_BLOB_BOUNDS" | "MT_BLOB_ALIGN"
  | "MT_BOOL" | "MT_UTF8" | "MT_NONZERO_PADDING" | "MT_VALUE" | "MT_LIMIT" | "MT_SCHEMA_INCOMPATIBLE"
  // Header schemas (docs/metatensor.md, an extension of §8).
  | "MT_HEADER_SCHEMA"
  // §10.6 codes used by remote reading, and misuse of the API.
  | "MT_BAD_RANGE" | "MT_CANCELLED" | "MT_NOT_FOUND" | "MT_PROTOCOL_ERROR" | "MT_INVALID_ARGUMENT";

/** A metatensor failure: `code` is the spec's error name, `message` reads "CODE: detail". */
export class MetatensorError extends Error {
  readonly code: ErrorCode;
  readonly detail: string;
  constructor(code: ErrorCode, detail: string, options?: { cause?: unknown }) {
    super(`${code}: ${detail}`, options);
    this.name = "MetatensorError";
    this.code = code;
    this.detail = detail;
  }
}

export function fail(code: ErrorCode, detail: string): never {
  throw new MetatensorError(code, detail);
}

/** JSON text of a name for messages: "w" */
export function quoted(s: string): string {
  return JSON.stringify(s);
}
