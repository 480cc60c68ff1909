// `zfp` (spec 03 §8.6): our own implementation of zfp's algorithm for the
// one case the format uses — a 1-D float64 field, serial, no zfp header —
// bit for bit the stream libzfp 1.0 writes with 64-bit stream words. The
// per-block parts are in zfp/block_transform.hpp and zfp/block_coder.hpp;
// this file maps the modes to zfp's four stream parameters, bounds the
// stream, and walks the blocks (fixed-rate streams by seeking).
#include "tensogram/codecs/zfp.hpp"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>

#include "tensogram/core/error.hpp"
#include "tensogram/core/memory.hpp"

#include "zfp/bit_stream.hpp"
#include "zfp/block_coder.hpp"

namespace tensogram::codecs {

namespace {

using zfp_detail::bit_reader;
using zfp_detail::bit_writer;
using zfp_detail::coding_params;

[[noreturn]] void fail(const std::string& what) {
  throw encoding_error("compression error: zfp error: " + what);
}

// libzfp's bound on bits per block (ZFP_MAX_BITS) outside fixed-rate mode;
// our encoder also refuses fixed-rate blocks beyond it (zfp_compress).
constexpr std::uint32_t k_unlimited_bits = 16658;
static_assert(zfp_max_rate * 4 == k_unlimited_bits);
// Bits zfp_stream_maximum_size reserves for a header (ZFP_HEADER_MAX_BITS).
constexpr std::uint64_t k_header_max_bits = 148;

// A rate as the user wrote it: the fewest significant digits that read
// back as d (printf, not std::to_chars: the WebAssembly build's libc++ 14
// has no floating-point to_chars).
std::string rate_text(double d) {
  char buf[32];
  for (int digits = 1; digits <= 17; ++digits) {
    std::snprintf(buf, sizeof buf, "%.*g", digits, d);
    if (std::strtod(buf, nullptr) == d) break;
  }
  return buf;
}

void check_count(std::uint64_t n) {
  if (n > (std::uint64_t{1} << 60)) fail("value count too large");
}

std::uint64_t block_count(std::uint64_t n) noexcept {
  return (n + 3) / 4;
}

// The most bits a block can take: zfp_stream_maximum_size's per-block
// figure, 1 + 11 + 3 + 4·min(maxprec, 64) clamped to [minbits, maxbits]
// (the 3 covers the run-length bits beyond the four coefficients' planes).
std::uint64_t max_block_bits(const coding_params& p) noexcept {
  std::uint64_t bits = zfp_detail::k_header_bits + 3 + 4 * std::uint64_t{std::min(p.maxprec, 64U)};
  bits = std::min<std::uint64_t>(bits, p.maxbits);
  return std::max<std::uint64_t>(bits, p.minbits);
}

// Bits our encoder may write for a block: a plane costs at most 7 bits.
std::uint64_t encoder_block_bits(const coding_params& p) noexcept {
  const std::uint64_t planes =
      zfp_detail::k_header_bits + std::uint64_t{zfp_detail::k_max_plane_bits} * std::min(p.maxprec, 64U);
  return std::max<std::uint64_t>(std::min<std::uint64_t>(planes, p.maxbits), p.minbits);
}

// Decodes values [first, first + count) of an n-value stream into out
// (count·8 bytes, host order). Fixed-rate streams start block b at bit
// b·maxbits; the other modes are walked from block 0.
void decode_values(std::span<const std::byte> payload, const zfp_params& zp, std::uint64_t first,
                   std::uint64_t count, std::byte* out) {
  if (count == 0) return;
  const coding_params p = zfp_stream_parameters(zp);
  const bool fixed = zp.mode == zfp_mode::fixed_rate;
  bit_reader r(payload.data(), payload.size());
  const std::uint64_t first_block = fixed ? first / 4 : 0;
  const std::uint64_t last_block = (first + count - 1) / 4;
  if (fixed) r.seek(first_block * p.maxbits);
  double block[4];
  for (std::uint64_t b = first_block; b <= last_block; ++b) {
    zfp_detail::decode_block(r, p, block);
    // The part of the block inside [first, first + count): blocks before
    // the range (non-seeking modes) contribute nothing.
    const std::uint64_t lo = std::max(first, b * 4);
    const std::uint64_t hi = std::min(first + count, b * 4 + 4);
    if (lo >= hi) continue;
    std::memcpy(out, block + (lo - b * 4), static_cast<std::size_t>(hi - lo) * 8);
    out += (hi - lo) * 8;
  }
}

// The checks of zfp_decompress_into, in its order, for an n-value stream.
void check_payload(std::span<const std::byte> payload, std::uint64_t n, const zfp_params& p) {
  if (payload.empty()) fail("empty payload for " + std::to_string(n) + " values");
  check_count(n);
  // The reference refuses a stream longer than libzfp's maximum for n values
  // (spec 03 §8.6).
  const std::size_t cap = zfp_maximum_size(n, p);
  if (payload.size() > cap) {
    fail("zfp stream length " + std::to_string(payload.size()) + " inconsistent with descriptor (max " +
         std::to_string(cap) + " for " + std::to_string(n) + " values) — truncated or malformed payload");
  }
}

}  // namespace

zfp_stream_limits zfp_stream_parameters(const zfp_params& p) {
  coding_params c;
  switch (p.mode) {
    case zfp_mode::fixed_rate: {
      // zfp_stream_set_rate(rate, double, dims 1, align false): 4·rate
      // rounded half up, at least the 12 header bits; min = max (spec 03 §8.6).
      const double want = std::floor(4.0 * p.rate + 0.5);
      if (!(want >= 0.0) || want > 4294967295.0) fail("rate " + rate_text(p.rate) + " out of range");
      const auto bits = std::max(static_cast<std::uint32_t>(want), std::uint32_t{zfp_detail::k_header_bits});
      c = {bits, bits, zfp_detail::k_max_precision, zfp_detail::k_min_exponent};
      break;
    }
    case zfp_mode::fixed_precision:
      // zfp_stream_set_precision: 0 means full precision.
      c = {
          1, k_unlimited_bits,
          p.precision != 0 ? std::min(p.precision, zfp_detail::k_max_precision) : zfp_detail::k_max_precision,
          zfp_detail::k_min_exponent};
      break;
    case zfp_mode::fixed_accuracy: {
      // zfp_stream_set_accuracy: minexp = e - 1 for tolerance = f·2^e
      // (frexp), so 2^minexp ≤ tolerance; a tolerance that is not > 0 is
      // refused (the call returns 0).
      if (!(p.tolerance > 0.0))
        fail("zfp_stream_set_accuracy rejected tolerance " + std::to_string(p.tolerance));
      int e = 0;
      static_cast<void>(std::frexp(p.tolerance, &e));
      c = {1, k_unlimited_bits, zfp_detail::k_max_precision, e - 1};
      break;
    }
  }
  return c;
}

std::size_t zfp_maximum_size(std::uint64_t n, const zfp_params& p) {
  // zfp_stream_maximum_size with 64-bit words: header reserve plus the
  // per-block bound, rounded up to whole words.
  std::uint64_t bits = 0;
  if (__builtin_mul_overflow(block_count(n), max_block_bits(zfp_stream_parameters(p)), &bits) ||
      __builtin_add_overflow(bits, k_header_max_bits + 63, &bits) || bits / 64 * 8 > SIZE_MAX) {
    return std::numeric_limits<std::size_t>::max();
  }
  return static_cast<std::size_t>(bits / 64 * 8);
}

std::vector<std::byte> zfp_compress(std::span<const std::byte> in, const zfp_params& zp) {
  if (in.size() % 8 != 0) fail("data length " + std::to_string(in.size()) + " is not a multiple of 8");
  const coding_params p = zfp_stream_parameters(zp);
  // libzfp codes a fixed-rate block of any size, so a rate of 10^9 bits per
  // value asks for 500 MB of stream per block of four values, all but a few
  // hundred bits of it zero padding (max_block_bits). We refuse rates beyond
  // libzfp's own block bound: a block's stream stays under 2,083 bytes. A
  // documented deviation from the reference (docs/pipeline.md).
  if (zp.mode == zfp_mode::fixed_rate && zp.rate > zfp_max_rate) {
    fail("rate " + rate_text(zp.rate) + " out of range: at most " + rate_text(zfp_max_rate) +
         " bits per value (" + std::to_string(k_unlimited_bits) + " bits per block, libzfp's ZFP_MAX_BITS)");
  }
  const std::size_t n = in.size() / 8;
  if (n == 0) return {};
  const std::uint64_t blocks = block_count(n);
  const std::size_t cap = static_cast<std::size_t>((blocks * encoder_block_bits(p) + 63) / 64 * 8);
  // One word of slack for bit_writer::write's store of the partial word.
  std::vector<std::byte> out = make_advised_bytes(cap + 8);
  bit_writer w(out.data());
  const std::byte* src = in.data();
  double block[4];
  const std::size_t full = n / 4;
  // Steps 1–4 for a batch of blocks, then their coding: the transforms in a
  // batch are independent and overlap one another, where block by block each
  // transform's chain of dependent steps stood in front of the block's coding.
  constexpr std::size_t k_batch = 64;
  zfp_detail::transformed_block batch[k_batch];
  for (std::size_t b0 = 0; b0 < full; b0 += k_batch) {
    const std::size_t nb = std::min(k_batch, full - b0);
    for (std::size_t i = 0; i < nb; ++i) {
      std::memcpy(block, src + (b0 + i) * 32, 32);
      zfp_detail::transform_block(block, batch[i]);
    }
    for (std::size_t i = 0; i < nb; ++i) zfp_detail::encode_transformed(batch[i], p, w);
  }
  if (const std::size_t rest = n % 4; rest != 0) {
    double tail[3];
    std::memcpy(tail, src + full * 32, rest * 8);
    zfp_detail::pad_partial_block(tail, rest, block);
    zfp_detail::encode_block(block, p, w);
  }
  const auto written = static_cast<std::size_t>(w.flush() - out.data());
  if (written > cap || written > zfp_maximum_size(n, zp)) fail("compressed stream exceeds its bound");
  out.resize(written);
  return out;
}

std::vector<std::byte> zfp_decompress(std::span<const std::byte> payload, std::uint64_t n,
                                      const zfp_params& p) {
  if (n == 0) {
    if (!payload.empty()) fail("non-empty payload for zero values");
    return {};
  }
  // The size checks of zfp_decompress_into, in its order, before the output
  // is allocated.
  if (payload.empty()) fail("empty payload for " + std::to_string(n) + " values");
  check_count(n);
  std::vector<std::byte> out = make_advised_bytes(static_cast<std::size_t>(n) * 8);
  zfp_decompress_into(payload, n, p, out);
  return out;
}

void zfp_decompress_into(std::span<const std::byte> payload, std::uint64_t n, const zfp_params& p,
                         std::span<std::byte> out) {
  if (n == 0) {
    if (!payload.empty()) fail("non-empty payload for zero values");
    if (!out.empty()) fail("output buffer of " + std::to_string(out.size()) + " bytes for zero values");
    return;
  }
  check_payload(payload, n, p);
  if (out.size() != static_cast<std::size_t>(n) * 8) {
    fail("output buffer of " + std::to_string(out.size()) + " bytes for " + std::to_string(n) + " values");
  }
  decode_values(payload, p, 0, n, out.data());
}

void zfp_decompress_range_into(std::span<const std::byte> payload, std::uint64_t n, const zfp_params& p,
                               std::uint64_t first, std::uint64_t count, std::span<std::byte> out) {
  if (n == 0) {
    if (!payload.empty()) fail("non-empty payload for zero values");
  } else {
    check_payload(payload, n, p);
  }
  std::uint64_t end = 0;
  if (__builtin_add_overflow(first, count, &end) || end > n) {
    fail("range of " + std::to_string(count) + " values at " + std::to_string(first) + " exceeds " +
         std::to_string(n) + " values");
  }
  if (out.size() != static_cast<std::size_t>(count) * 8) {
    fail("output buffer of " + std::to_string(out.size()) + " bytes for " + std::to_string(count) +
         " values");
  }
  decode_values(payload, p, first, count, out.data());
}

}  // namespace tensogram::codecs
