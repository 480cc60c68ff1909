// GRIB ⇄ Tensogram on ecCodes (spec 05 §2, §3; issue 9).
#pragma once

#include <cstddef>
#include <filesystem>
#include <span>
#include <vector>

#include "tensogram/importers/conversion.hpp"

namespace tensogram::importers {

/// Spec 05 §2.2.
enum class grib_grouping {
  merge_all,   ///< one Tensogram message per input, object i = GRIB message i
  one_to_one,  ///< one Tensogram message per GRIB message
};

struct grib_options {
  conversion_options conversion;
  grib_grouping grouping = grib_grouping::merge_all;
  /// `--all-keys`: also store the ecCodes namespaces under base[i]["grib"].
  bool preserve_all_keys = false;
};

/// Converts every GRIB message of a file (spec 05 §2). Values become float64
/// `[Nj, Ni]` (1-D for grids without usable Ni/Nj); points missing in a
/// bitmap become NaN recorded in the NaN mask (issue 9; the reference keeps
/// ecCodes' 9999). Throws `conversion_error`, or `io_error` when the file
/// cannot be read.
[[nodiscard]] std::vector<std::vector<std::byte>> convert_grib_file(const std::filesystem::path& path,
                                                                    const grib_options& options = {});
/// The same for GRIB messages held in memory.
[[nodiscard]] std::vector<std::vector<std::byte>> convert_grib_buffer(std::span<const std::byte> bytes,
                                                                      const grib_options& options = {});

/// Rebuilds GRIB from one Tensogram message written by the GRIB importer
/// (spec 05 §3): every object needs base[i]["grib_repro"] and float64 data.
/// Returns the concatenated GRIB messages of its objects. NaN values go back
/// to bitmap-missing points.
[[nodiscard]] std::vector<std::byte> to_grib(std::span<const std::byte> tensogram_message);

}  // namespace tensogram::importers
