// libFuzzer target: the blosc2 frame and chunk reader (spec 03 §8.4) and
// the blosclz decoder over arbitrary bytes.
//
// Whole-frame decode, frame inspection and range decode must end in a
// `tensogram::error` or a result, never anything else. When the whole frame
// decodes, a range decode of the same frame must return exactly the
// corresponding bytes (a differential check between the two paths), and so
// must a decode on several threads. Seeded from fixtures/blosc2 by run.sh.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include <tensogram.hpp>
#include <tensogram/codecs/blosc2.hpp>
#include <tensogram/codecs/blosclz.hpp>

#include "fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace cx = tensogram::codecs;
  const std::span<const std::byte> bytes = tensogram_fuzz::as_bytes(data, size);
  // Bounds what a frame may claim to hold, as a descriptor does.
  constexpr std::size_t k_max_output = std::size_t{64} << 20;
  volatile std::uint64_t sink = 0;

  std::vector<std::byte> full;
  bool decoded = false;
  try {
    full = cx::blosc2_decompress(bytes, k_max_output);
    decoded = true;
    sink = sink + tensogram_fuzz::touch(full);
  } catch (const tensogram::error&) {
  }
  try {
    const cx::blosc2_frame_info info = cx::blosc2_inspect(bytes);
    sink = sink + info.nchunks;
  } catch (const tensogram::error&) {
  }
  if (decoded) {
    const std::uint64_t n = full.size();
    const std::uint64_t pos = n == 0 ? 0 : (size * 2654435761ULL) % n;
    const std::uint64_t len = n == 0 ? 0 : (size * 40503ULL) % (n - pos + 1);
    std::vector<std::byte> part;
    try {
      part = cx::blosc2_decompress_range(bytes, pos, len, k_max_output);
    } catch (const tensogram::error&) {
      std::abort();  // the whole frame decoded, so every range of it must
    }
    if (part.size() != len ||
        (len > 0 && std::memcmp(part.data(), full.data() + pos, static_cast<std::size_t>(len)) != 0)) {
      std::abort();
    }
    std::vector<std::byte> threaded;
    try {
      threaded = cx::blosc2_decompress(bytes, k_max_output, 3);
    } catch (const tensogram::error&) {
      std::abort();
    }
    if (threaded != full) std::abort();
  } else {
    try {
      sink = sink + tensogram_fuzz::touch(cx::blosc2_decompress_range(bytes, size / 3, 64, k_max_output));
    } catch (const tensogram::error&) {
    }
  }
  // The same bytes as a bare blosclz stream.
  std::vector<std::byte> out(4 * size + 64);
  const std::size_t n = cx::blosclz_decompress(bytes, out);
  if (n != cx::blosclz_error) sink = sink + tensogram_fuzz::touch(std::span(out).first(n));
  return 0;
}
