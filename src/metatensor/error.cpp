// Error names of spec 06 §8.2.
#include "metatensor/error.hpp"

#include <string>

namespace metatensor {

std::string_view errc_name(errc code) noexcept {
  switch (code) {
    case errc::st_header_too_small: return "ST_HEADER_TOO_SMALL";
    case errc::st_header_too_large: return "ST_HEADER_TOO_LARGE";
    case errc::st_header_length: return "ST_HEADER_LENGTH";
    case errc::st_header_utf8: return "ST_HEADER_UTF8";
    case errc::st_header_json: return "ST_HEADER_JSON";
    case errc::st_duplicate_key: return "ST_DUPLICATE_KEY";
    case errc::st_metadata: return "ST_METADATA";
    case errc::st_entry: return "ST_ENTRY";
    case errc::st_dtype: return "ST_DTYPE";
    case errc::st_offsets: return "ST_OFFSETS";
    case errc::st_subbyte: return "ST_SUBBYTE";
    case errc::st_size_mismatch: return "ST_SIZE_MISMATCH";
    case errc::st_overflow: return "ST_OVERFLOW";
    case errc::st_incomplete: return "ST_INCOMPLETE";
    case errc::mt_not_metatensor: return "MT_NOT_METATENSOR";
    case errc::mt_version: return "MT_VERSION";
    case errc::mt_endianness: return "MT_ENDIANNESS";
    case errc::mt_alignment_value: return "MT_ALIGNMENT_VALUE";
    case errc::mt_schema_json: return "MT_SCHEMA_JSON";
    case errc::mt_layout_json: return "MT_LAYOUT_JSON";
    case errc::mt_layout_mismatch: return "MT_LAYOUT_MISMATCH";
    case errc::mt_unknown_key: return "MT_UNKNOWN_KEY";
    case errc::mt_schema_name: return "MT_SCHEMA_NAME";
    case errc::mt_tensor_set: return "MT_TENSOR_SET";
    case errc::mt_padding: return "MT_PADDING";
    case errc::mt_misaligned: return "MT_MISALIGNED";
    case errc::mt_schema_dialect: return "MT_SCHEMA_DIALECT";
    case errc::mt_unknown_typedef: return "MT_UNKNOWN_TYPEDEF";
    case errc::mt_schema_type: return "MT_SCHEMA_TYPE";
    case errc::mt_schema_unsupported: return "MT_SCHEMA_UNSUPPORTED";
    case errc::mt_shape: return "MT_SHAPE";
    case errc::mt_tensor_dtype: return "MT_TENSOR_DTYPE";
    case errc::mt_blob_bounds: return "MT_BLOB_BOUNDS";
    case errc::mt_blob_align: return "MT_BLOB_ALIGN";
    case errc::mt_bool: return "MT_BOOL";
    case errc::mt_utf8: return "MT_UTF8";
    case errc::mt_nonzero_padding: return "MT_NONZERO_PADDING";
    case errc::mt_value: return "MT_VALUE";
    case errc::mt_limit: return "MT_LIMIT";
    case errc::mt_schema_incompatible: return "MT_SCHEMA_INCOMPATIBLE";
    case errc::mt_header_schema: return "MT_HEADER_SCHEMA";
  }
  return "MT_UNKNOWN";
}

error::error(errc code, std::string_view detail)
    : tensogram::framing_error(std::string(errc_name(code)) + ": " + std::string(detail)), kind_(code) {}

error error::with_context(std::string_view context) const {
  // detail() is "<NAME>: <what>" (the constructor above); keep <what>.
  return error(kind_,
               std::string(context) + ": " + std::string(detail().substr(errc_name(kind_).size() + 2)));
}

}  // namespace metatensor
