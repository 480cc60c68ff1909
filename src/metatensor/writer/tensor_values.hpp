// What the writer keeps per logical tensor until it serialises (spec 06
// §6.4): fixed-size bytes plus the content of every blob, by record and
// BlobRef slot; and the errors every writer source raises. Not a public
// header.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "metatensor/error.hpp"
#include "metatensor/layout.hpp"
#include "tensogram/core/error.hpp"

namespace metatensor::detail {

/// A condition that would make the file violate the spec (§8.2 names).
[[noreturn]] inline void writer_error(errc code, const std::string& detail) {
  throw error(code, detail);
}

/// Misuse of the C++ API (wrong type, size, kind, field path, index).
[[noreturn]] inline void api_misuse(const std::string& msg) {
  throw tensogram::invalid_arg_error(msg);
}

/// a * b, or ST_OVERFLOW naming `what`.
[[nodiscard]] inline std::uint64_t checked_mul(std::uint64_t a, std::uint64_t b, const std::string& what) {
  if (a != 0 && b > std::numeric_limits<std::uint64_t>::max() / a)
    writer_error(errc::st_overflow, what + ": size overflows");
  return a * b;
}

// ---------------------------------------------------------------------------
// Blob slots (§6.4): every BlobRef position inside one element, in the order
// heaps are filled (field order, depth-first into nested records and fixed
// arrays). In a C layout field offsets increase in field order, so the list
// is also sorted by offset.

struct blob_slot {
  std::uint64_t offset = 0;
  const type_layout* elem = nullptr;  // List element type; nullptr for a String
};

using slot_table = std::vector<blob_slot>;

/// Every BlobRef slot of one element of `layout` (struct and blob kinds).
[[nodiscard]] slot_table slots_of(const tensor_layout& layout);

struct tensor_values {
  const tensor_layout* layout = nullptr;
  std::shared_ptr<const slot_table> slots;  // struct and blob kinds
  std::vector<std::uint64_t> dims;
  std::uint64_t count = 0;                    // elements (records, strings, lists)
  std::uint64_t element_size = 0;             // struct: record size; blob: 16; flat: 0 (see data)
  std::vector<std::byte> data;                // flat: elements; struct: records, BlobRef bytes still zero
  std::vector<std::vector<std::byte>> blobs;  // count * slots->size(), row-major then slot order

  [[nodiscard]] std::size_t slot_count() const noexcept { return slots ? slots->size() : 0; }
};

}  // namespace metatensor::detail
