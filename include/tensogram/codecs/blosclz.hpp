// `blosclz`: c-blosc2's own LZ77 stream format, one of the inner codecs of a
// blosc2 chunk (spec 03 §8.4.3). Written from the format description, not
// from c-blosc2's sources; the compressor is our own match finder, so its
// bytes differ from c-blosc2's (any valid stream decodes the same).
//
// Format (a sequence of tokens, no header, no terminator):
//   control byte c < 32    c + 1 literal bytes follow (so at most 32)
//   control byte c >= 32   a match: length code L = c >> 5 (1..7),
//                          distance high bits H = c & 31;
//                          L = 7: extension bytes follow, each added to the
//                                 length, until one is not 255;
//                          then a byte d; length = L + 2 + extensions;
//                          distance = H·256 + d + 1 (1..8191), unless
//                          H = 31 and d = 255: two more bytes give a
//                          big-endian f and the distance is 8192 + f
//                          (8192..73727).
// The first control byte is read modulo 32 (a stream starts with literals).
// A decoder stops when the input is exhausted after a literal run, or after
// a match's bytes have been read but before it is copied, so a stream must
// end with literals. Matches may overlap their own output.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace tensogram::codecs {

/// Returned by `blosclz_decompress` for a malformed stream.
inline constexpr std::size_t blosclz_error = static_cast<std::size_t>(-1);

/// A compressor with its hash table, reusable across calls (one per
/// thread). `clevel` 1..9 trades speed for ratio (table size, skipping).
class blosclz_encoder {
 public:
  explicit blosclz_encoder(int clevel);

  /// Compresses `in` into `out`. Returns the stream size, or 0 when the
  /// stream would not fit in `out` (the caller then stores the bytes raw).
  [[nodiscard]] std::size_t compress(std::span<const std::byte> in, std::span<std::byte> out);

 private:
  int clevel_;
  std::vector<std::uint32_t> table_;
};

/// Decodes `in` into `out`. Returns the number of bytes produced (the caller
/// checks it against the size it expects), or `blosclz_error` when the
/// stream reads or writes out of bounds or refers before the output start.
[[nodiscard]] std::size_t blosclz_decompress(std::span<const std::byte> in,
                                             std::span<std::byte> out) noexcept;

}  // namespace tensogram::codecs
