// `blosc2` stage and mask method (spec 03 §8.4, §8.5, §11.3): c-blosc2's
// contiguous frame ("cframe") holding a super-chunk, implemented here from
// the format description (c-blosc2 is not packaged in Debian 12 and this
// project vendors no third-party source).
//
// Frame: a 97-byte msgpack header, the data chunks back to back, an index
// chunk (one int64 offset per data chunk, negative for "special" chunks that
// are not stored) and a 35-byte trailer. Chunk: a 32-byte header, then either
// the raw bytes (memcpyed), nothing or one value (special chunks), or one
// int32 start offset per block followed by the blocks; a block is 1 or
// `typesize` streams ("split"), each an int32 size and a codec stream.
//
// Reading: every frame and chunk c-blosc2 2.x writes with the reference's
// settings — codecs blosclz, lz4, lz4hc, zlib, zstd; filters shuffle and
// bitshuffle in any of the six slots; memcpyed chunks; special chunks (zeros,
// NaN, uninitialised, repeated value) and special index entries; split and
// unsplit blocks; zero and run streams; multi-chunk frames. Other filters
// (delta, truncation), codecs (snappy, user codecs), dictionaries, lazy
// chunks and sparse frames are refused with an `encoding_error` naming them.
// Every size and offset is checked against the input before anything is
// allocated; the output size is checked against the caller's bound.
//
// Writing: frames c-blosc2 reads, following c-blosc2 2.21.3 wherever the
// spec or the fixtures show what it does — header, memcpyed index chunk
// and trailer, the reference's chunking (§8.4.1), memcpyed chunks under 32
// bytes, at clevel 0 and when incompressible, all-zero chunks as special
// index entries, block sizes, split decisions, zero and run streams. With
// lz4/lz4hc (and often zlib/zstd) the frames equal c-blosc2's byte for byte
// (spec §8.5 and most fixtures); blosclz (our own match finder), zlib
// (c-blosc2 bundles zlib-ng) and zstd (another library version) streams
// may differ but decode the same.
//
// Threads: blocks are compressed and decompressed on up to `threads`
// threads; the output never depends on the thread count (unlike c-blosc2,
// which places blocks in completion order, spec 03 §13).
//
// All failures are `encoding_error`s whose text starts "compression error:
// blosc2 error: " and says which chunk, block and stream (spec 03 §3.1).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

namespace tensogram::codecs {

/// c-blosc2 compressor codes (`compcode`, spec 03 §8.4.1).
enum class blosc2_codec : std::uint8_t { blosclz = 0, lz4 = 1, lz4hc = 2, zlib = 4, zstd = 5 };

/// c-blosc2 filter codes; a chunk has six filter slots applied in order.
enum class blosc2_filter : std::uint8_t { none = 0, shuffle = 1, bitshuffle = 2 };

/// `blosclz`, `lz4`, `lz4hc`, `zlib`, `zstd` (the `blosc2_codec` values).
[[nodiscard]] std::optional<blosc2_codec> blosc2_codec_from_name(std::string_view name) noexcept;
[[nodiscard]] std::string_view blosc2_codec_name(blosc2_codec codec) noexcept;

/// Largest chunk c-blosc2 accepts (its int32 sizes include the header).
inline constexpr std::size_t blosc2_max_chunk_bytes = 2147483647 - 32;

/// The reference's chunk size for a typesize (spec 03 §8.4.1):
/// min(INT32_MAX − 32, max(1, floor(256 MiB / typesize)) · typesize).
[[nodiscard]] std::size_t blosc2_reference_chunk_bytes(std::size_t typesize) noexcept;

struct blosc2_params {
  blosc2_codec codec = blosc2_codec::lz4;
  /// 0 (store) to 9; anything else is an `encoding_error` at compression.
  int clevel = 5;
  /// Element size for shuffle, bitshuffle and split streams: 1..255.
  std::size_t typesize = 1;
  /// Filter slots 0..5, applied in slot order (the reference: shuffle in slot 5).
  std::array<blosc2_filter, 6> filters = {blosc2_filter::none, blosc2_filter::none, blosc2_filter::none,
                                          blosc2_filter::none, blosc2_filter::none, blosc2_filter::shuffle};
  /// Decompressed bytes per chunk; 0 = the reference's rule.
  std::size_t chunk_bytes = 0;
  /// Bytes per block; 0 = automatic (from codec, level and typesize).
  std::size_t blocksize = 0;
};

/// A contiguous frame holding `in` (which must not be empty: the reference
/// refuses to append an empty chunk). Blocks are compressed on up to
/// `threads` threads with identical output for every thread count.
[[nodiscard]] std::vector<std::byte> blosc2_compress(std::span<const std::byte> in, const blosc2_params& p,
                                                     std::uint32_t threads = 0);

/// Decompresses a whole frame. A frame holding more than `max_size` bytes
/// is refused before anything is allocated.
[[nodiscard]] std::vector<std::byte> blosc2_decompress(std::span<const std::byte> frame, std::size_t max_size,
                                                       std::uint32_t threads = 0);

/// Decompresses a whole frame into `out`, which must be exactly the frame's
/// decompressed size (else `encoding_error`, before anything is decoded):
/// blocks are decoded in place on up to `threads` threads.
void blosc2_decompress_into(std::span<const std::byte> frame, std::span<std::byte> out,
                            std::uint32_t threads = 0);

/// Decompressed bytes [byte_pos, byte_pos + byte_size), decompressing only
/// the chunks and blocks that hold them (spec 03 §8.4.4). A range beyond the
/// frame's size is an `encoding_error`; so is a frame holding more than
/// `max_size` bytes (which bounds the block buffers a hostile frame could
/// make us allocate).
[[nodiscard]] std::vector<std::byte> blosc2_decompress_range(std::span<const std::byte> frame,
                                                             std::uint64_t byte_pos, std::uint64_t byte_size,
                                                             std::uint64_t max_size);

/// What a frame's header and index say (the frame is fully validated, its
/// chunks' headers included, but nothing is decompressed beyond the index).
struct blosc2_frame_info {
  std::uint64_t nbytes = 0;  ///< decompressed size
  std::uint64_t cbytes = 0;  ///< bytes of the data chunks
  std::uint32_t typesize = 0;
  std::uint32_t blocksize = 0;
  std::uint32_t chunksize = 0;
  std::uint8_t codec_byte = 0;  ///< compcode | clevel << 4
  std::size_t nchunks = 0;
  std::size_t special_chunks = 0;  ///< index entries not stored in the frame
};
[[nodiscard]] blosc2_frame_info blosc2_inspect(std::span<const std::byte> frame);

}  // namespace tensogram::codecs
