// SZ3 3.3.2's Lorenzo compressor for one-dimensional data
// (docs/sz3-format.md §6.1): SZIterateCompressor driving a ComposedPredictor
// of first- and/or second-order Lorenzo predictors. This is what SZ3 3.3.2
// writes for ALGO_LORENZO_REG when N = 1 — the interpolation/Lorenzo tuning
// of the reference's configuration produces it whenever Lorenzo wins.
//
// The field is cut into blocks of conf.blockSize values. Per block the
// encoder estimates each enabled predictor's error at the block's first and
// last value (|x − prediction| + a noise allowance) and keeps the smallest
// (the first on ties); the choice per block is saved as a Huffman-coded
// selection stream in front of the quantiser. Predictions read the
// reconstructed values before the current point, across block edges; points
// before the start of the field read as 0.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "byte_io.hpp"
#include "linear_quantizer.hpp"
#include "stream_config.hpp"

namespace tensogram::codecs::sz3 {

/// Why SZ3 3.3.2 would not use this compressor for `conf` (N ≠ 1, no
/// Lorenzo predictor enabled, or a regression predictor enabled, which we
/// do not implement), or nullptr when it would.
const char* composed_lorenzo_unsupported_reason(const stream_config& conf);

template <class T>
class composed_lorenzo_1d {
 public:
  /// Takes the enabled predictors (conf.lorenzo, conf.lorenzo2, in that
  /// order) and the quantiser settings from `conf`.
  explicit composed_lorenzo_1d(const stream_config& conf);

  /// Quantises conf.num values of `data` (overwritten with the
  /// reconstruction) block by block; returns one symbol per value. The
  /// block selections and unpredictable values accumulate across calls, as
  /// in SZ3 (its tuning runs several sampled blocks through one object).
  std::vector<int> compress(const stream_config& conf, T* data);

  /// With two predictors: their state (nothing for Lorenzo), the u64
  /// selection count and, when non-zero, the selection's Huffman table and
  /// bits. Then (always) the quantiser.
  void save(byte_writer& w) const;
  /// The inverse of save, every field checked.
  void load(byte_reader& r);

  /// Rebuilds conf.num values from `symbols` into `out`.
  void decompress(const stream_config& conf, std::span<const int> symbols, T* out);

  /// Symbols lie in [0, symbol_count()).
  [[nodiscard]] int symbol_count() const { return quantizer_.symbol_count(); }

  /// The per-block choices (index into the enabled predictors).
  [[nodiscard]] const std::vector<int>& selection() const noexcept { return selection_; }

 private:
  [[nodiscard]] T predict(int predictor, const T* data, std::size_t i) const;

  std::vector<bool> two_layer_;  // per enabled predictor: false = 1-layer, true = 2-layer
  std::vector<T> noise_;         // per enabled predictor
  std::size_t block_size_ = 128;
  std::uint64_t num_ = 0;  // conf.num at construction: bounds the selection count on load
  linear_quantizer<T> quantizer_;
  std::vector<int> selection_;
};

extern template class composed_lorenzo_1d<float>;
extern template class composed_lorenzo_1d<double>;

}  // namespace tensogram::codecs::sz3
