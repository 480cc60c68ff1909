// zfp's embedded coding of one 1-D float64 block (spec 03 §8.6; zfp's
// published algorithm, steps 5–7) and the block layout around it:
//
//   block  := 0                                  (all-zero / below minexp)
//           | 1 e[11] planes                     (e = emax + 1023, LSB first)
//   planes := bit planes k = 63 … 64 - prec of the four negabinary
//             coefficients, most significant first, each coded as
//             * the plane's bits of the n coefficients already significant,
//               verbatim (bit i = coefficient i), then
//             * a unary run-length (group test) code for the rest: a 1 says
//               "another coefficient becomes significant in this plane", then
//               one bit per coefficient up to that one (the fourth's is
//               implied); a 0 ends the plane;
//             stopping as soon as maxbits bits have been spent for the block,
//             and zero-padded up to minbits.
//
// prec = min(maxprec, max(0, emax - minexp + 4)); a block whose prec is 0 is
// written as the single 0 bit. A plane costs at most 7 bits (n verbatim +
// run-length ≤ 7 for four coefficients), which the table-driven coder here
// exploits: one lookup per plane instead of one branch per bit. A truncated
// plane is the prefix of its full code, exactly as zfp's bit-at-a-time loop
// with its budget emits it.
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>

#include "tensogram/codecs/zfp.hpp"

#include "bit_stream.hpp"
#include "block_transform.hpp"

namespace tensogram::codecs::zfp_detail {

/// libzfp's four stream parameters (zfp_stream_params).
using coding_params = zfp_stream_limits;

/// The bits of a block header (the 1 flag and the exponent).
inline constexpr unsigned k_header_bits = 1 + k_exponent_bits;
/// The most bits a plane's code can take.
inline constexpr unsigned k_max_plane_bits = 7;

struct plane_code {
  std::uint8_t code = 0;  // bits in stream order, first bit in bit 0
  std::uint8_t length = 0;
  std::uint8_t next_n = 0;  // significant coefficients after the plane
};

/// The code of plane nibble x (bit i = coefficient i) when n coefficients
/// are already significant.
constexpr plane_code make_plane_code(unsigned n, unsigned x) {
  unsigned code = x & ((1U << n) - 1U);
  unsigned len = n;
  x >>= n;
  const auto emit = [&](unsigned bit) { code |= bit << len++; };
  while (n < 4) {
    const unsigned any = x != 0 ? 1U : 0U;  // group test
    emit(any);
    if (any == 0) break;
    while (n < 3) {  // the fourth coefficient's 1 is implied
      const unsigned bit = x & 1U;
      emit(bit);
      if (bit != 0) break;
      x >>= 1;
      ++n;
    }
    x >>= 1;
    ++n;
  }
  return {static_cast<std::uint8_t>(code), static_cast<std::uint8_t>(len), static_cast<std::uint8_t>(n)};
}

inline constexpr auto k_plane_codes = [] {
  std::array<std::array<plane_code, 16>, 5> t{};
  for (unsigned n = 0; n <= 4; ++n) {
    for (unsigned x = 0; x < 16; ++x) t[n][x] = make_plane_code(n, x);
  }
  return t;
}();

struct run_decode {
  std::uint8_t ones = 0;  // coefficients (bit i) found significant in the plane
  std::uint8_t length = 0;
  std::uint8_t next_n = 0;
};

/// Decodes the run-length part of a plane from its next 7 stream bits.
constexpr run_decode make_run_decode(unsigned n, unsigned s) {
  unsigned ones = 0;
  unsigned len = 0;
  const auto next = [&] {
    const unsigned b = (s >> len) & 1U;
    ++len;
    return b;
  };
  while (n < 4) {
    if (next() == 0) break;
    while (n < 3 && next() == 0) ++n;
    ones |= 1U << n;
    ++n;
  }
  return {static_cast<std::uint8_t>(ones), static_cast<std::uint8_t>(len), static_cast<std::uint8_t>(n)};
}

inline constexpr auto k_run_decodes = [] {
  std::array<std::array<run_decode, 128>, 5> t{};
  for (unsigned n = 0; n <= 4; ++n) {
    for (unsigned s = 0; s < 128; ++s) t[n][s] = make_run_decode(n, s);
  }
  return t;
}();

/// Bit k of each coefficient as a nibble.
inline unsigned plane_nibble(const std::uint64_t* u, unsigned k) noexcept {
  return static_cast<unsigned>(((u[0] >> k) & 1U) | (((u[1] >> k) & 1U) << 1) | (((u[2] >> k) & 1U) << 2) |
                               (((u[3] >> k) & 1U) << 3));
}

/// Codes planes 63 … 64 - prec within `budget` bits; returns the bits spent.
inline unsigned encode_planes(bit_writer& w, unsigned budget, unsigned prec,
                              const std::uint64_t* u) noexcept {
  unsigned bits = budget;
  unsigned k = 64;
  const unsigned kmin = 64 - prec;
  // Leading all-zero planes with nothing significant yet cost one 0 bit each.
  const unsigned zeros =
      std::min({static_cast<unsigned>(std::countl_zero(u[0] | u[1] | u[2] | u[3])), prec, bits});
  w.pad(zeros);
  bits -= zeros;
  k -= zeros;
  unsigned n = 0;
  while (bits != 0 && k > kmin) {
    --k;
    const plane_code c = k_plane_codes[n][plane_nibble(u, k)];
    if (c.length > bits) {
      w.write(c.code & low_mask(bits), bits);  // the prefix the budget allows
      bits = 0;
      break;
    }
    w.write(c.code, c.length);
    bits -= c.length;
    n = c.next_n;
  }
  return budget - bits;
}

/// Decodes planes 63 … 64 - prec within `budget` bits into u (zeroed here);
/// returns the bits read.
inline unsigned decode_planes(bit_reader& r, unsigned budget, unsigned prec, std::uint64_t* u) noexcept {
  u[0] = u[1] = u[2] = u[3] = 0;
  unsigned bits = budget;
  unsigned k = 64;
  const unsigned kmin = 64 - prec;
  unsigned n = 0;
  while (bits != 0 && k > kmin) {
    --k;
    unsigned x = 0;
    if (bits >= 4 + k_max_plane_bits) {
      const std::uint64_t s = r.peek();
      const run_decode d = k_run_decodes[n][(s >> n) & 0x7F];
      x = static_cast<unsigned>(s & low_mask(n)) | d.ones;
      const unsigned len = n + d.length;
      r.skip(len);
      bits -= len;
      n = d.next_n;
    } else {
      // Near the budget: zfp's bit-at-a-time loop, which may stop mid-plane.
      const unsigned m = std::min(n, bits);
      bits -= m;
      x = static_cast<unsigned>(r.read(m));
      while (n < 4 && bits != 0) {
        --bits;
        if (r.read(1) == 0) break;
        while (n < 3 && bits != 0) {
          --bits;
          if (r.read(1) != 0) break;
          ++n;
        }
        x |= 1U << n;
        ++n;
      }
    }
    for (unsigned i = 0; i < 4; ++i) u[i] |= static_cast<std::uint64_t>((x >> i) & 1U) << k;
  }
  return budget - bits;
}

/// Encodes four values; returns the bits written (≥ minbits).
inline std::uint32_t encode_block(const double* v, const coding_params& p, bit_writer& w) noexcept {
  const int emax = block_exponent(v);
  const unsigned prec = block_precision(emax, p.maxprec, p.minexp);
  const auto e = prec != 0 ? static_cast<unsigned>(emax + k_exponent_bias) : 0U;
  std::uint32_t bits = 1;
  if (e != 0) {
    w.write(2 * static_cast<std::uint64_t>(e) + 1, k_header_bits);
    bits = k_header_bits;
    std::uint64_t u[4];
    forward_block(v, emax, u);
    bits += encode_planes(w, p.maxbits - bits, prec, u);
  } else {
    w.write(0, 1);
  }
  if (bits < p.minbits) {
    w.pad(p.minbits - bits);
    bits = p.minbits;
  }
  return bits;
}

/// Decodes four values; returns the bits read (≥ minbits).
inline std::uint32_t decode_block(bit_reader& r, const coding_params& p, double* v) noexcept {
  std::uint32_t bits = 1;
  if (r.read(1) != 0) {
    const int emax = static_cast<int>(r.read(k_exponent_bits)) - k_exponent_bias;
    bits = k_header_bits;
    const unsigned prec = block_precision(emax, p.maxprec, p.minexp);
    std::uint64_t u[4];
    bits += decode_planes(r, p.maxbits - bits, prec, u);
    inverse_block(u, emax, v);
  } else {
    v[0] = v[1] = v[2] = v[3] = 0.0;
  }
  if (bits < p.minbits) {
    r.skip(p.minbits - bits);
    bits = p.minbits;
  }
  return bits;
}

}  // namespace tensogram::codecs::zfp_detail
