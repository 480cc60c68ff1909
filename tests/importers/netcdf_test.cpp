// NetCDF importer and exporter (spec 05 §4, §5, §6; issue 9): every fixture
// against netCDF-C's own reading of the same file, metadata, split modes,
// errors, pipelines and NetCDF → Tensogram → NetCDF round trips.
#include <gtest/gtest.h>
#include <netcdf.h>
#include <stdlib.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tensogram.hpp"
#include "tensogram/importers/netcdf.hpp"

namespace {

namespace fs = std::filesystem;
namespace ti = tensogram::importers;
using tensogram::lookup_path;
using tensogram::cbor::value;

std::string fixture(const std::string& name) {
  return std::string(TENSOGRAM_FIXTURES) + "/netcdf/" + name;
}
std::string doctor_fixture(const std::string& name) {
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

std::vector<tensogram::message> decode_all(const std::vector<std::vector<std::byte>>& messages) {
  std::vector<tensogram::message> out;
  for (const auto& m : messages)
    out.push_back(tensogram::decode(reinterpret_cast<const std::uint8_t*>(m.data()), m.size()));
  return out;
}

const value& base_of(const tensogram::message& m, std::size_t i) {
  return m.global().base.at(i);
}
std::string name_of(const tensogram::message& m, std::size_t i) {
  const value* n = base_of(m, i).find("name");
  return n != nullptr && n->is_text() ? *n->as_text() : std::string();
}
const value& netcdf_of(const tensogram::message& m, std::size_t i) {
  static const value empty = value::make_map();
  const value* n = base_of(m, i).find("netcdf");
  return n != nullptr ? *n : empty;
}
std::vector<std::string> texts(const value* v) {
  std::vector<std::string> out;
  if (v == nullptr || !v->is_array()) return out;
  for (const value& x : *v->as_array()) out.push_back(x.is_text() ? *x.as_text() : "<non-text>");
  return out;
}
std::vector<std::string> keys(const value& map) {
  std::vector<std::string> out;
  if (!map.is_map()) return out;
  for (const auto& e : *map.as_map()) out.push_back(*e.key.as_text());
  std::sort(out.begin(), out.end());
  return out;
}

// The group and id of a variable named by its dotted path (issue 9).
std::pair<int, int> locate(int root, const std::string& dotted) {
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
std::optional<double> packing_number(int g, int v, const char* name) {
  nc_type t = NC_NAT;
  std::size_t len = 0;
  if (nc_inq_att(g, v, name, &t, &len) != NC_NOERR || len != 1) return std::nullopt;
  if (t != NC_DOUBLE && t != NC_FLOAT && t != NC_INT && t != NC_SHORT && t != NC_INT64) return std::nullopt;
  double d = 0;
  nc_get_att_double(g, v, name, &d);
  return d;
}
bool has_att(int g, int v, const char* name) {
  int id = 0;
  return nc_inq_attid(g, v, name, &id) == NC_NOERR;
}

bool same_element(double a, double b) {
  return a == b || (std::isnan(a) && std::isnan(b));
}

template <typename T>
void expect_values(const std::vector<T>& expected, const tensogram::decoded_object& o,
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
std::vector<T> read_slab(int g, int v, const std::vector<std::size_t>& start,
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
void expect_matches_netcdf(int root, const std::string& dotted, const tensogram::decoded_object& o,
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

ti::netcdf_options options_capturing(captured& c) {
  ti::netcdf_options o;
  o.conversion.on_warning = [&c](std::string_view w) { c.warnings.emplace_back(w); };
  o.conversion.on_progress = [&c](std::size_t done, std::size_t total) {
    c.progress.emplace_back(done, total);
  };
  return o;
}

template <typename F>
ti::conversion_error expect_conversion_error(F&& f) {
  try {
    f();
  } catch (const ti::conversion_error& e) {
    return e;
  }
  ADD_FAILURE() << "no conversion_error";
  return ti::conversion_error(ti::conversion_failure::usage, "none");
}

// ---- spec 05 §6: every fixture against netCDF-C ----------------------------

struct fixture_case {
  std::string path;
  std::vector<std::string> names;  // expected objects, in order
};

TEST(NetcdfImport, EveryFixtureMatchesNetcdfReading) {
  const std::vector<fixture_case> cases = {
      {fixture("cf_temperature.nc"), {"lat", "lon", "time", "temperature"}},
      {fixture("cf_temperature_deflate.nc"), {"lat", "lon", "time", "temperature"}},
      {fixture("multi_var.nc"), {"temperature", "humidity", "pressure"}},
      {fixture("multi_dtype.nc"),
       {"i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "f32", "f64", "pi", "f64_with_nan"}},
      {fixture("nc3_classic.nc"), {"temperature"}},
      {fixture("simple_2d.nc"), {"data"}},
      {fixture("unlimited_time.nc"), {"time", "temp", "mask"}},
      {fixture("record_multi_dtype.nc"),
       {"time", "v_i8", "v_u8", "v_i16", "v_u16", "v_i32", "v_u32", "v_i64", "v_u64", "v_f32", "v_f64"}},
      {fixture("record_with_char.nc"), {"time", "values"}},
      {fixture("empty_unlimited.nc"), {"temp"}},
      {fixture("nc4_groups.nc"), {"root_var", "forecast.predicted"}},
      {fixture("complex_types.nc"), {"value"}},
      {fixture("complex_types_unlimited.nc"), {"value"}},
      {fixture("attr_type_variants.nc"),
       {"scaled_float", "scaled_int", "scaled_short", "scaled_longlong", "with_missing", "string_scale"}},
      {doctor_fixture("sanity-classic.nc"), {"lat", "lon", "temperature"}},
      {doctor_fixture("sanity-hdf5.nc"), {"lat", "lon", "temperature"}},
  };
  std::size_t compared = 0;
  for (const fixture_case& c : cases) {
    SCOPED_TRACE(c.path);
    const auto messages = decode_all(ti::convert_netcdf_file(c.path));
    ASSERT_EQ(messages.size(), 1u);
    const auto& m = messages[0];
    ASSERT_EQ(m.num_objects(), c.names.size());
    nc_handle nc(c.path);
    ASSERT_TRUE(nc.ok());
    for (std::size_t i = 0; i < m.num_objects(); ++i) {
      EXPECT_EQ(name_of(m, i), c.names[i]);
      expect_matches_netcdf(nc.id(), c.names[i], m.object(i));
      EXPECT_EQ(m.object(i).descriptor().byte_order, tensogram::byte_order::little);
      ++compared;
    }
  }
  EXPECT_EQ(compared, 58u);
  std::printf("[ info ] %zu variables of %zu files compared with netCDF-C\n", compared, cases.size());
}

TEST(NetcdfImport, DoctorSanityTemperature) {
  for (const char* f : {"sanity-classic.nc", "sanity-hdf5.nc"}) {
    const auto m = decode_all(ti::convert_netcdf_file(doctor_fixture(f)));
    ASSERT_EQ(m.size(), 1u);
    ASSERT_EQ(m[0].num_objects(), 3u);
    for (const auto& o : m[0]) EXPECT_EQ(o.dtype_string(), "float32");
    const auto& t = m[0].object(2);
    EXPECT_EQ(t.shape(), (std::vector<std::uint64_t>{2, 2}));
    EXPECT_EQ(t.data_as<float>()[0], 273.15f);
    EXPECT_EQ(t.data_as<float>()[3], 276.15f);
  }
}

// ---- spec 05 §4.4 metadata ---------------------------------------------------

TEST(NetcdfImport, CfTemperatureMetadata) {
  captured c;
  const auto m = decode_all(ti::convert_netcdf_file(fixture("cf_temperature.nc"), options_capturing(c)));
  ASSERT_EQ(m.size(), 1u);
  ASSERT_EQ(m[0].num_objects(), 4u);
  EXPECT_TRUE(c.warnings.empty());
  // Progress per variable (4 of 4 at the end).
  ASSERT_EQ(c.progress.size(), 4u);
  EXPECT_EQ(c.progress.back(), (std::pair<std::size_t, std::size_t>{4, 4}));

  EXPECT_EQ(m[0].object(0).dtype_string(), "float32");
  EXPECT_EQ(m[0].object(2).dtype_string(), "float64");
  const auto& t = m[0].object(3);
  EXPECT_EQ(t.dtype_string(), "float64");
  EXPECT_EQ(t.shape(), (std::vector<std::uint64_t>{3, 5, 4}));
  EXPECT_EQ(t.data_as<double>()[0], -27315 * 0.01 + 273.15);
  EXPECT_EQ(t.data_as<double>()[1], 3053 * 0.01 + 273.15);

  const value& nc = netcdf_of(m[0], 3);
  EXPECT_EQ(keys(nc), (std::vector<std::string>{"_attr_types", "_dims", "_file", "_global", "_global_types",
                                                "long_name", "standard_name", "units"}));
  EXPECT_EQ(*nc.find("standard_name")->as_text(), "air_temperature");
  EXPECT_EQ(*nc.find("units")->as_text(), "K");
  EXPECT_EQ(texts(nc.find("_dims")), (std::vector<std::string>{"time", "lat", "lon"}));
  const value* dims = lookup_path(nc, "_file.dims");
  ASSERT_NE(dims, nullptr);
  ASSERT_EQ(dims->size(), 3u);
  const std::array<std::pair<const char*, std::uint64_t>, 3> expected_dims = {
      {{"time", 3}, {"lat", 5}, {"lon", 4}}};
  for (std::size_t i = 0; i < 3; ++i) {
    const value& d = dims->as_array()->at(i);
    EXPECT_EQ(*d.find("name")->as_text(), expected_dims[i].first);
    EXPECT_EQ(d.find("len")->as_uint64(), expected_dims[i].second);
    EXPECT_EQ(d.find("unlimited")->as_bool(), false);
  }
  EXPECT_EQ(keys(*nc.find("_attr_types")), (std::vector<std::string>{"long_name", "standard_name", "units"}));
  EXPECT_EQ(*nc.find("_attr_types")->find("units")->as_text(), "string");
  EXPECT_EQ(*lookup_path(nc, "_global.Conventions")->as_text(), "CF-1.8");
  EXPECT_EQ(keys(*nc.find("_global")), (std::vector<std::string>{"Conventions", "institution", "title"}));
  EXPECT_EQ(*lookup_path(nc, "_global_types.title")->as_text(), "string");
  EXPECT_EQ(nc.find("record_index"), nullptr);
  for (std::size_t i = 0; i < 4; ++i) EXPECT_EQ(base_of(m[0], i).find("cf"), nullptr);
  // Object 0 (lat): its own attributes, file registry repeated.
  EXPECT_EQ(*netcdf_of(m[0], 0).find("axis")->as_text(), "Y");
  EXPECT_EQ(*netcdf_of(m[0], 0).find("_file"), *nc.find("_file"));
  EXPECT_EQ(*netcdf_of(m[0], 0).find("_global"), *nc.find("_global"));
}

TEST(NetcdfImport, CfTemperatureWithCf) {
  ti::netcdf_options o;
  o.cf = true;
  const auto m = decode_all(ti::convert_netcdf_file(fixture("cf_temperature.nc"), o));
  ASSERT_EQ(m[0].num_objects(), 4u);
  const value* lat_cf = base_of(m[0], 0).find("cf");
  ASSERT_NE(lat_cf, nullptr);
  EXPECT_EQ(keys(*lat_cf), (std::vector<std::string>{"axis", "standard_name", "units"}));
  EXPECT_EQ(*lat_cf->find("units")->as_text(), "degrees_north");
  EXPECT_EQ(keys(*base_of(m[0], 2).find("cf")),
            (std::vector<std::string>{"axis", "calendar", "standard_name", "units"}));
  // The packed variable: allow-listed names only, never scale_factor/_FillValue.
  EXPECT_EQ(keys(*base_of(m[0], 3).find("cf")),
            (std::vector<std::string>{"long_name", "standard_name", "units"}));
  // `netcdf` is unchanged by --cf.
  EXPECT_EQ(keys(netcdf_of(m[0], 3)),
            (std::vector<std::string>{"_attr_types", "_dims", "_file", "_global", "_global_types",
                                      "long_name", "standard_name", "units"}));
}

TEST(NetcdfImport, MultiVarSkipsCharWithWarning) {
  captured c;
  const auto m = decode_all(ti::convert_netcdf_file(fixture("multi_var.nc"), options_capturing(c)));
  ASSERT_EQ(m[0].num_objects(), 3u);
  for (const auto& o : m[0]) {
    EXPECT_EQ(o.dtype_string(), "float32");
    EXPECT_EQ(o.shape(), (std::vector<std::uint64_t>{5, 4}));
  }
  EXPECT_EQ(c.warnings,
            (std::vector<std::string>{"skipping variable 'description': Char variables are not supported"}));
  // Progress counts the skipped variable too.
  EXPECT_EQ(c.progress.back(), (std::pair<std::size_t, std::size_t>{4, 4}));
}

TEST(NetcdfImport, EnumVariableSkipped) {
  captured c;
  const auto m = decode_all(ti::convert_netcdf_file(fixture("complex_types.nc"), options_capturing(c)));
  ASSERT_EQ(m[0].num_objects(), 1u);
  EXPECT_EQ(c.warnings, (std::vector<std::string>{
                            "skipping variable 'status': complex type Enum(status_enum) is not supported"}));
}

TEST(NetcdfImport, MultiDtypeScalarAndNan) {
  ti::netcdf_options o;
  o.conversion.encode.allow_nan = false;  // forced on anyway (spec 05 §1.2)
  const auto raw = ti::convert_netcdf_file(fixture("multi_dtype.nc"), o);
  const auto m = decode_all(raw);
  ASSERT_EQ(m[0].num_objects(), 12u);
  const std::vector<std::string> dtypes = {"int8",   "int16",  "int32",   "int64",   "uint8",   "uint16",
                                           "uint32", "uint64", "float32", "float64", "float64", "float64"};
  for (std::size_t i = 0; i < 12; ++i) EXPECT_EQ(m[0].object(i).dtype_string(), dtypes[i]) << i;
  const auto& pi = m[0].object(10);
  EXPECT_EQ(pi.ndim(), 0u);
  EXPECT_TRUE(pi.shape().empty());
  EXPECT_EQ(pi.descriptor().ndim, 0u);
  ASSERT_EQ(pi.element_count<double>(), 1u);
  EXPECT_NEAR(pi.data_as<double>()[0], 3.14159265358979, 1e-13);  // exact value: see the fixture test
  EXPECT_TRUE(texts(netcdf_of(m[0], 10).find("_dims")).empty());
  const auto& with_nan = m[0].object(11);
  EXPECT_TRUE(std::isnan(with_nan.data_as<double>()[2]));
  EXPECT_FALSE(std::isnan(with_nan.data_as<double>()[1]));
  // The NaN rides in the NaN mask companion section.
  const auto masks = tensogram::decode_object_masks(raw[0]);
  ASSERT_EQ(masks.size(), 12u);
  EXPECT_TRUE(masks[11][0].has_value());
  EXPECT_FALSE(masks[9][0].has_value());
  EXPECT_EQ(m[0].object(0).data_as<std::int8_t>()[0], -42);
  EXPECT_EQ(m[0].object(7).data_as<std::uint64_t>()[5], 89u);
}

TEST(NetcdfImport, SimplePackingOnMixedDtypesFails) {
  ti::netcdf_options o;
  o.conversion.pipeline.encoding = "simple_packing";
  const auto e =
      expect_conversion_error([&] { (void)ti::convert_netcdf_file(fixture("multi_dtype.nc"), o); });
  EXPECT_EQ(e.kind(), ti::conversion_failure::invalid_data);
  EXPECT_NE(std::string(e.what()).find("invalid netcdf data: simple_packing requires float64 payload for i8"),
            std::string::npos)
      << e.what();
  // Float64-only data packs: simple_2d.
  const auto m = decode_all(ti::convert_netcdf_file(fixture("simple_2d.nc"), o));
  EXPECT_EQ(m[0].object(0).encoding(), "simple_packing");
  EXPECT_EQ(m[0].object(0).descriptor().params.find("sp_bits_per_value")->as_uint64(), 16u);
}

TEST(NetcdfImport, AttrTypeVariants) {
  const auto m = decode_all(ti::convert_netcdf_file(fixture("attr_type_variants.nc")));
  ASSERT_EQ(m[0].num_objects(), 6u);
  for (const auto& o : m[0]) {
    EXPECT_EQ(o.dtype_string(), "float64");
    EXPECT_EQ(o.shape(), (std::vector<std::uint64_t>{4}));
  }
  const double* f = m[0].object(0).data_as<double>();
  EXPECT_EQ(f[0], -160 * 0.5 + 10.0);
  const double* si = m[0].object(1).data_as<double>();
  EXPECT_EQ(si[1], -35 * 2.0 + 100.0);
  const double* ll = m[0].object(3).data_as<double>();
  EXPECT_EQ(ll[0], -48 * 4.0 + 200.0);
  const double* wm = m[0].object(4).data_as<double>();
  EXPECT_EQ(wm[0], 5.0);
  EXPECT_TRUE(std::isnan(wm[1]));
  EXPECT_EQ(wm[2], 10.0);
  EXPECT_TRUE(std::isnan(wm[3]));
  const double* ss = m[0].object(5).data_as<double>();
  EXPECT_EQ(std::vector<double>(ss, ss + 4), (std::vector<double>{1, 2, 3, 4}));
  // Packing attributes are gone from `netcdf` and its type map (§4.3 step 5).
  for (std::size_t i = 0; i < 6; ++i) {
    const value& nc = netcdf_of(m[0], i);
    for (const char* k : {"scale_factor", "add_offset", "_FillValue", "missing_value"}) {
      EXPECT_EQ(nc.find(k), nullptr) << i << " " << k;
    }
    EXPECT_EQ(nc.find("_attr_types"), nullptr) << i;  // nothing else was left
  }
}

// ---- spec 05 §4.5/§4.6 split modes -------------------------------------------

TEST(NetcdfImport, VariableSplit) {
  ti::netcdf_options o;
  o.split_by = ti::netcdf_split::variable;
  const auto m = decode_all(ti::convert_netcdf_file(fixture("cf_temperature.nc"), o));
  ASSERT_EQ(m.size(), 4u);
  nc_handle nc(fixture("cf_temperature.nc"));
  const std::vector<std::string> names = {"lat", "lon", "time", "temperature"};
  for (std::size_t i = 0; i < 4; ++i) {
    ASSERT_EQ(m[i].num_objects(), 1u);
    EXPECT_EQ(name_of(m[i], 0), names[i]);
    expect_matches_netcdf(nc.id(), names[i], m[i].object(0));
  }
}

TEST(NetcdfImport, UnlimitedTimeRecords) {
  ti::netcdf_options o;
  o.split_by = ti::netcdf_split::record;
  captured c;
  o.conversion.on_progress = [&c](std::size_t d, std::size_t t) { c.progress.emplace_back(d, t); };
  const auto m = decode_all(ti::convert_netcdf_file(fixture("unlimited_time.nc"), o));
  ASSERT_EQ(m.size(), 5u);
  EXPECT_EQ(c.progress.back(), (std::pair<std::size_t, std::size_t>{15, 15}));
  nc_handle nc(fixture("unlimited_time.nc"));
  int time_dim = -1;
  NC_OK(nc_inq_dimid(nc.id(), "time", &time_dim));
  for (std::size_t k = 0; k < 5; ++k) {
    SCOPED_TRACE(k);
    ASSERT_EQ(m[k].num_objects(), 3u);
    EXPECT_EQ(m[k].object(0).dtype_string(), "float64");
    EXPECT_TRUE(m[k].object(0).shape().empty());
    EXPECT_EQ(m[k].object(0).data_as<double>()[0], 18260.0 + static_cast<double>(k));
    EXPECT_EQ(m[k].object(1).dtype_string(), "float32");
    EXPECT_EQ(m[k].object(1).shape(), (std::vector<std::uint64_t>{4, 3}));
    EXPECT_EQ(m[k].object(2).dtype_string(), "int8");
    EXPECT_EQ(m[k].object(2).shape(), (std::vector<std::uint64_t>{4, 3}));
    for (std::size_t i = 0; i < 3; ++i) {
      expect_matches_netcdf(nc.id(), name_of(m[k], i), m[k].object(i), k, time_dim);
    }
    EXPECT_EQ(netcdf_of(m[k], 0).find("record_index")->as_uint64(), k);
    EXPECT_EQ(netcdf_of(m[k], 1).find("record_index")->as_uint64(), k);
    EXPECT_EQ(netcdf_of(m[k], 2).find("record_index"), nullptr);  // static mask
    EXPECT_EQ(texts(netcdf_of(m[k], 1).find("_dims")), (std::vector<std::string>{"y", "x"}));
    EXPECT_TRUE(texts(netcdf_of(m[k], 0).find("_dims")).empty());
    const value* reg = lookup_path(netcdf_of(m[k], 1), "_file.dims");
    EXPECT_EQ(reg->as_array()->at(0).find("unlimited")->as_bool(), true);
  }
}

TEST(NetcdfImport, RecordModeKeepsPackedRawAndSkipsPerRecord) {
  ti::netcdf_options o;
  o.split_by = ti::netcdf_split::record;
  captured c;
  o.conversion.on_warning = [&c](std::string_view w) { c.warnings.emplace_back(w); };
  const auto m = decode_all(ti::convert_netcdf_file(fixture("complex_types_unlimited.nc"), o));
  ASSERT_EQ(m.size(), 2u);
  // Once in the pre-check, then once per record.
  EXPECT_EQ(c.warnings.size(), 3u);
  EXPECT_EQ(*lookup_path(netcdf_of(m[1], 0), "_global.institution")->as_text(),
            *lookup_path(netcdf_of(m[0], 0), "_global.institution")->as_text());

  const auto r = decode_all(ti::convert_netcdf_file(fixture("record_multi_dtype.nc"), o));
  ASSERT_EQ(r.size(), 3u);
  nc_handle nc(fixture("record_multi_dtype.nc"));
  int time_dim = -1;
  NC_OK(nc_inq_dimid(nc.id(), "time", &time_dim));
  std::size_t compared = 0;
  for (std::size_t k = 0; k < 3; ++k) {
    ASSERT_EQ(r[k].num_objects(), 11u);
    for (std::size_t i = 0; i < 11; ++i, ++compared) {
      expect_matches_netcdf(nc.id(), name_of(r[k], i), r[k].object(i), k, time_dim);
    }
  }
  EXPECT_EQ(*lookup_path(netcdf_of(r[0], 1), "_attr_types.scale_hint")->as_text(), "short");
  EXPECT_EQ(compared, 33u);
}

TEST(NetcdfImport, EmptyUnlimitedGivesZeroMessages) {
  ti::netcdf_options o;
  o.split_by = ti::netcdf_split::record;
  EXPECT_TRUE(ti::convert_netcdf_file(fixture("empty_unlimited.nc"), o).empty());
}

TEST(NetcdfImport, RecordWithoutUnlimitedDimension) {
  ti::netcdf_options o;
  o.split_by = ti::netcdf_split::record;
  const std::string path = fixture("simple_2d.nc");
  const auto e = expect_conversion_error([&] { (void)ti::convert_netcdf_file(path, o); });
  EXPECT_EQ(std::string(e.what()),
            "--split-by=record requires an unlimited dimension, none found in " + path);
}

// ---- spec 05 §4.1 scope and issue 9 nested groups ----------------------------

TEST(NetcdfImport, NestedGroupsConverted) {
  captured c;
  const auto m = decode_all(ti::convert_netcdf_file(fixture("nc4_groups.nc"), options_capturing(c)));
  EXPECT_TRUE(c.warnings.empty());
  ASSERT_EQ(m[0].num_objects(), 2u);
  EXPECT_EQ(name_of(m[0], 0), "root_var");
  EXPECT_EQ(name_of(m[0], 1), "forecast.predicted");
  EXPECT_EQ(texts(netcdf_of(m[0], 0).find("_dims")), (std::vector<std::string>{"n"}));
  EXPECT_EQ(texts(netcdf_of(m[0], 1).find("_dims")), (std::vector<std::string>{"forecast.n"}));
  const value* reg = lookup_path(netcdf_of(m[0], 1), "_file.dims");
  ASSERT_EQ(reg->size(), 2u);
  EXPECT_EQ(*reg->as_array()->at(0).find("name")->as_text(), "n");
  EXPECT_EQ(*reg->as_array()->at(1).find("name")->as_text(), "forecast.n");
  nc_handle nc(fixture("nc4_groups.nc"));
  expect_matches_netcdf(nc.id(), "forecast.predicted", m[0].object(1));
}

TEST(NetcdfImport, RootGroupOnlyWithWarning) {
  captured c;
  ti::netcdf_options o = options_capturing(c);
  o.nested_groups = false;
  const std::string path = fixture("nc4_groups.nc");
  const auto m = decode_all(ti::convert_netcdf_file(path, o));
  ASSERT_EQ(m[0].num_objects(), 1u);
  EXPECT_EQ(name_of(m[0], 0), "root_var");
  EXPECT_EQ(m[0].object(0).dtype_string(), "float64");
  EXPECT_EQ(m[0].object(0).shape(), (std::vector<std::uint64_t>{5}));
  EXPECT_EQ(lookup_path(netcdf_of(m[0], 0), "_file.dims")->size(), 1u);
  EXPECT_EQ(c.warnings,
            (std::vector<std::string>{path + ": sub-groups found; only root-group variables are converted"}));
}

// A NetCDF-4 file with an unlimited dimension, nested groups, a parent
// dimension used from a sub-group and typed attributes, built here.
void write_custom_file(const fs::path& path) {
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

TEST(NetcdfImport, CustomNestedFile) {
  temp_dir dir;
  const fs::path in = dir.path() / "custom.nc";
  ASSERT_NO_FATAL_FAILURE(write_custom_file(in));
  const auto m = decode_all(ti::convert_netcdf_file(in));
  ASSERT_EQ(m[0].num_objects(), 3u);
  EXPECT_EQ(name_of(m[0], 2), "obs.deep.w");
  EXPECT_EQ(texts(netcdf_of(m[0], 2).find("_dims")), (std::vector<std::string>{"x", "obs.k"}));
  const value* reg = lookup_path(netcdf_of(m[0], 0), "_file.dims");
  ASSERT_EQ(reg->size(), 3u);
  EXPECT_EQ(*reg->as_array()->at(2).find("name")->as_text(), "obs.k");
  const value& nc = netcdf_of(m[0], 1);
  EXPECT_EQ(*lookup_path(nc, "_attr_types.ubig")->as_text(), "uint64");
  EXPECT_EQ(lookup_path(nc, "ubig")->as_uint64(), 18000000000000000000ULL);
  EXPECT_EQ(lookup_path(nc, "big")->as_int64(), -9000000000LL);
  EXPECT_EQ(texts(lookup_path(nc, "labels")), (std::vector<std::string>{"alpha", "beta"}));
  EXPECT_EQ(lookup_path(nc, "scale_hint")->as_double(), 1.5);
  EXPECT_TRUE(lookup_path(nc, "scale_hint")->is_float());
  EXPECT_EQ(lookup_path(nc, "_FillValue")->as_int64(), -1);
  EXPECT_EQ(*lookup_path(nc, "_attr_types._FillValue")->as_text(), "int");
  nc_handle h(in.string());
  for (std::size_t i = 0; i < 3; ++i) expect_matches_netcdf(h.id(), name_of(m[0], i), m[0].object(i));
}

// ---- spec 05 §4.7 errors -----------------------------------------------------

TEST(NetcdfImport, EmptyFileHasNoVariables) {
  const auto e = expect_conversion_error([] { (void)ti::convert_netcdf_file(fixture("empty_file.nc")); });
  EXPECT_EQ(e.kind(), ti::conversion_failure::no_data);
  EXPECT_EQ(std::string(e.what()), "no variables found in input");
}

TEST(NetcdfImport, MissingPathIsIoError) {
  EXPECT_THROW((void)ti::convert_netcdf_file("/nonexistent/dir/none.nc"), tensogram::io_error);
}

TEST(NetcdfImport, CorruptFilesAreConversionErrors) {
  temp_dir dir;
  auto read_bytes = [](const std::string& p) {
    std::ifstream f(p, std::ios::binary);
    return std::vector<char>((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  };
  auto write_bytes = [](const fs::path& p, const std::vector<char>& b) {
    std::ofstream f(p, std::ios::binary);
    f.write(b.data(), static_cast<std::streamsize>(b.size()));
  };
  std::vector<char> cf = read_bytes(fixture("cf_temperature.nc"));
  ASSERT_GT(cf.size(), 1000u);
  cf.resize(cf.size() / 2);
  write_bytes(dir.path() / "truncated.nc", cf);
  const auto e1 =
      expect_conversion_error([&] { (void)ti::convert_netcdf_file(dir.path() / "truncated.nc"); });
  EXPECT_EQ(std::string(e1.what()).rfind("netcdf error: ", 0) == 0 ||
                std::string(e1.what()).rfind("invalid netcdf data: ", 0) == 0,
            true)
      << e1.what();
  std::printf("[ info ] truncated file: %s\n", e1.what());

  std::vector<char> classic = read_bytes(fixture("nc3_classic.nc"));
  ASSERT_GT(classic.size(), 8u);
  for (std::size_t i = 0; i < 4; ++i) classic[i] = static_cast<char>(~classic[i]);
  write_bytes(dir.path() / "flipped.nc", classic);
  const auto e2 = expect_conversion_error([&] { (void)ti::convert_netcdf_file(dir.path() / "flipped.nc"); });
  EXPECT_EQ(e2.kind(), ti::conversion_failure::library);
  EXPECT_EQ(std::string(e2.what()).rfind("netcdf error: ", 0), 0u) << e2.what();

  // Bytes flipped inside the header's dimension list instead of the magic.
  classic = read_bytes(fixture("nc3_classic.nc"));
  for (std::size_t i = 8; i < 24 && i < classic.size(); ++i) classic[i] = static_cast<char>(~classic[i]);
  write_bytes(dir.path() / "flipped_header.nc", classic);
  const auto e3 =
      expect_conversion_error([&] { (void)ti::convert_netcdf_file(dir.path() / "flipped_header.nc"); });
  EXPECT_FALSE(std::string(e3.what()).empty());
}

// ---- spec 05 §1.1 pipelines ---------------------------------------------------

TEST(NetcdfImport, Pipelines) {
  ti::netcdf_options o;
  o.conversion.pipeline.compression = "zstd";
  auto m = decode_all(ti::convert_netcdf_file(fixture("cf_temperature.nc"), o));
  nc_handle nc(fixture("cf_temperature.nc"));
  for (std::size_t i = 0; i < m[0].num_objects(); ++i) {
    EXPECT_EQ(m[0].object(i).compression(), "zstd");
    EXPECT_EQ(m[0].object(i).descriptor().params.find("zstd_level")->as_int64(), 3);
    expect_matches_netcdf(nc.id(), name_of(m[0], i), m[0].object(i));
  }
  o.conversion.pipeline.compression_level = 9;
  o.conversion.pipeline.filter = "shuffle";
  m = decode_all(ti::convert_netcdf_file(fixture("cf_temperature.nc"), o));
  EXPECT_EQ(m[0].object(0).descriptor().params.find("zstd_level")->as_int64(), 9);
  EXPECT_EQ(m[0].object(0).filter(), "shuffle");
  EXPECT_EQ(m[0].object(0).descriptor().params.find("shuffle_element_size")->as_uint64(), 4u);  // float32
  EXPECT_EQ(m[0].object(3).descriptor().params.find("shuffle_element_size")->as_uint64(), 8u);  // unpacked
  for (std::size_t i = 0; i < m[0].num_objects(); ++i)
    expect_matches_netcdf(nc.id(), name_of(m[0], i), m[0].object(i));

  // szip on raw 64-bit samples is refused by the encoder (spec 05 §1.1, §4.7).
  o.conversion.pipeline = {};
  o.conversion.pipeline.compression = "szip";
  const auto szip =
      expect_conversion_error([&] { (void)ti::convert_netcdf_file(fixture("simple_2d.nc"), o); });
  EXPECT_EQ(szip.kind(), ti::conversion_failure::encode);
  EXPECT_EQ(std::string(szip.what()).rfind("encode error: ", 0), 0u) << szip.what();
  o.conversion.pipeline.filter = "shuffle";  // the spec's remedy
  const auto shuffled = decode_all(ti::convert_netcdf_file(fixture("simple_2d.nc"), o));
  nc_handle simple(fixture("simple_2d.nc"));
  expect_matches_netcdf(simple.id(), "data", shuffled[0].object(0));

  o.conversion.pipeline = {};
  o.conversion.pipeline.compression = "brotli";
  const auto e =
      expect_conversion_error([&] { (void)ti::convert_netcdf_file(fixture("cf_temperature.nc"), o); });
  EXPECT_EQ(e.kind(), ti::conversion_failure::usage);
}

// ---- spec 05 §5 NetCDF → Tensogram → NetCDF ----------------------------------

struct attribute_dump {
  nc_type type = NC_NAT;
  std::size_t length = 0;
  std::vector<unsigned char> bytes;  // numeric or char contents
  std::vector<std::string> strings;  // NC_STRING contents
  friend bool operator==(const attribute_dump&, const attribute_dump&) = default;
};

std::vector<std::pair<std::string, attribute_dump>> dump_attributes(int g, int v) {
  std::vector<std::pair<std::string, attribute_dump>> out;
  int n = 0;
  if (v == NC_GLOBAL) {
    nc_inq_natts(g, &n);
  } else {
    nc_inq_varnatts(g, v, &n);
  }
  for (int i = 0; i < n; ++i) {
    char name[NC_MAX_NAME + 1] = {};
    nc_inq_attname(g, v, i, name);
    attribute_dump a;
    nc_inq_att(g, v, name, &a.type, &a.length);
    if (a.type == NC_STRING) {
      std::vector<char*> p(a.length);
      nc_get_att_string(g, v, name, p.data());
      for (char* s : p) a.strings.emplace_back(s);
      nc_free_string(a.length, p.data());
    } else {
      std::size_t size = 0;
      nc_inq_type(g, a.type, nullptr, &size);
      a.bytes.resize(size * a.length);
      nc_get_att(g, v, name, a.bytes.data());
    }
    out.emplace_back(name, std::move(a));
  }
  std::sort(out.begin(), out.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
  return out;
}

// Checks a file written by to_netcdf against the messages it came from:
// dimensions (union of the registries), variables (names, dtypes, values
// with NaN), attributes (those of `netcdf` minus the structural keys).
void expect_written_file_matches(const fs::path& out, const std::vector<tensogram::message>& messages) {
  nc_handle nc(out.string());
  ASSERT_TRUE(nc.ok());
  int format = 0;
  NC_OK(nc_inq_format(nc.id(), &format));
  EXPECT_EQ(format, NC_FORMAT_NETCDF4);
  // The union of every message's registry, first occurrence kept.
  std::vector<value> registry;
  std::vector<std::string> seen;
  for (const auto& m : messages) {
    const value* reg = lookup_path(netcdf_of(m, 0), "_file.dims");
    ASSERT_NE(reg, nullptr);
    for (const value& d : *reg->as_array()) {
      if (std::find(seen.begin(), seen.end(), *d.find("name")->as_text()) != seen.end()) continue;
      seen.push_back(*d.find("name")->as_text());
      registry.push_back(d);
    }
  }
  int ndims = 0;
  NC_OK(nc_inq_ndims(nc.id(), &ndims));
  EXPECT_EQ(static_cast<std::size_t>(ndims), registry.size());
  int nunlim = 0;
  std::array<int, 16> unlim{};
  NC_OK(nc_inq_unlimdims(nc.id(), &nunlim, unlim.data()));
  for (std::size_t i = 0; i < registry.size(); ++i) {
    const value& d = registry[i];
    int id = -1;
    NC_OK(nc_inq_dimid(nc.id(), d.find("name")->as_text()->c_str(), &id));
    EXPECT_EQ(id, static_cast<int>(i));  // created in registry order
    std::size_t len = 0;
    NC_OK(nc_inq_dimlen(nc.id(), id, &len));
    EXPECT_EQ(len, *d.find("len")->as_uint64()) << *d.find("name")->as_text();
    const bool is_unlimited = std::find(unlim.begin(), unlim.begin() + nunlim, id) != unlim.begin() + nunlim;
    EXPECT_EQ(is_unlimited, *d.find("unlimited")->as_bool()) << *d.find("name")->as_text();
  }
  std::size_t objects = 0;
  for (const auto& m : messages) {
    for (std::size_t i = 0; i < m.num_objects(); ++i, ++objects) {
      const std::string name = name_of(m, i);
      SCOPED_TRACE(name);
      int varid = -1;
      NC_OK(nc_inq_varid(nc.id(), name.c_str(), &varid));
      std::array<int, NC_MAX_VAR_DIMS> dimids{};
      int vnd = 0;
      NC_OK(nc_inq_var(nc.id(), varid, nullptr, nullptr, &vnd, dimids.data(), nullptr));
      std::vector<std::string> dim_names;
      for (int a = 0; a < vnd; ++a) {
        char dn[NC_MAX_NAME + 1] = {};
        nc_inq_dimname(nc.id(), dimids[static_cast<std::size_t>(a)], dn);
        dim_names.emplace_back(dn);
      }
      EXPECT_EQ(dim_names, texts(netcdf_of(m, i).find("_dims")));
      // Types and values: netCDF-C's reading equals the decoded object.
      expect_matches_netcdf(nc.id(), name, m.object(i));
      // Attributes: exactly the non-structural keys of `netcdf`.
      std::vector<std::string> expected;
      for (const std::string& k : keys(netcdf_of(m, i))) {
        if (k.empty() || k[0] != '_') {
          if (k != "record_index") expected.push_back(k);
        } else if (k != "_dims" && k != "_file" && k != "_global" && k != "_attr_types" &&
                   k != "_global_types") {
          expected.push_back(k);
        }
      }
      std::vector<std::string> got;
      for (const auto& [k, a] : dump_attributes(nc.id(), varid)) got.push_back(k);
      EXPECT_EQ(got, expected);
    }
  }
  int nvars = 0;
  NC_OK(nc_inq_nvars(nc.id(), &nvars));
  EXPECT_EQ(static_cast<std::size_t>(nvars), objects);
}

TEST(NetcdfExport, RoundTripFileModeCfTemperature) {
  temp_dir dir;
  const auto raw = ti::convert_netcdf_file(fixture("cf_temperature.nc"));
  const fs::path out = dir.path() / "out.nc";
  ti::to_netcdf(raw, out);
  const auto m = decode_all(raw);
  expect_written_file_matches(out, m);
  // Original attribute types survive (text as char, globals too), packing
  // attributes are gone and temperature is now double.
  nc_handle orig(fixture("cf_temperature.nc"));
  nc_handle back(out.string());
  EXPECT_EQ(dump_attributes(orig.id(), NC_GLOBAL), dump_attributes(back.id(), NC_GLOBAL));
  for (const char* v : {"lat", "lon", "time"}) {
    int a = -1, b = -1;
    NC_OK(nc_inq_varid(orig.id(), v, &a));
    NC_OK(nc_inq_varid(back.id(), v, &b));
    EXPECT_EQ(dump_attributes(orig.id(), a), dump_attributes(back.id(), b)) << v;
    nc_type ta = NC_NAT, tb = NC_NAT;
    nc_inq_vartype(orig.id(), a, &ta);
    nc_inq_vartype(back.id(), b, &tb);
    EXPECT_EQ(ta, tb);
  }
  int tv = -1;
  NC_OK(nc_inq_varid(back.id(), "temperature", &tv));
  nc_type tt = NC_NAT;
  nc_inq_vartype(back.id(), tv, &tt);
  EXPECT_EQ(tt, NC_DOUBLE);
  EXPECT_FALSE(has_att(back.id(), tv, "scale_factor"));
  EXPECT_FALSE(has_att(back.id(), tv, "_FillValue"));
  EXPECT_EQ(dir.entries(), (std::vector<std::string>{"out.nc"}));  // no temp file left

  // A second conversion of the written file gives the same values.
  const auto again = decode_all(ti::convert_netcdf_file(out));
  ASSERT_EQ(again[0].num_objects(), 4u);
  for (std::size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(again[0].object(i).dtype_string(), m[0].object(i).dtype_string());
    EXPECT_TRUE(std::equal(again[0].object(i).bytes().begin(), again[0].object(i).bytes().end(),
                           m[0].object(i).bytes().begin(), m[0].object(i).bytes().end()));
  }
}

TEST(NetcdfExport, RoundTripVariableModeMultiDtypeAndNan) {
  temp_dir dir;
  ti::netcdf_options o;
  o.split_by = ti::netcdf_split::variable;
  for (const char* f : {"multi_dtype.nc", "attr_type_variants.nc", "unlimited_time.nc", "empty_unlimited.nc",
                        "record_multi_dtype.nc", "nc4_groups.nc"}) {
    SCOPED_TRACE(f);
    const auto raw = ti::convert_netcdf_file(fixture(f), o);
    const fs::path out = dir.path() / (std::string("rt_") + f);
    ti::to_netcdf(raw, out);
    const auto m = decode_all(raw);
    expect_written_file_matches(out, m);
  }
  // NaN where the fill value was.
  nc_handle back((dir.path() / "rt_attr_type_variants.nc").string());
  int v = -1;
  NC_OK(nc_inq_varid(back.id(), "with_missing", &v));
  std::array<double, 4> values{};
  NC_OK(nc_get_var_double(back.id(), v, values.data()));
  EXPECT_TRUE(std::isnan(values[1]));
  EXPECT_TRUE(std::isnan(values[3]));
  EXPECT_EQ(values[2], 10.0);
  // The scalar stays 0-d, original types come back.
  nc_handle md((dir.path() / "rt_multi_dtype.nc").string());
  int pi = -1, nd = -1;
  NC_OK(nc_inq_varid(md.id(), "pi", &pi));
  NC_OK(nc_inq_varndims(md.id(), pi, &nd));
  EXPECT_EQ(nd, 0);
}

TEST(NetcdfExport, RoundTripOwnFileWithUnlimitedDimension) {
  temp_dir dir;
  const fs::path in = dir.path() / "own.nc";
  ASSERT_NO_FATAL_FAILURE(write_custom_file(in));
  for (const auto split : {ti::netcdf_split::file, ti::netcdf_split::variable}) {
    ti::netcdf_options o;
    o.split_by = split;
    const auto raw = ti::convert_netcdf_file(in, o);
    const fs::path out = dir.path() / "own_back.nc";
    ti::to_netcdf(raw, out);
    expect_written_file_matches(out, decode_all(raw));
    nc_handle a(in.string());
    nc_handle b(out.string());
    // Unlimited time with its 3 records, typed attributes exactly as written.
    int unlim = -1;
    NC_OK(nc_inq_unlimdim(b.id(), &unlim));
    char name[NC_MAX_NAME + 1] = {};
    std::size_t len = 0;
    NC_OK(nc_inq_dim(b.id(), unlim, name, &len));
    EXPECT_EQ(std::string(name), "time");
    EXPECT_EQ(len, 3u);
    int va = -1, vb = -1;
    NC_OK(nc_inq_varid(a.id(), "v", &va));
    NC_OK(nc_inq_varid(b.id(), "v", &vb));
    EXPECT_EQ(dump_attributes(a.id(), va), dump_attributes(b.id(), vb));
    EXPECT_EQ(dump_attributes(a.id(), NC_GLOBAL), dump_attributes(b.id(), NC_GLOBAL));
    // The nested variable comes back flat under its dotted name.
    int w = -1;
    NC_OK(nc_inq_varid(b.id(), "obs.deep.w", &w));
    std::array<unsigned short, 6> wv{};
    NC_OK(nc_get_var_ushort(b.id(), w, wv.data()));
    EXPECT_EQ(wv[3], 40000);
  }
}

std::vector<std::byte> message_without_file_registry() {
  tensogram::global_metadata meta;
  value nc = value::make_map();
  nc.set("_dims", value(tensogram::cbor::array{value("n")}));
  meta.base.push_back(value::make_map({{"name", value("x")}, {"netcdf", nc}}));
  const std::vector<double> data = {1, 2, 3};
  const std::vector<tensogram::object_input> objects = {
      {tensogram::data_object_descriptor::contiguous(tensogram::dtype::float64, {3}),
       std::as_bytes(std::span<const double>(data))}};
  return tensogram::encode(meta, objects);
}

TEST(NetcdfExport, UnsupportedDtypeFails) {
  tensogram::global_metadata meta;
  value nc = value::make_map();
  nc.set("_dims", value(tensogram::cbor::array{value("n")}));
  nc.set("_file",
         value::make_map(
             {{"dims", value(tensogram::cbor::array{value::make_map(
                           {{"name", value("n")}, {"len", value(2)}, {"unlimited", value(false)}})})}}));
  meta.base.push_back(value::make_map({{"name", value("half")}, {"netcdf", nc}}));
  const std::array<std::uint16_t, 2> data = {0x3C00, 0x4000};  // 1.0, 2.0 as float16
  const std::vector<tensogram::object_input> objects = {
      {tensogram::data_object_descriptor::contiguous(tensogram::dtype::float16, {2}),
       std::as_bytes(std::span<const std::uint16_t>(data))}};
  const std::vector<std::vector<std::byte>> messages = {tensogram::encode(meta, objects)};
  temp_dir dir;
  const auto e = expect_conversion_error([&] { ti::to_netcdf(messages, dir.path() / "half.nc"); });
  EXPECT_NE(std::string(e.what()).find("unsupported dtype float16 for variable 'half'"), std::string::npos)
      << e.what();
  EXPECT_TRUE(dir.entries().empty());
}

TEST(NetcdfExport, FailureLeavesTargetUntouched) {
  temp_dir dir;
  const fs::path target = dir.path() / "existing.nc";
  {
    std::ofstream f(target);
    f << "keep me";
  }
  auto content = [&] {
    std::ifstream f(target);
    return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  };
  // A message lacking `_file`.
  const std::vector<std::vector<std::byte>> bad = {message_without_file_registry()};
  const auto e = expect_conversion_error([&] { ti::to_netcdf(bad, target); });
  EXPECT_NE(std::string(e.what()).find("convert-netcdf"), std::string::npos) << e.what();
  EXPECT_EQ(content(), "keep me");
  EXPECT_EQ(dir.entries(), (std::vector<std::string>{"existing.nc"}));

  // A failure after the temporary file exists: a variable whose dimension
  // is not in the registry of the other message (libnetcdf-level failure).
  auto good = ti::convert_netcdf_file(fixture("cf_temperature.nc"));
  ti::netcdf_options o;
  auto other = ti::convert_netcdf_file(fixture("simple_2d.nc"), o);  // variable data(y=5, x=4)
  std::vector<std::vector<std::byte>> mixed = {good[0], other[0]};
  // Both registries are unioned, so this one succeeds...
  const fs::path ok_target = dir.path() / "mixed.nc";
  ti::to_netcdf(mixed, ok_target);
  expect_written_file_matches(ok_target, decode_all(mixed));
  // ...while a conflicting length of the same dimension name fails.
  auto conflict = ti::convert_netcdf_file(fixture("simple_2d.nc"));        // y=5, x=4: same as nc3_classic
  auto multi_var = ti::convert_netcdf_file(fixture("multi_var.nc"));       // y=5, x=4, name_len=8
  auto unlimited = ti::convert_netcdf_file(fixture("unlimited_time.nc"));  // y=4, x=3
  std::vector<std::vector<std::byte>> conflicting = {conflict[0], unlimited[0]};
  const auto e2 = expect_conversion_error([&] { ti::to_netcdf(conflicting, target); });
  EXPECT_NE(std::string(e2.what()).find("dimension 'y'"), std::string::npos) << e2.what();
  EXPECT_EQ(content(), "keep me");

  // Duplicate variable names (the same file twice) fail inside libnetcdf,
  // after the temporary sibling was created: it is removed.
  std::vector<std::vector<std::byte>> twice = {multi_var[0], multi_var[0]};
  const auto e3 = expect_conversion_error([&] { ti::to_netcdf(twice, target); });
  EXPECT_EQ(e3.kind(), ti::conversion_failure::library) << e3.what();
  EXPECT_EQ(content(), "keep me");
  EXPECT_EQ(dir.entries(), (std::vector<std::string>{"existing.nc", "mixed.nc"}));

  const std::vector<std::vector<std::byte>> none;
  const auto e4 = expect_conversion_error([&] { ti::to_netcdf(none, target); });
  EXPECT_EQ(std::string(e4.what()), "invalid netcdf data: to-netcdf: no messages to write");
}

}  // namespace
