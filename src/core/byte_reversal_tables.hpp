// Shuffle tables for SIMD byte swapping (spec 02 §6): for each byte of a
// 16-byte block, the source byte when every `unit`-byte group is reversed.
// The Highway kernels that swap bytes (core/byte_order.cpp,
// message/non_finite.cpp, codecs/simple_packing.cpp) load one with
// LoadDup128 and apply it with TableLookupBytes.
#pragma once

#include <cstddef>
#include <cstdint>

namespace tensogram::detail {

alignas(16) inline constexpr std::uint8_t reverse_units_of_2[16] = {1, 0, 3,  2,  5,  4,  7,  6,
                                                                    9, 8, 11, 10, 13, 12, 15, 14};
alignas(16) inline constexpr std::uint8_t reverse_units_of_4[16] = {3,  2,  1, 0, 7,  6,  5,  4,
                                                                    11, 10, 9, 8, 15, 14, 13, 12};
alignas(16) inline constexpr std::uint8_t reverse_units_of_8[16] = {7,  6,  5,  4,  3,  2,  1, 0,
                                                                    15, 14, 13, 12, 11, 10, 9, 8};

/// The table for units of 2, 4 or 8 bytes (8 for any other value).
constexpr const std::uint8_t* reverse_units_table(std::size_t unit) noexcept {
  return unit == 2 ? reverse_units_of_2 : unit == 4 ? reverse_units_of_4 : reverse_units_of_8;
}

}  // namespace tensogram::detail
