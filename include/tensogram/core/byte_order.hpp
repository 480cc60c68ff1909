// Byte order of element values and big-endian framing integers (spec 02 §6,
// spec 01 conventions).
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "tensogram/core/endian.hpp"  // IWYU pragma: export

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

// Big-endian loads and stores (load_be32, store_be64, ...) are in
// core/endian.hpp, included here for the code that reads frames.

}  // namespace tensogram
