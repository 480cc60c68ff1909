// SZ3's Lorenzo/regression decomposition (docs/sz3-format.md §6).
//
// Every floating-point expression below is evaluated in the order and the
// precision SZ3 uses (float for the regression plane, T for Lorenzo stencils,
// double for the selection error sums): the encoder's reconstructed values
// feed later predictions, and a decoder must land on the same bits as SZ3's.
// A fused multiply-add rounds once and would change those bits, so
// CMakeLists.txt compiles the sz3 sources with -ffp-contract=off
// (docs/sz3-format.md §4).

#include "lorenzo_regression.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>

namespace tensogram::codecs::sz3 {
namespace {

// Block selection symbols (§6.3).
constexpr int kLorenzo = 0;
constexpr int kRegression = 1;
constexpr int kLorenzo2 = 2;
constexpr int kSelectionStates = 8;  // SZ3's stateNum for the selection stream

// Regression coefficients are quantised against the previous regression
// block's with a fixed radius (§6.5).
constexpr int kCoefficients = 4;
constexpr int kCoefficientRadius = 32768;
constexpr int kCoefficientStates = 2 * kCoefficientRadius;

// The reconstruction buffer keeps two zero / previous layers in front of
// every axis so that 2-layer stencils never leave it (§6.4).
constexpr int kPadding = 2;

constexpr std::size_t kParamsImageSize = 44;

// Noise added to a Lorenzo error estimate per sampled point, in units of the
// error bound, by prediction dimension (SZ2's empirical constants).
struct lorenzo_noise {
  double one_layer;
  double two_layer;
};
constexpr std::array<lorenzo_noise, 3> kNoise{{{0.5, 1.08}, {0.81, 2.76}, {1.22, 6.8}}};

// A stencil term: coefficient times the value dx planes, dy rows and dz
// columns back. The tables list terms in SZ3's summation order.
struct term {
  int coef;
  int dx, dy, dz;
};

constexpr std::array<term, 1> kLorenzo1d{{{1, 0, 0, 1}}};
constexpr std::array<term, 2> kLorenzo1d2{{{2, 0, 0, 1}, {-1, 0, 0, 2}}};
// SZ3's "2-D" stencils combine the slowest axis (x) with the fastest (z).
constexpr std::array<term, 3> kLorenzo2d{{{1, 0, 0, 1}, {1, 1, 0, 0}, {-1, 1, 0, 1}}};
constexpr std::array<term, 8> kLorenzo2d2{{{2, 1, 0, 0},
                                           {-1, 2, 0, 0},
                                           {2, 0, 0, 1},
                                           {-4, 1, 0, 1},
                                           {2, 2, 0, 1},
                                           {-1, 0, 0, 2},
                                           {2, 1, 0, 2},
                                           {-1, 2, 0, 2}}};
constexpr std::array<term, 7> kLorenzo3d{
    {{1, 0, 0, 1}, {1, 0, 1, 0}, {1, 1, 0, 0}, {-1, 0, 1, 1}, {-1, 1, 0, 1}, {-1, 1, 1, 0}, {1, 1, 1, 1}}};

// The 2-layer 3-D stencil: every (dx, dy, dz) in {0,1,2}³ but the origin, z
// fastest, weighted -w(dx)·w(dy)·w(dz) with w = (1, -2, 1).
constexpr std::array<term, 26> make_lorenzo3d2() {
  constexpr std::array<int, 3> w{1, -2, 1};
  std::array<term, 26> terms{};
  std::size_t n = 0;
  for (int dx = 0; dx < 3; ++dx)
    for (int dy = 0; dy < 3; ++dy)
      for (int dz = 0; dz < 3; ++dz)
        if (dx + dy + dz != 0) terms[n++] = term{-w[dx] * w[dy] * w[dz], dx, dy, dz};
  return terms;
}
constexpr std::array<term, 26> kLorenzo3d2 = make_lorenzo3d2();

/// A stencil bound to the strides of one array.
template <class T, std::size_t K>
class stencil {
 public:
  stencil(const std::array<term, K>& terms, std::size_t plane, std::size_t row) {
    for (std::size_t k = 0; k < K; ++k) {
      coef_[k] = static_cast<T>(terms[k].coef);
      offset_[k] = -static_cast<std::ptrdiff_t>(static_cast<std::size_t>(terms[k].dx) * plane +
                                                static_cast<std::size_t>(terms[k].dy) * row +
                                                static_cast<std::size_t>(terms[k].dz));
    }
  }
  // Left to right, each product in T: a - b equals a + (-1·b) exactly, so
  // signed coefficients reproduce SZ3's mix of + and -.
  T operator()(const T* p) const {
    T acc = coef_[0] * p[offset_[0]];
    for (std::size_t k = 1; k < K; ++k) acc = acc + coef_[k] * p[offset_[k]];
    return acc;
  }

 private:
  std::array<T, K> coef_{};
  std::array<std::ptrdiff_t, K> offset_{};
};

/// Calls `f` with the Lorenzo stencil SZ3 picks for `pred_dim` (3, 2, else 1)
/// and the layer count, bound to the given strides.
template <class T, class F>
void with_lorenzo(int pred_dim, bool two_layer, std::size_t plane, std::size_t row, F&& f) {
  if (pred_dim == 3) {
    if (two_layer) return f(stencil<T, 26>(kLorenzo3d2, plane, row));
    return f(stencil<T, 7>(kLorenzo3d, plane, row));
  }
  if (pred_dim == 2) {
    if (two_layer) return f(stencil<T, 8>(kLorenzo2d2, plane, row));
    return f(stencil<T, 3>(kLorenzo2d, plane, row));
  }
  if (two_layer) return f(stencil<T, 2>(kLorenzo1d2, plane, row));
  return f(stencil<T, 1>(kLorenzo1d, plane, row));
}

/// Block partition of a d1×d2×d3 field and the reconstruction buffer's shape
/// (§6.4): one block row of planes plus the padding, each plane padded in y
/// and z.
struct grid3 {
  std::size_t d1 = 0, d2 = 0, d3 = 0;
  std::size_t block = 1;
  std::size_t nx = 0, ny = 0, nz = 0;
  std::size_t plane = 0, row = 0;          // data strides
  std::size_t buf_plane = 0, buf_row = 0;  // buffer strides
  std::size_t buf_planes = 0;              // planes held by the buffer

  grid3(const std::vector<std::size_t>& dims, std::size_t block_size)
      : d1(dims[0]), d2(dims[1]), d3(dims[2]), block(block_size) {
    nx = (d1 - 1) / block + 1;
    ny = (d2 - 1) / block + 1;
    nz = (d3 - 1) / block + 1;
    plane = d2 * d3;
    row = d3;
    buf_row = d3 + kPadding;
    buf_plane = (d2 + kPadding) * buf_row;
    // SZ3 holds block + padding planes; with a single block row the planes
    // past d1 are never touched, so fewer suffice.
    buf_planes = std::min(block, d1) + kPadding;
  }
  [[nodiscard]] std::size_t blocks() const { return nx * ny * nz; }
  [[nodiscard]] std::size_t extent(std::size_t index, std::size_t dim) const {
    return (index + 1) * block < dim ? block : dim - index * block;
  }
};

struct block_view {
  int sx, sy, sz;
  std::size_t data;    // offset of the block's first value in the field
  std::size_t buffer;  // offset of its first value in the buffer
};

/// Visits the points of block `b` in SZ3's order (local raster, z fastest).
/// `value(i, j, k, field, at)` returns the reconstruction of point (i, j, k)
/// — `field` is its place in the field (read by the encoder only: the
/// decoder's output is uninitialised), `at` its place in the reconstruction
/// buffer — which is stored in both.
template <class T, class F>
void walk_block(const grid3& g, const block_view& b, std::vector<T>& buffer, T* block, F&& value) {
  for (int i = 0; i < b.sx; ++i) {
    for (int j = 0; j < b.sy; ++j) {
      T* d = block + static_cast<std::size_t>(i) * g.plane + static_cast<std::size_t>(j) * g.row;
      T* r = buffer.data() + b.buffer + static_cast<std::size_t>(i) * g.buf_plane +
             static_cast<std::size_t>(j) * g.buf_row;
      for (int k = 0; k < b.sz; ++k) {
        const T v = value(i, j, k, d + k, r + k);
        r[k] = v;
        d[k] = v;
      }
    }
  }
}

/// Visits the blocks x-slowest, z-fastest (§6.3); between block rows the last
/// two reconstructed planes move to the buffer's front padding.
template <class T, class F>
void for_each_block(const grid3& g, std::vector<T>& buffer, F&& visit) {
  for (std::size_t bx = 0; bx < g.nx; ++bx) {
    for (std::size_t by = 0; by < g.ny; ++by) {
      for (std::size_t bz = 0; bz < g.nz; ++bz) {
        const block_view b{
            static_cast<int>(g.extent(bx, g.d1)), static_cast<int>(g.extent(by, g.d2)),
            static_cast<int>(g.extent(bz, g.d3)),
            bx * g.block * g.plane + by * g.block * g.row + bz * g.block,
            kPadding * g.buf_plane + (kPadding + by * g.block) * g.buf_row + kPadding + bz * g.block};
        visit(b);
      }
    }
    // memmove: with a block size of 1 the source and target planes overlap.
    if (bx + 1 < g.nx) {
      std::memmove(buffer.data(), buffer.data() + g.block * g.buf_plane, kPadding * g.buf_plane * sizeof(T));
    }
  }
}

/// The regression plane at (x, y, z) of a block, in float as SZ3 computes it.
inline float plane_at(const float* c, int x, int y, int z) {
  return c[0] * static_cast<float>(x) + c[1] * static_cast<float>(y) + c[2] * static_cast<float>(z) + c[3];
}

/// Least-squares plane through a block (SZ2's closed form on a regular grid),
/// accumulated in float exactly as SZ3 does (§6.5).
template <class T>
void fit_plane(const T* block, int sx, int sy, int sz, std::size_t plane, std::size_t row, float* c) {
  float fx = 0, fy = 0, fz = 0, f = 0;
  for (int i = 0; i < sx; ++i) {
    float sum_x = 0;
    for (int j = 0; j < sy; ++j) {
      float sum_y = 0;
      const T* p = block + static_cast<std::size_t>(i) * plane + static_cast<std::size_t>(j) * row;
      for (int k = 0; k < sz; ++k) {
        const T v = p[k];
        sum_y = static_cast<float>(sum_y + v);
        fz = static_cast<float>(fz + v * static_cast<T>(k));
      }
      fy = fy + sum_y * static_cast<float>(j);
      sum_x = sum_x + sum_y;
    }
    fx = fx + sum_x * static_cast<float>(i);
    f = f + sum_x;
  }
  const auto volume = static_cast<std::int64_t>(sx) * sy * sz;
  const auto inv = static_cast<float>(1.0 / static_cast<double>(volume));
  c[0] = (2 * fx / static_cast<float>(sx - 1) - f) * 6 * inv / static_cast<float>(sx + 1);
  c[1] = (2 * fy / static_cast<float>(sy - 1) - f) * 6 * inv / static_cast<float>(sy + 1);
  c[2] = (2 * fz / static_cast<float>(sz - 1) - f) * 6 * inv / static_cast<float>(sz + 1);
  c[3] = f * inv - (static_cast<float>(sx - 1) * c[0] / 2 + static_cast<float>(sy - 1) * c[1] / 2 +
                    static_cast<float>(sz - 1) * c[2] / 2);
}

/// Quantises one coefficient against its predecessor (§6.5): bins of width
/// 2·eb around `pred`, index 0 meaning "stored verbatim". `out` receives the
/// value the decoder will see.
int quantize_coefficient(float pred, float value, double eb, double inv_eb, float& out,
                         std::vector<float>& verbatim) {
  const auto diff = static_cast<double>(value - pred);
  double scaled = std::fabs(diff) * inv_eb + 1;
  if (scaled < kCoefficientStates) {
    if (!(diff > 0)) scaled = -scaled;
    const int index = static_cast<int>(scaled / 2) + kCoefficientRadius;
    const auto decoded = static_cast<float>(static_cast<double>(pred) +
                                            static_cast<double>(2 * (index - kCoefficientRadius)) * eb);
    out = decoded;
    if (std::fabs(decoded - value) <= eb) return index;
  }
  out = value;
  verbatim.push_back(value);
  return 0;
}

float recover_coefficient(float pred, double eb, int index) {
  return static_cast<float>(static_cast<double>(pred) +
                            static_cast<double>(2 * (index - kCoefficientRadius)) * eb);
}

std::size_t checked_volume(const std::vector<std::size_t>& dims) {
  std::size_t v = 1;
  for (std::size_t d : dims) {
    if (d == 0) fail("lorenzo/regression: zero-length dimension");
    if (v > std::numeric_limits<std::size_t>::max() / d) fail("lorenzo/regression: dimensions overflow");
    v *= d;
  }
  return v;
}

void check_symbols(std::span<const int> symbols, int limit) {
  const auto bad =
      std::find_if(symbols.begin(), symbols.end(), [limit](int s) { return s < 0 || s >= limit; });
  if (bad != symbols.end()) {
    fail("lorenzo/regression: quantisation symbol " + std::to_string(*bad) + " at index " +
         std::to_string(bad - symbols.begin()) + " outside [0, " + std::to_string(limit) + ")");
  }
}

template <class T>
void check_encoder_settings(const stream_config& conf) {
  if (!(conf.absErrorBound > 0) || !std::isfinite(conf.absErrorBound)) {
    fail("lorenzo/regression: error bound is not a positive number");
  }
  if (conf.quantbinCnt / 2 <= 0 || conf.quantbinCnt / 2 > (1 << 30)) {
    fail("lorenzo/regression: quantbinCnt " + std::to_string(conf.quantbinCnt) + " out of range");
  }
}

}  // namespace

bool lorenzo_regression_supported(const stream_config& conf) {
  return lorenzo_regression_unsupported_reason(conf) == nullptr;
}

const char* lorenzo_regression_unsupported_reason(const stream_config& conf) {
  // SZ_compress_LorenzoReg's condition for the decomposition (SZ3 3.3.2:
  // 3-D only); everything else goes to SZ3's predictor-iterating
  // compressor, whose 1-D Lorenzo form is composed_lorenzo.hpp.
  if (conf.N == 1) return "1-D data goes to SZ3's composed Lorenzo compressor, not this decomposition";
  if (conf.N == 3) {
    if (conf.regression2) return "3-D Lorenzo/regression with second-order regression enabled";
    return nullptr;
  }
  return "Lorenzo/regression on data that is neither 1-D nor 3-D";
}

template <class T>
lorenzo_regression_decomposition<T>::lorenzo_regression_decomposition(const stream_config& conf,
                                                                      const int_stream_coder* coder)
    : n_dims_(conf.N), dims_(conf.dims), quantizer_(conf.absErrorBound, conf.quantbinCnt / 2), coder_(coder) {
  if (n_dims_ != 3) fail("lorenzo/regression decomposition supports only 3-D data");
  if (dims_.size() != 3) fail("lorenzo/regression: 3-D data needs three dimensions");
}

template <class T>
std::vector<int> lorenzo_regression_decomposition<T>::compress(const stream_config& conf, T* data) {
  check_encoder_settings<T>(conf);
  quantizer_ = linear_quantizer<T>(conf.absErrorBound, conf.quantbinCnt / 2);
  return compress_3d(conf, data);
}

template <class T>
void lorenzo_regression_decomposition<T>::decompress(const stream_config& conf, std::span<const int> symbols,
                                                     T* out) {
  check_symbols(symbols, quantizer_.symbol_count());
  if (checked_volume(dims_) != conf.num)
    fail("lorenzo/regression: dimensions do not multiply to the value count");
  decompress_3d(symbols, out);
}

template <class T>
void lorenzo_regression_decomposition<T>::save(byte_writer& w) const {
  save_3d(w);
  quantizer_.save(w);
}

template <class T>
void lorenzo_regression_decomposition<T>::load(byte_reader& r) {
  load_3d(r);
  quantizer_.load(r);
}

// --- N = 3 (§6.2-6.5): SZ2's blockwise predictor selection -----------------

namespace {

/// SZ3's meta_params as the encoder builds it from the configuration.
template <class P>
P params_from(const stream_config& conf) {
  P p;
  p.block_size = conf.blockSize;
  p.prediction_dim = conf.predDim;
  p.use_lorenzo = conf.lorenzo;
  p.use_lorenzo_2layer = conf.lorenzo2;
  p.use_regression = conf.regression;
  p.padding_layer = kPadding;
  p.capacity = 0;
  p.eb_base = 1;
  p.eb_1 = static_cast<float>(p.block_size);
  p.sample_ratio = 1;
  p.lossless = true;
  // In float, left to right: base · eb / 4 / block size.
  const auto eb = static_cast<float>(conf.absErrorBound);
  p.eb_linear = p.eb_base * eb / static_cast<float>(kCoefficients) / static_cast<float>(p.block_size);
  p.eb_independent = p.eb_1 * p.eb_linear;
  return p;
}

// Field offsets inside the 44-byte image (x86-64 layout of meta_params).
constexpr std::size_t kOffBlockSize = 0, kOffPredDim = 4, kOffUseLorenzo = 8, kOffUseLorenzo2 = 9,
                      kOffUseRegression = 10, kOffPadding = 12, kOffCapacity = 16, kOffEbIndependent = 20,
                      kOffEbLinear = 24, kOffEbBase = 28, kOffEb1 = 32, kOffSampleRatio = 36,
                      kOffLossless = 40;

template <class V>
void put_field(std::array<std::byte, kParamsImageSize>& image, std::size_t at, V v) {
  std::memcpy(image.data() + at, &v, sizeof(V));
}
template <class V>
V get_field(std::span<const std::byte> image, std::size_t at) {
  V v;
  std::memcpy(&v, image.data() + at, sizeof(V));
  return v;
}

/// SZ3's sampled error sums for one block (§6.3).
struct selection_errors {
  double lorenzo = 0, lorenzo2 = 0, regression = 0;
};

}  // namespace

template <class T>
std::vector<int> lorenzo_regression_decomposition<T>::compress_3d(const stream_config& conf, T* data) {
  if (conf.blockSize <= 0) fail("lorenzo/regression: block size must be positive");
  const std::size_t volume = checked_volume(dims_);
  if (volume != conf.num) fail("lorenzo/regression: dimensions do not multiply to the value count");

  params_ = params_from<block_params>(conf);
  precision_ = conf.absErrorBound;
  const grid3 g(dims_, static_cast<std::size_t>(params_.block_size));

  std::vector<int> symbols(volume);
  selection_.assign(g.blocks(), kLorenzo);
  coefficient_symbols_.clear();
  coefficient_verbatim_.clear();
  coefficients_.clear();
  regression_blocks_ = 0;

  // Coefficient bins: eb_linear for the three slopes, eb_independent for the
  // offset, held in T as SZ3 holds them.
  std::array<double, kCoefficients> coef_eb{};
  std::array<double, kCoefficients> coef_inv_eb{};
  for (int i = 0; i < kCoefficients; ++i) {
    const T eb = static_cast<T>(i + 1 < kCoefficients ? params_.eb_linear : params_.eb_independent);
    coef_eb[i] = static_cast<double>(eb);
    coef_inv_eb[i] = static_cast<double>(static_cast<T>(1.0 / static_cast<double>(eb)));
  }
  std::array<float, kCoefficients> previous{};  // the first block is predicted from zeros
  std::array<float, kCoefficients> current{};

  const int pred_dim = params_.prediction_dim;
  const T precision = static_cast<T>(conf.absErrorBound);
  const lorenzo_noise& noise_units = kNoise[pred_dim == 3 ? 2 : pred_dim == 2 ? 1 : 0];
  const auto noise1 = static_cast<T>(noise_units.one_layer * static_cast<double>(precision));
  const auto noise2 = static_cast<T>(noise_units.two_layer * static_cast<double>(precision));

  std::vector<T> buffer(g.buf_planes * g.buf_plane, T(0));
  int* out = symbols.data();
  std::size_t block_index = 0;

  // SZ3 estimates on the original values: each estimate reads only points
  // inside the current block, and a block's points are overwritten only
  // after its estimate, so overwriting `data` as we go changes nothing.
  auto estimate = [&](const T* block, int min_size, bool use_regression) {
    selection_errors e;
    auto sample = [&](int x, int y, int z) {
      const T* p = block + static_cast<std::size_t>(x) * g.plane + static_cast<std::size_t>(y) * g.row +
                   static_cast<std::size_t>(z);
      const T value = *p;
      if (use_regression)
        e.regression += std::fabs(value - static_cast<T>(plane_at(current.data(), x, y, z)));
      double predicted1 = 0, predicted2 = 0;
      T n1 = 0, n2 = 0;
      if (params_.use_lorenzo_2layer) {
        with_lorenzo<T>(pred_dim, true, g.plane, g.row, [&](const auto& st) { predicted2 = st(p); });
        n2 = noise2;
      }
      if (params_.use_lorenzo) {
        with_lorenzo<T>(pred_dim, false, g.plane, g.row, [&](const auto& st) { predicted1 = st(p); });
        n1 = noise1;
      }
      e.lorenzo += std::fabs(static_cast<double>(value) - predicted1) + static_cast<double>(n1);
      e.lorenzo2 += std::fabs(static_cast<double>(value) - predicted2) + static_cast<double>(n2);
    };
    // The sample: two anti-diagonals through the block's inner cube, then
    // its far corner.
    for (int i = 2; i < min_size - 1; ++i) {
      const int j = min_size - i;
      sample(i, i, i);
      sample(i, i, j);
      sample(i, j, i);
      sample(i, j, j);
    }
    if (min_size > 3) sample(min_size - 1, min_size - 1, min_size - 1);

    // Ties favour regression over 1-layer Lorenzo, and 2-layer over both.
    const bool l1 = params_.use_lorenzo, l2 = params_.use_lorenzo_2layer;
    if (use_regression && (!l1 || e.regression <= e.lorenzo) && (!l2 || e.regression < e.lorenzo2)) {
      return kRegression;
    }
    if (l2 && (!l1 || e.lorenzo2 <= e.lorenzo) && (!use_regression || e.lorenzo2 <= e.regression))
      return kLorenzo2;
    return kLorenzo;
  };

  for_each_block(g, buffer, [&](const block_view& b) {
    T* block = data + b.data;
    const int min_size = std::min({b.sx, b.sy, b.sz});
    const bool use_regression = params_.use_regression && min_size >= 2;
    if (use_regression) fit_plane(block, b.sx, b.sy, b.sz, g.plane, g.row, current.data());
    const int choice = estimate(block, min_size, use_regression);
    selection_[block_index++] = choice;

    if (choice == kRegression) {
      for (int c = 0; c < kCoefficients; ++c) {
        coefficient_symbols_.push_back(quantize_coefficient(
            previous[c], current[c], coef_eb[c], coef_inv_eb[c], current[c], coefficient_verbatim_));
      }
      previous = current;
      ++regression_blocks_;
      walk_block(g, b, buffer, block, [&](int i, int j, int k, const T* field, T*) {
        T v = *field;
        *out++ = quantizer_.quantize_and_overwrite(v, static_cast<T>(plane_at(current.data(), i, j, k)));
        return v;
      });
      return;
    }
    with_lorenzo<T>(pred_dim, choice == kLorenzo2, g.buf_plane, g.buf_row, [&](const auto& st) {
      walk_block(g, b, buffer, block, [&](int, int, int, const T* field, T* at) {
        T v = *field;
        *out++ = quantizer_.quantize_and_overwrite(v, st(at));
        return v;
      });
    });
  });
  return symbols;
}

template <class T>
void lorenzo_regression_decomposition<T>::decompress_3d(std::span<const int> symbols, T* out) {
  const grid3 g(dims_, static_cast<std::size_t>(params_.block_size));
  if (selection_.size() != g.blocks() || coefficients_.size() != regression_blocks_ * kCoefficients) {
    fail("lorenzo/regression: block state not loaded");
  }
  if (symbols.size() != g.d1 * g.d2 * g.d3) {
    fail("lorenzo/regression: " + std::to_string(symbols.size()) + " symbols for " +
         std::to_string(g.d1 * g.d2 * g.d3) + " values");
  }
  std::vector<T> buffer(g.buf_planes * g.buf_plane, T(0));
  const int* in = symbols.data();
  const float* coefficients = coefficients_.data();
  std::size_t block_index = 0;
  const int pred_dim = params_.prediction_dim;

  for_each_block(g, buffer, [&](const block_view& b) {
    const int choice = selection_[block_index++];
    T* block = out + b.data;
    if (choice == kRegression) {
      const float* c = coefficients;
      coefficients += kCoefficients;
      walk_block(g, b, buffer, block, [&](int i, int j, int k, const T*, T*) {
        const int s = *in++;
        return s == 0 ? quantizer_.recover_unpredictable()
                      : quantizer_.recover_predicted(static_cast<T>(plane_at(c, i, j, k)), s);
      });
      return;
    }
    with_lorenzo<T>(pred_dim, choice == kLorenzo2, g.buf_plane, g.buf_row, [&](const auto& st) {
      walk_block(g, b, buffer, block, [&](int, int, int, const T*, T* at) {
        const int s = *in++;
        return s == 0 ? quantizer_.recover_unpredictable() : quantizer_.recover_predicted(st(at), s);
      });
    });
  });
}

template <class T>
void lorenzo_regression_decomposition<T>::save_3d(byte_writer& w) const {
  if (coder_ == nullptr) fail("lorenzo/regression: 3-D streams need a Huffman coder");
  std::array<std::byte, kParamsImageSize> image{};  // padding bytes zero
  put_field<std::int32_t>(image, kOffBlockSize, params_.block_size);
  put_field<std::int32_t>(image, kOffPredDim, params_.prediction_dim);
  put_field<std::uint8_t>(image, kOffUseLorenzo, params_.use_lorenzo ? 1 : 0);
  put_field<std::uint8_t>(image, kOffUseLorenzo2, params_.use_lorenzo_2layer ? 1 : 0);
  put_field<std::uint8_t>(image, kOffUseRegression, params_.use_regression ? 1 : 0);
  put_field<std::int32_t>(image, kOffPadding, params_.padding_layer);
  put_field<std::int32_t>(image, kOffCapacity, params_.capacity);
  put_field<float>(image, kOffEbIndependent, params_.eb_independent);
  put_field<float>(image, kOffEbLinear, params_.eb_linear);
  put_field<float>(image, kOffEbBase, params_.eb_base);
  put_field<float>(image, kOffEb1, params_.eb_1);
  put_field<float>(image, kOffSampleRatio, params_.sample_ratio);
  put_field<std::uint8_t>(image, kOffLossless, params_.lossless ? 1 : 0);
  w.put_bytes(image);

  w.put<double>(precision_);
  w.put<std::uint8_t>(0);  // mean mode: never used by SZ3 3.3
  w.put<T>(T(0));          // its mean
  w.put<std::uint64_t>(regression_blocks_);
  coder_->encode(selection_, kSelectionStates, w);
  if (regression_blocks_ != 0) {
    w.put<std::uint64_t>(coefficient_verbatim_.size());
    w.put_array<float>(coefficient_verbatim_);
    coder_->encode(coefficient_symbols_, kCoefficientStates, w);
  }
}

template <class T>
void lorenzo_regression_decomposition<T>::load_3d(byte_reader& r) {
  if (coder_ == nullptr) fail("lorenzo/regression: 3-D streams need a Huffman coder");
  const auto image = r.get_bytes(kParamsImageSize, "lorenzo/regression parameters");
  block_params p;
  p.block_size = get_field<std::int32_t>(image, kOffBlockSize);
  p.prediction_dim = get_field<std::int32_t>(image, kOffPredDim);
  p.use_lorenzo = get_field<std::uint8_t>(image, kOffUseLorenzo) != 0;
  p.use_lorenzo_2layer = get_field<std::uint8_t>(image, kOffUseLorenzo2) != 0;
  p.use_regression = get_field<std::uint8_t>(image, kOffUseRegression) != 0;
  p.padding_layer = get_field<std::int32_t>(image, kOffPadding);
  p.capacity = get_field<std::int32_t>(image, kOffCapacity);
  p.eb_independent = get_field<float>(image, kOffEbIndependent);
  p.eb_linear = get_field<float>(image, kOffEbLinear);
  p.eb_base = get_field<float>(image, kOffEbBase);
  p.eb_1 = get_field<float>(image, kOffEb1);
  p.sample_ratio = get_field<float>(image, kOffSampleRatio);
  p.lossless = get_field<std::uint8_t>(image, kOffLossless) != 0;
  if (p.block_size <= 0)
    fail("lorenzo/regression: block size " + std::to_string(p.block_size) + " not positive");
  if (p.padding_layer != kPadding) {
    fail("lorenzo/regression: padding layer " + std::to_string(p.padding_layer) + " (SZ3 always writes 2)");
  }
  params_ = p;

  precision_ = r.get<double>("lorenzo/regression precision");
  if (r.get<std::uint8_t>("lorenzo/regression mean flag") != 0) {
    fail("lorenzo/regression: mean-value mode is set (SZ3 3.3 never writes it)");
  }
  (void)r.get<T>("lorenzo/regression mean");
  regression_blocks_ = r.get<std::uint64_t>("lorenzo/regression block count");

  checked_volume(dims_);
  const grid3 g(dims_, static_cast<std::size_t>(p.block_size));
  if (regression_blocks_ > g.blocks()) {
    fail("lorenzo/regression: " + std::to_string(regression_blocks_) + " regression blocks of " +
         std::to_string(g.blocks()));
  }
  selection_ = coder_->decode(r, g.blocks());
  if (selection_.size() != g.blocks())
    fail("lorenzo/regression: block selection stream has the wrong length");
  std::uint64_t chosen = 0;
  for (std::size_t i = 0; i < selection_.size(); ++i) {
    const int s = selection_[i];
    if (s != kLorenzo && s != kRegression && s != kLorenzo2) {
      fail("lorenzo/regression: block " + std::to_string(i) + " selects unknown predictor " +
           std::to_string(s));
    }
    chosen += s == kRegression ? 1 : 0;
  }
  if (chosen != regression_blocks_) {
    fail("lorenzo/regression: " + std::to_string(chosen) + " blocks select regression, header says " +
         std::to_string(regression_blocks_));
  }

  coefficients_.clear();
  coefficient_verbatim_.clear();
  coefficient_symbols_.clear();
  if (regression_blocks_ == 0) return;

  const auto verbatim_count = r.get<std::uint64_t>("regression verbatim count");
  coefficient_verbatim_ = r.get_array<float>(verbatim_count, "regression verbatim coefficients");
  const std::size_t count = static_cast<std::size_t>(regression_blocks_) * kCoefficients;
  coefficient_symbols_ = coder_->decode(r, count);
  if (coefficient_symbols_.size() != count)
    fail("lorenzo/regression: coefficient stream has the wrong length");

  // The decoder holds the bins in double (SZ3 instantiates it with the
  // saved double precision); the float values convert exactly.
  std::array<double, kCoefficients> eb{};
  for (int i = 0; i < kCoefficients; ++i) {
    eb[i] = static_cast<double>(i + 1 < kCoefficients ? p.eb_linear : p.eb_independent);
  }
  coefficients_.resize(count);
  std::array<float, kCoefficients> previous{};
  std::size_t next_verbatim = 0;
  for (std::size_t i = 0; i < count; ++i) {
    const int c = static_cast<int>(i % kCoefficients);
    const int s = coefficient_symbols_[i];
    if (s < 0 || s >= kCoefficientStates) {
      fail("lorenzo/regression: coefficient symbol " + std::to_string(s) + " at index " + std::to_string(i) +
           " outside [0, 65536)");
    }
    float v;
    if (s == 0) {
      if (next_verbatim >= coefficient_verbatim_.size()) {
        fail("lorenzo/regression: more verbatim coefficients referenced than stored");
      }
      v = coefficient_verbatim_[next_verbatim++];
    } else {
      v = recover_coefficient(previous[c], eb[c], s);
    }
    coefficients_[i] = v;
    previous[c] = v;
  }
}

template class lorenzo_regression_decomposition<float>;
template class lorenzo_regression_decomposition<double>;

}  // namespace tensogram::codecs::sz3
