// One scalar of a logical value (spec 06 §8.3) as the bits of its dtype:
// integers range-checked, floats rounded to nearest even (the small formats
// of §4.4 included, with their NaN and infinity rules), BOOL from
// true/false, C64 from [re, im]. Not a public header.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "metatensor/safetensors.hpp"

namespace metatensor::detail {

/// The JSON type of `v`, for messages ("number", "array", ...).
[[nodiscard]] std::string json_kind(const nlohmann::json& v);

/// The bits of one element of dtype `t` (sub-byte types in the low bits).
/// Throws MT_VALUE naming `where` (a JSON Pointer) for a value of the wrong
/// JSON type or outside the dtype's range.
[[nodiscard]] std::uint64_t scalar_bits(safetensors::dtype t, const nlohmann::json& v,
                                        const std::string& where);

}  // namespace metatensor::detail
