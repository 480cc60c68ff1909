// The SIMD kernels of shuffle (spec 03 §5) and byte swapping (spec 02 §6),
// and the word-at-a-time szip offset walker (spec 03 §7.4, Appendix C),
// against naive references written here: every element size and length
// class the kernels special-case, unaligned buffers, ragged ends, several
// chunks and thread counts, and szip streams of every option kind.
#include <gtest/gtest.h>
#include <hwy/targets.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "src/codecs/szip_walk.hpp"
#include "tensogram/codecs/shuffle.hpp"
#include "tensogram/codecs/szip.hpp"
#include "tensogram/core/byte_order.hpp"
#include "tensogram/core/error.hpp"

namespace {

namespace tg = tensogram;
using bytes = std::vector<std::byte>;

bytes random_bytes(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  bytes v(n);
  for (auto& b : v) b = static_cast<std::byte>(rng() & 0xFF);
  return v;
}

// ---------------------------------------------------------------- shuffle

bytes naive_shuffle(std::span<const std::byte> in, std::size_t s) {
  const std::size_t m = in.size() / s;
  bytes out(in.size());
  for (std::size_t b = 0; b < s; ++b) {
    for (std::size_t e = 0; e < m; ++e) out[b * m + e] = in[e * s + b];
  }
  return out;
}

bytes naive_unshuffle(std::span<const std::byte> in, std::size_t s) {
  const std::size_t m = in.size() / s;
  bytes out(in.size());
  for (std::size_t b = 0; b < s; ++b) {
    for (std::size_t e = 0; e < m; ++e) out[e * s + b] = in[b * m + e];
  }
  return out;
}

// Runs `op` on `in` copied to an odd offset of a larger buffer, into an odd
// offset of another with guard bytes on both sides, and checks the guards:
// kernels must write exactly the output span.
bytes run_guarded(const bytes& in, std::size_t in_offset, std::size_t out_offset,
                  const std::function<void(std::span<const std::byte>, std::span<std::byte>)>& op) {
  constexpr std::size_t guard = 64;
  constexpr auto canary = std::byte{0xA5};
  bytes src(in_offset + in.size() + guard, std::byte{0x5A});
  for (std::size_t i = 0; i < in.size(); ++i) src[in_offset + i] = in[i];
  bytes dst(out_offset + in.size() + guard, canary);
  op(std::span<const std::byte>(src).subspan(in_offset, in.size()),
     std::span<std::byte>(dst).subspan(out_offset, in.size()));
  for (std::size_t i = 0; i < out_offset; ++i) EXPECT_EQ(dst[i], canary) << "guard before output, byte " << i;
  for (std::size_t i = out_offset + in.size(); i < dst.size(); ++i) {
    EXPECT_EQ(dst[i], canary) << "guard after output, byte " << i;
  }
  return bytes(dst.begin() + static_cast<std::ptrdiff_t>(out_offset),
               dst.begin() + static_cast<std::ptrdiff_t>(out_offset + in.size()));
}

TEST(SimdShuffle, EveryElementSizeAndShortLength) {
  for (std::size_t s = 1; s <= 17; ++s) {
    for (std::size_t m = 0; m * s <= 320; ++m) {
      SCOPED_TRACE(testing::Message() << "S " << s << " M " << m);
      const bytes in = random_bytes(m * s, 1000 * s + m);
      const std::size_t off = (s + m) % 7;
      const bytes sh = run_guarded(in, off, 3, [&](std::span<const std::byte> i, std::span<std::byte> o) {
        tg::codecs::shuffle(i, s, o, 1);
      });
      ASSERT_EQ(sh, naive_shuffle(in, s));
      const bytes un = run_guarded(sh, 1, off, [&](std::span<const std::byte> i, std::span<std::byte> o) {
        tg::codecs::unshuffle(i, s, o, 1);
      });
      ASSERT_EQ(un, in);
      ASSERT_EQ(run_guarded(in, 0, 0,
                            [&](std::span<const std::byte> i, std::span<std::byte> o) {
                              tg::codecs::unshuffle(i, s, o, 1);
                            }),
                naive_unshuffle(in, s));
    }
  }
}

TEST(SimdShuffle, LargeBuffersAcrossChunksAndThreads) {
  // Over 2^16 elements for every size (several tasks of the chunked loop),
  // with element counts that are not multiples of the SIMD steps.
  for (std::size_t s : {2u, 3u, 4u, 5u, 8u, 12u, 16u, 17u, 33u}) {
    const std::size_t m = std::max<std::size_t>((std::size_t{1} << 20) / s, 3 * (std::size_t{1} << 16)) + 13;
    const bytes in = random_bytes(m * s, s);
    const bytes want_sh = naive_shuffle(in, s);
    const bytes want_un = naive_unshuffle(in, s);
    for (std::uint32_t threads : {0u, 1u, 2u}) {
      SCOPED_TRACE(testing::Message() << "S " << s << " threads " << threads);
      const bytes sh = run_guarded(in, 1, 5, [&](std::span<const std::byte> i, std::span<std::byte> o) {
        tg::codecs::shuffle(i, s, o, threads);
      });
      EXPECT_TRUE(sh == want_sh);
      const bytes un = run_guarded(in, 3, 0, [&](std::span<const std::byte> i, std::span<std::byte> o) {
        tg::codecs::unshuffle(i, s, o, threads);
      });
      EXPECT_TRUE(un == want_un);
    }
  }
}

TEST(SimdShuffle, ErrorsUnchanged) {
  bytes in(12), out(12), short_out(11);
  EXPECT_THROW(tg::codecs::shuffle(in, 0, out), tg::encoding_error);
  EXPECT_THROW(tg::codecs::shuffle(in, 5, out), tg::encoding_error);
  EXPECT_THROW(tg::codecs::unshuffle(in, 8, out), tg::encoding_error);
  EXPECT_THROW(tg::codecs::shuffle(in, 4, short_out), tg::encoding_error);
}

// ------------------------------------------------------------ byte swap

bytes naive_swap(bytes v, std::size_t unit) {
  if (unit <= 1) return v;
  for (std::size_t g = 0; g + unit <= v.size(); g += unit) std::reverse(v.begin() + g, v.begin() + g + unit);
  return v;
}

TEST(SimdByteSwap, UnalignedStartsAndOddLengths) {
  for (std::size_t unit : {1u, 2u, 4u, 8u, 16u}) {
    for (std::size_t start = 0; start < 16; ++start) {
      for (std::size_t n = 0; n <= 300; n += (n < 80 ? 1 : 7)) {
        SCOPED_TRACE(testing::Message() << "unit " << unit << " start " << start << " n " << n);
        const bytes in = random_bytes(n, unit * 100000 + start * 1000 + n);
        const bytes want = naive_swap(in, unit);
        bytes buf(start + n + 8, std::byte{0xEE});
        std::copy(in.begin(), in.end(), buf.begin() + static_cast<std::ptrdiff_t>(start));
        tg::swap_bytes_in_place(std::span<std::byte>(buf).subspan(start, n), unit);
        ASSERT_TRUE(std::equal(want.begin(), want.end(), buf.begin() + static_cast<std::ptrdiff_t>(start)));
        for (std::size_t i = 0; i < start; ++i) ASSERT_EQ(buf[i], std::byte{0xEE});
        for (std::size_t i = start + n; i < buf.size(); ++i) ASSERT_EQ(buf[i], std::byte{0xEE});
        // Copy into a differently aligned destination.
        bytes dst(n + 9, std::byte{0xEE});
        const std::size_t dst_start = (start * 5 + 3) % 9;
        tg::copy_swapped(in, std::span<std::byte>(dst).subspan(dst_start, n), unit);
        ASSERT_TRUE(
            std::equal(want.begin(), want.end(), dst.begin() + static_cast<std::ptrdiff_t>(dst_start)));
        for (std::size_t i = 0; i < dst_start; ++i) ASSERT_EQ(dst[i], std::byte{0xEE});
        for (std::size_t i = dst_start + n; i < dst.size(); ++i) ASSERT_EQ(dst[i], std::byte{0xEE});
      }
    }
  }
}

TEST(SimdByteSwap, LargeAndUnequalSpans) {
  const bytes in = random_bytes((std::size_t{1} << 20) + 21, 77);
  for (std::size_t unit : {2u, 4u, 8u, 16u}) {
    SCOPED_TRACE(unit);
    const bytes want = naive_swap(in, unit);
    bytes v(in.begin() + 1, in.end());
    tg::swap_bytes_in_place(v, unit);
    EXPECT_TRUE(v == naive_swap(bytes(in.begin() + 1, in.end()), unit));
    bytes dst(in.size());
    tg::copy_swapped(in, dst, unit);
    EXPECT_TRUE(dst == want);
    // copy_swapped converts min(src, dst) bytes.
    bytes small(1001, std::byte{0});
    tg::copy_swapped(in, small, unit);
    EXPECT_TRUE(small == naive_swap(bytes(in.begin(), in.begin() + 1001), unit));
  }
}

// ------------------------------------------------ every compiled target

// The kernels are dispatched at run time; force each target this build
// compiled and this CPU supports (SSSE3 ... AVX-512, and the emulated
// 128-bit fallback), so paths a fast machine never picks are checked too.
TEST(SimdTargets, EveryTargetMatchesNaive) {
  const std::vector<std::int64_t> targets = hwy::SupportedAndGeneratedTargets();
  ASSERT_FALSE(targets.empty());
  for (const std::int64_t target : targets) {
    hwy::SetSupportedTargetsForTest(target);
    SCOPED_TRACE(hwy::TargetName(target));
    for (std::size_t s = 1; s <= 17; ++s) {
      for (const std::size_t m : {std::size_t{0}, std::size_t{15}, std::size_t{16}, std::size_t{97},
                                  std::size_t{200}, std::size_t{70000}}) {
        SCOPED_TRACE(testing::Message() << "S " << s << " M " << m);
        const bytes in = random_bytes(m * s, 31 * s + m);
        bytes out(in.size()), back(in.size());
        tg::codecs::shuffle(in, s, out, 2);
        ASSERT_TRUE(out == naive_shuffle(in, s));
        tg::codecs::unshuffle(out, s, back, 2);
        ASSERT_TRUE(back == in);
      }
    }
    for (std::size_t unit : {2u, 4u, 8u}) {
      for (std::size_t n : {0u, 5u, 64u, 131u, 4099u}) {
        bytes v = random_bytes(n, unit + n);
        const bytes want = naive_swap(v, unit);
        bytes copy(n);
        tg::copy_swapped(v, copy, unit);
        tg::swap_bytes_in_place(v, unit);
        ASSERT_TRUE(v == want) << "unit " << unit << " n " << n;
        ASSERT_TRUE(copy == want) << "unit " << unit << " n " << n;
      }
    }
  }
  hwy::SetSupportedTargetsForTest(0);
}

// ------------------------------------------------------------ szip walk

// A bit-at-a-time walker over the CDS grammar of spec 03 Appendix C that
// records the true RSI boundaries, with the messages of the library's.
class naive_walker {
 public:
  naive_walker(std::span<const std::byte> b, const tg::codecs::szip_params& p) : b_(b), p_(p) {}

  std::vector<std::uint64_t> offsets(std::uint64_t samples, std::size_t count) {
    std::vector<std::uint64_t> out;
    if (count == 0) return out;
    out.push_back(0);
    const std::uint64_t per_rsi = std::uint64_t{p_.rsi} * p_.block_size;
    for (std::size_t j = 0; j + 1 < count; ++j) {
      if ((j + 1) * per_rsi > samples) fail("RSI " + std::to_string(j) + " is not complete");
      rsi();
      out.push_back(pos_);
    }
    return out;
  }

 private:
  [[noreturn]] static void fail(const std::string& what) {
    throw tg::encoding_error("compression error: szip error: " + what);
  }
  unsigned bit() { return (static_cast<unsigned>(b_[pos_ / 8]) >> (7 - pos_ % 8)) & 1U; }
  std::uint32_t bits(unsigned n) {
    if (pos_ + n > 8 * b_.size()) fail("stream ends inside a coded data set");
    std::uint32_t v = 0;
    for (unsigned i = 0; i < n; ++i, ++pos_) v = (v << 1) | bit();
    return v;
  }
  void skip(std::uint64_t n) {
    if (pos_ + n > 8 * b_.size()) fail("stream ends inside a coded data set");
    pos_ += n;
  }
  std::uint32_t fs() {
    std::uint32_t zeros = 0;
    for (;;) {
      if (pos_ >= 8 * b_.size()) fail("stream ends inside a fundamental sequence");
      const unsigned v = bit();
      ++pos_;
      if (v == 1) return zeros;
      ++zeros;
    }
  }
  void rsi() {
    const unsigned id_len = p_.bits_per_sample > 16  ? 5
                            : p_.bits_per_sample > 8 ? 4
                            : (p_.flags & tg::codecs::szip_flags::restricted) != 0
                                ? (p_.bits_per_sample <= 2 ? 1 : 2)
                                : 3;
    const bool pp = (p_.flags & tg::codecs::szip_flags::data_preprocess) != 0;
    const std::uint32_t bs = p_.block_size;
    for (std::uint32_t b = 0; b < p_.rsi;) {
      const std::uint32_t ref = pp && b == 0 ? 1 : 0;
      const std::uint32_t id = bits(id_len);
      if (id == 0) {
        const bool se = bits(1) == 1;
        if (ref != 0) skip(p_.bits_per_sample);
        if (se) {
          for (std::uint32_t i = 0; i < bs / 2; ++i) fs();
          ++b;
          continue;
        }
        std::uint32_t run = fs() + 1;
        if (run == 5) {
          run = std::min(p_.rsi - b, 64 - b % 64);
        } else if (run > 5) {
          --run;
        }
        if (run > p_.rsi - b) fail("zero-block run past the end of its RSI");
        b += run;
      } else if (id == (1U << id_len) - 1) {
        skip(std::uint64_t{bs} * p_.bits_per_sample);
        ++b;
      } else {
        if (ref != 0) skip(p_.bits_per_sample);
        for (std::uint32_t i = 0; i < bs - ref; ++i) fs();
        skip(std::uint64_t{id - 1} * (bs - ref));
        ++b;
      }
    }
  }

  std::span<const std::byte> b_;
  tg::codecs::szip_params p_;
  std::uint64_t pos_ = 0;
};

// Samples in containers of szip_sample_bytes, little-endian unless MSB.
bytes szip_input(const tg::codecs::szip_params& p, const std::vector<std::uint32_t>& values) {
  const std::size_t s = tg::codecs::szip_sample_bytes(p);
  const bool msb = (p.flags & tg::codecs::szip_flags::data_msb) != 0;
  bytes out;
  for (std::uint32_t v : values) {
    for (std::size_t k = 0; k < s; ++k) {
      const std::size_t shift = msb ? 8 * (s - 1 - k) : 8 * k;
      out.push_back(static_cast<std::byte>((v >> shift) & 0xFF));
    }
  }
  return out;
}

std::vector<std::uint32_t> pattern(int kind, std::size_t n, std::uint32_t bits, std::mt19937_64& rng) {
  const std::uint64_t top = (std::uint64_t{1} << bits) - 1;
  std::vector<std::uint32_t> v(n);
  for (std::size_t i = 0; i < n; ++i) {
    std::uint64_t x = 0;
    switch (kind) {
      case 0: x = 0; break;                                            // zero blocks, segment runs
      case 1: x = top / 3; break;                                      // constant
      case 2: x = i % (top + 1); break;                                // ramp
      case 3: x = rng() & top; break;                                  // noise: uncompressed blocks
      case 4: x = (top / 2) + (rng() % 3); break;                      // low entropy: second extension
      case 5: x = (i / 300) % 2 == 0 ? 0 : rng() & (top >> 2); break;  // zero runs and noise
      case 6: x = (i / 40) % 5 == 0 ? 0 : (rng() % 200) & top; break;  // short zero runs
      default:
        x = static_cast<std::uint64_t>(top * (0.5 + 0.4 * std::sin(static_cast<double>(i) / 50.0))) +
            (rng() % 16);
        x = std::min(x, top);
        break;
    }
    v[i] = static_cast<std::uint32_t>(x);
  }
  return v;
}

TEST(SimdSzipOffsets, WalkerMatchesNaiveWalker) {
  using namespace tg::codecs::szip_flags;
  std::mt19937_64 rng(2024);
  int streams = 0;
  for (std::uint32_t bits : {2u, 4u, 8u, 12u, 16u, 17u, 24u, 32u}) {
    for (std::uint32_t block : {8u, 16u, 32u, 64u}) {
      for (std::uint32_t rsi : {1u, 3u, 64u, 65u, 128u}) {
        for (std::uint32_t flags :
             {0u, data_preprocess, data_preprocess | data_msb, data_preprocess | restricted}) {
          if ((flags & restricted) != 0 && bits > 4) continue;
          for (int kind = 0; kind < 8; ++kind) {
            tg::codecs::szip_params p;
            p.bits_per_sample = bits;
            p.block_size = block;
            p.rsi = rsi;
            p.flags = flags | (bits >= 17 && bits <= 24 ? data_3byte : 0U);
            const std::uint64_t per_rsi = std::uint64_t{rsi} * block;
            const std::size_t n = static_cast<std::size_t>(per_rsi * (1 + rng() % 5) + rng() % per_rsi);
            const bytes raw = szip_input(p, pattern(kind, n, bits, rng));
            SCOPED_TRACE(testing::Message() << "bits " << bits << " block " << block << " rsi " << rsi
                                            << " flags " << p.flags << " kind " << kind << " n " << n);
            const auto enc = tg::codecs::szip_compress(raw, p);
            const std::size_t count = static_cast<std::size_t>((n + per_rsi - 1) / per_rsi);
            const std::vector<std::uint64_t> want = naive_walker(enc.payload, p).offsets(n, count);
            ASSERT_EQ(enc.block_offsets, want);
            ASSERT_EQ(tg::codecs::szip_rsi_offsets(enc.payload, p, n, count), want);
            ++streams;
          }
        }
      }
    }
  }
  EXPECT_GT(streams, 1000);
}

// Damaged streams: the fast walker fails exactly where, and with the message
// that, the bit-at-a-time walker does (or both succeed with equal offsets).
TEST(SimdSzipOffsets, DamagedStreamsFailLikeNaiveWalker) {
  using namespace tg::codecs::szip_flags;
  std::mt19937_64 rng(7);
  for (std::uint32_t bits : {8u, 16u, 24u}) {
    for (int kind : {3, 4, 5, 7}) {
      tg::codecs::szip_params p;
      p.bits_per_sample = bits;
      p.block_size = 16;
      p.rsi = 4;
      p.flags = data_preprocess | (bits == 24 ? data_3byte : 0U);
      const std::size_t n = 64 * 12 + 5;
      const bytes raw = szip_input(p, pattern(kind, n, bits, rng));
      const auto enc = tg::codecs::szip_compress(raw, p);
      const std::size_t count = 13;
      auto outcome = [&](const bytes& payload, bool naive) -> std::string {
        try {
          const auto offs = naive ? naive_walker(payload, p).offsets(n, count)
                                  : tg::codecs::szip_rsi_offsets(payload, p, n, count);
          std::string s;
          for (auto o : offs) s += std::to_string(o) + ",";
          return s;
        } catch (const tg::encoding_error& e) {
          return e.what();
        }
      };
      for (std::size_t cut = 0; cut < enc.payload.size(); cut += 1 + enc.payload.size() / 97) {
        const bytes head(enc.payload.begin(), enc.payload.begin() + static_cast<std::ptrdiff_t>(cut));
        ASSERT_EQ(outcome(head, false), outcome(head, true)) << "cut " << cut;
      }
      for (int trial = 0; trial < 200; ++trial) {
        bytes bad = enc.payload;
        const std::size_t at = rng() % bad.size();
        bad[at] = trial % 3 == 0 ? std::byte{0} : static_cast<std::byte>(rng() & 0xFF);
        if (trial % 5 == 0) std::fill(bad.begin() + static_cast<std::ptrdiff_t>(at), bad.end(), std::byte{0});
        ASSERT_EQ(outcome(bad, false), outcome(bad, true)) << "trial " << trial;
      }
    }
  }
}

// The walk's fast path (a split block whose fundamental sequences lie in one
// 64-bit window) and its general path, with the portable select and with
// the one walk_rsi picks on this CPU (pdep where BMI2 is fast): offsets and
// errors as the bit-at-a-time walker's, on whole, truncated and damaged
// streams, for block sizes the fast path takes (8, 16, 32) and one it never
// does (64), and every container width.
TEST(SimdSzipOffsets, FastPathAndPortableSelectMatchNaiveWalker) {
  using namespace tg::codecs::szip_flags;
  namespace walk = tg::codecs::szip_walk;
  std::mt19937_64 rng(31);
  for (std::uint32_t bits : {8u, 16u, 24u, 32u}) {
    for (std::uint32_t block : {8u, 16u, 32u, 64u}) {
      for (int kind : {3, 4, 5, 7}) {
        tg::codecs::szip_params p;
        p.bits_per_sample = bits;
        p.block_size = block;
        p.rsi = 4;
        p.flags = data_preprocess | data_msb | (bits == 24 ? data_3byte : 0U);
        const std::uint64_t per_rsi = std::uint64_t{p.rsi} * block;
        const std::size_t n = static_cast<std::size_t>(per_rsi * 6 + 7);
        const bytes raw = szip_input(p, pattern(kind, n, bits, rng));
        const auto enc = tg::codecs::szip_compress(raw, p);
        const std::size_t count = static_cast<std::size_t>((n + per_rsi - 1) / per_rsi);
        SCOPED_TRACE(testing::Message() << "bits " << bits << " block " << block << " kind " << kind);
        // variant 0: the portable select; 1: walk_rsi; 2: the naive walker.
        auto outcome = [&](const bytes& payload, int variant) -> std::string {
          try {
            std::vector<std::uint64_t> offs;
            if (variant == 2) {
              offs = naive_walker(payload, p).offsets(n, count);
            } else {
              offs.push_back(0);
              walk::bit_reader r(payload, 0);
              for (std::size_t j = 0; j + 1 < count; ++j) {
                if (variant == 0) {
                  walk::walk_rsi_body<false>(r, p, p.rsi, false);
                } else {
                  walk::walk_rsi(r, p, p.rsi);
                }
                offs.push_back(r.position());
              }
            }
            std::string s;
            for (auto o : offs) s += std::to_string(o) + ",";
            return s;
          } catch (const tg::encoding_error& e) {
            return e.what();
          }
        };
        ASSERT_EQ(outcome(enc.payload, 0), outcome(enc.payload, 2));
        ASSERT_EQ(outcome(enc.payload, 1), outcome(enc.payload, 2));
        for (std::size_t cut = 0; cut < enc.payload.size(); cut += 1 + enc.payload.size() / 61) {
          const bytes head(enc.payload.begin(), enc.payload.begin() + static_cast<std::ptrdiff_t>(cut));
          const std::string want = outcome(head, 2);
          ASSERT_EQ(outcome(head, 0), want) << "cut " << cut;
          ASSERT_EQ(outcome(head, 1), want) << "cut " << cut;
        }
        for (int trial = 0; trial < 60; ++trial) {
          bytes bad = enc.payload;
          const std::size_t at = rng() % bad.size();
          bad[at] = trial % 3 == 0 ? std::byte{0xFF} : static_cast<std::byte>(rng() & 0xFF);
          if (trial % 5 == 0)
            std::fill(bad.begin() + static_cast<std::ptrdiff_t>(at), bad.end(), std::byte{0});
          const std::string want = outcome(bad, 2);
          ASSERT_EQ(outcome(bad, 0), want) << "trial " << trial;
          ASSERT_EQ(outcome(bad, 1), want) << "trial " << trial;
        }
      }
    }
  }
}

TEST(SimdSzipOffsets, RangeDecodeMatchesFullDecode) {
  using namespace tg::codecs::szip_flags;
  std::mt19937_64 rng(11);
  for (std::uint32_t bits : {8u, 16u, 24u, 32u}) {
    for (int kind : {0, 3, 5, 7}) {
      tg::codecs::szip_params p;
      p.bits_per_sample = bits;
      p.block_size = 16;
      p.rsi = 8;
      p.flags = data_preprocess | data_msb | (bits == 24 ? data_3byte : 0U);
      const std::size_t n = 128 * 37 + 11;
      const bytes raw = szip_input(p, pattern(kind, n, bits, rng));
      const auto enc = tg::codecs::szip_compress(raw, p);
      ASSERT_EQ(tg::codecs::szip_decompress(enc.payload, p, raw.size()), raw);
      const std::size_t s = tg::codecs::szip_sample_bytes(p);
      for (int trial = 0; trial < 40; ++trial) {
        const std::size_t first = rng() % n;
        const std::size_t count = 1 + rng() % std::min<std::size_t>(n - first, trial % 4 == 0 ? n : 300);
        SCOPED_TRACE(testing::Message()
                     << "bits " << bits << " kind " << kind << " [" << first << ", +" << count << ")");
        const bytes got = tg::codecs::szip_decompress_range(enc.payload, p, enc.block_offsets, raw.size(),
                                                            first * s, count * s);
        ASSERT_TRUE(std::equal(got.begin(), got.end(), raw.begin() + static_cast<std::ptrdiff_t>(first * s)));
        ASSERT_EQ(got.size(), count * s);
      }
    }
  }
}

}  // namespace
