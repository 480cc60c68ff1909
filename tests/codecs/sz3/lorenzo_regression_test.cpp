// SZ3's 3-D Lorenzo/regression decomposition (docs/sz3-format.md §6.2-6.5):
// a hand-worked stream, round trips over every supported dimension / flag combination,
// and malformed saved state.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "src/codecs/sz3/lorenzo_regression.hpp"
#include "tensogram/core/error.hpp"

namespace sz3 = tensogram::codecs::sz3;

namespace {

// Stand-in for SZ3's Huffman coder in the 3-D side streams: a u64 count and
// the raw i32 symbols. It remembers what it was given so tests can look at
// the block selections and coefficient symbols.
class raw_coder final : public sz3::int_stream_coder {
 public:
  void encode(std::span<const int> symbols, int state_count, sz3::byte_writer& w) const override {
    w.put<std::uint64_t>(symbols.size());
    w.put_array<std::int32_t>(symbols);
    streams.emplace_back(symbols.begin(), symbols.end());
    states.push_back(state_count);
  }
  std::vector<int> decode(sz3::byte_reader& r, std::size_t count) const override {
    const auto n = r.get<std::uint64_t>("raw count");
    if (n != count) sz3::fail("raw coder: count mismatch");
    auto v = r.get_array<std::int32_t>(n, "raw symbols");
    return {v.begin(), v.end()};
  }
  mutable std::vector<std::vector<int>> streams;
  mutable std::vector<int> states;
};

sz3::stream_config config_3d(std::size_t d1, std::size_t d2, std::size_t d3, double eb, int block = 6) {
  sz3::stream_config c;
  c.N = 3;
  c.dims = {d1, d2, d3};
  c.num = d1 * d2 * d3;
  c.cmprAlgo = sz3::algorithm::lorenzo_regression;
  c.absErrorBound = eb;
  c.blockSize = block;
  c.predDim = 3;
  return c;
}

template <class T>
struct trip {
  std::vector<T> original;
  std::vector<T> overwritten;
  std::vector<int> symbols;
  std::vector<std::byte> saved;
  std::vector<T> decoded;
};

template <class T>
trip<T> round_trip(const sz3::stream_config& conf, const std::vector<T>& data,
                   const raw_coder* coder = nullptr) {
  trip<T> t;
  t.original = data;
  t.overwritten = data;
  sz3::lorenzo_regression_decomposition<T> enc(conf, coder);
  t.symbols = enc.compress(conf, t.overwritten.data());
  sz3::byte_writer w(t.saved);
  enc.save(w);

  sz3::lorenzo_regression_decomposition<T> dec(conf, coder);
  sz3::byte_reader r(t.saved);
  dec.load(r);
  EXPECT_EQ(r.remaining(), 0u);
  t.decoded.assign(conf.num, T(0));
  dec.decompress(conf, t.symbols, t.decoded.data());
  return t;
}

template <class T>
void expect_exact_and_bounded(const trip<T>& t, double eb, const std::string& what) {
  ASSERT_EQ(t.decoded.size(), t.overwritten.size()) << what;
  EXPECT_EQ(std::memcmp(t.decoded.data(), t.overwritten.data(), t.decoded.size() * sizeof(T)), 0)
      << what << ": decoder differs from the encoder's reconstruction";
  for (std::size_t i = 0; i < t.original.size(); ++i) {
    if (!std::isfinite(t.original[i])) continue;
    const double err = std::fabs(static_cast<double>(t.decoded[i]) - static_cast<double>(t.original[i]));
    ASSERT_LE(err, eb) << what << " at " << i;
  }
}

template <class T>
std::vector<T> make_data(const std::string& kind, std::size_t n, std::size_t d2 = 1, std::size_t d3 = 1) {
  std::vector<T> v(n);
  std::mt19937 rng(1234);
  std::uniform_real_distribution<double> u(-10, 10);
  for (std::size_t i = 0; i < n; ++i) {
    const double z = static_cast<double>(i % d3);
    const double y = static_cast<double>((i / d3) % d2);
    const double x = static_cast<double>(i / (d2 * d3));
    double value = 0;
    if (kind == "smooth") value = std::sin(0.05 * x) * 40 + std::cos(0.11 * y) * 7 + 0.3 * z * z / (1 + z);
    if (kind == "noisy") value = u(rng);
    if (kind == "constant") value = 3.25;
    if (kind == "linear") value = 2.5 * x - 1.25 * y + 0.75 * z + 10;
    if (kind == "quadratic") value = 0.5 * x * x + 0.25 * y * y + 0.125 * z * z;
    if (kind == "trilinear") value = 0.1 * x * y * z + 0.5 * x * x;
    if (kind == "huge") value = (i % 2 == 0 ? 1e30 : -1e30) * u(rng);
    v[i] = static_cast<T>(value);
  }
  return v;
}

const std::vector<std::string> kKinds{"smooth",    "noisy",     "constant", "linear",
                                      "quadratic", "trilinear", "huge"};

}  // namespace

// ---------------------------------------------------------------------------
// Which configurations use this decomposition (SZ_compress_LorenzoReg).

TEST(Sz3LorenzoRegression, SupportMatchesSz3Dispatch) {
  // SZ3 3.3.2 sends 1-D data to its composed Lorenzo compressor
  // (composed_lorenzo_test.cpp), never to this decomposition.
  sz3::stream_config c;
  c.N = 1;
  c.dims = {10};
  c.num = 10;
  c.regression = false;
  EXPECT_FALSE(sz3::lorenzo_regression_supported(c));
  EXPECT_THROW(sz3::lorenzo_regression_decomposition<float>{c}, tensogram::encoding_error);

  auto d = config_3d(4, 4, 4, 0.1);
  d.regression = true;
  EXPECT_TRUE(sz3::lorenzo_regression_supported(d));
  d.regression2 = true;
  EXPECT_FALSE(sz3::lorenzo_regression_supported(d));
  EXPECT_NE(sz3::lorenzo_regression_unsupported_reason(d), nullptr);

  for (std::uint8_t n : {2, 4}) {
    sz3::stream_config e;
    e.N = n;
    e.regression = false;
    EXPECT_FALSE(sz3::lorenzo_regression_supported(e));
    EXPECT_THROW(sz3::lorenzo_regression_decomposition<float>{e}, tensogram::encoding_error);
  }
}

// ---------------------------------------------------------------------------
// Hand-worked 3-D stream: 2×2×2 of ones, eb 0.5, radius 4, block size 6,
// 1-layer Lorenzo only. The block's smallest side is 2, so no point is
// sampled and Lorenzo is chosen. The first value is predicted from the zero
// padding (diff 1 → sym 5); every other value's 3-D Lorenzo stencil over
// reconstructed ones and zero padding gives exactly 1 (e.g. (0,1,1):
// 1 + 1 + 0 - 1 - 0 - 0 + 0), so its symbol is 4.
// Saved: the 44-byte parameter image, f64 precision, u8 0, f32 0 (mean),
// u64 0 (regression blocks), the selection stream {0} (state count 8), then
// the quantiser with no verbatim values.
TEST(Sz3LorenzoRegression, HandWorked3d) {
  auto conf = config_3d(2, 2, 2, 0.5, 6);
  conf.quantbinCnt = 8;
  conf.lorenzo = true;
  conf.lorenzo2 = false;
  conf.regression = false;
  raw_coder coder;
  const auto t = round_trip(conf, std::vector<float>(8, 1.0f), &coder);
  EXPECT_EQ(t.symbols, (std::vector<int>{5, 4, 4, 4, 4, 4, 4, 4}));
  EXPECT_EQ(t.decoded, std::vector<float>(8, 1.0f));
  ASSERT_EQ(coder.streams.size(), 1u);
  EXPECT_EQ(coder.streams[0], std::vector<int>{0});
  EXPECT_EQ(coder.states, std::vector<int>{8});

  const auto& s = t.saved;
  ASSERT_EQ(s.size(), 44u + 8 + 1 + 4 + 8 + (8 + 4) + (1 + 8 + 4 + 8));
  auto i32 = [&](std::size_t at) {
    std::int32_t v;
    std::memcpy(&v, s.data() + at, 4);
    return v;
  };
  auto f32 = [&](std::size_t at) {
    float v;
    std::memcpy(&v, s.data() + at, 4);
    return v;
  };
  EXPECT_EQ(i32(0), 6);                             // block size
  EXPECT_EQ(i32(4), 3);                             // prediction dimension
  EXPECT_EQ(s[8], std::byte{1});                    // lorenzo
  EXPECT_EQ(s[9], std::byte{0});                    // lorenzo 2-layer
  EXPECT_EQ(s[10], std::byte{0});                   // regression
  EXPECT_EQ(i32(12), 2);                            // padding layers
  EXPECT_EQ(i32(16), 0);                            // capacity
  EXPECT_EQ(f32(24), 0.5f / 4.0f / 6.0f);           // linear coefficient eb: 1·eb/4/block
  EXPECT_EQ(f32(20), 6.0f * (0.5f / 4.0f / 6.0f));  // offset coefficient eb: block·linear
  EXPECT_EQ(f32(28), 1.0f);                         // eb base
  EXPECT_EQ(f32(32), 6.0f);                         // eb_1 = block size
  EXPECT_EQ(f32(36), 1.0f);                         // sample ratio
  EXPECT_EQ(s[40], std::byte{1});                   // lossless
  double precision;
  std::memcpy(&precision, s.data() + 44, 8);
  EXPECT_EQ(precision, 0.5);
  EXPECT_EQ(s[52], std::byte{0});  // mean flag
  std::uint64_t reg_count;
  std::memcpy(&reg_count, s.data() + 57, 8);
  EXPECT_EQ(reg_count, 0u);
  EXPECT_EQ(s[44 + 8 + 1 + 4 + 8 + 12], std::byte{0x02});  // quantiser uid
}

// ---------------------------------------------------------------------------
// Round trips.

template <class T>
void round_trips_3d() {
  const std::vector<std::array<std::size_t, 3>> shapes{{2, 2, 2},  {2, 2, 3},  {3, 3, 3}, {6, 6, 6},
                                                       {7, 9, 13}, {13, 5, 8}, {1, 1, 3}, {12, 12, 12}};
  for (const auto& shape : shapes) {
    const std::size_t n = shape[0] * shape[1] * shape[2];
    for (const auto& kind : kKinds) {
      const auto data = make_data<T>(kind, n, shape[1], shape[2]);
      for (int flags = 0; flags < 8; ++flags) {
        for (int pred_dim : {1, 2, 3}) {
          for (int block : {6, 4}) {
            const double eb = kind == "huge" ? 1e25 : 0.01;
            auto conf = config_3d(shape[0], shape[1], shape[2], eb, block);
            conf.lorenzo = (flags & 1) != 0;
            conf.lorenzo2 = (flags & 2) != 0;
            conf.regression = (flags & 4) != 0;
            conf.predDim = static_cast<std::uint8_t>(pred_dim);
            raw_coder coder;
            const auto t = round_trip(conf, data, &coder);
            const std::string what = kind + " " + std::to_string(shape[0]) + "x" + std::to_string(shape[1]) +
                                     "x" + std::to_string(shape[2]) + " flags " + std::to_string(flags) +
                                     " pred_dim " + std::to_string(pred_dim) + " block " +
                                     std::to_string(block);
            expect_exact_and_bounded(t, eb, what);
            ASSERT_FALSE(coder.streams.empty());
            for (int s : coder.streams[0]) {
              EXPECT_TRUE(s == 0 || (s == 1 && conf.regression) || (s == 2 && conf.lorenzo2)) << what;
            }
          }
        }
      }
    }
  }
}
TEST(Sz3LorenzoRegression, RoundTrip3dFloat) {
  round_trips_3d<float>();
}
TEST(Sz3LorenzoRegression, RoundTrip3dDouble) {
  round_trips_3d<double>();
}

// Each predictor wins where it is exact: regression on a plane; 2-layer
// Lorenzo on x·y·z (whose mixed third difference, 0.1 per point, the 1-layer
// stencil misses; the 2-layer one annihilates it, and its larger noise
// allowance, (6.8 - 1.22)·eb per sample, is far smaller).
TEST(Sz3LorenzoRegression, SelectionPicksTheFittingPredictor) {
  {
    auto conf = config_3d(12, 12, 12, 1e-3, 6);
    conf.lorenzo = true;
    conf.lorenzo2 = false;
    conf.regression = true;
    raw_coder coder;
    const auto t = round_trip(conf, make_data<double>("linear", 12 * 12 * 12, 12, 12), &coder);
    expect_exact_and_bounded(t, 1e-3, "linear");
    ASSERT_EQ(coder.streams.size(), 2u);  // selection, then coefficient symbols
    EXPECT_EQ(coder.streams[0], std::vector<int>(8, 1));
    EXPECT_EQ(coder.streams[1].size(), 32u);
    EXPECT_EQ(coder.states, (std::vector<int>{8, 65536}));
  }
  {
    auto conf = config_3d(12, 12, 12, 1e-3, 6);
    conf.lorenzo = true;
    conf.lorenzo2 = true;
    conf.regression = false;
    raw_coder coder;
    const auto t = round_trip(conf, make_data<double>("trilinear", 12 * 12 * 12, 12, 12), &coder);
    expect_exact_and_bounded(t, 1e-3, "trilinear");
    ASSERT_EQ(coder.streams.size(), 1u);
    EXPECT_EQ(coder.streams[0], std::vector<int>(8, 2));
  }
}

// A 3×3×3 block has no sample points (the diagonals start at 2 and stop
// before min_size - 1 = 2; the corner needs min_size > 3), so every error
// sum is 0 and only SZ3's tie rules decide: regression needs err ≤ Lorenzo
// and err < 2-layer (strict), 2-layer needs ≤ both.
TEST(Sz3LorenzoRegression, TieRulesOnUnsampledBlocks) {
  struct tie_case {
    bool l1, l2, reg;
    int expected;
  };
  for (const auto& c :
       {tie_case{true, false, true, 1}, tie_case{true, true, true, 2}, tie_case{false, true, true, 2},
        tie_case{true, true, false, 2}, tie_case{false, false, true, 1}, tie_case{false, false, false, 0},
        tie_case{true, false, false, 0}}) {
    auto conf = config_3d(3, 3, 3, 0.1, 6);
    conf.lorenzo = c.l1;
    conf.lorenzo2 = c.l2;
    conf.regression = c.reg;
    raw_coder coder;
    const auto t = round_trip(conf, make_data<float>("noisy", 27, 3, 3), &coder);
    expect_exact_and_bounded(t, 0.1, "tie");
    EXPECT_EQ(coder.streams[0], std::vector<int>{c.expected}) << c.l1 << c.l2 << c.reg;
  }
}

// The decoded values do not depend on how the symbols were produced: a
// symbol stream is consumed block by block, each block in raster order.
TEST(Sz3LorenzoRegression, SymbolsAreBlockOrdered) {
  auto conf = config_3d(3, 3, 4, 0.5, 2);
  conf.quantbinCnt = 8;
  conf.lorenzo = true;
  conf.lorenzo2 = false;
  conf.regression = false;
  conf.predDim = 1;  // 1-D stencil: predict from the value to the left (z - 1)
  // All zeros predict exactly (symbol = radius 4) except one planted 1.0:
  // diff 1, |d|/eb = 2 → bin 1 → symbol 5. Nothing reads it afterwards (it
  // is the last z of its row), so exactly one symbol differs.
  std::vector<float> data(36, 0.0f);
  data[1 * 12 + 0 * 4 + 3] = 1.0f;  // (x=1, y=0, z=3)
  raw_coder coder;
  const auto t = round_trip(conf, data, &coder);
  // Blocks of 2: x blocks {0-1, 2}, y {0-1, 2}, z {0-1, 2-3}. (1,0,3) sits
  // in block (0,0,1), the second one, which starts at symbol 8 (block
  // (0,0,0) has 2·2·2 values); inside it, local (1,0,1) → 1·4 + 0·2 + 1 = 5.
  std::vector<int> expected(36, 4);
  expected[8 + 5] = 5;
  EXPECT_EQ(t.symbols, expected);
}

TEST(Sz3LorenzoRegression, NonFiniteInputsDoNotCrash) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  for (int flags = 1; flags < 8; ++flags) {
    auto conf = config_3d(7, 8, 9, 0.01, 6);
    conf.lorenzo = (flags & 1) != 0;
    conf.lorenzo2 = (flags & 2) != 0;
    conf.regression = (flags & 4) != 0;
    auto data = make_data<float>("smooth", 7 * 8 * 9, 8, 9);
    data[0] = nan;
    data[100] = inf;
    data[200] = -inf;
    data[7 * 8 * 9 - 1] = nan;
    raw_coder coder;
    const auto t = round_trip(conf, data, &coder);
    expect_exact_and_bounded(t, 0.01, "3-D non-finite");
  }
}

// ---------------------------------------------------------------------------
// Malformed saved state and symbol streams.

template <class T>
void expect_every_truncation_fails(const sz3::stream_config& conf, const std::vector<std::byte>& saved,
                                   const raw_coder* coder) {
  for (std::size_t len = 0; len < saved.size(); ++len) {
    sz3::lorenzo_regression_decomposition<T> dec(conf, coder);
    sz3::byte_reader r(std::span<const std::byte>(saved.data(), len));
    EXPECT_THROW(dec.load(r), tensogram::encoding_error) << "length " << len;
  }
}

TEST(Sz3LorenzoRegression, TruncatedStateFails) {
  {
    auto conf = config_3d(7, 9, 13, 1e-3, 6);
    conf.regression = true;
    conf.lorenzo2 = true;
    raw_coder coder;
    const auto t = round_trip(conf, make_data<double>("noisy", 7 * 9 * 13, 9, 13), &coder);
    expect_every_truncation_fails<double>(conf, t.saved, &coder);
  }
}

class Sz3LorenzoRegressionCorrupt : public ::testing::Test {
 protected:
  void SetUp() override {
    conf_ = config_3d(12, 12, 12, 1e-3, 6);
    conf_.lorenzo = true;
    conf_.regression = true;
    trip_ = round_trip(conf_, make_data<float>("linear", 12 * 12 * 12, 12, 12), &coder_);
    ASSERT_EQ(coder_.streams[0], std::vector<int>(8, 1));
  }
  void expect_load_fails(const std::vector<std::byte>& saved) {
    sz3::lorenzo_regression_decomposition<float> dec(conf_, &coder_);
    sz3::byte_reader r(saved);
    EXPECT_THROW(dec.load(r), tensogram::encoding_error);
  }
  template <class V>
  std::vector<std::byte> patched(std::size_t at, V v) {
    auto s = trip_.saved;
    std::memcpy(s.data() + at, &v, sizeof(V));
    return s;
  }
  // Offsets: params image 0..43, precision 44, mean flag 52, mean 53,
  // regression block count 57, selection stream 65 (u64 8 + 8 i32).
  static constexpr std::size_t kSelection = 65;
  static constexpr std::size_t kVerbatimCount = kSelection + 8 + 8 * 4;
  sz3::stream_config conf_;
  raw_coder coder_;
  trip<float> trip_;
};

TEST_F(Sz3LorenzoRegressionCorrupt, BadParameters) {
  expect_load_fails(patched<std::int32_t>(0, 0));                       // block size 0
  expect_load_fails(patched<std::int32_t>(0, -6));                      // negative block size
  expect_load_fails(patched<std::int32_t>(12, 1));                      // padding layer 1
  expect_load_fails(patched<std::uint8_t>(52, 1));                      // mean mode
  expect_load_fails(patched<std::uint64_t>(57, 9));                     // more regression blocks than blocks
  expect_load_fails(patched<std::uint64_t>(57, 7));                     // count disagrees with the selections
  expect_load_fails(patched<std::int32_t>(kSelection + 8, 3));          // unknown predictor
  expect_load_fails(patched<std::int32_t>(kSelection + 8, 0));          // selection count disagrees
  expect_load_fails(patched<std::uint64_t>(kVerbatimCount, 1u << 30));  // verbatim count past the end
  // Coefficient symbols follow the verbatim values and their count.
  std::uint64_t verbatim;
  std::memcpy(&verbatim, trip_.saved.data() + kVerbatimCount, 8);
  const std::size_t coeffs = kVerbatimCount + 8 + verbatim * 4 + 8;
  expect_load_fails(patched<std::int32_t>(coeffs, 65536));  // coefficient symbol out of range
  expect_load_fails(patched<std::int32_t>(coeffs, -1));
  if (verbatim == 0) {
    expect_load_fails(patched<std::int32_t>(coeffs, 0));  // verbatim coefficient that is not stored
  }
  // The quantiser follows the coefficient stream.
  const std::size_t quantiser = coeffs + 32 * 4;
  expect_load_fails(patched<std::uint8_t>(quantiser, 3));  // not a linear quantiser
}

TEST_F(Sz3LorenzoRegressionCorrupt, BadSymbols) {
  sz3::lorenzo_regression_decomposition<float> dec(conf_, &coder_);
  sz3::byte_reader r(trip_.saved);
  dec.load(r);
  std::vector<float> out(conf_.num);
  auto symbols = trip_.symbols;
  symbols.pop_back();
  EXPECT_THROW(dec.decompress(conf_, symbols, out.data()), tensogram::encoding_error);
  symbols = trip_.symbols;
  symbols.push_back(1);
  EXPECT_THROW(dec.decompress(conf_, symbols, out.data()), tensogram::encoding_error);
  symbols = trip_.symbols;
  symbols[17] = dec.symbol_count();
  EXPECT_THROW(dec.decompress(conf_, symbols, out.data()), tensogram::encoding_error);
  symbols[17] = -5;
  EXPECT_THROW(dec.decompress(conf_, symbols, out.data()), tensogram::encoding_error);
  // Symbols that reference more verbatim values than the quantiser holds.
  sz3::lorenzo_regression_decomposition<float> dec2(conf_, &coder_);
  sz3::byte_reader r2(trip_.saved);
  dec2.load(r2);
  EXPECT_THROW(dec2.decompress(conf_, std::vector<int>(conf_.num, 0), out.data()), tensogram::encoding_error);
}

TEST(Sz3LorenzoRegression, ThreeDNeedsACoder) {
  const auto conf = config_3d(4, 4, 4, 0.1);
  sz3::lorenzo_regression_decomposition<float> enc(conf);
  auto data = make_data<float>("smooth", 64, 4, 4);
  enc.compress(conf, data.data());
  std::vector<std::byte> saved;
  sz3::byte_writer w(saved);
  EXPECT_THROW(enc.save(w), tensogram::encoding_error);
}
