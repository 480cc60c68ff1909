// The CCSDS 121.0-B-3 stream grammar as libaec codes it (spec 03 Appendix
// C), walked without decoding: a bounds-checked MSB-first bit reader, the
// walk over one RSI (which finds where each RSI and each split-coded block
// starts), and the bit-shifted copy of §7.5. Private to src/codecs/szip*.cpp:
// the offsets of szip_rsi_offsets, the parallel encode's joins and the
// parallel decode's run starts all come from this one walk.
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#include <immintrin.h>
#define TENSOGRAM_SZIP_BMI2 1
#else
#define TENSOGRAM_SZIP_BMI2 0
#endif

#include "tensogram/codecs/szip.hpp"
#include "tensogram/core/byte_order.hpp"
#include "tensogram/core/error.hpp"

namespace tensogram::codecs::szip_walk {

[[noreturn]] inline void fail(const std::string& what) {
  throw encoding_error("compression error: szip error: " + what);
}

// The largest block our own coder handles: AEC_NOT_ENFORCE admits any even
// size, and a block is held whole, so a huge one would cost far more memory
// than the data.
inline constexpr std::uint32_t k_max_block = 4096;

// The checks our encoder and decoder make on a stream of `total` bytes
// before coding it: whole samples, and a block size they handle.
inline void check_stream_shape(const szip_params& p, std::uint64_t total, std::size_t sample_bytes) {
  if (total % sample_bytes != 0) {
    fail("data length " + std::to_string(total) + " is not a multiple of sample byte width " +
         std::to_string(sample_bytes));
  }
  if (p.block_size > k_max_block) {
    fail("block_size " + std::to_string(p.block_size) + " above " + std::to_string(k_max_block) +
         " is not supported");
  }
}

// Bit index, counted from the most significant bit, of the (i+1)-th one bit
// of every byte value: the last step of select_msb.
constexpr std::array<std::array<std::uint8_t, 8>, 256> k_byte_select = [] {
  std::array<std::array<std::uint8_t, 8>, 256> t{};
  for (unsigned v = 0; v < 256; ++v) {
    unsigned found = 0;
    for (unsigned bit = 0; bit < 8; ++bit) {
      if ((v & (0x80U >> bit)) != 0) t[v][found++] = static_cast<std::uint8_t>(bit);
    }
  }
  return t;
}();

constexpr std::uint64_t k_byte_ones = 0x0101010101010101ULL;

// The number of one bits of every byte of `w`, in that byte (SWAR: the
// library is built for baseline x86-64, where std::popcount is a libgcc call).
[[nodiscard]] constexpr std::uint64_t byte_popcounts(std::uint64_t w) noexcept {
  std::uint64_t c = w - ((w >> 1) & 0x5555555555555555ULL);
  c = (c & 0x3333333333333333ULL) + ((c >> 2) & 0x3333333333333333ULL);
  return (c + (c >> 4)) & 0x0F0F0F0F0F0F0F0FULL;
}

// Position (0 = most significant bit) of the n-th one bit of `w`, for
// 1 <= n <= popcount(w), given counts = byte_popcounts(w). Broadword select:
// prefix sums of the byte counts in stream order by one multiplication, the
// first byte whose prefix reaches n, then a table lookup inside that byte.
// No data-dependent loop, so skipping a block's fundamental sequences costs
// the same for any k.
[[nodiscard]] inline unsigned select_msb(std::uint64_t w, std::uint64_t counts, unsigned n) noexcept {
  // Byte j of `prefix` (from the least significant) counts the ones of the
  // first j + 1 stream bytes; every count is <= 64, so the subtraction below
  // never borrows across bytes.
  const std::uint64_t prefix = __builtin_bswap64(counts) * k_byte_ones;
  const std::uint64_t reached = ((prefix | (0x80 * k_byte_ones)) - n * k_byte_ones) & (0x80 * k_byte_ones);
  const auto j = static_cast<unsigned>(std::countr_zero(reached)) / 8;
  const auto before = static_cast<unsigned>(((prefix << 8) >> (8 * j)) & 0xFF);
  const auto byte = static_cast<unsigned>((w >> (56 - 8 * j)) & 0xFF);
  return 8 * j + k_byte_select[byte][n - before - 1];
}

// MSB-first bit reader over a coded stream; every read is bounds-checked so
// hostile payloads end in an error.
class bit_reader {
 public:
  bit_reader(std::span<const std::byte> b, std::uint64_t bit) noexcept
      : data_(reinterpret_cast<const unsigned char*>(b.data())),
        size_(b.size()),
        pos_(bit),
        limit_(8 * static_cast<std::uint64_t>(b.size())) {}
  [[nodiscard]] std::uint64_t position() const noexcept { return pos_; }
  std::uint32_t bits(unsigned n) {
    if (n == 0) return 0;
    if (pos_ + n > limit_) fail("stream ends inside a coded data set");
    const auto v = static_cast<std::uint32_t>(window() >> (64 - n));
    pos_ += n;
    return v;
  }
  void skip(std::uint64_t n) {
    if (n > limit_ - pos_) fail("stream ends inside a coded data set");
    pos_ += n;
  }
  // Fundamental sequence: count of zeros before the next one, 64 bits at a
  // time.
  std::uint32_t fs() {
    std::uint64_t count = 0;
    for (;;) {
      if (pos_ >= limit_) fail("stream ends inside a fundamental sequence");
      const std::uint64_t w = window();
      const auto zeros = static_cast<std::uint64_t>(w == 0 ? 64 : std::countl_zero(w));
      if (zeros >= limit_ - pos_) fail("stream ends inside a fundamental sequence");
      if (w != 0) {
        pos_ += zeros + 1;
        count += zeros;
        if (count > 0xFFFFFFFFULL) fail("fundamental sequence too long");
        return static_cast<std::uint32_t>(count);
      }
      pos_ += 64;
      count += 64;
    }
  }
  // Skips `n` fundamental sequences without decoding them: each one ends
  // with a one bit, so this moves past the n-th one bit, counting whole
  // 64-bit windows with popcount. Same positions and errors as `n` calls of
  // fs().
  void skip_fs(std::uint32_t n) {
    std::uint64_t run = 0;  // zeros since the last one bit, across windows
    while (n != 0) {
      if (pos_ >= limit_) fail("stream ends inside a fundamental sequence");
      const std::uint64_t w = window();  // zero past the end of the stream
      if (w == 0) {
        run += 64;
        pos_ += 64;
        continue;
      }
      if (run + static_cast<std::uint64_t>(std::countl_zero(w)) > 0xFFFFFFFFULL) {
        fail("fundamental sequence too long");
      }
      const std::uint64_t counts = byte_popcounts(w);
      const auto ones = static_cast<std::uint32_t>((counts * k_byte_ones) >> 56);
      if (ones >= n) {
        pos_ += select_msb(w, counts, n) + 1;
        return;
      }
      n -= ones;
      run = static_cast<std::uint64_t>(std::countr_zero(w));
      pos_ += 64;
    }
  }
  // Decodes `n` fundamental sequences into out[0..n), consuming whole
  // 64-bit windows: same values, positions and errors as `n` calls of fs()
  // (the decoder's hot loop, src/codecs/szip_decoder.cpp).
  void fs_into(std::uint32_t* out, std::uint32_t n) {
    std::uint64_t run = 0;  // zeros since the last one bit, across windows
    std::uint32_t i = 0;
    while (i < n) {
      if (pos_ >= limit_) fail("stream ends inside a fundamental sequence");
      std::uint64_t w = window();  // zero past the end of the stream
      unsigned used = 0;
      while (w != 0 && i < n) {
        const auto z = static_cast<unsigned>(std::countl_zero(w));
        run += z;
        if (run > 0xFFFFFFFFULL) fail("fundamental sequence too long");
        out[i++] = static_cast<std::uint32_t>(run);
        run = 0;
        used += z + 1;
        w = z == 63 ? 0 : w << (z + 1);
      }
      if (i < n) {
        run += 64 - used;
        pos_ += 64;
      } else {
        pos_ += used;
      }
    }
  }
  // Reads `n` fields of `k` bits (1..32): out[i] = field with `shift`, or
  // (out[i] << k) | field with `append` (the split option's low parts).
  template <bool Append>
  void fields_into(std::uint32_t* out, std::uint32_t n, unsigned k) {
    if (static_cast<std::uint64_t>(n) * k > limit_ - pos_) fail("stream ends inside a coded data set");
    std::uint64_t w = window();
    unsigned avail = 64;
    for (std::uint32_t i = 0; i < n; ++i) {
      if (avail < k) {
        pos_ += 64 - avail;
        w = window();
        avail = 64;
      }
      const auto field = static_cast<std::uint32_t>(w >> (64 - k));
      if constexpr (Append) {
        out[i] = static_cast<std::uint32_t>((static_cast<std::uint64_t>(out[i]) << k) | field);
      } else {
        out[i] = field;
      }
      w = k == 64 ? 0 : w << k;
      avail -= k;
    }
    pos_ += 64 - avail;
  }
  // The 64 stream bits from the position, when they all lie inside the
  // stream (the walk's fast path: no checks for what it reads from them).
  [[nodiscard]] bool peek64(std::uint64_t& w) const noexcept {
    const auto byte = static_cast<std::size_t>(pos_ / 8);
    if (byte + 9 > size_) return false;
    std::uint64_t x = 0;
    std::memcpy(&x, data_ + byte, 8);
    if constexpr (std::endian::native == std::endian::little) x = __builtin_bswap64(x);
    const auto shift = static_cast<unsigned>(pos_ % 8);
    // (The byte after the eight fills the bits the shift empties.)
    w = (x << shift) | ((static_cast<std::uint64_t>(data_[byte + 8]) << shift) >> 8);
    return true;
  }
  // Moves past `n` bits that peek64 returned.
  void advance(unsigned n) noexcept { pos_ += n; }
  // Bits after the n-th one bit (1 <= n) counted from the top of `w`, or 0
  // when `w` holds fewer than n ones.
  [[nodiscard]] static unsigned past_nth_one(std::uint64_t w, unsigned n) noexcept {
    const std::uint64_t counts = byte_popcounts(w);
    if (((counts * k_byte_ones) >> 56) < n) return 0;
    return select_msb(w, counts, n) + 1;
  }
#if TENSOGRAM_SZIP_BMI2
  [[gnu::target("popcnt,bmi,bmi2,lzcnt")]] [[nodiscard]] static unsigned past_nth_one_bmi2(
      std::uint64_t w, unsigned n) noexcept {
    const auto ones = static_cast<unsigned>(__builtin_popcountll(w));
    if (ones < n) return 0;
    return static_cast<unsigned>(64 - __builtin_ctzll(_pdep_u64(std::uint64_t{1} << (ones - n), w)));
  }
#endif
#if TENSOGRAM_SZIP_BMI2
  // skip_fs with popcnt and pdep: the n-th one from the top is the
  // (ones - n + 1)-th from the bottom, where pdep deposits a single bit.
  [[gnu::target("popcnt,bmi,bmi2,lzcnt")]] void skip_fs_bmi2(std::uint32_t n) {
    std::uint64_t run = 0;  // zeros since the last one bit, across windows
    while (n != 0) {
      if (pos_ >= limit_) fail("stream ends inside a fundamental sequence");
      const std::uint64_t w = window();  // zero past the end of the stream
      if (w == 0) {
        run += 64;
        pos_ += 64;
        continue;
      }
      if (run + static_cast<std::uint64_t>(std::countl_zero(w)) > 0xFFFFFFFFULL) {
        fail("fundamental sequence too long");
      }
      // popcnt, then the n-th one from the top is the (ones - n + 1)-th
      // from the bottom: pdep deposits a single bit there.
      const auto ones = static_cast<std::uint32_t>(__builtin_popcountll(w));
      if (ones >= n) {
        pos_ +=
            static_cast<std::uint64_t>(63 - __builtin_ctzll(_pdep_u64(std::uint64_t{1} << (ones - n), w))) +
            1;
        return;
      }
      n -= ones;
      run = static_cast<std::uint64_t>(std::countr_zero(w));
      pos_ += 64;
    }
  }
#endif

 private:
  // The 64 stream bits from `pos_` (MSB-first), zero past the end.
  [[nodiscard]] std::uint64_t window() const noexcept {
    const auto byte = static_cast<std::size_t>(pos_ / 8);
    const auto shift = static_cast<unsigned>(pos_ % 8);
    std::uint64_t x = 0;
    unsigned next = 0;
    if (byte + 9 <= size_) {
      std::memcpy(&x, data_ + byte, 8);
      if constexpr (std::endian::native == std::endian::little) x = __builtin_bswap64(x);
      next = data_[byte + 8];
    } else {
      for (std::size_t k = 0; k < 8; ++k) x = (x << 8) | (byte + k < size_ ? data_[byte + k] : 0U);
      next = byte + 8 < size_ ? data_[byte + 8] : 0U;
    }
    return shift == 0 ? x : (x << shift) | (next >> (8 - shift));
  }

  const unsigned char* data_;
  std::size_t size_;
  std::uint64_t pos_;
  std::uint64_t limit_;
};

inline unsigned id_length(const szip_params& p) {
  if (p.bits_per_sample > 16) return 5;
  if (p.bits_per_sample > 8) return 4;
  if ((p.flags & szip_flags::restricted) != 0) return p.bits_per_sample <= 2 ? 1 : 2;
  return 3;
}

template <bool HardwareSelect>
[[gnu::always_inline]] inline unsigned past_nth_one_of(std::uint64_t w, unsigned n) {
#if TENSOGRAM_SZIP_BMI2
  if constexpr (HardwareSelect) return bit_reader::past_nth_one_bmi2(w, n);
#endif
  return bit_reader::past_nth_one(w, n);
}

// Walks one RSI of `blocks` blocks starting at the reader's position, the
// grammar of CCSDS 121.0-B-3 as libaec codes it (spec 03 Appendix C).
template <bool HardwareSelect>
[[gnu::always_inline]] inline void skip_fs_of(bit_reader& r, std::uint32_t n) {
#if TENSOGRAM_SZIP_BMI2
  if constexpr (HardwareSelect) {
    r.skip_fs_bmi2(n);
    return;
  }
#endif
  r.skip_fs(n);
}

struct no_split {
  void operator()(std::uint32_t /*block*/, std::uint64_t /*bit*/) const noexcept {}
};

// `on_split(block, bit)` is called for every block coded with a split
// option, with the bit where its CDS starts.
template <bool HardwareSelect, class OnSplit = no_split>
[[gnu::always_inline]] inline void walk_rsi_body(bit_reader& r, const szip_params& p, std::uint32_t blocks,
                                                 bool partial, OnSplit on_split = {}) {
  const unsigned id_len = id_length(p);
  const std::uint32_t all_ones = (1U << id_len) - 1;
  const bool pp = (p.flags & szip_flags::data_preprocess) != 0;
  const std::uint32_t bs = p.block_size;
  std::uint32_t b = 0;
  while (b < blocks) {
    const std::uint32_t ref = (pp && b == 0) ? 1 : 0;
    std::uint64_t w = 0;
    if (ref == 0 && r.peek64(w)) {
      // Fast path for the commonest CDS, a split block whose id and
      // fundamental sequences lie in the next 64 stream bits (far from the
      // end of the stream): one load, and the end of the block_size-th FS
      // found by select. Same positions and errors as the general path
      // below, which takes every other case.
      const auto id = static_cast<std::uint32_t>(w >> (64 - id_len));
      if (id != 0 && id != all_ones) {
        if (const unsigned fs_bits = past_nth_one_of<HardwareSelect>(w << id_len, bs); fs_bits != 0) {
          on_split(b, r.position());
          r.advance(id_len + fs_bits);
          r.skip(static_cast<std::uint64_t>(id - 1) * bs);
          ++b;
          continue;
        }
      }
    }
    const std::uint64_t cds = r.position();
    const std::uint32_t id = r.bits(id_len);
    if (id == 0) {
      const bool second_extension = r.bits(1) == 1;
      if (ref != 0) r.skip(p.bits_per_sample);
      if (second_extension) {
        skip_fs_of<HardwareSelect>(r, bs / 2);
        ++b;
        continue;
      }
      std::uint32_t zero_blocks = r.fs() + 1;
      if (zero_blocks == 5) {  // remainder of segment
        zero_blocks = std::min(p.rsi - b, 64 - (b % 64));
      } else if (zero_blocks > 5) {
        --zero_blocks;
      }
      if (zero_blocks > blocks - b) {
        // libaec ends a stream's last, partial RSI with a "remainder of
        // segment" run counted as if the RSI were whole.
        if (!partial) fail("zero-block run past the end of its RSI");
        zero_blocks = blocks - b;
      }
      b += zero_blocks;
    } else if (id == all_ones) {
      r.skip(static_cast<std::uint64_t>(bs) * p.bits_per_sample);
      ++b;
    } else {
      const std::uint32_t k = id - 1;
      on_split(b, cds);
      if (ref != 0) r.skip(p.bits_per_sample);
      skip_fs_of<HardwareSelect>(r, bs - ref);
      r.skip(static_cast<std::uint64_t>(k) * (bs - ref));
      ++b;
    }
  }
}

#if TENSOGRAM_SZIP_BMI2
// The walk is most of what szip adds to libaec's encode time; with BMI2's
// pdep (and popcnt) a block's fundamental sequences are skipped in a few
// instructions. Not on AMD before Zen 3, whose pdep is microcoded (hundreds
// of cycles); the portable select is used there.
[[gnu::target("popcnt,bmi,bmi2,lzcnt")]] inline void walk_rsi_bmi2(bit_reader& r, const szip_params& p,
                                                                   std::uint32_t blocks, bool partial) {
  // On a local copy, so that the position stays in a register (the walk is
  // one chain of dependent loads); `r` is left where it was on an error.
  bit_reader local = r;
  walk_rsi_body<true>(local, p, blocks, partial);
  r = local;
}

inline bool fast_pdep() noexcept {
  __builtin_cpu_init();
  return __builtin_cpu_supports("bmi2") && __builtin_cpu_supports("popcnt") &&
         !__builtin_cpu_is("amdfam15h") && !__builtin_cpu_is("znver1") && !__builtin_cpu_is("znver2");
}
#endif

// `partial`: the stream's last RSI, of `blocks` < rsi blocks.
inline void walk_rsi(bit_reader& r, const szip_params& p, std::uint32_t blocks, bool partial = false) {
#if TENSOGRAM_SZIP_BMI2
  static const bool use_bmi2 = fast_pdep();
  if (use_bmi2) {
    walk_rsi_bmi2(r, p, blocks, partial);
    return;
  }
#endif
  bit_reader local = r;  // as in walk_rsi_bmi2
  walk_rsi_body<false>(local, p, blocks, partial);
  r = local;
}

// dst[k] = the 8 stream bits from bit 8k + sh of `src` (bits past its end
// read as 0): the byte-aligned copy of §7.5, a 64-bit word at a time.
inline void copy_from_bit(std::span<const std::byte> src, unsigned sh, std::span<std::byte> dst) noexcept {
  const std::size_t n = dst.size();
  if (n == 0) return;  // (an empty span's data() may be null: no memcpy)
  if (sh == 0) {
    std::memcpy(dst.data(), src.data(), n);
    return;
  }
  std::size_t k = 0;
  for (; k + 9 <= src.size() && k + 8 <= n; k += 8) {
    const std::uint64_t x = load_be64(src.data() + k);
    const auto next = static_cast<unsigned>(src[k + 8]);
    store_be64(dst.data() + k, (x << sh) | (next >> (8 - sh)));
  }
  for (; k < n; ++k) {
    const unsigned hi = static_cast<unsigned>(src[k]) << sh;
    const unsigned lo = k + 1 < src.size() ? static_cast<unsigned>(src[k + 1]) >> (8 - sh) : 0;
    dst[k] = static_cast<std::byte>((hi | lo) & 0xFF);
  }
}

}  // namespace tensogram::codecs::szip_walk
