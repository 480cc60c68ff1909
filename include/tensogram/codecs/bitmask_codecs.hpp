// Bitmask encodings shared by the NaN/Inf mask blobs (spec 03 §11.3) and the
// `rle` / `roaring` tensor codecs (spec 03 §8.8, §8.9).
//
// Bits are MSB-first within each byte: bit i is bit 7 − (i mod 8) of byte i/8.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace tensogram::codecs {

/// RLE blob of the first `n` bits of `packed`: empty for n = 0, else a start
/// value byte (00/01) and ULEB128 run lengths of alternating values.
[[nodiscard]] std::vector<std::byte> rle_encode_bits(std::span<const std::byte> packed, std::uint64_t n);
/// Decodes an RLE blob of `n` bits into ceil(n/8) packed bytes. Throws
/// `encoding_error` for a bad start byte, zero or overlong runs, truncation or
/// runs that do not sum to n.
[[nodiscard]] std::vector<std::byte> rle_decode_bits(std::span<const std::byte> blob, std::uint64_t n);

/// Roaring portable serialisation of the set positions among the first `n`
/// bits, with roaring-rs 0.11 `optimize()` container choices (§11.3.3).
/// Throws `encoding_error` when n > 2^32 − 1.
[[nodiscard]] std::vector<std::byte> roaring_encode_bits(std::span<const std::byte> packed, std::uint64_t n);
/// Parses a Roaring portable blob (any valid container choice) into
/// ceil(n/8) packed bytes; every position must be < n. Bounded: container
/// counts and sizes are checked against the blob length before use.
[[nodiscard]] std::vector<std::byte> roaring_decode_bits(std::span<const std::byte> blob, std::uint64_t n);

/// Tensor codecs: u32 big-endian bit count (8 × packed length) + blob.
[[nodiscard]] std::vector<std::byte> rle_compress(std::span<const std::byte> packed);
[[nodiscard]] std::vector<std::byte> rle_decompress(std::span<const std::byte> payload, std::size_t expected);
[[nodiscard]] std::vector<std::byte> roaring_compress(std::span<const std::byte> packed);
[[nodiscard]] std::vector<std::byte> roaring_decompress(std::span<const std::byte> payload,
                                                        std::size_t expected);

}  // namespace tensogram::codecs
