// Our own CCSDS 121.0-B-3 encoder (src/codecs/szip_encoder.hpp, the szip
// encoder of builds without libaec, spec 03 §7) against libaec 1.0.6: over
// bits per sample 1..32, block sizes 8/16/32/64 (and unenforced even ones),
// RSIs from 1 to 4096, every flag combination (3BYTE for 17..24 bits,
// RESTRICTED for up to 4), sample counts that end mid-block and mid-RSI, and
// random, smooth, constant, sparse and extreme data, the bytes we write must
// be aec_buffer_encode's byte for byte, and the RSI offsets those of the
// libaec build's szip_compress (its CDS walk of libaec's stream). Fed piece
// by piece, the encoder writes the same. Malformed parameters are refused as
// szip_validate refuses them.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "src/codecs/szip_encoder.hpp"
#include "szip_test_support.hpp"
#include "tensogram/codecs/szip.hpp"
#include "tensogram/core/error.hpp"

namespace {

using namespace szip_test;  // NOLINT(google-build-using-namespace): a test file's own helpers

// `n` samples of p.bits_per_sample bits in their containers (n-bit two's
// complement with AEC_DATA_SIGNED, the upper container bits zero: libaec
// 1.0.6 miscodes sign-extended ones).
bytes make_data(const codecs::szip_params& p, std::size_t n, kind k, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  const unsigned bits = p.bits_per_sample;
  const bool is_signed = (p.flags & k_signed) != 0;
  const bool msb = (p.flags & k_msb) != 0;
  const std::size_t w = codecs::szip_sample_bytes(p);
  const std::int64_t lo = is_signed ? -(std::int64_t{1} << (bits - 1)) : 0;
  const std::int64_t hi = is_signed ? (std::int64_t{1} << (bits - 1)) - 1 : (std::int64_t{1} << bits) - 1;
  const auto span = static_cast<std::uint64_t>(hi - lo) + 1;
  bytes out(n * w);
  std::int64_t x = lo + static_cast<std::int64_t>(span / 2);
  // Smooth steps scale with the range so that every k gets used.
  const std::int64_t reach = std::max<std::int64_t>(1, static_cast<std::int64_t>(span >> (seed % 9 + 3)));
  for (std::size_t i = 0; i < n; ++i) {
    switch (k) {
      case kind::random: x = lo + static_cast<std::int64_t>(rng() % span); break;
      case kind::smooth: {
        const std::int64_t step = static_cast<std::int64_t>(rng() % (2 * reach + 1)) - reach;
        x = std::clamp(x + step, lo, hi);
        break;
      }
      case kind::constant: x = is_signed ? -1 : lo + 1; break;
      case kind::sparse:  // zero stretches, then a few values
        x = (i / 700) % 2 == 0 ? 0 : lo + static_cast<std::int64_t>(rng() % span);
        break;
      case kind::extreme: x = (rng() % 3 == 0) ? lo : (rng() % 2 == 0 ? hi : lo + 1); break;
    }
    std::uint64_t u = static_cast<std::uint64_t>(x) & ((std::uint64_t{1} << bits) - 1);
    for (std::size_t b = 0; b < w; ++b) {
      const std::size_t shift = 8 * (msb ? w - 1 - b : b);
      out[i * w + b] = static_cast<std::byte>((u >> shift) & 0xFF);
    }
  }
  return out;
}

// The first byte where two streams differ (for the failure message).
std::size_t first_difference(const bytes& a, const bytes& b) {
  const auto m = std::mismatch(a.begin(), a.end(), b.begin(), b.end());
  return static_cast<std::size_t>(m.first - a.begin());
}

// Ours against libaec on one input: bytes, and offsets against the libaec
// build's. Returns whether equal.
bool check_one(const codecs::szip_params& p, std::size_t n, kind k, std::uint64_t seed) {
  const bytes data = make_data(p, n, k, seed);
  const bytes want = libaec_encode(data, p);
  const codecs::szip_encoded got = codecs::szip_encode(data, p);
  if (got.payload != want) {
    ADD_FAILURE() << describe(p, n, k) << ": " << got.payload.size() << " bytes, libaec " << want.size()
                  << ", first difference at byte " << first_difference(got.payload, want);
    return false;
  }
  const codecs::szip_encoded ref = codecs::szip_compress(data, p);
  if (got.block_offsets != ref.block_offsets) {
    ADD_FAILURE() << describe(p, n, k) << ": RSI offsets differ";
    return false;
  }
  return true;
}

// A sample count ending mid-block and mid-RSI (or exactly at an end), at
// most about `cap`.
std::size_t count_for(const codecs::szip_params& p, std::mt19937_64& rng, std::size_t cap) {
  const std::size_t per_rsi = static_cast<std::size_t>(p.rsi) * p.block_size;
  switch (rng() % 4) {
    case 0: return std::min(per_rsi, cap);
    case 1: return 1 + rng() % std::min<std::size_t>(per_rsi + p.block_size, cap);
    case 2: return std::min(2 * per_rsi, cap) + rng() % p.block_size + 1;
    default: return 1 + rng() % cap;
  }
}

TEST(SzipEncoder, MatchesLibaecOverBitsBlocksRsisAndFlags) {
  std::mt19937_64 rng(20261129);
  int failures = 0;
  constexpr std::uint32_t rsis[] = {1, 2, 3, 7, 32, 64, 65, 128, 4095};
  for (std::uint32_t b = 1; b <= 32; ++b) {
    for (const std::uint32_t j : {8U, 16U, 32U, 64U}) {
      // Every combination of SIGNED, MSB, PREPROCESS and PAD_RSI, with
      // 3BYTE where it applies.
      for (std::uint32_t f = 0; f < 16; ++f) {
        codecs::szip_params p;
        p.bits_per_sample = b;
        p.block_size = j;
        p.rsi = rsis[rng() % std::size(rsis)];
        p.flags = ((f & 1U) != 0 ? k_signed : 0) | ((f & 2U) != 0 ? k_msb : 0) | ((f & 4U) != 0 ? k_dp : 0) |
                  ((f & 8U) != 0 ? k_pad : 0);
        if (b > 16 && b <= 24 && rng() % 2 == 0) p.flags |= k_3byte;
        const kind k = k_kinds[rng() % std::size(k_kinds)];
        const std::size_t n = count_for(p, rng, 2500);
        if (!check_one(p, n, k, rng()) && ++failures > 10) return;
      }
    }
  }
}

TEST(SzipEncoder, MatchesLibaecOnEveryKindAndKGrowth) {
  // Every kind at every width with preprocessing, small RSIs so that the k
  // search carries across many RSIs.
  std::mt19937_64 rng(7);
  int failures = 0;
  for (std::uint32_t b = 1; b <= 32; ++b) {
    for (const kind k : k_kinds) {
      for (const std::uint32_t flags : {k_dp, k_dp | k_signed, 0U}) {
        codecs::szip_params p;
        p.bits_per_sample = b;
        p.block_size = 16;
        p.rsi = 1 + static_cast<std::uint32_t>(rng() % 5);
        p.flags = flags;
        if (!check_one(p, 600 + rng() % 200, k, rng()) && ++failures > 10) return;
      }
    }
  }
}

TEST(SzipEncoder, MatchesLibaecRestrictedAnd3Byte) {
  std::mt19937_64 rng(11);
  int failures = 0;
  for (std::uint32_t b = 1; b <= 24; ++b) {
    for (std::uint32_t f = 0; f < 8; ++f) {
      for (const std::uint32_t j : {8U, 16U, 32U, 64U}) {
        codecs::szip_params p;
        p.bits_per_sample = b;
        p.block_size = j;
        p.rsi = 1 + static_cast<std::uint32_t>(rng() % 40);
        p.flags = ((f & 1U) != 0 ? k_signed : 0) | ((f & 2U) != 0 ? k_msb : 0) | ((f & 4U) != 0 ? k_dp : 0);
        if (b <= 4) p.flags |= k_restricted;
        if (b > 16) p.flags |= k_3byte;
        for (const kind k : k_kinds) {
          if (!check_one(p, count_for(p, rng, 1500), k, rng()) && ++failures > 10) return;
        }
      }
    }
  }
}

TEST(SzipEncoder, MatchesLibaecWithUnenforcedBlockSizes) {
  std::mt19937_64 rng(13);
  int failures = 0;
  for (const std::uint32_t j : {2U, 4U, 6U, 10U, 24U, 128U, 256U}) {
    for (const std::uint32_t b : {1U, 4U, 8U, 12U, 16U, 24U, 32U}) {
      for (const std::uint32_t flags : {k_dp, 0U, k_dp | k_signed | k_msb}) {
        codecs::szip_params p;
        p.bits_per_sample = b;
        p.block_size = j;
        p.rsi = 1 + static_cast<std::uint32_t>(rng() % 20);
        p.flags = flags | k_not_enforce;
        for (const kind k : k_kinds) {
          if (!check_one(p, count_for(p, rng, 3000), k, rng()) && ++failures > 10) return;
        }
      }
    }
  }
}

TEST(SzipEncoder, MatchesLibaecOnLongZeroRuns) {
  // Zero runs across 64-block segments, ending at full and partial RSI ends
  // (a partial RSI's segments counted from its start).
  int failures = 0;
  std::mt19937_64 rng(17);
  for (const std::uint32_t r : {63U, 64U, 65U, 130U, 200U, 4096U}) {
    for (const std::uint32_t flags : {k_dp, 0U, k_dp | k_signed}) {
      for (const std::uint32_t j : {8U, 32U}) {
        codecs::szip_params p;
        p.bits_per_sample = 12;
        p.block_size = j;
        p.rsi = r;
        p.flags = flags;
        for (const kind k : {kind::constant, kind::sparse}) {
          for (int t = 0; t < 3; ++t) {
            const std::size_t n = (64 + rng() % 150) * j + rng() % j;
            if (!check_one(p, n, k, rng()) && ++failures > 10) return;
          }
        }
      }
    }
  }
}

TEST(SzipEncoder, PiecewiseFeedWritesTheSame) {
  std::mt19937_64 rng(19);
  for (const kind k : k_kinds) {
    codecs::szip_params p;
    p.bits_per_sample = 13;
    p.block_size = 16;
    p.rsi = 5;
    p.flags = k_dp | k_msb;
    const bytes data = make_data(p, 2000 + rng() % 500, k, rng());
    const codecs::szip_encoded whole = codecs::szip_encode(data, p);
    for (const std::size_t piece : {std::size_t{1}, std::size_t{3}, std::size_t{160}, std::size_t{999}}) {
      codecs::szip_encoded got;
      codecs::szip_stream_encoder enc(p, data.size(), got);
      for (std::size_t at = 0; at < data.size(); at += piece)
        enc.feed(std::span(data).subspan(at, std::min(piece, data.size() - at)));
      EXPECT_EQ(got.payload, whole.payload) << name_of(k) << " piece " << piece;
      EXPECT_EQ(got.block_offsets, whole.block_offsets) << name_of(k) << " piece " << piece;
    }
  }
}

TEST(SzipEncoder, RefusesBadParametersAsValidate) {
  const bytes data(64, std::byte{1});
  const auto refused = [&](const codecs::szip_params& p) {
    std::string validate_error;
    try {
      codecs::szip_validate(p);
    } catch (const tensogram::encoding_error& e) {
      validate_error = e.what();
    }
    EXPECT_FALSE(validate_error.empty());
    try {
      (void)codecs::szip_encode(data, p);
      ADD_FAILURE() << "accepted";
    } catch (const tensogram::encoding_error& e) {
      EXPECT_EQ(std::string(e.what()), validate_error);
    }
  };
  codecs::szip_params p;
  p.bits_per_sample = 0;
  refused(p);
  p.bits_per_sample = 33;
  refused(p);
  p = {};
  p.block_size = 12;
  refused(p);
  p.block_size = 0;
  refused(p);
  p = {};
  p.block_size = 7;
  p.flags |= k_not_enforce;
  refused(p);
  p = {};
  p.rsi = 0;
  refused(p);
  p.rsi = 4097;
  refused(p);
  p = {};
  p.bits_per_sample = 5;
  p.flags |= k_restricted;
  refused(p);
  // A length that is not a multiple of the sample width.
  p = {};
  p.bits_per_sample = 16;
  EXPECT_THROW((void)codecs::szip_encode(std::span(data).first(63), p), tensogram::encoding_error);
  // An empty input codes to nothing.
  const codecs::szip_encoded empty = codecs::szip_encode({}, codecs::szip_params{});
  EXPECT_TRUE(empty.payload.empty());
  EXPECT_TRUE(empty.block_offsets.empty());
}

}  // namespace
