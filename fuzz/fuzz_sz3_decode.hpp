// The sz3 decode step shared by fuzz_sz3 (arbitrary streams) and
// fuzz_sz3_bound (its own streams with a byte changed).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include <tensogram.hpp>
#include <tensogram/codecs/sz3.hpp>

#include "fuzz_common.hpp"

namespace tensogram_fuzz {

// Bounds what a stream may claim to hold before the harness allocates the
// output: at most 64 values per stream byte (plus 4096), and 2^20. The
// decoder itself refuses claims its bytes cannot back (docs/fuzzing.md,
// "Decode work"), but the output is the caller's: zeroing 12 MB for every
// stream that claims 2^20 values made the target several times slower. A
// constant field (one-symbol Huffman tree) may legitimately exceed 64 per
// byte; the fuzzer loses nothing by decoding only the smaller ones.
inline constexpr std::uint64_t k_sz3_max_values = std::uint64_t{1} << 20;
inline constexpr std::uint64_t k_sz3_values_per_byte = 64;
inline constexpr std::uint64_t k_sz3_value_slack = 4096;

/// Decodes `stream` as float64 and as float32; only `tensogram::error` may
/// come out of the decoder.
inline void sz3_decode_any(std::span<const std::byte> stream) {
  namespace cx = tensogram::codecs;
  try {
    const cx::sz3_stream_info info = cx::sz3_inspect(stream);
    if (info.num > k_sz3_max_values || info.num > k_sz3_values_per_byte * stream.size() + k_sz3_value_slack) {
      return;
    }
    std::vector<double> d(static_cast<std::size_t>(info.num));
    cx::sz3_decompress(stream, std::span<double>(d));
    std::vector<float> f(static_cast<std::size_t>(info.num));
    cx::sz3_decompress(stream, std::span<float>(f));
  } catch (const tensogram::error&) {
  }
}

}  // namespace tensogram_fuzz
