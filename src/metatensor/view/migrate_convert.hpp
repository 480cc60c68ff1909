// Converting values from a writer layout into a reader layout (schema
// migration, docs/metatensor.md "Schema migration"): the widenings that
// `is_widening` accepts, records field by field (added fields from their
// `default`), String <-> List of Uint8, List elements. Not a public header.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "metatensor/layout.hpp"

namespace metatensor::detail {

/// Where converted String and List contents go, and where they come from.
struct conversion {
  std::span<const std::byte> src_heap;  ///< the writer tensor's heap
  std::vector<std::byte>* heap;         ///< the reader heap being built (null: no blobs)
  std::string where;                    ///< JSON Pointer of the current value, for MT_UTF8 / MT_VALUE
};

/// One scalar of dtype `from` at `src` as dtype `to` at `dst`: a byte copy
/// when equal, else one of the exact widenings (`is_widening(from, to)`).
void convert_scalar(dtype from, const std::byte* src, dtype to, std::byte* dst);

/// A value of writer type `w` at `src` into reader type `r` at `dst` (the
/// pair classified view-compatible or convertible by `compatibility`).
void convert_type(const type_layout& w, const std::byte* src, const type_layout& r, std::byte* dst,
                  conversion& c);
/// A record: reader fields from the writer's field of the same name, or
/// from their `default`; padding stays zero (`dst` arrives zeroed).
void convert_record(const record_layout& w, const std::byte* src, const record_layout& r, std::byte* dst,
                    conversion& c);

/// Encodes every `default` that `convert_record(w, ..., r, ...)` would use,
/// once, so that a default that does not fit its field's type fails when
/// the file is opened (MT_VALUE / MT_UTF8 naming `where` + the field path).
void check_defaults(const record_layout& w, const record_layout& r, const std::string& where);

/// Appends `blob` to `heap` at a multiple of `align` (zero bytes before it,
/// §6.4) and stores its BlobRef at `ref`.
void append_blob(std::vector<std::byte>& heap, std::span<const std::byte> blob, std::uint64_t align,
                 std::byte* ref);

}  // namespace metatensor::detail
