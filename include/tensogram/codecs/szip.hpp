// `szip`: CCSDS 121.0-B-3 adaptive entropy coding (spec 03 §7), with RSI
// start offsets and range decode, which libaec 1.0.6 lacks.
//
// Who codes: our own encoder and decoder (src/codecs/szip_encoder.hpp,
// szip_decoder.hpp), whose streams and decoded bytes are libaec 1.0.6's for
// every stream libaec writes, in every build. The native build
// (src/codecs/szip.cpp) also links Debian's libaec and uses it wherever ours
// cannot promise libaec's answer, because the reference codes with libaec
// (§7): a sample above bits_per_sample bits and a block above 4096 samples
// are encoded by libaec, and a stream our decoder refuses (it refuses, on top
// of real errors, whatever libaec might read otherwise) is decoded again by
// libaec, whose bytes or error are the result. So results and error texts
// are the libaec path's, at our coder's speed (decode ~0.6 of libaec's time,
// docs/benchmarks.md). Without libaec (the WebAssembly build,
// src/codecs/szip_builtin.cpp) our coder answers alone.
//
// Offsets are computed by walking the coded stream CDS by CDS (spec 03
// Appendix C). We record the true RSI boundaries; the reference's libaec
// 1.1.x records one block too early in a data-dependent case (§7.4), so
// range decode never trusts stored offsets blindly: it re-derives the
// boundary of the requested RSI from the stream itself.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

namespace tensogram::codecs {

/// libaec flag bits (spec 03 §7.2).
namespace szip_flags {
inline constexpr std::uint32_t data_signed = 1;
inline constexpr std::uint32_t data_3byte = 2;
inline constexpr std::uint32_t data_msb = 4;
inline constexpr std::uint32_t data_preprocess = 8;
inline constexpr std::uint32_t restricted = 16;
inline constexpr std::uint32_t pad_rsi = 32;
inline constexpr std::uint32_t not_enforce = 64;
}  // namespace szip_flags

struct szip_params {
  std::uint32_t bits_per_sample = 8;
  std::uint32_t block_size = 16;
  std::uint32_t rsi = 128;
  /// Flags as passed to libaec (the caller has OR-ed MSB / 3BYTE as §7.2 says).
  std::uint32_t flags = szip_flags::data_preprocess;
};

/// True in every build: with libaec (src/codecs/szip.cpp) and without it
/// (src/codecs/szip_builtin.cpp, the WebAssembly build of docs/wasm.md).
[[nodiscard]] bool szip_available() noexcept;

/// Bytes per sample container: 1, 2, 3 (17–24 bits with 3BYTE) or 4.
[[nodiscard]] std::size_t szip_sample_bytes(const szip_params& p) noexcept;

/// Checks §7.2's limits; throws `encoding_error` ("compression error: szip
/// error: ...").
void szip_validate(const szip_params& p);

struct szip_encoded {
  std::vector<std::byte> payload;
  /// Bit offset of every RSI start, one per RSI (last partial one included).
  std::vector<std::uint64_t> block_offsets;
};

[[nodiscard]] szip_encoded szip_compress(std::span<const std::byte> in, const szip_params& p);

/// Writes the stage-input bytes [offset, offset + out.size()) to `out`.
using szip_chunk_fill = std::function<void(std::uint64_t offset, std::span<std::byte> out)>;
/// Receives decoded bytes [offset, offset + bytes.size()).
using szip_chunk_sink = std::function<void(std::uint64_t offset, std::span<const std::byte> bytes)>;

/// szip_compress of `size` bytes that `fill` produces piece by piece (each
/// piece whole RSIs and a multiple of `unit` bytes, about 64 KiB; the last
/// one the rest), so that a producer such as simple_packing hands the coder
/// bytes still in cache instead of a packed copy of the whole input. Same
/// output as szip_compress over the concatenated pieces.
///
/// With `threads` > 1 the stream is split into up to `threads` runs of whole
/// RSIs coded at once, `fill` then being called concurrently for different
/// pieces; the bytes and offsets are those of the sequential call.
[[nodiscard]] szip_encoded szip_compress_chunked(std::uint64_t size, std::size_t unit,
                                                 const szip_chunk_fill& fill, const szip_params& p,
                                                 std::uint32_t threads = 0);

/// Decodes to exactly `expected` bytes (an error otherwise).
[[nodiscard]] std::vector<std::byte> szip_decompress(std::span<const std::byte> payload, const szip_params& p,
                                                     std::size_t expected);

/// szip_decompress into `out` (exactly out.size() decoded bytes).
void szip_decompress_into(std::span<const std::byte> payload, const szip_params& p, std::span<std::byte> out);

/// szip_decompress handing the `expected` decoded bytes to `sink` in pieces
/// (whole RSIs, multiples of `unit` bytes, about 64 KiB), each decoded into
/// the same small buffer: a consumer such as simple_packing reads them from
/// cache, and no buffer of the whole stream is written.
///
/// With `threads` > 1 runs of whole RSIs are decoded at once from their
/// starts (found by walking the stream), `sink` then being called
/// concurrently for different pieces; a stream that fails that way is decoded
/// again (by libaec in the native build), so values and errors are those of
/// the sequential call.
void szip_decompress_chunked(std::span<const std::byte> payload, const szip_params& p, std::size_t expected,
                             std::size_t unit, const szip_chunk_sink& sink, std::uint32_t threads = 0);

/// True bit offsets of the starts of the first `count` RSIs of a stream of
/// `num_samples` samples, found by walking the coded data sets.
[[nodiscard]] std::vector<std::uint64_t> szip_rsi_offsets(std::span<const std::byte> payload,
                                                          const szip_params& p, std::uint64_t num_samples,
                                                          std::size_t count);

/// `byte_size` decoded bytes from decoded byte `byte_pos` (§7.5), decoding
/// from the start of the RSI that holds `byte_pos`. `stored_offsets` are the
/// descriptor's; only their count is used to bound the RSI index, the start
/// itself is re-derived from the stream. `total_bytes` is the full decoded
/// size (requests past it are errors).
[[nodiscard]] std::vector<std::byte> szip_decompress_range(std::span<const std::byte> payload,
                                                           const szip_params& p,
                                                           std::span<const std::uint64_t> stored_offsets,
                                                           std::uint64_t total_bytes, std::uint64_t byte_pos,
                                                           std::uint64_t byte_size);

}  // namespace tensogram::codecs
