#include "key_lookup.hpp"

#include <tensogram.hpp>

namespace tensogram::cli {

std::optional<std::string> lookup_key(const global_metadata& meta, std::string_view key) {
  // §A.2 rule 1: the wire version lives in the preamble, not in the CBOR, so
  // it is answered here rather than looked up (a metadata key named
  // `version` stays reachable as `_extra_.version`).
  if (key == "version") return std::to_string(wire_version);
  const cbor::value* v = meta.get(key);
  if (v == nullptr) return std::nullopt;
  return display_text(*v);
}

std::vector<std::string> parse_key_list(std::string_view text) {
  // Whitespace as Rust's str::trim understands it for ASCII input.
  constexpr std::string_view space = " \t\n\r\f\v";
  std::vector<std::string> keys;
  std::size_t start = 0;
  for (;;) {
    const std::size_t comma = text.find(',', start);
    std::string_view item = text.substr(start, comma == std::string_view::npos ? text.npos : comma - start);
    const std::size_t first = item.find_first_not_of(space);
    if (first == std::string_view::npos) {
      item = {};
    } else {
      item = item.substr(first, item.find_last_not_of(space) - first + 1);
    }
    keys.emplace_back(item);
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return keys;
}

}  // namespace tensogram::cli
