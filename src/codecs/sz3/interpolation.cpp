// SZ3's interpolation decomposition (docs/sz3-format.md §5).
//
// The walk below must visit points in exactly SZ3's order and predict them
// with exactly SZ3's floating-point expressions: the encoder's reconstructed
// values feed later predictions, the decoder repeats the walk, and the
// symbols are only meaningful against SZ3's own predictions. Products must
// not be fused into FMAs: CMakeLists.txt compiles the sz3 sources with
// -ffp-contract=off (docs/sz3-format.md §4).

#include "interpolation.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

namespace tensogram::codecs::sz3 {

namespace {

// --- Prediction formulas (docs/sz3-format.md §5.4) -------------------------
// Neighbour arguments are in walk order along the line; the integer
// coefficients are applied in T, the two of the linear extrapolation are
// double literals in SZ3, so float data is extrapolated in double and then
// rounded.

template <class T>
inline T midpoint(T left, T right) {
  return (left + right) / 2;
}
template <class T>
inline T extrapolate(T far, T near) {
  return static_cast<T>(-0.5 * far + 1.5 * near);
}
template <class T>
inline T quadratic_first(T left, T right, T right3) {
  return (3 * left + 6 * right - right3) / 8;
}
template <class T>
inline T quadratic_last(T left3, T left, T right) {
  return (-left3 + 6 * left + 3 * right) / 8;
}
template <class T>
inline T quadratic_beyond(T left5, T left3, T left) {
  return (3 * left5 - 10 * left3 + 15 * left) / 8;
}
template <class T>
inline T cubic(T left3, T left, T right, T right3) {
  return (-left3 + 9 * left + 9 * right - right3) / 16;
}

// --- Settings ----------------------------------------------------------------

constexpr std::size_t max_rank = 4;
constexpr std::uint32_t sz3_block_size = 32;  // SZ3 hard-codes it

std::size_t factorial(std::size_t n) {
  std::size_t f = 1;
  for (std::size_t i = 2; i <= n; ++i) f *= i;
  return f;
}

bool is_power_of_two(std::uint64_t v) {
  return v != 0 && (v & (v - 1)) == 0;
}

std::size_t checked_product(const interpolation_settings& s, const char* where) {
  std::uint64_t num = 1;
  for (std::size_t k = 0; k < s.rank; ++k) {
    if (s.dims[k] == 0) fail(std::string(where) + ": dimension " + std::to_string(k) + " is 0");
    if (num > std::numeric_limits<std::uint64_t>::max() / s.dims[k]) {
      fail(std::string(where) + ": dimensions overflow 64 bits");
    }
    num *= s.dims[k];
  }
  return static_cast<std::size_t>(num);
}

void check_interp_fields(const interpolation_settings& s, const char* where) {
  const std::string w(where);
  if (s.block_size < 2 || s.block_size % 2 != 0) {
    fail(w + ": block size " + std::to_string(s.block_size) + " is not an even number >= 2");
  }
  if (s.kind != interpolation_kind::linear && s.kind != interpolation_kind::cubic) {
    fail(w + ": interpolation kind " + std::to_string(static_cast<int>(s.kind)) +
         " is neither linear nor cubic");
  }
  if (s.direction < 0 || static_cast<std::size_t>(s.direction) >= factorial(s.rank)) {
    fail(w + ": direction " + std::to_string(s.direction) + " out of range for " + std::to_string(s.rank) +
         " dimensions");
  }
  // SZ3 asserts a power of two (0 = no anchors); any other stride leaves
  // the first level's neighbours unreconstructed.
  if (s.anchor_stride != 0 &&
      (!is_power_of_two(s.anchor_stride) || s.anchor_stride > (std::uint64_t{1} << 62))) {
    fail(w + ": anchor stride " + std::to_string(s.anchor_stride) + " is not 0 or a power of two");
  }
  if (!std::isfinite(s.alpha) || !std::isfinite(s.beta)) fail(w + ": alpha/beta are not finite");
}

// --- The walk plan (SZ3's init(), docs/sz3-format.md §5.2) ---------------------

struct walk_plan {
  std::size_t rank = 1;
  std::array<std::size_t, max_rank> dims{1, 1, 1, 1};
  std::array<std::size_t, max_rank> offsets{1, 1, 1, 1};  // element distance of one step per dimension
  std::array<std::size_t, max_rank> order{0, 1, 2, 3};    // the direction's dimension permutation
  std::size_t max_dim = 1;
  std::size_t block_size = sz3_block_size;
  bool cubic = true;
  std::uint64_t anchor = 0;  // effective anchor stride, 0 = the first value is predicted from 0
  int top_level = 0;         // levels top_level..1 are interpolated, stride 2^(level-1)
  std::size_t num = 1;
};

walk_plan make_plan(const interpolation_settings& s) {
  walk_plan p;
  p.rank = s.rank;
  p.num = checked_product(s, "interpolation");
  p.block_size = s.block_size;
  p.cubic = s.kind == interpolation_kind::cubic;
  for (std::size_t k = 0; k < s.rank; ++k) {
    p.dims[k] = s.dims[k];
    p.max_dim = std::max(p.max_dim, s.dims[k]);
  }
  std::size_t offset = 1;
  for (std::size_t k = s.rank; k-- > 0;) {
    p.offsets[k] = offset;
    offset *= s.dims[k];
  }
  // Directions number the permutations of (0..N-1) in lexicographic order.
  std::array<std::size_t, max_rank> perm{0, 1, 2, 3};
  for (std::int32_t i = 0; i < s.direction; ++i) std::next_permutation(perm.begin(), perm.begin() + s.rank);
  p.order = perm;

  // Levels: ceil(log2) of the longest dimension, computed in double as SZ3
  // does. The anchor grid is used only if some dimension exceeds its stride
  // (else the stride becomes 0, and that is what gets saved); it caps the
  // levels at log2(stride) + 1, and the top one is the grid itself.
  int levels = -1;
  bool exceeds = false;
  for (std::size_t k = 0; k < s.rank; ++k) {
    const double l = std::ceil(std::log2(static_cast<double>(s.dims[k])));
    if (levels < l) levels = static_cast<int>(l);
    if (s.dims[k] > s.anchor_stride) exceeds = true;
  }
  p.anchor = exceeds ? s.anchor_stride : 0;
  if (p.anchor > 0) {
    const int cap = static_cast<int>(std::log2(static_cast<double>(p.anchor))) + 1;
    if (cap <= levels) levels = cap;
    --levels;
  }
  p.top_level = levels;
  return p;
}

/// The error bound of one level (docs/sz3-format.md §5.3): alpha < 0 is
/// SZ3's older rule (half the bound from level 3 up), alpha >= 1 divides by
/// min(alpha^(level-1), beta), anything else keeps the bound.
double level_error_bound(double eb, int level, double alpha, double beta) {
  double cur = eb;
  if (alpha < 0) {
    if (level >= 3) cur = eb * 0.5;
  } else if (alpha >= 1) {
    double ratio = std::pow(alpha, static_cast<double>(level - 1));
    if (ratio > beta) ratio = beta;
    cur = eb / ratio;
  }
  if (!(cur > 0) || !std::isfinite(cur)) {
    fail("interpolation: level " + std::to_string(level) + " error bound " + std::to_string(cur) +
         " is not a positive number (alpha/beta)");
  }
  return cur;
}

// --- Grid loops ----------------------------------------------------------------

struct axis {
  std::size_t count = 1;
  std::size_t step = 0;  // in elements
};

/// Calls f(offset) over the grid, dimension 0 outermost (SZ3's foreach).
template <std::size_t K, std::size_t N, class F>
inline void for_grid(std::size_t at, const std::array<axis, N>& ax, F& f) {
  if constexpr (K == N) {
    f(at);
  } else {
    for (std::size_t c = 0; c < ax[K].count; ++c, at += ax[K].step) for_grid<K + 1>(at, ax, f);
  }
}

/// Number of i in [first, end) with step `step` (SZ3's loop bounds).
inline std::size_t span_count(std::size_t first, std::size_t end, std::size_t step) {
  return first < end ? (end - first + step - 1) / step : 0;
}

/// One level of the walk for N dimensions. `Sink` is called as
/// sink(value&, prediction) for each point in SZ3's order.
template <class T, std::size_t N>
class level_walk {
 public:
  using index = std::array<std::size_t, N>;

  level_walk(const walk_plan& p, T* data) : p_(p), data_(data) {}

  template <class Sink>
  void run(std::size_t stride, Sink& sink) {
    // Blocks of block_size·stride on every dimension, row-major; a block's
    // end is its neighbour's begin (clamped to the last index). A block wider
    // than the longest dimension behaves like an unbounded one.
    const std::size_t edge = stride > p_.max_dim / p_.block_size ? p_.max_dim : p_.block_size * stride;
    index count{}, block{}, begin{}, end{};
    for (std::size_t k = 0; k < N; ++k) count[k] = (p_.dims[k] - 1) / edge + 1;
    for (;;) {
      for (std::size_t k = 0; k < N; ++k) {
        begin[k] = block[k] * edge;
        end[k] = std::min(begin[k] + edge, p_.dims[k] - 1);
      }
      run_block(begin, end, stride, sink);
      std::size_t k = N;
      while (k > 0 && ++block[k - 1] == count[k - 1]) block[--k] = 0;
      if (k == 0) break;
    }
  }

 private:
  template <class Sink>
  void run_block(const index& begin, const index& end, std::size_t s, Sink& sink) {
    if constexpr (N == 1) {
      line(begin[0], (end[0] - begin[0]) / s + 1, s, sink);
    } else if constexpr (N == 2) {
      // SZ3's line-by-line form: lines along order[0] on the coarse grid of
      // order[1], then lines along order[1] through every fine row. Lines
      // on a block's leading face belong to the previous block.
      const std::size_t a = p_.order[0], b = p_.order[1];
      for (std::size_t j = begin[b] ? begin[b] + 2 * s : 0; j <= end[b]; j += 2 * s) {
        line(begin[a] * p_.offsets[a] + j * p_.offsets[b], (end[a] - begin[a]) / s + 1, s * p_.offsets[a],
             sink);
      }
      for (std::size_t i = begin[a] ? begin[a] + s : 0; i <= end[a]; i += s) {
        line(i * p_.offsets[a] + begin[b] * p_.offsets[b], (end[b] - begin[b]) / s + 1, s * p_.offsets[b],
             sink);
      }
    } else {
      // SZ3's plane-sweep form for 3-D and 4-D: one sweep per direction in
      // permutation order. Dimensions already swept run on the fine grid
      // (stride s), those still to come on the coarse one (2s).
      index lo{}, step{};
      for (std::size_t q = 1; q < N; ++q) {
        const std::size_t k = p_.order[q];
        lo[k] = begin[k] ? begin[k] + 2 * s : 0;
        step[k] = 2 * s;
      }
      lo[p_.order[0]] = begin[p_.order[0]];
      sweep(lo, end, step, p_.order[0], s, sink);
      for (std::size_t q = 1; q < N; ++q) {
        const std::size_t now = p_.order[q], done = p_.order[q - 1];
        lo[now] = begin[now];
        lo[done] = begin[done] ? begin[done] + s : 0;
        step[done] = s;
        sweep(lo, end, step, now, s, sink);
      }
    }
  }

  /// A line of n points, `st` elements apart, from offset `first`; points
  /// at odd positions are predicted (SZ3's 1-D routine, used for N <= 2).
  template <class Sink>
  void line(std::size_t first, std::size_t n, std::size_t st, Sink& sink) {
    if (n <= 1) return;
    T* const x = data_ + first;
    auto at = [&](std::size_t t) -> T& { return x[t * st]; };
    if (!p_.cubic || n < 5) {
      for (std::size_t t = 1; t + 1 < n; t += 2) sink(at(t), midpoint(at(t - 1), at(t + 1)));
      if (n % 2 == 0) {
        const std::size_t t = n - 1;
        sink(at(t), n < 4 ? at(t - 1) : extrapolate(at(t - 3), at(t - 1)));
      }
      return;
    }
    std::size_t t = 3;
    for (; t + 3 < n; t += 2) sink(at(t), cubic(at(t - 3), at(t - 1), at(t + 1), at(t + 3)));
    sink(at(1), quadratic_first(at(0), at(2), at(4)));
    sink(at(t), quadratic_last(at(t - 3), at(t - 1), at(t + 1)));
    if (n % 2 == 0) sink(at(n - 1), quadratic_beyond(at(n - 6), at(n - 4), at(n - 2)));
  }

  /// Predicts along dimension `dir` over the grid lo..hi (steps `step` on
  /// the other dimensions). Each group of positions along `dir` is one full
  /// pass over the grid, dimension 0 outermost — SZ3's visiting order.
  template <class Sink>
  void sweep(const index& lo, const index& hi, const index& step, std::size_t dir, std::size_t s,
             Sink& sink) {
    for (std::size_t k = 0; k < N; ++k) {
      if (hi[k] < lo[k]) return;
    }
    const std::size_t n = (hi[dir] - lo[dir]) / s + 1;
    if (n <= 1) return;
    const std::size_t st = s * p_.offsets[dir];
    std::size_t base = 0;
    std::array<axis, N> ax{};
    for (std::size_t k = 0; k < N; ++k) {
      base += lo[k] * p_.offsets[k];
      if (k != dir) ax[k] = axis{(hi[k] - lo[k]) / step[k] + 1, step[k] * p_.offsets[k]};
    }
    T* const x = data_;
    // Positions first, first+2, ... (count of them) along dir.
    auto pass = [&](std::size_t first, std::size_t count, auto predict) {
      if (count == 0) return;
      ax[dir] = axis{count, 2 * st};
      auto visit = [&](std::size_t at) {
        T* const d = x + at;
        sink(*d, predict(d));
      };
      for_grid<0>(base + first * st, ax, visit);
    };
    auto mid = [st](const T* d) { return midpoint(*(d - st), *(d + st)); };
    auto copy = [st](const T* d) { return *(d - st); };
    if (!p_.cubic) {
      pass(1, span_count(1, n - 1, 2), mid);
      if (n % 2 == 0) {
        // SZ3 extrapolates from positions n-3 and n-2 here (not n-4 and
        // n-2 as in the 1-D routine), with the same coefficients.
        if (n < 3) {
          pass(n - 1, 1, copy);
        } else {
          pass(n - 1, 1, [st](const T* d) { return extrapolate(*(d - 2 * st), *(d - st)); });
        }
      }
      return;
    }
    auto cub = [st](const T* d) { return cubic(*(d - 3 * st), *(d - st), *(d + st), *(d + 3 * st)); };
    pass(3, span_count(3, n >= 3 ? n - 3 : 0, 2), cub);
    // Boundary positions, each its own pass: 1, then the one or two odd
    // positions the interior loop stopped short of.
    std::array<std::size_t, 3> edges{1, 0, 0};
    std::size_t edge_count = 1;
    if (n % 2 == 1 && n > 3) edges[edge_count++] = n - 2;
    if (n % 2 == 0 && n > 4) edges[edge_count++] = n - 3;
    if (n % 2 == 0 && n > 2) edges[edge_count++] = n - 1;
    for (std::size_t e = 0; e < edge_count; ++e) {
      const std::size_t t = edges[e];
      if (t >= 3) {
        if (t + 3 < n) {
          pass(t, 1, cub);
        } else if (t + 1 < n) {
          pass(t, 1, [st](const T* d) { return quadratic_last(*(d - 3 * st), *(d - st), *(d + st)); });
        } else {
          pass(t, 1, [st](const T* d) { return extrapolate(*(d - 3 * st), *(d - st)); });
        }
      } else if (t + 3 < n) {
        pass(t, 1, [st](const T* d) { return quadratic_first(*(d - st), *(d + st), *(d + 3 * st)); });
      } else if (t + 1 < n) {
        pass(t, 1, mid);
      } else {
        pass(t, 1, copy);
      }
    }
  }

  const walk_plan& p_;
  T* data_;
};

template <class T, class Sink>
void walk_level(const walk_plan& p, T* data, std::size_t stride, Sink& sink) {
  switch (p.rank) {
    case 1: level_walk<T, 1>(p, data).run(stride, sink); break;
    case 2: level_walk<T, 2>(p, data).run(stride, sink); break;
    case 3: level_walk<T, 3>(p, data).run(stride, sink); break;
    case 4: level_walk<T, 4>(p, data).run(stride, sink); break;
    default: fail("interpolation: unsupported number of dimensions");
  }
}

/// The anchor grid: every anchor-th index on every dimension, dimension 0
/// outermost; these values are stored verbatim.
template <class T, class F>
void for_each_anchor(const walk_plan& p, T* data, F&& f) {
  std::array<axis, max_rank> ax{};
  for (std::size_t k = 0; k < max_rank; ++k) {
    // p.anchor < some dimension, so both fit in size_t where they are used:
    // the count is at most dims[k], and the step is only taken when
    // dims[k] > anchor, i.e. within the array (32-bit builds, WebAssembly).
    ax[k] = k < p.rank ? axis{static_cast<std::size_t>((p.dims[k] - 1) / p.anchor + 1),
                              static_cast<std::size_t>(p.anchor * p.offsets[k])}
                       : axis{1, 0};
  }
  auto visit = [&](std::size_t at) { f(data[at]); };
  for_grid<0>(0, ax, visit);
}

std::size_t level_stride(int level) {
  return std::size_t{1} << (level - 1);
}

interpolation_settings settings_from(const stream_config& conf) {
  if (conf.N < 1 || conf.N > max_rank) fail("interpolation: " + std::to_string(conf.N) + " dimensions");
  if (conf.dims.size() != conf.N)
    fail("interpolation: dims has " + std::to_string(conf.dims.size()) + " entries");
  interpolation_settings s;
  s.rank = conf.N;
  for (std::size_t k = 0; k < s.rank; ++k) s.dims[k] = conf.dims[k];
  s.kind = conf.interpAlgo;
  s.direction = conf.interpDirection;
  s.alpha = conf.interpAlpha;
  s.beta = conf.interpBeta;
  return s;
}

/// Bounds-checked cursor over the symbol array.
struct symbol_cursor {
  std::size_t pos = 0;
  std::size_t size = 0;
  void advance() {
    if (pos >= size) fail("interpolation: the walk needs more symbols than " + std::to_string(size));
    ++pos;
  }
};

}  // namespace

template <class T>
interpolation_decomposition<T>::interpolation_decomposition(const stream_config& conf)
    : settings_(settings_from(conf)), quantizer_(conf.absErrorBound, conf.quantbinCnt / 2) {}

template <class T>
std::vector<int> interpolation_decomposition<T>::compress(const stream_config& conf, T* data) {
  interpolation_settings s = settings_from(conf);
  if (conf.interpAnchorStride < 0) fail("interpolation: anchor stride not resolved (negative)");
  s.anchor_stride = static_cast<std::uint64_t>(conf.interpAnchorStride);
  check_interp_fields(s, "interpolation settings");
  if (checked_product(s, "interpolation") != conf.num) fail("interpolation: num differs from the dimensions");
  const double eb = quantizer_.error_bound();
  if (!(eb > 0) || !std::isfinite(eb)) fail("interpolation: error bound is not a positive number");
  // Below 2^30 so that 2·radius (the symbol count) fits an int.
  if (quantizer_.radius() <= 0 || quantizer_.radius() >= (1 << 30)) {
    fail("interpolation: quantisation bin count out of range");
  }

  const walk_plan p = make_plan(s);
  // Reject a nonsensical alpha/beta before any value is overwritten.
  for (int level = p.top_level; level >= 1; --level) (void)level_error_bound(eb, level, s.alpha, s.beta);
  s.anchor_stride = p.anchor;  // SZ3 saves the stride its init() settled on
  settings_ = s;

  std::vector<int> symbols(p.num);
  symbol_cursor cur{0, p.num};
  auto emit = [&](int symbol) {
    const std::size_t at = cur.pos;
    cur.advance();
    symbols[at] = symbol;
  };
  if (p.anchor == 0) {
    emit(quantizer_.quantize_and_overwrite(data[0], T(0)));
  } else {
    for_each_anchor(p, data, [&](T& v) { emit(quantizer_.force_unpredictable(v)); });
  }
  for (int level = p.top_level; level >= 1; --level) {
    // A quantiser at the level's bound; its rejects go to the shared
    // unpredictable list in visiting order.
    linear_quantizer<T> level_q(level_error_bound(eb, level, s.alpha, s.beta), quantizer_.radius());
    auto sink = [&](T& value, T pred) {
      const int symbol = level_q.quantize_and_overwrite(value, pred);
      if (symbol == 0) {
        level_q.clear();
        quantizer_.force_unpredictable(value);
      }
      emit(symbol);
    };
    walk_level(p, data, level_stride(level), sink);
  }
  if (cur.pos != p.num)
    fail("interpolation: internal error: the walk visited " + std::to_string(cur.pos) + " points");
  return symbols;
}

template <class T>
void interpolation_decomposition<T>::save(byte_writer& w) const {
  for (std::size_t k = 0; k < settings_.rank; ++k) w.put<std::uint64_t>(settings_.dims[k]);
  w.put<std::uint32_t>(settings_.block_size);
  w.put<std::int32_t>(static_cast<std::int32_t>(settings_.kind));
  w.put<std::int32_t>(settings_.direction);
  w.put<std::uint64_t>(settings_.anchor_stride);
  w.put<double>(settings_.alpha);
  w.put<double>(settings_.beta);
  quantizer_.save(w);
}

template <class T>
void interpolation_decomposition<T>::load(byte_reader& r) {
  interpolation_settings s;
  s.rank = settings_.rank;
  for (std::size_t k = 0; k < s.rank; ++k) {
    const auto d = r.get<std::uint64_t>("interpolation dimension");
    if (d > std::numeric_limits<std::size_t>::max()) fail("interpolation: dimension does not fit in memory");
    s.dims[k] = static_cast<std::size_t>(d);
  }
  checked_product(s, "interpolation state");
  s.block_size = r.get<std::uint32_t>("interpolation block size");
  const auto kind = r.get<std::int32_t>("interpolation kind");
  if (kind != 0 && kind != 1)
    fail("interpolation state: kind " + std::to_string(kind) + " is neither 0 nor 1");
  s.kind = static_cast<interpolation_kind>(kind);
  s.direction = r.get<std::int32_t>("interpolation direction");
  s.anchor_stride = r.get<std::uint64_t>("interpolation anchor stride");
  s.alpha = r.get<double>("interpolation alpha");
  s.beta = r.get<double>("interpolation beta");
  check_interp_fields(s, "interpolation state");
  quantizer_.load(r);
  settings_ = s;
}

template <class T>
void interpolation_decomposition<T>::decompress(const stream_config& conf, std::span<const int> symbols,
                                                T* out) {
  const interpolation_settings& s = settings_;
  check_interp_fields(s, "interpolation state");
  if (conf.N != s.rank || conf.dims.size() != s.rank ||
      !std::equal(conf.dims.begin(), conf.dims.end(), s.dims.begin())) {
    fail("interpolation state: saved dimensions differ from the configuration's");
  }
  const walk_plan p = make_plan(s);
  if (p.num != conf.num) fail("interpolation state: saved dimensions do not multiply to num");
  if (symbols.size() != p.num) {
    fail("interpolation: " + std::to_string(symbols.size()) + " symbols for " + std::to_string(p.num) +
         " values");
  }
  const std::int64_t limit = std::int64_t{2} * quantizer_.radius();
  for (const int symbol : symbols) {
    if (symbol < 0 || symbol >= limit)
      fail("interpolation: symbol " + std::to_string(symbol) + " out of range");
  }
  // Every point is written by the walk; zeroing first keeps a walk defect
  // from ever reading uninitialised memory.
  std::fill_n(out, p.num, T(0));

  symbol_cursor cur{0, p.num};
  auto take = [&]() {
    const std::size_t at = cur.pos;
    cur.advance();
    return symbols[at];
  };
  const double eb = quantizer_.error_bound();
  if (p.anchor == 0) {
    out[0] = quantizer_.recover(T(0), take());
  } else {
    // The symbols at anchors are SZ3's placeholder zeros; it skips them.
    for_each_anchor(p, out, [&](T& v) {
      take();
      v = quantizer_.recover_unpredictable();
    });
  }
  for (int level = p.top_level; level >= 1; --level) {
    const linear_quantizer<T> level_q(level_error_bound(eb, level, s.alpha, s.beta), quantizer_.radius());
    auto sink = [&](T& value, T pred) {
      const int symbol = take();
      value = symbol != 0 ? level_q.recover_predicted(pred, symbol) : quantizer_.recover_unpredictable();
    };
    walk_level(p, out, level_stride(level), sink);
  }
  if (cur.pos != p.num) fail("interpolation: the walk used " + std::to_string(cur.pos) + " symbols");
}

template class interpolation_decomposition<float>;
template class interpolation_decomposition<double>;

}  // namespace tensogram::codecs::sz3
