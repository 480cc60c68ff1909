// SZ3's lossless stage (docs/sz3-format.md §3): a u64 length of the
// uncompressed bytes, then one zstd frame made by ZSTD_compress at level 3.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace tensogram::codecs::sz3 {

/// Appends the framed form of `in` to `out`.
void lossless_compress(std::span<const std::byte> in, std::vector<std::byte>& out);

/// Undoes lossless_compress. The declared length must not exceed `limit`
/// (checked before allocating) and the frame must fill it exactly.
[[nodiscard]] std::vector<std::byte> lossless_decompress(std::span<const std::byte> in, std::uint64_t limit);

/// The same into `out`, whose size must be the declared length.
void lossless_decompress_into(std::span<const std::byte> in, std::span<std::byte> out);

}  // namespace tensogram::codecs::sz3
