// Whole-file validation as `metatensor validate` runs it (spec 06 §8): the
// base layer (§2) first; a file that passes it but has no
// `metatensor.version` key is a valid plain safetensors file, not an
// invalid metatensor file; a metatensor file gets structural validation in
// full (BlobRefs included, which opening a file defers) and, when asked,
// deep validation. The CLI and the Python module share this verdict.
#pragma once

#include <cstdint>
#include <string_view>

#include "tensogram/core/buffer.hpp"

namespace metatensor {

/// What a valid file is.
enum class file_format : std::uint8_t {
  metatensor,   ///< has `metatensor.version` and passed every check asked for
  safetensors,  ///< a valid safetensors file without a metatensor schema
};

/// "metatensor" or "safetensors".
[[nodiscard]] std::string_view file_format_name(file_format f) noexcept;

/// Validates a file image. Deep validation of a plain safetensors file checks
/// what applies without a schema (BOOL bytes are 0 or 1). Throws
/// `metatensor::error` with the first failure's §8.2 name.
[[nodiscard]] file_format validate_image(const tensogram::buffer& image, bool deep);

}  // namespace metatensor
