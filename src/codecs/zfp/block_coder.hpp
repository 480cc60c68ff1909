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

/// k_plane_codes[n][x] = make_plane_code(n, x) packed in one integer, code
/// | length << 8 | next_n << 16: the encoder's loop waits on this load, and
/// a single 32-bit one keeps the entry in a register (the three-byte struct
/// was spilled to the stack and reloaded field by field).
inline constexpr auto k_plane_codes = [] {
  std::array<std::array<std::uint32_t, 16>, 5> t{};
  for (unsigned n = 0; n <= 4; ++n) {
    for (unsigned x = 0; x < 16; ++x) {
      const plane_code c = make_plane_code(n, x);
      t[n][x] = c.code | (unsigned{c.length} << 8) | (unsigned{c.next_n} << 16);
    }
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

// ---- bit planes as a nibble sequence ----------------------------------------
//
// The coder walks bit planes 63, 62, … and needs plane k of the four
// coefficients as a nibble (bit i = coefficient i). The planes are kept as
// a 256-bit sequence of nibbles in coding order, four 64-bit words: word c,
// nibble j is plane 63 - 16c - j. Sixteen planes are transposed at once with
// shift-and-mask spreading, and once all four coefficients are significant
// a plane's code is just its nibble, so the rest of the block is a straight
// copy of that sequence to (or from) the stream.

/// The 16 low bits of x at every fourth bit (bit b → bit 4b).
constexpr std::uint64_t spread_nibbles(std::uint64_t x) noexcept {
  x = (x | (x << 24)) & 0x000000ff000000ffULL;
  x = (x | (x << 12)) & 0x000f000f000f000fULL;
  x = (x | (x << 6)) & 0x0303030303030303ULL;
  return (x | (x << 3)) & 0x1111111111111111ULL;
}

/// The inverse of spread_nibbles (bit 4b → bit b; other bits ignored).
constexpr std::uint64_t gather_nibbles(std::uint64_t x) noexcept {
  x &= 0x1111111111111111ULL;
  x = (x | (x >> 3)) & 0x0303030303030303ULL;
  x = (x | (x >> 6)) & 0x000f000f000f000fULL;
  x = (x | (x >> 12)) & 0x000000ff000000ffULL;
  return (x | (x >> 24)) & 0xffffULL;
}

/// Nibble j ↔ nibble 15 - j.
inline std::uint64_t reverse_nibbles(std::uint64_t x) noexcept {
  x = __builtin_bswap64(x);
  return ((x >> 4) & 0x0f0f0f0f0f0f0f0fULL) | ((x & 0x0f0f0f0f0f0f0f0fULL) << 4);
}

/// Every byte with its bits reversed (bit b → bit 7 - b), then spread:
/// bit b → bit 4·(7 - b). A byte of plane bits in ascending plane order
/// becomes nibble positions in descending plane order, the coding order.
inline constexpr auto k_spread_byte_reversed = [] {
  std::array<std::uint32_t, 256> t{};
  for (unsigned b = 0; b < 256; ++b) {
    unsigned r = 0;
    for (unsigned i = 0; i < 8; ++i) r |= ((b >> i) & 1U) << (7 - i);
    t[b] = static_cast<std::uint32_t>(spread_nibbles(r));
  }
  return t;
}();

/// Word c of the plane sequence of u (planes 63 - 16c … 48 - 16c): the
/// high byte of each coefficient's 16 plane bits fills the low half (its
/// planes come first), the low byte the high half.
inline std::uint64_t plane_word(const std::uint64_t* u, unsigned c) noexcept {
  const unsigned low = 48 - 16 * c;
  std::uint64_t r = 0;
  for (unsigned i = 0; i < 4; ++i) {
    const std::uint64_t x = u[i] >> low;
    r |= (k_spread_byte_reversed[(x >> 8) & 0xffU] | (std::uint64_t{k_spread_byte_reversed[x & 0xffU]} << 32))
         << i;
  }
  return r;
}

/// min(bits, 256) / width for a code width of 1 … 4 bits, which equals
/// bits / width wherever it is compared with a count of planes (≤ 64).
/// Multiplying by 2^16 / width rounded up is exact below 2^15; a hardware
/// division here sat on the critical path of every run of quiet planes.
inline unsigned planes_within(unsigned bits, unsigned width) noexcept {
  constexpr std::uint32_t k_reciprocal[5] = {0, 65536, 32768, 21846, 16384};
  return (std::min(bits, 256U) * k_reciprocal[width]) >> 16;
}

/// Packs the 16 nibbles of x, each holding a value below 2^(width - 1),
/// into width-bit fields (width 1 … 4): nibble pairs into bytes, byte pairs
/// into 16-bit fields, and so on, each step shifting the upper half down by
/// what the lower half does not use. One branch-free path for every width.
inline std::uint64_t pack_nibbles(std::uint64_t x, unsigned width) noexcept {
  x = (x & 0x0f0f0f0f0f0f0f0fULL) | ((x & 0xf0f0f0f0f0f0f0f0ULL) >> (4 - width));
  x = (x & 0x00ff00ff00ff00ffULL) | ((x & 0xff00ff00ff00ff00ULL) >> (8 - 2 * width));
  x = (x & 0x0000ffff0000ffffULL) | ((x & 0xffff0000ffff0000ULL) >> (16 - 4 * width));
  return (x & 0x00000000ffffffffULL) | ((x & 0xffffffff00000000ULL) >> (32 - 8 * width));
}

/// Codes planes 63 … 64 - prec within `budget` bits; returns the bits spent.
[[gnu::always_inline]] inline unsigned encode_planes(bit_writer& w, unsigned budget, unsigned prec,
                                                     const std::uint64_t* u) noexcept {
  unsigned bits = budget;
  const unsigned kmin = 64 - prec;
  unsigned k = 64;  // planes k - 1, k - 2, … remain
  // Words 0 and 1 (planes 63 … 32) are computed up front whenever the
  // block can reach plane 47: with the smooth data zfp is made for, the
  // coefficients other than the mean become significant around there, so
  // a lazy check would only add an unpredictable branch. Words 2 and 3 are
  // computed when first needed.
  std::uint64_t words[4];
  words[0] = plane_word(u, 0);
  unsigned have = 1;  // words[0 .. have) are computed
  if (std::min(prec, budget) > 16) {
    words[1] = plane_word(u, 1);
    have = 2;
  }
  const auto word = [&](unsigned c) {
    while (have <= c) {
      words[have] = plane_word(u, have);
      ++have;
    }
    return words[c];
  };
  const auto nibble = [&](unsigned plane) {
    const unsigned pos = 63 - plane;
    return static_cast<unsigned>((word(pos >> 4) >> (4 * (pos & 15))) & 15U);
  };
  // The `count` ≤ 64 bits of the nibble sequence from bit `off` (higher
  // bits of the result are garbage). The next word is computed only when
  // the bits reach into it: a short budget often ends the block first.
  const auto window = [&](unsigned off, unsigned count) {
    const unsigned c = off >> 6;
    const unsigned sh = off & 63;
    std::uint64_t x = word(c) >> sh;
    if (sh + count > 64) x |= word(c + 1) << (64 - sh);
    return x;
  };
  // Writes `count` bits of the nibble sequence from bit `off`.
  const auto copy_bits = [&](unsigned off, unsigned count) {
    while (count != 0) {
      const unsigned take = std::min(count, 64 - (off & 63));
      w.write((word(off >> 6) >> (off & 63)) & low_mask(take), take);
      off += take;
      count -= take;
    }
  };
  // Byte n of loud_from: one above the top 1 bit of the coefficients n … 3,
  // the ones not yet significant once n are (suffix ORs, computed once per
  // block; packed in a register, as the loop's next step waits on it).
  const std::uint64_t rest3 = u[3];
  const std::uint64_t rest2 = u[2] | rest3;
  const std::uint64_t rest1 = u[1] | rest2;
  const std::uint32_t loud_from = static_cast<std::uint32_t>(std::bit_width(u[0] | rest1)) |
                                  (static_cast<std::uint32_t>(std::bit_width(rest1)) << 8) |
                                  (static_cast<std::uint32_t>(std::bit_width(rest2)) << 16) |
                                  (static_cast<std::uint32_t>(std::bit_width(rest3)) << 24);
  unsigned n = 0;
  while (n < 4) {
    // Quiet planes, where no further coefficient becomes significant, cost
    // n verbatim bits and a 0: the nibble's low n + 1 bits (its bit n is 0).
    // They run down to the top 1 bit of the coefficients not yet significant.
    const unsigned loud = (loud_from >> (8 * n)) & 0xffU;
    const unsigned width = n + 1;
    const unsigned quiet = std::min(k - std::max(loud, kmin), planes_within(bits, width));
    if (n == 0) {
      w.pad(quiet);
    } else {
      // n + 1-bit codes, 16 planes at a time: each nibble's low n + 1 bits
      // (the bits above n are 0 in a quiet plane), packed.
      for (unsigned done = 0; done < quiet; done += 16) {
        const unsigned planes = std::min(16U, quiet - done);
        const unsigned m = width * planes;
        w.write(pack_nibbles(window(4 * (64 - k + done), 4 * planes), width) & low_mask(m), m);
      }
    }
    k -= quiet;
    bits -= quiet * width;
    if (bits == 0 || k == kmin) return budget - bits;
    --k;
    const std::uint32_t c = k_plane_codes[n][nibble(k)];
    const unsigned code = c & 0xffU;
    const unsigned length = (c >> 8) & 0xffU;
    if (length > bits) {
      w.write(code & low_mask(bits), bits);  // the prefix the budget allows
      return budget;
    }
    w.write(code, length);
    bits -= length;
    n = c >> 16;
  }
  // All significant: the remaining planes are their nibbles, verbatim.
  const unsigned total = std::min(4 * (k - kmin), bits);
  copy_bits(4 * (64 - k), total);
  bits -= total;
  return budget - bits;
}

/// Decodes planes 63 … 64 - prec within `budget` bits into u; returns the
/// bits read.
[[gnu::always_inline]] inline unsigned decode_planes(bit_reader& r, unsigned budget, unsigned prec,
                                                     std::uint64_t* u) noexcept {
  std::uint64_t words[4] = {0, 0, 0, 0};
  unsigned bits = budget;
  const unsigned kmin = 64 - prec;
  unsigned k = 64;
  unsigned n = 0;
  while (n < 4 && bits != 0 && k != kmin) {
    // Quiet planes (group test 0): n verbatim bits and a 0 each, read in
    // batches of up to 56 bits.
    const unsigned width = n + 1;
    for (;;) {
      const std::uint64_t s = r.peek();
      const unsigned fit = std::min({planes_within(56, width), k - kmin, planes_within(bits, width)});
      unsigned t = 0;
      std::uint64_t v = s;
      while (t < fit && ((v >> n) & 1U) == 0) {
        const unsigned pos = 63 - (k - 1 - t);
        words[pos >> 4] |= (v & low_mask(n)) << (4 * (pos & 15));
        v >>= width;
        ++t;
      }
      r.skip(t * width);
      bits -= t * width;
      k -= t;
      if (t < fit || fit == 0) break;
    }
    if (bits == 0 || k == kmin) break;
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
    const unsigned pos = 63 - k;
    words[pos >> 4] |= std::uint64_t{x} << (4 * (pos & 15));
  }
  if (n == 4) {
    // All significant: the remaining planes are their nibbles, verbatim.
    std::uint64_t total = std::min<std::uint64_t>(4 * std::uint64_t{k - kmin}, bits);
    bits -= static_cast<unsigned>(total);
    std::uint64_t off = 4 * std::uint64_t{64 - k};
    while (total != 0) {
      const auto shift = static_cast<unsigned>(off & 63);
      const auto take = static_cast<unsigned>(std::min<std::uint64_t>({total, 64 - shift, 56}));
      words[off >> 6] |= r.read(take) << shift;
      off += take;
      total -= take;
    }
  }
  for (unsigned i = 0; i < 4; ++i) u[i] = 0;
  for (unsigned c = 0; c < 4; ++c) {
    if (words[c] == 0) continue;
    const std::uint64_t t = reverse_nibbles(words[c]);
    for (unsigned i = 0; i < 4; ++i) u[i] |= gather_nibbles(t >> i) << (48 - 16 * c);
  }
  return budget - bits;
}

/// A block after steps 1–4 (block_transform.hpp): its exponent and its
/// negabinary coefficients.
struct transformed_block {
  int emax = 0;
  std::uint64_t u[4] = {};
};

/// Steps 1–4 for four values. Computed for every block, also those coded as
/// a single 0 (their coefficients are then unused), so that callers can
/// transform blocks in batches without a branch.
inline void transform_block(const double* v, transformed_block& t) noexcept {
  t.emax = block_exponent(v);
  forward_block(v, t.emax, t.u);
}

/// Codes a transformed block; returns the bits written (≥ minbits).
[[gnu::always_inline]] inline std::uint32_t encode_transformed(const transformed_block& t,
                                                               const coding_params& p,
                                                               bit_writer& w) noexcept {
  const unsigned prec = block_precision(t.emax, p.maxprec, p.minexp);
  const auto e = prec != 0 ? static_cast<unsigned>(t.emax + k_exponent_bias) : 0U;
  std::uint32_t bits = 1;
  if (e != 0) {
    w.write(2 * static_cast<std::uint64_t>(e) + 1, k_header_bits);
    bits = k_header_bits;
    bits += encode_planes(w, p.maxbits - bits, prec, t.u);
  } else {
    w.write(0, 1);
  }
  if (bits < p.minbits) {
    w.pad(p.minbits - bits);
    bits = p.minbits;
  }
  return bits;
}

/// Encodes four values; returns the bits written (≥ minbits).
[[gnu::always_inline]] inline std::uint32_t encode_block(const double* v, const coding_params& p,
                                                         bit_writer& w) noexcept {
  transformed_block t;
  transform_block(v, t);
  return encode_transformed(t, p, w);
}

/// Decodes four values; returns the bits read (≥ minbits).
[[gnu::always_inline]] inline std::uint32_t decode_block(bit_reader& r, const coding_params& p,
                                                         double* v) noexcept {
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
