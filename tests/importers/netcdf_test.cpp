// NetCDF importer (spec 05 §4, §6; issue 9): every fixture against
// netCDF-C's own reading of the same file, metadata, split modes, nested
// groups, errors and pipelines. The exporter and round trips are in
// netcdf_export_test.cpp.
#include <gtest/gtest.h>
#include <netcdf.h>

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

#include "netcdf_support.hpp"

namespace {

using namespace tgtest::netcdf;
using tensogram::lookup_path;

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

}  // namespace
