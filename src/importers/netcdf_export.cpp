// Tensogram → NetCDF (spec 05 §5) on netCDF-C: rebuilds one NetCDF-4 file
// from messages written by the NetCDF importer in `file` or `variable` mode.
#include <netcdf.h>
#include <unistd.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "library_lock.hpp"
#include "netcdf_file.hpp"
#include "tensogram/cbor/value.hpp"
#include "tensogram/core/atomic_file.hpp"
#include "tensogram/core/error.hpp"
#include "tensogram/importers/netcdf.hpp"
#include "tensogram/message/decode.hpp"
#include "tensogram/message/metadata.hpp"

namespace tensogram::importers {

namespace {

using detail::nc_check;
using detail::nc_file;

// Keys of the `netcdf` map that carry structure, not attributes (§5 step 4).
constexpr std::string_view internal_keys[] = {"_dims",       "_file",         "_global",
                                              "_attr_types", "_global_types", "record_index"};

[[noreturn]] void invalid_data(const std::string& text) {
  throw conversion_error(conversion_failure::invalid_data, "invalid netcdf data: " + text);
}

struct dimension_def {
  std::string name;
  std::uint64_t length = 0;
  bool unlimited = false;
};

// Removes the temporary sibling unless the write was committed (§5 step 5).
class temp_file_guard {
 public:
  explicit temp_file_guard(std::filesystem::path p) : path_(std::move(p)) {}
  temp_file_guard(const temp_file_guard&) = delete;
  temp_file_guard& operator=(const temp_file_guard&) = delete;
  ~temp_file_guard() {
    if (!committed_) {
      std::error_code ec;
      std::filesystem::remove(path_, ec);
    }
  }
  void commit() noexcept { committed_ = true; }
  [[nodiscard]] const std::filesystem::path& path() const noexcept { return path_; }

 private:
  std::filesystem::path path_;
  bool committed_ = false;
};

// Float to integer the way the reference's `as` casts do: saturating, NaN 0.
template <typename I>
I saturating_cast(double d) {
  if (std::isnan(d)) return 0;
  if (d <= static_cast<double>(std::numeric_limits<I>::min())) return std::numeric_limits<I>::min();
  if (d >= static_cast<double>(std::numeric_limits<I>::max())) return std::numeric_limits<I>::max();
  return static_cast<I>(d);
}

// One metadata element as the C type of a numeric NetCDF attribute type;
// nothing when it is not a number (it is then dropped, §5 step 4).
template <typename T>
std::optional<T> element_as(const cbor::value& v) {
  if constexpr (std::is_floating_point_v<T>) {
    const auto d = v.as_double();
    if (!d) return std::nullopt;
    return static_cast<T>(*d);
  } else if constexpr (std::is_same_v<T, unsigned long long>) {
    if (const cbor::integer* i = v.as_integer()) {
      const auto u = i->to_uint64();
      if (!u) return std::nullopt;
      return static_cast<T>(*u);
    }
    if (const double* d = v.as_float()) return static_cast<T>(saturating_cast<std::uint64_t>(*d));
    return std::nullopt;
  } else {
    // Other integer types go through int64 and then wrap to the width.
    if (const cbor::integer* i = v.as_integer()) {
      const auto s = i->to_int64();
      if (!s) return std::nullopt;
      return static_cast<T>(*s);
    }
    if (const double* d = v.as_float()) return static_cast<T>(saturating_cast<std::int64_t>(*d));
    return std::nullopt;
  }
}

template <typename T>
void put_numeric(int ncid, int varid, const std::string& name, nc_type type,
                 std::span<const cbor::value> items) {
  std::vector<T> values;
  values.reserve(items.size());
  for (const cbor::value& item : items) {
    if (const auto x = element_as<T>(item)) values.push_back(*x);
  }
  nc_check(nc_put_att(ncid, varid, name.c_str(), type, values.size(), values.data()),
           "writing attribute '" + name + "'");
}

void put_numeric_typed(int ncid, int varid, const std::string& name, nc_type type,
                       std::span<const cbor::value> items) {
  switch (type) {
    case NC_BYTE: put_numeric<signed char>(ncid, varid, name, type, items); break;
    case NC_UBYTE: put_numeric<unsigned char>(ncid, varid, name, type, items); break;
    case NC_SHORT: put_numeric<short>(ncid, varid, name, type, items); break;
    case NC_USHORT: put_numeric<unsigned short>(ncid, varid, name, type, items); break;
    case NC_INT: put_numeric<int>(ncid, varid, name, type, items); break;
    case NC_UINT: put_numeric<unsigned int>(ncid, varid, name, type, items); break;
    case NC_INT64: put_numeric<long long>(ncid, varid, name, type, items); break;
    case NC_UINT64: put_numeric<unsigned long long>(ncid, varid, name, type, items); break;
    case NC_FLOAT: put_numeric<float>(ncid, varid, name, type, items); break;
    default: put_numeric<double>(ncid, varid, name, NC_DOUBLE, items); break;
  }
}

void put_text(int ncid, int varid, const std::string& name, const std::string& text) {
  nc_check(nc_put_att_text(ncid, varid, name.c_str(), text.size(), text.data()),
           "writing attribute '" + name + "'");
}

void put_strings(int ncid, int varid, const std::string& name, std::span<const cbor::value> items) {
  std::vector<const char*> pointers;
  for (const cbor::value& item : items) {
    if (const std::string* s = item.as_text()) pointers.push_back(s->c_str());
  }
  nc_check(nc_put_att_string(ncid, varid, name.c_str(), pointers.size(), pointers.data()),
           "writing attribute '" + name + "'");
}

bool all_of_kind(std::span<const cbor::value> items, cbor::value::kind k) {
  for (const cbor::value& item : items) {
    if (item.type() != k) return false;
  }
  return true;
}

// Writes one attribute typed by its tag (spec 05 §5 step 4): the tag's
// NetCDF type for numbers, text as a char attribute (arrays of text as a
// string attribute); without a tag text → string, integer → int64, float
// → double; mixed arrays and values that do not fit the tag are dropped.
void put_attribute(int ncid, int varid, const std::string& name, const cbor::value& value,
                   std::optional<std::string_view> tag) {
  const std::optional<nc_type> numeric = tag ? detail::numeric_nc_type_of_tag(*tag) : std::nullopt;
  const bool string_tag = tag && *tag == "string";
  if (const cbor::array* items = value.as_array()) {
    if (string_tag) return put_strings(ncid, varid, name, *items);
    if (numeric) return put_numeric_typed(ncid, varid, name, *numeric, *items);
    if (all_of_kind(*items, cbor::value::kind::text)) return put_strings(ncid, varid, name, *items);
    if (all_of_kind(*items, cbor::value::kind::integer))
      return put_numeric_typed(ncid, varid, name, NC_INT64, *items);
    if (all_of_kind(*items, cbor::value::kind::floating)) {
      return put_numeric_typed(ncid, varid, name, NC_DOUBLE, *items);
    }
    return;  // mixed array
  }
  const std::span<const cbor::value> one(&value, 1);
  if (string_tag) {
    if (const std::string* s = value.as_text()) put_text(ncid, varid, name, *s);
    return;
  }
  if (numeric) {
    if (value.is_integer() || value.is_float()) {
      // Only an element that converts is written (as the reference does).
      put_numeric_typed(ncid, varid, name, *numeric, one);
    }
    return;
  }
  if (const std::string* s = value.as_text()) return put_text(ncid, varid, name, *s);
  if (value.is_integer()) {
    if (value.as_int64()) put_numeric_typed(ncid, varid, name, NC_INT64, one);
    return;
  }
  if (value.is_float()) put_numeric_typed(ncid, varid, name, NC_DOUBLE, one);
}

std::optional<std::string_view> tag_of(const cbor::value* tags, const std::string& name) {
  if (tags == nullptr || !tags->is_map()) return std::nullopt;
  const cbor::value* tag = tags->find(name);
  if (tag == nullptr || !tag->is_text()) return std::nullopt;
  return std::string_view(*tag->as_text());
}

// A variable to write: where its values are and what it is called.
struct variable_def {
  std::string name;
  std::vector<std::string> dims;
  const cbor::value* netcdf = nullptr;
  const decoded_object* object = nullptr;
};

const cbor::value* netcdf_map(const cbor::value& base_entry) {
  const cbor::value* nc = base_entry.find("netcdf");
  return nc != nullptr && nc->is_map() ? nc : nullptr;
}

// Spec 05 §5 step 2: the union of the `_file.dims` registries.
std::vector<dimension_def> dimension_union(const std::vector<message>& decoded) {
  std::vector<dimension_def> dims;
  for (std::size_t m = 0; m < decoded.size(); ++m) {
    if (decoded[m].num_objects() == 0) continue;
    const auto& base = decoded[m].global().base;
    const cbor::value* nc = base.empty() ? nullptr : netcdf_map(base[0]);
    const cbor::value* file = nc != nullptr ? nc->find("_file") : nullptr;
    const cbor::value* list = file != nullptr && file->is_map() ? file->find("dims") : nullptr;
    if (list == nullptr || !list->is_array()) {
      invalid_data("message " + std::to_string(m) +
                   " has no '_file' dimension registry; was it produced by convert-netcdf?");
    }
    for (const cbor::value& entry : *list->as_array()) {
      const cbor::value* name = entry.find("name");
      const cbor::value* length = entry.find("len");
      if (!entry.is_map() || name == nullptr || !name->is_text()) continue;
      dimension_def d{*name->as_text(), 0, false};
      if (length != nullptr && length->as_uint64()) d.length = *length->as_uint64();
      if (const cbor::value* u = entry.find("unlimited"); u != nullptr)
        d.unlimited = u->as_bool().value_or(false);
      bool known = false;
      for (const dimension_def& e : dims) {
        if (e.name != d.name) continue;
        known = true;
        if (e.length != d.length || e.unlimited != d.unlimited) {
          invalid_data("dimension '" + d.name + "' is defined with different sizes (len " +
                       std::to_string(e.length) + (e.unlimited ? ", unlimited" : "") + " vs len " +
                       std::to_string(d.length) + (d.unlimited ? ", unlimited" : "") + ")");
        }
      }
      if (!known) dims.push_back(std::move(d));
    }
  }
  return dims;
}

// Spec 05 §5 step 4: name, dims and attributes of every object.
std::vector<variable_def> variable_definitions(const std::vector<message>& decoded) {
  std::vector<variable_def> vars;
  for (std::size_t m = 0; m < decoded.size(); ++m) {
    const auto& base = decoded[m].global().base;
    for (std::size_t i = 0; i < decoded[m].num_objects(); ++i) {
      const std::string where = "message " + std::to_string(m) + " object " + std::to_string(i);
      variable_def v;
      v.object = &decoded[m].object(i);
      const cbor::value* name = i < base.size() ? base[i].find("name") : nullptr;
      if (name == nullptr || !name->is_text()) invalid_data(where + " has no variable 'name'");
      v.name = *name->as_text();
      v.netcdf = i < base.size() ? netcdf_map(base[i]) : nullptr;
      const cbor::value* dims = v.netcdf != nullptr ? v.netcdf->find("_dims") : nullptr;
      if (dims == nullptr || !dims->is_array())
        invalid_data(where + " ('" + v.name + "') has no '_dims' list");
      for (const cbor::value& d : *dims->as_array()) {
        if (const std::string* s = d.as_text()) v.dims.push_back(*s);
      }
      if (v.dims.size() != v.object->shape().size()) {
        invalid_data("variable '" + v.name + "' has " + std::to_string(v.dims.size()) +
                     " dimension names but " + std::to_string(v.object->shape().size()) + " axes");
      }
      if (!detail::nc_type_of_dtype(v.object->descriptor().dtype)) {
        invalid_data("to-netcdf: unsupported dtype " + v.object->dtype_string() + " for variable '" + v.name +
                     "'");
      }
      vars.push_back(std::move(v));
    }
  }
  return vars;
}

// Creates the temporary sibling `.<name>.tmp.<pid>.<n>` (spec 05 §5 step
// 5), taking the first `n` whose file does not exist yet.
// Temporary siblings of writers that were killed before their rename are
// removed first (their pid is gone; core/atomic_file.hpp).
std::pair<nc_file, std::filesystem::path> create_temporary(const std::filesystem::path& target) {
  (void)remove_stale_temp_files(target);
  // Built by appending: GCC 12 at -O3 reports a false -Wrestrict for
  // `"." + std::string` (GCC bug 105329).
  std::string stem = ".";
  stem += target.filename().string();
  stem += ".tmp.";
  stem += std::to_string(::getpid());
  stem += '.';
  for (unsigned n = 0;; ++n) {
    std::filesystem::path temp = target.parent_path() / (stem + std::to_string(n));
    int id = -1;
    const int status = nc_create(temp.string().c_str(), NC_NETCDF4 | NC_NOCLOBBER, &id);
    if (status == NC_EEXIST && n < 10000) continue;
    nc_check(status, "creating '" + temp.string() + "'");
    return {nc_file(id), std::move(temp)};
  }
}

void write_file(int ncid, const std::vector<dimension_def>& dims, const cbor::value* globals,
                const cbor::value* global_types, const std::vector<variable_def>& vars) {
  for (const dimension_def& d : dims) {
    int id = -1;
    nc_check(nc_def_dim(ncid, d.name.c_str(), d.unlimited ? NC_UNLIMITED : static_cast<std::size_t>(d.length),
                        &id),
             "defining dimension '" + d.name + "'");
  }
  if (globals != nullptr && globals->is_map()) {
    for (const cbor::map_entry& e : *globals->as_map()) {
      if (const std::string* name = e.key.as_text())
        put_attribute(ncid, NC_GLOBAL, *name, e.val, tag_of(global_types, *name));
    }
  }
  std::vector<int> varids;
  for (const variable_def& v : vars) {
    std::vector<int> dimids;
    for (const std::string& d : v.dims) {
      int id = -1;
      if (nc_inq_dimid(ncid, d.c_str(), &id) != NC_NOERR) {
        invalid_data("variable '" + v.name + "' uses dimension '" + d +
                     "' missing from the '_file' registry");
      }
      dimids.push_back(id);
    }
    int varid = -1;
    nc_check(nc_def_var(ncid, v.name.c_str(), *detail::nc_type_of_dtype(v.object->descriptor().dtype),
                        static_cast<int>(dimids.size()), dimids.data(), &varid),
             "defining variable '" + v.name + "'");
    const cbor::value* tags = v.netcdf->find("_attr_types");
    for (const cbor::map_entry& e : *v.netcdf->as_map()) {
      const std::string* name = e.key.as_text();
      if (name == nullptr) continue;
      bool internal = false;
      for (const std::string_view k : internal_keys) internal = internal || *name == k;
      if (!internal) put_attribute(ncid, varid, *name, e.val, tag_of(tags, *name));
    }
    varids.push_back(varid);
  }
  nc_check(nc_enddef(ncid), "leaving define mode");
  // Values in full; start/count also cover unlimited dimensions.
  for (std::size_t i = 0; i < vars.size(); ++i) {
    const decoded_object& o = *vars[i].object;
    if (o.data_size() == 0) continue;
    std::vector<std::size_t> start(o.shape().size() + 1, 0);
    std::vector<std::size_t> count(o.shape().size() + 1, 1);
    for (std::size_t a = 0; a < o.shape().size(); ++a) count[a] = static_cast<std::size_t>(o.shape()[a]);
    nc_check(nc_put_vara(ncid, varids[i], start.data(), count.data(), o.bytes().data()),
             "writing variable '" + vars[i].name + "'");
  }
}

}  // namespace

void to_netcdf(std::span<const std::vector<std::byte>> messages, const std::filesystem::path& path) {
  const std::lock_guard lock(detail::netcdf_library_mutex());
  // Step 1: decode everything (native byte order, NaN/Inf restored).
  if (messages.empty()) {
    // The reference's text (spec 08 §1.10).
    throw conversion_error(conversion_failure::invalid_data,
                           "invalid netcdf data: to-netcdf: no messages to write");
  }
  std::vector<message> decoded;
  decoded.reserve(messages.size());
  for (std::size_t m = 0; m < messages.size(); ++m) {
    try {
      decoded.push_back(
          decode(reinterpret_cast<const std::uint8_t*>(messages[m].data()), messages[m].size()));
    } catch (const error& e) {
      invalid_data("decode tensogram message " + std::to_string(m) + ": " + e.what());
    }
  }
  // Steps 2–4 are validated before anything touches the disk.
  const std::vector<dimension_def> dims = dimension_union(decoded);
  const std::vector<variable_def> vars = variable_definitions(decoded);
  const cbor::value* globals = nullptr;
  const cbor::value* global_types = nullptr;
  if (decoded[0].num_objects() > 0 && !decoded[0].global().base.empty()) {
    if (const cbor::value* nc = netcdf_map(decoded[0].global().base[0])) {
      globals = nc->find("_global");
      global_types = nc->find("_global_types");
    }
  }

  // Step 5: a NetCDF-4 temporary sibling, renamed over the target only on
  // success; the guard removes it on every failure path.
  auto created = create_temporary(path);
  temp_file_guard guard(created.second);
  nc_file file = std::move(created.first);  // closed before the guard runs
  write_file(file.id(), dims, globals, global_types, vars);
  file.close();
  std::error_code ec;
  std::filesystem::rename(guard.path(), path, ec);
  if (ec) throw io_error(path.string() + ": " + ec.message());
  guard.commit();
}

}  // namespace tensogram::importers
