// @tensogram/tensogram: the reference's TypeScript API (spec 07 Part G) over
// our C++ core compiled to WebAssembly (docs/wasm.md).

export { init, type InitOptions } from "./init.js";
export {
  WIRE_VERSION, encode, encodePreEncoded, decode, decodeObject, decodeMetadata, decodeRange, scan, computeHash,
  validate, validateBuffer, validateFile, doctor, simplePackingComputeParams,
  type DecodedMessage, type DecodedObject, type DecodeRangeResult, type ValidationReport, type FileIssue,
  type FileValidationReport,
} from "./api.js";
export {
  getMetaKey, hasMetaKey, getMetaKeyAt, hasMetaKeyAt, getMetaString, getMetaInt, getMetaFloat, getMetaBool,
  getMetaStringAt, getMetaIntAt, getMetaFloatAt, getMetaBoolAt, computeCommon, cborValuesEqual,
} from "./metadata.js";
export * from "./errors.js";
export {
  DTYPE_BYTE_WIDTH, SUPPORTED_DTYPES, isDtype, shapeElementCount, payloadByteSize, typedArrayFor,
  Float16Polyfill, Bfloat16Array, ComplexArray, hasNativeFloat16Array, float16FromBytes, bfloat16FromBytes,
  complexFromBytes, float16BitsToNumber, numberToFloat16Bits, bfloat16BitsToNumber, numberToBfloat16Bits,
  type Dtype, type TypedArray,
} from "./dtype.js";
export type { CborValue } from "./json.js";
export type * from "./types.js";
export { TensogramFile, type OpenFileOptions, type FromUrlOptions, type AppendOptions } from "./file.js";
export {
  StreamingEncoder, decodeStream, type StreamingEncoderOptions, type DecodeStreamOptions, type DecodedFrame,
  type StreamDecodeError,
} from "./streaming.js";
