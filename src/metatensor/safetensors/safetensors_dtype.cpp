// The 22 safetensors dtypes (spec 06 §2 rule 6, §4.4).
#include <array>

#include "metatensor/safetensors.hpp"

namespace metatensor::safetensors {
namespace {

struct dtype_info {
  std::string_view name;
  unsigned bits;
  std::size_t alignment;
};

// Indexed by `dtype`, in the order of §2 rule 6.
constexpr std::array<dtype_info, dtype_count> infos{{
    {"BOOL", 8, 1},    {"U8", 8, 1},      {"I8", 8, 1},          {"U16", 16, 2},        {"I16", 16, 2},
    {"U32", 32, 4},    {"I32", 32, 4},    {"U64", 64, 8},        {"I64", 64, 8},        {"F16", 16, 2},
    {"BF16", 16, 2},   {"F32", 32, 4},    {"F64", 64, 8},        {"C64", 64, 4},        {"F8_E4M3", 8, 1},
    {"F8_E5M2", 8, 1}, {"F8_E8M0", 8, 1}, {"F8_E4M3FNUZ", 8, 1}, {"F8_E5M2FNUZ", 8, 1}, {"F4", 4, 1},
    {"F6_E2M3", 6, 1}, {"F6_E3M2", 6, 1},
}};

const dtype_info& info(dtype t) noexcept {
  return infos[static_cast<std::size_t>(t)];
}

}  // namespace

std::string_view dtype_name(dtype t) noexcept {
  return info(t).name;
}

std::optional<dtype> parse_dtype(std::string_view name) noexcept {
  for (std::size_t i = 0; i < infos.size(); ++i) {
    if (infos[i].name == name) return static_cast<dtype>(i);
  }
  return std::nullopt;
}

unsigned dtype_bits(dtype t) noexcept {
  return info(t).bits;
}

std::size_t dtype_alignment(dtype t) noexcept {
  return info(t).alignment;
}

std::optional<tensogram::dtype> to_tensogram(dtype t) noexcept {
  using tensogram::dtype;
  switch (t) {
    case safetensors::dtype::u8: return dtype::uint8;
    case safetensors::dtype::i8: return dtype::int8;
    case safetensors::dtype::u16: return dtype::uint16;
    case safetensors::dtype::i16: return dtype::int16;
    case safetensors::dtype::u32: return dtype::uint32;
    case safetensors::dtype::i32: return dtype::int32;
    case safetensors::dtype::u64: return dtype::uint64;
    case safetensors::dtype::i64: return dtype::int64;
    case safetensors::dtype::f16: return dtype::float16;
    case safetensors::dtype::bf16: return dtype::bfloat16;
    case safetensors::dtype::f32: return dtype::float32;
    case safetensors::dtype::f64: return dtype::float64;
    case safetensors::dtype::c64: return dtype::complex64;
    default: return std::nullopt;
  }
}

std::optional<dtype> from_tensogram(tensogram::dtype t) noexcept {
  for (std::size_t i = 0; i < dtype_count; ++i) {
    const auto st = static_cast<dtype>(i);
    if (to_tensogram(st) == t) return st;
  }
  return std::nullopt;
}

}  // namespace metatensor::safetensors
