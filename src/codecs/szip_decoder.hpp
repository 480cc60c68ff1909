// Our own decoder of CCSDS 121.0-B-3 adaptive entropy coded streams ("szip"
// as libaec writes them, spec 03 §7 and Appendix C): the szip decoder of
// every build (the native one with libaec parity and libaec behind it,
// src/codecs/szip.cpp; alone without libaec, docs/wasm.md). Private to
// src/codecs/szip*.
//
// Format (CCSDS 121.0-B-3): a stream is a sequence of reference sample
// intervals (RSIs) of `rsi` blocks of `block_size` samples of
// `bits_per_sample` bits (1..32), each block one coded data set (CDS): an
// option identifier (§5.1.2, Table 5-1: 3 bits up to 8 bits per sample, 4 up
// to 16, 5 up to 32; 1 or 2 with AEC_RESTRICTED, Annex D), then
//   - id 0, next bit 0: zero-block run, a fundamental sequence (FS) counting
//     the blocks; value 5 (the fifth code word) is "remainder of segment"
//     (ROS): to the end of the RSI or of the current 64-block segment
//     (§5.1.4);
//   - id 0, next bit 1: second extension, block_size/2 FS code words, each
//     the pair index (a+b)(a+b+1)/2 + b (§5.1.5);
//   - ids 1..max-1: sample splitting with k = id - 1: block_size FS code
//     words of the high parts, then block_size k-bit low parts (§5.1.3);
//   - all-ones id: the block uncompressed (§5.1.6).
// With AEC_DATA_PREPROCESS the first block of every RSI carries a reference
// sample (bits_per_sample bits, right after the id, or after the extra bit of
// id 0; none in an uncompressed block, where it is the first sample) and its
// other values are mapped prediction residuals, inverted per §4.3 (unit-delay
// predictor, range [0, 2^n - 1], or [-2^(n-1), 2^(n-1) - 1] with
// AEC_DATA_SIGNED). Samples are written in 1/2/3/4-byte containers
// (3 bytes for 17..24 bits with AEC_DATA_3BYTE), big-endian with
// AEC_DATA_MSB, else little-endian. AEC_PAD_RSI: every RSI ends at a byte
// boundary (counted from the first decoded bit).
//
// Limits and refusals: parameters as szip_validate (spec 03 §7.2), and
// blocks of at most 4096 samples (AEC_NOT_ENFORCE admits any even size); a
// second-extension code word above 90 (pair sum above 12, libaec's bound), a
// zero-block run past the end of its RSI, a fundamental sequence above
// 2^32 - 1 and a stream that ends before the requested output are refused
// with encoding_error ("compression error: szip error: ...", as
// src/codecs/szip.cpp reports libaec's failures). Work and memory are bounded
// by the input and requested output sizes: every block consumes at least one
// input bit or yields at least one block of output, and the RSI buffer never
// exceeds the requested output. Every read is bounds-checked
// (szip_walk::bit_reader), every write goes to a span of the requested size.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "tensogram/codecs/szip.hpp"

namespace tensogram::codecs {

class szip_stream_decoder {
 public:
  /// Decodes `total` bytes (a multiple of the sample width) of the stream in
  /// `payload` from bit `start_bit` (the start of an RSI), piece by piece.
  szip_stream_decoder(std::span<const std::byte> payload, const szip_params& p, std::uint64_t total,
                      std::uint64_t start_bit = 0, bool libaec_parity = false);
  ~szip_stream_decoder();
  szip_stream_decoder(const szip_stream_decoder&) = delete;
  szip_stream_decoder& operator=(const szip_stream_decoder&) = delete;

  /// The next out.size() decoded bytes (at most the rest of `total`).
  void next(std::span<std::byte> out);
  /// The bit after the last CDS decoded so far.
  [[nodiscard]] std::uint64_t position() const noexcept;
  /// With `libaec_parity`, after the last next(): fails where libaec would
  /// fail reading on after the requested output (see above).
  void finish() const;

 private:
  struct state;
  std::unique_ptr<state> s_;
};

/// Decodes stage bytes [begin, end) from bit `start_bit` (the start of an
/// RSI), handing them to `sink` in pieces of at most `chunk` bytes; the
/// stream's last bytes (`last`) are checked with finish(). Returns the bit
/// after the last CDS decoded.
std::uint64_t szip_decode_pieces(std::span<const std::byte> payload, const szip_params& p,
                                 std::uint64_t start_bit, std::size_t begin, std::size_t end,
                                 std::size_t chunk, const szip_chunk_sink& sink, bool last,
                                 bool libaec_parity);

/// Range decode (§7.5): `size` bytes from decoded byte `skip` of the RSI that
/// starts at bit `start_bit` (and with `libaec_parity` checks their end).
[[nodiscard]] std::vector<std::byte> szip_decode_range(std::span<const std::byte> payload,
                                                       const szip_params& p, std::uint64_t start_bit,
                                                       std::uint64_t skip, std::uint64_t size,
                                                       bool libaec_parity);

/// Decodes exactly out.size() bytes of the stream from its first bit (and,
/// with `libaec_parity`, checks its end with finish()).
void szip_decode_into(std::span<const std::byte> payload, const szip_params& p, std::span<std::byte> out,
                      bool libaec_parity = false);

}  // namespace tensogram::codecs
