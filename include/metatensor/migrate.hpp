// Reading a file through a newer, compatible schema (schema evolution: the
// "reader schema" of docs/metatensor.md, section "Schema migration").
//
// `migrated_file` opens and validates a file with the schema it was written
// with, classifies every logical tensor with `compatibility` (the same rules
// `metatensor diff` prints, so diff and migration never disagree), then
// presents each tensor in the reader's terms:
//
// * identical layout: the file's own views (zero-copy);
// * view-compatible or convertible (fields added with a `default`, removed,
//   reordered, realigned, widened; a widened flat dtype; String <-> List of
//   Uint8; List elements widened): the tensor is converted once, on first
//   access, into an owned buffer in the reader's layout, and the views point
//   there (a String blob tensor read as a List of Uint8 keeps the file's bytes);
// * `field()` of a struct tensor is zero-copy whenever the writer holds that
//   field with the same type, whatever its offset (a strided view).
//
// Opening fails with MT_SCHEMA_INCOMPATIBLE (message: JSON Pointer of the
// reader's schema node, field path, reason) when the pair of schemas is
// incompatible, with MT_SHAPE when a tensor's dims miss a dimension bound of
// the reader schema, and with MT_VALUE when a `default` does not fit its
// field's type. A converted List blob that is not UTF-8 when
// read as a String is MT_UTF8, reported on first access like the BlobRef
// checks. Views are valid while the `migrated_file` (or a copy) is alive.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "metatensor/compatibility.hpp"
#include "metatensor/file.hpp"
#include "metatensor/layout.hpp"

namespace metatensor {

class migrated_file {
 public:
  /// Opens `path` (as `file::open`) and resolves it against `reader`.
  [[nodiscard]] static migrated_file open(const std::filesystem::path& path, const compiled_schema& reader);
  /// Resolves an already opened file against `reader`.
  [[nodiscard]] static migrated_file resolve(file source, const compiled_schema& reader);

  /// The file as written (its own schema and views).
  [[nodiscard]] const file& source() const noexcept;
  /// The reader schema.
  [[nodiscard]] const compiled_schema& schema() const noexcept;
  /// The classification of writer schema -> reader schema.
  [[nodiscard]] const compatibility_report& report() const noexcept;

  /// Logical tensors present in the file and known to the reader, sorted.
  [[nodiscard]] std::vector<std::string> tensor_names() const;
  [[nodiscard]] bool contains(std::string_view name) const noexcept;
  /// The reader's layout; `tensogram::invalid_arg_error` when not present.
  [[nodiscard]] const tensor_layout& layout(std::string_view name) const;
  [[nodiscard]] std::span<const std::uint64_t> dims(std::string_view name) const;
  /// The tensor's class (identical, view-compatible or convertible).
  [[nodiscard]] compatibility_class tensor_class(std::string_view name) const;
  /// True when `flat` / `records` / `blobs` of the tensor point into the
  /// file image; false when they point at converted, owned bytes.
  [[nodiscard]] bool zero_copy(std::string_view name) const;

  /// Views in the reader's types and layout (see above); the wrong kind is a
  /// `tensogram::invalid_arg_error`. The first view of a converted tensor
  /// converts it (O(tensor), once).
  [[nodiscard]] flat_view flat(std::string_view name) const;
  [[nodiscard]] record_view records(std::string_view name) const;
  [[nodiscard]] blob_view blobs(std::string_view name) const;
  /// Field `path` ("outer.inner") of every record: a view into the file when
  /// the writer's field has the same type, else into the converted records.
  [[nodiscard]] field_view field(std::string_view name, std::string_view path) const;
  /// Whether `field(name, path)` is a view into the file image.
  [[nodiscard]] bool field_zero_copy(std::string_view name, std::string_view path) const;

  struct state;  // defined in src/metatensor/view/migrate.cpp

 private:
  explicit migrated_file(std::shared_ptr<const state> s) : state_(std::move(s)) {}
  std::shared_ptr<const state> state_;
};

}  // namespace metatensor
