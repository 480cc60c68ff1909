// ecCodes as a peer of simple_packing (+ szip): GRIB2 grid_simple and
// grid_ccsds packing of the same float64 field through libeccodes' API,
// encode and decode, timed like our rows (bench/codec_matrix.cpp). Built
// only when the importers (and so ecCodes) are part of the build.
#pragma once

#include <cstddef>
#include <span>
#include <string>

#include "bench_util.hpp"

namespace tensogram_bench {

struct eccodes_result {
  best_time encode;  // codes_set_double_array("values") + codes_get_message
  best_time decode;  // codes_handle_new_from_message + codes_get_double_array
  // The same decode into a reused, pre-faulted array: what a caller that
  // keeps its output buffer sees (information; 4 KiB first-touch faults of a
  // fresh array cost ~5 µs each on this VM).
  best_time decode_prefaulted;
  std::size_t encoded_bytes = 0;
  error_norms error;
  // grid_ccsds only: the libaec parameters ecCodes chose (else -1).
  long ccsds_flags = -1;
  long ccsds_block_size = -1;
  long ccsds_rsi = -1;
};

/// ecCodes' version string (ECCODES_VERSION_STR).
std::string eccodes_version();

/// Packs `field` (row-major on `g`, longitude fastest) as a GRIB2 message
/// from the regular_ll_sfc_grib2 sample with `packing` ("grid_simple",
/// "grid_ccsds") at `bits` per value, and decodes it into a fresh array.
/// The handle (grid, packing, bits) is prepared outside the timed part.
/// Throws std::runtime_error on any ecCodes error or a mismatch.
eccodes_result measure_eccodes(std::span<const double> field, grid g, const char* packing, int bits, int reps,
                               double budget_seconds);

}  // namespace tensogram_bench
