// Private helpers shared by the NetCDF importer and exporter (spec 05 §4,
// §5): an owning handle for a netCDF-C file id, the libnetcdf error check,
// and the type vocabulary (NetCDF type ⇄ dtype, attribute type tags).
#pragma once

#include <netcdf.h>

#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "tensogram/core/dtype.hpp"
#include "tensogram/importers/conversion.hpp"

namespace tensogram::importers::detail {

/// Throws the spec 05 §4.7 "netcdf error: ..." (kind `library`) for a failed
/// libnetcdf call; `context` says what was being done.
inline void nc_check(int status, std::string_view context) {
  if (status == NC_NOERR) return;
  throw conversion_error(conversion_failure::library,
                         "netcdf error: " + std::string(context) + ": " + nc_strerror(status));
}

/// Owns one open netCDF-C file id; closes it once on destruction. Group ids
/// obtained from it are plain ints valid while the file is open.
class nc_file {
 public:
  nc_file() = default;
  explicit nc_file(int id) noexcept : id_(id) {}
  nc_file(const nc_file&) = delete;
  nc_file& operator=(const nc_file&) = delete;
  nc_file(nc_file&& other) noexcept : id_(std::exchange(other.id_, -1)) {}
  nc_file& operator=(nc_file&& other) noexcept {
    if (this != &other) {
      reset();
      id_ = std::exchange(other.id_, -1);
    }
    return *this;
  }
  ~nc_file() { reset(); }

  /// Opens `path` read-only.
  [[nodiscard]] static nc_file open_read(const std::string& path) {
    int id = -1;
    nc_check(nc_open(path.c_str(), NC_NOWRITE, &id), "opening '" + path + "'");
    return nc_file(id);
  }

  [[nodiscard]] int id() const noexcept { return id_; }

  /// Closes explicitly so that a failing close (the final flush of a written
  /// file) is reported instead of being swallowed by the destructor.
  void close() {
    const int id = std::exchange(id_, -1);
    if (id >= 0) nc_check(nc_close(id), "closing file");
  }

 private:
  void reset() noexcept {
    if (id_ >= 0) nc_close(id_);
    id_ = -1;
  }
  int id_ = -1;
};

/// Spec 05 §4.2: the ten numeric NetCDF types and their dtypes.
[[nodiscard]] inline std::optional<dtype> dtype_of_nc_type(nc_type t) noexcept {
  switch (t) {
    case NC_BYTE: return dtype::int8;
    case NC_UBYTE: return dtype::uint8;
    case NC_SHORT: return dtype::int16;
    case NC_USHORT: return dtype::uint16;
    case NC_INT: return dtype::int32;
    case NC_UINT: return dtype::uint32;
    case NC_INT64: return dtype::int64;
    case NC_UINT64: return dtype::uint64;
    case NC_FLOAT: return dtype::float32;
    case NC_DOUBLE: return dtype::float64;
    default: return std::nullopt;
  }
}

/// The inverse of `dtype_of_nc_type` (spec 05 §5 step 4: only those ten).
[[nodiscard]] inline std::optional<nc_type> nc_type_of_dtype(dtype t) noexcept {
  switch (t) {
    case dtype::int8: return NC_BYTE;
    case dtype::uint8: return NC_UBYTE;
    case dtype::int16: return NC_SHORT;
    case dtype::uint16: return NC_USHORT;
    case dtype::int32: return NC_INT;
    case dtype::uint32: return NC_UINT;
    case dtype::int64: return NC_INT64;
    case dtype::uint64: return NC_UINT64;
    case dtype::float32: return NC_FLOAT;
    case dtype::float64: return NC_DOUBLE;
    default: return std::nullopt;
  }
}

/// Spec 05 §4.4 type tags of `_attr_types` / `_global_types`; text (char or
/// string) is "string". Empty for types that have no tag.
[[nodiscard]] inline std::string_view type_tag_of_nc_type(nc_type t) noexcept {
  switch (t) {
    case NC_CHAR:
    case NC_STRING: return "string";
    case NC_DOUBLE: return "double";
    case NC_FLOAT: return "float";
    case NC_INT: return "int";
    case NC_UINT: return "uint";
    case NC_SHORT: return "short";
    case NC_USHORT: return "ushort";
    case NC_INT64: return "int64";
    case NC_UINT64: return "uint64";
    case NC_BYTE: return "byte";
    case NC_UBYTE: return "ubyte";
    default: return {};
  }
}

/// The numeric NetCDF type a tag names (spec 05 §5 step 4); nothing for
/// "string" and unknown tags.
[[nodiscard]] inline std::optional<nc_type> numeric_nc_type_of_tag(std::string_view tag) noexcept {
  if (tag == "double") return NC_DOUBLE;
  if (tag == "float") return NC_FLOAT;
  if (tag == "int") return NC_INT;
  if (tag == "uint") return NC_UINT;
  if (tag == "short") return NC_SHORT;
  if (tag == "ushort") return NC_USHORT;
  if (tag == "int64") return NC_INT64;
  if (tag == "uint64") return NC_UINT64;
  if (tag == "byte") return NC_BYTE;
  if (tag == "ubyte") return NC_UBYTE;
  return std::nullopt;
}

}  // namespace tensogram::importers::detail
