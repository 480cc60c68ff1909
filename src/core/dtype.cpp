#include "tensogram/core/dtype.hpp"

#include <array>

namespace tensogram {

namespace {
struct dtype_info {
  dtype type;
  std::string_view name;
  std::size_t width;
  std::size_t swap_unit;
  bool is_float;
};

// Spec 02 §5.
constexpr std::array<dtype_info, 15> k_info = {{
    {dtype::float16, "float16", 2, 2, true},
    {dtype::bfloat16, "bfloat16", 2, 2, true},
    {dtype::float32, "float32", 4, 4, true},
    {dtype::float64, "float64", 8, 8, true},
    {dtype::complex64, "complex64", 8, 4, true},
    {dtype::complex128, "complex128", 16, 8, true},
    {dtype::int8, "int8", 1, 1, false},
    {dtype::int16, "int16", 2, 2, false},
    {dtype::int32, "int32", 4, 4, false},
    {dtype::int64, "int64", 8, 8, false},
    {dtype::uint8, "uint8", 1, 1, false},
    {dtype::uint16, "uint16", 2, 2, false},
    {dtype::uint32, "uint32", 4, 4, false},
    {dtype::uint64, "uint64", 8, 8, false},
    {dtype::bitmask, "bitmask", 0, 1, false},
}};

constexpr const dtype_info& info(dtype t) noexcept {
  return k_info[static_cast<std::size_t>(t)];
}
}  // namespace

std::string_view dtype_name(dtype t) noexcept {
  return info(t).name;
}

std::optional<dtype> parse_dtype(std::string_view name) noexcept {
  for (const auto& i : k_info) {
    if (i.name == name) return i.type;
  }
  return std::nullopt;
}

std::size_t dtype_width(dtype t) noexcept {
  return info(t).width;
}
std::size_t dtype_swap_unit(dtype t) noexcept {
  return info(t).swap_unit;
}
bool dtype_is_float(dtype t) noexcept {
  return info(t).is_float;
}

std::optional<std::uint64_t> element_count(std::span<const std::uint64_t> shape) noexcept {
  std::uint64_t n = 1;
  for (std::uint64_t d : shape) {
    if (__builtin_mul_overflow(n, d, &n)) return std::nullopt;
  }
  return n;
}

std::optional<std::uint64_t> raw_byte_size(dtype t, std::uint64_t n) noexcept {
  if (t == dtype::bitmask) return n / 8 + (n % 8 != 0 ? 1 : 0);
  std::uint64_t bytes = 0;
  if (__builtin_mul_overflow(n, static_cast<std::uint64_t>(dtype_width(t)), &bytes)) {
    return std::nullopt;
  }
  return bytes;
}

}  // namespace tensogram
