// zfp's per-block number transforms for 1-D float64 blocks of four values
// (spec 03 §8.6; zfp's published algorithm, "block floating point", steps
// 1–4): the common exponent, the conversion to 62-bit fixed point, the
// decorrelating lifting transform and the negabinary mapping, with their
// inverses. Everything here reproduces libzfp 1.0's arithmetic exactly,
// wrap-arounds and x86-64 float-to-integer conversion of out-of-range values
// included, because the results are the stream's bits.
#pragma once

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>

#if defined(__x86_64__) || defined(_M_X64)
#include <emmintrin.h>
#endif

#include "tensogram/core/endian.hpp"

namespace tensogram::codecs::zfp_detail {

inline constexpr int k_exponent_bias = 1023;  // the 11-bit exponent field's bias
inline constexpr unsigned k_exponent_bits = 11;
inline constexpr int k_min_exponent = -1074;  // ZFP_MIN_EXP: below the smallest subnormal
inline constexpr unsigned k_max_precision = 64;
inline constexpr std::uint64_t k_negabinary_mask = 0xaaaaaaaaaaaaaaaaULL;

/// The exponent zfp gives a block: that of frexp(max |v|), at least -1022
/// (subnormals), -1023 for an all-zero block. NaNs never win the maximum
/// (a `max < |v|` comparison is false for them); an infinite maximum takes
/// the exponent the platform's frexp reports for infinity (0 with glibc),
/// as libzfp calls frexp.
inline int block_exponent(const double* v) noexcept {
  double m = 0.0;
  for (int i = 0; i < 4; ++i) {
    const double f = std::fabs(v[i]);
    if (m < f) m = f;
  }
  if (!(m > 0.0)) return -k_exponent_bias;
  const auto biased = static_cast<int>(tensogram::bit_cast<std::uint64_t>(m) >> 52);
  if (biased == 0x7ff) {
    int e = 0;
    static_cast<void>(std::frexp(m, &e));
    return std::max(e, 1 - k_exponent_bias);
  }
  return biased == 0 ? 1 - k_exponent_bias : biased - 1022;
}

/// The precision (bit planes) coded for a block of exponent `emax`:
/// min(maxprec, max(0, emax - minexp + 2·(dims + 1))) with dims = 1.
inline unsigned block_precision(int emax, unsigned maxprec, int minexp) noexcept {
  const long long p = static_cast<long long>(emax) - minexp + 4;
  return p <= 0 ? 0U : static_cast<unsigned>(std::min<long long>(maxprec, p));
}

/// 2^k as ldexp(1, k) rounds it: infinity above 2^1023, subnormals down to
/// 2^-1074, zero below (2^-1075 is a tie that rounds to even, i.e. 0).
inline double power_of_two(int k) noexcept {
  if (k > 1023) return std::numeric_limits<double>::infinity();
  if (k >= -1022) return tensogram::bit_cast<double>(static_cast<std::uint64_t>(k + 1023) << 52);
  if (k >= -1074) return tensogram::bit_cast<double>(std::uint64_t{1} << (k + 1074));
  return 0.0;
}

/// double → int64 truncating like x86-64's cvttsd2si, which is what libzfp's
/// C cast compiles to: values outside [-2^63, 2^63) and NaN give INT64_MIN.
/// (Only non-finite input or subnormal blocks, whose scale overflows, get
/// there.)
inline std::int64_t truncate_to_int64(double y) noexcept {
#if defined(__x86_64__) || defined(_M_X64)
  // The instruction itself (SSE2, always there on x86-64): no range
  // checks, whose two compares per value were a tenth of the transform.
  return _mm_cvttsd_si64(_mm_set_sd(y));
#else
  if (y >= -9223372036854775808.0 && y < 9223372036854775808.0) return static_cast<std::int64_t>(y);
  return std::numeric_limits<std::int64_t>::min();
#endif
}

// Two's-complement wrapping arithmetic, as libzfp's integer lifting assumes.
inline std::int64_t wrap_add(std::int64_t a, std::int64_t b) noexcept {
  return static_cast<std::int64_t>(static_cast<std::uint64_t>(a) + static_cast<std::uint64_t>(b));
}
inline std::int64_t wrap_sub(std::int64_t a, std::int64_t b) noexcept {
  return static_cast<std::int64_t>(static_cast<std::uint64_t>(a) - static_cast<std::uint64_t>(b));
}
inline std::int64_t wrap_shl1(std::int64_t a) noexcept {
  return static_cast<std::int64_t>(static_cast<std::uint64_t>(a) << 1);
}

/// Forward lifting of four integers (zfp's non-orthogonal transform
/// 1/16·[4 4 4 4; 5 1 -1 -5; -4 4 4 -4; -2 6 -6 2]); shifts are arithmetic.
inline void forward_lift(std::int64_t* p) noexcept {
  std::int64_t x = p[0], y = p[1], z = p[2], w = p[3];
  x = wrap_add(x, w) >> 1;
  w = wrap_sub(w, x);
  z = wrap_add(z, y) >> 1;
  y = wrap_sub(y, z);
  x = wrap_add(x, z) >> 1;
  z = wrap_sub(z, x);
  w = wrap_add(w, y) >> 1;
  y = wrap_sub(y, w);
  w = wrap_add(w, y >> 1);
  y = wrap_sub(y, w >> 1);
  p[0] = x;
  p[1] = y;
  p[2] = z;
  p[3] = w;
}

/// The exact inverse of forward_lift.
inline void inverse_lift(std::int64_t* p) noexcept {
  std::int64_t x = p[0], y = p[1], z = p[2], w = p[3];
  y = wrap_add(y, w >> 1);
  w = wrap_sub(w, y >> 1);
  y = wrap_add(y, w);
  w = wrap_sub(wrap_shl1(w), y);
  z = wrap_add(z, x);
  x = wrap_sub(wrap_shl1(x), z);
  y = wrap_add(y, z);
  z = wrap_sub(wrap_shl1(z), y);
  w = wrap_add(w, x);
  x = wrap_sub(wrap_shl1(x), w);
  p[0] = x;
  p[1] = y;
  p[2] = z;
  p[3] = w;
}

/// Two's complement → negabinary (base -2), so that small magnitudes of
/// either sign have leading zero bits.
inline std::uint64_t to_negabinary(std::int64_t x) noexcept {
  return (static_cast<std::uint64_t>(x) + k_negabinary_mask) ^ k_negabinary_mask;
}
inline std::int64_t from_negabinary(std::uint64_t u) noexcept {
  return static_cast<std::int64_t>((u ^ k_negabinary_mask) - k_negabinary_mask);
}

/// Steps 2–4 for a block of exponent emax: fixed point with 62 fraction bits
/// relative to 2^emax (scale 2^(62 - emax)), lifting, negabinary.
inline void forward_block(const double* v, int emax, std::uint64_t* u) noexcept {
  const double s = power_of_two(62 - emax);
  std::int64_t q[4];
  for (int i = 0; i < 4; ++i) q[i] = truncate_to_int64(s * v[i]);
  forward_lift(q);
  for (int i = 0; i < 4; ++i) u[i] = to_negabinary(q[i]);
}

/// The inverse of forward_block: values = 2^(emax - 62) · integers.
inline void inverse_block(const std::uint64_t* u, int emax, double* v) noexcept {
  std::int64_t q[4];
  for (int i = 0; i < 4; ++i) q[i] = from_negabinary(u[i]);
  inverse_lift(q);
  const double s = power_of_two(emax - 62);
  for (int i = 0; i < 4; ++i) v[i] = s * static_cast<double>(q[i]);
}

/// zfp's padding of a partial 1-D block of n < 4 values (n ≥ 1): the
/// missing values repeat existing ones as [a, a, a, a], [a, b, b, a] or
/// [a, b, c, a], which keeps the block smooth.
inline void pad_partial_block(const double* in, std::size_t n, double* block) noexcept {
  block[0] = in[0];
  block[1] = n > 1 ? in[1] : block[0];
  block[2] = n > 2 ? in[2] : block[1];
  block[3] = block[0];
}

}  // namespace tensogram::codecs::zfp_detail
