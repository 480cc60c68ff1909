// The sz3 stage end to end (spec 03 §8.7, docs/sz3-format.md): the stream
// envelope and configuration record against hand-worked bytes, the error
// bound of every mode on every kind of data, every dimensionality, the
// message pipeline with NaN masks, and hostile streams.
#include <gtest/gtest.h>

#include <zstd.h>

#include <array>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "../codec_support.hpp"
#include "src/codecs/sz3/stream_config.hpp"
#include "tensogram/codecs/sz3.hpp"

namespace {

namespace tg = tensogram;
namespace cbor = tensogram::cbor;
using tg::codecs::sz3_error_bound_mode;
using tg::codecs::sz3_params;
using bytes = std::vector<std::byte>;

template <class T>
void put(bytes& b, T v) {
  std::array<std::byte, sizeof(T)> raw{};
  std::memcpy(raw.data(), &v, sizeof(T));
  b.insert(b.end(), raw.begin(), raw.end());
}

void put_hex(bytes& b, std::initializer_list<unsigned> v) {
  for (unsigned x : v) b.push_back(static_cast<std::byte>(x));
}

std::vector<double> smooth(std::size_t n) {
  std::vector<double> v(n);
  for (std::size_t i = 0; i < n; ++i) {
    const double t = static_cast<double>(i) / static_cast<double>(n);
    v[i] = 280 + 15 * std::sin(12.0 * t) + 3 * std::cos(97.0 * t);
  }
  return v;
}

std::vector<double> noisy(std::size_t n, unsigned seed = 7) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> g(0, 1);
  std::vector<double> v(n);
  for (auto& x : v) x = g(rng);
  return v;
}

double max_error(const std::vector<double>& a, const std::vector<double>& b) {
  double m = 0;
  for (std::size_t i = 0; i < a.size(); ++i) m = std::max(m, std::fabs(a[i] - b[i]));
  return m;
}

double range_of(const std::vector<double>& v) {
  const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
  return *hi - *lo;
}

std::vector<double> round_trip(const std::vector<double>& v, const sz3_params& p) {
  const std::array<std::size_t, 1> shape{v.size()};
  const bytes stream = tg::codecs::sz3_compress(std::span<const double>(v), shape, p);
  std::vector<double> out(v.size());
  tg::codecs::sz3_decompress(stream, std::span<double>(out));
  return out;
}

// --- hand-worked stream (docs/sz3-format.md §8) ---------------------------

// Three doubles with an absolute bound of 0 take SZ3's lossless mode. The
// stream is, field by field:
//   10 F3 42 F3                 magic 0xF342F310
//   00 02 03 03                 data version 3.3.2
//   C (u64)                     size of the algorithm output
//   u64 24, zstd frame          lossless stage: 24 raw bytes, ZSTD_compress level 3
//   config record (33 bytes):
//     21                        record size 33
//     01                        N = 1
//     02                        bit width of the largest dim (3 = 0b11)
//     03                        dims packed LSB-first: 3 in bits 0-1
//     03 00 .. 00               num = 3
//     04                        cmprAlgo = ALGO_LOSSLESS
//     00, 0.0 (f64)             errorBoundMode = EB_ABS, absErrorBound 0
//     E0                        lorenzo | lorenzo2 | regression
//     01                        dataType = SZ_DOUBLE
//     00 00 01 00               quantbinCnt = 65536
//     80 00 00 00               blockSize = 128
//     01                        predDim = 1
bytes hand_lossless_stream(const std::vector<double>& v) {
  bytes frame(ZSTD_compressBound(v.size() * 8));
  frame.resize(ZSTD_compress(frame.data(), frame.size(), v.data(), v.size() * 8, 3));
  bytes s;
  put_hex(s, {0x10, 0xF3, 0x42, 0xF3, 0x00, 0x02, 0x03, 0x03});
  put<std::uint64_t>(s, 8 + frame.size());
  put<std::uint64_t>(s, v.size() * 8);
  s.insert(s.end(), frame.begin(), frame.end());
  put_hex(s, {0x21, 0x01, 0x02, 0x03});
  put<std::uint64_t>(s, 3);
  put_hex(s, {0x04, 0x00});
  put<double>(s, 0.0);
  put_hex(s, {0xE0, 0x01, 0x00, 0x00, 0x01, 0x00, 0x80, 0x00, 0x00, 0x00, 0x01});
  return s;
}

TEST(Sz3Stream, LosslessModeMatchesTheHandWorkedBytes) {
  const std::vector<double> v{1.5, -2.25, 1e300};
  const std::array<std::size_t, 1> shape{3};
  const bytes ours =
      tg::codecs::sz3_compress(std::span<const double>(v), shape, {sz3_error_bound_mode::abs, 0.0});
  EXPECT_EQ(ours, hand_lossless_stream(v));
}

TEST(Sz3Stream, HandWorkedLosslessStreamDecodesExactly) {
  const std::vector<double> v{1.5, -2.25, 1e300};
  std::vector<double> out(3);
  tg::codecs::sz3_decompress(hand_lossless_stream(v), std::span<double>(out));
  EXPECT_EQ(out, v);
  const auto info = tg::codecs::sz3_inspect(hand_lossless_stream(v));
  EXPECT_EQ(info.algorithm, "lossless");
  EXPECT_EQ(info.num, 3u);
  EXPECT_TRUE(info.float64);
}

// A 2-D record: dims {3, 5} at 3 bits: 3 = 011 in bits 0-2, 5 = 101 in bits
// 3-5, so one byte 0b101011 = 0x2B; rel mode stores relErrorBound.
TEST(Sz3Stream, ConfigurationRecordPacksDimensionsLsbFirst) {
  bytes r;
  put_hex(r, {0x00, 0x02, 0x03, 0x2B});
  put<std::uint64_t>(r, 15);
  put_hex(r, {0x02, 0x01});
  put<double>(r, 1e-4);
  put_hex(r, {0x80, 0x00});
  put<std::int32_t>(r, 1024);
  put<std::int32_t>(r, 16);
  put_hex(r, {0x02});
  r[0] = static_cast<std::byte>(r.size());
  const auto c = tg::codecs::sz3::load_config(r);
  EXPECT_EQ(c.N, 2);
  EXPECT_EQ(c.dims, (std::vector<std::size_t>{3, 5}));
  EXPECT_EQ(c.num, 15u);
  EXPECT_EQ(c.cmprAlgo, tg::codecs::sz3::algorithm::interp);
  EXPECT_EQ(c.errorBoundMode, tg::codecs::sz3::error_bound_mode::rel);
  EXPECT_EQ(c.relErrorBound, 1e-4);
  EXPECT_TRUE(c.lorenzo);
  EXPECT_FALSE(c.lorenzo2);
  EXPECT_EQ(c.dataType, 0);
  EXPECT_EQ(c.quantbinCnt, 1024);
  EXPECT_EQ(c.blockSize, 16);
  EXPECT_EQ(c.predDim, 2);
  // And back: the same bytes.
  bytes again;
  tg::codecs::sz3::byte_writer w(again);
  tg::codecs::sz3::save_config(c, w);
  EXPECT_EQ(again, r);
}

TEST(Sz3Stream, LargeDimensionUsesItsBitWidth) {
  tg::codecs::sz3::stream_config c;
  const std::array<std::size_t, 1> shape{1000};  // 0x3E8: 10 bits, bytes E8 03
  c.set_dims(shape);
  bytes r;
  tg::codecs::sz3::byte_writer w(r);
  tg::codecs::sz3::save_config(c, w);
  EXPECT_EQ(r[2], std::byte{10});
  EXPECT_EQ(r[3], std::byte{0xE8});
  EXPECT_EQ(r[4], std::byte{0x03});
  EXPECT_EQ(tg::codecs::sz3::load_config(r).dims, (std::vector<std::size_t>{1000}));
}

TEST(Sz3Stream, SizeOneDimensionsAreDropped) {
  tg::codecs::sz3::stream_config c;
  const std::array<std::size_t, 4> shape{1, 7, 1, 9};
  c.set_dims(shape);
  EXPECT_EQ(c.dims, (std::vector<std::size_t>{7, 9}));
  EXPECT_EQ(c.N, 2);
  EXPECT_EQ(c.blockSize, 16);
  const std::array<std::size_t, 2> ones{1, 1};
  c.set_dims(ones);
  EXPECT_EQ(c.dims, (std::vector<std::size_t>{1}));
  EXPECT_EQ(c.N, 1);
}

// --- error bounds -----------------------------------------------------------

struct bound_case {
  const char* name;
  std::vector<double> data;
};

std::vector<bound_case> bound_cases() {
  std::vector<bound_case> cases;
  cases.push_back({"smooth", smooth(20000)});
  cases.push_back({"noisy", noisy(20000)});
  cases.push_back({"constant", std::vector<double>(5000, 3.25)});
  cases.push_back({"tiny1", {42.0}});
  cases.push_back({"tiny2", {1.0, -1.0}});
  cases.push_back({"tiny5", {0.1, 0.2, 0.4, 0.8, 1.6}});
  cases.push_back({"steps", [] {
                     std::vector<double> v(3000);
                     for (std::size_t i = 0; i < v.size(); ++i)
                       v[i] = static_cast<double>((i / 100) % 7) * 10.0;
                     return v;
                   }()});
  cases.push_back({"huge", [] {
                     std::vector<double> v = smooth(4000);
                     for (auto& x : v) x *= 1e290;
                     return v;
                   }()});
  return cases;
}

TEST(Sz3Stream, AbsoluteBoundHoldsOnEveryKindOfData) {
  for (const auto& c : bound_cases()) {
    for (double eb : {1e-1, 1e-2, 1e-3, 1e-6}) {
      SCOPED_TRACE(std::string(c.name) + " eb " + std::to_string(eb));
      const auto out = round_trip(c.data, {sz3_error_bound_mode::abs, eb});
      EXPECT_LE(max_error(c.data, out), eb);
    }
  }
}

TEST(Sz3Stream, RelativeBoundHoldsAgainstTheValueRange) {
  for (const auto& c : bound_cases()) {
    for (double rel : {1e-2, 1e-4, 1e-7}) {
      SCOPED_TRACE(std::string(c.name) + " rel " + std::to_string(rel));
      const auto out = round_trip(c.data, {sz3_error_bound_mode::rel, rel});
      EXPECT_LE(max_error(c.data, out), rel * range_of(c.data));
    }
  }
}

// SZ3 turns a PSNR target p into eb = range · 10^(−(p + 10·log10(1 − 0.66))/20).
// With every error within eb the MSE is at most eb², so the PSNR achieved is
// at least p + 10·log10(0.34) (≈ p − 4.69 dB): both are checked.
TEST(Sz3Stream, PsnrModeHoldsItsDerivedBound) {
  for (const auto& c : bound_cases()) {
    const double range = range_of(c.data);
    if (range == 0) continue;
    for (double psnr : {40.0, 60.0, 90.0}) {
      SCOPED_TRACE(std::string(c.name) + " psnr " + std::to_string(psnr));
      const auto out = round_trip(c.data, {sz3_error_bound_mode::psnr, psnr});
      const double eb = range * std::pow(10, (psnr + 10 * std::log10(1 - 2.0 / 3.0 * 0.99)) / -20);
      EXPECT_LE(max_error(c.data, out), eb);
      // Errors relative to the range, so the 1e290-scaled case does not overflow.
      double mse = 0;
      for (std::size_t i = 0; i < out.size(); ++i) {
        const double e = (out[i] - c.data[i]) / range;
        mse += e * e;
      }
      mse /= static_cast<double>(out.size());
      if (mse > 0) {
        EXPECT_GE(-10 * std::log10(mse), psnr + 10 * std::log10(0.34) - 1e-9);
      }
    }
  }
}

TEST(Sz3Stream, ConstantDataWithRelativeBoundIsLossless) {
  const std::vector<double> v(1000, -7.5);
  const std::array<std::size_t, 1> shape{v.size()};
  const bytes s =
      tg::codecs::sz3_compress(std::span<const double>(v), shape, {sz3_error_bound_mode::rel, 1e-3});
  EXPECT_EQ(tg::codecs::sz3_inspect(s).algorithm, "lossless");
  std::vector<double> out(v.size());
  tg::codecs::sz3_decompress(s, std::span<double>(out));
  EXPECT_EQ(out, v);
}

TEST(Sz3Stream, SmoothDataCompressesWell) {
  const auto v = smooth(200000);
  const std::array<std::size_t, 1> shape{v.size()};
  const bytes s =
      tg::codecs::sz3_compress(std::span<const double>(v), shape, {sz3_error_bound_mode::abs, 1e-2});
  EXPECT_NE(tg::codecs::sz3_inspect(s).algorithm, "lossless");
  // A smooth field at 1e-2 of a range of ~36 is a few bits per value.
  EXPECT_LT(s.size() * 10, v.size() * 8) << s.size();
}

// A random walk at a bound of a third of its step is where SZ3's tuning
// prefers Lorenzo (docs/sz3-format.md §7; measured on the samples: Lorenzo
// ~1.2 times interpolation's ratio): the composed Lorenzo stream is
// written, decoded and within the bound.
TEST(Sz3Stream, RandomWalkTakesTheLorenzoPredictor) {
  std::mt19937_64 rng(1);
  std::normal_distribution<double> g(0, 0.01);
  std::vector<double> v(100000);
  double x = 0;
  for (auto& e : v) {
    x += g(rng);
    e = x;
  }
  const std::array<std::size_t, 1> shape{v.size()};
  const bytes s =
      tg::codecs::sz3_compress(std::span<const double>(v), shape, {sz3_error_bound_mode::abs, 3e-3});
  EXPECT_EQ(tg::codecs::sz3_inspect(s).algorithm, "lorenzo_regression");
  std::vector<double> out(v.size());
  tg::codecs::sz3_decompress(s, std::span<double>(out));
  EXPECT_LE(max_error(v, out), 3e-3);
}

// The byte entry (the pipeline's) reads aligned bytes in place and copies
// unaligned ones; both must make the typed entry's stream exactly.
TEST(Sz3Stream, ByteEntryMatchesTheTypedEntryAlignedOrNot) {
  const auto v = smooth(20000);
  const std::array<std::size_t, 1> shape{v.size()};
  const sz3_params p{sz3_error_bound_mode::abs, 1e-3};
  const bytes typed = tg::codecs::sz3_compress(std::span<const double>(v), shape, p);
  bytes storage(v.size() * 8 + 8);
  for (const std::size_t offset : {std::size_t{0}, std::size_t{3}}) {
    const std::span<std::byte> in(storage.data() + offset, v.size() * 8);
    std::memcpy(in.data(), v.data(), in.size());
    EXPECT_EQ(tg::codecs::sz3_compress(std::span<const std::byte>(in), p), typed) << "offset " << offset;
  }
}

// White noise at a bound far below its spacing does not compress 3:1, and
// plain zstd is smaller: SZ3 then writes the lossless mode.
TEST(Sz3Stream, IncompressibleDataFallsBackToLossless) {
  const auto v = noisy(50000);
  const std::array<std::size_t, 1> shape{v.size()};
  const bytes s =
      tg::codecs::sz3_compress(std::span<const double>(v), shape, {sz3_error_bound_mode::abs, 1e-15});
  EXPECT_EQ(tg::codecs::sz3_inspect(s).algorithm, "lossless");
  std::vector<double> out(v.size());
  tg::codecs::sz3_decompress(s, std::span<double>(out));
  EXPECT_EQ(out, v);
}

TEST(Sz3Stream, NonFiniteValuesSurviveAsUnpredictable) {
  auto v = smooth(5000);
  v[10] = std::numeric_limits<double>::infinity();
  v[2000] = -std::numeric_limits<double>::infinity();
  v[3000] = std::numeric_limits<double>::quiet_NaN();
  const auto out = round_trip(v, {sz3_error_bound_mode::abs, 1e-3});
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (std::isnan(v[i])) {
      EXPECT_TRUE(std::isnan(out[i])) << i;
    } else if (std::isinf(v[i])) {
      EXPECT_EQ(out[i], v[i]) << i;
    } else {
      EXPECT_LE(std::fabs(out[i] - v[i]), 1e-3) << i;
    }
  }
}

// --- every dimensionality, float and double -----------------------------

template <class T>
void check_shape(std::vector<std::size_t> shape, double eb) {
  std::size_t n = 1;
  for (auto d : shape) n *= d;
  std::vector<T> v(n);
  for (std::size_t i = 0; i < n; ++i) {
    v[i] = static_cast<T>(std::sin(0.01 * static_cast<double>(i)) * 50 +
                          std::cos(0.37 * static_cast<double>(i % 97)));
  }
  const bytes s = tg::codecs::sz3_compress(std::span<const T>(v), shape, {sz3_error_bound_mode::abs, eb});
  std::vector<T> out(n);
  tg::codecs::sz3_decompress(s, std::span<T>(out));
  for (std::size_t i = 0; i < n; ++i) {
    ASSERT_LE(std::fabs(static_cast<double>(out[i]) - static_cast<double>(v[i])), eb) << i;
  }
  // The wrong element count is refused.
  std::vector<T> wrong(n + 1);
  EXPECT_THROW(tg::codecs::sz3_decompress(s, std::span<T>(wrong)), tg::encoding_error);
}

TEST(Sz3Stream, EveryDimensionalityRoundTripsWithinTheBound) {
  const std::vector<std::vector<std::size_t>> shapes{{1000},       {40, 55},    {12, 17, 9},
                                                     {5, 6, 7, 8}, {1, 300, 1}, {3, 1, 2}};
  for (const auto& shape : shapes) {
    SCOPED_TRACE(::testing::PrintToString(shape));
    check_shape<double>(shape, 1e-3);
    check_shape<float>(shape, 1e-2);
  }
}

// --- message pipeline ----------------------------------------------------

tg::data_object_descriptor sz3_desc(std::uint64_t n, const char* mode, double bound,
                                    tg::byte_order order = tg::native_byte_order()) {
  auto d = codectest::f64_desc(n, order);
  d.compression = "sz3";
  d.params.set("sz3_error_bound_mode", cbor::value(mode));
  d.params.set("sz3_error_bound", cbor::value(bound));
  return d;
}

TEST(Sz3Stream, MessageRoundTripWithNanAndInfMasks) {
  auto v = smooth(4000);
  v[5] = std::numeric_limits<double>::quiet_NaN();
  v[77] = std::numeric_limits<double>::infinity();
  v[3999] = -std::numeric_limits<double>::infinity();
  for (auto order : {tg::byte_order::little, tg::byte_order::big}) {
    const bytes raw = codectest::f64_bytes(v, order);
    tg::encode_options o = codectest::fixed_options();
    o.allow_nan = true;
    o.allow_inf = true;
    const bytes msg = codectest::encode_one(sz3_desc(v.size(), "abs", 1e-4, order), raw, o);
    const tg::message m = codectest::decode_msg(msg, true, true, true);
    const auto out = codectest::f64_values(m.object(0).bytes(), tg::native_byte_order());
    ASSERT_EQ(out.size(), v.size());
    for (std::size_t i = 0; i < v.size(); ++i) {
      if (std::isnan(v[i])) {
        EXPECT_TRUE(std::isnan(out[i]));
      } else if (std::isinf(v[i])) {
        EXPECT_EQ(out[i], v[i]);
      } else {
        EXPECT_LE(std::fabs(out[i] - v[i]), 1e-4) << i;
      }
    }
    EXPECT_EQ(m.object(0).descriptor().compression, "sz3");
  }
}

TEST(Sz3Stream, DescriptorErrors) {
  const auto v = smooth(64);
  const bytes raw = codectest::f64_bytes(v, tg::native_byte_order());
  auto no_mode = codectest::f64_desc(v.size());
  no_mode.compression = "sz3";
  no_mode.params.set("sz3_error_bound", cbor::value(0.1));
  codectest::expect_error<tg::metadata_error>([&] { (void)codectest::encode_one(no_mode, raw); },
                                              "missing required parameter: sz3_error_bound_mode");
  codectest::expect_error<tg::encoding_error>(
      [&] { (void)codectest::encode_one(sz3_desc(v.size(), "pwrel", 0.1), raw); },
      "unknown sz3_error_bound_mode: pwrel");
  auto no_bound = codectest::f64_desc(v.size());
  no_bound.compression = "sz3";
  no_bound.params.set("sz3_error_bound_mode", cbor::value("abs"));
  codectest::expect_error<tg::metadata_error>([&] { (void)codectest::encode_one(no_bound, raw); },
                                              "missing required parameter: sz3_error_bound");
  auto f32 = tg::data_object_descriptor::contiguous(tg::dtype::float32, {16});
  f32.compression = "sz3";
  f32.params = sz3_desc(1, "abs", 0.1).params;
  const bytes raw32(64);
  codectest::expect_error<tg::encoding_error>([&] { (void)codectest::encode_one(f32, raw32); }, "float64");
  // Zero values: SZ3 cannot compress them (the reference panics).
  codectest::expect_error<tg::encoding_error>(
      [&] { (void)codectest::encode_one(sz3_desc(0, "abs", 0.1), {}); }, "zero values");
}

// --- one context for many fields --------------------------------------------

// A reused zstd context must make the frames a fresh one makes: every field
// compressed through one sz3_compression_context, in an order that moves
// between lossy, lossless and plain-zstd streams, sizes and element types
// (and past a refused call), gives sz3_compress's bytes.
TEST(Sz3Stream, ReusedCompressionContextGivesTheSameBytes) {
  tg::codecs::sz3_compression_context context;
  const auto same_as_fresh = [&](const std::vector<double>& v, std::span<const std::size_t> shape,
                                 const sz3_params& p, const char* what) {
    const bytes reused = context.compress(std::span<const double>(v), shape, p);
    const bytes fresh = tg::codecs::sz3_compress(std::span<const double>(v), shape, p);
    EXPECT_EQ(reused, fresh) << what;
  };
  const auto big = smooth(20000);
  const std::array<std::size_t, 1> big_shape{big.size()};
  same_as_fresh(big, big_shape, {sz3_error_bound_mode::abs, 1e-3}, "tuned 1-D interpolation");
  const auto noise = noisy(5000);
  const std::array<std::size_t, 1> noise_shape{noise.size()};
  same_as_fresh(noise, noise_shape, {sz3_error_bound_mode::abs, 1e-12}, "noise: plain zstd wins");
  same_as_fresh(noise, noise_shape, {sz3_error_bound_mode::abs, 0.0}, "lossless mode");
  const auto grid = smooth(60 * 70);
  const std::array<std::size_t, 2> grid_shape{60, 70};
  same_as_fresh(grid, grid_shape, {sz3_error_bound_mode::rel, 1e-4}, "2-D");
  const auto tiny = smooth(100);
  const std::array<std::size_t, 1> tiny_shape{tiny.size()};
  same_as_fresh(tiny, tiny_shape, {sz3_error_bound_mode::psnr, 60}, "100 values");

  std::vector<float> f(4096);
  for (std::size_t i = 0; i < f.size(); ++i) f[i] = static_cast<float>(big[i]);
  const std::array<std::size_t, 1> f_shape{f.size()};
  EXPECT_EQ(context.compress(std::span<const float>(f), f_shape, {sz3_error_bound_mode::abs, 1e-2}),
            tg::codecs::sz3_compress(std::span<const float>(f), f_shape, {sz3_error_bound_mode::abs, 1e-2}));

  const std::array<std::size_t, 1> wrong_shape{big.size() + 1};
  EXPECT_THROW((void)context.compress(std::span<const double>(big), wrong_shape, {}), tg::encoding_error);
  same_as_fresh(big, big_shape, {sz3_error_bound_mode::abs, 1e-3}, "the first field again");

  tg::codecs::sz3_compression_context moved = std::move(context);
  const bytes after_move = moved.compress(std::span<const double>(tiny), tiny_shape, {});
  EXPECT_EQ(after_move, tg::codecs::sz3_compress(std::span<const double>(tiny), tiny_shape, {}));
}

// --- hostile streams --------------------------------------------------------

bytes some_stream() {
  const auto v = smooth(3000);
  const std::array<std::size_t, 1> shape{v.size()};
  return tg::codecs::sz3_compress(std::span<const double>(v), shape, {sz3_error_bound_mode::abs, 1e-3});
}

TEST(Sz3Stream, TruncatedStreamsGiveTypedErrors) {
  const bytes s = some_stream();
  std::vector<double> out(3000);
  for (std::size_t len = 0; len < s.size(); len += (len < 64 ? 1 : 37)) {
    const std::span<const std::byte> cut(s.data(), len);
    EXPECT_THROW(tg::codecs::sz3_decompress(cut, std::span<double>(out)), tg::encoding_error) << len;
  }
}

TEST(Sz3Stream, BitFlippedStreamsNeverCrash) {
  const bytes s = some_stream();
  std::vector<double> out(3000);
  std::mt19937 rng(3);
  int errors = 0;
  for (int trial = 0; trial < 400; ++trial) {
    bytes bad = s;
    const std::size_t at = rng() % bad.size();
    bad[at] ^= static_cast<std::byte>(1u << (rng() % 8));
    try {
      tg::codecs::sz3_decompress(bad, std::span<double>(out));
    } catch (const tg::encoding_error&) {
      ++errors;
    }
  }
  // Flips in the zstd frame are caught by its checks or by the parsers.
  EXPECT_GT(errors, 100);
}

TEST(Sz3Stream, UnsupportedFeaturesAreNamed) {
  // Take the hand-made lossless stream and rewrite its record.
  const std::vector<double> v{1, 2, 3};
  const std::size_t record_at = hand_lossless_stream(v).size() - 33;
  {
    bytes s = hand_lossless_stream(v);
    s[record_at + 12] = std::byte{3};  // cmprAlgo = ALGO_NOPRED
    std::vector<double> out(3);
    codectest::expect_error<tg::encoding_error>(
        [&] { tg::codecs::sz3_decompress(s, std::span<double>(out)); },
        "unsupported SZ3 feature: ALGO_NOPRED");
  }
  {
    bytes s = hand_lossless_stream(v);
    s[record_at + 12] = std::byte{2};     // interpolation …
    s[record_at + 22] = std::byte{0xE8};  // … with the openmp flag
    std::vector<double> out(3);
    codectest::expect_error<tg::encoding_error>(
        [&] { tg::codecs::sz3_decompress(s, std::span<double>(out)); }, "unsupported SZ3 feature: OpenMP");
  }
  {
    bytes s = hand_lossless_stream(v);
    s[5] = std::byte{0x01};  // data version 3.3.1
    std::vector<double> out(3);
    codectest::expect_error<tg::encoding_error>(
        [&] { tg::codecs::sz3_decompress(s, std::span<double>(out)); },
        "unsupported SZ3 feature: data version 3.3.1");
  }
  {
    bytes s = hand_lossless_stream(v);
    s[0] = std::byte{0x11};
    std::vector<double> out(3);
    codectest::expect_error<tg::encoding_error>(
        [&] { tg::codecs::sz3_decompress(s, std::span<double>(out)); }, "magic");
  }
}

}  // namespace
