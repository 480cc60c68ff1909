// `lz4` stage and mask method: u32 little-endian decompressed length followed
// by one raw LZ4 block (lz4_flex's "size-prepended" layout, spec 03 §8.2).
//
// The compressor is the lz4_flex 0.11 block compressor of spec 03 Appendix A
// (byte-identical to the reference); decompression uses liblz4.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

namespace tensogram::codecs {

[[nodiscard]] std::vector<std::byte> lz4_compress(std::span<const std::byte> in);

/// Throws `encoding_error` ("lz4 error: ...") for a truncated prefix, a
/// corrupt block or a block that does not decode to the prefixed length.
/// `max_size` bounds the prefix before anything is allocated.
[[nodiscard]] std::vector<std::byte> lz4_decompress(std::span<const std::byte> in, std::size_t max_size);

/// The same into `out`, whose size is the exact expected length: a prefix
/// or block that decodes to any other length is an `encoding_error`.
void lz4_decompress_into(std::span<const std::byte> in, std::span<std::byte> out);

}  // namespace tensogram::codecs
