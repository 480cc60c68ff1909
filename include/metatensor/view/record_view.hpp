// The views of a struct logical tensor (spec 06 §5.1, §9): all records,
// one record, and (through field_view.hpp) one field of every record. Part
// of <metatensor/file.hpp>, whose `file::records` makes them.
#pragma once

#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>

#include "metatensor/layout.hpp"
#include "metatensor/view/blob_ref.hpp"
#include "metatensor/view/checks.hpp"
#include "metatensor/view/field_view.hpp"

namespace metatensor {

class file;
class migrated_file;

/// One record of a struct tensor (or a nested record inside one).
class record_ref {
 public:
  [[nodiscard]] std::span<const std::byte> bytes() const noexcept { return bytes_; }
  [[nodiscard]] const record_layout& layout() const noexcept { return *layout_; }

  /// A scalar field (no fixed-array dims), read by copy. `field` may be a
  /// path `outer.inner` through nested records. Throws
  /// `tensogram::invalid_arg_error` for an unknown field or a type mismatch.
  template <class T>
  [[nodiscard]] T get(std::string_view field) const {
    const auto loc = locate(field);
    if (loc.type->type != value_type::scalar || !loc.type->shape.empty() ||
        !safetensors::viewable_as<T>(loc.type->scalar)) {
      detail::throw_type_mismatch(field, detail::type_name(*loc.type), sizeof(T));
    }
    T out;
    std::memcpy(&out, bytes_.data() + loc.offset, sizeof(T));
    return out;
  }

  /// A String field's text (bytes, UTF-8 after deep validation).
  [[nodiscard]] std::string_view string(std::string_view field) const;
  /// A List field's elements (see `detail::elements_viewable_as`).
  template <class T>
  [[nodiscard]] std::span<const T> list(std::string_view field) const {
    const auto loc = locate(field);
    if (loc.type->type != value_type::list || !loc.type->shape.empty() || !loc.type->elem ||
        !detail::elements_viewable_as<T>(*loc.type->elem)) {
      detail::throw_type_mismatch(field, detail::type_name(*loc.type), sizeof(T));
    }
    return detail::reinterpret<T>(blob_at(loc.offset));
  }
  /// The raw bytes of a String or List field's blob.
  [[nodiscard]] std::span<const std::byte> blob(std::string_view field) const;
  /// A nested record field (struct or tuple, no fixed-array dims).
  [[nodiscard]] record_ref sub(std::string_view field) const;

 private:
  friend class record_view;
  friend class file;
  struct located {
    std::uint64_t offset;
    const type_layout* type;
  };
  record_ref(std::span<const std::byte> bytes, std::span<const std::byte> heap, const record_layout* layout)
      : bytes_(bytes), heap_(heap), layout_(layout) {}
  [[nodiscard]] located locate(std::string_view path) const;
  [[nodiscard]] std::span<const std::byte> blob_at(std::uint64_t offset) const noexcept;

  std::span<const std::byte> bytes_;
  std::span<const std::byte> heap_;
  const record_layout* layout_ = nullptr;
};

/// A struct logical tensor (§5.1, §9): records in C order over the dims.
class record_view {
 public:
  [[nodiscard]] const std::string& name() const noexcept { return *name_; }
  [[nodiscard]] std::span<const std::uint64_t> dims() const noexcept { return dims_; }
  /// Number of records (product of dims).
  [[nodiscard]] std::uint64_t size() const noexcept { return count_; }
  [[nodiscard]] const record_layout& record() const noexcept { return *record_; }
  /// All records' bytes.
  [[nodiscard]] std::span<const std::byte> bytes() const noexcept { return bytes_; }
  /// The heap's bytes (empty when the tensor has no heap).
  [[nodiscard]] std::span<const std::byte> heap() const noexcept { return heap_; }

  /// Record `i` (flat C-order index); throws `tensogram::invalid_arg_error`.
  [[nodiscard]] record_ref operator[](std::uint64_t i) const;
  /// Field `path` (`outer.inner` through nested records, no fixed arrays of
  /// records on the way) of every record.
  [[nodiscard]] field_view field(std::string_view path) const;

  /// Whole-record typed view (§9). Allowed when `sizeof(T)` equals the record
  /// size and `alignof(T)` does not exceed the record alignment; the CALLER
  /// asserts that T's fields equal the record's (order, types, offsets).
  template <class T>
  [[nodiscard]] std::span<const T> as() const {
    if (sizeof(T) != record_->size || alignof(T) > record_->align) {
      detail::throw_type_mismatch(*name_, "struct of " + std::to_string(record_->size) + " bytes", sizeof(T));
    }
    return detail::reinterpret<T>(bytes_);
  }

 private:
  friend class file;
  friend class migrated_file;
  const std::string* name_ = nullptr;
  const record_layout* record_ = nullptr;
  std::span<const std::uint64_t> dims_;
  std::uint64_t count_ = 0;
  std::span<const std::byte> bytes_;
  std::span<const std::byte> heap_;
};

}  // namespace metatensor
