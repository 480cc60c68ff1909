// Byte order of element values and big-endian framing integers (spec 02 §6,
// spec 01 conventions).
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <string_view>

namespace tensogram {

enum class byte_order : std::uint8_t { big, little };

/// Byte order of the machine running this code.
[[nodiscard]] constexpr byte_order native_byte_order() noexcept {
  return std::endian::native == std::endian::big ? byte_order::big : byte_order::little;
}

[[nodiscard]] std::string_view byte_order_name(byte_order o) noexcept;
[[nodiscard]] std::optional<byte_order> parse_byte_order(std::string_view name) noexcept;

/// Reverses the bytes of every `unit`-byte group of `bytes` in place. `unit`
/// 1 is a no-op; a trailing partial group is left untouched.
void swap_bytes_in_place(std::span<std::byte> bytes, std::size_t unit) noexcept;

/// Copies `src` to `dst` (same size) reversing every `unit`-byte group: one
/// pass, for decode paths that must produce a converted copy anyway.
void copy_swapped(std::span<const std::byte> src, std::span<std::byte> dst, std::size_t unit) noexcept;

/// Big-endian loads and stores used by all framing structures.
[[nodiscard]] inline std::uint16_t load_be16(const std::byte* p) noexcept {
  std::uint16_t v;
  std::memcpy(&v, p, 2);
  return std::endian::native == std::endian::little ? __builtin_bswap16(v) : v;
}
[[nodiscard]] inline std::uint32_t load_be32(const std::byte* p) noexcept {
  std::uint32_t v;
  std::memcpy(&v, p, 4);
  return std::endian::native == std::endian::little ? __builtin_bswap32(v) : v;
}
[[nodiscard]] inline std::uint64_t load_be64(const std::byte* p) noexcept {
  std::uint64_t v;
  std::memcpy(&v, p, 8);
  return std::endian::native == std::endian::little ? __builtin_bswap64(v) : v;
}
inline void store_be16(std::byte* p, std::uint16_t v) noexcept {
  if constexpr (std::endian::native == std::endian::little) v = __builtin_bswap16(v);
  std::memcpy(p, &v, 2);
}
inline void store_be32(std::byte* p, std::uint32_t v) noexcept {
  if constexpr (std::endian::native == std::endian::little) v = __builtin_bswap32(v);
  std::memcpy(p, &v, 4);
}
inline void store_be64(std::byte* p, std::uint64_t v) noexcept {
  if constexpr (std::endian::native == std::endian::little) v = __builtin_bswap64(v);
  std::memcpy(p, &v, 8);
}

}  // namespace tensogram
