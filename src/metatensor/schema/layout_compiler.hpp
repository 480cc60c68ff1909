// The layout pass of schema compilation (spec 06 §3.2, §4.4–§4.5, §5,
// §6.1–§6.5), run on a document that passed the dialect passes
// (dialect_check.hpp). Not a public header.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "metatensor/layout.hpp"
#include "schema_document.hpp"
#include "src/metatensor/text.hpp"

namespace metatensor::detail {

/// The layout called `name` in `sorted` (a table sorted by name), or null.
template <class Layout>
[[nodiscard]] Layout* find_layout(std::span<Layout> sorted, std::string_view name) noexcept {
  return find_by_name(sorted, name, [](const tensor_layout& t) -> const std::string& { return t.name; });
}

/// The layout of every root property of `document`, whose `$ref`s lead to
/// `ref_targets` (from check_dialect), sorted by name. Throws
/// metatensor::error MT_SCHEMA_NAME, MT_SCHEMA_TYPE or MT_LIMIT naming the
/// schema node.
[[nodiscard]] std::vector<tensor_layout> compile_layouts(const schema_document& document,
                                                         const std::vector<std::size_t>& ref_targets);

}  // namespace metatensor::detail
