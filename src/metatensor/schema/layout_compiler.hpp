// The layout pass of schema compilation (spec 06 §3.2, §4.4–§4.5, §5,
// §6.1–§6.5), run on a document that passed the dialect passes
// (dialect_check.hpp). Not a public header.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "metatensor/layout.hpp"
#include "schema_document.hpp"

namespace metatensor::detail {

/// The layout of every root property of `document`, whose `$ref`s lead to
/// `ref_targets` (from check_dialect). Throws metatensor::error MT_SCHEMA_NAME,
/// MT_SCHEMA_TYPE or MT_LIMIT naming the schema node.
[[nodiscard]] std::map<std::string, tensor_layout, std::less<>> compile_layouts(
    const schema_document& document, const std::vector<std::size_t>& ref_targets);

}  // namespace metatensor::detail
