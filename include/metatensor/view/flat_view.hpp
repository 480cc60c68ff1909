// The view of a flat logical tensor (spec 06 §5.1, §9). Part of
// <metatensor/file.hpp>, whose `file::flat` makes it.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "metatensor/safetensors.hpp"
#include "metatensor/view/checks.hpp"

namespace metatensor {

class file;
class migrated_file;

/// A flat logical tensor (§5.1, §9): C-order elements of one dtype.
class flat_view {
 public:
  [[nodiscard]] const std::string& name() const noexcept { return *name_; }
  [[nodiscard]] dtype type() const noexcept { return type_; }
  /// Logical dims (the physical shape).
  [[nodiscard]] std::span<const std::uint64_t> dims() const noexcept { return dims_; }
  /// Number of elements.
  [[nodiscard]] std::uint64_t size() const noexcept { return count_; }
  [[nodiscard]] std::span<const std::byte> bytes() const noexcept { return bytes_; }

  /// Zero-copy typed view (`safetensors::viewable_as<T>` decides which `T`
  /// fit; sub-byte dtypes have none). Throws `tensogram::invalid_arg_error`.
  template <class T>
  [[nodiscard]] std::span<const T> as() const {
    if (!safetensors::viewable_as<T>(type_)) {
      detail::throw_type_mismatch(*name_, safetensors::dtype_name(type_), sizeof(T));
    }
    return detail::reinterpret<T>(bytes_);
  }

 private:
  friend class file;
  friend class migrated_file;
  const std::string* name_ = nullptr;
  dtype type_ = dtype::u8;
  std::span<const std::uint64_t> dims_;
  std::uint64_t count_ = 0;
  std::span<const std::byte> bytes_;
};

}  // namespace metatensor
