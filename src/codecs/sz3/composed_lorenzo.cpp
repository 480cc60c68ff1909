// SZ3 3.3.2's one-dimensional Lorenzo compressor (docs/sz3-format.md §6.1).
//
// Stencils and error estimates are evaluated in T as SZ3 evaluates them
// (2·x[i−1] − x[i−2] for the second order; |x − prediction| + noise per
// sampled point, summed in double), so the encoder's reconstruction and its
// block choices land on SZ3's bits. CMakeLists.txt compiles the sz3 sources
// without FP contraction (docs/sz3-format.md §4).

#include "composed_lorenzo.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "huffman.hpp"

namespace tensogram::codecs::sz3 {

const char* composed_lorenzo_unsupported_reason(const stream_config& conf) {
  if (conf.N != 1) return "Lorenzo compressor of SZ3 3.3.2 on data that is not 1-D";
  if (conf.regression || conf.regression2)
    return "1-D Lorenzo/regression with a regression predictor enabled";
  if (!conf.lorenzo && !conf.lorenzo2) return "1-D Lorenzo/regression with every predictor disabled";
  return nullptr;
}

template <class T>
composed_lorenzo_1d<T>::composed_lorenzo_1d(const stream_config& conf)
    : quantizer_(conf.absErrorBound, conf.quantbinCnt / 2) {
  if (const char* why = composed_lorenzo_unsupported_reason(conf))
    fail(std::string("unsupported SZ3 feature: ") + why);
  if (conf.blockSize <= 0) fail("lorenzo: block size " + std::to_string(conf.blockSize) + " is not positive");
  block_size_ = static_cast<std::size_t>(conf.blockSize);
  num_ = conf.num;
  // SZ3's LorenzoPredictor<T, 1, L>: noise 0.5·eb (one layer), 1.08·eb (two).
  if (conf.lorenzo) {
    two_layer_.push_back(false);
    noise_.push_back(static_cast<T>(0.5 * conf.absErrorBound));
  }
  if (conf.lorenzo2) {
    two_layer_.push_back(true);
    noise_.push_back(static_cast<T>(1.08 * conf.absErrorBound));
  }
}

template <class T>
T composed_lorenzo_1d<T>::predict(int predictor, const T* data, std::size_t i) const {
  const T p1 = i >= 1 ? data[i - 1] : T(0);
  if (!two_layer_[static_cast<std::size_t>(predictor)]) return p1;
  const T p2 = i >= 2 ? data[i - 2] : T(0);
  return 2 * p1 - p2;
}

template <class T>
std::vector<int> composed_lorenzo_1d<T>::compress(const stream_config& conf, T* data) {
  if (!(conf.absErrorBound > 0) || !std::isfinite(conf.absErrorBound)) {
    fail("lorenzo: error bound is not a positive number");
  }
  const auto n = static_cast<std::size_t>(conf.num);
  if (n == 0) fail("lorenzo: no values");
  std::vector<int> symbols(n);
  const int predictors = static_cast<int>(two_layer_.size());
  std::vector<double> error(two_layer_.size());
  for (std::size_t start = 0; start < n; start += block_size_) {
    const std::size_t length = std::min(block_size_, n - start);
    int choice = 0;
    if (predictors > 1) {
      // ComposedPredictor::do_estimate_error for N = 1: the block's first
      // and last points, read before the block is overwritten.
      const std::size_t last = start + length - 1;
      for (int p = 0; p < predictors; ++p) {
        const auto noise = noise_[static_cast<std::size_t>(p)];
        error[static_cast<std::size_t>(p)] = 0;
        error[static_cast<std::size_t>(p)] += std::fabs(data[start] - predict(p, data, start)) + noise;
        error[static_cast<std::size_t>(p)] += std::fabs(data[last] - predict(p, data, last)) + noise;
      }
      choice = static_cast<int>(std::min_element(error.begin(), error.end()) - error.begin());
    }
    selection_.push_back(choice);
    for (std::size_t i = start; i < start + length; ++i) {
      symbols[i] = quantizer_.quantize_and_overwrite(data[i], predict(choice, data, i));
    }
  }
  return symbols;
}

template <class T>
void composed_lorenzo_1d<T>::save(byte_writer& w) const {
  // LorenzoPredictor::save writes nothing. With one predictor SZ3 uses it
  // directly; a ComposedPredictor stores its selection after its members'
  // state (HuffmanEncoder with stateNum 0: sized by the symbols).
  if (two_layer_.size() == 1) {
    quantizer_.save(w);
    return;
  }
  w.put<std::uint64_t>(selection_.size());
  if (!selection_.empty()) {
    huffman_coder coder;
    coder.build(selection_, static_cast<int>(two_layer_.size()));
    coder.save(w);
    coder.encode(selection_, w);
  }
  quantizer_.save(w);
}

template <class T>
void composed_lorenzo_1d<T>::load(byte_reader& r) {
  selection_.clear();
  if (two_layer_.size() == 1) {
    quantizer_.load(r);
    return;
  }
  const auto count = r.get<std::uint64_t>("lorenzo block selection count");
  if (count != 0) {
    // A one-leaf table codes any count in zero bits, so the count is checked
    // against the field's block count before anything is decoded.
    const std::uint64_t blocks = num_ == 0 ? 0 : (num_ - 1) / block_size_ + 1;
    if (count != blocks) {
      fail("lorenzo: " + std::to_string(count) + " block selections for " + std::to_string(blocks) +
           " blocks of " + std::to_string(block_size_) + " values");
    }
    huffman_coder coder;
    coder.load(r);
    const auto [lo, hi] = coder.symbol_bounds();
    if (lo < 0 || hi >= static_cast<int>(two_layer_.size())) {
      fail("lorenzo: block selection names predictor " + std::to_string(lo < 0 ? lo : hi) + " of " +
           std::to_string(two_layer_.size()));
    }
    selection_ = coder.decode(r, count);
  }
  quantizer_.load(r);
}

template <class T>
void composed_lorenzo_1d<T>::decompress(const stream_config& conf, std::span<const int> symbols, T* out) {
  const auto n = static_cast<std::size_t>(conf.num);
  if (n == 0 || symbols.size() != n) {
    fail("lorenzo: " + std::to_string(symbols.size()) + " symbols for " + std::to_string(conf.num) +
         " values");
  }
  const std::size_t blocks = (n - 1) / block_size_ + 1;
  if (two_layer_.size() == 1) selection_.assign(blocks, 0);
  if (selection_.size() != blocks) {
    fail("lorenzo: " + std::to_string(selection_.size()) + " block selections for " + std::to_string(blocks) +
         " blocks of " + std::to_string(block_size_) + " values");
  }
  const int limit = quantizer_.symbol_count();
  for (std::size_t b = 0; b < blocks; ++b) {
    const int choice = selection_[b];
    const std::size_t start = b * block_size_;
    const std::size_t end = std::min(start + block_size_, n);
    for (std::size_t i = start; i < end; ++i) {
      const int s = symbols[i];
      if (s < 0 || s >= limit) {
        fail("lorenzo: quantisation symbol " + std::to_string(s) + " at index " + std::to_string(i) +
             " outside [0, " + std::to_string(limit) + ")");
      }
      out[i] = quantizer_.recover(predict(choice, out, i), s);
    }
  }
}

template class composed_lorenzo_1d<float>;
template class composed_lorenzo_1d<double>;

}  // namespace tensogram::codecs::sz3
