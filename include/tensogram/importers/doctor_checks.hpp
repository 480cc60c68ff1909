// The converter rows of `tensogram doctor` (spec 04 §A.5): versions of the
// libraries the importers use and the sanity conversions of
// fixtures/doctor/README.md.
//
// The reference compiles its three sanity files into the binary. This
// project keeps fixtures out of the repository, so the checks build files of
// the same content (the README's table) with ecCodes and netCDF-C at run
// time and convert those.
#pragma once

#include <string>
#include <vector>

#include "tensogram/doctor.hpp"

namespace tensogram::importers {

/// ecCodes' version ("2.28.0").
[[nodiscard]] std::string grib_library_version();
/// netCDF-C's version ("4.9.0").
[[nodiscard]] std::string netcdf_library_version();

/// The sanity GRIB of fixtures/doctor (4 × 4 regular_ll 2 m temperature,
/// grid_simple 16 bits, values 273.15 … 288.15), built from ecCodes' GRIB2
/// sample.
[[nodiscard]] std::vector<std::byte> make_sanity_grib();
/// The sanity NetCDF file of fixtures/doctor (lat, lon, temperature [2, 2]),
/// NetCDF-3 classic or NetCDF-4/HDF5, written to `path`.
void make_sanity_netcdf(const std::string& path, bool hdf5);

/// The two converter feature rows (`grib`, `netcdf`) and the three converter
/// self-test rows, appended to `report` in the reference's order. Never
/// throws: a failing check becomes a `failed` row.
void add_converter_rows(doctor_report& report);

}  // namespace tensogram::importers
