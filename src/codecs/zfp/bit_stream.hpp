// The bit stream of `zfp` (spec 03 §8.6): bits are written least significant
// first into 64-bit words stored little-endian, the layout of libzfp's
// default 64-bit stream word. Debian's 8-bit-word libzfp emits the same bit
// sequence (byte k of the stream holds bits 8k..8k+7), so the two differ
// only in the final zero padding: the writer below always flushes to a
// whole 64-bit word, as the reference does.
//
// Writer and reader keep the current word in a register; the reader reads
// past the end of its input as zero bits, the way the reference decodes
// from a zero-padded copy of the payload.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace tensogram::codecs::zfp_detail {

inline std::uint64_t load_le64(const std::byte* p) noexcept {
  std::uint64_t w;
  std::memcpy(&w, p, 8);
  if constexpr (std::endian::native == std::endian::big) w = __builtin_bswap64(w);
  return w;
}

inline void store_le64(std::byte* p, std::uint64_t w) noexcept {
  if constexpr (std::endian::native == std::endian::big) w = __builtin_bswap64(w);
  std::memcpy(p, &w, 8);
}

/// Low `n` bits set (n ≤ 64).
constexpr std::uint64_t low_mask(unsigned n) noexcept {
  return n >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << n) - 1;
}

/// Appends bits to a caller-sized buffer of whole 64-bit words. The caller
/// guarantees the capacity (it is derived from the per-block bit bound) plus
/// one word of slack: write() stores the partial word it has just added to.
class bit_writer {
 public:
  explicit bit_writer(std::byte* words) noexcept : out_(words) {}

  /// Writes the low `n` bits of `v` (n ≤ 64); bits of `v` above n must be 0.
  /// Branch-free: whether a write completes the current word depends on the
  /// data (where a block's codes end), so a branch on it mispredicts often.
  /// The partial word is stored every time and the pointer then advances by
  /// 0 or 8 bytes.
  void write(std::uint64_t v, unsigned n) noexcept {
    // The bits of v that do not fit in the current word: v >> (64 - fill_),
    // split in two shifts so that fill_ = 0 (nothing spills) gives 0.
    const std::uint64_t spill = (v >> 1) >> (63 - fill_);
    acc_ |= v << fill_;  // fill_ < 64 always holds here
    store_le64(out_, acc_);
    const unsigned total = fill_ + n;  // < 128
    const bool full = total >= 64;
    out_ += full ? 8 : 0;
    acc_ = full ? spill : acc_;
    fill_ = total & 63;
  }

  /// Writes `n` zero bits (any n).
  void pad(std::uint64_t n) noexcept {
    std::uint64_t total = fill_ + n;
    while (total >= 64) {
      store_le64(out_, acc_);
      out_ += 8;
      acc_ = 0;
      total -= 64;
    }
    fill_ = static_cast<unsigned>(total);
  }

  /// Flushes the partial word (zero-padded, spec 03 §8.6); returns the end.
  std::byte* flush() noexcept {
    if (fill_ != 0) {
      store_le64(out_, acc_);
      out_ += 8;
      acc_ = 0;
      fill_ = 0;
    }
    return out_;
  }

 private:
  std::byte* out_;
  std::uint64_t acc_ = 0;
  unsigned fill_ = 0;
};

/// Reads bits at any position of a byte span; bits past its end read as 0.
class bit_reader {
 public:
  bit_reader(const std::byte* data, std::size_t size) noexcept : data_(data), size_(size) {}

  /// At least 57 bits from the current position (bit 0 = next bit).
  [[nodiscard]] std::uint64_t peek() const noexcept {
    const std::uint64_t byte = pos_ >> 3;
    std::uint64_t w = 0;
    if (byte + 8 <= size_) {
      w = load_le64(data_ + byte);
    } else if (byte < size_) {
      std::byte tail[8] = {};
      std::memcpy(tail, data_ + byte, static_cast<std::size_t>(size_ - byte));
      w = load_le64(tail);
    }
    return w >> (pos_ & 7);
  }

  /// Reads `n` ≤ 56 bits.
  std::uint64_t read(unsigned n) noexcept {
    const std::uint64_t v = peek() & low_mask(n);
    pos_ += n;
    return v;
  }

  void skip(std::uint64_t n) noexcept { pos_ += n; }
  void seek(std::uint64_t bit) noexcept { pos_ = bit; }
  [[nodiscard]] std::uint64_t position() const noexcept { return pos_; }

 private:
  const std::byte* data_;
  std::uint64_t size_;
  std::uint64_t pos_ = 0;
};

}  // namespace tensogram::codecs::zfp_detail
