// SZ3 3.3.2's one-dimensional Lorenzo compressor (docs/sz3-format.md §6.1):
// a hand-worked block choice, round trips over every predictor set, the
// single-predictor layout, malformed state, and a stream written by the
// reference (SZ3 3.3.2 inside tensogram 0.24.0) decoded and re-encoded to
// the same bytes.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "src/codecs/sz3/composed_lorenzo.hpp"
#include "src/codecs/sz3/generic_compressor.hpp"
#include "src/codecs/sz3/lossless.hpp"
#include "src/codecs/sz3/stream_config.hpp"
#include "tensogram/codecs/sz3.hpp"
#include "tensogram/core/error.hpp"
#include "tensogram/format/data_frame.hpp"
#include "tensogram/message/decode.hpp"
#include "test_support.hpp"

namespace sz3 = tensogram::codecs::sz3;

namespace {

sz3::stream_config config(std::size_t n, double eb, int bins, int block, bool l1, bool l2) {
  sz3::stream_config c;
  c.N = 1;
  c.dims = {n};
  c.num = n;
  c.cmprAlgo = sz3::algorithm::lorenzo_regression;
  c.absErrorBound = eb;
  c.quantbinCnt = bins;
  c.lorenzo = l1;
  c.lorenzo2 = l2;
  c.regression = false;
  c.regression2 = false;
  c.blockSize = block;
  return c;
}

template <class T>
struct trip {
  std::vector<T> overwritten;
  std::vector<int> symbols;
  std::vector<int> selection;
  std::vector<std::byte> saved;
  std::vector<T> decoded;
};

template <class T>
trip<T> round_trip(const sz3::stream_config& conf, const std::vector<T>& data) {
  trip<T> t;
  t.overwritten = data;
  sz3::composed_lorenzo_1d<T> enc(conf);
  t.symbols = enc.compress(conf, t.overwritten.data());
  t.selection = enc.selection();
  sz3::byte_writer w(t.saved);
  enc.save(w);
  sz3::composed_lorenzo_1d<T> dec(conf);
  sz3::byte_reader r(t.saved);
  dec.load(r);
  EXPECT_EQ(r.remaining(), 0u);
  t.decoded.assign(conf.num, T(0));
  dec.decompress(conf, t.symbols, t.decoded.data());
  return t;
}

template <class T>
std::vector<T> make_data(const std::string& kind, std::size_t n) {
  std::vector<T> v(n);
  std::mt19937 rng(7);
  std::normal_distribution<double> g(0, 1);
  double walk = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const auto x = static_cast<double>(i);
    double value = 0;
    if (kind == "smooth") value = std::sin(0.03 * x) * 40;
    if (kind == "ramp") value = 0.75 * x - 3;
    if (kind == "walk") value = (walk += g(rng));
    if (kind == "noisy") value = g(rng) * 100;
    if (kind == "huge") value = (i % 2 == 0 ? 1e30 : -1e30) * g(rng);
    v[i] = static_cast<T>(value);
  }
  return v;
}

}  // namespace

TEST(Sz3ComposedLorenzo, SupportedConfigurations) {
  EXPECT_EQ(sz3::composed_lorenzo_unsupported_reason(config(10, 0.1, 8, 4, true, true)), nullptr);
  EXPECT_EQ(sz3::composed_lorenzo_unsupported_reason(config(10, 0.1, 8, 4, false, true)), nullptr);
  EXPECT_NE(sz3::composed_lorenzo_unsupported_reason(config(10, 0.1, 8, 4, false, false)), nullptr);
  auto c = config(10, 0.1, 8, 4, true, true);
  c.regression = true;
  EXPECT_NE(sz3::composed_lorenzo_unsupported_reason(c), nullptr);
  EXPECT_THROW(sz3::composed_lorenzo_1d<float>{c}, tensogram::encoding_error);
  c = config(10, 0.1, 8, 4, true, true);
  c.N = 3;
  EXPECT_NE(sz3::composed_lorenzo_unsupported_reason(c), nullptr);
  c = config(10, 0.1, 8, 0, true, true);
  EXPECT_THROW(sz3::composed_lorenzo_1d<float>{c}, tensogram::encoding_error);
}

// Hand-worked: eb 0.5, 64 bins (radius 32), blocks of 3, both predictors.
// Per block the error at its first and last point, |x − pred| + noise
// (0.25 for one layer, 0.54 for two), summed:
//   block 0 (0, 0, 0): both predict 0 → 0.5 vs 1.08 → one layer (index 0);
//     symbols 32 (bin 0), reconstruction 0.
//   block 1 (4, 8, 12): first point x3 = 4: one layer 0 → 4.25, two layers
//     2·0 − 0 → 4.54; last point x5 = 12 (its neighbours still original):
//     one layer 8 → 4.25, two layers 2·8 − 4 = 12 → 0.54. Sums 8.5 vs 5.08
//     → two layers (index 1). x3: pred 0, diff 4, |d|/eb = 8 → (8+1)>>1 = 4
//     → symbol 36, rec 4; x4: pred 2·4 − 0 = 8 → 32; x5: pred 12 → 32.
// Saved: u64 2, the selection's Huffman table and bits, then the quantiser
// (u8 2, f64 0.5, i32 32, u64 0 verbatim values).
TEST(Sz3ComposedLorenzo, HandWorkedBlockChoice) {
  const auto conf = config(6, 0.5, 64, 3, true, true);
  const auto t = round_trip(conf, std::vector<double>{0, 0, 0, 4, 8, 12});
  EXPECT_EQ(t.selection, (std::vector<int>{0, 1}));
  EXPECT_EQ(t.symbols, (std::vector<int>{32, 32, 32, 36, 32, 32}));
  EXPECT_EQ(t.overwritten, (std::vector<double>{0, 0, 0, 4, 8, 12}));
  EXPECT_EQ(t.decoded, t.overwritten);

  std::uint64_t count = 0;
  std::memcpy(&count, t.saved.data(), 8);
  EXPECT_EQ(count, 2u);
  ASSERT_GT(t.saved.size(), 8u + 21u);
  const std::size_t q = t.saved.size() - 21;
  EXPECT_EQ(t.saved[q], std::byte{0x02});
  double eb = 0;
  std::int32_t radius = 0;
  std::uint64_t verbatim = 1;
  std::memcpy(&eb, t.saved.data() + q + 1, 8);
  std::memcpy(&radius, t.saved.data() + q + 9, 4);
  std::memcpy(&verbatim, t.saved.data() + q + 13, 8);
  EXPECT_EQ(eb, 0.5);
  EXPECT_EQ(radius, 32);
  EXPECT_EQ(verbatim, 0u);
}

// With one predictor SZ3 uses it directly: no selection stream, only the
// quantiser; one layer is the plain walk from the previous reconstruction.
// eb 0.5, 8 bins (radius 4): x = 1, 2, 2.4, 10, 9, -0.7 gives 5, 5, 4, 0
// (verbatim), 3, 0 (verbatim).
TEST(Sz3ComposedLorenzo, SinglePredictorSavesOnlyTheQuantiser) {
  const auto conf = config(6, 0.5, 8, 128, true, false);
  const auto t = round_trip(conf, std::vector<float>{1.0f, 2.0f, 2.4f, 10.0f, 9.0f, -0.7f});
  EXPECT_EQ(t.symbols, (std::vector<int>{5, 5, 4, 0, 3, 0}));
  EXPECT_EQ(t.decoded, (std::vector<float>{1.0f, 2.0f, 2.0f, 10.0f, 9.0f, -0.7f}));
  ASSERT_EQ(t.saved.size(), 1u + 8 + 4 + 8 + 2 * 4);
  EXPECT_EQ(t.saved[0], std::byte{0x02});

  // Two layers alone: 2·x[i−1] − x[i−2] from the start.
  const auto t2 = round_trip(config(4, 0.5, 64, 128, false, true), std::vector<double>{1, 2, 3, 4});
  // x0: pred 0, diff 1, |d|/eb = 2 → (2+1)>>1 = 1 → 33; x1: pred 2 → 32;
  // x2: pred 2·2 − 1 = 3 → 32; x3 → 32.
  EXPECT_EQ(t2.symbols, (std::vector<int>{33, 32, 32, 32}));
  EXPECT_EQ(t2.decoded, (std::vector<double>{1, 2, 3, 4}));
}

template <class T>
void round_trips() {
  for (std::size_t n : {1u, 2u, 3u, 5u, 127u, 128u, 129u, 1000u}) {
    for (const char* kind : {"smooth", "ramp", "walk", "noisy", "huge"}) {
      for (double eb : {1e-3, 0.1, 5.0}) {
        for (int flags = 1; flags < 4; ++flags) {
          for (int block : {1, 5, 128}) {
            const auto conf = config(n, eb, 65536, block, (flags & 1) != 0, (flags & 2) != 0);
            const auto data = make_data<T>(kind, n);
            const auto t = round_trip(conf, data);
            const std::string what = std::string(kind) + " n=" + std::to_string(n) +
                                     " eb=" + std::to_string(eb) + " flags=" + std::to_string(flags) +
                                     " block=" + std::to_string(block);
            ASSERT_EQ(std::memcmp(t.decoded.data(), t.overwritten.data(), n * sizeof(T)), 0) << what;
            ASSERT_EQ(t.selection.size(), (n - 1) / static_cast<std::size_t>(block) + 1) << what;
            for (std::size_t i = 0; i < n; ++i) {
              ASSERT_LE(std::fabs(static_cast<double>(t.decoded[i]) - static_cast<double>(data[i])), eb)
                  << what << " at " << i;
            }
          }
        }
      }
    }
  }
}
TEST(Sz3ComposedLorenzo, RoundTripFloat) {
  round_trips<float>();
}
TEST(Sz3ComposedLorenzo, RoundTripDouble) {
  round_trips<double>();
}

TEST(Sz3ComposedLorenzo, NonFiniteValuesAreStoredVerbatim) {
  auto data = make_data<double>("smooth", 300);
  data[0] = std::numeric_limits<double>::quiet_NaN();
  data[5] = std::numeric_limits<double>::infinity();
  data[6] = -std::numeric_limits<double>::infinity();
  data[299] = std::numeric_limits<double>::quiet_NaN();
  const auto t = round_trip(config(300, 0.01, 65536, 128, true, true), data);
  EXPECT_TRUE(std::isnan(t.decoded[0]));
  EXPECT_EQ(t.decoded[5], std::numeric_limits<double>::infinity());
  EXPECT_EQ(t.decoded[6], -std::numeric_limits<double>::infinity());
  EXPECT_TRUE(std::isnan(t.decoded[299]));
}

TEST(Sz3ComposedLorenzo, MalformedStateFails) {
  const auto conf = config(300, 0.01, 65536, 16, true, true);
  const auto t = round_trip(conf, make_data<double>("walk", 300));
  for (std::size_t len = 0; len < t.saved.size(); ++len) {
    sz3::composed_lorenzo_1d<double> dec(conf);
    sz3::byte_reader r(std::span<const std::byte>(t.saved.data(), len));
    EXPECT_THROW(dec.load(r), tensogram::encoding_error) << "length " << len;
  }
  // A selection count that is not the field's block count (19 for 300/16).
  for (std::uint64_t bad : {std::uint64_t{18}, std::uint64_t{20}, std::uint64_t{1} << 62}) {
    auto s = t.saved;
    std::memcpy(s.data(), &bad, 8);
    sz3::composed_lorenzo_1d<double> dec(conf);
    sz3::byte_reader r(s);
    EXPECT_THROW(dec.load(r), tensogram::encoding_error) << bad;
  }
  // Symbols: too few, too many, out of range, more verbatim values than stored.
  sz3::composed_lorenzo_1d<double> dec(conf);
  sz3::byte_reader r(t.saved);
  dec.load(r);
  std::vector<double> out(300);
  auto symbols = t.symbols;
  symbols.pop_back();
  EXPECT_THROW(dec.decompress(conf, symbols, out.data()), tensogram::encoding_error);
  symbols = t.symbols;
  symbols[17] = dec.symbol_count();
  EXPECT_THROW(dec.decompress(conf, symbols, out.data()), tensogram::encoding_error);
  symbols[17] = -1;
  EXPECT_THROW(dec.decompress(conf, symbols, out.data()), tensogram::encoding_error);
  sz3::composed_lorenzo_1d<double> dec2(conf);
  sz3::byte_reader r2(t.saved);
  dec2.load(r2);
  EXPECT_THROW(dec2.decompress(conf, std::vector<int>(300, 0), out.data()), tensogram::encoding_error);
}

// The reference's SZ3 3.3.2 wrote this Lorenzo stream (a big-endian float64
// object, so its input was reinterpreted doubles: many verbatim values).
// Decoding it and compressing the decoded values again with the same
// configuration gives the very same algorithm bytes: the selection stream,
// quantiser, Huffman table and framing are SZ3's, byte for byte.
TEST(Sz3ComposedLorenzo, ReferenceStreamDecodesAndReencodesIdentically) {
  const auto file = tgtest::read_lossy_fixture("float64__mixed__sz3_abs1e-3__big.tgm");
  ASSERT_FALSE(file.empty());
  const tensogram::message_layout layout = tensogram::read_message_layout(file);
  ASSERT_EQ(layout.objects.size(), 1u);
  const auto frame_bytes =
      std::span<const std::byte>(file).subspan(layout.objects[0].offset, layout.objects[0].length);
  const auto h = tensogram::format::read_frame_header(frame_bytes, 0);
  const auto frame = tensogram::format::locate_frame(frame_bytes, 0, h, frame_bytes.size());
  const auto parts = tensogram::format::split_data_frame(frame);
  const std::span<const std::byte> region = parts.payload_region;
  ASSERT_GT(region.size(), 16u);
  std::uint64_t c = 0;
  std::memcpy(&c, region.data() + 8, 8);
  const auto record = region.subspan(16 + c);
  const std::size_t length = 16 + c + std::to_integer<std::size_t>(record[0]);
  const auto stream = region.first(length);

  const sz3::stream_config conf = sz3::load_config(record.first(std::to_integer<std::size_t>(record[0])));
  ASSERT_EQ(conf.cmprAlgo, sz3::algorithm::lorenzo_regression);
  ASSERT_EQ(conf.N, 1);
  EXPECT_TRUE(conf.lorenzo && conf.lorenzo2 && !conf.regression);
  std::vector<double> values(conf.num);
  tensogram::codecs::sz3_decompress(stream, std::span<double>(values));

  std::vector<double> work = values;
  sz3::composed_lorenzo_1d<double> enc(conf);
  std::vector<std::byte> again;
  sz3::lossless_context zstd;
  sz3::generic_compress(enc, conf, work.data(), zstd, again);
  // Re-quantising the reconstruction reproduces it (bitwise: it holds NaNs).
  EXPECT_EQ(std::memcmp(work.data(), values.data(), values.size() * sizeof(double)), 0);
  const auto original = sz3::lossless_decompress(stream.subspan(16, c), std::uint64_t{1} << 24);
  const auto ours = sz3::lossless_decompress(again, std::uint64_t{1} << 24);
  EXPECT_EQ(ours, original);
  EXPECT_EQ(again.size(), c);
}
