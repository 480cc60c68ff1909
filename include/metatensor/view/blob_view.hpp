// The view of a blob logical tensor (spec 06 §5.1, §9): one String or List
// per element. Part of <metatensor/file.hpp>, whose `file::blobs` makes it.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "metatensor/layout.hpp"
#include "metatensor/view/blob_ref.hpp"
#include "metatensor/view/checks.hpp"

namespace metatensor {

class file;
class migrated_file;

/// A blob logical tensor (§5.1, §9): one String or List per element.
class blob_view {
 public:
  [[nodiscard]] const std::string& name() const noexcept { return *name_; }
  [[nodiscard]] std::span<const std::uint64_t> dims() const noexcept { return dims_; }
  /// Number of blobs (product of dims).
  [[nodiscard]] std::uint64_t size() const noexcept { return count_; }
  /// The item type: a string or a list (§7 `item`).
  [[nodiscard]] const type_layout& item() const noexcept { return *item_; }
  /// The index (BlobRefs) and heap bytes.
  [[nodiscard]] std::span<const std::byte> index() const noexcept { return index_; }
  [[nodiscard]] std::span<const std::byte> heap() const noexcept { return heap_; }

  [[nodiscard]] blob_ref ref(std::uint64_t i) const {
    detail::check_index(*name_, i, count_);
    return detail::read_blob_ref(index_.data() + i * 16);
  }
  [[nodiscard]] std::span<const std::byte> bytes(std::uint64_t i) const {
    detail::check_index(*name_, i, count_);
    return detail::blob_at(heap_, index_.data() + i * 16);
  }
  /// Blob `i` of a String tensor.
  [[nodiscard]] std::string_view string(std::uint64_t i) const {
    if (item_->type != value_type::string) detail::throw_type_mismatch(*name_, detail::type_name(*item_), 0);
    return detail::as_text(bytes(i));
  }
  /// Blob `i` of a List tensor as elements (see `detail::elements_viewable_as`).
  template <class T>
  [[nodiscard]] std::span<const T> list(std::uint64_t i) const {
    if (item_->type != value_type::list || !item_->elem || !detail::elements_viewable_as<T>(*item_->elem)) {
      detail::throw_type_mismatch(*name_, detail::type_name(*item_), sizeof(T));
    }
    return detail::reinterpret<T>(bytes(i));
  }

 private:
  friend class file;
  friend class migrated_file;
  const std::string* name_ = nullptr;
  const type_layout* item_ = nullptr;
  std::span<const std::uint64_t> dims_;
  std::uint64_t count_ = 0;
  std::span<const std::byte> index_;
  std::span<const std::byte> heap_;
};

}  // namespace metatensor
