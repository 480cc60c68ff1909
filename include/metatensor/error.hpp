// Errors of the metatensor format (spec 06 §8.2).
//
// Every validation failure is a `metatensor::error` (a `tensogram::error` of
// the framing category) carrying the spec's error name (`ST_OFFSETS`,
// `MT_PADDING`, ...) as an enum; `what()` reads
// "framing error: ST_OFFSETS: tensor \"w\": ...", i.e. what and where.
#pragma once

#include <cstdint>
#include <string_view>

#include "tensogram/core/error.hpp"

namespace metatensor {

/// The error names of spec 06 (§2, §3, §4, §6, §8). The streaming codes of
/// §10.6 belong to the streaming layer and are not listed here.
enum class errc : std::uint8_t {
  // §2 base layer (safetensors), in check order.
  st_header_too_small,
  st_header_too_large,
  st_header_length,
  st_header_utf8,
  st_header_json,
  st_duplicate_key,
  st_metadata,
  st_entry,
  st_dtype,
  st_offsets,
  st_subbyte,
  st_size_mismatch,
  st_overflow,
  st_incomplete,
  // §3–§8 metatensor layer.
  mt_not_metatensor,
  mt_version,
  mt_endianness,
  mt_alignment_value,
  mt_schema_json,
  mt_layout_json,
  mt_layout_mismatch,
  mt_unknown_key,
  mt_schema_name,
  mt_tensor_set,
  mt_padding,
  mt_misaligned,
  mt_schema_dialect,
  mt_unknown_typedef,
  mt_schema_type,
  mt_schema_unsupported,
  mt_shape,
  mt_tensor_dtype,
  mt_blob_bounds,
  mt_blob_align,
  mt_bool,
  mt_utf8,
  mt_nonzero_padding,
  mt_value,
  mt_limit,
  // §11 schema evolution.
  mt_schema_incompatible,
  // Header schemas (docs/metatensor.md, an extension of §8): the grouped
  // header violates a header schema (metatensor/header_schema.hpp).
  mt_header_schema,
};

/// The spec's spelling of an error name ("ST_HEADER_TOO_SMALL").
[[nodiscard]] std::string_view errc_name(errc code) noexcept;

/// A metatensor validation failure.
class error : public tensogram::framing_error {
 public:
  /// `detail` says what and where (tensor name, key, byte offset).
  error(errc code, std::string_view detail);
  [[nodiscard]] errc kind() const noexcept { return kind_; }
  /// The same error with `context` (a file path, a URL) and ": " put before
  /// its detail, so a message says which file it is about.
  [[nodiscard]] error with_context(std::string_view context) const;

 private:
  errc kind_;
};

}  // namespace metatensor
