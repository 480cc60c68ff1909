// The index and type checks every view of a metatensor file makes (spec 06
// §9), and the typed reinterpretation of validated bytes. Part of
// <metatensor/file.hpp>.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "metatensor/layout.hpp"
#include "metatensor/safetensors.hpp"

namespace metatensor {

namespace detail {

/// Throws `tensogram::invalid_arg_error` "<where>: index i out of range [0, n)".
[[noreturn]] void throw_index(std::string_view where, std::uint64_t index, std::uint64_t count);
inline void check_index(std::string_view where, std::uint64_t index, std::uint64_t count) {
  if (index >= count) throw_index(where, index, count);
}
/// Throws `tensogram::invalid_arg_error` about a type mismatch.
[[noreturn]] void throw_type_mismatch(std::string_view where, std::string_view have, std::size_t host_size);
/// Human-readable name of a type ("F32", "F32[3]", "struct", "string", "list").
[[nodiscard]] std::string type_name(const type_layout& type);

/// True when host type `T` may view packed elements of `elem` (a List element
/// or record field type): scalars by `viewable_as` (fixed arrays are viewed
/// flattened), records when `sizeof(T)` equals the record size and
/// `alignof(T)` does not exceed its alignment (the caller asserts that `T`'s
/// layout equals the record's, §9).
template <class T>
[[nodiscard]] bool elements_viewable_as(const type_layout& elem) noexcept {
  if (elem.type == value_type::scalar) return safetensors::viewable_as<T>(elem.scalar);
  if (elem.type == value_type::record && elem.shape.empty() && elem.record) {
    return sizeof(T) == elem.record->size && alignof(T) <= elem.record->align;
  }
  return false;
}

/// `bytes` as a span of `T` (the caller checked type and alignment).
template <class T>
[[nodiscard]] std::span<const T> reinterpret(std::span<const std::byte> bytes) noexcept {
  if (bytes.empty()) return {};
  // The bytes lie inside the validated file image and are aligned for T
  // (§6.4, §6.6, and the aligned image of §9); T is trivially copyable.
  return {reinterpret_cast<const T*>(bytes.data()), bytes.size() / sizeof(T)};
}

}  // namespace detail

}  // namespace metatensor
