// `zfp`: lossy float64 compression through Debian's libzfp 1.0 (spec 03 §8.6).
//
// The stage input is read as host-order float64 and compressed as a 1-D
// field regardless of the tensor's shape; no zfp header is written. Debian's
// libzfp uses 8-bit stream words, so the output is zero-padded to a
// multiple of 8 bytes to equal the reference's 64-bit-word output.
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

/// Throws `encoding_error` when the length is not a multiple of 8 or the
/// parameters are rejected by libzfp (e.g. tolerance 0).
[[nodiscard]] std::vector<std::byte> zfp_compress(std::span<const std::byte> in, const zfp_params& p);

/// Decodes `n` float64 values (host order). Payloads longer than the largest
/// stream `n` values can produce are rejected (as the reference does).
[[nodiscard]] std::vector<std::byte> zfp_decompress(std::span<const std::byte> payload, std::uint64_t n,
                                                    const zfp_params& p);

/// The same into `out` (exactly `n`·8 bytes, e.g. uninitialised memory the
/// result is returned in). Throws `encoding_error` for any other size.
void zfp_decompress_into(std::span<const std::byte> payload, std::uint64_t n, const zfp_params& p,
                         std::span<std::byte> out);

}  // namespace tensogram::codecs
