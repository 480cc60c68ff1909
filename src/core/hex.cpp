#include "tensogram/core/hex.hpp"

#include <algorithm>

namespace tensogram {

namespace {
constexpr char k_digits[] = "0123456789abcdef";
}

std::string hex16(std::uint64_t v) {
  std::string out(16, '0');
  for (int i = 15; i >= 0; --i) {
    out[static_cast<std::size_t>(i)] = k_digits[v & 0xF];
    v >>= 4;
  }
  return out;
}

std::string hex_digits(std::uint64_t v) {
  std::string out = hex16(v);
  return out.substr(std::min(out.find_first_not_of('0'), out.size() - 1));
}

void append_hex_byte(std::string& out, std::uint8_t b) {
  out.push_back(k_digits[b >> 4]);
  out.push_back(k_digits[b & 0xF]);
}

std::string hex_bytes(std::span<const std::byte> bytes) {
  std::string out;
  out.reserve(bytes.size() * 2);
  for (std::byte b : bytes) append_hex_byte(out, static_cast<std::uint8_t>(b));
  return out;
}

std::optional<std::string> percent_decode(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '%') {
      out.push_back(text[i]);
      continue;
    }
    if (text.size() - i < 3) return std::nullopt;
    const int hi = hex_digit_value(text[i + 1]);
    const int lo = hex_digit_value(text[i + 2]);
    if (hi < 0 || lo < 0) return std::nullopt;
    out.push_back(static_cast<char>(hi * 16 + lo));
    i += 2;
  }
  return out;
}

std::string debug_quoted(std::string_view text) {
  std::string out = "\"";
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      case '\0': out += "\\0"; break;
      default:
        if (u < 0x20 || u == 0x7f) {
          out += "\\u{" + hex_digits(u) + "}";
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

}  // namespace tensogram
