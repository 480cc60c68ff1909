// JSON Pointers inside a schema document (RFC 6901) and the URI fragments
// that carry them in `$ref` (RFC 3986 §2.1, §3.5; spec 06 §4.3). Not a
// public header.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace metatensor::detail {

/// Decodes the percent-escapes of a URI fragment (RFC 3986 §2.1); nullopt
/// for a '%' not followed by two hex digits.
[[nodiscard]] std::optional<std::string> percent_decode_fragment(std::string_view fragment);

/// Splits a JSON Pointer ("/a/b~1c") into unescaped reference tokens;
/// nullopt when it does not start with '/' (and is not empty) or holds a
/// '~' not followed by '0' or '1'.
[[nodiscard]] std::optional<std::vector<std::string>> pointer_tokens(std::string_view pointer);

/// An array index token below `size`: decimal, no leading zero (RFC 6901 §4).
[[nodiscard]] std::optional<std::size_t> array_index(const std::string& token, std::size_t size);

/// The values `tokens` step through in `document`, one per token (the last
/// is the one the pointer designates); nullopt when a token names no member
/// or element.
[[nodiscard]] std::optional<std::vector<const nlohmann::json*>> pointer_path(
    const nlohmann::json& document, const std::vector<std::string>& tokens);

}  // namespace metatensor::detail
