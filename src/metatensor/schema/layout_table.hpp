// The §7 layout table entry of one logical tensor (not a public header):
// rendered, and compared with a file's entry without rendering it, so a
// reader checks a 200 k-tensor table (spec 06 §8.2 step 4) without
// building the whole recomputed table (issue 27).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>

#include "metatensor/layout.hpp"

namespace metatensor::detail {

/// The entry `layout_table_json` writes for `t` under `tensors`.
[[nodiscard]] nlohmann::json layout_entry_json(const tensor_layout& t, std::uint64_t alignment);

/// True when `entry == layout_entry_json(t, alignment)` (nlohmann equality:
/// numbers compare by value across integer and float), with no allocation
/// for a flat tensor.
[[nodiscard]] bool layout_entry_equals(const nlohmann::json& entry, const tensor_layout& t,
                                       std::uint64_t alignment);

}  // namespace metatensor::detail
