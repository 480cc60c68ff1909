// Small text and arithmetic helpers shared by the metatensor sources (not a
// public header).
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <iterator>
#include <span>
#include <string>
#include <string_view>

namespace metatensor::detail {

/// `name` in double quotes, for messages: tensor "w".
[[nodiscard]] inline std::string quoted(std::string_view name) {
  // Built by appending: GCC 12 at -O3 reports a false -Wrestrict for
  // `"\"" + std::string` (GCC bug 105329).
  std::string out;
  out.reserve(name.size() + 2);
  out += '"';
  out += name;
  out += '"';
  return out;
}

/// The element of `sorted` whose name (`name_of(element)`, convertible to a
/// `std::string_view`) is `name`, or null; `sorted` is in byte-wise name
/// order, as every table of names in a header is (a binary search).
template <class Range, class NameOf>
[[nodiscard]] auto* find_by_name(Range& sorted, std::string_view name, NameOf name_of) noexcept {
  const auto key = [&](const auto& e) { return std::string_view(name_of(e)); };
  const auto it = std::ranges::lower_bound(sorted, name, std::less<>{}, key);
  return it == std::ranges::end(sorted) || key(*it) != name ? nullptr : std::addressof(*it);
}

/// Appends '/' and one JSON Pointer reference token (RFC 6901: '~' -> "~0",
/// '/' -> "~1") to `path`.
inline void append_pointer_token(std::string& path, std::string_view token) {
  path += '/';
  // Names seldom hold '~' or '/': the runs between them are appended whole
  // (200 k tensor names per header, issue 27).
  // A plain loop: libstdc++'s `find_first_of` calls memchr once per
  // character of the token.
  std::size_t from = 0;
  for (std::size_t at = 0; at < token.size(); ++at) {
    const char c = token[at];
    if (c != '~' && c != '/') continue;
    path.append(token.substr(from, at - from));
    path += c == '~' ? "~0" : "~1";
    from = at + 1;
  }
  path.append(token.substr(from));
}

/// `parent` followed by one more reference token, e.g. child_pointer("/a", "b~") == "/a/b~0".
[[nodiscard]] inline std::string child_pointer(std::string_view parent, std::string_view token) {
  std::string out(parent);
  append_pointer_token(out, token);
  return out;
}

/// One reference token, escaped, without the leading '/'.
[[nodiscard]] inline std::string pointer_token(std::string_view token) {
  std::string out;
  append_pointer_token(out, token);
  return out.substr(1);
}

/// The number of elements of `dims` (their product); callers pass dims that
/// are bounded (fixed-array dims of a compiled schema, §8.4, or the dims of
/// a validated tensor), so the product does not overflow.
[[nodiscard]] inline std::uint64_t element_count(std::span<const std::uint64_t> dims) noexcept {
  std::uint64_t n = 1;
  for (const std::uint64_t d : dims) n *= d;
  return n;
}

/// The smallest multiple of `a` (a power of two) that is >= x; callers keep
/// x + a below 2^64 (sizes are bounded by 2^53 or 2^24 before this is used).
[[nodiscard]] constexpr std::uint64_t align_up(std::uint64_t x, std::uint64_t a) noexcept {
  return (x + a - 1) / a * a;
}

}  // namespace metatensor::detail
