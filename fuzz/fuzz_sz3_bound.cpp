// libFuzzer target: the sz3 encoder's error bound as a property (spec 03
// §8.7, docs/sz3-format.md), and its streams corrupted for the decoder.
//
// The first byte chooses a bound; the rest is read as doubles, compressed,
// decompressed — every finite value must come back within the absolute
// bound, non-finite ones exactly (NaN as NaN) — and the stream decoded
// again with one byte changed (must not crash). fuzz_sz3 fuzzes the
// decoder on arbitrary streams.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include <tensogram.hpp>
#include <tensogram/codecs/sz3.hpp>

#include "fuzz_sz3_decode.hpp"

namespace {

namespace cx = tensogram::codecs;

// The property on at most k_property_values values: compressing tries both
// predictors, each of whose inner loops libFuzzer traces comparison by
// comparison, and AddressSanitizer's allocator serves every table fresh, so
// a full input of 2048 values cost ~2.5 ms and held the target near 600
// executions per second (docs/fuzzing.md, "fuzz_sz3_bound at 512 values").
// 512 values still take every path of the encoder the fuzzer reached with
// 2048: the tuning samples 8-value blocks either way (sz3.cpp,
// compress_interp_lorenzo), 4 of the 1-D Lorenzo predictor's 128-value
// blocks, 9 interpolation levels; in equal CPU time from the same seeds
// both reached the same coverage (1,479 against 1,486 edges) while this one
// ran 2.3 times the inputs.
constexpr std::size_t k_property_values = 512;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 9) return 0;
  const std::uint8_t selector = data[0];
  const std::span<const std::byte> rest = tensogram_fuzz::as_bytes(data + 1, size - 1);
  const std::size_t n = std::min<std::size_t>(rest.size() / 8, k_property_values);
  std::vector<double> values(n);
  std::memcpy(values.data(), rest.data(), n * 8);
  const double bound = std::ldexp(1.0, -static_cast<int>(selector % 24));  // 1 down to 2^-23
  // One compression context for the whole run: a fresh one per input spent
  // 58 % of the target's time allocating and clearing zstd's workspace
  // (docs/fuzzing.md). The streams are the same bytes either way, and the
  // fuzzer runs one input at a time.
  static cx::sz3_compression_context context;
  std::vector<std::byte> stream;
  try {
    const std::size_t shape[1] = {n};
    stream = context.compress(std::span<const double>(values), shape, {cx::sz3_error_bound_mode::abs, bound});
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
  tensogram_fuzz::sz3_decode_any(stream);
  return 0;
}
