// libFuzzer target: the sz3 stream reader (spec 03 §8.7, docs/sz3-format.md)
// over arbitrary bytes, and the encoder's error bound as a property.
//
// The first byte chooses a bound; the rest is (1) decoded as an SZ3 stream,
// which must end in a `tensogram::error` or a result, then (2) read as
// doubles, compressed, decompressed — every finite value must come back
// within the absolute bound, non-finite ones exactly (NaN as NaN) — and the
// stream decoded again with one byte changed (must not crash).
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include <tensogram.hpp>
#include <tensogram/codecs/sz3.hpp>

#include "fuzz_common.hpp"

namespace {

namespace cx = tensogram::codecs;

// Bounds what a stream may claim to hold before the harness allocates the
// output: at most 64 values per stream byte (plus 4096), and 2^20. The
// decoder itself refuses claims its bytes cannot back (docs/fuzzing.md,
// "Decode work"), but the output is the caller's: zeroing 12 MB for every
// stream that claims 2^20 values made the target several times slower. A
// constant field (one-symbol Huffman tree) may legitimately exceed 64 per
// byte; the fuzzer loses nothing by decoding only the smaller ones.
constexpr std::uint64_t k_max_values = std::uint64_t{1} << 20;
constexpr std::uint64_t k_values_per_byte = 64;
constexpr std::uint64_t k_value_slack = 4096;
constexpr std::size_t k_property_values = 2048;

void decode_any(std::span<const std::byte> stream) {
  try {
    const cx::sz3_stream_info info = cx::sz3_inspect(stream);
    if (info.num > k_max_values || info.num > k_values_per_byte * stream.size() + k_value_slack) return;
    std::vector<double> d(static_cast<std::size_t>(info.num));
    cx::sz3_decompress(stream, std::span<double>(d));
    std::vector<float> f(static_cast<std::size_t>(info.num));
    cx::sz3_decompress(stream, std::span<float>(f));
  } catch (const tensogram::error&) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 2) return 0;
  const std::uint8_t selector = data[0];
  const std::span<const std::byte> rest = tensogram_fuzz::as_bytes(data + 1, size - 1);
  decode_any(rest);

  // The bound property on at most k_property_values values: compressing
  // tries both predictors, each of whose inner loops libFuzzer traces
  // comparison by comparison, so 8192 values (a 64 KiB input) cost ~5 ms and
  // held the target near 200 executions per second (docs/fuzzing.md). 2048
  // values are still 16 of the 1-D Lorenzo predictor's 128-value blocks and
  // 11 interpolation levels; the decoder above reads the whole input.
  const std::size_t n = std::min<std::size_t>(rest.size() / 8, k_property_values);
  if (n == 0) return 0;
  std::vector<double> values(n);
  std::memcpy(values.data(), rest.data(), n * 8);
  const double bound = std::ldexp(1.0, -static_cast<int>(selector % 24));  // 1 down to 2^-23
  std::vector<std::byte> stream;
  try {
    const std::size_t shape[1] = {n};
    stream = cx::sz3_compress(std::span<const double>(values), shape, {cx::sz3_error_bound_mode::abs, bound});
  } catch (const tensogram::error&) {
    std::abort();  // any doubles with a positive bound must compress
  }
  std::vector<double> back(n);
  try {
    cx::sz3_decompress(stream, std::span<double>(back));
  } catch (const tensogram::error&) {
    std::abort();  // our own stream must decode
  }
  for (std::size_t i = 0; i < n; ++i) {
    if (std::isnan(values[i])) {
      if (!std::isnan(back[i])) std::abort();
    } else if (std::isinf(values[i])) {
      if (back[i] != values[i]) std::abort();
    } else if (!(std::fabs(back[i] - values[i]) <= bound)) {
      std::abort();
    }
  }
  const std::size_t at = (size * 2654435761ULL) % stream.size();
  stream[at] ^= static_cast<std::byte>(selector | 1u);
  decode_any(stream);
  return 0;
}
