// SZ3's interpolation decomposition (docs/sz3-format.md §5), the predictor
// behind ALGO_INTERP: values are predicted level by level from a coarse grid
// by linear or cubic interpolation along each dimension in turn, and each
// prediction error goes through the linear quantiser. The decomposition
// writes its own settings (dimensions, block size, kind, direction, anchor
// stride, alpha, beta) in front of the quantiser state; they are not in the
// configuration record.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "byte_io.hpp"
#include "linear_quantizer.hpp"
#include "stream_config.hpp"

namespace tensogram::codecs::sz3 {

/// The settings the decomposition saves (docs/sz3-format.md §5.1), in the
/// form the walk uses them.
struct interpolation_settings {
  std::size_t rank = 1;                         // N, 1..4
  std::array<std::size_t, 4> dims{1, 1, 1, 1};  // slowest first; only [0, rank) used
  std::uint32_t block_size = 32;                // SZ3 always writes 32
  interpolation_kind kind = interpolation_kind::cubic;
  std::int32_t direction = 0;       // index of a permutation of the dimensions
  std::uint64_t anchor_stride = 0;  // 0: no anchor grid
  double alpha = 1.25;
  double beta = 2.0;
};

template <class T>
class interpolation_decomposition {
 public:
  /// Encoder and decoder: takes N, dims and the interp* settings from
  /// `conf` (anchor stride resolved: 0 or a power of two), and builds the
  /// quantiser linear_quantizer<T>(conf.absErrorBound, conf.quantbinCnt / 2).
  explicit interpolation_decomposition(const stream_config& conf);

  /// Quantises `data` (conf.num values, overwritten with the reconstruction)
  /// and returns conf.num symbols in SZ3's visiting order. Unpredictable
  /// values accumulate in the quantiser across calls, as in SZ3 (its
  /// tuning runs several blocks through one decomposition).
  std::vector<int> compress(const stream_config& conf, T* data);

  /// The bytes of SZ3's InterpolationDecomposition::save.
  void save(byte_writer& w) const;
  /// SZ3's load, with every field checked.
  void load(byte_reader& r);

  /// Rebuilds conf.num values from `symbols` into `out`; bit-identical to
  /// what compress() left in its input.
  void decompress(const stream_config& conf, std::span<const int> symbols, T* out);

  /// Symbols lie in [0, symbol_count()).
  [[nodiscard]] int symbol_count() const { return quantizer_.symbol_count(); }

  [[nodiscard]] const interpolation_settings& settings() const noexcept { return settings_; }

 private:
  interpolation_settings settings_;
  linear_quantizer<T> quantizer_;
};

extern template class interpolation_decomposition<float>;
extern template class interpolation_decomposition<double>;

}  // namespace tensogram::codecs::sz3
