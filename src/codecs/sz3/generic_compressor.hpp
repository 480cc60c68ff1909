// SZ3's generic compressor framing (docs/sz3-format.md §3): the bytes a
// decomposition (predictor + quantiser) produces are laid out as
//   decomposition state · Huffman table · u64 symbol count · Huffman bits
// and that buffer goes through the lossless stage.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "byte_io.hpp"
#include "huffman.hpp"
#include "lossless.hpp"
#include "stream_config.hpp"

namespace tensogram::codecs::sz3 {

/// Frames `d`'s saved state and `symbols` (Huffman table, count, coded
/// symbols) and appends them, losslessly compressed by `zstd`, to `out`.
template <class Decomposition>
void frame_symbols(const Decomposition& d, std::span<const int> symbols, lossless_context& zstd,
                   std::vector<std::byte>& out) {
  huffman_coder coder;
  coder.build(symbols, d.symbol_count());
  std::vector<std::byte> buffer;
  buffer.reserve(symbols.size() / 2 + 4096);
  byte_writer w(buffer);
  d.save(w);
  coder.save(w);
  w.put<std::uint64_t>(symbols.size());
  coder.encode(symbols, w);
  zstd.compress(buffer, out);
}

/// Runs `d` over `data` (overwritten with the reconstruction) and appends
/// the framed, losslessly compressed result to `out`.
template <class T, class Decomposition>
void generic_compress(Decomposition& d, const stream_config& conf, T* data, lossless_context& zstd,
                      std::vector<std::byte>& out) {
  frame_symbols(d, d.compress(conf, data), zstd, out);
}

/// The inverse: `out` holds conf.num values.
template <class T, class Decomposition>
void generic_decompress(Decomposition& d, const stream_config& conf, std::span<const std::byte> algo_bytes,
                        T* out) {
  // The internal buffer holds at most the raw values plus small tables (SZ3
  // falls back to lossless before it grows past the zstd bound of the
  // input); twice that plus 1 MiB bounds a hostile length.
  const std::uint64_t limit = 2 * conf.num * sizeof(T) + (std::uint64_t{1} << 20);
  const std::vector<std::byte> buffer = lossless_decompress(algo_bytes, limit);
  byte_reader r(buffer);
  d.load(r);
  huffman_coder coder;
  coder.load(r);
  const auto count = r.get<std::uint64_t>("symbol count");
  if (count != conf.num) {
    fail("the stream holds " + std::to_string(count) + " quantisation symbols for " +
         std::to_string(conf.num) + " values");
  }
  const std::vector<int> symbols = coder.decode(r, count);
  d.decompress(conf, symbols, out);
}

}  // namespace tensogram::codecs::sz3
