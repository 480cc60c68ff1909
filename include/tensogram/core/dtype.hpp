// Element types of Tensogram objects (spec 02 §5).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

namespace tensogram {

/// The 15 element types of the wire format, in the order of spec 02 §5.
enum class dtype : std::uint8_t {
  float16,
  bfloat16,
  float32,
  float64,
  complex64,
  complex128,
  int8,
  int16,
  int32,
  int64,
  uint8,
  uint16,
  uint32,
  uint64,
  bitmask,
};

/// Every dtype, for iteration in tests and tools.
inline constexpr dtype all_dtypes[] = {dtype::float16,   dtype::bfloat16,   dtype::float32, dtype::float64,
                                       dtype::complex64, dtype::complex128, dtype::int8,    dtype::int16,
                                       dtype::int32,     dtype::int64,      dtype::uint8,   dtype::uint16,
                                       dtype::uint32,    dtype::uint64,     dtype::bitmask};

/// Wire name (`"float32"`, `"bitmask"`, ...).
[[nodiscard]] std::string_view dtype_name(dtype t) noexcept;

/// Parses a wire name; exact, lowercase spelling only.
[[nodiscard]] std::optional<dtype> parse_dtype(std::string_view name) noexcept;

/// Bytes per element; 0 for `bitmask`, whose elements are single bits.
[[nodiscard]] std::size_t dtype_width(dtype t) noexcept;

/// Unit of byte swapping: complex types swap each half separately; 1 means
/// "never swapped" (1-byte types and bitmask).
[[nodiscard]] std::size_t dtype_swap_unit(dtype t) noexcept;

/// True for the IEEE float and complex types (the ones scanned for NaN/Inf).
[[nodiscard]] bool dtype_is_float(dtype t) noexcept;

/// Number of elements of a shape (product; 1 for a scalar's empty shape), or
/// nothing when the product overflows u64.
[[nodiscard]] std::optional<std::uint64_t> element_count(std::span<const std::uint64_t> shape) noexcept;

/// Raw byte size of `n` elements: `n * width`, or `ceil(n / 8)` for bitmask;
/// nothing on overflow.
[[nodiscard]] std::optional<std::uint64_t> raw_byte_size(dtype t, std::uint64_t n) noexcept;

}  // namespace tensogram
