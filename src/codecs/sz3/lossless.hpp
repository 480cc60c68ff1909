// SZ3's lossless stage (docs/sz3-format.md §3): a u64 length of the
// uncompressed bytes, then one zstd frame made by ZSTD_compress at level 3.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

struct ZSTD_CCtx_s;

namespace tensogram::codecs::sz3 {

/// The lossless stage's compressor: one zstd context for every frame of one
/// compress call. SZ3's tuning frames up to seven candidate streams before
/// the real one, and a context per frame (what ZSTD_compress does) allocated
/// and cleared its tables each time. The bytes are ZSTD_compress's: a reused
/// context at the same level makes the same frame.
class lossless_context {
 public:
  lossless_context();

  /// Appends the framed form of `in` to `out`.
  void compress(std::span<const std::byte> in, std::vector<std::byte>& out);

 private:
  struct free_context {
    void operator()(ZSTD_CCtx_s* c) const noexcept;
  };
  std::unique_ptr<ZSTD_CCtx_s, free_context> cctx_;
};

/// Undoes lossless_context::compress. The declared length must not exceed `limit`
/// (checked before allocating) and the frame must fill it exactly.
[[nodiscard]] std::vector<std::byte> lossless_decompress(std::span<const std::byte> in, std::uint64_t limit);

/// The same into `out`, whose size must be the declared length.
void lossless_decompress_into(std::span<const std::byte> in, std::span<std::byte> out);

}  // namespace tensogram::codecs::sz3
