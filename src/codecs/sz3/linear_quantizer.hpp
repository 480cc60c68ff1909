// SZ3's linear quantiser (docs/sz3-format.md §4): a prediction error is
// mapped to a bin of width 2·eb; bin 0 means "unpredictable, stored
// verbatim". The arithmetic is spelled exactly as SZ3 does it (the
// difference in T, the bin in int64, the reconstruction in double rounded to
// T) because the encoder's reconstructed value feeds later predictions and
// the decoder must land on the same bits.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "byte_io.hpp"

namespace tensogram::codecs::sz3 {

template <class T>
class linear_quantizer {
 public:
  /// Tag byte SZ3 writes in front of the quantiser state.
  static constexpr std::uint8_t uid = 0b10;

  linear_quantizer() = default;
  linear_quantizer(double error_bound, int radius)
      : error_bound_(error_bound), reciprocal_(1.0 / error_bound), radius_(radius) {}

  [[nodiscard]] double error_bound() const noexcept { return error_bound_; }
  [[nodiscard]] int radius() const noexcept { return radius_; }
  /// Symbols are in [0, 2·radius).
  [[nodiscard]] int symbol_count() const noexcept { return radius_ * 2; }

  /// Quantises `value` against `pred`; on success overwrites `value` with
  /// its reconstruction and returns the bin, else records it as
  /// unpredictable and returns 0.
  int quantize_and_overwrite(T& value, T pred) {
    const T diff = value - pred;
    const double scaled = std::fabs(static_cast<double>(diff)) * reciprocal_;
    // SZ3 casts without this guard; NaN, ±Inf and huge errors are
    // unpredictable either way, and the cast of those would be undefined.
    if (scaled < static_cast<double>(radius_) * 2) {
      std::int64_t q = static_cast<std::int64_t>(scaled) + 1;
      if (q < static_cast<std::int64_t>(radius_) * 2) {
        q >>= 1;
        const int half = static_cast<int>(q);
        q <<= 1;
        int shifted;
        if (diff < 0) {
          q = -q;
          shifted = radius_ - half;
        } else {
          shifted = radius_ + half;
        }
        const T decoded = static_cast<T>(pred + static_cast<double>(q) * error_bound_);
        if (std::fabs(static_cast<double>(decoded - value)) <= error_bound_) {
          value = decoded;
          return shifted;
        }
      }
    }
    unpredictable_.push_back(value);
    return 0;
  }

  /// Stores `value` verbatim (used for points a predictor does not cover).
  int force_unpredictable(T value) {
    unpredictable_.push_back(value);
    return 0;
  }

  /// Decoder side: the value of bin `symbol` around `pred`.
  T recover(T pred, int symbol) {
    if (symbol != 0) return recover_predicted(pred, symbol);
    return recover_unpredictable();
  }
  [[nodiscard]] T recover_predicted(T pred, int symbol) const {
    return static_cast<T>(pred + static_cast<double>(2 * (symbol - radius_)) * error_bound_);
  }
  T recover_unpredictable() {
    if (next_ >= unpredictable_.size()) fail("more unpredictable values referenced than stored");
    return unpredictable_[next_++];
  }

  /// uid u8, eb f64, radius i32, count u64, then the values.
  void save(byte_writer& w) const {
    w.put<std::uint8_t>(uid);
    w.put<double>(error_bound_);
    w.put<std::int32_t>(radius_);
    w.put<std::uint64_t>(unpredictable_.size());
    w.put_array<T>(unpredictable_);
  }

  void load(byte_reader& r) {
    if (r.get<std::uint8_t>("quantiser uid") != uid)
      fail("quantiser: unexpected uid (not a linear quantiser)");
    error_bound_ = r.get<double>("quantiser error bound");
    if (!(error_bound_ > 0) || !std::isfinite(error_bound_))
      fail("quantiser: error bound is not a positive number");
    reciprocal_ = 1.0 / error_bound_;
    radius_ = r.get<std::int32_t>("quantiser radius");
    if (radius_ <= 0 || radius_ >= (1 << 30))
      fail("quantiser: radius " + std::to_string(radius_) + " out of range");
    const auto count = r.get<std::uint64_t>("unpredictable count");
    unpredictable_ = r.get_array<T>(count, "unpredictable values");
    next_ = 0;
  }

  [[nodiscard]] std::size_t unpredictable_count() const noexcept { return unpredictable_.size(); }
  void clear() {
    unpredictable_.clear();
    next_ = 0;
  }

 private:
  double error_bound_ = 1;
  double reciprocal_ = 1;
  int radius_ = 32768;
  std::vector<T> unpredictable_;
  std::size_t next_ = 0;
};

}  // namespace tensogram::codecs::sz3
