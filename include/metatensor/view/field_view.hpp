// The strided view of one field of every record of a struct tensor (spec
// 06 §9), and the typed span it yields. Part of <metatensor/file.hpp>,
// made by `record_view::field`.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "metatensor/layout.hpp"
#include "metatensor/view/checks.hpp"

namespace metatensor {

class record_view;

/// Typed elements of one scalar field of every record (`field_view::as<T>()`):
/// element `i` (C order over the logical dims ++ fixed-array dims) lies at
/// `base + (i / inner) * record_size + (i % inner) * sizeof(T)`. The type was
/// checked once when the span was made, so `operator[]` is a multiply and a
/// copy (unchecked, like `std::span`); `at()` checks the index.
template <class T>
class strided_span {
 public:
  strided_span() = default;
  strided_span(const std::byte* base, std::uint64_t count, std::uint64_t inner, std::uint64_t stride) noexcept
      : base_(base), count_(count), inner_(inner), stride_(stride) {}

  [[nodiscard]] std::uint64_t size() const noexcept { return count_; }
  [[nodiscard]] bool empty() const noexcept { return count_ == 0; }
  [[nodiscard]] T operator[](std::uint64_t i) const noexcept {
    const std::byte* p =
        inner_ == 1 ? base_ + i * stride_ : base_ + (i / inner_) * stride_ + (i % inner_) * sizeof(T);
    T out;
    std::memcpy(&out, p, sizeof(T));  // the field may be under-aligned for T in packed records
    return out;
  }
  [[nodiscard]] T at(std::uint64_t i) const {
    detail::check_index("strided_span", i, count_);
    return (*this)[i];
  }

  class iterator {
   public:
    using value_type = T;
    using difference_type = std::ptrdiff_t;
    iterator() = default;
    iterator(const strided_span* s, std::uint64_t i) noexcept : s_(s), i_(i) {}
    T operator*() const noexcept { return (*s_)[i_]; }
    iterator& operator++() noexcept {
      ++i_;
      return *this;
    }
    iterator operator++(int) noexcept {
      iterator t = *this;
      ++i_;
      return t;
    }
    bool operator==(const iterator& o) const noexcept { return i_ == o.i_; }

   private:
    const strided_span* s_ = nullptr;
    std::uint64_t i_ = 0;
  };
  [[nodiscard]] iterator begin() const noexcept { return {this, 0}; }
  [[nodiscard]] iterator end() const noexcept { return {this, count_}; }

 private:
  const std::byte* base_ = nullptr;
  std::uint64_t count_ = 0;
  std::uint64_t inner_ = 1;
  std::uint64_t stride_ = 0;
};

/// A strided view of one field of every record (§9): dims = logical dims ++
/// the field's fixed-array dims; element `i` in C order over those dims.
class field_view {
 public:
  [[nodiscard]] std::span<const std::uint64_t> dims() const noexcept { return dims_; }
  /// Byte strides, one per dim.
  [[nodiscard]] std::span<const std::uint64_t> strides() const noexcept { return strides_; }
  /// Number of elements (product of dims).
  [[nodiscard]] std::uint64_t count() const noexcept { return count_; }
  /// The field's type (its `shape` holds the fixed-array dims).
  [[nodiscard]] const type_layout& type() const noexcept { return *type_; }
  /// Address of element 0 (`abs(t) + offset(f)`).
  [[nodiscard]] const std::byte* data() const noexcept { return base_; }

  /// Element `flat_index` of a scalar field, read by copy (type and index
  /// checked on every call; `as<T>()` checks the type once).
  template <class T>
  [[nodiscard]] T at(std::uint64_t flat_index) const {
    check_scalar<T>();
    T out;
    std::memcpy(&out, element(flat_index), sizeof(T));
    return out;
  }
  /// The elements of a scalar field as `T`, type-checked once: the fast way
  /// to scan a field (`for (double m : recs.field("mass").as<double>())`).
  template <class T>
  [[nodiscard]] strided_span<T> as() const {
    check_scalar<T>();
    return {base_, count_, inner_count_, record_size_};
  }
  /// Element `flat_index` of a String field.
  [[nodiscard]] std::string_view string(std::uint64_t flat_index) const;
  /// The blob bytes of element `flat_index` of a String or List field.
  [[nodiscard]] std::span<const std::byte> blob(std::uint64_t flat_index) const;

 private:
  friend class record_view;
  template <class T>
  void check_scalar() const {
    if (type_->type != value_type::scalar || !safetensors::viewable_as<T>(type_->scalar)) {
      detail::throw_type_mismatch(path_, detail::type_name(*type_), sizeof(T));
    }
  }
  [[nodiscard]] const std::byte* element(std::uint64_t flat_index) const {
    detail::check_index(path_, flat_index, count_);
    if (inner_count_ == 1) return base_ + flat_index * record_size_;
    return base_ + (flat_index / inner_count_) * record_size_ + (flat_index % inner_count_) * element_size_;
  }

  std::string path_;
  const type_layout* type_ = nullptr;
  const std::byte* base_ = nullptr;
  std::vector<std::uint64_t> dims_;
  std::vector<std::uint64_t> strides_;
  std::uint64_t count_ = 0;
  std::uint64_t inner_count_ = 1;  // elements per record (product of fixed dims)
  std::uint64_t record_size_ = 0;
  std::uint64_t element_size_ = 0;
  std::span<const std::byte> heap_;
};

}  // namespace metatensor
