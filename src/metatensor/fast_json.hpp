// The fast path of header parsing (issue 27): simdjson reads a safetensors
// header straight into its tensor table, and the embedded JSON documents
// (schema, layout table) into nlohmann values, without the two nlohmann
// passes of `parse_strict_json`.
//
// The fast path only ever *accepts*: it returns nothing as soon as the text
// breaks a rule of spec 06 §2 (rules 3–7) or §3.1, or uses a construct it
// leaves to the reference path (a `-0` number, a byte-order mark, a NUL).
// The caller then runs the reference path (`parse_strict_json` and the rule
// passes of safetensors_read.cpp), which reports the first failure with the
// exact name and text of §8.2. So error reporting is unchanged, and a valid
// header is read once, by a parser that validates UTF-8 and JSON at
// several GB/s.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "metatensor/safetensors.hpp"

namespace metatensor::detail {

/// What the tensor table's views point into besides the header text: the
/// names that do not occur verbatim in the text (escaped ones, and every
/// name of the reference path) and all shapes, one after another. A deque
/// keeps each string, and so each view of it, in place as more are added.
/// Also `__metadata__`, whose values (a metatensor file's schema and layout
/// table: tens of MB in large files, issue 27) are then shared by the copies
/// of a file and by what is read from them (`file::metadata_value`).
struct header_storage {
  std::deque<std::string> names;
  std::vector<std::uint64_t> dims;
  std::map<std::string, std::string> metadata;
};

/// One tensor entry of a header that passed rules 3–7 of §2. `name` views
/// the header text or `header_storage::names`; the shape is
/// `dims[shape_at, shape_at + rank)`, bound to `shape` by `bind_shapes` once
/// `dims` stops growing.
struct header_entry {
  std::string_view name;
  safetensors::dtype type = safetensors::dtype::u8;
  std::size_t shape_at = 0;
  std::size_t rank = 0;
  std::span<const std::uint64_t> shape;
  std::uint64_t begin = 0;
  std::uint64_t end = 0;
};

/// Sets every entry's `shape` from its place in `storage.dims`.
inline void bind_shapes(std::vector<header_entry>& entries, const header_storage& storage) {
  const std::span<const std::uint64_t> dims = storage.dims;
  for (auto& e : entries) e.shape = dims.subspan(e.shape_at, e.rank);
}

/// A header that passed rules 3–7: entries sorted by name (byte-wise, the
/// order in which the reference path checks rules 8 and later), metadata
/// pairs sorted by key; shapes bound.
struct fast_header {
  std::vector<header_entry> entries;
  std::shared_ptr<header_storage> storage;
  std::vector<std::pair<std::string, std::string>> metadata;
  bool has_metadata = false;
};

/// Rules 3–7 of §2 for the header text `image[8, 8 + n)`, read from
/// simdjson's structural index (its stage 1) without a DOM; nothing when a
/// rule fails or the reference path must decide. Names view the text where
/// they occur in it verbatim, so `image` must outlive the entries. The bytes
/// after the text in `image` (tensor data) serve as simdjson's read-ahead
/// padding when there are enough of them, so the text is not copied.
/// Metadata values keep simdjson's padding after them in their capacity.
[[nodiscard]] std::optional<fast_header> read_header_fast(std::span<const std::byte> image, std::uint64_t n);

/// Rules 3–7 of §2 by the reference path (nlohmann, one rule per pass, so
/// the first failure is the one §8.2 names; throws `metatensor::error`):
/// `entries` in name order with shapes bound, as `read_header_fast` gives
/// them, their names and shapes in `storage`.
void read_header_reference(std::string_view text, std::map<std::string, std::string>& metadata,
                           bool& has_metadata, std::vector<header_entry>& entries, header_storage& storage);

/// A strict JSON document (§2 rules 3–4 and 7, §3.1, §8.4: UTF-8, one
/// value, no duplicate key, nesting <= 64) as the value `parse_strict_json`
/// would return; nothing when the reference path must decide.
[[nodiscard]] std::optional<nlohmann::json> parse_json_fast(std::string_view text);

}  // namespace metatensor::detail
