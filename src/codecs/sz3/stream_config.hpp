// The SZ3 configuration record (docs/sz3-format.md §2): what SZ3 writes
// after the algorithm output, and what every algorithm reads its settings
// from. Field names follow SZ3's so the format description maps onto them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "byte_io.hpp"

namespace tensogram::codecs::sz3 {

enum class algorithm : std::uint8_t {
  lorenzo_regression = 0,  // ALGO_LORENZO_REG
  interp_lorenzo = 1,      // ALGO_INTERP_LORENZO (only ever requested; never recorded)
  interp = 2,              // ALGO_INTERP
  no_prediction = 3,       // ALGO_NOPRED
  lossless = 4,            // ALGO_LOSSLESS
  bio_md = 5,              // ALGO_BIOMD
  bio_md_xtc = 6,          // ALGO_BIOMDXTC
};

enum class error_bound_mode : std::uint8_t {
  abs = 0,
  rel = 1,
  psnr = 2,
  l2norm = 3,
  abs_and_rel = 4,
  abs_or_rel = 5
};

enum class interpolation_kind : std::uint8_t { linear = 0, cubic = 1 };

/// SZ_FLOAT / SZ_DOUBLE; the other SZ3 type codes are integer types.
enum class data_type : std::uint8_t { float32 = 0, float64 = 1 };

struct stream_config {
  // --- recorded in the configuration record ---
  std::uint8_t N = 1;                // dimensions (size-1 dimensions dropped)
  std::vector<std::size_t> dims{1};  // slowest first; dims.back() is the fastest
  std::uint64_t num = 1;             // product of dims
  algorithm cmprAlgo = algorithm::interp_lorenzo;
  error_bound_mode errorBoundMode = error_bound_mode::abs;
  double absErrorBound = 1e-3;
  double relErrorBound = 0;
  double psnrErrorBound = 0;
  double l2normErrorBound = 0;
  bool lorenzo = true;
  bool lorenzo2 = false;
  bool regression = true;
  bool regression2 = false;
  bool openmp = false;
  std::uint8_t dataType = 0;
  std::int32_t quantbinCnt = 65536;
  std::int32_t blockSize = 128;
  std::uint8_t predDim = 1;

  // --- not in the record: the interpolation decomposition saves these
  // itself (docs/sz3-format.md §5) ---
  interpolation_kind interpAlgo = interpolation_kind::cubic;
  std::uint8_t interpDirection = 0;
  std::int32_t interpAnchorStride = -1;  // < 0: SZ3's default per N (4096, 128, 32, 16)
  double interpAlpha = 1.25;
  double interpBeta = 2.0;

  /// SZ3's Config::setDims: drops size-1 dimensions (all-ones → {1}), and
  /// resets N, num, predDim and blockSize (128 / 16 / 6 for N = 1 / 2 / ≥3).
  void set_dims(std::span<const std::size_t> shape);
};

}  // namespace tensogram::codecs::sz3

namespace tensogram::codecs::sz3 {

/// Appends the record (its first byte is its own length).
void save_config(const stream_config& c, byte_writer& w);

/// Parses the record at the start of `record` (the bytes after the
/// algorithm output); validates N, the dimensions against num, the
/// algorithm and error-bound codes.
[[nodiscard]] stream_config load_config(std::span<const std::byte> record);

}  // namespace tensogram::codecs::sz3
