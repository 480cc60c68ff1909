// Our own encoder of CCSDS 121.0-B-3 adaptive entropy coded streams ("szip",
// spec 03 §7), writing the bytes libaec 1.0.6's encoder writes: the szip
// encoder of every build (src/codecs/szip.cpp; src/codecs/szip_builtin.cpp
// without libaec, docs/wasm.md). Private to src/codecs/szip*. The stream
// grammar is that of src/codecs/szip_decoder.hpp; what follows is how an
// encoder chooses among its options, as libaec does
// (established black-box against aec_buffer_encode, tests/codecs/
// szip_encoder_test.cpp, byte for byte):
//
//   - Input: whole RSIs of rsi * block_size samples read from 1/2/3/4-byte
//     containers (little-endian unless AEC_DATA_MSB). A last, partial RSI is
//     filled up to a whole RSI by repeating its last sample; only its blocks
//     that hold data are coded (the last one padded that way).
//   - AEC_DATA_PREPROCESS (§4.3): the first sample of every RSI is its
//     reference sample; every other sample becomes the mapped residual of
//     the unit-delay predictor over [0, 2^n - 1] (or the n-bit two's
//     complement range with AEC_DATA_SIGNED). The reference block codes
//     block_size - 1 values; its slot 0 counts as a zero value.
//   - A block whose values are all zero joins a zero-block run (§5.1.4),
//     which ends at a non-zero block, at the end of a 64-block segment or at
//     the end of the RSI's coded blocks. A run of z blocks is coded as id 0,
//     bit 0 (the reference sample if it starts in the reference block), then
//     FS(z - 1) for z <= 4, the ROS code word FS(4) when it ends a segment or
//     the RSI with z >= 5, else FS(z).
//   - Any other block: the split option's best k (§5.1.3) is searched from
//     the previous block's k (kept across blocks and RSIs, 0 at the start),
//     upwards while the length shrinks, then downwards from that k - 1 if the
//     first step up did not help; the found k is kept for the next search
//     whichever option is chosen. Its length is compared with the
//     uncompressed one ((block_size - ref) * n, §5.1.6) and the second
//     extension's (§5.1.5): split if shorter than both, else uncompressed if
//     not longer than the second extension, else the second extension.
//     k is at most 2^id_len - 3; with AEC_RESTRICTED and n <= 2 (1-bit ids)
//     there is no split option.
//   - The stream ends with zero bits up to a byte boundary. libaec 1.0.6's
//     encoder ignores AEC_PAD_RSI (spec 03 §7.2), so does this one.
//
// Limits and refusals: parameters as szip_validate (spec 03 §7.2), blocks of
// at most 4096 samples (AEC_NOT_ENFORCE admits any even size); an input
// length that is not a multiple of the sample width is refused with
// encoding_error ("compression error: szip error: ..."). Samples above n bits
// are masked to their n low bits (libaec's output for them is undefined: it
// writes streams that decode to other values). Every write is bounds-checked
// against a buffer sized for the worst case of each RSI: every block
// uncompressed plus its id and a zero-run code word.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

#include "tensogram/codecs/szip.hpp"

namespace tensogram::codecs {

class szip_stream_encoder {
 public:
  /// Codes `total` input bytes (a multiple of the sample width) handed over
  /// by feed() in pieces of any size, into `out` (emptied first: payload and
  /// the bit offset of every RSI start).
  szip_stream_encoder(const szip_params& p, std::uint64_t total, szip_encoded& out);
  ~szip_stream_encoder();
  szip_stream_encoder(const szip_stream_encoder&) = delete;
  szip_stream_encoder& operator=(const szip_stream_encoder&) = delete;

  /// The next input bytes; the call that completes `total` ends the stream.
  void feed(std::span<const std::byte> in);
  /// After the stream ended: its length in bits (before the zero padding).
  [[nodiscard]] std::uint64_t bit_length() const noexcept;
  /// Whether a sample had bits above bits_per_sample (masked off here; the
  /// native build then codes with libaec, whose bytes for them differ).
  [[nodiscard]] bool saw_wide_sample() const noexcept;

 private:
  struct state;
  std::unique_ptr<state> s_;
};

/// Codes stage bytes [begin, end) that `fill` produces, handed over in pieces
/// of `chunk` bytes, into `out`; `bits` receives the stream's bit length.
/// False when a sample had bits above bits_per_sample (saw_wide_sample).
bool szip_encode_filled(std::uint64_t begin, std::uint64_t end, std::size_t chunk,
                        const szip_chunk_fill& fill, const szip_params& p, szip_encoded& out,
                        std::uint64_t& bits);

/// Codes `in` whole (szip_validate'd parameters; empty input, empty output).
[[nodiscard]] szip_encoded szip_encode(std::span<const std::byte> in, const szip_params& p);

}  // namespace tensogram::codecs
