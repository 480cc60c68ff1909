// Our zfp codec (spec 03 §8.6, src/codecs/zfp/) against Debian's libzfp
// 1.0.0, the peer it must equal bit for bit:
//  * the stream parameters and maximum size of every mode are libzfp's
//    (zfp_stream_params, zfp_stream_maximum_size rounded to 64-bit words);
//  * streams are libzfp's bytes zero-padded to whole 8-byte words, over
//    seeded inputs of every length 0..70 and a few large ones, smooth, noisy,
//    huge, tiny, subnormal, zero, random-bit and non-finite values, in every
//    mode with several parameters;
//  * libzfp's streams decode to libzfp's values bit for bit;
//  * range decode equals the slice of a full decode, and in fixed-rate mode
//    reads only the blocks holding the range.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <zfp.h>

#include "codec_support.hpp"
#include "tensogram/codecs/zfp.hpp"
#include "tensogram/core/error.hpp"

namespace {

namespace tc = tensogram::codecs;
using bytes = std::vector<std::byte>;

// ---- libzfp, the peer -------------------------------------------------------

struct zfp_stream_closer {
  void operator()(zfp_stream* s) const noexcept { zfp_stream_close(s); }
};
struct zfp_field_freer {
  void operator()(zfp_field* f) const noexcept { zfp_field_free(f); }
};
struct bitstream_closer {
  void operator()(bitstream* b) const noexcept { stream_close(b); }
};
using stream_ptr = std::unique_ptr<zfp_stream, zfp_stream_closer>;
using field_ptr = std::unique_ptr<zfp_field, zfp_field_freer>;
using bits_ptr = std::unique_ptr<bitstream, bitstream_closer>;

stream_ptr libzfp_stream(const tc::zfp_params& p) {
  stream_ptr zs(zfp_stream_open(nullptr));
  switch (p.mode) {
    case tc::zfp_mode::fixed_rate: zfp_stream_set_rate(zs.get(), p.rate, zfp_type_double, 1, 0); break;
    case tc::zfp_mode::fixed_precision: zfp_stream_set_precision(zs.get(), p.precision); break;
    case tc::zfp_mode::fixed_accuracy: zfp_stream_set_accuracy(zs.get(), p.tolerance); break;
  }
  zfp_stream_set_execution(zs.get(), zfp_exec_serial);
  return zs;
}

std::uint64_t round_up8(std::uint64_t n) {
  return (n + 7) / 8 * 8;
}

// libzfp's stream (8-bit words) padded to whole 64-bit words.
bytes libzfp_compress(std::vector<double> values, const tc::zfp_params& p) {
  if (values.empty()) return {};
  stream_ptr zs = libzfp_stream(p);
  field_ptr f(zfp_field_1d(values.data(), zfp_type_double, values.size()));
  bytes out(round_up8(zfp_stream_maximum_size(zs.get(), f.get())) + 8);
  bits_ptr bs(stream_open(out.data(), out.size()));
  zfp_stream_set_bit_stream(zs.get(), bs.get());
  zfp_stream_rewind(zs.get());
  const std::size_t written = zfp_compress(zs.get(), f.get());
  out.resize(round_up8(written));
  return out;
}

std::vector<double> libzfp_decompress(const bytes& payload, std::size_t n, const tc::zfp_params& p) {
  stream_ptr zs = libzfp_stream(p);
  std::vector<double> out(n);
  field_ptr f(zfp_field_1d(out.data(), zfp_type_double, n));
  // Zero bits past the payload, enough for any stream (arbitrary bits can
  // cost up to 460 bits per block, more than the maximum size allows).
  bytes padded(std::max<std::size_t>(payload.size(), round_up8(zfp_stream_maximum_size(zs.get(), f.get()))) *
                   2 +
               64 * ((n + 3) / 4) + 64);
  std::memcpy(padded.data(), payload.data(), payload.size());
  bits_ptr bs(stream_open(padded.data(), padded.size()));
  zfp_stream_set_bit_stream(zs.get(), bs.get());
  zfp_stream_rewind(zs.get());
  EXPECT_NE(zfp_decompress(zs.get(), f.get()), 0U);
  return out;
}

// ---- inputs -------------------------------------------------------------------

enum class kind { smooth, noisy, huge, tiny, subnormal, zero, random_bits, mixed_scale, non_finite };
constexpr kind k_kinds[] = {kind::smooth,      kind::noisy,       kind::huge,
                            kind::tiny,        kind::subnormal,   kind::zero,
                            kind::random_bits, kind::mixed_scale, kind::non_finite};

std::string kind_name(kind k) {
  switch (k) {
    case kind::smooth: return "smooth";
    case kind::noisy: return "noisy";
    case kind::huge: return "huge";
    case kind::tiny: return "tiny";
    case kind::subnormal: return "subnormal";
    case kind::zero: return "zero";
    case kind::random_bits: return "random_bits";
    case kind::mixed_scale: return "mixed_scale";
    case kind::non_finite: return "non_finite";
  }
  return "?";
}

std::vector<double> make_values(kind k, std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  std::vector<double> v(n);
  const double phase = unit(rng);
  for (std::size_t i = 0; i < n; ++i) {
    const double t = static_cast<double>(i);
    switch (k) {
      case kind::smooth: v[i] = 280.0 + 15.0 * std::sin(0.013 * t + phase) + 0.01 * t; break;
      case kind::noisy: v[i] = unit(rng) * 1000.0; break;
      case kind::huge: v[i] = unit(rng) * 1.5e308; break;
      case kind::tiny: v[i] = unit(rng) * 1e-300; break;
      case kind::subnormal:
        v[i] = std::bit_cast<double>((rng() & 0x000fffffffffffffULL) | (rng() & 0x8000000000000000ULL));
        break;
      case kind::zero: v[i] = (rng() & 1) != 0 ? 0.0 : -0.0; break;
      case kind::random_bits: {
        double d = std::bit_cast<double>(rng());
        v[i] = std::isfinite(d) ? d : 1.0;
        break;
      }
      case kind::mixed_scale: v[i] = std::ldexp(unit(rng), static_cast<int>(rng() % 200) - 100); break;
      case kind::non_finite: {
        const std::uint64_t r = rng() % 8;
        v[i] = r == 0   ? std::numeric_limits<double>::quiet_NaN()
               : r == 1 ? std::numeric_limits<double>::infinity()
               : r == 2 ? -std::numeric_limits<double>::infinity()
                        : unit(rng) * 100.0;
        break;
      }
    }
  }
  return v;
}

bytes as_bytes(const std::vector<double>& v) {
  bytes b(v.size() * 8);
  if (!v.empty()) std::memcpy(b.data(), v.data(), b.size());
  return b;
}

std::vector<tc::zfp_params> all_modes() {
  std::vector<tc::zfp_params> modes;
  for (double rate : {1.0, 1.5, 3.2, 8.0, 16.0, 24.0, 32.0, 64.0, 100.0}) {
    modes.push_back({.mode = tc::zfp_mode::fixed_rate, .rate = rate});
  }
  for (std::uint32_t prec : {0U, 1U, 8U, 32U, 64U, 80U}) {
    modes.push_back({.mode = tc::zfp_mode::fixed_precision, .precision = prec});
  }
  for (double tol : {1e-12, 1e-6, 1e-3, 0.75, 1.0, 1e3, 1e-310}) {
    modes.push_back({.mode = tc::zfp_mode::fixed_accuracy, .tolerance = tol});
  }
  return modes;
}

std::string mode_name(const tc::zfp_params& p) {
  switch (p.mode) {
    case tc::zfp_mode::fixed_rate: return "rate " + std::to_string(p.rate);
    case tc::zfp_mode::fixed_precision: return "precision " + std::to_string(p.precision);
    case tc::zfp_mode::fixed_accuracy: return "tolerance " + std::to_string(p.tolerance);
  }
  return "?";
}

// One input in one mode: our stream is libzfp's padded one, and both
// decoders give libzfp's values bit for bit.
void check_identical(const std::vector<double>& values, const tc::zfp_params& p) {
  const bytes ours = tc::zfp_compress(as_bytes(values), p);
  const bytes peer = libzfp_compress(values, p);
  ASSERT_EQ(ours, peer);
  if (values.empty()) return;
  const std::vector<double> expected = libzfp_decompress(peer, values.size(), p);
  const bytes decoded = tc::zfp_decompress(peer, values.size(), p);
  ASSERT_EQ(decoded.size(), values.size() * 8);
  ASSERT_EQ(std::memcmp(decoded.data(), expected.data(), decoded.size()), 0);
}

// ---- tests ----------------------------------------------------------------------

TEST(Zfp, StreamParametersAreLibzfps) {
  std::vector<tc::zfp_params> modes = all_modes();
  for (double rate : {0.0, 0.1, 2.9, 2.875, 3.125, 7.874, 1000.0}) {
    modes.push_back({.mode = tc::zfp_mode::fixed_rate, .rate = rate});
  }
  for (double tol : {std::numeric_limits<double>::infinity(), 5e-324, 0.5, 1.9999, 2.0}) {
    modes.push_back({.mode = tc::zfp_mode::fixed_accuracy, .tolerance = tol});
  }
  for (const tc::zfp_params& p : modes) {
    SCOPED_TRACE(mode_name(p));
    stream_ptr zs = libzfp_stream(p);
    unsigned minbits = 0, maxbits = 0, maxprec = 0;
    int minexp = 0;
    zfp_stream_params(zs.get(), &minbits, &maxbits, &maxprec, &minexp);
    const tc::zfp_stream_limits ours = tc::zfp_stream_parameters(p);
    EXPECT_EQ(ours.minbits, minbits);
    EXPECT_EQ(ours.maxbits, maxbits);
    EXPECT_EQ(ours.maxprec, maxprec);
    EXPECT_EQ(ours.minexp, minexp);
    for (std::size_t n : {std::size_t{1}, std::size_t{3}, std::size_t{4}, std::size_t{5}, std::size_t{1000},
                          std::size_t{123457}, std::size_t{1} << 30}) {
      double scratch = 0.0;
      field_ptr f(zfp_field_1d(&scratch, zfp_type_double, n));
      EXPECT_EQ(tc::zfp_maximum_size(n, p), round_up8(zfp_stream_maximum_size(zs.get(), f.get()))) << n;
    }
  }
}

TEST(Zfp, ToleranceThatLibzfpRefusesIsAnError) {
  for (double tol : {0.0, -1.0, std::numeric_limits<double>::quiet_NaN()}) {
    stream_ptr zs(zfp_stream_open(nullptr));
    EXPECT_EQ(zfp_stream_set_accuracy(zs.get(), tol), 0.0);
    const tc::zfp_params p{.mode = tc::zfp_mode::fixed_accuracy, .tolerance = tol};
    EXPECT_THROW(static_cast<void>(tc::zfp_compress(as_bytes({1.0, 2.0}), p)), tensogram::encoding_error);
  }
}

TEST(Zfp, FixedRatesAboveLibzfpsBlockBoundAreRefused) {
  // Up to ZFP_MAX_BITS per block the stream is libzfp's (rate 4164.5 gives
  // exactly 16658 bits per block)...
  const std::vector<double> values = make_values(kind::smooth, 9, 3);
  const tc::zfp_params top{.mode = tc::zfp_mode::fixed_rate, .rate = tc::zfp_max_rate};
  EXPECT_EQ(tc::zfp_stream_parameters(top).maxbits, 16658U);
  check_identical(values, top);
  // ...beyond it the encoder refuses before allocating: rate 886737121
  // asked for 7 GB for 64 values (a fuzz_cli_pipeline finding).
  const auto expect_refused = [](double rate, const std::string& fragment) {
    SCOPED_TRACE(rate);
    const tc::zfp_params p{.mode = tc::zfp_mode::fixed_rate, .rate = rate};
    try {
      static_cast<void>(tc::zfp_compress(as_bytes(make_values(kind::smooth, 64, 4)), p));
      ADD_FAILURE() << "accepted";
    } catch (const tensogram::encoding_error& e) {
      EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
    }
  };
  expect_refused(4164.51, "rate 4164.51 out of range: at most 4164.5 bits per value (16658 bits per block");
  expect_refused(886737121.0, "rate 886737121 out of range: at most 4164.5 bits per value");
  // Rates whose block size does not fit 32 bits were refused before.
  expect_refused(1e300, "rate 1e+300 out of range");
  expect_refused(std::numeric_limits<double>::infinity(), "rate inf out of range");
  // Streams libzfp writes with larger blocks still decode as libzfp decodes
  // them, whole and by range.
  const tc::zfp_params big{.mode = tc::zfp_mode::fixed_rate, .rate = 5000.0};
  const bytes peer = libzfp_compress(values, big);
  const std::vector<double> expected = libzfp_decompress(peer, values.size(), big);
  const bytes decoded = tc::zfp_decompress(peer, values.size(), big);
  ASSERT_EQ(decoded.size(), values.size() * 8);
  EXPECT_EQ(std::memcmp(decoded.data(), expected.data(), decoded.size()), 0);
  bytes slice(3 * 8);
  tc::zfp_decompress_range_into(peer, values.size(), big, 5, 3, slice);
  EXPECT_EQ(std::memcmp(slice.data(), expected.data() + 5, slice.size()), 0);
}

TEST(Zfp, EveryShortLengthKindAndModeIsLibzfpBitForBit) {
  std::uint64_t seed = 1;
  for (const tc::zfp_params& p : all_modes()) {
    for (kind k : k_kinds) {
      for (std::size_t n = 0; n <= 70; ++n) {
        SCOPED_TRACE(mode_name(p) + ", " + kind_name(k) + ", n = " + std::to_string(n));
        check_identical(make_values(k, n, ++seed), p);
        if (HasFatalFailure()) return;
      }
    }
  }
}

TEST(Zfp, LargeInputsAreLibzfpBitForBit) {
  std::uint64_t seed = 1000;
  for (const tc::zfp_params& p : all_modes()) {
    for (kind k : k_kinds) {
      for (std::size_t n : {std::size_t{1001}, std::size_t{65538}}) {
        SCOPED_TRACE(mode_name(p) + ", " + kind_name(k) + ", n = " + std::to_string(n));
        check_identical(make_values(k, n, ++seed), p);
        if (HasFatalFailure()) return;
      }
    }
  }
}

TEST(Zfp, BlocksMixingMagnitudesAndSpecialsAreLibzfpBitForBit) {
  // Each block of four draws every value from a different kind, so single
  // blocks hold zeros next to huge values, NaN next to subnormals, etc.
  std::mt19937_64 rng(77);
  for (const tc::zfp_params& p : all_modes()) {
    std::vector<double> v(4099);
    for (double& x : v) {
      x = make_values(k_kinds[rng() % std::size(k_kinds)], 1, rng())[0];
    }
    SCOPED_TRACE(mode_name(p));
    check_identical(v, p);
    if (HasFatalFailure()) return;
  }
}

TEST(Zfp, DecodesLibzfpStreamsOfArbitraryBits) {
  // Random payloads of the maximum size decode as libzfp decodes them.
  std::mt19937_64 rng(5);
  for (const tc::zfp_params& p : all_modes()) {
    for (std::size_t n : {std::size_t{1}, std::size_t{7}, std::size_t{64}, std::size_t{333}}) {
      SCOPED_TRACE(mode_name(p) + ", n = " + std::to_string(n));
      bytes payload(tc::zfp_maximum_size(n, p));
      for (std::byte& b : payload) b = static_cast<std::byte>(rng());
      const std::vector<double> expected = libzfp_decompress(payload, n, p);
      const bytes decoded = tc::zfp_decompress(payload, n, p);
      ASSERT_EQ(std::memcmp(decoded.data(), expected.data(), decoded.size()), 0);
    }
  }
}

TEST(Zfp, RangeEqualsTheSliceOfAFullDecode) {
  const std::vector<double> v = make_values(kind::smooth, 1003, 9);
  for (const tc::zfp_params& p : all_modes()) {
    SCOPED_TRACE(mode_name(p));
    const bytes z = tc::zfp_compress(as_bytes(v), p);
    const bytes all = tc::zfp_decompress(z, v.size(), p);
    for (auto [first, count] : {std::pair<std::uint64_t, std::uint64_t>{0, 0},
                                {0, 1},
                                {1, 2},
                                {3, 1},
                                {3, 2},
                                {5, 11},
                                {500, 4},
                                {998, 5},
                                {1002, 1},
                                {0, 1003}}) {
      bytes out(count * 8);
      tc::zfp_decompress_range_into(z, v.size(), p, first, count, out);
      EXPECT_TRUE(std::equal(out.begin(), out.end(), all.begin() + static_cast<std::ptrdiff_t>(first * 8)))
          << first << "+" << count;
    }
    bytes one(8);
    EXPECT_THROW(tc::zfp_decompress_range_into(z, v.size(), p, 1003, 1, one), tensogram::encoding_error);
  }
}

TEST(Zfp, FixedRateRangeReadsOnlyItsBlocks) {
  // Every block of a fixed-rate stream but those holding values 4000..4009
  // is overwritten with random bits: the full decode changes, the range
  // does not — it never reads the other blocks.
  const std::size_t n = 1 << 16;
  const std::vector<double> v = make_values(kind::smooth, n, 21);
  std::mt19937_64 rng(3);
  // (Rate 3 and below keep only block exponents, which decode to zeros
  // whatever they say: garbage would not show in the full decode.)
  for (double rate : {4.0, 7.5, 16.0, 24.0, 32.0}) {
    const tc::zfp_params p{.mode = tc::zfp_mode::fixed_rate, .rate = rate};
    SCOPED_TRACE(rate);
    const bytes z = tc::zfp_compress(as_bytes(v), p);
    const bytes clean = tc::zfp_decompress(z, n, p);
    const std::uint64_t maxbits = tc::zfp_stream_parameters(p).maxbits;
    const std::uint64_t keep_from = 1000 * maxbits;  // block 1000 = values 4000..4003
    const std::uint64_t keep_to = 1003 * maxbits;    // blocks 1000..1002
    bytes garbled = z;
    for (std::uint64_t bit = 0; bit < garbled.size() * 8; ++bit) {
      if (bit >= keep_from && bit < keep_to) continue;
      const auto mask = static_cast<std::byte>(1U << (bit % 8));
      garbled[bit / 8] = (rng() & 1) != 0 ? (garbled[bit / 8] | mask) : (garbled[bit / 8] & ~mask);
    }
    EXPECT_TRUE(tc::zfp_decompress(garbled, n, p) != clean);
    bytes out(10 * 8);
    tc::zfp_decompress_range_into(garbled, n, p, 4000, 10, out);
    EXPECT_TRUE(std::equal(out.begin(), out.end(), clean.begin() + 4000 * 8));
  }
}

TEST(Zfp, MessageRangeDecodeSeeksInFixedRateStreams) {
  // The same proof through decode_range on a message: the bytes of the
  // stream outside blocks 1000..1002 (rate 16: 8 bytes a block) are
  // garbage, yet values 4000..4009 decode as before, in both byte orders.
  const std::size_t n = 1 << 15;
  const std::vector<double> v = make_values(kind::smooth, n, 8);
  for (tensogram::byte_order order : {tensogram::byte_order::little, tensogram::byte_order::big}) {
    tensogram::data_object_descriptor d = codectest::f64_desc(n, order);
    d.compression = "zfp";
    d.params.set("zfp_mode", tensogram::cbor::value("fixed_rate"));
    d.params.set("zfp_rate", tensogram::cbor::value(16.0));
    const bytes raw = codectest::f64_bytes(v, order);
    bytes msg = codectest::encode_one(d, raw);
    const std::vector<std::pair<std::uint64_t, std::uint64_t>> range{{4000, 10}};
    const auto clean = tensogram::decode_range(tensogram::buffer::borrowed(msg), 0, range);
    const tensogram::message full = codectest::decode_msg(msg);
    const bytes all = codectest::to_bytes(full.object(0).data_buffer());
    ASSERT_EQ(codectest::to_bytes(clean.at(0)), bytes(all.begin() + 4000 * 8, all.begin() + 4010 * 8));
    // Find the stream in the message and garble all but its bytes 8000..8023.
    // (The codec reads host-order doubles whatever the declared order.)
    const bytes stream = tc::zfp_compress(as_bytes(v), {.mode = tc::zfp_mode::fixed_rate, .rate = 16.0});
    const auto at = std::search(msg.begin(), msg.end(), stream.begin(), stream.end());
    ASSERT_NE(at, msg.end());
    std::mt19937_64 rng(4);
    for (std::size_t i = 0; i < stream.size(); ++i) {
      if (i < 8000 || i >= 8024) at[static_cast<std::ptrdiff_t>(i)] = static_cast<std::byte>(rng());
    }
    EXPECT_TRUE(codectest::to_bytes(codectest::decode_msg(msg).object(0).data_buffer()) != all);
    const auto garbled = tensogram::decode_range(tensogram::buffer::borrowed(msg), 0, range);
    EXPECT_EQ(codectest::to_bytes(garbled.at(0)), codectest::to_bytes(clean.at(0)));
  }
}

}  // namespace
