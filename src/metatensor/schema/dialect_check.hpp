// The dialect passes of schema compilation (spec 06 §4.1–§4.3, §8.4), over
// the schema document's table. Not a public header.
//
// 1. The dialect walk visits every subschema of the tree (through the
//    structure and combinator keywords, and `$defs`), applying §4.1–§4.3:
//    rejected keywords, unknown `TypeDef:` keywords, the keyword classes
//    allowed inside combinators and next to `$ref`, and the §8.4 depth.
// 2. Every `$ref` of the tree is given its target in the tree (a JSON
//    Pointer fragment, or exactly the `$id` of a subschema), and the graph of
//    subschemas plus references is searched for cycles and for effective
//    nesting deeper than §8.4 allows.
#pragma once

#include <cstddef>
#include <vector>

#include "schema_document.hpp"

namespace metatensor::detail {

/// Runs both passes; returns, per node of `document`, the node its `$ref`
/// designates (schema_document::npos where it has none). Throws
/// metatensor::error MT_SCHEMA_DIALECT, MT_UNKNOWN_TYPEDEF or MT_LIMIT naming
/// the schema node.
[[nodiscard]] std::vector<std::size_t> check_dialect(const schema_document& document);

}  // namespace metatensor::detail
