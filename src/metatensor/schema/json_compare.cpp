#include "json_compare.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <string>
#include <vector>

#include "metatensor/error.hpp"
#include "metatensor/json_schema.hpp"

namespace metatensor::detail {

namespace {

using json = nlohmann::json;

// Nesting guard for comparisons of values (enum, const, uniqueItems): the
// caller bounds value nesting, this only keeps a programmatic document from
// exhausting the stack.
constexpr std::size_t max_compare_depth = json_schema_evaluator::max_evaluation_depth;

[[noreturn]] void too_deep() {
  throw error(errc::mt_limit,
              "values nested deeper than " + std::to_string(max_compare_depth) + " levels in a comparison");
}

constexpr double two_pow_63 = 9223372036854775808.0;

std::partial_ordering compare_int_double(std::int64_t a, double d) {
  if (std::isnan(d)) return std::partial_ordering::unordered;
  if (d >= two_pow_63) return std::partial_ordering::less;
  if (d < -two_pow_63) return std::partial_ordering::greater;
  const double t = std::trunc(d);  // in [-2^63, 2^63): exactly representable
  const auto ti = static_cast<std::int64_t>(t);
  if (a != ti) return a < ti ? std::partial_ordering::less : std::partial_ordering::greater;
  if (d > t) return std::partial_ordering::less;
  if (d < t) return std::partial_ordering::greater;
  return std::partial_ordering::equivalent;
}

std::partial_ordering compare_uint_double(std::uint64_t a, double d) {
  if (std::isnan(d)) return std::partial_ordering::unordered;
  if (d < 0) return std::partial_ordering::greater;
  if (d >= two_pow_64) return std::partial_ordering::less;
  const double t = std::trunc(d);
  const auto tu = static_cast<std::uint64_t>(t);
  if (a != tu) return a < tu ? std::partial_ordering::less : std::partial_ordering::greater;
  if (d > t) return std::partial_ordering::less;
  return std::partial_ordering::equivalent;
}

std::partial_ordering compare_int_uint(std::int64_t a, std::uint64_t b) {
  if (a < 0) return std::partial_ordering::less;
  return static_cast<std::uint64_t>(a) <=> b;
}

}  // namespace

std::partial_ordering compare_numbers(const json& a, const json& b) {
  using t = json::value_t;
  const t ta = a.type();
  const t tb = b.type();
  if (ta == t::number_float) {
    const double da = a.get<double>();
    if (tb == t::number_float) return da <=> b.get<double>();
    if (tb == t::number_integer) return 0 <=> compare_int_double(b.get<std::int64_t>(), da);
    return 0 <=> compare_uint_double(b.get<std::uint64_t>(), da);
  }
  if (ta == t::number_integer) {
    const std::int64_t ia = a.get<std::int64_t>();
    if (tb == t::number_float) return compare_int_double(ia, b.get<double>());
    if (tb == t::number_integer) return ia <=> b.get<std::int64_t>();
    return compare_int_uint(ia, b.get<std::uint64_t>());
  }
  const std::uint64_t ua = a.get<std::uint64_t>();
  if (tb == t::number_float) return compare_uint_double(ua, b.get<double>());
  if (tb == t::number_integer) return 0 <=> compare_int_uint(b.get<std::int64_t>(), ua);
  return ua <=> b.get<std::uint64_t>();
}

std::partial_ordering compare_to_bound(const json& value, const json& bound) {
  if (value.is_number_float()) return value.get<double>() <=> bound.get<double>();
  return compare_numbers(value, bound);
}

namespace {

// |v| of an integer JSON number, exactly.
std::uint64_t magnitude(const json& v) {
  if (v.is_number_unsigned()) return v.get<std::uint64_t>();
  const std::int64_t i = v.get<std::int64_t>();
  return i >= 0 ? static_cast<std::uint64_t>(i) : static_cast<std::uint64_t>(-(i + 1)) + 1u;
}

}  // namespace

bool is_multiple_of(const json& value, const json& divisor) {
  if (value.is_number_float()) {
    const double d = value.get<double>();
    if (!std::isfinite(d)) return false;
    const double q = d / divisor.get<double>();
    return std::isfinite(q) && q == std::trunc(q);
  }
  std::uint64_t whole = 0;
  if (divisor.is_number_unsigned() || divisor.is_number_integer()) {
    whole = magnitude(divisor);  // > 0, checked at construction
  } else {
    const double s = divisor.get<double>();
    if (s >= 1 && s < two_pow_64 && s == std::trunc(s)) whole = static_cast<std::uint64_t>(s);
  }
  if (whole != 0) return magnitude(value) % whole == 0;
  const double q = value.get<double>() / divisor.get<double>();
  return std::isfinite(q) && q == std::trunc(q);
}

// ---------------------------------------------------------------------------
// JSON equality (enum, const, uniqueItems): numbers compare mathematically
// (1 == 1.0), NaN equals nothing, object member order is irrelevant.

bool json_equal(const json& a, const json& b, std::size_t depth) {
  if (depth > max_compare_depth) too_deep();
  if (a.is_number() && b.is_number()) return compare_numbers(a, b) == std::partial_ordering::equivalent;
  if (a.type() != b.type()) return false;
  switch (a.type()) {
    case json::value_t::null: return true;
    case json::value_t::boolean: return a.get<bool>() == b.get<bool>();
    case json::value_t::string: return a.get_ref<const std::string&>() == b.get_ref<const std::string&>();
    case json::value_t::array: {
      if (a.size() != b.size()) return false;
      for (std::size_t i = 0; i < a.size(); ++i) {
        if (!json_equal(a[i], b[i], depth + 1)) return false;
      }
      return true;
    }
    case json::value_t::object: {
      if (a.size() != b.size()) return false;
      // nlohmann::json objects are std::map: both iterate in key order.
      auto ib = b.begin();
      for (auto ia = a.begin(); ia != a.end(); ++ia, ++ib) {
        if (ia.key() != ib.key() || !json_equal(ia.value(), ib.value(), depth + 1)) return false;
      }
      return true;
    }
    case json::value_t::binary: return a.get_binary() == b.get_binary();
    default: return false;
  }
}

namespace {

int type_rank(const json& v) {
  switch (v.type()) {
    case json::value_t::null: return 0;
    case json::value_t::boolean: return 1;
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
    case json::value_t::number_float: return 2;
    case json::value_t::string: return 3;
    case json::value_t::array: return 4;
    case json::value_t::object: return 5;
    default: return 6;
  }
}

bool is_nan(const json& v) {
  return v.is_number_float() && std::isnan(v.get<double>());
}

// A total order whose equivalence contains json_equal (NaN sorts after every
// number and is equivalent to NaN): lets uniqueItems sort instead of
// comparing every pair.
std::weak_ordering json_order(const json& a, const json& b, std::size_t depth) {
  if (depth > max_compare_depth) too_deep();
  const int ra = type_rank(a);
  const int rb = type_rank(b);
  if (ra != rb) return ra <=> rb;
  switch (ra) {
    case 1: return a.get<bool>() <=> b.get<bool>();
    case 2: {
      const bool na = is_nan(a);
      const bool nb = is_nan(b);
      if (na || nb) return na <=> nb;
      const auto c = compare_numbers(a, b);
      if (c == std::partial_ordering::less) return std::weak_ordering::less;
      if (c == std::partial_ordering::greater) return std::weak_ordering::greater;
      return std::weak_ordering::equivalent;
    }
    case 3: return a.get_ref<const std::string&>().compare(b.get_ref<const std::string&>()) <=> 0;
    case 4: {
      const std::size_t n = std::min(a.size(), b.size());
      for (std::size_t i = 0; i < n; ++i) {
        const auto c = json_order(a[i], b[i], depth + 1);
        if (c != 0) return c;
      }
      return a.size() <=> b.size();
    }
    case 5: {
      if (a.size() != b.size()) return a.size() <=> b.size();
      auto ib = b.begin();
      for (auto ia = a.begin(); ia != a.end(); ++ia, ++ib) {
        const int k = ia.key().compare(ib.key());
        if (k != 0) return k <=> 0;
        const auto c = json_order(ia.value(), ib.value(), depth + 1);
        if (c != 0) return c;
      }
      return std::weak_ordering::equivalent;
    }
    default: return std::weak_ordering::equivalent;
  }
}

}  // namespace

std::optional<std::pair<std::size_t, std::size_t>> first_duplicate(const json& array) {
  std::vector<std::size_t> order(array.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t x, std::size_t y) { return json_order(array[x], array[y], 0) < 0; });
  std::optional<std::pair<std::size_t, std::size_t>> best;
  std::size_t begin = 0;
  while (begin < order.size()) {
    std::size_t end = begin + 1;
    while (end < order.size() && json_order(array[order[begin]], array[order[end]], 0) == 0) ++end;
    // Inside a class, the items free of NaN are all equal to each other and
    // the others equal nothing; the class is sorted by index (stable sort).
    std::optional<std::size_t> first;
    for (std::size_t k = begin; k < end; ++k) {
      const std::size_t i = order[k];
      if (!json_equal(array[i], array[i], 0)) continue;
      if (!first) {
        first = i;
      } else {
        if (!best || std::pair(*first, i) < *best) best = std::pair(*first, i);
        break;
      }
    }
    begin = end;
  }
  return best;
}

}  // namespace metatensor::detail
