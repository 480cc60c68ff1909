// The logical value of a metatensor file (spec 06 §8.3): tensor bytes
// projected to JSON element by element, and the failures met on the way
// (BOOL bytes other than 0/1, strings that are not UTF-8). Shared by
// `file::logical_value` and deep validation. Not a public header.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <string_view>

#include "metatensor/file.hpp"

namespace metatensor::detail {

// A failure found below a tensor; `pointer` grows as the exception unwinds
// through the walkers, each prepending its own path component.
struct deep_failure {
  errc code;
  std::string pointer;
  std::string what;
};

/// "/" and the escaped token (RFC 6901).
[[nodiscard]] std::string escape_token(std::string_view t);
/// "/i".
[[nodiscard]] std::string index_token(std::uint64_t i);
/// "/i0/i1/..." for the C-order element `i` of `dims`.
[[nodiscard]] std::string index_pointer(std::span<const std::uint64_t> dims, std::uint64_t i);
/// Throws `f` as a metatensor::error whose message starts with the JSON
/// Pointer of the value (§8.3): "/<tensor><pointer>: <what>".
[[noreturn]] void rethrow_as_error(const deep_failure& f, std::string_view tensor);

/// A little-endian value at `p` (the host is little-endian, §9).
template <class T>
[[nodiscard]] T load(const std::byte* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}
/// BF16 and the 8-bit float formats as binary64 (§4.4, §8.3).
[[nodiscard]] double decode_bf16(std::uint16_t h);
[[nodiscard]] double decode_f8(dtype t, std::uint8_t b);
/// One scalar of a byte-sized dtype at `p` (§8.3); deep_failure MT_BOOL for
/// a BOOL byte other than 0/1.
[[nodiscard]] nlohmann::json project_scalar(dtype t, const std::byte* p);
/// Element `i` of a flat tensor of dtype `t` over `bytes` (sub-byte dtypes
/// packed LSB first); deep_failure MT_BOOL as `project_scalar`.
[[nodiscard]] nlohmann::json project_flat_element(dtype t, std::span<const std::byte> bytes, std::uint64_t i);
/// A String blob as text; deep_failure MT_UTF8 when it is not UTF-8.
[[nodiscard]] std::string_view checked_text(std::span<const std::byte> blob);

/// A logical tensor as the deep passes see it.
struct tensor_access {
  const tensor_layout* layout;
  std::span<const std::uint64_t> dims;
  std::uint64_t count;
  std::span<const std::byte> data;
  std::span<const std::byte> heap;

  tensor_access(const file& f, const std::string& name);
  /// Bytes of one element of the primary tensor (a record, a BlobRef, a scalar).
  [[nodiscard]] std::uint64_t element_size() const;
  /// Element `i` projected (§8.3).
  [[nodiscard]] nlohmann::json element(std::uint64_t i) const;
  /// The nested arrays of dims [level, rank) starting at element `first`.
  [[nodiscard]] nlohmann::json subtree(std::size_t level, std::uint64_t first) const;
};

/// A record tensor's element type as a type_layout (no fixed-array dims), or
/// a blob tensor's item.
[[nodiscard]] type_layout element_type(const tensor_layout& l);

}  // namespace metatensor::detail
