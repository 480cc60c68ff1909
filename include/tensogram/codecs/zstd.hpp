// `zstd` stage and mask method (spec 03 §8.1): standard Zstandard frames, no
// dictionary, no checksum.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace tensogram::codecs {

inline constexpr int zstd_default_level = 3;

/// `workers` 0 is the reference's sequential path (streaming compression,
/// no pledged size, so no content-size field); `workers` ≥ 1 uses
/// ZSTD_compress2 with that many worker threads (different bytes, §13).
[[nodiscard]] std::vector<std::byte> zstd_compress(std::span<const std::byte> in, int level,
                                                   std::uint32_t workers = 0);

/// Decodes every frame until the input ends. Output is capped at
/// `max_size` bytes (the descriptor-derived size): more is an
/// `encoding_error`, as are corrupt or truncated frames.
[[nodiscard]] std::vector<std::byte> zstd_decompress(std::span<const std::byte> in, std::size_t max_size);

/// The same into `out`, whose size is the exact expected length (the caller
/// allocated it, uninitialised): producing fewer or more bytes is an
/// `encoding_error`, as are corrupt or truncated frames.
void zstd_decompress_into(std::span<const std::byte> in, std::span<std::byte> out);

}  // namespace tensogram::codecs
