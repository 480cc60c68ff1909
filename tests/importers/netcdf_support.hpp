// Helpers shared by the NetCDF importer and exporter tests (spec 05 §4–§6):
// netCDF-C as the oracle (handles, dotted-path lookup, reading a variable or
// one record as spec 05 §4.3 unpacks it), scratch directories, and the
// decoded messages' base entries.
#pragma once

#include <gtest/gtest.h>
#include <netcdf.h>
#include <stdlib.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "tensogram.hpp"
#include "tensogram/importers/netcdf.hpp"

namespace tgtest::netcdf {

namespace fs = std::filesystem;
namespace ti = tensogram::importers;
using tensogram::cbor::value;

inline std::string fixture(const std::string& name) {
  return std::string(TENSOGRAM_FIXTURES) + "/netcdf/" + name;
}
inline std::string doctor_fixture(const std::string& name) {
  return std::string(TENSOGRAM_FIXTURES) + "/doctor/" + name;
}

// ---- netCDF-C as the oracle -------------------------------------------------

class nc_handle {
 public:
  explicit nc_handle(const std::string& path, int mode = NC_NOWRITE) {
    status_ = nc_open(path.c_str(), mode, &id_);
  }
  nc_handle(const nc_handle&) = delete;
  nc_handle& operator=(const nc_handle&) = delete;
  ~nc_handle() {
    if (status_ == NC_NOERR) nc_close(id_);
  }
  [[nodiscard]] int id() const { return id_; }
  [[nodiscard]] bool ok() const { return status_ == NC_NOERR; }

 private:
  int id_ = -1;
  int status_ = NC_NOERR;
};

#define NC_OK(call) ASSERT_EQ((call), NC_NOERR) << nc_strerror(call)

// A scratch directory removed at the end of a test.
class temp_dir {
 public:
  temp_dir() {
    std::string pattern = (fs::temp_directory_path() / "tgm-netcdf-test-XXXXXX").string();
    path_ = ::mkdtemp(pattern.data()) != nullptr ? fs::path(pattern) : fs::path();
  }
  temp_dir(const temp_dir&) = delete;
  temp_dir& operator=(const temp_dir&) = delete;
  ~temp_dir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  [[nodiscard]] const fs::path& path() const { return path_; }
  [[nodiscard]] std::vector<std::string> entries() const {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(path_)) names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
  }

 private:
  fs::path path_;
};

inline std::vector<tensogram::message> decode_all(const std::vector<std::vector<std::byte>>& messages) {
  std::vector<tensogram::message> out;
  for (const auto& m : messages)
    out.push_back(tensogram::decode(reinterpret_cast<const std::uint8_t*>(m.data()), m.size()));
  return out;
}

inline const value& base_of(const tensogram::message& m, std::size_t i) {
  return m.global().base.at(i);
}
inline std::string name_of(const tensogram::message& m, std::size_t i) {
  const value* n = base_of(m, i).find("name");
  return n != nullptr && n->is_text() ? *n->as_text() : std::string();
}
inline const value& netcdf_of(const tensogram::message& m, std::size_t i) {
  static const value empty = value::make_map();
  const value* n = base_of(m, i).find("netcdf");
  return n != nullptr ? *n : empty;
}
inline std::vector<std::string> texts(const value* v) {
  std::vector<std::string> out;
  if (v == nullptr || !v->is_array()) return out;
  for (const value& x : *v->as_array()) out.push_back(x.is_text() ? *x.as_text() : "<non-text>");
  return out;
}
inline std::vector<std::string> keys(const value& map) {
  std::vector<std::string> out;
  if (!map.is_map()) return out;
  for (const auto& e : *map.as_map()) out.push_back(*e.key.as_text());
  std::sort(out.begin(), out.end());
  return out;
}

// The group and id of a variable named by its dotted path (issue 9).
inline std::pair<int, int> locate(int root, const std::string& dotted) {
  int group = root;
  std::string rest = dotted;
  for (auto dot = rest.find('.'); dot != std::string::npos; dot = rest.find('.')) {
    int child = -1;
    if (nc_inq_grp_ncid(group, rest.substr(0, dot).c_str(), &child) != NC_NOERR) break;
    group = child;
    rest = rest.substr(dot + 1);
  }
  int varid = -1;
  if (nc_inq_varid(group, rest.c_str(), &varid) != NC_NOERR) return {-1, -1};
  return {group, varid};
}

// Spec 05 §4.3, recomputed from the attributes read here.
inline std::optional<double> packing_number(int g, int v, const char* name) {
  nc_type t = NC_NAT;
  std::size_t len = 0;
  if (nc_inq_att(g, v, name, &t, &len) != NC_NOERR || len != 1) return std::nullopt;
  if (t != NC_DOUBLE && t != NC_FLOAT && t != NC_INT && t != NC_SHORT && t != NC_INT64) return std::nullopt;
  double d = 0;
  nc_get_att_double(g, v, name, &d);
  return d;
}
inline bool has_att(int g, int v, const char* name) {
  int id = 0;
  return nc_inq_attid(g, v, name, &id) == NC_NOERR;
}

inline bool same_element(double a, double b) {
  return a == b || (std::isnan(a) && std::isnan(b));
}

template <typename T>
inline void expect_values(const std::vector<T>& expected, const tensogram::decoded_object& o,
                          const std::string& what) {
  ASSERT_EQ(o.element_count<T>(), expected.size()) << what;
  const T* got = o.data_as<T>();
  for (std::size_t i = 0; i < expected.size(); ++i) {
    if constexpr (std::is_floating_point_v<T>) {
      ASSERT_TRUE(same_element(static_cast<double>(expected[i]), static_cast<double>(got[i])))
          << what << "[" << i << "] expected " << expected[i] << " got " << got[i];
    } else {
      ASSERT_EQ(expected[i], got[i]) << what << "[" << i << "]";
    }
  }
}

template <typename T>
inline std::vector<T> read_slab(int g, int v, const std::vector<std::size_t>& start,
                                const std::vector<std::size_t>& count) {
  std::size_t n = 1;
  for (const std::size_t c : count) n *= c;
  std::vector<T> out(n);
  if (n > 0) {
    EXPECT_EQ(nc_get_vara(g, v, start.data(), count.data(), out.data()), NC_NOERR);
  }
  return out;
}

// Compares object `o` with netCDF-C's reading of variable `dotted` (the
// whole variable, or record `record` of the unlimited dimension `record_dim`),
// unpacking as spec 05 §4.3 says when `unpack`.
inline void expect_matches_netcdf(int root, const std::string& dotted, const tensogram::decoded_object& o,
                                  std::optional<std::size_t> record = std::nullopt, int record_dim = -1) {
  const auto [g, v] = locate(root, dotted);
  ASSERT_GE(v, 0) << dotted;
  nc_type type = NC_NAT;
  int ndims = 0;
  NC_OK(nc_inq_var(g, v, nullptr, &type, &ndims, nullptr, nullptr));
  std::vector<int> dimids(static_cast<std::size_t>(ndims));
  if (ndims > 0) {
    NC_OK(nc_inq_vardimid(g, v, dimids.data()));
  }
  std::vector<std::size_t> start(dimids.size() + 1, 0), count(dimids.size() + 1, 1);
  std::vector<std::uint64_t> shape;
  bool sliced = false;
  for (std::size_t a = 0; a < dimids.size(); ++a) {
    std::size_t len = 0;
    NC_OK(nc_inq_dimlen(g, dimids[a], &len));
    if (record && dimids[a] == record_dim && !sliced) {
      start[a] = *record;
      sliced = true;
      continue;
    }
    count[a] = len;
    shape.push_back(len);
  }
  EXPECT_EQ(o.shape(), shape) << dotted;
  const bool packed = !sliced && (has_att(g, v, "scale_factor") || has_att(g, v, "add_offset"));
  if (packed) {
    ASSERT_EQ(o.dtype_string(), "float64") << dotted;
    std::size_t n = 1;
    for (const std::uint64_t s : shape) n *= static_cast<std::size_t>(s);
    std::vector<double> raw(n);
    if (n > 0) {
      NC_OK(nc_get_vara_double(g, v, start.data(), count.data(), raw.data()));
    }
    const auto scale = packing_number(g, v, "scale_factor");
    const auto offset = packing_number(g, v, "add_offset");
    auto sentinel = packing_number(g, v, "missing_value");
    if (!sentinel) sentinel = packing_number(g, v, "_FillValue");
    for (double& x : raw) {
      if (sentinel && std::abs(x - *sentinel) <
                          std::numeric_limits<double>::epsilon() * std::max(1.0, std::abs(*sentinel))) {
        x = std::nan("");
        continue;
      }
      if (scale) x *= *scale;
      if (offset) x += *offset;
    }
    expect_values(raw, o, dotted);
    return;
  }
  switch (type) {
    case NC_BYTE:
      EXPECT_EQ(o.dtype_string(), "int8");
      expect_values(read_slab<std::int8_t>(g, v, start, count), o, dotted);
      break;
    case NC_UBYTE:
      EXPECT_EQ(o.dtype_string(), "uint8");
      expect_values(read_slab<std::uint8_t>(g, v, start, count), o, dotted);
      break;
    case NC_SHORT:
      EXPECT_EQ(o.dtype_string(), "int16");
      expect_values(read_slab<std::int16_t>(g, v, start, count), o, dotted);
      break;
    case NC_USHORT:
      EXPECT_EQ(o.dtype_string(), "uint16");
      expect_values(read_slab<std::uint16_t>(g, v, start, count), o, dotted);
      break;
    case NC_INT:
      EXPECT_EQ(o.dtype_string(), "int32");
      expect_values(read_slab<std::int32_t>(g, v, start, count), o, dotted);
      break;
    case NC_UINT:
      EXPECT_EQ(o.dtype_string(), "uint32");
      expect_values(read_slab<std::uint32_t>(g, v, start, count), o, dotted);
      break;
    case NC_INT64:
      EXPECT_EQ(o.dtype_string(), "int64");
      expect_values(read_slab<std::int64_t>(g, v, start, count), o, dotted);
      break;
    case NC_UINT64:
      EXPECT_EQ(o.dtype_string(), "uint64");
      expect_values(read_slab<std::uint64_t>(g, v, start, count), o, dotted);
      break;
    case NC_FLOAT:
      EXPECT_EQ(o.dtype_string(), "float32");
      expect_values(read_slab<float>(g, v, start, count), o, dotted);
      break;
    case NC_DOUBLE:
      EXPECT_EQ(o.dtype_string(), "float64");
      expect_values(read_slab<double>(g, v, start, count), o, dotted);
      break;
    default: ADD_FAILURE() << dotted << ": unexpected NetCDF type " << type;
  }
}

struct captured {
  std::vector<std::string> warnings;
  std::vector<std::pair<std::size_t, std::size_t>> progress;
};

inline ti::netcdf_options options_capturing(captured& c) {
  ti::netcdf_options o;
  o.conversion.on_warning = [&c](std::string_view w) { c.warnings.emplace_back(w); };
  o.conversion.on_progress = [&c](std::size_t done, std::size_t total) {
    c.progress.emplace_back(done, total);
  };
  return o;
}

template <typename F>
inline ti::conversion_error expect_conversion_error(F&& f) {
  try {
    f();
  } catch (const ti::conversion_error& e) {
    return e;
  }
  ADD_FAILURE() << "no conversion_error";
  return ti::conversion_error(ti::conversion_failure::usage, "none");
}

// A NetCDF-4 file with an unlimited dimension, nested groups, a parent
// dimension used from a sub-group and typed attributes, built here.
inline void write_custom_file(const fs::path& path) {
  int id = -1;
  NC_OK(nc_create(path.string().c_str(), NC_NETCDF4 | NC_CLOBBER, &id));
  int time = -1, x = -1;
  NC_OK(nc_def_dim(id, "time", NC_UNLIMITED, &time));
  NC_OK(nc_def_dim(id, "x", 2, &x));
  int t = -1, v = -1;
  NC_OK(nc_def_var(id, "t", NC_DOUBLE, 1, &time, &t));
  const int vd[2] = {time, x};
  NC_OK(nc_def_var(id, "v", NC_INT, 2, vd, &v));
  const short shorts[3] = {1, -2, 3};
  NC_OK(nc_put_att_short(id, v, "shorts", NC_SHORT, 3, shorts));
  const unsigned char ub = 200;
  NC_OK(nc_put_att_uchar(id, v, "ubyte", NC_UBYTE, 1, &ub));
  const char* strs[2] = {"alpha", "beta"};
  NC_OK(nc_put_att_string(id, v, "labels", 2, strs));
  const float fl = 1.5f;
  NC_OK(nc_put_att_float(id, v, "scale_hint", NC_FLOAT, 1, &fl));
  const long long big = -9000000000LL;
  NC_OK(nc_put_att_longlong(id, v, "big", NC_INT64, 1, &big));
  const unsigned long long ubig = 18000000000000000000ULL;
  NC_OK(nc_put_att_ulonglong(id, v, "ubig", NC_UINT64, 1, &ubig));
  NC_OK(nc_put_att_text(id, v, "units", 1, "m"));
  const int fill = -1;  // not a packed variable: _FillValue stays an attribute
  NC_OK(nc_put_att_int(id, v, "_FillValue", NC_INT, 1, &fill));
  const int gi[2] = {7, 8};
  NC_OK(nc_put_att_int(id, NC_GLOBAL, "version", NC_INT, 2, gi));
  int grp = -1, sub = -1;
  NC_OK(nc_def_grp(id, "obs", &grp));
  NC_OK(nc_def_grp(grp, "deep", &sub));
  int k = -1;
  NC_OK(nc_def_dim(grp, "k", 3, &k));
  const int sd[2] = {x, k};
  int w = -1;
  NC_OK(nc_def_var(sub, "w", NC_USHORT, 2, sd, &w));
  NC_OK(nc_enddef(id));
  const std::size_t start[2] = {0, 0}, count[2] = {3, 2};
  const double tv[3] = {10.5, 11.5, 12.5};
  NC_OK(nc_put_vara_double(id, t, start, count, tv));
  const int vv[6] = {1, 2, 3, 4, 5, -6};
  NC_OK(nc_put_vara_int(id, v, start, count, vv));
  const unsigned short wv[6] = {1, 2, 3, 40000, 5, 6};
  NC_OK(nc_put_var_ushort(sub, w, wv));
  NC_OK(nc_close(id));
}

}  // namespace tgtest::netcdf
