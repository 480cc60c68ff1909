// NetCDF exporter (spec 05 §5): NetCDF → Tensogram → NetCDF round trips
// checked against netCDF-C's reading of both files, unsupported dtypes, and
// a failed export that leaves its target untouched.
#include <gtest/gtest.h>
#include <netcdf.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "netcdf_support.hpp"

namespace {

using namespace tgtest::netcdf;
using tensogram::lookup_path;

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
