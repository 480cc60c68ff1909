// What the GRIB and NetCDF importers share (spec 05 §1): the data pipeline
// options applied to every produced object, the encode options, the error
// type, and the hooks for warnings and progress.
//
// The importers live outside the core library (library `tensogram_importers`,
// linked with ecCodes and netCDF-C); they return complete encoded messages.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tensogram/core/error.hpp"
#include "tensogram/message/descriptor.hpp"
#include "tensogram/message/encode.hpp"
#include "tensogram/message/options.hpp"

namespace tensogram::importers {

/// The data pipeline of spec 05 §1.1, applied to every produced object.
struct pipeline_options {
  std::string encoding = "none";                  ///< "none" | "simple_packing" (float64 data only)
  std::optional<std::uint32_t> bits;              ///< simple_packing bits per value (default 16)
  std::string filter = "none";                    ///< "none" | "shuffle"
  std::string compression = "none";               ///< "none" | "zstd" | "lz4" | "blosc2" | "szip"
  std::optional<std::int32_t> compression_level;  ///< zstd (default 3), blosc2 (default 5)
};

/// Called for each `warning: ...` the reference prints to stderr (the text
/// after "warning: "). Not called when empty.
using warning_sink = std::function<void(std::string_view message)>;
/// Progress of a long conversion: units done and the total (GRIB messages,
/// NetCDF variables); called after each unit.
using progress_sink = std::function<void(std::size_t done, std::size_t total)>;

struct conversion_options {
  pipeline_options pipeline;
  /// Hashing, threads, NaN/Inf policy and mask methods (spec 05 §1.2).
  encode_options encode;
  warning_sink on_warning;
  progress_sink on_progress;
};

/// The kinds of failure of spec 05 §2.6 / §4.7.
enum class conversion_failure {
  library,       ///< "ecCodes error: ..." / "netcdf error: ..." (Python RuntimeError)
  no_data,       ///< "no GRIB messages found in input" / "no variables found in input" (ValueError)
  invalid_data,  ///< "invalid GRIB data: ..." / "invalid netcdf data: ..." (ValueError)
  encode,        ///< "encode error: ..." (ValueError)
  usage,         ///< a bad option value, e.g. an unknown codec or split mode (ValueError)
};

/// Errors of the importers and exporters; `what()` is the spec's full text
/// (no category prefix). I/O failures are `tensogram::io_error`s instead.
class conversion_error : public error {
 public:
  conversion_error(conversion_failure kind, std::string_view text)
      : error(TGM_ERROR_ENCODING, "", text), kind_(kind) {}
  [[nodiscard]] conversion_failure kind() const noexcept { return kind_; }

 private:
  conversion_failure kind_;
};

/// Sets encoding, filter, compression and their parameters on `d` as spec 05
/// §1.1 says. `values` are the object's raw elements in `d`'s byte order:
/// simple_packing parameters are computed from them (bits default 16,
/// decimal scale 0). `what` names the variable in errors; `data_kind` is
/// "GRIB" or "netcdf" for the "invalid <kind> data: ..." texts. Throws
/// `conversion_error` (`invalid_data` for simple_packing on non-float64 data
/// or values it cannot pack, `usage` for unknown names).
void apply_pipeline(const pipeline_options& options, data_object_descriptor& d,
                    std::span<const std::byte> values, std::string_view what, std::string_view data_kind);

/// Encodes one message, turning library errors into `conversion_error`s of
/// kind `encode` ("encode error: ...").
[[nodiscard]] std::vector<std::byte> encode_converted(const global_metadata& metadata,
                                                      std::span<const object_input> objects,
                                                      const encode_options& options);

}  // namespace tensogram::importers
