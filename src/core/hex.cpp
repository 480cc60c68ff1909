#include "tensogram/core/hex.hpp"

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

std::string hex_bytes(std::span<const std::byte> bytes) {
  std::string out;
  out.reserve(bytes.size() * 2);
  for (std::byte b : bytes) {
    const auto u = static_cast<unsigned>(b);
    out.push_back(k_digits[u >> 4]);
    out.push_back(k_digits[u & 0xF]);
  }
  return out;
}

}  // namespace tensogram
