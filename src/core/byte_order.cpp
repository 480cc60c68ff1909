// Byte order names and byte swapping (spec 02 §6). Swapping 2-, 4- and
// 8-byte units is a byte shuffle inside every 128-bit block, so it runs as
// one table lookup per vector with SIMD kernels chosen at run time
// (Highway: this file is compiled once per target by foreach_target).

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "src/core/byte_order.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "byte_reversal_tables.hpp"

HWY_BEFORE_NAMESPACE();
namespace tensogram::byte_swap_simd {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

template <typename U, typename Swap>
void swap_words(const std::uint8_t* src, std::uint8_t* dst, std::size_t count, Swap swap) noexcept {
  for (std::size_t i = 0; i < count; ++i) {
    U v;
    std::memcpy(&v, src + i * sizeof(U), sizeof(U));
    v = swap(v);
    std::memcpy(dst + i * sizeof(U), &v, sizeof(U));
  }
}

// Reverses every `unit`-byte group (unit 2, 4 or 8) of the first
// `count · unit` bytes of `src` into `dst`; `src == dst` is allowed (each
// vector is loaded before it is stored), other overlaps are not.
void SwapUnits(const std::uint8_t* src, std::uint8_t* dst, std::size_t count, std::size_t unit) {
  std::size_t done = 0;  // units
#if HWY_TARGET != HWY_SCALAR
  const hn::ScalableTag<std::uint8_t> d;
  const std::size_t n = hn::Lanes(d);  // a multiple of 16, hence of unit
  const auto idx = hn::LoadDup128(d, detail::reverse_units_table(unit));
  const std::size_t bytes = count * unit;
  std::size_t i = 0;
  for (; i + 4 * n <= bytes; i += 4 * n) {
    const auto v0 = hn::LoadU(d, src + i);
    const auto v1 = hn::LoadU(d, src + i + n);
    const auto v2 = hn::LoadU(d, src + i + 2 * n);
    const auto v3 = hn::LoadU(d, src + i + 3 * n);
    hn::StoreU(hn::TableLookupBytes(v0, idx), d, dst + i);
    hn::StoreU(hn::TableLookupBytes(v1, idx), d, dst + i + n);
    hn::StoreU(hn::TableLookupBytes(v2, idx), d, dst + i + 2 * n);
    hn::StoreU(hn::TableLookupBytes(v3, idx), d, dst + i + 3 * n);
  }
  for (; i + n <= bytes; i += n) hn::StoreU(hn::TableLookupBytes(hn::LoadU(d, src + i), idx), d, dst + i);
  done = i / unit;
#endif
  src += done * unit;
  dst += done * unit;
  count -= done;
  switch (unit) {
    case 2:
      swap_words<std::uint16_t>(src, dst, count, [](std::uint16_t v) { return __builtin_bswap16(v); });
      break;
    case 4:
      swap_words<std::uint32_t>(src, dst, count, [](std::uint32_t v) { return __builtin_bswap32(v); });
      break;
    default:
      swap_words<std::uint64_t>(src, dst, count, [](std::uint64_t v) { return __builtin_bswap64(v); });
      break;
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace tensogram::byte_swap_simd
HWY_AFTER_NAMESPACE();

#if HWY_ONCE

#include <algorithm>

#include "tensogram/core/byte_order.hpp"

namespace tensogram {

namespace byte_swap_simd {
HWY_EXPORT(SwapUnits);
// Calls go through these forwarders, which name the function from its own
// namespace: with a single compiled target (the WebAssembly build,
// docs/wasm.md) HWY_DYNAMIC_DISPATCH(F) is the static N_<TARGET>::F.
template <typename... Args>
void swap_units(Args... args) {
  HWY_DYNAMIC_DISPATCH(SwapUnits)(args...);
}
}  // namespace byte_swap_simd

std::string_view byte_order_name(byte_order o) noexcept {
  return o == byte_order::big ? "big" : "little";
}

std::optional<byte_order> parse_byte_order(std::string_view name) noexcept {
  if (name == "big") return byte_order::big;
  if (name == "little") return byte_order::little;
  return std::nullopt;
}

namespace {

void swap_into(const std::byte* src, std::byte* dst, std::size_t size, std::size_t unit) noexcept {
  const std::size_t count = unit == 0 ? 0 : size / unit;
  switch (unit) {
    case 2:
    case 4:
    case 8:
      byte_swap_simd::swap_units(reinterpret_cast<const std::uint8_t*>(src),
                                 reinterpret_cast<std::uint8_t*>(dst), count, unit);
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

#endif  // HWY_ONCE
