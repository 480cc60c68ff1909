// SZ3's Lorenzo/regression decomposition (docs/sz3-format.md §6; SZ3's
// LorenzoRegressionDecomposition, used by ALGO_LORENZO_REG through
// SZGenericCompressor).
//
// SZ2's blockwise scheme for 3-D data: the field is cut into blockSize³
// blocks; per block the encoder estimates the error of 1-layer Lorenzo,
// 2-layer Lorenzo and a linear regression plane on a diagonal sample and
// keeps the best. The per-block choice and the quantised regression
// coefficients are saved as Huffman-coded side streams before the quantiser.
// In SZ3 3.3.2 every other shape (1-D included: composed_lorenzo.hpp) and
// 3-D with regression2 go to its predictor-iterating compressor.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "byte_io.hpp"
#include "linear_quantizer.hpp"
#include "stream_config.hpp"

namespace tensogram::codecs::sz3 {

/// True when SZ3 3.3.2 would compress `conf` with this decomposition
/// (SZ_compress_LorenzoReg's fast path): N = 3 without regression2.
bool lorenzo_regression_supported(const stream_config& conf);

/// Why `conf` is not supported (for "unsupported SZ3 feature: ..."), or
/// nullptr when it is.
const char* lorenzo_regression_unsupported_reason(const stream_config& conf);

/// The entropy coder SZ3 uses for the N = 3 side streams (its
/// HuffmanEncoder<int>). The decomposition does not own a Huffman coder; the
/// caller supplies one. Calls happen once per side stream, never per point.
class int_stream_coder {
 public:
  virtual ~int_stream_coder() = default;
  /// SZ3: preprocess_encode(symbols, state_count); save; encode;
  /// postprocess_encode. `state_count` is SZ3's stateNum argument (8 for the
  /// block selection, 65536 for the regression coefficients).
  virtual void encode(std::span<const int> symbols, int state_count, byte_writer& w) const = 0;
  /// SZ3: load; decode(count); postprocess_decode. Must return exactly
  /// `count` symbols or fail().
  virtual std::vector<int> decode(byte_reader& r, std::size_t count) const = 0;
};

template <class T>
class lorenzo_regression_decomposition {
 public:
  /// `coder` writes and reads the side streams and must outlive this.
  explicit lorenzo_regression_decomposition(const stream_config& conf,
                                            const int_stream_coder* coder = nullptr);

  /// Quantisation symbols in SZ3's order (block by block, each block in
  /// raster order). `data` ends holding the reconstructed values (see
  /// docs/sz3-format.md §6.4).
  std::vector<int> compress(const stream_config& conf, T* data);
  /// Exactly SZ3's save() bytes (padding bytes of the N = 3 parameter image
  /// written as zeros).
  void save(byte_writer& w) const;
  /// SZ3's load(); needs conf.dims (from the constructor). Validates.
  void load(byte_reader& r);
  /// Rebuilds `conf.num` values into `out`.
  void decompress(const stream_config& conf, std::span<const int> symbols, T* out);
  /// SZ3's get_out_range().second: symbols lie in [0, symbol_count()).
  [[nodiscard]] int symbol_count() const { return quantizer_.symbol_count(); }

  /// SZ3's SZMETA::meta_params, the struct N = 3 saves as its raw 44-byte
  /// image (docs/sz3-format.md §6.2).
  struct block_params {
    std::int32_t block_size = 6;
    std::int32_t prediction_dim = 3;
    bool use_lorenzo = true;
    bool use_lorenzo_2layer = false;
    bool use_regression = true;
    std::int32_t padding_layer = 2;
    std::int32_t capacity = 0;
    float eb_independent = 0;
    float eb_linear = 0;
    float eb_base = 1;
    float eb_1 = 6;
    float sample_ratio = 1;
    bool lossless = true;
  };

 private:
  std::vector<int> compress_3d(const stream_config& conf, T* data);
  void decompress_3d(std::span<const int> symbols, T* out);
  void save_3d(byte_writer& w) const;
  void load_3d(byte_reader& r);

  int n_dims_ = 3;
  std::vector<std::size_t> dims_;
  linear_quantizer<T> quantizer_;
  const int_stream_coder* coder_ = nullptr;

  // N = 3 state (docs/sz3-format.md §6.2).
  block_params params_;
  double precision_ = 0;
  std::vector<int> selection_;               // one per block: 0 Lorenzo, 1 regression, 2 Lorenzo 2-layer
  std::vector<int> coefficient_symbols_;     // 4 per regression block
  std::vector<float> coefficient_verbatim_;  // coefficients stored unquantised
  std::vector<float> coefficients_;          // decoder: 4 per regression block, reconstructed
  std::uint64_t regression_blocks_ = 0;
};

extern template class lorenzo_regression_decomposition<float>;
extern template class lorenzo_regression_decomposition<double>;

}  // namespace tensogram::codecs::sz3
