// Writing metatensor files (spec 06 §3, §5, §6, §7, §8.3).
//
// A `file_builder` holds a compiled schema and the values of the logical
// tensors set so far; `serialize` lays them out by §6 and emits the
// canonical form of §3.5:
//
// * `__metadata__` first, keys sorted byte-wise: `metatensor.alignment`,
//   `.endianness` ("little"), `.layout` (§7 table of the tensors present),
//   `.schema` (the schema document, compact), `.version` ("1"), plus the
//   user's keys;
// * physical tensors ordered by decreasing placement alignment R(t), then by
//   name (byte-wise), entries listed in `begin` order, `__pad__<j>` zero
//   tensors only where §6.6 needs them, the header padded with spaces so
//   that 8 + N is a multiple of R_max;
// * heaps filled in record order (row-major over the dimensions, then field
//   order, depth-first into nested records and fixed arrays), zero bytes
//   before a List blob up to align(E), empty blobs as BlobRef (0, 0) (§6.4).
//
// The same schema, options and values always give the same bytes, whatever
// order the values were set in.
//
// Field paths (`record_writer`): fields of nested records are separated by
// '.', fixed-array elements are selected with "[k]" suffixes, one per
// fixed-array dimension, e.g. "vel[2]", "m[1][3]", "pair.0", "tags[1]" for
// element 1 of a fixed array of String. A path that stops before the last
// index names a whole sub-array (accepted by `set_bytes` only). Field names
// containing '.' or '[' are matched greedily (the longest field name that is
// a prefix of the remaining path wins).
//
// Errors: conditions that would make the file violate the spec throw
// `metatensor::error` with the §8.2 name (MT_SHAPE for dims that break the
// rank or a dimension bound, MT_TENSOR_SET for unknown names and missing
// required tensors, MT_UTF8 for invalid strings, MT_BOOL for BOOL bytes other
// than 0/1, MT_NONZERO_PADDING for record padding that is not zero,
// MT_VALUE for `set_json` values that do not fit the type (message = JSON
// Pointer), MT_ALIGNMENT_VALUE / MT_UNKNOWN_KEY for bad options). Misuse of
// the C++ API (wrong C++ type for a dtype, wrong byte count, a tensor of
// another kind, a bad field path, a record index out of range) throws
// `tensogram::invalid_arg_error`.
#pragma once

#include <array>
#include <complex>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "metatensor/layout.hpp"
#include "tensogram/core/atomic_file.hpp"

namespace metatensor {

struct writer_options {
  /// File alignment A (§3.1): a power of two, 16 <= A <= 65536.
  std::uint64_t alignment = 64;
  /// Extra `__metadata__` keys; keys starting with "metatensor." are refused
  /// (MT_UNKNOWN_KEY: they are reserved, §3.1).
  std::map<std::string, std::string> user_metadata;
};

namespace detail {
struct tensor_values;
/// True when host type `T` may carry one element of `t`: `viewable_as`, plus
/// `bool` for BOOL.
template <class T>
[[nodiscard]] constexpr bool writable_as(dtype t) noexcept {
  if constexpr (std::is_same_v<std::remove_cv_t<T>, bool>) {
    return t == dtype::boolean;
  } else {
    return safetensors::viewable_as<T>(t);
  }
}
}  // namespace detail

class file_builder;

/// Fills the records of one struct tensor (zero-filled when created). Valid
/// while its `file_builder` lives; setting the same tensor again with
/// `set_records`/`set_json` resets the records this writer refers to.
class record_writer {
 public:
  record_writer(const record_writer&) = delete;
  record_writer& operator=(const record_writer&) = delete;
  ~record_writer();

  /// Number of records (product of the dims).
  [[nodiscard]] std::size_t size() const noexcept;

  /// One scalar element; `T` must match the field's dtype as in
  /// `safetensors::viewable_as` (or be `bool` for BOOL).
  template <class T>
  void set(std::size_t record, std::string_view field_path, T value) {
    static_assert(std::is_trivially_copyable_v<T>, "scalar fields take trivially copyable values");
    std::array<std::byte, sizeof(T)> raw{};
    if constexpr (std::is_same_v<T, bool>) {
      raw[0] = std::byte{value ? std::uint8_t{1} : std::uint8_t{0}};
    } else {
      std::memcpy(raw.data(), &value, sizeof(T));
    }
    set_scalar(record, field_path, &detail::writable_as<T>, raw);
  }

  /// Raw little-endian bytes of a fixed-size field (scalar, fixed array or
  /// sub-array, nested record without String/List): exactly its size.
  void set_bytes(std::size_t record, std::string_view field_path, std::span<const std::byte> raw);
  /// A String field (valid UTF-8).
  void set_string(std::size_t record, std::string_view field_path, std::string_view text);
  /// A List field: packed elements of its element type (a whole number of them).
  void set_list_bytes(std::size_t record, std::string_view field_path, std::span<const std::byte> packed);
  /// The fixed-size bytes of every record at once, `size()` records in the
  /// layout of the schema (field offsets, record size), checked as
  /// `set_bytes` checks them (padding zero, BOOL 0/1). The bytes at String
  /// and List fields are ignored: their contents are set with `set_string` /
  /// `set_list_bytes`, and their BlobRefs are computed when serialising.
  void set_all_bytes(std::span<const std::byte> records);

 private:
  friend class file_builder;
  explicit record_writer(std::unique_ptr<detail::tensor_values> values);
  void set_scalar(std::size_t record, std::string_view field_path, bool (*accepts)(dtype) noexcept,
                  std::span<const std::byte> raw);

  std::unique_ptr<detail::tensor_values> values_;
};

/// Collects the logical tensors of one file and writes it.
class file_builder {
 public:
  /// Throws MT_ALIGNMENT_VALUE for a bad `alignment`, MT_UNKNOWN_KEY for a
  /// user key starting with "metatensor.", ST_HEADER_UTF8 for user metadata
  /// that is not valid UTF-8.
  explicit file_builder(compiled_schema schema, writer_options options = {});
  file_builder(file_builder&&) noexcept;
  file_builder& operator=(file_builder&&) noexcept;
  file_builder(const file_builder&) = delete;
  file_builder& operator=(const file_builder&) = delete;
  ~file_builder();

  [[nodiscard]] const compiled_schema& schema() const noexcept;
  [[nodiscard]] const writer_options& options() const noexcept;

  /// Flat tensor from little-endian element bytes (`product(dims) * bits / 8`
  /// of them; sub-byte types packed LSB first).
  void set_flat_bytes(std::string_view name, std::vector<std::uint64_t> dims,
                      std::span<const std::byte> bytes);
  /// Flat tensor from typed values (`T` as for `safetensors::viewable_as`, or
  /// `bool` for BOOL).
  template <class T>
  void set_flat(std::string_view name, std::vector<std::uint64_t> dims, std::span<const T> values) {
    static_assert(std::is_trivially_copyable_v<T>, "flat tensors take trivially copyable values");
    check_flat_type(name, &detail::writable_as<T>, sizeof(T));
    set_flat_bytes(name, std::move(dims), std::as_bytes(values));
  }

  /// Blob tensor whose item is a String: one string per element, row-major.
  void set_strings(std::string_view name, std::vector<std::uint64_t> dims,
                   std::span<const std::string> values);
  /// Blob tensor whose item is a List: each value is the packed elements.
  void set_list_bytes(std::string_view name, std::vector<std::uint64_t> dims,
                      std::span<const std::vector<std::byte>> values);

  /// Struct tensor with `product(dims)` zero-filled records.
  record_writer& set_records(std::string_view name, std::vector<std::uint64_t> dims);

  /// Any kind from its §8.3 logical value (nested arrays for the dims;
  /// records as objects with every field, tuples as arrays, fixed arrays as
  /// arrays, strings, lists as arrays, C64 as [re, im], BOOL as true/false;
  /// floats are rounded to nearest even, finite values beyond the type's
  /// range are refused). Errors: MT_VALUE / MT_UTF8 with the JSON Pointer,
  /// MT_SHAPE for ragged arrays or dims outside the bounds.
  void set_json(std::string_view name, const nlohmann::json& value);
  /// `set_json` for every member of a logical value object (§8.3).
  void set_logical_value(const nlohmann::json& object);

  /// Removes a tensor set earlier (no-op when absent).
  void erase(std::string_view name);
  /// True when `name` has been set.
  [[nodiscard]] bool contains(std::string_view name) const noexcept;

  /// The canonical file image (§3.5). Throws MT_TENSOR_SET when a required
  /// root property has not been set.
  [[nodiscard]] std::vector<std::byte> serialize() const;
  /// Writes the file atomically (temporary file + rename): an existing file
  /// at `path` is left untouched when anything fails, and a killed process
  /// leaves `path` as it was and no temporary file. `durability.sync`
  /// (default on) fsyncs the file and its directory before returning.
  void write(const std::filesystem::path& path, const tensogram::atomic_write_options& durability = {}) const;

 private:
  struct impl;
  /// The values of every tensor set, sorted by name.
  [[nodiscard]] std::vector<const detail::tensor_values*> values() const;
  void check_flat_type(std::string_view name, bool (*accepts)(dtype) noexcept, std::size_t size) const;
  std::unique_ptr<impl> impl_;
};

}  // namespace metatensor
