// NetCDF ⇄ Tensogram on netCDF-C (spec 05 §4, §5; issue 9).
#pragma once

#include <cstddef>
#include <filesystem>
#include <span>
#include <vector>

#include "tensogram/importers/conversion.hpp"

namespace tensogram::importers {

/// Spec 05 §4.5.
enum class netcdf_split { file, variable, record };

struct netcdf_options {
  conversion_options conversion;
  netcdf_split split_by = netcdf_split::file;
  /// `--cf`: lift the CF allow-list of attributes into base[i]["cf"].
  bool cf = false;
  /// Beyond the reference (issue 9): variables of nested groups are
  /// converted too, named by their dotted group path ("forecast.surface.t2m").
  /// false = the reference's root-group-only behaviour (with its warning).
  bool nested_groups = true;
};

/// Converts a NetCDF-3 classic or NetCDF-4/HDF5 file (spec 05 §4). NaN
/// acceptance is always on (fill values of packed variables become NaN).
/// Throws `conversion_error`, or `io_error` for a path that does not exist.
[[nodiscard]] std::vector<std::vector<std::byte>> convert_netcdf_file(const std::filesystem::path& path,
                                                                      const netcdf_options& options = {});

/// Writes one NetCDF-4 file from messages written by the NetCDF importer in
/// `file` or `variable` mode (spec 05 §5), atomically: a temporary sibling
/// renamed over `path` only on success.
void to_netcdf(std::span<const std::vector<std::byte>> messages, const std::filesystem::path& path);

}  // namespace tensogram::importers
