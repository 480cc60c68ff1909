#include "tensogram/message/non_finite.hpp"

#include <cstring>

namespace tensogram {

namespace {

// Kind of one IEEE value given its bits, sign/exponent/mantissa layout.
struct ieee_layout {
  unsigned total_bits;
  unsigned mantissa_bits;
};

std::optional<non_finite_kind> classify(std::uint64_t bits, ieee_layout l) noexcept {
  const unsigned exp_bits = l.total_bits - 1 - l.mantissa_bits;
  const std::uint64_t exp_mask = (std::uint64_t{1} << exp_bits) - 1;
  const std::uint64_t exp = (bits >> l.mantissa_bits) & exp_mask;
  if (exp != exp_mask) return std::nullopt;
  const std::uint64_t mant = bits & ((std::uint64_t{1} << l.mantissa_bits) - 1);
  if (mant != 0) return non_finite_kind::nan;
  return ((bits >> (l.total_bits - 1)) & 1) != 0 ? non_finite_kind::neg_inf : non_finite_kind::pos_inf;
}

std::uint64_t load(const std::byte* p, std::size_t width, bool swap) noexcept {
  std::uint64_t v = 0;
  switch (width) {
    case 2: {
      std::uint16_t x;
      std::memcpy(&x, p, 2);
      v = swap ? __builtin_bswap16(x) : x;
      break;
    }
    case 4: {
      std::uint32_t x;
      std::memcpy(&x, p, 4);
      v = swap ? __builtin_bswap32(x) : x;
      break;
    }
    default: {
      std::uint64_t x;
      std::memcpy(&x, p, 8);
      v = swap ? __builtin_bswap64(x) : x;
      break;
    }
  }
  return v;
}

bool wanted(non_finite_kind k, bool nan, bool inf) noexcept {
  return k == non_finite_kind::nan ? nan : inf;
}

}  // namespace

std::optional<non_finite_hit> find_non_finite(dtype t, byte_order order, std::span<const std::byte> data,
                                              bool nan, bool inf, std::uint64_t first_element) noexcept {
  if (!dtype_is_float(t) || (!nan && !inf)) return std::nullopt;
  const bool swap = order != native_byte_order();
  ieee_layout layout{};
  std::size_t part = 0;  // bytes per real component
  bool complex = false;
  switch (t) {
    case dtype::float16: layout = {16, 10}, part = 2; break;
    case dtype::bfloat16: layout = {16, 7}, part = 2; break;
    case dtype::float32: layout = {32, 23}, part = 4; break;
    case dtype::float64: layout = {64, 52}, part = 8; break;
    case dtype::complex64: layout = {32, 23}, part = 4, complex = true; break;
    case dtype::complex128: layout = {64, 52}, part = 8, complex = true; break;
    default: return std::nullopt;
  }
  const std::size_t width = complex ? 2 * part : part;
  const std::size_t n = data.size() / width;
  const std::byte* p = data.data();

  if (!complex) {
    // Fast path: a value is non-finite iff its exponent field is all ones.
    const unsigned exp_bits = layout.total_bits - 1 - layout.mantissa_bits;
    const std::uint64_t exp_field = ((std::uint64_t{1} << exp_bits) - 1) << layout.mantissa_bits;
    for (std::size_t i = 0; i < n; ++i) {
      const std::uint64_t bits = load(p + i * width, part, swap);
      if ((bits & exp_field) != exp_field) continue;
      const auto k = classify(bits, layout);
      if (k && wanted(*k, nan, inf)) return non_finite_hit{first_element + i, *k, false};
    }
    return std::nullopt;
  }
  for (std::size_t i = 0; i < n; ++i) {
    const auto re = classify(load(p + i * width, part, swap), layout);
    const auto im = classify(load(p + i * width + part, part, swap), layout);
    if (!re && !im) continue;
    // Priority of spec 02 §9.
    const non_finite_kind order_of_kinds[] = {non_finite_kind::nan, non_finite_kind::pos_inf,
                                              non_finite_kind::neg_inf};
    for (non_finite_kind k : order_of_kinds) {
      if (re == k || im == k) {
        if (wanted(k, nan, inf)) return non_finite_hit{first_element + i, k, re != k};
        break;
      }
    }
  }
  return std::nullopt;
}

std::string strict_non_finite_message(dtype t, const non_finite_hit& hit) {
  const bool complex = t == dtype::complex64 || t == dtype::complex128;
  std::string what;
  std::string hint;
  switch (hit.kind) {
    case non_finite_kind::nan:
      what = "strict-NaN check: NaN";
      hint = "set allow_nan to substitute NaN with 0 and record it in a mask";
      break;
    case non_finite_kind::pos_inf:
      what = "strict-Inf check: +Inf";
      hint = "set allow_inf to substitute Inf with 0 and record it in a mask";
      break;
    case non_finite_kind::neg_inf:
      what = "strict-Inf check: -Inf";
      hint = "set allow_inf to substitute Inf with 0 and record it in a mask";
      break;
  }
  std::string s =
      what + " at element " + std::to_string(hit.element) + " of " + std::string(dtype_name(t)) + " array";
  if (complex) s += hit.imaginary ? " (imaginary component)" : " (real component)";
  return s + "; " + hint;
}

}  // namespace tensogram
