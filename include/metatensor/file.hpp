// A validated metatensor file and its zero-copy views (spec 06 §3, §5–§9).
//
// `file::open` maps a file, runs the whole structural validation of §8.1 in
// the order of §8.2 (base layer, `metatensor.` keys, schema, layout table,
// tensor set, dtypes and shapes, placement and padding, BlobRefs) and reports
// the first failure as a `metatensor::error`. Its cost is O(header + number
// of BlobRefs); no other tensor data is read. Deep validation (§8.1, §8.3:
// BOOL bytes, UTF-8, zero padding, value keywords) runs on request.
//
// "Logical tensors present" are the physical tensors whose name is a root
// property of the schema (the primary names, §3.2). Every other physical
// tensor must then be the heap of a present tensor or a padding tensor.
//
// Views (§9) are plain values holding addresses into the file image; they
// are valid while the `file` (or any copy of it: copies share the image) is
// alive. All bounds are established at open time, so element access checks
// only the index range. Typed views assume a little-endian host (§9).
//
// Memory alignment: a file opened from a buffer whose base address is not a
// multiple of the largest placement alignment R(t) of the file (at least
// `A`) is copied into a buffer aligned to it (§9); the same holds for a
// memory map when R exceeds the page size. Typed views are therefore always
// aligned to their element type.
//
// Remote files (§10): `from_header_image` validates a sparse image whose
// tensor data arrives later, deferring the BlobRef checks to
// `check_blob_refs`, which the caller runs per tensor before using its
// BlobRefs (§8.1, §10.7); such an image is never copied.
#pragma once

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

#include "metatensor/error.hpp"
#include "metatensor/layout.hpp"
#include "metatensor/safetensors.hpp"
#include "tensogram/core/buffer.hpp"

namespace metatensor {

/// A BlobRef (§6.4): `offset` and `length` in bytes within the tensor's heap.
struct blob_ref {
  std::uint64_t offset = 0;
  std::uint64_t length = 0;
};

namespace detail {

/// Reads the BlobRef stored at `p` (two little-endian U64; the host is
/// little-endian, see file.cpp).
[[nodiscard]] inline blob_ref read_blob_ref(const std::byte* p) noexcept {
  blob_ref r;
  std::memcpy(&r.offset, p, 8);
  std::memcpy(&r.length, p + 8, 8);
  return r;
}
/// The blob a BlobRef at `ref_at` designates in `heap` (checked at open, §6.4).
[[nodiscard]] inline std::span<const std::byte> blob_at(std::span<const std::byte> heap,
                                                        const std::byte* ref_at) noexcept {
  const blob_ref r = read_blob_ref(ref_at);
  return {heap.data() + r.offset, static_cast<std::size_t>(r.length)};
}
[[nodiscard]] inline std::string_view as_text(std::span<const std::byte> b) noexcept {
  return {reinterpret_cast<const char*>(b.data()), b.size()};
}
/// Throws `tensogram::invalid_arg_error` "<where>: index i out of range [0, n)".
[[noreturn]] void throw_index(std::string_view where, std::uint64_t index, std::uint64_t count);
inline void check_index(std::string_view where, std::uint64_t index, std::uint64_t count) {
  if (index >= count) throw_index(where, index, count);
}
/// Throws `tensogram::invalid_arg_error` about a type mismatch.
[[noreturn]] void throw_type_mismatch(std::string_view where, std::string_view have, std::size_t host_size);
/// Human-readable name of a type ("F32", "F32[3]", "struct", "string", "list").
[[nodiscard]] std::string type_name(const type_layout& type);

/// True when host type `T` may view packed elements of `elem` (a List element
/// or record field type): scalars by `viewable_as` (fixed arrays are viewed
/// flattened), records when `sizeof(T)` equals the record size and
/// `alignof(T)` does not exceed its alignment (the caller asserts that `T`'s
/// layout equals the record's, §9).
template <class T>
[[nodiscard]] bool elements_viewable_as(const type_layout& elem) noexcept {
  if (elem.type == value_type::scalar) return safetensors::viewable_as<T>(elem.scalar);
  if (elem.type == value_type::record && elem.shape.empty() && elem.record) {
    return sizeof(T) == elem.record->size && alignof(T) <= elem.record->align;
  }
  return false;
}

/// `bytes` as a span of `T` (the caller checked type and alignment).
template <class T>
[[nodiscard]] std::span<const T> reinterpret(std::span<const std::byte> bytes) noexcept {
  if (bytes.empty()) return {};
  // The bytes lie inside the validated file image and are aligned for T
  // (§6.4, §6.6, and the aligned image of §9); T is trivially copyable.
  return {reinterpret_cast<const T*>(bytes.data()), bytes.size() / sizeof(T)};
}

}  // namespace detail

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
  const std::string* name_ = nullptr;
  dtype type_ = dtype::u8;
  std::span<const std::uint64_t> dims_;
  std::uint64_t count_ = 0;
  std::span<const std::byte> bytes_;
};

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
  const std::string* name_ = nullptr;
  const record_layout* record_ = nullptr;
  std::span<const std::uint64_t> dims_;
  std::uint64_t count_ = 0;
  std::span<const std::byte> bytes_;
  std::span<const std::byte> heap_;
};

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
  const std::string* name_ = nullptr;
  const type_layout* item_ = nullptr;
  std::span<const std::uint64_t> dims_;
  std::uint64_t count_ = 0;
  std::span<const std::byte> index_;
  std::span<const std::byte> heap_;
};

/// A structurally validated metatensor file (§8.1). Cheap to copy (the
/// image and the compiled schema are shared).
class file {
 public:
  /// Maps `path` read-only and validates it. Throws `tensogram::io_error`
  /// for file-system failures and `metatensor::error` for the first
  /// violation in §8.2 order.
  [[nodiscard]] static file open(const std::filesystem::path& path);
  /// Validates an in-memory image (copied into an aligned buffer when its
  /// base address is not aligned, §9).
  [[nodiscard]] static file from_buffer(tensogram::buffer image);
  /// Validates the header of a sparse file image (§10.4 step 3, §10.7): an
  /// image of the whole file size whose bytes [0, 8 + N) are present while
  /// its tensor data may not have arrived yet. Runs every structural check
  /// of §8.1 in §8.2 order except the BlobRef checks of §6.4 (step 8, the
  /// only one that reads tensor data): run `check_blob_refs` for a tensor
  /// once its primary and heap are in the image, before dereferencing any
  /// of its BlobRefs (§8.1 allows deferring them). Reads only the header.
  ///
  /// The image is never copied: views point into it, so bytes written into
  /// it later (through the memory the caller owns) are what they see. Throws
  /// `metatensor::error` for the first violation, and
  /// `tensogram::invalid_arg_error` when the base address is not aligned to
  /// the file's largest placement alignment (where `from_buffer` would copy).
  [[nodiscard]] static file from_header_image(tensogram::buffer image);

  [[nodiscard]] const safetensors::file& base() const noexcept;
  /// The file alignment A (§3.1).
  [[nodiscard]] std::uint64_t alignment() const noexcept;
  [[nodiscard]] const compiled_schema& schema() const noexcept;
  /// The file's `metatensor.layout`, parsed (equal to the recomputed table).
  [[nodiscard]] const nlohmann::json& layout_table() const noexcept;
  /// `__metadata__` entries whose key does not start with `metatensor.`.
  [[nodiscard]] std::map<std::string, std::string> user_metadata() const;

  /// Logical tensors present, sorted by name.
  [[nodiscard]] std::vector<std::string> tensor_names() const;
  [[nodiscard]] bool contains(std::string_view name) const noexcept;
  /// Throws `tensogram::invalid_arg_error` when `name` is not present.
  [[nodiscard]] const tensor_layout& layout(std::string_view name) const;
  /// Logical dims (the primary shape without the trailing record/BlobRef dim).
  [[nodiscard]] std::span<const std::uint64_t> dims(std::string_view name) const;
  /// The primary physical tensor and the heap (nullptr when none).
  [[nodiscard]] const safetensors::tensor_view& primary(std::string_view name) const;
  [[nodiscard]] const safetensors::tensor_view* heap(std::string_view name) const;

  /// Views by kind; `tensogram::invalid_arg_error` for the wrong kind.
  [[nodiscard]] flat_view flat(std::string_view name) const;
  [[nodiscard]] record_view records(std::string_view name) const;
  [[nodiscard]] blob_view blobs(std::string_view name) const;

  /// The BlobRef checks of §6.4 (step 8 of §8.2) for one logical tensor:
  /// every BlobRef of its index or records inside its heap, List blobs
  /// aligned. Throws the `metatensor::error` (MT_BLOB_BOUNDS, MT_BLOB_ALIGN,
  /// same message) that `open` reports for it; a no-op for tensors without
  /// a heap; `tensogram::invalid_arg_error` when `logical_name` is not
  /// present. Needed after `from_header_image` (whose files skip step 8),
  /// once the tensor's primary and heap bytes are in the image; redundant
  /// (but harmless) for files opened with `open` / `from_buffer`.
  void check_blob_refs(std::string_view logical_name) const;

  /// Deep validation (§8.1, §8.3), in this order over the whole file: BOOL
  /// bytes [MT_BOOL], String UTF-8 [MT_UTF8], record padding, heap gaps and
  /// padding tensors all zero [MT_NONZERO_PADDING], then the schema's value
  /// keywords [MT_VALUE, message starts with the JSON Pointer]. Memory stays
  /// bounded by one element (or one sub-array when a dimension carries value
  /// keywords) except when the root schema itself carries value keywords.
  void validate_deep() const;
  /// The §8.3 logical value of one tensor (nested arrays of projected
  /// elements). Throws MT_BOOL / MT_UTF8 for bytes JSON cannot represent.
  [[nodiscard]] nlohmann::json logical_value(std::string_view name) const;
  /// The logical value of the whole file (one member per tensor present).
  [[nodiscard]] nlohmann::json logical_value() const;
  /// Elements [first, first + count) of a tensor in flat C order over its
  /// logical dims, each projected as in §8.3, as one flat JSON array (memory
  /// bounded by `count`; for dump tools). `tensogram::invalid_arg_error` when
  /// the range exceeds the element count; MT_BOOL / MT_UTF8 as above.
  [[nodiscard]] nlohmann::json logical_elements(std::string_view name, std::uint64_t first,
                                                std::uint64_t count) const;

  struct state;  // defined in file.cpp

 private:
  explicit file(std::shared_ptr<const state> s) : state_(std::move(s)) {}
  std::shared_ptr<const state> state_;
};

}  // namespace metatensor
