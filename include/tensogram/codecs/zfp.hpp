// `zfp`: lossy float64 compression (spec 03 §8.6), our own implementation of
// zfp's algorithm (src/codecs/zfp/), bit for bit the stream libzfp 1.0.x
// writes with its default 64-bit stream words.
//
// Format: the stage input is read as host-order float64 and compressed as a
// 1-D field of n = len/8 values regardless of the tensor's shape, in blocks
// of four (a last partial block padded as zfp pads it); no zfp header is
// written; the stream is flushed to whole 64-bit little-endian words, so its
// length is a multiple of 8 (Debian's 8-bit-word libzfp writes the same
// bits, minus that padding). Limits: n ≤ 2^60; only serial execution, only
// the three modes below (no reversible or expert mode). Non-finite input is
// coded as libzfp on x86-64 codes it (NaNs are lost; a block holding an
// infinity decodes to garbage), which is what the reference writes there.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace tensogram::codecs {

enum class zfp_mode { fixed_rate, fixed_precision, fixed_accuracy };

struct zfp_params {
  zfp_mode mode = zfp_mode::fixed_rate;
  double rate = 16.0;            // fixed_rate: bits per value
  std::uint32_t precision = 32;  // fixed_precision: bit planes
  double tolerance = 1e-3;       // fixed_accuracy: absolute error
};

/// The largest fixed-rate `rate` zfp_compress accepts: libzfp's bound on
/// bits per block (ZFP_MAX_BITS, 16658) over four values. libzfp and the
/// reference take any rate; beyond this one a block is zero padding (a few
/// hundred bits carry information) and the stream grows without use, e.g.
/// 7 GB for 64 values at rate 886737121. Streams with larger blocks decode.
inline constexpr double zfp_max_rate = 4164.5;

/// zfp's four stream parameters (zfp_stream_params): bits per block at
/// least/at most, bit planes at most, smallest exponent coded.
struct zfp_stream_limits {
  std::uint32_t minbits = 0;
  std::uint32_t maxbits = 0;
  std::uint32_t maxprec = 0;
  std::int32_t minexp = 0;
};

/// What zfp_stream_set_rate(rate, double, 1, false) / _set_precision /
/// _set_accuracy set. Throws `encoding_error` for a tolerance that is not
/// > 0 (libzfp returns 0) and for a negative, NaN or unrepresentable rate
/// (undefined in libzfp).
[[nodiscard]] zfp_stream_limits zfp_stream_parameters(const zfp_params& p);

/// zfp_stream_maximum_size for n values with 64-bit stream words: the
/// longest stream n values can give (saturating at SIZE_MAX).
[[nodiscard]] std::size_t zfp_maximum_size(std::uint64_t n, const zfp_params& p);

/// Throws `encoding_error` when the length is not a multiple of 8, the
/// parameters are rejected (see zfp_stream_parameters) or a fixed rate is
/// above zfp_max_rate.
[[nodiscard]] std::vector<std::byte> zfp_compress(std::span<const std::byte> in, const zfp_params& p);

/// Decodes `n` float64 values (host order). Payloads longer than the largest
/// stream `n` values can produce are rejected (as the reference does).
[[nodiscard]] std::vector<std::byte> zfp_decompress(std::span<const std::byte> payload, std::uint64_t n,
                                                    const zfp_params& p);

/// The same into `out` (exactly `n`·8 bytes, e.g. uninitialised memory the
/// result is returned in). Throws `encoding_error` for any other size.
void zfp_decompress_into(std::span<const std::byte> payload, std::uint64_t n, const zfp_params& p,
                         std::span<std::byte> out);

/// Values [first, first + count) of an n-value stream into `out` (exactly
/// count·8 bytes), equal to the same slice of a full decode, after the same
/// payload checks. Fixed-rate streams are seeked: block b starts at bit
/// b·maxbits and only the blocks holding the values are read (spec 03 §8.6
/// allows it); the other modes decode from block 0 to the last one needed.
void zfp_decompress_range_into(std::span<const std::byte> payload, std::uint64_t n, const zfp_params& p,
                               std::uint64_t first, std::uint64_t count, std::span<std::byte> out);

}  // namespace tensogram::codecs
