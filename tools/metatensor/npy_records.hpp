// NumPy .npy arrays as metatensor tensors (`metatensor from-npy`): the schema
// a .npy dtype implies and the conversion of its bytes (spec 06 §4.4, §5).
//
// A plain numeric dtype becomes a flat tensor; a plain text dtype (`S<n>`
// bytes up to the first NUL, which must be UTF-8, or `U<n>` UTF-32 with
// trailing NULs cut, as NumPy reads them) a String blob tensor; a structured
// dtype becomes a struct tensor whose fields follow the NumPy field order. Record layouts differ
// (NumPy packs fields unless the dtype was created with align=True, and then
// writes the padding as unnamed fields; metatensor always uses the C rule of
// §6.2), so records are rebuilt field by field rather than copied.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <vector>

#include <metatensor.hpp>

#include "npy.hpp"

namespace metatensor::cli {

/// The schema node of one .npy array's tensor (dimensions included). Throws
/// `tool_error` for dtypes metatensor cannot hold (complex128, object, ...).
[[nodiscard]] nlohmann::json npy_tensor_schema(const tensogram::cli::npy::array& a);

/// Adds the array as logical tensor `name` to `builder` (whose schema has
/// that property from `npy_tensor_schema`). `data` holds the elements in C
/// order as the file stores them (any byte order); values are converted to
/// little-endian.
void add_npy_tensor(file_builder& builder, const std::string& name, const tensogram::cli::npy::array& a,
                    std::span<const std::byte> data);

}  // namespace metatensor::cli
