// What the three stage tables (compressors.cpp, transform_stages.cpp) share:
// a table has one row per alternative of its parameter variant, in the
// variant's order, so that a stage's row is found from its parameters
// without a name lookup or a switch.
#pragma once

#include <array>
#include <cstddef>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>

#include "tensogram/core/error.hpp"

namespace tensogram::codecs::stage_table {

/// Index of `T` among the alternatives of `Variant`.
template <class T, class Variant>
struct index_in;
template <class T, class... Ts>
struct index_in<T, std::variant<Ts...>> {
  static constexpr std::size_t value = [] {
    std::size_t i = 0;
    (void)((std::is_same_v<T, Ts> ? false : (++i, true)) && ...);
    return i;
  }();
  static_assert(value < sizeof...(Ts), "not an alternative of the variant");
};

/// The alternative `Params` of `Variant`, default-constructed (the stage's
/// parameters before the caller fills them in).
template <class Variant, class Params>
Variant defaults() {
  return Variant(std::in_place_type<Params>);
}

/// True when row i of `rows` is for alternative i (checked at compile time
/// next to each table).
template <class Row, std::size_t N>
constexpr bool rows_follow_variant(const std::array<Row, N>& rows) {
  for (std::size_t i = 0; i < N; ++i) {
    if (rows[i].params_index != i) return false;
  }
  return true;
}

/// The row named `name`, or null.
template <class Row, std::size_t N>
const Row* find_row(const std::array<Row, N>& rows, std::string_view name) noexcept {
  for (const Row& r : rows) {
    if (r.name == name) return &r;
  }
  return nullptr;
}

/// The row named `name`; throws `encoding_error` "unknown <kind>: <name>"
/// (spec 03 §3.2).
template <class Row, std::size_t N>
const Row& named(const std::array<Row, N>& rows, std::string_view name, std::string_view kind) {
  if (const Row* r = find_row(rows, name)) return *r;
  throw encoding_error("unknown " + std::string(kind) + ": " + std::string(name));
}

}  // namespace tensogram::codecs::stage_table
