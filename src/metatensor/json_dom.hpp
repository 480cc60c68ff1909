// simdjson's DOM as a fast path for the strict JSON of metatensor headers
// (spec 06 §2 rules 3–4 and 7, §3.1, §8.4), shared by fast_json.cpp and the
// readers that walk a document without building an nlohmann value (issue 27).
// Like fast_json.hpp, everything here only ever *accepts*: a text it cannot
// vouch for goes to the reference path (`parse_strict_json`), which names
// the first failure. Not a public header (it includes simdjson).
#pragma once

#include <simdjson.h>

#include <nlohmann/json.hpp>
#include <optional>
#include <string_view>

namespace metatensor::detail {

/// True when the reference path must read `text`: a byte-order mark or a
/// NUL (which it refuses before parsing) or a `-0` (which simdjson reads as
/// the integer 0, the reference as a signed integer).
[[nodiscard]] bool needs_reference_path(std::string_view text) noexcept;

/// The value nlohmann::json::parse gives for `e`; false on a duplicate key
/// (§2 rule 4). Recursion is bounded by the parser's depth limit (§8.4).
[[nodiscard]] bool to_nlohmann(simdjson::dom::element e, nlohmann::json& out);

/// True when `v` is a string equal to `want`.
[[nodiscard]] inline bool string_is(simdjson::dom::element v, std::string_view want) noexcept {
  std::string_view s;
  return v.get_string().get(s) == simdjson::SUCCESS && s == want;
}

/// `text` parsed into `parser` when `parse_strict_json` would accept it and
/// read the same value, and no integer in it exceeds 2^53 - 1 in magnitude
/// (§3.1); nothing otherwise. The element lives in `parser`. `readable` is
/// how many bytes from `text.data()` may be read (a `std::string`'s
/// capacity): with `SIMDJSON_PADDING` beyond the text the parser reads it in
/// place, else it parses a padded copy (the text may go after the call
/// either way: the document keeps its strings in the parser). A parser with
/// room for the text is reused as it is (its memory already faulted in:
/// opening a file parses three texts, see file.cpp); the element of its
/// previous parse is then invalid.
[[nodiscard]] std::optional<simdjson::dom::element> parse_strict_dom(std::string_view text,
                                                                     simdjson::dom::parser& parser,
                                                                     std::size_t readable = 0);

/// Sizes `parser` for texts of up to `capacity` bytes (depth `max_depth`)
/// and advises huge pages for its structural index, tape and string buffer
/// before their first touch (tensogram/core/memory.hpp): a parse of a
/// 100 MB header otherwise takes ~100,000 page faults, a third of its time
/// on our VMs (issue 27). False when the allocation fails.
[[nodiscard]] bool allocate_advised(simdjson::dom::parser& parser, std::size_t capacity,
                                    std::size_t max_depth) noexcept;

/// A copy of `text` that `parse_strict_dom` reads in place (capacity for
/// `SIMDJSON_PADDING` more bytes) when it is long enough for the parser's
/// copy to matter; a plain copy otherwise.
[[nodiscard]] std::string parse_ready_copy(std::string_view text);

}  // namespace metatensor::detail
