// Comparing JSON values for the evaluator of the metatensor dialect (spec 06
// §8.3): exact comparison of JSON numbers across nlohmann's int64, uint64
// and double representations, multipleOf, and JSON equality for `enum`,
// `const` and `uniqueItems`. Not a public header.
#pragma once

#include <compare>
#include <cstddef>
#include <nlohmann/json.hpp>
#include <optional>
#include <utility>

namespace metatensor::detail {

/// 2^64 as a binary64, the first double above every uint64.
inline constexpr double two_pow_64 = 18446744073709551616.0;

/// Exact mathematical comparison of two JSON numbers (NaN is unordered).
[[nodiscard]] std::partial_ordering compare_numbers(const nlohmann::json& a, const nlohmann::json& b);

/// A value against a schema bound (§8.3): integers compare exactly; a
/// floating value compares as binary64 with the schema number read as
/// binary64.
[[nodiscard]] std::partial_ordering compare_to_bound(const nlohmann::json& value,
                                                     const nlohmann::json& bound);

/// multipleOf (§8.3): integers by exact remainder when the divisor is a
/// whole number; otherwise the binary64 quotient must be an integer.
/// Non-finite values are never multiples. `divisor` is greater than 0.
[[nodiscard]] bool is_multiple_of(const nlohmann::json& value, const nlohmann::json& divisor);

/// JSON equality: numbers compare mathematically (1 == 1.0), NaN equals
/// nothing, object member order is irrelevant. Throws MT_LIMIT for values
/// nested deeper than `json_schema_evaluator::max_evaluation_depth`.
[[nodiscard]] bool json_equal(const nlohmann::json& a, const nlohmann::json& b, std::size_t depth = 0);

/// The first pair of equal items of `array` (by index), if any.
[[nodiscard]] std::optional<std::pair<std::size_t, std::size_t>> first_duplicate(const nlohmann::json& array);

}  // namespace metatensor::detail
