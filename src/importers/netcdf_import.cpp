// NetCDF → Tensogram (spec 05 §4) on netCDF-C, plus the nested-group
// extension of issue 9 (`netcdf_options::nested_groups`).
#include <netcdf.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <deque>
#include <filesystem>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "library_lock.hpp"
#include "netcdf_file.hpp"
#include "tensogram/cbor/value.hpp"
#include "tensogram/core/byte_order.hpp"
#include "tensogram/core/error.hpp"
#include "tensogram/core/utf8.hpp"
#include "tensogram/importers/netcdf.hpp"
#include "tensogram/message/encode.hpp"
#include "tensogram/message/metadata.hpp"

namespace tensogram::importers {

namespace {

using detail::nc_check;
using detail::nc_file;

// Spec 05 §4.4: exactly these 16 attribute names are lifted into `cf`.
constexpr std::array<std::string_view, 16> cf_allow_list = {
    "standard_name", "long_name",           "units",       "calendar",
    "cell_methods",  "coordinates",         "axis",        "positive",
    "valid_min",     "valid_max",           "valid_range", "bounds",
    "grid_mapping",  "ancillary_variables", "flag_values", "flag_meanings"};

// Spec 05 §4.3 step 5: attributes that no longer describe unpacked data.
constexpr std::array<std::string_view, 7> packing_attributes = {
    "scale_factor", "add_offset", "_FillValue", "missing_value", "valid_min", "valid_max", "valid_range"};

// One entry of the `_file.dims` registry (spec 05 §4.4); `name` is dotted
// for dimensions of sub-groups (issue 9).
struct dimension_entry {
  int id = -1;
  std::string name;
  std::size_t length = 0;
  bool unlimited = false;
};

// A group whose variables are converted: its id and the dotted prefix of
// its names ("" for the root group, "forecast." for /forecast).
struct group_entry {
  int id = -1;
  std::string prefix;
};

// A variable to convert, in file definition order (root first).
struct variable_ref {
  int group = -1;
  int varid = -1;
  std::string name;  // dotted path for variables of sub-groups
};

// A variable's attributes as metadata values and their type tags (§4.4).
struct attribute_set {
  cbor::value values = cbor::value::make_map();
  cbor::value types = cbor::value::make_map();
};

// One variable read from the file, before the pipeline is applied.
struct converted_variable {
  data_object_descriptor descriptor;
  std::vector<std::byte> data;  // little-endian payload (spec 05 §4.2)
  cbor::value base_entry;
  std::string name;
};

// Frees the strings libnetcdf allocated for an NC_STRING attribute.
class nc_string_array {
 public:
  explicit nc_string_array(std::size_t n) : items_(n, nullptr) {}
  nc_string_array(const nc_string_array&) = delete;
  nc_string_array& operator=(const nc_string_array&) = delete;
  ~nc_string_array() {
    if (filled_) nc_free_string(items_.size(), items_.data());
  }
  char** data() noexcept { return items_.data(); }
  void mark_filled() noexcept { filled_ = true; }
  [[nodiscard]] std::string at(std::size_t i) const {
    return items_[i] == nullptr ? std::string() : items_[i];
  }

 private:
  std::vector<char*> items_;
  bool filled_ = false;
};

// Numeric attribute values: a one-element attribute is a scalar, longer ones
// an array; float32 is widened to float64 (spec 05 §4.4).
template <typename T>
std::optional<cbor::value> numeric_attribute(int group, int varid, const std::string& name,
                                             std::size_t length, std::string& failure) {
  std::vector<T> values(std::max<std::size_t>(length, 1));
  if (const int status = nc_get_att(group, varid, name.c_str(), values.data()); status != NC_NOERR) {
    failure = nc_strerror(status);
    return std::nullopt;
  }
  auto element = [](T v) {
    if constexpr (std::is_floating_point_v<T>) {
      return cbor::value(static_cast<double>(v));
    } else {
      return cbor::value(v);
    }
  };
  if (length == 1) return element(values[0]);
  cbor::array items;
  items.reserve(length);
  for (std::size_t i = 0; i < length; ++i) items.push_back(element(values[i]));
  return cbor::value(std::move(items));
}

// Reads one attribute as spec 05 §4.4 converts it; on failure returns
// nothing and sets `failure` to the cause.
std::optional<cbor::value> read_attribute(int group, int varid, const std::string& name, nc_type type,
                                          std::size_t length, std::string& failure) {
  switch (type) {
    case NC_CHAR: {
      std::string text(length, '\0');
      if (const int status = nc_get_att_text(group, varid, name.c_str(), text.data()); status != NC_NOERR) {
        failure = nc_strerror(status);
        return std::nullopt;
      }
      // C strings written with their terminator end at the first NUL.
      if (const auto nul = text.find('\0'); nul != std::string::npos) text.resize(nul);
      if (!is_valid_utf8(text)) {
        failure = "text is not valid UTF-8";
        return std::nullopt;
      }
      return cbor::value(std::move(text));
    }
    case NC_STRING: {
      nc_string_array strings(std::max<std::size_t>(length, 1));
      if (const int status = nc_get_att_string(group, varid, name.c_str(), strings.data());
          status != NC_NOERR) {
        failure = nc_strerror(status);
        return std::nullopt;
      }
      strings.mark_filled();
      cbor::array items;
      for (std::size_t i = 0; i < length; ++i) {
        std::string s = strings.at(i);
        if (!is_valid_utf8(s)) {
          failure = "text is not valid UTF-8";
          return std::nullopt;
        }
        items.emplace_back(std::move(s));
      }
      if (length == 1) return std::move(items[0]);
      return cbor::value(std::move(items));
    }
    case NC_BYTE: return numeric_attribute<signed char>(group, varid, name, length, failure);
    case NC_UBYTE: return numeric_attribute<unsigned char>(group, varid, name, length, failure);
    case NC_SHORT: return numeric_attribute<short>(group, varid, name, length, failure);
    case NC_USHORT: return numeric_attribute<unsigned short>(group, varid, name, length, failure);
    case NC_INT: return numeric_attribute<int>(group, varid, name, length, failure);
    case NC_UINT: return numeric_attribute<unsigned int>(group, varid, name, length, failure);
    case NC_INT64: return numeric_attribute<long long>(group, varid, name, length, failure);
    case NC_UINT64: return numeric_attribute<unsigned long long>(group, varid, name, length, failure);
    case NC_FLOAT: return numeric_attribute<float>(group, varid, name, length, failure);
    case NC_DOUBLE: return numeric_attribute<double>(group, varid, name, length, failure);
    default: failure = "unsupported attribute type " + std::to_string(type); return std::nullopt;
  }
}

// Spec 05 §4.3 step 2: a scalar attribute of type double, float, int, short
// or int64 as a double; anything else counts as absent.
std::optional<double> numeric_packing_attribute(int group, int varid, const char* name) {
  nc_type type = NC_NAT;
  std::size_t length = 0;
  if (nc_inq_att(group, varid, name, &type, &length) != NC_NOERR || length != 1) return std::nullopt;
  if (type != NC_DOUBLE && type != NC_FLOAT && type != NC_INT && type != NC_SHORT && type != NC_INT64) {
    return std::nullopt;
  }
  double v = 0;
  if (nc_get_att_double(group, varid, name, &v) != NC_NOERR) return std::nullopt;
  return v;
}

bool has_attribute(int group, int varid, const char* name) {
  int id = -1;
  return nc_inq_attid(group, varid, name, &id) == NC_NOERR;
}

[[noreturn]] void invalid_data(const std::string& text) {
  throw conversion_error(conversion_failure::invalid_data, "invalid netcdf data: " + text);
}

// Host-order elements to the little-endian payload of spec 05 §4.2.
void to_little_endian(std::span<std::byte> bytes, std::size_t width) {
  if (native_byte_order() != byte_order::little && width > 1) swap_bytes_in_place(bytes, width);
}

// The state of one conversion: the open file, its groups, dimension
// registry, variables and global attributes.
class netcdf_converter {
 public:
  netcdf_converter(const std::filesystem::path& path, const netcdf_options& options)
      : options_(options), path_text_(path.string()), file_(nc_file::open_read(path_text_)) {
    collect_groups();
    collect_dimensions();
    collect_variables();
    globals_ = read_attributes(NC_GLOBAL, file_.id(), "");
    encode_ = options_.conversion.encode;
    encode_.allow_nan = true;  // spec 05 §1.2: always on for NetCDF
  }

  std::vector<std::vector<std::byte>> run() {
    // Spec 05 §4.1: a file without a single convertible variable is an
    // error, whatever the split mode.
    std::size_t convertible = 0;
    if (options_.split_by == netcdf_split::record) {
      for (const variable_ref& v : variables_) {
        if (check_supported(v)) ++convertible;
      }
    } else {
      for (std::size_t i = 0; i < variables_.size(); ++i) {
        if (check_supported(variables_[i])) converted_.push_back(extract(variables_[i], std::nullopt));
        report_progress(i + 1, variables_.size());
      }
      convertible = converted_.size();
    }
    if (convertible == 0) throw conversion_error(conversion_failure::no_data, "no variables found in input");

    std::vector<std::vector<std::byte>> messages;
    switch (options_.split_by) {
      case netcdf_split::file: messages.push_back(encode_message(converted_)); break;
      case netcdf_split::variable:
        for (const converted_variable& v : converted_) {
          messages.push_back(encode_message(std::span<const converted_variable>(&v, 1)));
        }
        break;
      case netcdf_split::record: messages = run_records(); break;
    }
    return messages;
  }

 private:
  void warn(const std::string& message) const {
    if (options_.conversion.on_warning && !message.empty()) options_.conversion.on_warning(message);
  }
  void report_progress(std::size_t done, std::size_t total) const {
    if (options_.conversion.on_progress) options_.conversion.on_progress(done, total);
  }

  // Root first, then (issue 9) every sub-group depth-first in definition
  // order; without nested groups the reference's warning (spec 05 §4.1).
  void collect_groups() {
    groups_.push_back({file_.id(), ""});
    const std::vector<int> children = child_groups(file_.id());
    if (children.empty()) return;
    if (!options_.nested_groups) {
      warn(path_text_ + ": sub-groups found; only root-group variables are converted");
      return;
    }
    add_groups(children, "");
  }

  std::vector<int> child_groups(int group) const {
    int count = 0;
    nc_check(nc_inq_grps(group, &count, nullptr), "listing groups");
    std::vector<int> ids(static_cast<std::size_t>(count));
    if (count > 0) nc_check(nc_inq_grps(group, &count, ids.data()), "listing groups");
    return ids;
  }

  void add_groups(const std::vector<int>& ids, const std::string& parent_prefix) {
    for (const int id : ids) {
      std::array<char, NC_MAX_NAME + 1> name{};
      nc_check(nc_inq_grpname(id, name.data()), "reading a group name");
      const std::string prefix = parent_prefix + name.data() + ".";
      groups_.push_back({id, prefix});
      add_groups(child_groups(id), prefix);
    }
  }

  // The `_file.dims` registry (spec 05 §4.4): root dimensions in file
  // order, then those of each converted sub-group with dotted names.
  void collect_dimensions() {
    cbor::array registry;
    for (const group_entry& g : groups_) {
      int count = 0;
      nc_check(nc_inq_dimids(g.id, &count, nullptr, 0), "listing dimensions");
      std::vector<int> ids(static_cast<std::size_t>(count));
      if (count > 0) nc_check(nc_inq_dimids(g.id, &count, ids.data(), 0), "listing dimensions");
      int unlimited_count = 0;
      nc_check(nc_inq_unlimdims(g.id, &unlimited_count, nullptr), "listing unlimited dimensions");
      std::vector<int> unlimited(static_cast<std::size_t>(unlimited_count));
      if (unlimited_count > 0) {
        nc_check(nc_inq_unlimdims(g.id, &unlimited_count, unlimited.data()), "listing unlimited dimensions");
      }
      for (const int id : ids) {
        std::array<char, NC_MAX_NAME + 1> name{};
        std::size_t length = 0;
        nc_check(nc_inq_dim(g.id, id, name.data(), &length), "reading a dimension");
        dimension_entry d{id, g.prefix + name.data(), length,
                          std::find(unlimited.begin(), unlimited.end(), id) != unlimited.end()};
        registry.push_back(cbor::value::make_map({{"name", cbor::value(d.name)},
                                                  {"len", cbor::value(d.length)},
                                                  {"unlimited", cbor::value(d.unlimited)}}));
        dimensions_.push_back(std::move(d));
      }
    }
    file_registry_ = cbor::value::make_map({{"dims", cbor::value(std::move(registry))}});
  }

  void collect_variables() {
    for (const group_entry& g : groups_) {
      int count = 0;
      nc_check(nc_inq_nvars(g.id, &count), "counting variables");
      for (int v = 0; v < count; ++v) {
        std::array<char, NC_MAX_NAME + 1> name{};
        nc_check(nc_inq_varname(g.id, v, name.data()), "reading a variable name");
        variables_.push_back({g.id, v, g.prefix + name.data()});
      }
    }
  }

  const dimension_entry& dimension(int group, int id) {
    for (const dimension_entry& d : dimensions_) {
      if (d.id == id) return d;
    }
    // Not in the registry (a dimension of an unconverted group): describe
    // it by its own name so that the variable still converts.
    std::array<char, NC_MAX_NAME + 1> name{};
    std::size_t length = 0;
    nc_check(nc_inq_dim(group, id, name.data(), &length), "reading a dimension");
    extra_dimensions_.push_back({id, name.data(), length, false});
    return extra_dimensions_.back();
  }

  // Attributes of a variable (or NC_GLOBAL) in file order, unreadable ones
  // skipped with the warnings of spec 05 §4.4.
  attribute_set read_attributes(int varid, int group, const std::string& variable_name) const {
    attribute_set set;
    int count = 0;
    if (varid == NC_GLOBAL) {
      nc_check(nc_inq_natts(group, &count), "counting global attributes");
    } else {
      nc_check(nc_inq_varnatts(group, varid, &count), "counting attributes");
    }
    for (int i = 0; i < count; ++i) {
      std::array<char, NC_MAX_NAME + 1> raw_name{};
      nc_check(nc_inq_attname(group, varid, i, raw_name.data()), "reading an attribute name");
      const std::string name = raw_name.data();
      nc_type type = NC_NAT;
      std::size_t length = 0;
      std::string failure;
      std::optional<cbor::value> value;
      if (const int status = nc_inq_att(group, varid, name.c_str(), &type, &length); status != NC_NOERR) {
        failure = nc_strerror(status);
      } else {
        value = read_attribute(group, varid, name, type, length, failure);
      }
      if (!value) {
        if (varid == NC_GLOBAL) {
          warn("failed to read global attribute '" + name + "': " + failure);
        } else {
          warn("variable '" + variable_name + "': failed to read attribute '" + name + "': " + failure);
        }
        continue;
      }
      set.values.set(name, std::move(*value));
      set.types.set(name, cbor::value(detail::type_tag_of_nc_type(type)));
    }
    return set;
  }

  // Spec 05 §4.1: char/string and user-defined variables are skipped with a
  // warning; returns whether `v` converts.
  bool check_supported(const variable_ref& v) const {
    nc_type type = NC_NAT;
    nc_check(nc_inq_vartype(v.group, v.varid, &type), "reading a variable type");
    if (detail::dtype_of_nc_type(type)) return true;
    std::string reason;
    if (type == NC_CHAR) {
      reason = "Char variables are not supported";
    } else if (type == NC_STRING) {
      reason = "String variables are not supported";
    } else {
      std::array<char, NC_MAX_NAME + 1> type_name{};
      int type_class = 0;
      std::string kind = "Unknown";
      if (nc_inq_user_type(v.group, type, type_name.data(), nullptr, nullptr, nullptr, &type_class) ==
          NC_NOERR) {
        switch (type_class) {
          case NC_ENUM: kind = "Enum"; break;
          case NC_COMPOUND: kind = "Compound"; break;
          case NC_OPAQUE: kind = "Opaque"; break;
          case NC_VLEN: kind = "Vlen"; break;
          default: break;
        }
      }
      reason = "complex type " + kind + "(" + type_name.data() + ") is not supported";
    }
    warn("skipping variable '" + v.name + "': " + reason);
    return false;
  }

  // Reads variable `v` whole (spec 05 §4.2/§4.3), or, with `record`, the
  // slice at that index of the record dimension (§4.6: axis dropped, no
  // unpacking, `record_index`).
  converted_variable extract(const variable_ref& v, std::optional<std::size_t> record) {
    nc_type type = NC_NAT;
    int ndims = 0;
    nc_check(nc_inq_var(v.group, v.varid, nullptr, &type, &ndims, nullptr, nullptr), "reading a variable");
    std::vector<int> dimids(static_cast<std::size_t>(ndims));
    if (ndims > 0) nc_check(nc_inq_vardimid(v.group, v.varid, dimids.data()), "reading variable dimensions");

    std::vector<std::size_t> start(dimids.size() + 1, 0);
    std::vector<std::size_t> count(dimids.size() + 1, 1);
    std::vector<std::uint64_t> shape;
    cbor::array dim_names;
    std::optional<std::size_t> record_axis;
    for (std::size_t axis = 0; axis < dimids.size(); ++axis) {
      const dimension_entry& d = dimension(v.group, dimids[axis]);
      if (record && !record_axis && record_dimension_ && d.id == record_dimension_->id) {
        record_axis = axis;
        start[axis] = *record;
        count[axis] = 1;
        continue;
      }
      count[axis] = d.length;
      shape.push_back(d.length);
      dim_names.emplace_back(d.name);
    }
    std::size_t elements = 1;
    for (const std::uint64_t n : shape) elements *= static_cast<std::size_t>(n);

    attribute_set attributes = read_attributes(v.varid, v.group, v.name);
    const cbor::value original_attributes = attributes.values;

    converted_variable out;
    out.name = v.name;
    const bool packed = !record_axis && (has_attribute(v.group, v.varid, "scale_factor") ||
                                         has_attribute(v.group, v.varid, "add_offset"));
    if (packed) {
      out.data = read_unpacked(v, start, count, elements);
      out.descriptor = data_object_descriptor::contiguous(dtype::float64, shape, byte_order::little);
      for (const std::string_view name : packing_attributes) {
        attributes.values.erase(name);
        attributes.types.erase(name);
      }
    } else {
      const dtype t = *detail::dtype_of_nc_type(type);
      const std::size_t width = dtype_width(t);
      out.data.resize(elements * width);
      if (elements > 0) {
        if (const int status = nc_get_vara(v.group, v.varid, start.data(), count.data(), out.data.data());
            status != NC_NOERR) {
          invalid_data("reading '" + v.name + "': " + nc_strerror(status));
        }
      }
      to_little_endian(out.data, width);
      out.descriptor = data_object_descriptor::contiguous(t, shape, byte_order::little);
    }

    // Spec 05 §4.4: the `netcdf` map.
    cbor::value netcdf = attributes.values;
    netcdf.set("_dims", cbor::value(std::move(dim_names)));
    netcdf.set("_file", file_registry_);
    if (attributes.types.size() > 0) netcdf.set("_attr_types", attributes.types);
    if (globals_.values.size() > 0) {
      netcdf.set("_global", globals_.values);
      netcdf.set("_global_types", globals_.types);
    }
    if (record_axis) netcdf.set("record_index", cbor::value(static_cast<std::uint64_t>(*record)));

    out.base_entry = cbor::value::make_map({{"name", cbor::value(v.name)}, {"netcdf", std::move(netcdf)}});
    if (options_.cf) {
      cbor::value cf = cbor::value::make_map();
      for (const std::string_view name : cf_allow_list) {
        if (const cbor::value* value = original_attributes.find(name)) cf.set(name, *value);
      }
      if (cf.size() > 0) out.base_entry.set("cf", std::move(cf));
    }
    return out;
  }

  // Spec 05 §4.3: values as doubles, the sentinel (missing_value, else
  // _FillValue) to NaN, then scale_factor and add_offset.
  std::vector<std::byte> read_unpacked(const variable_ref& v, const std::vector<std::size_t>& start,
                                       const std::vector<std::size_t>& count, std::size_t elements) const {
    std::vector<double> values(elements);
    if (elements > 0) {
      if (const int status = nc_get_vara_double(v.group, v.varid, start.data(), count.data(), values.data());
          status != NC_NOERR) {
        invalid_data("reading '" + v.name + "' for unpacking: " + nc_strerror(status));
      }
    }
    const std::optional<double> scale = numeric_packing_attribute(v.group, v.varid, "scale_factor");
    const std::optional<double> offset = numeric_packing_attribute(v.group, v.varid, "add_offset");
    std::optional<double> sentinel = numeric_packing_attribute(v.group, v.varid, "missing_value");
    if (!sentinel) sentinel = numeric_packing_attribute(v.group, v.varid, "_FillValue");
    constexpr double epsilon = std::numeric_limits<double>::epsilon();
    for (double& x : values) {
      if (sentinel && std::abs(x - *sentinel) < epsilon * std::max(std::abs(*sentinel), 1.0)) {
        x = std::numeric_limits<double>::quiet_NaN();
        continue;
      }
      if (scale) x *= *scale;
      if (offset) x += *offset;
    }
    std::vector<std::byte> bytes(elements * sizeof(double));
    if (elements > 0) std::memcpy(bytes.data(), values.data(), bytes.size());
    to_little_endian(bytes, sizeof(double));
    return bytes;
  }

  // Spec 05 §4.5/§4.6: one message per index of the first unlimited
  // dimension of the registry.
  std::vector<std::vector<std::byte>> run_records() {
    for (const dimension_entry& d : dimensions_) {
      if (d.unlimited) {
        record_dimension_ = d;
        break;
      }
    }
    if (!record_dimension_) {
      throw conversion_error(
          conversion_failure::usage,
          "--split-by=record requires an unlimited dimension, none found in " + path_text_);
    }
    const std::size_t records = record_dimension_->length;
    std::vector<std::vector<std::byte>> messages;
    // Variables without the record dimension are identical in every
    // record: read once, repeated in each message.
    std::vector<std::optional<converted_variable>> static_variables(variables_.size());
    const std::size_t total = records * variables_.size();
    std::size_t done = 0;
    for (std::size_t k = 0; k < records; ++k) {
      std::vector<converted_variable> record_variables;
      for (std::size_t i = 0; i < variables_.size(); ++i) {
        const variable_ref& v = variables_[i];
        if (check_supported(v)) {
          if (uses_record_dimension(v)) {
            record_variables.push_back(extract(v, k));
          } else {
            if (!static_variables[i]) static_variables[i] = extract(v, std::nullopt);
            record_variables.push_back(*static_variables[i]);
          }
        }
        report_progress(++done, total);
      }
      if (!record_variables.empty()) messages.push_back(encode_message(record_variables));
    }
    return messages;
  }

  bool uses_record_dimension(const variable_ref& v) const {
    int ndims = 0;
    nc_check(nc_inq_varndims(v.group, v.varid, &ndims), "reading a variable");
    std::vector<int> dimids(static_cast<std::size_t>(ndims));
    if (ndims > 0) nc_check(nc_inq_vardimid(v.group, v.varid, dimids.data()), "reading variable dimensions");
    return std::find(dimids.begin(), dimids.end(), record_dimension_->id) != dimids.end();
  }

  // Applies the pipeline of spec 05 §1.1 to each object and encodes one
  // message with NaN acceptance forced on (§1.2).
  std::vector<std::byte> encode_message(std::span<const converted_variable> variables) const {
    global_metadata metadata;
    std::vector<object_input> objects;
    objects.reserve(variables.size());
    for (const converted_variable& v : variables) {
      data_object_descriptor d = v.descriptor;
      apply_pipeline(options_.conversion.pipeline, d, v.data, v.name, "netcdf");
      objects.push_back({std::move(d), v.data});
      metadata.base.push_back(v.base_entry);
    }
    return encode_converted(metadata, objects, encode_);
  }

  const netcdf_options& options_;
  std::string path_text_;
  nc_file file_;
  encode_options encode_;
  std::vector<group_entry> groups_;
  std::vector<dimension_entry> dimensions_;
  std::deque<dimension_entry> extra_dimensions_;  // stable references
  std::vector<variable_ref> variables_;
  cbor::value file_registry_;
  attribute_set globals_;
  std::vector<converted_variable> converted_;
  std::optional<dimension_entry> record_dimension_;
};

}  // namespace

std::vector<std::vector<std::byte>> convert_netcdf_file(const std::filesystem::path& path,
                                                        const netcdf_options& options) {
  // Spec 05 §4.7: a missing path is an I/O error, checked before libnetcdf.
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) throw io_error(path.string() + ": No such file or directory");
  const std::lock_guard lock(detail::netcdf_library_mutex());
  netcdf_converter converter(path, options);
  return converter.run();
}

}  // namespace tensogram::importers
