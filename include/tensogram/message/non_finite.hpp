// NaN/Inf classification of float and complex elements (spec 02 §9).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "tensogram/core/byte_order.hpp"
#include "tensogram/core/dtype.hpp"

namespace tensogram {

enum class non_finite_kind : std::uint8_t { nan, pos_inf, neg_inf };

struct non_finite_hit {
  std::uint64_t element = 0;
  non_finite_kind kind = non_finite_kind::nan;
  /// For complex dtypes: whether the imaginary component decided the kind.
  bool imaginary = false;
};

/// First element (lowest index) of `data` that is NaN (when `nan`) or ±Inf
/// (when `inf`), reading values in `order`. Complex elements are classified
/// with the priority real NaN, imag NaN, real +Inf, imag +Inf, real −Inf,
/// imag −Inf. `first_element` offsets the reported index (for block scans).
/// Non-float dtypes never match.
[[nodiscard]] std::optional<non_finite_hit> find_non_finite(dtype t, byte_order order,
                                                            std::span<const std::byte> data, bool nan,
                                                            bool inf,
                                                            std::uint64_t first_element = 0) noexcept;

/// Copies `src` to `dst` (`src.size()` bytes) and reports whether any
/// copied IEEE component, read in `order`, has an all-ones exponent (NaN or
/// ±Inf). One pass instead of a copy followed by a scan: the encoder's
/// strict check then costs next to nothing; only a flagged block needs
/// `find_non_finite` for the exact element. Non-float dtypes: a plain copy
/// and `false`.
[[nodiscard]] bool copy_and_screen_non_finite(dtype t, byte_order order, std::span<const std::byte> src,
                                              std::byte* dst) noexcept;

/// The reference's strict-check error text for a hit.
[[nodiscard]] std::string strict_non_finite_message(dtype t, const non_finite_hit& hit);

}  // namespace tensogram
