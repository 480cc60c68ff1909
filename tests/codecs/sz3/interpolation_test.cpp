// SZ3's interpolation decomposition (docs/sz3-format.md §5): hand-worked
// symbol sequences and visiting orders derived from SZ3's algorithm, round
// trips over every dimensionality, kind, direction and anchor stride, and
// hostile saved state.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "src/codecs/sz3/byte_io.hpp"
#include "src/codecs/sz3/interpolation.hpp"
#include "tensogram/core/error.hpp"

namespace {

namespace sz3 = tensogram::codecs::sz3;
using sz3::interpolation_decomposition;
using sz3::interpolation_kind;
using sz3::stream_config;
using bytes = std::vector<std::byte>;

stream_config make_conf(std::vector<std::size_t> dims, double eb, interpolation_kind kind, int direction,
                        int anchor, double alpha = 1.25, double beta = 2.0, int bins = 65536) {
  stream_config c;
  c.N = static_cast<std::uint8_t>(dims.size());
  c.num = std::accumulate(dims.begin(), dims.end(), std::uint64_t{1}, std::multiplies<>());
  c.dims = std::move(dims);
  c.absErrorBound = eb;
  c.quantbinCnt = bins;
  c.interpAlgo = kind;
  c.interpDirection = static_cast<std::uint8_t>(direction);
  c.interpAnchorStride = anchor;
  c.interpAlpha = alpha;
  c.interpBeta = beta;
  return c;
}

/// The configuration a decoder sees: the record's fields only; the interp
/// settings are left at their (unresolved) defaults.
stream_config decoder_conf(const stream_config& enc) {
  stream_config c;
  c.N = enc.N;
  c.dims = enc.dims;
  c.num = enc.num;
  c.absErrorBound = enc.absErrorBound;
  c.quantbinCnt = enc.quantbinCnt;
  return c;
}

template <class T>
bool same_bits(T a, T b) {
  return std::memcmp(&a, &b, sizeof(T)) == 0;
}

struct encoded {
  std::vector<int> symbols;
  bytes state;
};

template <class T>
encoded encode(const stream_config& conf, std::vector<T>& work) {
  interpolation_decomposition<T> d(conf);
  encoded e;
  e.symbols = d.compress(conf, work.data());
  sz3::byte_writer w(e.state);
  d.save(w);
  return e;
}

template <class T>
std::vector<T> decode(const stream_config& enc_conf, const encoded& e) {
  const stream_config conf = decoder_conf(enc_conf);
  interpolation_decomposition<T> d(conf);
  sz3::byte_reader r(e.state);
  d.load(r);
  EXPECT_EQ(r.remaining(), 0U);
  std::vector<T> out(conf.num);
  d.decompress(conf, e.symbols, out.data());
  return out;
}

/// compress → save → load → decompress: symbols in range and one per
/// value, decoder bit-identical to the encoder's reconstruction, every
/// finite value within the bound, non-finite values kept verbatim.
template <class T>
void round_trip(const stream_config& conf, const std::vector<T>& original) {
  SCOPED_TRACE("N=" + std::to_string(conf.N) + " kind=" + std::to_string(static_cast<int>(conf.interpAlgo)) +
               " dir=" + std::to_string(conf.interpDirection) +
               " anchor=" + std::to_string(conf.interpAnchorStride));
  std::vector<T> work = original;
  const encoded e = encode(conf, work);
  ASSERT_EQ(e.symbols.size(), conf.num);
  for (int s : e.symbols) ASSERT_TRUE(s >= 0 && s < conf.quantbinCnt) << s;
  const std::vector<T> out = decode<T>(conf, e);
  for (std::size_t i = 0; i < conf.num; ++i) {
    ASSERT_TRUE(same_bits(out[i], work[i])) << "at " << i << ": " << out[i] << " vs " << work[i];
    if (std::isfinite(original[i])) {
      // The quantiser's own test: the difference taken in T.
      ASSERT_LE(std::fabs(static_cast<double>(out[i] - original[i])), conf.absErrorBound) << "at " << i;
    } else {
      ASSERT_TRUE(same_bits(out[i], original[i])) << "at " << i;
    }
  }
}

template <class T>
std::vector<T> smooth_field(const std::vector<std::size_t>& dims) {
  const std::size_t n = std::accumulate(dims.begin(), dims.end(), std::size_t{1}, std::multiplies<>());
  std::vector<T> v(n);
  for (std::size_t i = 0; i < n; ++i) {
    std::size_t rest = i;
    double phase = 0;
    for (std::size_t k = dims.size(); k-- > 0;) {
      phase += static_cast<double>(rest % dims[k]) * (0.07 + 0.05 * static_cast<double>(k));
      rest /= dims[k];
    }
    v[i] = static_cast<T>(100 + 20 * std::sin(phase) + 5 * std::cos(3.1 * phase));
  }
  return v;
}

template <class T>
std::vector<T> noisy_field(std::size_t n, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> g(0, 10);
  std::vector<T> v(n);
  for (auto& x : v) x = static_cast<T>(g(rng));
  return v;
}

/// Pseudo-random values far apart: with a tiny bound and two bins every
/// prediction misses, so the unpredictable list records the visiting order.
std::vector<double> order_probe(std::size_t n) {
  std::mt19937_64 rng(2024);
  std::vector<double> v(n);
  for (auto& x : v) x = static_cast<double>(rng() % 10000000) + 0.5;
  return v;
}

/// The unpredictable values at the end of the saved state (after the
/// settings of a decomposition of rank n).
std::vector<double> saved_unpredictables(const bytes& state, std::size_t rank) {
  sz3::byte_reader r(state);
  r.skip(8 * rank + 4 + 4 + 4 + 8 + 8 + 8, "settings");
  EXPECT_EQ(r.get<std::uint8_t>("uid"), 2);
  (void)r.get<double>("eb");
  (void)r.get<std::int32_t>("radius");
  const auto count = r.get<std::uint64_t>("count");
  return r.get_array<double>(count, "values");
}

std::vector<double> values_at(const std::vector<double>& v, const std::vector<std::size_t>& idx) {
  std::vector<double> out;
  for (std::size_t i : idx) out.push_back(v[i]);
  return out;
}

// ---------------------------------------------------------------------------
// Hand-worked example, 9 values, linear, eb 0.5, 8 bins (radius 4),
// alpha 2, beta 2. 9 <= 4096, so no anchor grid: the saved stride is 0 and
// x0 is quantised against 0 at eb 0.5. Levels: ceil(log2 9) = 4, strides 8,
// 4, 2, 1; level eb = 0.5 / min(2^(level-1), 2) = 0.25, 0.25, 0.25, 0.5.
// Bin: q = int(|d|/eb) + 1, half = q >> 1, symbol = 4 ± half, value =
// pred ± 2·half·eb; q >= 8 or an error > eb → symbol 0 (stored verbatim).
//   x0 = 3.1  pred 0:                    d=3.1   6.2→q7 h3 → 7, x0'=3.0
//   level 4 (n=2, last point copies):
//   x8 = 2.6  pred x0'=3.0:              d=-0.4  1.6→q2 h1 → 3, x8'=2.5
//   level 3 (n=3):
//   x4 = 10   pred (3.0+2.5)/2=2.75:     d=7.25  29 →q30    → 0, x4'=10
//   level 2 (n=5):
//   x2 = 6.5  pred (3+10)/2=6.5:         d=0     q1 h0      → 4, x2'=6.5
//   x6 = 5.9  pred (10+2.5)/2=6.25:      d=-0.35 1.4→q2 h1 → 3, x6'=5.75
//   level 1 (n=9, eb 0.5):
//   x1 = 4.0  pred (3+6.5)/2=4.75:       d=-0.75 1.5→q2 h1 → 3, x1'=3.75
//   x3 = 9.55 pred (6.5+10)/2=8.25:      d=1.3   2.6→q3 h1 → 5, x3'=9.25
//   x5 = 5.675 pred (10+5.75)/2=7.875:   d=-2.2  4.4→q5 h2 → 2, x5'=5.875
//   x7 = 6.025 pred (5.75+2.5)/2=4.125:  d=1.9   3.8→q4 h2 → 6, x7'=6.125
TEST(Sz3Interpolation, HandWorkedLinear1D) {
  const stream_config conf = make_conf({9}, 0.5, interpolation_kind::linear, 0, 4096, 2.0, 2.0, 8);
  std::vector<double> x{3.1, 4.0, 6.5, 9.55, 10.0, 5.675, 5.9, 6.025, 2.6};
  const encoded e = encode(conf, x);
  EXPECT_EQ(e.symbols, (std::vector<int>{7, 3, 0, 4, 3, 3, 5, 2, 6}));
  EXPECT_EQ(x, (std::vector<double>{3.0, 3.75, 6.5, 9.25, 10.0, 5.875, 5.75, 6.125, 2.5}));

  // Saved state: dims u64 · block size u32 · kind i32 · direction i32 ·
  // anchor stride u64 · alpha f64 · beta f64 · quantiser (uid u8, eb f64,
  // radius i32, count u64, values).
  bytes expect;
  sz3::byte_writer w(expect);
  w.put<std::uint64_t>(9);
  w.put<std::uint32_t>(32);
  w.put<std::int32_t>(0);
  w.put<std::int32_t>(0);
  w.put<std::uint64_t>(0);
  w.put<double>(2.0);
  w.put<double>(2.0);
  w.put<std::uint8_t>(2);
  w.put<double>(0.5);
  w.put<std::int32_t>(4);
  w.put<std::uint64_t>(1);
  w.put<double>(10.0);
  EXPECT_EQ(e.state.size(), 73U);
  EXPECT_EQ(e.state, expect);
  EXPECT_EQ(decode<double>(conf, e), x);
}

// Linear data t = 0..7 as a 1x1x8 field (N = 3, SZ3's plane sweep), linear,
// eb 0.25, alpha 0 (one bound for all levels), radius r = 32768. Levels 3..1.
//   x0 against 0: exact → r.
//   level 3 (n=2): x4 copies x0: d=4 → 16→q17 h8 → r+8.
//   level 2 (n=4): x2 = mid(x0,x4) = 2 → r; the last point x6 is
//     extrapolated from positions n-3, n-2 (x2, x4): -0.5·2+1.5·4 = 5, d=1
//     → 4→q5 h2 → r+2 (the 1-D routine would use x0, x4 and be exact).
//   level 1 (n=8): x1, x3, x5 midpoints exact → r; x7 from x5, x6:
//     -2.5+9 = 6.5, d=0.5 → 2→q3 h1 → r+1.
// Visiting order 0, 4, 2, 6, 1, 3, 5, 7.
TEST(Sz3Interpolation, HandWorkedLinearSweepExtrapolation) {
  const stream_config conf = make_conf({1, 1, 8}, 0.25, interpolation_kind::linear, 0, 32, 0.0, 1.0);
  std::vector<double> x{0, 1, 2, 3, 4, 5, 6, 7};
  const encoded e = encode(conf, x);
  const int r = 32768;
  // Symbols in visiting order 0, 4, 2, 6, 1, 3, 5, 7.
  EXPECT_EQ(e.symbols, (std::vector<int>{r, r + 8, r, r + 2, r, r, r, r + 1}));
  EXPECT_EQ(x, (std::vector<double>{0, 1, 2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(decode<double>(conf, e), x);
}

// x = t² for t = 0..7, cubic, eb 0.25, alpha 0, r = 32768.
//   x0 → r; level 3: x4 copies 0, d=16 → 64→q65 h32 → r+32.
//   level 2 (n=4, cubic boundary rules): position 1 (x2) mid(0,16)=8, d=-4
//     → 16→q17 h8 → r-8; position 3 (x6) extrapolated from x0, x4:
//     -0+24 = 24, d=12 → 48→q49 h24 → r+24.
//   level 1 (n=8): interior x3 = (-0+9·4+9·16-36)/16 = 9 exact → r;
//     x1 = (3·0+6·4-16)/8 = 1 → r; x5 = (-4+6·16+3·36)/8 = 25 → r;
//     last: 1-D routine (N=1) uses (3·4-10·16+15·36)/8 = 49 → r,
//     the sweep (N=3) extrapolates from x4, x6: -8+54 = 46, d=3
//     → 12→q13 h6 → r+6.
// Visiting order 0, 4, 2, 6, 3, 1, 5, 7 in both.
TEST(Sz3Interpolation, HandWorkedCubicBoundaries) {
  const int r = 32768;
  const std::vector<double> squares{0, 1, 4, 9, 16, 25, 36, 49};
  {
    const stream_config conf = make_conf({8}, 0.25, interpolation_kind::cubic, 0, 4096, 0.0, 1.0);
    std::vector<double> x = squares;
    const encoded e = encode(conf, x);
    EXPECT_EQ(e.symbols, (std::vector<int>{r, r + 32, r - 8, r + 24, r, r, r, r}));
    EXPECT_EQ(x, squares);
    EXPECT_EQ(decode<double>(conf, e), x);
  }
  {
    const stream_config conf = make_conf({1, 1, 8}, 0.25, interpolation_kind::cubic, 0, 32, 0.0, 1.0);
    std::vector<double> x = squares;
    const encoded e = encode(conf, x);
    EXPECT_EQ(e.symbols, (std::vector<int>{r, r + 32, r - 8, r + 24, r, r, r, r + 6}));
    EXPECT_EQ(x, squares);
    EXPECT_EQ(decode<double>(conf, e), x);
  }
}

// Visiting order of a 3x3x3 field, linear, direction 0 (dimensions swept
// 0, 1, 2), no anchors (3 <= 32). Levels 2 (s=2) and 1 (s=1), one block.
//   first: (0,0,0)=0
//   s=2, along dim 0 on the coarse (step 4) grid of dims 1, 2: n=2, the
//     last point copies: (2,0,0)=18
//   s=2, along dim 1, dim 0 fine (0, 2): (0,2,0)=6, (2,2,0)=24
//   s=2, along dim 2, dims 0, 1 fine: (0,0,2)=2, (0,2,2)=8, (2,0,2)=20,
//     (2,2,2)=26
//   s=1, along dim 0 at i=1, dims 1, 2 coarse (0, 2): 9, 11, 15, 17
//   s=1, along dim 1 at j=1, dim 0 all, dim 2 coarse: 3, 5, 12, 14, 21, 23
//   s=1, along dim 2 at k=1, dims 0, 1 all: 1, 4, 7, 10, 13, 16, 19, 22, 25
TEST(Sz3Interpolation, VisitingOrder3D) {
  const stream_config conf = make_conf({3, 3, 3}, 1e-3, interpolation_kind::linear, 0, 32, 1.25, 2.0, 2);
  const std::vector<double> original = order_probe(27);
  std::vector<double> x = original;
  const encoded e = encode(conf, x);
  EXPECT_EQ(e.symbols, std::vector<int>(27, 0));
  const std::vector<std::size_t> order{0,  18, 6,  24, 2, 8, 20, 26, 9,  11, 15, 17, 3, 5,
                                       12, 14, 21, 23, 1, 4, 7,  10, 13, 16, 19, 22, 25};
  EXPECT_EQ(saved_unpredictables(e.state, 3), values_at(original, order));
  EXPECT_EQ(decode<double>(conf, e), original);
}

// Visiting order of a 3x4 field, direction 1 (dimension 1 first), SZ3's
// line-by-line 2-D form. Levels 2 (s=2), 1.
//   first 0
//   s=2: lines along dim 1 at rows 0 (step 4): n=2, copy → (0,2)=2;
//        lines along dim 0 at columns 0, 2: (2,0)=8, (2,2)=10
//   s=1: lines along dim 1 at rows 0, 2 (n=4: mid, then extrapolated):
//        1, 3, 9, 11; lines along dim 0 at columns 0..3: 4, 5, 6, 7
TEST(Sz3Interpolation, VisitingOrder2D) {
  const stream_config conf = make_conf({3, 4}, 1e-3, interpolation_kind::cubic, 1, 128, 1.25, 2.0, 2);
  const std::vector<double> original = order_probe(12);
  std::vector<double> x = original;
  const encoded e = encode(conf, x);
  EXPECT_EQ(saved_unpredictables(e.state, 2), values_at(original, {0, 2, 8, 10, 1, 3, 9, 11, 4, 5, 6, 7}));
  EXPECT_EQ(decode<double>(conf, e), original);
}

// 1-D with anchor stride 4 on 10 values: anchors 0, 4, 8 stored verbatim
// (symbol 0); levels capped at log2(4)+1 = 3, minus the anchor level → 2, 1:
// s=2 (n=5): 2, 6; s=1 (n=10): 1, 3, 5, 7, then 9 extrapolated.
TEST(Sz3Interpolation, AnchorGrid1D) {
  const stream_config conf = make_conf({10}, 1e-3, interpolation_kind::linear, 0, 4, 1.25, 2.0, 2);
  const std::vector<double> original = order_probe(10);
  std::vector<double> x = original;
  const encoded e = encode(conf, x);
  EXPECT_EQ(saved_unpredictables(e.state, 1), values_at(original, {0, 4, 8, 2, 6, 1, 3, 5, 7, 9}));
  // The saved anchor stride is the one in use.
  sz3::byte_reader r(e.state);
  r.skip(8 + 4 + 4 + 4, "head");
  EXPECT_EQ(r.get<std::uint64_t>("anchor"), 4U);
  EXPECT_EQ(decode<double>(conf, e), original);
}

TEST(Sz3Interpolation, AnchorStrideDroppedWhenNoDimensionExceedsIt) {
  const stream_config conf = make_conf({100, 100}, 0.01, interpolation_kind::cubic, 0, 128);
  std::vector<float> x = smooth_field<float>(conf.dims);
  const encoded e = encode(conf, x);
  sz3::byte_reader r(e.state);
  r.skip(16 + 4 + 4 + 4, "head");
  EXPECT_EQ(r.get<std::uint64_t>("anchor"), 0U);
}

// ---------------------------------------------------------------------------
// Round trips.

struct shape_case {
  std::vector<std::size_t> dims;
  int anchor;
};

template <class T>
void sweep_cases(const std::vector<shape_case>& cases, const std::vector<int>& directions) {
  unsigned seed = 1;
  for (const auto& sc : cases) {
    for (auto kind : {interpolation_kind::linear, interpolation_kind::cubic}) {
      for (int dir : directions) {
        for (const auto& [alpha, beta] : {std::pair{1.25, 2.0}, std::pair{-1.0, -1.0}, std::pair{1.0, 1.0}}) {
          const stream_config smooth = make_conf(sc.dims, 0.01, kind, dir, sc.anchor, alpha, beta);
          round_trip<T>(smooth, smooth_field<T>(sc.dims));
          const stream_config noisy = make_conf(sc.dims, 0.5, kind, dir, sc.anchor, alpha, beta, 1024);
          round_trip<T>(noisy, noisy_field<T>(noisy.num, seed++));
        }
        const stream_config flat = make_conf(sc.dims, 1e-4, kind, dir, sc.anchor);
        round_trip<T>(flat, std::vector<T>(flat.num, static_cast<T>(42.5)));
      }
    }
  }
}

TEST(Sz3Interpolation, RoundTrip1D) {
  const std::vector<shape_case> cases{{{1}, 4096},    {{2}, 4096},  {{3}, 4096},    {{5}, 4096}, {{9}, 4},
                                      {{1000}, 4096}, {{1000}, 16}, {{4097}, 4096}, {{300}, 1},  {{77}, 0}};
  sweep_cases<float>(cases, {0});
  sweep_cases<double>(cases, {0});
}

TEST(Sz3Interpolation, RoundTrip2D) {
  const std::vector<shape_case> cases{{{1000, 1}, 128}, {{1, 1000}, 128},  {{2, 3}, 128},  {{5, 5}, 128},
                                      {{17, 33}, 128},  {{130, 129}, 128}, {{40, 70}, 16}, {{65, 3}, 0}};
  sweep_cases<float>(cases, {0, 1});
  sweep_cases<double>(cases, {0, 1});
}

TEST(Sz3Interpolation, RoundTrip3D) {
  const std::vector<shape_case> cases{{{1, 1, 1}, 32},    {{2, 3, 5}, 32},   {{17, 33, 9}, 32},
                                      {{33, 40, 35}, 32}, {{20, 19, 21}, 8}, {{1, 70, 3}, 16}};
  sweep_cases<float>(cases, {0, 3, 5});
  sweep_cases<double>(cases, {0, 1, 2, 4});
}

TEST(Sz3Interpolation, RoundTrip4D) {
  const std::vector<shape_case> cases{{{5, 6, 7, 8}, 16},
                                      {{17, 3, 9, 20}, 16},
                                      {{18, 17, 16, 33}, 16},
                                      {{2, 2, 2, 2}, 16},
                                      {{9, 10, 11, 12}, 4}};
  sweep_cases<float>(cases, {0, 7, 23});
  sweep_cases<double>(cases, {0, 11, 16});
}

TEST(Sz3Interpolation, EveryDirection) {
  for (int dir = 0; dir < 6; ++dir) {
    const stream_config c = make_conf({9, 12, 10}, 0.05, interpolation_kind::cubic, dir, 4);
    round_trip<float>(c, smooth_field<float>(c.dims));
  }
  for (int dir = 0; dir < 24; ++dir) {
    const stream_config c = make_conf({6, 7, 5, 9}, 0.05, interpolation_kind::linear, dir, 16);
    round_trip<double>(c, smooth_field<double>(c.dims));
  }
}

TEST(Sz3Interpolation, NonFiniteValuesBecomeUnpredictable) {
  for (std::size_t rank = 1; rank <= 4; ++rank) {
    std::vector<std::size_t> dims(rank, rank == 1 ? 200 : (rank == 2 ? 20 : 7));
    for (auto kind : {interpolation_kind::linear, interpolation_kind::cubic}) {
      const stream_config c = make_conf(dims, 0.01, kind, 0, rank == 1 ? 4096 : 4);
      std::vector<float> f = smooth_field<float>(dims);
      f[0] = std::numeric_limits<float>::quiet_NaN();
      f[3] = std::numeric_limits<float>::infinity();
      f[f.size() / 2] = -std::numeric_limits<float>::infinity();
      f[f.size() - 1] = std::numeric_limits<float>::quiet_NaN();
      round_trip<float>(c, f);
      std::vector<double> d(f.begin(), f.end());
      d[5] = std::numeric_limits<double>::max();
      round_trip<double>(c, d);
    }
  }
}

TEST(Sz3Interpolation, UnpredictablesAccumulateAcrossCalls) {
  // SZ3's tuning runs several blocks through one decomposition and saves
  // once: the unpredictable list keeps growing.
  const stream_config c = make_conf({10}, 1e-3, interpolation_kind::linear, 0, 4096, 1.25, 2.0, 2);
  interpolation_decomposition<double> d(c);
  std::vector<double> a = order_probe(10), b = order_probe(10);
  (void)d.compress(c, a.data());
  (void)d.compress(c, b.data());
  bytes state;
  sz3::byte_writer w(state);
  d.save(w);
  EXPECT_EQ(saved_unpredictables(state, 1).size(), 20U);
}

TEST(Sz3Interpolation, LargeFieldPerformanceSmoke) {
  const stream_config c = make_conf({200, 250, 200}, 1e-3, interpolation_kind::cubic, 0, 32);
  round_trip<float>(c, smooth_field<float>(c.dims));
}

// ---------------------------------------------------------------------------
// Hostile input.

encoded sample_state() {
  const stream_config c = make_conf({5, 6, 7}, 0.01, interpolation_kind::cubic, 2, 4);
  std::vector<double> x = smooth_field<double>(c.dims);
  return encode(c, x);
}

void expect_load_fails(const bytes& state, std::size_t rank = 3) {
  stream_config c;
  c.N = static_cast<std::uint8_t>(rank);
  c.dims = std::vector<std::size_t>{5, 6, 7};
  c.dims.resize(rank, 1);
  interpolation_decomposition<double> d(c);
  sz3::byte_reader r(state);
  EXPECT_THROW(d.load(r), tensogram::encoding_error);
}

TEST(Sz3Interpolation, TruncatedStateFails) {
  const encoded e = sample_state();
  for (std::size_t cut = 0; cut < e.state.size(); ++cut) {
    expect_load_fails(bytes(e.state.begin(), e.state.begin() + static_cast<std::ptrdiff_t>(cut)));
  }
}

TEST(Sz3Interpolation, CorruptSettingsFail) {
  const encoded e = sample_state();
  auto patched = [&](std::size_t at, auto value) {
    bytes s = e.state;
    std::memcpy(s.data() + at, &value, sizeof(value));
    return s;
  };
  // Layout: dims 0..23, block size 24, kind 28, direction 32, anchor 36,
  // alpha 44, beta 52, quantiser uid 60, eb 61, radius 69, count 73.
  expect_load_fails(patched(0, std::uint64_t{0}));    // zero dimension
  expect_load_fails(patched(24, std::uint32_t{0}));   // block size 0
  expect_load_fails(patched(24, std::uint32_t{33}));  // odd block size
  expect_load_fails(patched(28, std::int32_t{2}));    // unknown kind
  expect_load_fails(patched(32, std::int32_t{6}));    // direction >= 3!
  expect_load_fails(patched(32, std::int32_t{-1}));
  expect_load_fails(patched(36, std::uint64_t{12}));  // not a power of two
  expect_load_fails(patched(44, std::numeric_limits<double>::quiet_NaN()));
  expect_load_fails(patched(52, std::numeric_limits<double>::infinity()));
  expect_load_fails(patched(60, std::uint8_t{3}));         // quantiser uid
  expect_load_fails(patched(61, -1.0));                    // quantiser eb
  expect_load_fails(patched(69, std::int32_t{0}));         // radius
  expect_load_fails(patched(73, std::uint64_t{1} << 40));  // unpredictable count
  // Direction valid for N = 3 but not for N = 2 (same bytes read as 2-D).
  {
    const stream_config c = make_conf({5, 6}, 0.01, interpolation_kind::linear, 1, 4);
    std::vector<double> x = smooth_field<double>(c.dims);
    encoded e2 = encode(c, x);
    std::int32_t two = 2;
    std::memcpy(e2.state.data() + 16 + 4 + 4, &two, 4);
    expect_load_fails(e2.state, 2);
  }
}

TEST(Sz3Interpolation, BadDecodeInputsFail) {
  const stream_config enc = make_conf({5, 6, 7}, 0.01, interpolation_kind::cubic, 2, 4);
  std::vector<double> x = smooth_field<double>(enc.dims);
  const encoded e = encode(enc, x);
  const stream_config conf = decoder_conf(enc);
  auto loaded = [&]() {
    auto d = std::make_unique<interpolation_decomposition<double>>(conf);
    sz3::byte_reader r(e.state);
    d->load(r);
    return d;
  };
  std::vector<double> out(conf.num);
  {  // too few / too many symbols
    std::vector<int> s = e.symbols;
    s.pop_back();
    EXPECT_THROW(loaded()->decompress(conf, s, out.data()), tensogram::encoding_error);
    s = e.symbols;
    s.push_back(1);
    EXPECT_THROW(loaded()->decompress(conf, s, out.data()), tensogram::encoding_error);
  }
  {  // symbol out of range
    std::vector<int> s = e.symbols;
    s[10] = 65536;
    EXPECT_THROW(loaded()->decompress(conf, s, out.data()), tensogram::encoding_error);
    s[10] = -3;
    EXPECT_THROW(loaded()->decompress(conf, s, out.data()), tensogram::encoding_error);
  }
  {  // more zero symbols than stored unpredictable values
    std::vector<int> s(conf.num, 0);
    EXPECT_THROW(loaded()->decompress(conf, s, out.data()), tensogram::encoding_error);
  }
  {  // saved dimensions differ from the configuration's
    stream_config other = conf;
    other.dims = {5, 7, 6};
    EXPECT_THROW(loaded()->decompress(other, e.symbols, out.data()), tensogram::encoding_error);
  }
}

TEST(Sz3Interpolation, BadEncoderSettingsFail) {
  std::vector<float> x(60, 1.0F);
  auto attempt = [&](stream_config c) {
    interpolation_decomposition<float> d(c);
    EXPECT_THROW((void)d.compress(c, x.data()), tensogram::encoding_error);
  };
  attempt(make_conf({6, 10}, 0.1, interpolation_kind::linear, 2, 16));             // direction >= 2!
  attempt(make_conf({6, 10}, 0.1, interpolation_kind::linear, 0, -1));             // unresolved stride
  attempt(make_conf({6, 10}, 0.1, interpolation_kind::linear, 0, 24));             // not a power of two
  attempt(make_conf({6, 10}, 0.0, interpolation_kind::linear, 0, 16));             // no error bound
  attempt(make_conf({6, 10}, 0.1, interpolation_kind::linear, 0, 16, 2.0, -1.0));  // negative level bound
}

}  // namespace
