// Our own CCSDS 121.0-B-3 decoder (src/codecs/szip_decoder.hpp, the szip
// decoder of builds without libaec, spec 03 §7) against libaec: streams
// written by aec_buffer_encode over bits per sample, block sizes, RSIs and
// flags, of random, smooth, constant (zero blocks, runs past 64 blocks: the
// ROS) and extreme data, must decode byte for byte as aec_buffer_decode
// decodes them, whole, piecewise and from an RSI start. Truncated and
// bit-flipped streams end in a tensogram error or some output, never a crash
// or an out-of-bounds write (run under the sanitizers too).
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "src/codecs/szip_decoder.hpp"
#include "szip_test_support.hpp"
#include "tensogram/codecs/szip.hpp"
#include "tensogram/core/error.hpp"

namespace {

using namespace szip_test;  // NOLINT(google-build-using-namespace): a test file's own helpers

// `n` samples of p.bits_per_sample bits in their containers (n-bit two's
// complement with AEC_DATA_SIGNED).
bytes make_data(const codecs::szip_params& p, std::size_t n, kind k, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  const unsigned bits = p.bits_per_sample;
  const bool is_signed = (p.flags & codecs::szip_flags::data_signed) != 0;
  const bool msb = (p.flags & codecs::szip_flags::data_msb) != 0;
  const std::size_t w = codecs::szip_sample_bytes(p);
  const std::int64_t lo = is_signed ? -(std::int64_t{1} << (bits - 1)) : 0;
  const std::int64_t hi = is_signed ? (std::int64_t{1} << (bits - 1)) - 1 : (std::int64_t{1} << bits) - 1;
  const auto span = static_cast<std::uint64_t>(hi - lo) + 1;
  bytes out(n * w);
  std::int64_t x = lo + static_cast<std::int64_t>(span / 2);
  for (std::size_t i = 0; i < n; ++i) {
    switch (k) {
      case kind::random: x = lo + static_cast<std::int64_t>(rng() % span); break;
      case kind::smooth: {
        const std::int64_t step = static_cast<std::int64_t>(rng() % 7) - 3;
        x = std::clamp(x + step, lo, hi);
        break;
      }
      case kind::constant: x = is_signed ? 0 : lo; break;
      case kind::sparse:  // long zero stretches, then a few values
        x = (i / 1500) % 2 == 0 ? 0 : lo + static_cast<std::int64_t>(rng() % span);
        if (is_signed && (i / 1500) % 2 == 0) x = 0;
        break;
      case kind::extreme: x = (rng() % 3 == 0) ? lo : (rng() % 2 == 0 ? hi : lo + 1); break;
    }
    auto u = static_cast<std::uint64_t>(x);
    // libaec 1.0.6's encoder takes signed samples as n-bit two's complement
    // (upper container bits zero; sign-extended ones make it write a stream
    // that decodes to other values). Its decoder sign-extends them.
    if (bits < 64) u &= (std::uint64_t{1} << bits) - 1;
    for (std::size_t b = 0; b < w; ++b) {
      const std::size_t shift = 8 * (msb ? w - 1 - b : b);
      out[i * w + b] = static_cast<std::byte>((u >> shift) & 0xFF);
    }
  }
  return out;
}

// libaec's decode; std::nullopt when it fails or decodes fewer bytes.
std::optional<bytes> try_libaec_decode(const bytes& in, const codecs::szip_params& p, std::size_t expected) {
  aec_stream s = stream_of(p);
  bytes out(expected);
  s.next_in = reinterpret_cast<const unsigned char*>(in.data());
  s.avail_in = in.size();
  s.next_out = reinterpret_cast<unsigned char*>(out.data());
  s.avail_out = out.size();
  if (aec_buffer_decode(&s) != AEC_OK || s.total_out != expected) return std::nullopt;
  return out;
}

bytes libaec_decode(const bytes& in, const codecs::szip_params& p, std::size_t expected) {
  std::optional<bytes> out = try_libaec_decode(in, p, expected);
  EXPECT_TRUE(out.has_value());
  return out.value_or(bytes(expected));
}

bytes ours(const bytes& payload, const codecs::szip_params& p, std::size_t expected) {
  bytes out(expected);
  codecs::szip_decode_into(payload, p, out);
  return out;
}

// The stream of `coded` (written without AEC_PAD_RSI) with every RSI padded
// with zero bits to a byte boundary: what AEC_PAD_RSI means (libaec's
// documentation). libaec 1.0.6's encoder ignores the flag (its streams are
// those without it) while its decoder skips to a byte boundary after each
// RSI, so it cannot decode most of its own AEC_PAD_RSI streams: those are
// checked against this construction instead.
bytes pad_rsis(const bytes& coded, const codecs::szip_params& p, std::size_t n) {
  codecs::szip_params plain = p;
  plain.flags &= ~k_pad;
  const std::uint64_t per_rsi = static_cast<std::uint64_t>(p.rsi) * p.block_size;
  const auto count = static_cast<std::size_t>((n + per_rsi - 1) / per_rsi);
  std::vector<std::uint64_t> starts = codecs::szip_rsi_offsets(coded, plain, n, count);
  starts.push_back(8 * static_cast<std::uint64_t>(coded.size()));
  bytes out;
  std::uint64_t bit = 0;
  const auto get = [&](std::uint64_t i) { return (static_cast<unsigned>(coded[i / 8]) >> (7 - i % 8)) & 1U; };
  for (std::size_t j = 0; j < count; ++j) {
    for (std::uint64_t i = starts[j]; i < starts[j + 1]; ++i, ++bit) {
      if (bit % 8 == 0) out.push_back(std::byte{0});
      out.back() |= static_cast<std::byte>(get(i) << (7 - bit % 8));
    }
    bit = (bit + 7) / 8 * 8;
  }
  return out;
}

// Encodes with libaec, decodes with both, compares; returns whether equal.
// `both_failed` counts streams neither decoder decodes (libaec 1.0.6 writes
// some it cannot read back).
bool check_one(const codecs::szip_params& p, std::size_t n, kind k, std::uint64_t seed,
               int* both_failed = nullptr) {
  const bytes data = make_data(p, n, k, seed);
  if ((p.flags & k_pad) != 0) {
    codecs::szip_params plain = p;
    plain.flags &= ~k_pad;
    const bytes coded = libaec_encode(data, plain);
    const bytes want = libaec_decode(coded, plain, data.size());
    const bytes padded = pad_rsis(coded, p, n);
    try {
      if (ours(padded, p, data.size()) == want) return true;
    } catch (const std::exception& e) {
      ADD_FAILURE() << describe(p, n, k) << ": " << e.what();
      return false;
    }
    ADD_FAILURE() << describe(p, n, k) << ": decoded bytes of the padded stream differ";
    return false;
  }
  const bytes coded = libaec_encode(data, p);
  const std::optional<bytes> want = try_libaec_decode(coded, p, data.size());
  bytes got;
  try {
    got = ours(coded, p, data.size());
  } catch (const std::exception& e) {
    if (!want) {
      if (both_failed != nullptr) ++*both_failed;
      return true;
    }
    ADD_FAILURE() << describe(p, n, k) << ": " << e.what();
    return false;
  }
  if (!want) {
    ADD_FAILURE() << describe(p, n, k) << ": libaec fails, we decode "
                  << (got == data ? "the input" : "other bytes");
    return false;
  }
  if (got != *want) {
    const auto at =
        static_cast<std::size_t>(std::mismatch(got.begin(), got.end(), want->begin()).first - got.begin());
    ADD_FAILURE() << describe(p, n, k) << ": decoded bytes differ from libaec's at byte " << at << ": "
                  << static_cast<int>(got[at]) << " vs " << static_cast<int>((*want)[at]) << ", input "
                  << static_cast<int>(data[at]);
    return false;
  }
  return true;
}

// The sample count of a case: one and a half RSIs and an odd tail (a last,
// partial RSI and block), at most ~24 Ki samples.
std::size_t samples_for(const codecs::szip_params& p) {
  const std::size_t per_rsi = static_cast<std::size_t>(p.rsi) * p.block_size;
  return std::min<std::size_t>(per_rsi + per_rsi / 2 + 3, 24000 + p.block_size / 2 + 1);
}

TEST(SzipDecoder, MatchesLibaecOverBitsBlocksRsisAndFlags) {
  const std::uint32_t bits[] = {1, 2, 3, 4, 5, 7, 8, 9, 12, 15, 16, 17, 20, 24, 25, 31, 32};
  const std::uint32_t blocks[] = {8, 16, 32, 64};
  const std::uint32_t rsis[] = {1, 3, 64, 129};
  int cases = 0;
  int failures = 0;
  int both_failed = 0;
  std::uint64_t seed = 1;
  for (const std::uint32_t b : bits) {
    for (const std::uint32_t j : blocks) {
      for (const std::uint32_t r : rsis) {
        for (std::uint32_t f = 0; f < 16; ++f) {
          codecs::szip_params p;
          p.bits_per_sample = b;
          p.block_size = j;
          p.rsi = r;
          p.flags = ((f & 1) != 0 ? k_dp : 0) | ((f & 2) != 0 ? k_signed : 0) | ((f & 4) != 0 ? k_msb : 0) |
                    ((f & 8) != 0 ? k_pad : 0);
          if (b > 16 && b <= 24 && (seed % 2) == 0) p.flags |= k_3byte;
          if (b <= 4 && (seed % 3) == 0) p.flags |= k_restricted;
          for (const kind k : k_kinds) {
            ++cases;
            if (!check_one(p, samples_for(p), k, seed++, &both_failed)) ++failures;
            if (failures > 20) FAIL() << "too many failures";
          }
        }
      }
    }
  }
  EXPECT_EQ(failures, 0);
  EXPECT_GT(cases, 20000);
  EXPECT_EQ(both_failed, 0);
}

// Both container widths of 17..24 bits, and AEC_RESTRICTED at 1..4 bits, on
// every combination of the other flags.
TEST(SzipDecoder, MatchesLibaecWith3ByteAndRestricted) {
  int failures = 0;
  std::uint64_t seed = 1000;
  for (std::uint32_t b = 1; b <= 24; ++b) {
    if (b > 4 && b < 17) continue;
    for (std::uint32_t f = 0; f < 16; ++f) {
      codecs::szip_params p;
      p.bits_per_sample = b;
      p.block_size = (f % 2 == 0) ? 16 : 32;
      p.rsi = 17;
      p.flags = (b > 4 ? k_3byte : k_restricted) | ((f & 1) != 0 ? k_dp : 0) | ((f & 2) != 0 ? k_signed : 0) |
                ((f & 4) != 0 ? k_msb : 0) | ((f & 8) != 0 ? k_pad : 0);
      for (const kind k : k_kinds) {
        if (!check_one(p, samples_for(p), k, seed++)) ++failures;
      }
    }
  }
  EXPECT_EQ(failures, 0);
}

// AEC_NOT_ENFORCE: even block sizes other than 8/16/32/64.
TEST(SzipDecoder, MatchesLibaecWithUnenforcedBlockSizes) {
  int failures = 0;
  int cases = 0;
  int both_failed = 0;
  std::uint64_t seed = 5000;
  for (const std::uint32_t j : {2U, 4U, 10U, 24U, 128U}) {
    for (const std::uint32_t b : {4U, 8U, 16U, 24U}) {
      for (const std::uint32_t flags : {k_dp, 0U, k_dp | k_signed | k_msb}) {
        codecs::szip_params p;
        p.bits_per_sample = b;
        p.block_size = j;
        p.rsi = 9;
        p.flags = flags | codecs::szip_flags::not_enforce;
        for (const kind k : k_kinds) {
          ++cases;
          if (!check_one(p, samples_for(p), k, seed++, &both_failed)) ++failures;
        }
      }
    }
  }
  EXPECT_EQ(failures, 0);
  EXPECT_LT(both_failed, cases / 10) << "of " << cases;
}

// Long zero runs: RSIs of up to 4096 blocks of zeros (many 64-block
// segments, ROS runs), then data, then zeros to the end of the stream.
TEST(SzipDecoder, MatchesLibaecOnLongZeroRuns) {
  for (const std::uint32_t r : {64U, 65U, 200U, 4096U}) {
    for (const std::uint32_t flags : {k_dp, 0U, k_dp | k_signed, k_dp | k_pad}) {
      codecs::szip_params p;
      p.bits_per_sample = 16;
      p.block_size = 8;
      p.rsi = r;
      p.flags = flags | k_msb;
      const std::size_t n = static_cast<std::size_t>(r) * 8 * 2 + 8 * 70 + 5;
      bytes data(n * 2, std::byte{0});
      std::mt19937_64 rng(r + flags);
      for (std::size_t i = n / 2; i < n / 2 + 300; ++i)
        data[2 * i + 1] = static_cast<std::byte>(rng() & 0xFF);
      codecs::szip_params plain = p;
      plain.flags &= ~k_pad;
      const bytes coded = libaec_encode(data, plain);
      const bytes stream = (flags & k_pad) != 0 ? pad_rsis(coded, p, n) : coded;
      EXPECT_EQ(ours(stream, p, data.size()), libaec_decode(coded, plain, data.size())) << r << " " << flags;
    }
  }
}

// Piecewise output (odd piece sizes across RSIs and the pending buffer) and
// decoding from an RSI start found by the CDS walk (range decode, §7.5).
TEST(SzipDecoder, PiecewiseAndFromRsiStarts) {
  codecs::szip_params p;
  p.bits_per_sample = 24;
  p.block_size = 16;
  p.rsi = 5;
  p.flags = k_dp | k_msb | k_3byte;
  const std::size_t n = 16 * 5 * 9 + 7;
  for (const kind k : k_kinds) {
    const bytes data = make_data(p, n, k, 77);
    const bytes coded = libaec_encode(data, p);
    const bytes want = libaec_decode(coded, p, data.size());
    for (const std::size_t piece : {std::size_t{3}, std::size_t{240}, std::size_t{241}, std::size_t{1000}}) {
      codecs::szip_stream_decoder dec(coded, p, data.size());
      bytes got(data.size());
      for (std::size_t at = 0; at < got.size(); at += piece) {
        dec.next(std::span(got).subspan(at, std::min(piece, got.size() - at)));
      }
      EXPECT_EQ(got, want) << name_of(k) << " piece " << piece;
      EXPECT_THROW(dec.next(std::span(got).first(3)), tensogram::error);
    }
    const std::size_t rsi_bytes = 16 * 5 * 3;
    const std::vector<std::uint64_t> offsets = codecs::szip_rsi_offsets(coded, p, n, 10);
    for (std::size_t j = 0; j < offsets.size(); ++j) {
      const std::size_t rest = data.size() - j * rsi_bytes;
      codecs::szip_stream_decoder dec(coded, p, rest, offsets[j]);
      bytes got(rest);
      dec.next(got);
      EXPECT_TRUE(
          std::equal(got.begin(), got.end(), want.begin() + static_cast<std::ptrdiff_t>(j * rsi_bytes)))
          << name_of(k) << " RSI " << j;
    }
  }
}

// A stream that ends early, or a request past the stream's samples, is an
// error; so are bad parameters.
TEST(SzipDecoder, RefusesShortStreamsAndBadParameters) {
  codecs::szip_params p;
  p.bits_per_sample = 12;
  p.block_size = 16;
  p.rsi = 8;
  p.flags = k_dp;
  const bytes data = make_data(p, 1000, kind::random, 5);
  const bytes coded = libaec_encode(data, p);
  bytes out(data.size() + 2 * 16 * 8 * 2);  // two RSIs more than coded
  EXPECT_THROW(codecs::szip_decode_into(coded, p, out), tensogram::error);
  bytes odd(3);
  EXPECT_THROW(codecs::szip_decode_into(coded, p, odd), tensogram::error);
  codecs::szip_params bad = p;
  bad.bits_per_sample = 33;
  EXPECT_THROW(codecs::szip_decode_into(coded, bad, out), tensogram::error);
  bad = p;
  bad.block_size = 12;
  EXPECT_THROW(codecs::szip_decode_into(coded, bad, out), tensogram::error);
  bad.flags |= codecs::szip_flags::not_enforce;
  bad.block_size = 1U << 30;  // even, admitted by AEC_NOT_ENFORCE: refused, not allocated
  EXPECT_THROW(codecs::szip_decode_into(coded, bad, out), tensogram::error);
}

// Every truncation of a small stream, and random bit flips: a tensogram
// error or some output; nothing else thrown, nothing written out of bounds.
TEST(SzipDecoder, TruncatedAndCorruptStreams) {
  int errors = 0;
  int outputs = 0;
  for (const std::uint32_t flags : {k_dp, 0U, k_dp | k_signed | k_msb, k_dp | k_pad}) {
    for (const std::uint32_t b : {3U, 8U, 13U, 32U}) {
      codecs::szip_params p;
      p.bits_per_sample = b;
      p.block_size = 16;
      p.rsi = 4;
      p.flags = flags | (b <= 4 ? k_restricted : 0U);
      const std::size_t n = 16 * 4 * 3 + 9;
      for (const kind k : k_kinds) {
        const bytes data = make_data(p, n, k, b * 31 + flags);
        const bytes coded = libaec_encode(data, p);
        for (std::size_t len = 0; len < coded.size(); ++len) {
          const bytes cut(coded.begin(), coded.begin() + static_cast<std::ptrdiff_t>(len));
          try {
            (void)ours(cut, p, data.size());
            ++outputs;  // only the trailing padding was cut
          } catch (const tensogram::error&) {
            ++errors;
          }
        }
        std::mt19937_64 rng(b + flags * 7);
        for (int trial = 0; trial < 200; ++trial) {
          bytes bad = coded;
          const int flips = 1 + static_cast<int>(rng() % 4);
          for (int f = 0; f < flips; ++f) {
            const std::size_t at = rng() % bad.size();
            bad[at] ^= static_cast<std::byte>(1U << (rng() % 8));
          }
          try {
            (void)ours(bad, p, data.size());
            ++outputs;
          } catch (const tensogram::error&) {
            ++errors;
          }
        }
      }
    }
  }
  EXPECT_GT(errors, 1000);
  EXPECT_GT(outputs, 100);
}

}  // namespace
