#include "tensogram/core/byte_order.hpp"

#include <algorithm>

namespace tensogram {

std::string_view byte_order_name(byte_order o) noexcept {
  return o == byte_order::big ? "big" : "little";
}

std::optional<byte_order> parse_byte_order(std::string_view name) noexcept {
  if (name == "big") return byte_order::big;
  if (name == "little") return byte_order::little;
  return std::nullopt;
}

namespace {
template <typename U, typename Swap>
void swap_words(const std::byte* src, std::byte* dst, std::size_t count, Swap swap) noexcept {
  for (std::size_t i = 0; i < count; ++i) {
    U v;
    std::memcpy(&v, src + i * sizeof(U), sizeof(U));
    v = swap(v);
    std::memcpy(dst + i * sizeof(U), &v, sizeof(U));
  }
}

void swap_into(const std::byte* src, std::byte* dst, std::size_t size, std::size_t unit) noexcept {
  const std::size_t count = unit == 0 ? 0 : size / unit;
  switch (unit) {
    case 2:
      swap_words<std::uint16_t>(src, dst, count, [](std::uint16_t v) { return __builtin_bswap16(v); });
      break;
    case 4:
      swap_words<std::uint32_t>(src, dst, count, [](std::uint32_t v) { return __builtin_bswap32(v); });
      break;
    case 8:
      swap_words<std::uint64_t>(src, dst, count, [](std::uint64_t v) { return __builtin_bswap64(v); });
      break;
    default:
      for (std::size_t i = 0; i < count; ++i) {
        // Generic path (and in-place safe): reverse through a small temporary.
        std::byte tmp[16];
        const std::size_t u = std::min<std::size_t>(unit, sizeof tmp);
        std::memcpy(tmp, src + i * unit, u);
        std::reverse(tmp, tmp + u);
        std::memcpy(dst + i * unit, tmp, u);
      }
      break;
  }
  if (src != dst) {
    const std::size_t done = count * unit;
    std::memcpy(dst + done, src + done, size - done);
  }
}
}  // namespace

void swap_bytes_in_place(std::span<std::byte> bytes, std::size_t unit) noexcept {
  if (unit <= 1) return;
  swap_into(bytes.data(), bytes.data(), bytes.size(), unit);
}

void copy_swapped(std::span<const std::byte> src, std::span<std::byte> dst, std::size_t unit) noexcept {
  const std::size_t n = std::min(src.size(), dst.size());
  if (n == 0) return;
  if (unit <= 1) {
    std::memcpy(dst.data(), src.data(), n);
    return;
  }
  swap_into(src.data(), dst.data(), n, unit);
}

}  // namespace tensogram
