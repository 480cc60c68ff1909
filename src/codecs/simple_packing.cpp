// simple_packing (spec 03 §4): quantisation and MSB-first bit packing.
//
// The hot loops are Highway kernels compiled once per SIMD target and picked
// at run time (HWY_DYNAMIC_DISPATCH); every target, the scalar one included,
// produces the same bytes as the straightforward per-bit algorithm of §4.5 and
// the same doubles as §4.6.

// §4.6 reconstructs `R + inv * q` as a product rounded to double and then a
// sum; a fused multiply-add rounds once and would change the decoded bits.
// The kernels are compiled for FMA-capable targets, where GCC contracts
// `a + b * c` by default even in ISO C++ mode, so contraction is switched off
// for this file (before any include, so every function shares the setting and
// Highway's always-inline helpers still inline).
#if defined(__clang__)
#pragma clang fp contract(off)
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "src/codecs/simple_packing.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "src/core/byte_reversal_tables.hpp"
#include "tensogram/codecs/simple_packing.hpp"
#include "tensogram/core/byte_order.hpp"
#include "tensogram/core/endian.hpp"
#include "tensogram/core/error.hpp"
#include "tensogram/core/parallel.hpp"

// Scalar helpers shared by every target's kernels and the dispatching code;
// defined once although foreach_target includes this file once per target.
#ifndef TENSOGRAM_SIMPLE_PACKING_HELPERS
#define TENSOGRAM_SIMPLE_PACKING_HELPERS
namespace tensogram::sp_detail {
namespace {

// Values per kernel block: a multiple of 8, so every block starts on a byte
// boundary of the packed stream and packs independently; small enough that
// its quantised integers stay in L1.
constexpr std::size_t block = 1024;

// Largest B whose quantised integers the SIMD kernels handle: below 2^52 an
// integer-valued double converts to and from u64 exactly by adding 2^52.
constexpr unsigned simd_max_bits = 52;

// Unaligned loads and stores (load_native, load_be64, store_be32, ...) come
// from core/endian.hpp.

inline double load_f64(const std::byte* p, bool swap) noexcept {
  std::uint64_t bits = load_native<std::uint64_t>(p);
  if (swap) bits = __builtin_bswap64(bits);
  return tensogram::bit_cast<double>(bits);
}

inline void store_f64(std::byte* p, double v, bool swap) noexcept {
  auto bits = tensogram::bit_cast<std::uint64_t>(v);
  if (swap) bits = __builtin_bswap64(bits);
  std::memcpy(p, &bits, 8);
}

inline std::uint64_t saturating_u64(double x) noexcept {
  if (!(x > 0.0)) return 0;  // negative, zero and NaN
  if (x >= 18446744073709551616.0) return std::numeric_limits<std::uint64_t>::max();
  return static_cast<std::uint64_t>(x);
}

// §4.5 for one value: C round() (half away from zero), saturation, clamp.
inline std::uint64_t quantise(double v, double r, double scale, std::uint64_t maxq) noexcept {
  const std::uint64_t q = saturating_u64(std::round((v - r) * scale));
  return q > maxq ? maxq : q;
}

inline bool is_finite_bits(std::uint64_t bits) noexcept {
  return (bits & 0x7FF0000000000000ULL) != 0x7FF0000000000000ULL;
}

// The B-bit field at stream bit `bit`, one byte at a time: only for the last
// few fields, whose 9-byte window would run past the payload.
inline std::uint64_t read_field_bytes(const std::byte* p, std::uint64_t bit, unsigned bits) noexcept {
  std::uint64_t v = 0;
  std::uint64_t byte = bit / 8;
  unsigned off = static_cast<unsigned>(bit % 8);
  while (bits > 0) {
    const unsigned avail = 8 - off;
    const unsigned take = bits < avail ? bits : avail;
    const auto b = static_cast<unsigned>(p[byte]);
    const unsigned chunk = (b >> (avail - take)) & ((1U << take) - 1U);
    v = (take == 64 ? 0 : (v << take)) | chunk;
    bits -= take;
    off = 0;
    ++byte;
  }
  return v;
}

}  // namespace
}  // namespace tensogram::sp_detail
#endif  // TENSOGRAM_SIMPLE_PACKING_HELPERS

HWY_BEFORE_NAMESPACE();
namespace tensogram::HWY_NAMESPACE {
namespace {

namespace hn = hwy::HWY_NAMESPACE;
namespace sd = sp_detail;

using DF = hn::ScalableTag<double>;
using DU = hn::RebindToUnsigned<DF>;
using VU = hn::Vec<DU>;

// Reverses the bytes of every u64 lane (non-native byte order, fused into
// the loads and stores).
HWY_INLINE VU bswap64(DU du, VU v) {
#if HWY_TARGET == HWY_SCALAR
  return hn::Set(du, __builtin_bswap64(hn::GetLane(v)));
#else
  const hn::Repartition<std::uint8_t, DU> d8;
  return hn::BitCast(
      du, hn::TableLookupBytes(hn::BitCast(d8, v), hn::LoadDup128(d8, detail::reverse_units_of_8)));
#endif
}

HWY_INLINE VU load_bits(DU du, const std::byte* p, bool swap) {
  const VU v = hn::LoadU(du, reinterpret_cast<const std::uint64_t*>(p));
  return swap ? bswap64(du, v) : v;
}

// The `count` (< lanes) values at p as one vector; the missing lanes repeat
// the first value, which leaves a minimum, a maximum and a finiteness test
// unchanged (results of those lanes are never stored).
HWY_INLINE VU load_partial_bits(DU du, const std::byte* p, std::size_t count, bool swap) {
  alignas(64) std::byte tmp[HWY_MAX_BYTES];
  for (std::size_t k = 0; k < hn::Lanes(du); ++k) std::memcpy(tmp + 8 * k, p + 8 * (k < count ? k : 0), 8);
  return load_bits(du, tmp, swap);
}

// Stores the first `count` (< lanes) lanes of v at p.
HWY_INLINE void store_partial(DU du, VU v, std::size_t count, void* p) {
  alignas(64) std::uint64_t tmp[HWY_MAX_BYTES / 8];
  hn::Store(v, du, tmp);
  std::memcpy(p, tmp, 8 * count);
}

// Values to handle one by one before p + 8·k reaches a whole-vector
// boundary. A vector load that straddles two cache lines costs two
// accesses: on 16-byte-aligned (malloc'ed) input the AVX-512 parameter scan
// ran at half the speed of the same scan on aligned input.
HWY_INLINE std::size_t values_before_vector_boundary(DU du, const void* p, std::size_t n) {
  const auto addr = reinterpret_cast<std::uintptr_t>(p);
  const std::size_t vector_bytes = hn::Lanes(du) * 8;
  if (addr % 8 != 0) return 0;  // unaligned values: every load straddles anyway
  return std::min(n, (vector_bytes - addr % vector_bytes) % vector_bytes / 8);
}

// Lanes whose exponent is all ones (NaN, ±Inf) get their top bit set:
// adding one exponent unit to the exponent field carries into bit 63 only
// from an all-ones exponent (no compare and mask conversion per vector).
HWY_INLINE VU non_finite_lanes(DU du, VU bits) {
  return hn::Add(hn::And(bits, hn::Set(du, 0x7FF0000000000000ULL)), hn::Set(du, 0x0010000000000000ULL));
}

// True when no lane that went through non_finite_lanes was NaN or ±Inf.
HWY_INLINE bool all_finite(DU du, VU accumulated) {
  return hn::AllFalse(du, hn::Ne(hn::ShiftRight<63>(accumulated), hn::Zero(du)));
}

// Min/max of n values (n >= 1) in one pass; false if any is NaN or ±Inf
// (then mn/mx are meaningless). Ties between -0.0 and +0.0 are resolved by
// the caller (§4.4 keeps the first one encountered).
bool ScanF64(const std::byte* p, std::size_t n, bool swap, double* mn, double* mx) {
  const DF df;
  const DU du;
  const std::size_t lanes = hn::Lanes(df);
  auto vmin = hn::Set(df, std::numeric_limits<double>::infinity());
  auto vmax = hn::Set(df, -std::numeric_limits<double>::infinity());
  auto vmin2 = vmin;
  auto vmax2 = vmax;
  VU bad = hn::Zero(du);
  std::size_t i = values_before_vector_boundary(du, p, n);
  if (i > 0) {
    const VU b = load_partial_bits(du, p, i, swap);
    bad = non_finite_lanes(du, b);
    vmin = hn::BitCast(df, b);
    vmax = vmin;
  }
  for (; i + 2 * lanes <= n; i += 2 * lanes) {
    const VU b0 = load_bits(du, p + 8 * i, swap);
    const VU b1 = load_bits(du, p + 8 * (i + lanes), swap);
    bad = hn::Or(bad, hn::Or(non_finite_lanes(du, b0), non_finite_lanes(du, b1)));
    vmin = hn::Min(vmin, hn::BitCast(df, b0));
    vmax = hn::Max(vmax, hn::BitCast(df, b0));
    vmin2 = hn::Min(vmin2, hn::BitCast(df, b1));
    vmax2 = hn::Max(vmax2, hn::BitCast(df, b1));
  }
  for (; i < n; i += lanes) {
    const VU b =
        n - i >= lanes ? load_bits(du, p + 8 * i, swap) : load_partial_bits(du, p + 8 * i, n - i, swap);
    bad = hn::Or(bad, non_finite_lanes(du, b));
    vmin = hn::Min(vmin, hn::BitCast(df, b));
    vmax = hn::Max(vmax, hn::BitCast(df, b));
  }
  if (!all_finite(du, bad)) return false;
  *mn = hn::GetLane(hn::MinOfLanes(df, hn::Min(vmin, vmin2)));
  *mx = hn::GetLane(hn::MaxOfLanes(df, hn::Max(vmax, vmax2)));
  return true;
}

// Quantises n values (B <= 52, maxq = 2^B - 1 exact as a double) into q;
// false if any value is NaN or ±Inf.
bool quantise_block(const std::byte* p, std::size_t n, bool swap, double r, double scale, double maxq,
                    std::uint64_t* q) {
  const DF df;
  const DU du;
  const std::size_t lanes = hn::Lanes(df);
  const auto vr = hn::Set(df, r);
  const auto vs = hn::Set(df, scale);
  const auto vmaxq = hn::Set(df, maxq);
  const auto half = hn::Set(df, 0.5);
  const auto one = hn::Set(df, 1.0);
  const auto magic = hn::Set(df, 4503599627370496.0);  // 2^52
  const VU magic_bits = hn::Set(du, 0x4330000000000000ULL);
  VU bad = hn::Zero(du);
  const auto step = [&](VU bits) {
    bad = hn::Or(bad, non_finite_lanes(du, bits));
    const auto x = hn::Mul(hn::Sub(hn::BitCast(df, bits), vr), vs);
    // round() half away from zero, exactly: x - trunc(x) is exact for every
    // double. Only x >= 0.5 gives a nonzero q (smaller, negative and NaN x
    // saturate to 0); +Inf has a NaN fraction, stays +Inf and clamps to maxq.
    auto t = hn::Trunc(x);
    t = hn::Add(t, hn::IfThenElseZero(hn::Ge(hn::Sub(x, t), half), one));
    t = hn::IfThenElseZero(hn::Ge(x, half), hn::Min(t, vmaxq));
    // t is an integer in [0, 2^52): 2^52 + t is exact and its low mantissa
    // bits are t.
    return hn::Xor(hn::BitCast(du, hn::Add(t, magic)), magic_bits);
  };
  std::size_t i = values_before_vector_boundary(du, p, n);
  if (i > 0) store_partial(du, step(load_partial_bits(du, p, i, swap)), i, q);
  for (; i + lanes <= n; i += lanes) hn::StoreU(step(load_bits(du, p + 8 * i, swap)), du, q + i);
  if (i < n) store_partial(du, step(load_partial_bits(du, p + 8 * i, n - i, swap)), n - i, q + i);
  return all_finite(du, bad);
}

// value = R + inv * double(q) for n integers below 2^52, stored in the
// requested byte order.
void dequantise_block(const std::uint64_t* q, std::size_t n, double r, double inv, bool swap,
                      std::byte* out) {
  const DF df;
  const DU du;
  const std::size_t lanes = hn::Lanes(df);
  const auto vr = hn::Set(df, r);
  const auto vinv = hn::Set(df, inv);
  const auto magic = hn::Set(df, 4503599627370496.0);  // 2^52
  const VU magic_bits = hn::Set(du, 0x4330000000000000ULL);
  const auto step = [&](VU vq) {
    const auto qd = hn::Sub(hn::BitCast(df, hn::Or(vq, magic_bits)), magic);  // exact below 2^52
    const VU bits = hn::BitCast(du, hn::Add(vr, hn::Mul(vinv, qd)));
    return swap ? bswap64(du, bits) : bits;
  };
  // Stores, like loads, are aligned to whole vectors where they can be.
  const auto* qb = reinterpret_cast<const std::byte*>(q);
  std::size_t i = values_before_vector_boundary(du, out, n);
  if (i > 0) store_partial(du, step(load_partial_bits(du, qb, i, false)), i, out);
  for (; i + lanes <= n; i += lanes) {
    hn::StoreU(step(hn::LoadU(du, q + i)), du, reinterpret_cast<std::uint64_t*>(out + 8 * i));
  }
  if (i < n) store_partial(du, step(load_partial_bits(du, qb + 8 * i, n - i, false)), n - i, out + 8 * i);
}

// Packs n B-bit integers MSB-first from a byte boundary; the last byte's
// unused low bits are 0. Writes exactly ceil(n·B/8) bytes.
void pack_block(const std::uint64_t* q, std::size_t n, unsigned bits, std::byte* out) {
  switch (bits) {
    case 8:
      for (std::size_t i = 0; i < n; ++i) out[i] = static_cast<std::byte>(q[i]);
      return;
    case 16:
      for (std::size_t i = 0; i < n; ++i)
        tensogram::store_be16(out + 2 * i, static_cast<std::uint16_t>(q[i]));
      return;
    case 24: {
      // Four fields (96 bits) per step as one 8-byte and one 4-byte store:
      // fields 0, 1 and the high 16 bits of 2, then the low 8 bits of 2 and
      // field 3. Exactly 12 bytes per step, so nothing is written past the
      // block; the last n % 4 fields are stored bytewise.
      std::size_t i = 0;
      for (; i + 4 <= n; i += 4) {
        const std::uint64_t head = (q[i] << 40) | (q[i + 1] << 16) | (q[i + 2] >> 8);
        const auto tail = static_cast<std::uint32_t>(((q[i + 2] & 0xFF) << 24) | q[i + 3]);
        tensogram::store_be64(out + 3 * i, head);
        tensogram::store_be32(out + 3 * i + 8, tail);
      }
      for (; i < n; ++i) {
        out[3 * i] = static_cast<std::byte>(q[i] >> 16);
        out[3 * i + 1] = static_cast<std::byte>(q[i] >> 8);
        out[3 * i + 2] = static_cast<std::byte>(q[i]);
      }
      return;
    }
    case 32:
      for (std::size_t i = 0; i < n; ++i)
        tensogram::store_be32(out + 4 * i, static_cast<std::uint32_t>(q[i]));
      return;
    case 64:
      for (std::size_t i = 0; i < n; ++i) tensogram::store_be64(out + 8 * i, q[i]);
      return;
    default: break;
  }
  // Any other width: a 64-bit accumulator filled from its most significant
  // bit, written out a whole word at a time.
  std::uint64_t acc = 0;
  unsigned fill = 0;
  std::byte* o = out;
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint64_t v = q[i];
    if (fill + bits < 64) {
      acc |= v << (64 - fill - bits);
      fill += bits;
    } else {
      const unsigned spill = fill + bits - 64;  // bits of v that do not fit
      tensogram::store_be64(o, acc | (v >> spill));
      o += 8;
      acc = spill == 0 ? 0 : v << (64 - spill);
      fill = spill;
    }
  }
  for (unsigned k = 0; k < fill; k += 8) *o++ = static_cast<std::byte>(acc >> (56 - k));
}

// Encodes values [0, n) of one chunk (n·B is a multiple of 8 except for the
// data's last chunk) into out; false if a value is NaN or ±Inf (the caller
// locates it).
bool EncodeChunk(const std::byte* in, std::size_t n, bool swap, double r, double scale, unsigned bits,
                 std::byte* out) {
  alignas(64) std::uint64_t q[sd::block];
  const std::uint64_t maxq =
      bits >= 64 ? std::numeric_limits<std::uint64_t>::max() : (std::uint64_t{1} << bits) - 1;
  for (std::size_t b = 0; b < n; b += sd::block) {
    const std::size_t m = std::min(sd::block, n - b);
    const std::byte* src = in + 8 * b;
    if (bits <= sd::simd_max_bits) {
      if (!quantise_block(src, m, swap, r, scale, static_cast<double>(maxq), q)) return false;
    } else {
      std::uint64_t any_bad = 0;
      for (std::size_t i = 0; i < m; ++i) {
        std::uint64_t u = load_native<std::uint64_t>(src + 8 * i);
        if (swap) u = __builtin_bswap64(u);
        any_bad |= static_cast<std::uint64_t>(!sd::is_finite_bits(u));
        q[i] = sd::quantise(tensogram::bit_cast<double>(u), r, scale, maxq);
      }
      if (any_bad != 0) return false;
    }
    pack_block(q, m, bits, out + b / 8 * bits);
  }
  return true;
}

// Reads n fields of `bits` bits starting at stream bit `first_bit` into q.
// `size` bounds every read.
void unpack_block(const std::byte* p, std::size_t size, std::uint64_t first_bit, std::size_t n, unsigned bits,
                  std::uint64_t* q) {
  if (first_bit % 8 == 0) {
    const std::byte* s = p + first_bit / 8;
    switch (bits) {
      case 8:
        for (std::size_t i = 0; i < n; ++i) q[i] = static_cast<std::uint64_t>(s[i]);
        return;
      case 16:
        for (std::size_t i = 0; i < n; ++i) q[i] = tensogram::load_be16(s + 2 * i);
        return;
      case 24:
        if (n == 0) return;
        for (std::size_t i = 0; i + 1 < n; ++i) q[i] = tensogram::load_be32(s + 3 * i) >> 8;
        q[n - 1] = (static_cast<std::uint64_t>(s[3 * n - 3]) << 16) |
                   (static_cast<std::uint64_t>(s[3 * n - 2]) << 8) | static_cast<std::uint64_t>(s[3 * n - 1]);
        return;
      case 32:
        for (std::size_t i = 0; i < n; ++i) q[i] = tensogram::load_be32(s + 4 * i);
        return;
      case 64:
        for (std::size_t i = 0; i < n; ++i) q[i] = tensogram::load_be64(s + 8 * i);
        return;
      default: break;
    }
  }
  // Generic: each field from an unaligned big-endian 64-bit window at its
  // first byte (plus a ninth byte when it straddles, B > 56). Fields whose
  // window would pass `size` are read bytewise.
  std::size_t fast = 0;
  if (size >= 9) {
    const std::uint64_t limit_bit = (static_cast<std::uint64_t>(size) - 9) * 8 + 7;
    if (first_bit <= limit_bit)
      fast = static_cast<std::size_t>(std::min<std::uint64_t>(n, (limit_bit - first_bit) / bits + 1));
  }
  std::uint64_t pos = first_bit;
  const unsigned down = 64 - bits;
  if (bits <= 56) {
    for (std::size_t i = 0; i < fast; ++i, pos += bits) {
      q[i] = (tensogram::load_be64(p + pos / 8) << (pos % 8)) >> down;
    }
  } else {
    for (std::size_t i = 0; i < fast; ++i, pos += bits) {
      const auto s = static_cast<unsigned>(pos % 8);
      const std::byte* w = p + pos / 8;
      std::uint64_t v = (tensogram::load_be64(w) << s) >> down;
      if (s + bits > 64) v |= static_cast<std::uint64_t>(w[8]) >> (72 - s - bits);
      q[i] = v;
    }
  }
  for (std::size_t i = fast; i < n; ++i, pos += bits) q[i] = sd::read_field_bytes(p, pos, bits);
}

// Decodes `count` fields from stream bit `first_bit` of p[0, size) (bounds
// already checked) into float64 values in the requested byte order.
void DecodeBits(const std::byte* p, std::size_t size, std::uint64_t first_bit, std::size_t count,
                unsigned bits, double r, double inv, bool swap, std::byte* out) {
  alignas(64) std::uint64_t q[sd::block];
  for (std::size_t b = 0; b < count; b += sd::block) {
    const std::size_t m = std::min(sd::block, count - b);
    unpack_block(p, size, first_bit + static_cast<std::uint64_t>(b) * bits, m, bits, q);
    if (bits <= sd::simd_max_bits) {
      dequantise_block(q, m, r, inv, swap, out + 8 * b);
    } else {
      for (std::size_t i = 0; i < m; ++i)
        sd::store_f64(out + 8 * (b + i), r + inv * static_cast<double>(q[i]), swap);
    }
  }
}

}  // namespace
}  // namespace tensogram::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace tensogram {

HWY_EXPORT(ScanF64);
HWY_EXPORT(EncodeChunk);
HWY_EXPORT(DecodeBits);

double powi(double base, std::int32_t k) noexcept {
  // Spec 03 §4.2, the compiler-runtime algorithm: two's-complement bit test
  // and truncating division also for negative k.
  const bool recip = k < 0;
  double r = 1.0;
  for (;;) {
    if ((k & 1) != 0) r *= base;
    k /= 2;
    if (k == 0) break;
    base *= base;
  }
  return recip ? 1.0 / r : r;
}

namespace {

using sp_detail::load_f64;

std::int32_t saturating_i32(double x) noexcept {
  if (std::isnan(x)) return 0;
  if (x >= 2147483647.0) return std::numeric_limits<std::int32_t>::max();
  if (x <= -2147483648.0) return std::numeric_limits<std::int32_t>::min();
  return static_cast<std::int32_t>(x);
}

[[noreturn]] void non_finite(double v, std::uint64_t i) {
  if (std::isnan(v)) throw encoding_error("NaN value encountered at index " + std::to_string(i));
  throw encoding_error("infinite value encountered at index " + std::to_string(i));
}

// Throws for the first NaN/±Inf among values [first, last) if there is one.
void throw_first_non_finite(const std::byte* p, std::uint64_t first, std::uint64_t last, bool swap) {
  for (std::uint64_t i = first; i < last; ++i) {
    const double v = load_f64(p + i * 8, swap);
    if (!std::isfinite(v)) non_finite(v, i);
  }
}

// Min/max of n >= 1 values with §4.4's tie rule, or the first non-finite
// value's error. With threads, chunks are scanned in parallel: min and max
// are exact, so the result does not depend on the split.
void scan(const std::byte* p, std::uint64_t n, bool swap, double& mn, double& mx, std::uint32_t threads) {
  constexpr std::uint64_t chunk = std::uint64_t{1} << 18;  // 2 MiB of values
  const auto chunks = static_cast<std::size_t>((n + chunk - 1) / chunk);
  if (threads <= 1 || chunks <= 1) {
    if (!HWY_DYNAMIC_DISPATCH(ScanF64)(p, static_cast<std::size_t>(n), swap, &mn, &mx)) {
      throw_first_non_finite(p, 0, n, swap);
    }
  } else {
    struct extremes {
      double mn = 0.0;
      double mx = 0.0;
      bool finite = false;
    };
    std::vector<extremes> parts(chunks);
    parallel_for(chunks, threads, [&](std::size_t c) {
      const std::uint64_t first = c * chunk;
      const std::uint64_t count = std::min(n, first + chunk) - first;
      extremes& e = parts[c];
      e.finite =
          HWY_DYNAMIC_DISPATCH(ScanF64)(p + first * 8, static_cast<std::size_t>(count), swap, &e.mn, &e.mx);
    });
    mn = parts.front().mn;
    mx = parts.front().mx;
    for (const extremes& e : parts) {
      // Rare: report the first non-finite value of the whole array.
      if (!e.finite) throw_first_non_finite(p, 0, n, swap);
      mn = std::min(mn, e.mn);
      mx = std::max(mx, e.mx);
    }
  }
  // The scalar scan keeps the first of equal values; only ±0.0 are equal
  // with different bits. A zero minimum means every value before the first
  // zero is positive, so the scan's minimum is that first zero (likewise
  // for a zero maximum).
  if (mn == 0.0 || mx == 0.0) {
    for (std::uint64_t i = 0; i < n; ++i) {
      const double v = load_f64(p + i * 8, swap);
      if (v == 0.0) {
        if (mn == 0.0) mn = v;
        if (mx == 0.0) mx = v;
        break;
      }
    }
  }
}

void validate(const simple_packing_params& p) {
  if (p.bits_per_value > 64) {
    throw encoding_error("bits_per_value " + std::to_string(p.bits_per_value) + " exceeds maximum of 64");
  }
}

}  // namespace

simple_packing_params simple_packing_compute_params(std::span<const double> values, std::uint32_t bits,
                                                    std::int32_t decimal_scale_factor) {
  return simple_packing_compute_params(std::as_bytes(values), native_byte_order(), bits,
                                       decimal_scale_factor);
}

simple_packing_params simple_packing_compute_params(std::span<const std::byte> raw, byte_order order,
                                                    std::uint32_t bits, std::int32_t decimal_scale_factor,
                                                    std::uint32_t threads) {
  simple_packing_params p;
  p.bits_per_value = bits;
  p.decimal_scale_factor = decimal_scale_factor;
  validate(p);
  const std::uint64_t n = raw.size() / 8;
  const bool swap = order != native_byte_order();
  if (n == 0 || bits == 0) {
    // The first value, not the minimum (spec 03 §4.4).
    p.reference_value = n == 0 ? 0.0 : load_f64(raw.data(), swap);
    return p;
  }
  double mn = 0.0;
  double mx = 0.0;
  scan(raw.data(), n, swap, mn, mx, threads);
  const double range = (mx - mn) * powi(10.0, decimal_scale_factor);
  const double maxq =
      bits >= 64 ? 18446744073709551616.0 : static_cast<double>((std::uint64_t{1} << bits) - 1);
  p.reference_value = mn;
  p.binary_scale_factor =
      (range == 0.0 || maxq == 0.0) ? 0 : saturating_i32(std::ceil(std::log2(range / maxq)));
  return p;
}

namespace codecs {

std::uint64_t simple_packing_size(std::uint64_t n, std::uint32_t bits) noexcept {
  // ceil(n·B/8) without overflowing the intermediate product; saturates for
  // absurd n, which callers reject against the payload size.
  std::uint64_t whole = 0;
  if (__builtin_mul_overflow(n / 8, std::uint64_t{bits}, &whole)) return UINT64_MAX;
  return whole + ((n % 8) * bits + 7) / 8;
}

namespace {

void validate_for_encode(const simple_packing_params& p) {
  validate(p);
  if (!std::isfinite(p.reference_value)) throw encoding_error("invalid reference_value: must be finite");
  if (p.binary_scale_factor > 256 || p.binary_scale_factor < -256) {
    throw encoding_error("invalid binary_scale_factor: " + std::to_string(p.binary_scale_factor) +
                         " (|E| must be <= 256)");
  }
}

}  // namespace

void simple_packing_encode_part(std::span<const std::byte> input, std::uint64_t first, std::uint64_t count,
                                byte_order order, const simple_packing_params& p, std::span<std::byte> out) {
  validate_for_encode(p);
  const unsigned bits = p.bits_per_value;
  const std::uint64_t n = input.size() / 8;
  if (bits == 0 || first > n || count > n - first || ((first % 8) != 0 && bits % 8 != 0) ||
      out.size() != simple_packing_size(count, bits)) {
    throw encoding_error("simple_packing part [" + std::to_string(first) + ", +" + std::to_string(count) +
                         ") of " + std::to_string(n) + " values does not fit its output");
  }
  const double scale = powi(10.0, p.decimal_scale_factor) * powi(2.0, -p.binary_scale_factor);
  if (!HWY_DYNAMIC_DISPATCH(EncodeChunk)(input.data() + first * 8, static_cast<std::size_t>(count),
                                         order != native_byte_order(), p.reference_value, scale, bits,
                                         out.data())) {
    throw_first_non_finite(input.data(), first, first + count, order != native_byte_order());
  }
}

void simple_packing_encode(std::span<const std::byte> input, byte_order order, const simple_packing_params& p,
                           std::span<std::byte> out, std::uint32_t threads) {
  validate_for_encode(p);
  const std::uint64_t n = input.size() / 8;
  const bool swap = order != native_byte_order();
  const unsigned bits = p.bits_per_value;
  if (bits == 0 || out.size() != simple_packing_size(n, bits)) {
    // Nothing is packed, but non-finite values are still reported first
    // (§4.5), as before any write.
    if (n > 0) {
      double mn = 0.0;
      double mx = 0.0;
      if (!HWY_DYNAMIC_DISPATCH(ScanF64)(input.data(), static_cast<std::size_t>(n), swap, &mn, &mx)) {
        throw_first_non_finite(input.data(), 0, n, swap);
      }
    }
    if (bits == 0) return;
    throw encoding_error("simple_packing output buffer has the wrong size");
  }
  const double scale = powi(10.0, p.decimal_scale_factor) * powi(2.0, -p.binary_scale_factor);
  const double r = p.reference_value;
  // Chunks of a multiple of 8 values start on byte boundaries, so they pack
  // independently into disjoint bytes: identical output for any thread count.
  // The finiteness check is fused into the packing; a chunk that meets a
  // NaN/±Inf rescans itself for the first one, and parallel_for rethrows the
  // lowest chunk's error, so the index named is the first overall (§4.5).
  const std::uint64_t chunk = 1U << 16;
  const auto chunks = static_cast<std::size_t>((n + chunk - 1) / chunk);
  parallel_for(chunks, threads, [&](std::size_t c) {
    const std::uint64_t first = c * chunk;
    const std::uint64_t last = std::min(n, first + chunk);
    const auto byte0 = static_cast<std::size_t>(first / 8 * bits);
    if (!HWY_DYNAMIC_DISPATCH(EncodeChunk)(input.data() + first * 8, static_cast<std::size_t>(last - first),
                                           swap, r, scale, bits, out.data() + byte0)) {
      throw_first_non_finite(input.data(), first, last, swap);
    }
  });
}

void simple_packing_decode_bits(std::span<const std::byte> packed, std::uint64_t first_bit,
                                std::uint64_t count, const simple_packing_params& p, byte_order order,
                                std::span<std::byte> out) {
  validate(p);
  if (out.size() / 8 < count) throw encoding_error("simple_packing output buffer too small");
  const bool swap = order != native_byte_order();
  const unsigned bits = p.bits_per_value;
  if (bits == 0) {
    for (std::uint64_t i = 0; i < count; ++i)
      sp_detail::store_f64(out.data() + i * 8, p.reference_value, swap);
    return;
  }
  // Bits needed: first_bit + count·B, checked without overflow.
  std::uint64_t field_bits = 0;
  std::uint64_t end_bit = 0;
  if (__builtin_mul_overflow(count, std::uint64_t{bits}, &field_bits) ||
      __builtin_add_overflow(first_bit, field_bits, &end_bit) ||
      end_bit / 8 + (end_bit % 8 != 0) > packed.size()) {
    throw encoding_error("insufficient data: simple_packing needs " + std::to_string(count) + " values of " +
                         std::to_string(bits) + " bits from bit " + std::to_string(first_bit) +
                         ", payload has " + std::to_string(packed.size()) + " byte(s)");
  }
  const double inv = powi(2.0, p.binary_scale_factor) * powi(10.0, -p.decimal_scale_factor);
  HWY_DYNAMIC_DISPATCH(DecodeBits)
  (packed.data(), packed.size(), first_bit, static_cast<std::size_t>(count), bits, p.reference_value, inv,
   swap, out.data());
}

void simple_packing_decode_range(std::span<const std::byte> packed, std::uint64_t first, std::uint64_t count,
                                 const simple_packing_params& p, byte_order order, std::span<std::byte> out) {
  std::uint64_t first_bit = 0;
  if (__builtin_mul_overflow(first, std::uint64_t{p.bits_per_value}, &first_bit)) {
    throw encoding_error("simple_packing range start overflows");
  }
  simple_packing_decode_bits(packed, first_bit, count, p, order, out);
}

void simple_packing_decode(std::span<const std::byte> packed, std::uint64_t n, const simple_packing_params& p,
                           byte_order order, std::span<std::byte> out, std::uint32_t threads) {
  validate(p);
  if (simple_packing_size(n, p.bits_per_value) > packed.size()) {
    throw encoding_error("insufficient data: simple_packing needs " +
                         std::to_string(simple_packing_size(n, p.bits_per_value)) + " byte(s), payload has " +
                         std::to_string(packed.size()));
  }
  if (out.size() / 8 < n) throw encoding_error("simple_packing output buffer too small");
  const std::uint64_t chunk = 1U << 16;
  const auto chunks = static_cast<std::size_t>((n + chunk - 1) / chunk);
  parallel_for(chunks, threads, [&](std::size_t c) {
    const std::uint64_t first = c * chunk;
    const std::uint64_t count = std::min(n, first + chunk) - first;
    simple_packing_decode_range(
        packed, first, count, p, order,
        out.subspan(static_cast<std::size_t>(first * 8), static_cast<std::size_t>(count * 8)));
  });
}

}  // namespace codecs
}  // namespace tensogram
#endif  // HWY_ONCE
