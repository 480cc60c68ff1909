// Small text and arithmetic helpers shared by the metatensor sources (not a
// public header).
#pragma once

#include <cstdint>
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

/// Appends '/' and one JSON Pointer reference token (RFC 6901: '~' -> "~0",
/// '/' -> "~1") to `path`.
inline void append_pointer_token(std::string& path, std::string_view token) {
  path += '/';
  for (const char c : token) {
    if (c == '~') {
      path += "~0";
    } else if (c == '/') {
      path += "~1";
    } else {
      path += c;
    }
  }
}

/// One reference token, escaped, without the leading '/'.
[[nodiscard]] inline std::string pointer_token(std::string_view token) {
  std::string out;
  append_pointer_token(out, token);
  return out.substr(1);
}

/// The smallest multiple of `a` (a power of two) that is >= x; callers keep
/// x + a below 2^64 (sizes are bounded by 2^53 or 2^24 before this is used).
[[nodiscard]] constexpr std::uint64_t align_up(std::uint64_t x, std::uint64_t a) noexcept {
  return (x + a - 1) / a * a;
}

}  // namespace metatensor::detail
