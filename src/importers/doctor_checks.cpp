#include "tensogram/importers/doctor_checks.hpp"

#include <eccodes.h>
#include <netcdf.h>
#include <unistd.h>

#include <array>
#include <filesystem>
#include <memory>
#include <string>

#include "library_lock.hpp"
#include "tensogram/importers/grib.hpp"
#include "tensogram/importers/netcdf.hpp"
#include "tensogram/message/decode.hpp"

namespace tensogram::importers {

namespace {

struct handle_delete {
  void operator()(codes_handle* h) const noexcept { codes_handle_delete(h); }
};
using grib_handle_ptr = std::unique_ptr<codes_handle, handle_delete>;

void check_codes(int rc, const char* what) {
  if (rc != 0)
    throw conversion_error(conversion_failure::library,
                           std::string("ecCodes error: ") + what + ": " + codes_get_error_message(rc));
}

void check_nc(int rc, const char* what) {
  if (rc != NC_NOERR)
    throw conversion_error(conversion_failure::library,
                           std::string("netcdf error: ") + what + ": " + nc_strerror(rc));
}

// Closes a NetCDF id on every path out of make_sanity_netcdf.
class nc_closer {
 public:
  explicit nc_closer(int id) : id_(id) {}
  nc_closer(const nc_closer&) = delete;
  nc_closer& operator=(const nc_closer&) = delete;
  ~nc_closer() {
    if (id_ >= 0) nc_close(id_);
  }
  void close() {
    const int id = id_;
    id_ = -1;
    check_nc(nc_close(id), "close");
  }

 private:
  int id_;
};

void put_text(int nc, int var, const char* name, const std::string& text) {
  check_nc(nc_put_att_text(nc, var, name, text.size(), text.data()), name);
}

// One message of the object's float64 values, shape [4, 4] (README).
void check_grib_conversion() {
  const std::vector<std::byte> grib = make_sanity_grib();
  grib_options o;
  o.grouping = grib_grouping::one_to_one;
  const auto messages = convert_grib_buffer(grib, o);
  if (messages.size() != 1)
    throw std::runtime_error("expected 1 message, got " + std::to_string(messages.size()));
  const auto [meta, descriptors] = decode_descriptors(messages[0]);
  if (descriptors.size() != 1) throw std::runtime_error("expected 1 object");
  const data_object_descriptor& d = descriptors[0];
  if (d.dtype != dtype::float64 || d.shape != std::vector<std::uint64_t>{4, 4}) {
    throw std::runtime_error("expected a float64 [4, 4] object");
  }
}

// Some object of shape [2, 2] and dtype float32 (README).
void check_netcdf_conversion(bool hdf5) {
  const auto dir = std::filesystem::temp_directory_path();
  const auto path =
      dir / ("tensogram-doctor-" + std::to_string(::getpid()) + (hdf5 ? "-hdf5.nc" : "-classic.nc"));
  struct remover {
    std::filesystem::path p;
    ~remover() {
      std::error_code ec;
      std::filesystem::remove(p, ec);
    }
  } cleanup{path};
  make_sanity_netcdf(path.string(), hdf5);
  const auto messages = convert_netcdf_file(path);
  for (const auto& m : messages) {
    for (const data_object_descriptor& d : decode_descriptors(m).second) {
      if (d.dtype == dtype::float32 && d.shape == std::vector<std::uint64_t>{2, 2}) return;
    }
  }
  throw std::runtime_error("no float32 [2, 2] object in the conversion");
}

template <typename Check>
self_test_result run_check(std::string label, Check check) {
  try {
    check();
    return self_test_result::ok(std::move(label));
  } catch (const std::exception& e) {
    return self_test_result::failed(std::move(label), e.what());
  }
}

}  // namespace

std::string grib_library_version() {
  const long v = codes_get_api_version();
  return std::to_string(v / 10000) + "." + std::to_string(v / 100 % 100) + "." + std::to_string(v % 100);
}

std::string netcdf_library_version() {
  const std::string v = nc_inq_libvers();
  return v.substr(0, v.find(' '));
}

std::vector<std::byte> make_sanity_grib() {
  const std::lock_guard lock(detail::eccodes_library_mutex());
  grib_handle_ptr h(codes_grib_handle_new_from_samples(nullptr, "regular_ll_sfc_grib2"));
  if (!h)
    throw conversion_error(conversion_failure::library,
                           "ecCodes error: GRIB2 sample regular_ll_sfc_grib2 not found");
  const std::array<std::pair<const char*, long>, 13> longs = {{
      {"centre", 98},  // ecmf
      {"dataDate", 20260101},
      {"dataTime", 0},
      {"stepRange", 0},
      {"paramId", 167},
      {"Ni", 4},
      {"Nj", 4},
      {"iScansNegatively", 0},
      {"jScansPositively", 0},
      {"bitsPerValue", 16},
      {"typeOfFirstFixedSurface", 103},
      {"scaledValueOfFirstFixedSurface", 2},
      {"scaleFactorOfFirstFixedSurface", 0},
  }};
  for (const auto& [key, value] : longs) check_codes(codes_set_long(h.get(), key, value), key);
  const std::array<std::pair<const char*, double>, 6> doubles = {{
      {"latitudeOfFirstGridPointInDegrees", 0.0},
      {"longitudeOfFirstGridPointInDegrees", 0.0},
      {"latitudeOfLastGridPointInDegrees", 3.0},
      {"longitudeOfLastGridPointInDegrees", 3.0},
      {"iDirectionIncrementInDegrees", 1.0},
      {"jDirectionIncrementInDegrees", 1.0},
  }};
  for (const auto& [key, value] : doubles) check_codes(codes_set_double(h.get(), key, value), key);
  std::array<double, 16> values{};
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = 273.15 + static_cast<double>(i);
  check_codes(codes_set_double_array(h.get(), "values", values.data(), values.size()), "values");
  const void* message = nullptr;
  std::size_t size = 0;
  check_codes(codes_get_message(h.get(), &message, &size), "get message");
  const auto* p = static_cast<const std::byte*>(message);
  return {p, p + size};
}

void make_sanity_netcdf(const std::string& path, bool hdf5) {
  const std::lock_guard lock(detail::netcdf_library_mutex());
  int nc = -1;
  check_nc(nc_create(path.c_str(), NC_CLOBBER | (hdf5 ? NC_NETCDF4 : 0), &nc), "create");
  nc_closer closer(nc);
  int lat_dim = 0, lon_dim = 0, lat = 0, lon = 0, t = 0;
  check_nc(nc_def_dim(nc, "lat", 2, &lat_dim), "define lat");
  check_nc(nc_def_dim(nc, "lon", 2, &lon_dim), "define lon");
  check_nc(nc_def_var(nc, "lat", NC_FLOAT, 1, &lat_dim, &lat), "define lat");
  check_nc(nc_def_var(nc, "lon", NC_FLOAT, 1, &lon_dim, &lon), "define lon");
  const std::array<int, 2> dims = {lat_dim, lon_dim};
  check_nc(nc_def_var(nc, "temperature", NC_FLOAT, 2, dims.data(), &t), "define temperature");
  put_text(nc, lat, "units", "degrees_north");
  put_text(nc, lat, "standard_name", "latitude");
  put_text(nc, lon, "units", "degrees_east");
  put_text(nc, lon, "standard_name", "longitude");
  put_text(nc, t, "units", "K");
  put_text(nc, t, "standard_name", "air_temperature");
  put_text(nc, t, "long_name", "2-metre temperature");
  put_text(nc, NC_GLOBAL, "Conventions", "CF-1.8");
  put_text(nc, NC_GLOBAL, "history", "Created by tensogram doctor");
  check_nc(nc_enddef(nc), "end define");
  const std::array<float, 2> axis = {0.0F, 1.0F};
  const std::array<float, 4> temperature = {273.15F, 274.15F, 275.15F, 276.15F};
  check_nc(nc_put_var_float(nc, lat, axis.data()), "write lat");
  check_nc(nc_put_var_float(nc, lon, axis.data()), "write lon");
  check_nc(nc_put_var_float(nc, t, temperature.data()), "write temperature");
  closer.close();
}

void add_converter_rows(doctor_report& report) {
  report.features.push_back(feature_status::make_on("grib", feature_kind::converter, "libeccodes",
                                                    feature_linkage::ffi, grib_library_version()));
  report.features.push_back(feature_status::make_on("netcdf", feature_kind::converter, "libnetcdf",
                                                    feature_linkage::ffi, netcdf_library_version()));
  report.self_test.push_back(run_check("convert        grib    (sanity.grib2)", check_grib_conversion));
  report.self_test.push_back(
      run_check("convert        netcdf3 (sanity-classic.nc)", [] { check_netcdf_conversion(false); }));
  report.self_test.push_back(
      run_check("convert        netcdf4 (sanity-hdf5.nc)", [] { check_netcdf_conversion(true); }));
}

}  // namespace tensogram::importers
