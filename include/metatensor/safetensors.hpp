// The safetensors base layer of metatensor (spec 06 §2, §3.5, §9).
//
// `safetensors::file` maps a file and validates its header against every
// base-layer rule of §2 (first failure reported with its §8.2 name); tensor
// data is never read at open time, so opening costs O(header). Views are
// bounds-checked at open time: every `tensor_view` lies inside the file.
//
// Alignment: plain safetensors files do not align tensor data. `bytes()` is
// always available; `as<T>()` hands out a typed span only when the address is
// aligned for T (always the case for files written by `write_file`, whose
// data section starts at a multiple of 64 and whose tensors are ordered by
// decreasing element alignment) and throws `tensogram::invalid_arg_error`
// otherwise; `copy_as<T>()` works for any address.
#pragma once

#include <complex>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "metatensor/error.hpp"
#include "tensogram/core/buffer.hpp"
#include "tensogram/core/dtype.hpp"

namespace metatensor::detail {
struct header_storage;  // src/metatensor/fast_json.hpp
}  // namespace metatensor::detail

namespace metatensor::safetensors {

/// The 22 safetensors dtypes of spec 06 §2 rule 6, in that order.
enum class dtype : std::uint8_t {
  boolean,
  u8,
  i8,
  u16,
  i16,
  u32,
  i32,
  u64,
  i64,
  f16,
  bf16,
  f32,
  f64,
  c64,
  f8_e4m3,
  f8_e5m2,
  f8_e8m0,
  f8_e4m3fnuz,
  f8_e5m2fnuz,
  f4,
  f6_e2m3,
  f6_e3m2,
};

inline constexpr std::size_t dtype_count = 22;

/// Header spelling ("BOOL", "F8_E4M3", ...).
[[nodiscard]] std::string_view dtype_name(dtype t) noexcept;
/// Exact, case-sensitive parse of a header spelling.
[[nodiscard]] std::optional<dtype> parse_dtype(std::string_view name) noexcept;
/// Bits per element (§2 rule 6): 4, 6, 8, 16, 32 or 64.
[[nodiscard]] unsigned dtype_bits(dtype t) noexcept;
/// Natural alignment in bytes (§4.4: the size, except C64 = 4, sub-byte = 1).
[[nodiscard]] std::size_t dtype_alignment(dtype t) noexcept;
/// The matching Tensogram dtype (spec 02 §5), if one exists.
[[nodiscard]] std::optional<tensogram::dtype> to_tensogram(dtype t) noexcept;
/// The matching safetensors dtype of a Tensogram dtype, if one exists.
[[nodiscard]] std::optional<dtype> from_tensogram(tensogram::dtype t) noexcept;

/// True when host type `T` may view elements of `t`: integers and F32/F64
/// exactly, `std::complex<float>` for C64, `std::uint8_t` for BOOL and the
/// F8 types (raw bytes), `std::uint16_t` for F16/BF16 (raw bits), and
/// `std::byte` for any 8-bit dtype. Sub-byte dtypes have no element type.
template <class T>
[[nodiscard]] constexpr bool viewable_as(dtype t) noexcept {
  using U = std::remove_cv_t<T>;
  switch (t) {
    case dtype::boolean:
    case dtype::f8_e4m3:
    case dtype::f8_e5m2:
    case dtype::f8_e8m0:
    case dtype::f8_e4m3fnuz:
    case dtype::f8_e5m2fnuz: return std::is_same_v<U, std::uint8_t> || std::is_same_v<U, std::byte>;
    case dtype::u8: return std::is_same_v<U, std::uint8_t> || std::is_same_v<U, std::byte>;
    case dtype::i8: return std::is_same_v<U, std::int8_t> || std::is_same_v<U, std::byte>;
    case dtype::u16: return std::is_same_v<U, std::uint16_t>;
    case dtype::i16: return std::is_same_v<U, std::int16_t>;
    case dtype::u32: return std::is_same_v<U, std::uint32_t>;
    case dtype::i32: return std::is_same_v<U, std::int32_t>;
    case dtype::u64: return std::is_same_v<U, std::uint64_t>;
    case dtype::i64: return std::is_same_v<U, std::int64_t>;
    case dtype::f16:
    case dtype::bf16: return std::is_same_v<U, std::uint16_t>;
    case dtype::f32: return std::is_same_v<U, float>;
    case dtype::f64: return std::is_same_v<U, double>;
    case dtype::c64: return std::is_same_v<U, std::complex<float>>;
    case dtype::f4:
    case dtype::f6_e2m3:
    case dtype::f6_e3m2: return false;
  }
  return false;
}

/// One physical tensor of a validated file (§2). The name, the shape and the
/// bytes point into the file image or into tables the file shares with its
/// copies, and are valid while the `file` (or a copy of it) lives: a header
/// of 200 k tensors is then read without a string or a vector per tensor
/// (issue 27).
class tensor_view {
 public:
  tensor_view(std::string_view name, dtype type, std::span<const std::uint64_t> shape, std::uint64_t begin,
              std::uint64_t end, std::span<const std::byte> bytes) noexcept
      : name_(name), type_(type), shape_(shape), begin_(begin), end_(end), bytes_(bytes) {}

  [[nodiscard]] std::string_view name() const noexcept { return name_; }
  [[nodiscard]] dtype type() const noexcept { return type_; }
  [[nodiscard]] std::span<const std::uint64_t> shape() const noexcept { return shape_; }
  /// `data_offsets` relative to the data section start D.
  [[nodiscard]] std::uint64_t begin() const noexcept { return begin_; }
  [[nodiscard]] std::uint64_t end() const noexcept { return end_; }
  /// Number of elements (product of the shape, 1 for rank 0).
  [[nodiscard]] std::uint64_t element_count() const noexcept;
  /// The tensor's bytes, exactly `end - begin` of them.
  [[nodiscard]] std::span<const std::byte> bytes() const noexcept { return bytes_; }

  /// True when the data address is aligned for `T`.
  template <class T>
  [[nodiscard]] bool aligned_for() const noexcept {
    return reinterpret_cast<std::uintptr_t>(bytes_.data()) % alignof(T) == 0;
  }

  /// Zero-copy typed view. Throws `tensogram::invalid_arg_error` when `T`
  /// does not match the dtype (`viewable_as`) or the data address is not
  /// aligned for `T` (possible in files from other writers, see above).
  template <class T>
  [[nodiscard]] std::span<const T> as() const {
    check_viewable(viewable_as<T>(type_), sizeof(T), alignof(T), aligned_for<T>());
    // The bytes are inside the mapped file image and suitably aligned; the
    // element types are trivially copyable with no invalid representations.
    return {reinterpret_cast<const T*>(bytes_.data()), bytes_.size() / sizeof(T)};
  }

  /// Copy of the elements as `T` (any alignment); same type check as `as`.
  template <class T>
  [[nodiscard]] std::vector<T> copy_as() const {
    check_viewable(viewable_as<T>(type_), sizeof(T), alignof(T), true);
    std::vector<T> out(bytes_.size() / sizeof(T));
    if (!out.empty()) std::memcpy(out.data(), bytes_.data(), out.size() * sizeof(T));
    return out;
  }

 private:
  void check_viewable(bool type_ok, std::size_t size, std::size_t align, bool aligned) const;

  std::string_view name_;
  dtype type_;
  std::span<const std::uint64_t> shape_;
  std::uint64_t begin_;
  std::uint64_t end_;
  std::span<const std::byte> bytes_;
};

/// §2 rule 2 and §8.4: the largest header length a reader must accept.
inline constexpr std::uint64_t max_header_length = 100'000'000;
/// §8.4: the largest rank a reader accepts (`MT_LIMIT` above).
inline constexpr std::size_t max_rank = 32;
/// §2 rule 7 (stricter): the largest integer allowed in a header.
inline constexpr std::uint64_t max_json_integer = (std::uint64_t{1} << 53) - 1;

/// A validated safetensors file image (mapped file or caller's buffer).
class file {
 public:
  /// Maps `path` read-only and validates the header (§2). Throws
  /// `tensogram::io_error` for file system failures and `metatensor::error`
  /// for the first §2 rule violated.
  [[nodiscard]] static file open(const std::filesystem::path& path);
  /// Validates an in-memory image; the buffer is kept alive by the file.
  [[nodiscard]] static file from_buffer(tensogram::buffer image);

  /// Header length N (first 8 bytes).
  [[nodiscard]] std::uint64_t header_length() const noexcept { return header_length_; }
  /// D = 8 + N, the absolute offset of the data section.
  [[nodiscard]] std::uint64_t data_offset() const noexcept { return 8 + header_length_; }
  /// The header JSON text (bytes [8, 8+N)), including any padding.
  [[nodiscard]] std::string_view header_text() const noexcept;
  /// The whole file image.
  [[nodiscard]] std::span<const std::byte> image() const noexcept { return image_.bytes(); }

  /// Tensors in file order (increasing `begin`, then `end`, then name).
  [[nodiscard]] std::span<const tensor_view> tensors() const noexcept { return tensors_; }
  /// The tensor called `name`, or nullptr.
  [[nodiscard]] const tensor_view* find(std::string_view name) const noexcept;
  /// The tensor called `name`; throws `tensogram::invalid_arg_error`.
  [[nodiscard]] const tensor_view& at(std::string_view name) const;

  /// `__metadata__` (empty when absent or null). Copies of a file share it.
  [[nodiscard]] const std::map<std::string, std::string>& metadata() const noexcept;
  /// The value of `__metadata__` key `key`, or nullptr; it shares the file's
  /// storage, so it stays valid after the file is gone, and nothing is
  /// copied (a metatensor file's schema is tens of MB in large files).
  [[nodiscard]] std::shared_ptr<const std::string> metadata_value(std::string_view key) const;
  /// True when the header has a `__metadata__` object (not absent, not null).
  [[nodiscard]] bool has_metadata() const noexcept { return has_metadata_; }

 private:
  file() = default;

  tensogram::buffer image_;
  // Names that are not in the header text verbatim, every shape and
  // `__metadata__`: shared, so a copy of the file keeps its views valid (as
  // `image_` does) and copies no metadata.
  std::shared_ptr<const detail::header_storage> storage_;
  std::uint64_t header_length_ = 0;
  std::vector<tensor_view> tensors_;
  std::vector<std::size_t> by_name_;  // indices into tensors_, sorted by name
  bool has_metadata_ = false;
};

/// One tensor to write. `data` must hold exactly the tensor's bytes
/// (`product(shape) * bits / 8`, little-endian) and outlive the write call.
struct tensor_input {
  std::string name;
  dtype type = dtype::u8;
  std::vector<std::uint64_t> shape;
  std::span<const std::byte> data;
};

struct write_options {
  /// D = 8 + N is padded with trailing spaces to a multiple of this (a power
  /// of two; §3.4 wants `A`, writers SHOULD use 64). 1 means no padding.
  std::size_t header_alignment = 64;
  /// Write `__metadata__` even when the map is empty (as `{}`).
  bool always_write_metadata = false;
  /// Lay the tensors out in the given order instead of the dtype-alignment
  /// order (for writers that place tensors themselves, e.g. the metatensor
  /// writer's §6.6 order with explicit padding tensors).
  bool keep_order = false;
  /// `write_file` only (not part of the bytes): fsync the new file and its
  /// directory so that it survives a power loss once written
  /// (`tensogram::atomic_write_options`).
  bool sync = true;
};

/// The canonical byte image of a file (§3.5): `__metadata__` first with keys
/// sorted by byte value, tensors ordered by decreasing dtype alignment then
/// by name (byte-wise) unless `keep_order`, entries listed in `begin` order, compact JSON, the
/// header padded with spaces. Throws `tensogram::invalid_arg_error` for bad
/// input (duplicate or reserved names, data size mismatch, invalid UTF-8,
/// integers above 2^53 - 1).
[[nodiscard]] std::vector<std::byte> serialize(std::span<const tensor_input> tensors,
                                               const std::map<std::string, std::string>& metadata = {},
                                               const write_options& options = {});

/// `serialize` written atomically (temporary file + rename) to `path`.
void write_file(const std::filesystem::path& path, std::span<const tensor_input> tensors,
                const std::map<std::string, std::string>& metadata = {}, const write_options& options = {});

}  // namespace metatensor::safetensors
