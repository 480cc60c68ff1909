// @tensogram/metatensor: read and write metatensor files (spec 06):
// schema-driven tensors inside valid safetensors files.
export { MetatensorError, type ErrorCode } from "./errors.js";
export {
  DTYPES, type DType, type AnyTypedArray, dtypeBits, dtypeAlign, isSubByte, f16ToNumber, bf16ToNumber, f8ToNumber,
  subByteToNumber, decodeFloats,
} from "./dtypes.js";
export { encodeSmallFloat } from "./encode.js";
export { parseStrictJson, dumpJson, jsonEqual, compareUtf8, type Json } from "./json.js";
export {
  readHeaderLength, parseHeader, serializeSafetensors, planSafetensors, type SafetensorsHeader, type TensorEntry, type TensorInput,
} from "./safetensors.js";
export {
  CompiledSchema, type SchemaSource, compileSchema, compileSchemaText, checkDialect, layoutTableJson, scalarKeyword, SCALAR_KEYWORDS, SCHEMA_DIALECT_URI,
  type TensorLayout, type RecordLayout, type FieldLayout, type TypeLayout, type TensorKind,
} from "./schema.js";
export { BufferSource, BlobSource, HttpSource, type ByteSource, type HttpOptions, type Input } from "./source.js";
export { FlatTensor, RecordTensor, BlobTensor, RecordRef, typedView, type TensorView, type LogicalValue, type Scalar } from "./views.js";
export { SafetensorsFile, MetatensorFile, open, openMetatensor, openSafetensors, readSafetensorsHeader, type OpenOptions } from "./file.js";
export { validateDeep, checkValue } from "./deep.js";
export { evaluate } from "./evaluate.js";
export { MetatensorWriter, normalizeSchema, type WriterOptions } from "./writer.js";
export { diffLayouts, requireCompatible, isWidening, type CompatibilityReport, type CompatibilityClass, type SchemaChange } from "./compat.js";
export { normalizeBuilderSchema } from "./builder.js";
export { HeaderSchema, JsonSchemaEvaluator, TensorGroup, groupTensors, groupedHeader, validateHeader, type Grouped } from "./header.js";
export { type Failure } from "./evaluate.js";
