// Reading and writing NumPy .npy files (format versions 1.0, 2.0, 3.0).
//
// The reader treats its input as untrusted: the header length is capped,
// the header dict is parsed as a strict subset of Python literal syntax
// (exactly the keys `descr`, `fortran_order` and `shape`, each once), and
// the data size must match the header exactly. Every problem is reported as
// an `npy_error` whose message says what is wrong; callers prefix the file
// name.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <tensogram/core/byte_order.hpp>
#include <tensogram/core/dtype.hpp>

namespace tensogram::cli::npy {

class npy_error : public std::runtime_error {
 public:
  explicit npy_error(const std::string& message) : std::runtime_error(message) {}
};

/// Largest header (the dict text after the length field) accepted. NumPy
/// itself refuses headers above 10 000 bytes by default; anything this tool
/// can represent needs well under 2 KiB, so 64 KiB is generous and bounds
/// the work done on hostile input.
inline constexpr std::size_t max_header_length = 64 * 1024;
/// Largest rank accepted (NumPy 2 allows 64 dimensions).
inline constexpr std::size_t max_rank = 64;

/// One field of a structured dtype (a list as `descr`, numpy.lib.format):
/// `(name, type)` or `(name, type, shape)`, where type is a dtype string or a
/// nested list. Fields follow each other without gaps: NumPy writes the
/// padding of aligned dtypes as unnamed `|V<n>` fields.
struct field {
  std::string name;                  ///< "" for a padding field
  std::string descr;                 ///< the dtype string; empty when `fields` is set
  std::vector<field> fields;         ///< a nested structured type
  std::vector<std::uint64_t> shape;  ///< subarray shape, [] for none
  std::uint64_t offset = 0;          ///< within the record
  std::uint64_t size = 0;            ///< bytes, subarray included
};

/// The header dict.
struct header {
  std::string descr;  ///< empty for a structured dtype
  bool fortran_order = false;
  std::vector<std::uint64_t> shape;
  std::vector<field> fields;  ///< non-empty iff `descr` is a list (structured)
};

/// Nesting limit of structured dtypes (a hostile header cannot recurse
/// deeper than this).
inline constexpr std::size_t max_field_depth = 16;

/// Bytes per element of a field dtype string: the numeric types of
/// `parse_descr`, plus `V<n>` (raw/padding), `S<n>` (bytes) and `U<n>`
/// (UTF-32 text, 4n bytes). Throws `npy_error` for anything else.
[[nodiscard]] std::uint64_t field_descr_size(std::string_view descr);

/// Parses the header dict literal, e.g.
/// `{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }`.
/// Accepted: single- or double-quoted strings without escapes, `True` /
/// `False`, tuples of non-negative decimal integers (a 1-tuple needs its
/// trailing comma, as in Python), an optional trailing comma in the dict,
/// whitespace between tokens. A list as `descr` is a structured dtype
/// (`fields`; nested lists and subarray shapes included, depth at most
/// `max_field_depth`).
[[nodiscard]] header parse_header_text(std::string_view text);

/// A NumPy dtype this tool can map to a Tensogram dtype.
struct element_type {
  tensogram::dtype type = tensogram::dtype::uint8;
  /// Byte order of the elements (the host's for 1-byte types).
  tensogram::byte_order order = native_byte_order();
  /// Bytes per element.
  std::size_t itemsize = 1;
  /// `|b1`: stored as uint8 0/1 (Tensogram has no boolean dtype).
  bool is_bool = false;
  /// 'S' (bytes) or 'U' (UTF-32) for fixed-width text, whose `itemsize` is
  /// the width in bytes; only from `parse(file, text_dtypes::accept)`.
  char text = 0;
};

/// Maps a `descr` string: `<f2 <f4 <f8 <c8 <c16 |i1 <i2 <i4 <i8 |u1 <u2 <u4
/// <u8 |b1` and the `>` (big-endian) forms. 1-byte types accept any byte
/// order character. Multi-byte types need an explicit `<` or `>`: `|`, `=`
/// or none would mean "the writer's native order", which a file does not
/// record. Everything else (object, string, datetime, void, float128 ...)
/// is an `npy_error`.
[[nodiscard]] element_type parse_descr(std::string_view descr);

/// A parsed file: header, element type and a view of the data bytes. For a
/// structured dtype, `element` is uint8 with `itemsize` = the record size.
struct array {
  int major_version = 1;
  int minor_version = 0;
  header hdr;
  element_type element;
  std::uint64_t element_count = 0;
  /// The element bytes, exactly element_count × itemsize (a view into the
  /// input span).
  std::span<const std::byte> data;
};

/// Whether `parse` accepts a plain `S<n>` / `U<n>` text dtype (as
/// `element.text`); the Tensogram tool has no use for text and refuses it.
enum class text_dtypes { refuse, accept };

/// Parses a whole .npy file held in `file`.
[[nodiscard]] array parse(std::span<const std::byte> file, text_dtypes text_mode = text_dtypes::refuse);

/// Reorders the elements of a Fortran-order (column-major) array into C
/// order (row-major), moving whole `itemsize`-byte elements.
[[nodiscard]] std::vector<std::byte> fortran_to_c_order(std::span<const std::byte> data,
                                                        std::span<const std::uint64_t> shape,
                                                        std::size_t itemsize);

/// The `descr` NumPy uses for a Tensogram dtype in `order` (`|` for 1-byte
/// types). Throws `npy_error` for bfloat16 and bitmask, which NumPy lacks.
[[nodiscard]] std::string descr_for(tensogram::dtype t, tensogram::byte_order order);

/// A complete C-order .npy file: version 1.0 (2.0 if the header needs more
/// than 65535 bytes), header padded with spaces to a 64-byte boundary and
/// ended by a newline, as NumPy writes it.
[[nodiscard]] std::vector<std::byte> serialize(std::string_view descr, std::span<const std::uint64_t> shape,
                                               std::span<const std::byte> data);

}  // namespace tensogram::cli::npy
