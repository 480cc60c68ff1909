// CBOR ⇄ JSON conversion (spec 02 §2), on nlohmann::json.
//
// Not included by <tensogram.hpp> so that users who do not want JSON do not
// pay for the nlohmann header; the CLI and the JSON convenience API use it.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "tensogram/cbor/value.hpp"

namespace tensogram::cbor {

struct json_options {
  /// CLI export unwraps tags to their content; the C API renders them null.
  bool unwrap_tags = true;
};

/// CBOR → JSON (§2.1): integers within i64/u64 become numbers, others
/// decimal strings; NaN/±Inf become null; byte strings lowercase hex; map
/// members with non-text keys are named by the key's compact JSON text.
/// JSON objects are ordered by member name (bytewise), like the reference.
/// Throws `metadata_error` when non-text keys nest more than 8 deep inside
/// other keys (each level can double the names' length).
[[nodiscard]] nlohmann::json to_json(const value& v, const json_options& options = {});

/// JSON → CBOR (§2.2): numbers that fit i64 become integers, all other
/// numbers floats; objects become maps with text keys (in name order).
[[nodiscard]] value from_json(const nlohmann::json& j);

/// Parses JSON text into a CBOR value; throws `metadata_error` with the
/// parser's position on malformed text.
[[nodiscard]] value from_json_text(std::string_view text);

/// Serialises `v` as JSON text; `indent < 0` gives the compact form.
[[nodiscard]] std::string to_json_text(const value& v, int indent = -1, const json_options& options = {});

}  // namespace tensogram::cbor
