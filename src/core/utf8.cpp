#include "tensogram/core/utf8.hpp"

#include <cstdint>

#include "tensogram/core/endian.hpp"

namespace tensogram {

std::size_t first_invalid_utf8(std::string_view text) noexcept {
  const auto* p = reinterpret_cast<const std::byte*>(text.data());
  const std::size_t n = text.size();
  std::size_t i = 0;
  while (i < n) {
    // ASCII runs, eight bytes at a time: long header strings and text blobs
    // are mostly ASCII.
    while (n - i >= 8 && (load_native<std::uint64_t>(p + i) & 0x8080808080808080ULL) == 0) i += 8;
    if (i == n) break;
    const auto c = static_cast<unsigned>(p[i]);
    if (c < 0x80) {
      ++i;
      continue;
    }
    // RFC 3629 §4 (Table 3-7 of Unicode): the lead byte fixes the length and
    // the range of the second byte, which excludes overlong forms (E0, F0),
    // surrogates (ED) and code points above U+10FFFF (F4).
    std::size_t len = 0;
    unsigned lo = 0x80;
    unsigned hi = 0xBF;
    if (c >= 0xC2 && c <= 0xDF) {
      len = 2;
    } else if (c >= 0xE0 && c <= 0xEF) {
      len = 3;
      if (c == 0xE0) lo = 0xA0;
      if (c == 0xED) hi = 0x9F;
    } else if (c >= 0xF0 && c <= 0xF4) {
      len = 4;
      if (c == 0xF0) lo = 0x90;
      if (c == 0xF4) hi = 0x8F;
    } else {
      return i;
    }
    if (n - i < len) return i;
    const auto second = static_cast<unsigned>(p[i + 1]);
    if (second < lo || second > hi) return i;
    for (std::size_t k = 2; k < len; ++k) {
      if ((static_cast<unsigned>(p[i + k]) & 0xC0) != 0x80) return i;
    }
    i += len;
  }
  return std::string_view::npos;
}

}  // namespace tensogram
