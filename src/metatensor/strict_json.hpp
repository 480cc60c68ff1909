// Strict JSON text for metatensor headers and the documents embedded in them
// (spec 06 §2 rules 3–4 and 7, §3.1): UTF-8, one JSON value, no duplicate key
// in any object, no NUL or byte-order mark, nesting bounded (§8.4).
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string_view>

#include "metatensor/error.hpp"

namespace metatensor {

/// The error names a document reports, and what it is called in messages.
struct json_errors {
  errc syntax;       // invalid UTF-8 or not one JSON value
  errc duplicate;    // a duplicated object key
  const char* what;  // "header", "schema", "layout table"
};

/// JSON documents nested deeper than this are refused with MT_LIMIT (§8.4).
inline constexpr std::size_t max_json_depth = 64;

/// Parses `text` completely, then reports duplicates (§2 rule 4: a document
/// that is not well-formed reports `syntax` even if it also has a duplicate).
[[nodiscard]] nlohmann::json parse_strict_json(std::string_view text, const json_errors& errors);

/// `parse_strict_json` without its simdjson fast path (src/metatensor/
/// fast_json.hpp): the reference passes that name every failure, also used
/// by the tests that compare the two paths.
[[nodiscard]] nlohmann::json parse_strict_json_reference(std::string_view text, const json_errors& errors);

/// The first integer in `doc` whose magnitude exceeds 2^53 - 1 (§2 rule 7,
/// §3.1), as its JSON text; empty when there is none.
[[nodiscard]] std::string first_oversized_integer(const nlohmann::json& doc);

}  // namespace metatensor
