// NaN/Inf detection (spec 02 §9, spec 03 §11). The screens that run over
// every value (the encoder's strict check, fused into its copy into the
// frame, and the first pass of find_non_finite) are SIMD kernels chosen at
// run time (Highway: this file is compiled once per target by
// foreach_target); only a 4 KiB chunk the screen flags gets the exact,
// ordered scalar scan.

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "src/message/non_finite.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "src/core/byte_reversal_tables.hpp"

HWY_BEFORE_NAMESPACE();
namespace tensogram::non_finite_simd {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

template <typename U>
U swap_bytes(U x) noexcept {
  if constexpr (sizeof(U) == 2) {
    return __builtin_bswap16(x);
  } else if constexpr (sizeof(U) == 4) {
    return __builtin_bswap32(x);
  } else {
    return __builtin_bswap64(x);
  }
}

// True when some of the `count` IEEE components at `src` (U-sized, byte
// swapped first when `swap`) has an all-ones exponent field (NaN or ±Inf);
// copies the bytes unchanged to `dst` as well unless it is null, so the
// test rides on the copy's memory traffic. Branch-free:
// `(x & exp_field) + exp_lsb` carries into the top bit exactly when the
// exponent is all ones, and OR-ing those sums keeps any such carry.
template <typename U>
bool screen_components(const std::uint8_t* src, std::uint8_t* dst, std::size_t count, bool swap, U exp_field,
                       U exp_lsb) {
  constexpr unsigned top = 8 * sizeof(U) - 1;
  U acc = 0;
  const auto scalar = [&](std::size_t from, std::size_t to) {
    for (std::size_t i = from; i < to; ++i) {
      U x;
      std::memcpy(&x, src + i * sizeof(U), sizeof(U));
      if (dst != nullptr) std::memcpy(dst + i * sizeof(U), &x, sizeof(U));
      if (swap) x = swap_bytes(x);
      acc = static_cast<U>(acc | static_cast<U>((x & exp_field) + exp_lsb));
    }
  };
  std::size_t i = 0;
  bool hit = false;
#if HWY_TARGET != HWY_SCALAR
  const hn::ScalableTag<U> d;
  const hn::Repartition<std::uint8_t, decltype(d)> d8;
  const std::size_t lanes = hn::Lanes(d);
  // Components before `src` reaches a whole-vector boundary go through the
  // scalar loop: a load straddling two cache lines costs two accesses, and
  // malloc'ed input is only 16-byte aligned.
  const auto addr = reinterpret_cast<std::uintptr_t>(src);
  const std::size_t vector_bytes = lanes * sizeof(U);
  if (addr % sizeof(U) == 0) {
    i = std::min(count, (vector_bytes - addr % vector_bytes) % vector_bytes / sizeof(U));
    scalar(0, i);
  }
  const auto rev = hn::LoadDup128(d8, detail::reverse_units_table(sizeof(U)));
  const auto field = hn::Set(d, exp_field);
  const auto lsb = hn::Set(d, exp_lsb);
  auto acc0 = hn::Zero(d);
  auto acc1 = hn::Zero(d);
  const auto step = [&](auto v) {
    if (swap) v = hn::BitCast(d, hn::TableLookupBytes(hn::BitCast(d8, v), rev));
    return hn::Add(hn::And(v, field), lsb);
  };
  const auto* s = reinterpret_cast<const U*>(src);
  auto* o = reinterpret_cast<U*>(dst);
  for (; i + 2 * lanes <= count; i += 2 * lanes) {
    const auto v0 = hn::LoadU(d, s + i);
    const auto v1 = hn::LoadU(d, s + i + lanes);
    if (dst != nullptr) {
      hn::StoreU(v0, d, o + i);
      hn::StoreU(v1, d, o + i + lanes);
    }
    acc0 = hn::Or(acc0, step(v0));
    acc1 = hn::Or(acc1, step(v1));
  }
  hit = !hn::AllFalse(d, hn::Ne(hn::ShiftRight<top>(hn::Or(acc0, acc1)), hn::Zero(d)));
#endif
  scalar(i, count);
  return hit || (acc >> top) != 0;
}

bool Screen16(const std::uint8_t* src, std::uint8_t* dst, std::size_t count, bool swap, std::uint64_t field,
              std::uint64_t lsb) {
  return screen_components<std::uint16_t>(src, dst, count, swap, static_cast<std::uint16_t>(field),
                                          static_cast<std::uint16_t>(lsb));
}
bool Screen32(const std::uint8_t* src, std::uint8_t* dst, std::size_t count, bool swap, std::uint64_t field,
              std::uint64_t lsb) {
  return screen_components<std::uint32_t>(src, dst, count, swap, static_cast<std::uint32_t>(field),
                                          static_cast<std::uint32_t>(lsb));
}
bool Screen64(const std::uint8_t* src, std::uint8_t* dst, std::size_t count, bool swap, std::uint64_t field,
              std::uint64_t lsb) {
  return screen_components<std::uint64_t>(src, dst, count, swap, field, lsb);
}

}  // namespace HWY_NAMESPACE
}  // namespace tensogram::non_finite_simd
HWY_AFTER_NAMESPACE();

#if HWY_ONCE

#include "tensogram/message/non_finite.hpp"

#include <algorithm>
#include <cstring>

namespace tensogram {

namespace non_finite_simd {
HWY_EXPORT(Screen16);
HWY_EXPORT(Screen32);
HWY_EXPORT(Screen64);
// Calls go through these forwarders, which name the function from its own
// namespace: with a single compiled target (the WebAssembly build,
// docs/wasm.md) HWY_DYNAMIC_DISPATCH(F) is the static N_<TARGET>::F.
template <typename... Args>
bool screen16(Args... args) {
  return HWY_DYNAMIC_DISPATCH(Screen16)(args...);
}
template <typename... Args>
bool screen32(Args... args) {
  return HWY_DYNAMIC_DISPATCH(Screen32)(args...);
}
template <typename... Args>
bool screen64(Args... args) {
  return HWY_DYNAMIC_DISPATCH(Screen64)(args...);
}
}  // namespace non_finite_simd

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

// The screen over `count` components of `part` bytes (2, 4 or 8) at src,
// copying them to dst unless it is null: true when some component may be
// NaN or ±Inf (its exponent field is all ones).
bool screen(const std::byte* src, std::byte* dst, std::size_t count, std::size_t part, ieee_layout l,
            bool swap) noexcept {
  const unsigned exp_bits = l.total_bits - 1 - l.mantissa_bits;
  const std::uint64_t lsb = std::uint64_t{1} << l.mantissa_bits;
  const std::uint64_t field = ((std::uint64_t{1} << exp_bits) - 1) << l.mantissa_bits;
  const auto* s = reinterpret_cast<const std::uint8_t*>(src);
  auto* d = reinterpret_cast<std::uint8_t*>(dst);
  switch (part) {
    case 2: return non_finite_simd::screen16(s, d, count, swap, field, lsb);
    case 4: return non_finite_simd::screen32(s, d, count, swap, field, lsb);
    default: return non_finite_simd::screen64(s, d, count, swap, field, lsb);
  }
}

// IEEE layout and bytes per real component of a float or complex dtype.
bool component_layout(dtype t, ieee_layout& layout, std::size_t& part) noexcept {
  switch (t) {
    case dtype::float16: layout = {16, 10}, part = 2; return true;
    case dtype::bfloat16: layout = {16, 7}, part = 2; return true;
    case dtype::float32:
    case dtype::complex64: layout = {32, 23}, part = 4; return true;
    case dtype::float64:
    case dtype::complex128: layout = {64, 52}, part = 8; return true;
    default: return false;
  }
}

// Exact scan of one run of elements: the first wanted hit with its kind.
std::optional<non_finite_hit> scan_exact(dtype t, bool swap, std::span<const std::byte> data, bool nan,
                                         bool inf, std::uint64_t first_element) noexcept {
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

}  // namespace

std::optional<non_finite_hit> find_non_finite(dtype t, byte_order order, std::span<const std::byte> data,
                                              bool nan, bool inf, std::uint64_t first_element) noexcept {
  if (!dtype_is_float(t) || (!nan && !inf)) return std::nullopt;
  const bool swap = order != native_byte_order();
  ieee_layout layout{};
  std::size_t part = 0;  // bytes per real component
  if (!component_layout(t, layout, part)) return std::nullopt;
  const std::size_t width = dtype_width(t);
  // Screen chunks of whole elements (4 KiB is a multiple of every width);
  // only a chunk holding some NaN/Inf component gets the exact, ordered scan.
  constexpr std::size_t chunk = 4096;
  const std::size_t usable = data.size() / width * width;
  for (std::size_t off = 0; off < usable; off += chunk) {
    const std::size_t n = std::min(chunk, usable - off);
    const std::byte* p = data.data() + off;
    if (!screen(p, nullptr, n / part, part, layout, swap)) continue;
    if (auto hit = scan_exact(t, swap, data.subspan(off, n), nan, inf, first_element + off / width))
      return hit;
  }
  return std::nullopt;
}

bool copy_and_screen_non_finite(dtype t, byte_order order, std::span<const std::byte> src,
                                std::byte* dst) noexcept {
  ieee_layout layout{};
  std::size_t part = 0;
  if (src.empty()) return false;
  if (!component_layout(t, layout, part)) {
    std::memcpy(dst, src.data(), src.size());
    return false;
  }
  const bool swap = order != native_byte_order();
  const std::size_t count = src.size() / part;
  const bool suspect = screen(src.data(), dst, count, part, layout, swap);
  // A trailing partial component is copied but cannot be a value.
  const std::size_t done = count * part;
  if (done < src.size()) std::memcpy(dst + done, src.data() + done, src.size() - done);
  return suspect;
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

#endif  // HWY_ONCE
