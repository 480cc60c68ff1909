// blosc2 chunks (spec 03 §8.4.3): writing one chunk of a frame, and
// reading any chunk c-blosc2 writes, block by block. A chunk is a 32-byte
// header, then either the raw bytes (memcpyed), nothing or one value
// (special chunks), or one int32 start offset per block followed by the
// blocks; a block is 1 or `typesize` streams ("split"), each an int32 size
// and a codec stream. Internal to the codec.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include <zstd.h>

#include "tensogram/codecs/blosc2.hpp"
#include "tensogram/codecs/blosclz.hpp"
#include "tensogram/core/memory.hpp"

#include "format.hpp"

namespace tensogram::codecs::blosc2_detail {

// Growable byte buffer that does not zero what it hands out (compressed
// output is written exactly once).
class raw_buffer {
 public:
  std::byte* reserve_tail(std::size_t extra) {
    if (cap_ - size_ < extra) {
      const std::size_t cap = std::max(size_ + extra, cap_ + cap_ / 2);
      auto p = make_uninitialized_array<std::byte>(cap);
      if (size_ > 0) std::memcpy(p.get(), data_.get(), size_);
      data_ = std::move(p);
      cap_ = cap;
    }
    return data_.get() + size_;
  }
  void commit(std::size_t n) noexcept { size_ += n; }
  void clear() noexcept { size_ = 0; }
  [[nodiscard]] const std::byte* data() const noexcept { return data_.get(); }
  [[nodiscard]] std::size_t size() const noexcept { return size_; }

 private:
  std::unique_ptr<std::byte[]> data_;
  std::size_t size_ = 0;
  std::size_t cap_ = 0;
};

// ---------------------------------------------------------------------------
// Per-thread state: scratch buffers and codec contexts.

struct zstd_cctx_deleter {
  void operator()(ZSTD_CCtx* c) const noexcept { ZSTD_freeCCtx(c); }
};
struct zstd_dctx_deleter {
  void operator()(ZSTD_DCtx* d) const noexcept { ZSTD_freeDCtx(d); }
};

struct worker {
  std::unique_ptr<std::byte[]> a;  // filter scratch, `cap` bytes each
  std::unique_ptr<std::byte[]> b;
  std::size_t cap = 0;
  std::unique_ptr<ZSTD_CCtx, zstd_cctx_deleter> zc;
  std::unique_ptr<ZSTD_DCtx, zstd_dctx_deleter> zd;
  std::unique_ptr<blosclz_encoder> blz;
  raw_buffer out;  // a compressed block

  // Scratch of n bytes in `a`, and in `b` too when two are needed.
  void scratch(std::size_t n, bool two) {
    if (cap < n) {
      a = make_uninitialized_array<std::byte>(n);
      b.reset();
      cap = n;
    }
    if (two && !b) b = make_uninitialized_array<std::byte>(cap);
  }
};

// ---------------------------------------------------------------------------
// Writer.

/// The 32-byte chunk header.
void write_chunk_header(std::byte* h, std::uint8_t flags, const blosc2_params& p, std::size_t nbytes,
                        std::size_t blocksize, std::size_t cbytes) noexcept;

struct written_chunk {
  bool special_zero = false;
  std::size_t blocksize = 0;
};

/// One chunk of `src` appended to `frame` (nothing for an all-zero chunk,
/// which becomes a special index entry as in c-blosc2, spec §8.4.2), its
/// blocks compressed on up to `threads` threads.
written_chunk write_chunk(std::vector<std::byte>& frame, std::span<const std::byte> src,
                          const blosc2_params& p, std::uint32_t threads);

// ---------------------------------------------------------------------------
// Reader.

enum class chunk_kind : std::uint8_t { regular, memcpyed, zeros, nan, value, uninit };

struct chunk_info {
  std::size_t number = 0;  // chunk index in the frame (for messages)
  bool is_index = false;
  std::uint64_t out_pos = 0;  // decompressed offset in the frame
  std::uint64_t nbytes = 0;
  chunk_kind kind = chunk_kind::zeros;
  std::size_t frame_offset = 0;      // where the chunk starts in the frame (stored chunks)
  std::span<const std::byte> bytes;  // the stored chunk (cbytes)
  std::size_t typesize = 1;
  std::size_t blocksize = 0;
  std::size_t nblocks = 0;
  bool split = false;
  std::uint8_t format = 0;
  std::array<std::uint8_t, 6> filters{};

  [[nodiscard]] std::size_t piece_size() const noexcept {
    return kind == chunk_kind::regular ? blocksize : k_fill_piece;
  }
  [[nodiscard]] std::size_t pieces() const noexcept {
    return nbytes == 0 ? 0 : static_cast<std::size_t>((nbytes + piece_size() - 1) / piece_size());
  }
  [[nodiscard]] std::string where() const {
    return (is_index ? std::string("index chunk") : "chunk " + std::to_string(number)) + " (frame offset " +
           std::to_string(frame_offset) + ")";
  }
};

// Parses and validates a stored chunk's header. `avail` runs from the chunk

/// Parses and validates a stored chunk's header. `avail` runs from the
/// chunk start to the end of the region the chunk must lie in.
chunk_info parse_chunk(std::span<const std::byte> avail, std::size_t number, std::size_t frame_offset,
                       const std::string& name);

/// Writes decompressed bytes [from, from + len) of a non-regular chunk.
void fill_direct(const chunk_info& c, std::uint64_t from, std::size_t len, std::byte* dst);

/// Decompresses block k of a regular chunk into dst (the block's size).
void decode_block(const chunk_info& c, std::size_t k, std::byte* dst, worker& w);

/// Decompressed bytes [from, from + len) of any chunk (len > 0); `block`
/// holds a block only partly wanted.
void read_chunk_range(const chunk_info& c, std::uint64_t from, std::size_t len, std::byte* dst, worker& w,
                      std::vector<std::byte>& block);

}  // namespace tensogram::codecs::blosc2_detail
