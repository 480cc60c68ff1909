// The PIPELINE flags of the encoding commands (spec 04 §A.5 "PIPELINE flags
// shared by both converters"; descriptor mapping: spec 05 §1.1).
//
// Two sets share one implementation:
// * `reference`: exactly the reference converters' flags (`--encoding`,
//   `--bits`, `--filter`, `--compression`, `--compression-level`), with the
//   reference's leniency: `--bits` without simple_packing and a level for a
//   codec without levels are ignored. For the GRIB/NetCDF importers.
// * `extended`: the same plus zfp, sz3 and per-codec tuning (`--zfp-*`,
//   `--sz3-*`, `--szip-*`), for commands of tensogram-cpp only (`convert-npy`). Having
//   no scripts to stay compatible with, it rejects flags that would be
//   ignored, so a typo never silently changes the output.
//
// Only codecs the library was built with are offered (asked from the codec
// registry, `tensogram::is_compression_built_in`).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <tensogram/message/descriptor.hpp>

namespace CLI {
class App;
}

namespace tensogram::cli {

enum class pipeline_flag_set { reference, extended };

struct pipeline_flags {
  std::string encoding = "none";
  std::optional<std::uint32_t> bits;
  std::string filter = "none";
  std::string compression = "none";
  std::optional<std::int32_t> compression_level;
  // extended only
  std::optional<std::string> zfp_mode;
  std::optional<double> zfp_rate;
  std::optional<std::uint32_t> zfp_precision;
  std::optional<double> zfp_tolerance;
  std::optional<std::string> sz3_mode;
  std::optional<double> sz3_bound;
  std::optional<std::uint32_t> szip_rsi;
  std::optional<std::uint32_t> szip_block_size;
  std::optional<std::uint32_t> szip_flags;
};

/// `--compression` choices of `set` that this build can run, in the spec's
/// order.
[[nodiscard]] std::vector<std::string> compression_choices(pipeline_flag_set set);

/// Registers the flags on `cmd`, bound to `flags`. Combinations that are
/// wrong whatever the data (validate_pipeline_flags) are rejected when
/// parsing finishes, as usage errors (exit 2).
void add_pipeline_flags(CLI::App& cmd, pipeline_flags& flags, pipeline_flag_set set);

/// Throws `usage_error` for a combination of flags no data can satisfy, e.g.
/// `--zfp-rate` without `--compression zfp`.
void validate_pipeline_flags(const pipeline_flags& flags, pipeline_flag_set set);

/// Sets encoding, filter, compression and their parameters on `d` (one
/// object; simple_packing's reference value and scale factors are computed by
/// the encoder from the data). Throws `tool_error` naming `what` when the
/// pipeline cannot take this object (simple_packing, zfp or sz3 on non-float64
/// data, szip on samples wider than 32 bits).
void apply_pipeline_flags(const pipeline_flags& flags, data_object_descriptor& d, const std::string& what);

}  // namespace tensogram::cli
