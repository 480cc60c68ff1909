#include "tensogram/message/non_finite.hpp"

#include <algorithm>
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

template <typename U>
U byteswap(U x) noexcept {
  if constexpr (sizeof(U) == 2) {
    return __builtin_bswap16(x);
  } else if constexpr (sizeof(U) == 4) {
    return __builtin_bswap32(x);
  } else {
    return __builtin_bswap64(x);
  }
}

// True when some of the `count` IEEE components at `p` has an all-ones
// exponent field (NaN or ±Inf). Branch-free so that the compiler vectorises
// it: `(x & exp_field) + exp_lsb` carries into the sign bit exactly when the
// exponent is all ones, and OR-ing those sums keeps any such carry. This
// keeps the encoder's strict NaN/Inf check close to free next to its copy
// and hash of the same block.
template <typename U, bool Swap>
bool any_all_ones_exponent(const std::byte* p, std::size_t count, ieee_layout l) noexcept {
  const unsigned exp_bits = l.total_bits - 1 - l.mantissa_bits;
  const auto exp_lsb = static_cast<U>(U{1} << l.mantissa_bits);
  const auto exp_field = static_cast<U>(((U{1} << exp_bits) - 1) << l.mantissa_bits);
  U acc = 0;
  for (std::size_t i = 0; i < count; ++i) {
    U x;
    std::memcpy(&x, p + i * sizeof(U), sizeof(U));
    if constexpr (Swap) x = byteswap(x);
    acc = static_cast<U>(acc | static_cast<U>((x & exp_field) + exp_lsb));
  }
  return (acc >> (8 * sizeof(U) - 1)) != 0;
}

template <typename U>
bool screen(const std::byte* p, std::size_t count, ieee_layout l, bool swap) noexcept {
  return swap ? any_all_ones_exponent<U, true>(p, count, l) : any_all_ones_exponent<U, false>(p, count, l);
}

// `any_all_ones_exponent` while copying: each component passes through a
// register once, so the test rides on the copy's memory traffic.
template <typename U, bool Swap>
[[gnu::always_inline]] inline bool copy_any_all_ones_exponent(const std::byte* src, std::byte* dst,
                                                              std::size_t count, ieee_layout l) noexcept {
  const unsigned exp_bits = l.total_bits - 1 - l.mantissa_bits;
  const auto exp_lsb = static_cast<U>(U{1} << l.mantissa_bits);
  const auto exp_field = static_cast<U>(((U{1} << exp_bits) - 1) << l.mantissa_bits);
  U acc = 0;
  for (std::size_t i = 0; i < count; ++i) {
    U x;
    std::memcpy(&x, src + i * sizeof(U), sizeof(U));
    std::memcpy(dst + i * sizeof(U), &x, sizeof(U));
    if constexpr (Swap) x = byteswap(x);
    acc = static_cast<U>(acc | static_cast<U>((x & exp_field) + exp_lsb));
  }
  return (acc >> (8 * sizeof(U) - 1)) != 0;
}

// The native-order copy+screen is the encoder's hot loop. On x86-64 it is
// also compiled for AVX2 and picked at load time (ifunc): twice the vector
// width keeps the loop at memory speed, where SSE2 alone costs the encoder
// about a tenth of its throughput. (Clones must be plain functions.)
// Not under ThreadSanitizer: the loader calls the clones' resolver while
// relocating, before the TSan runtime is up, and the instrumented resolver
// crashes every binary at startup.
#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define TENSOGRAM_NO_IFUNC 1
#endif
#endif
#if defined(__SANITIZE_THREAD__)
#define TENSOGRAM_NO_IFUNC 1
#endif
#if defined(__x86_64__) && defined(__ELF__) && (defined(__GNUC__) || defined(__clang__)) && \
    !defined(TENSOGRAM_NO_IFUNC)
#define TENSOGRAM_CLONE_FOR_AVX2 __attribute__((target_clones("avx2", "default")))
#else
#define TENSOGRAM_CLONE_FOR_AVX2
#endif

TENSOGRAM_CLONE_FOR_AVX2 bool copy_screen_native16(const std::byte* src, std::byte* dst, std::size_t count,
                                                   ieee_layout l) noexcept {
  return copy_any_all_ones_exponent<std::uint16_t, false>(src, dst, count, l);
}
TENSOGRAM_CLONE_FOR_AVX2 bool copy_screen_native32(const std::byte* src, std::byte* dst, std::size_t count,
                                                   ieee_layout l) noexcept {
  return copy_any_all_ones_exponent<std::uint32_t, false>(src, dst, count, l);
}
TENSOGRAM_CLONE_FOR_AVX2 bool copy_screen_native64(const std::byte* src, std::byte* dst, std::size_t count,
                                                   ieee_layout l) noexcept {
  return copy_any_all_ones_exponent<std::uint64_t, false>(src, dst, count, l);
}

#undef TENSOGRAM_CLONE_FOR_AVX2

template <typename U>
bool copy_screen(const std::byte* src, std::byte* dst, std::size_t count, ieee_layout l, bool swap) noexcept {
  if (swap) return copy_any_all_ones_exponent<U, true>(src, dst, count, l);
  if constexpr (sizeof(U) == 2) {
    return copy_screen_native16(src, dst, count, l);
  } else if constexpr (sizeof(U) == 4) {
    return copy_screen_native32(src, dst, count, l);
  } else {
    return copy_screen_native64(src, dst, count, l);
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
    bool suspect = false;
    switch (part) {
      case 2: suspect = screen<std::uint16_t>(p, n / 2, layout, swap); break;
      case 4: suspect = screen<std::uint32_t>(p, n / 4, layout, swap); break;
      default: suspect = screen<std::uint64_t>(p, n / 8, layout, swap); break;
    }
    if (!suspect) continue;
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
  bool suspect = false;
  switch (part) {
    case 2: suspect = copy_screen<std::uint16_t>(src.data(), dst, count, layout, swap); break;
    case 4: suspect = copy_screen<std::uint32_t>(src.data(), dst, count, layout, swap); break;
    default: suspect = copy_screen<std::uint64_t>(src.data(), dst, count, layout, swap); break;
  }
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
