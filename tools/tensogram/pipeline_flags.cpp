#include "pipeline_flags.hpp"

#include <algorithm>
#include <cmath>
#include <string_view>

#include <CLI/CLI.hpp>
#include <tensogram/codecs/simple_packing.hpp>
#include <tensogram/codecs/szip.hpp>
#include <tensogram/codecs/zfp.hpp>
#include <tensogram/core/dtype.hpp>
#include <tensogram/core/error.hpp>
#include <tensogram/doctor.hpp>

#include "global_options.hpp"
#include "tool_error.hpp"

namespace tensogram::cli {

namespace {

// Defaults of spec 05 §1.1.
constexpr std::uint32_t default_bits = 16;
constexpr std::int32_t default_zstd_level = 3;
constexpr std::int32_t default_blosc2_clevel = 5;
constexpr std::uint32_t default_szip_rsi = 128;
constexpr std::uint32_t default_szip_block_size = 16;
constexpr std::uint32_t default_szip_flags = codecs::szip_flags::data_preprocess;  // 8

const std::vector<std::string> zfp_modes = {"fixed_rate", "fixed_precision", "fixed_accuracy"};
const std::vector<std::string> sz3_modes = {"abs", "rel", "psnr"};

// The codecs each set knows how to parameterise: the reference converters'
// list (spec 04 §A.5, "zfp/sz3 are not offered here"), plus zfp and sz3
// for the extended set. Whether each one exists is the registry's answer.
std::vector<std::string> candidate_codecs(pipeline_flag_set set) {
  std::vector<std::string> c = {"none", "szip", "zstd", "lz4", "blosc2"};
  if (set == pipeline_flag_set::extended) {
    c.emplace_back("zfp");
    c.emplace_back("sz3");
  }
  return c;
}

std::string join(const std::vector<std::string>& items, const char* sep) {
  std::string out;
  for (const std::string& s : items) out += (out.empty() ? "" : sep) + s;
  return out;
}

// A finite number above zero (or from zero, `zero_allowed`) and at most
// `max`. CLI::PositiveNumber and CLI::NonNegativeNumber let NaN through (it
// then failed in the codec, after the input was read) and name their
// bound as DBL_MAX in 300 digits. `description` is what the help shows.
CLI::Validator finite_number(const char* description, bool zero_allowed, double max = 0.0,
                             std::string above_max = {}) {
  return CLI::Validator(
      [zero_allowed, max, above_max](std::string& in) -> std::string {
        double v = 0.0;
        if (!CLI::detail::lexical_cast(in, v) || !std::isfinite(v) || v < 0.0 ||
            (v == 0.0 && !zero_allowed)) {
          return "Value " + in + " is not a " + (zero_allowed ? "finite number >= 0" : "finite number > 0");
        }
        if (!above_max.empty() && v > max) return "Value " + in + " " + above_max;
        return {};
      },
      description);
}

// Like CLI::IsMember (same "{a,b,c}" description, which the help, the
// Markdown reference and the bash completion read), but a codec the spec
// knows and this build lacks gets its own message.
CLI::Validator compression_validator(pipeline_flag_set set) {
  const std::vector<std::string> available = compression_choices(set);
  const std::vector<std::string> known = candidate_codecs(set);
  CLI::Validator v(
      [available, known](std::string& in) -> std::string {
        if (std::find(available.begin(), available.end(), in) != available.end()) return {};
        if (std::find(known.begin(), known.end(), in) != known.end()) {
          return "codec '" + in + "' is not built into this tensogram (available: " + join(available, ", ") +
                 ")";
        }
        return in + " not in {" + join(available, ",") + "}";
      },
      "{" + join(available, ",") + "}");
  return v;
}

bool is_zfp(const pipeline_flags& f) {
  return f.compression == "zfp";
}

// The first zfp or szip tuning flag given, for messages.
std::optional<std::string> first_zfp_flag(const pipeline_flags& f) {
  if (f.zfp_mode) return "--zfp-mode";
  if (f.zfp_rate) return "--zfp-rate";
  if (f.zfp_precision) return "--zfp-precision";
  if (f.zfp_tolerance) return "--zfp-tolerance";
  return std::nullopt;
}

std::optional<std::string> first_sz3_flag(const pipeline_flags& f) {
  if (f.sz3_mode) return "--sz3-mode";
  if (f.sz3_bound) return "--sz3-bound";
  return std::nullopt;
}

std::optional<std::string> first_szip_flag(const pipeline_flags& f) {
  if (f.szip_rsi) return "--szip-rsi";
  if (f.szip_block_size) return "--szip-block-size";
  if (f.szip_flags) return "--szip-flags";
  return std::nullopt;
}

// The zfp mode the flags select (validated beforehand).
std::string zfp_mode_of(const pipeline_flags& f) {
  if (f.zfp_mode) return *f.zfp_mode;
  if (f.zfp_rate) return "fixed_rate";
  if (f.zfp_precision) return "fixed_precision";
  return "fixed_accuracy";
}

// spec 03 §3.3: zfp and sz3 after packing or shuffling compress meaningless
// numbers; the library refuses to write them (docs/pipeline.md).
void require_raw_values(const pipeline_flags& f) {
  if (f.encoding != "none" || f.filter != "none") {
    const std::string flag = f.encoding != "none" ? "--encoding " + f.encoding : "--filter " + f.filter;
    throw usage_error("--compression " + f.compression + " cannot follow " + flag + " (" + f.compression +
                      " compresses the float64 values themselves)");
  }
}

void validate_sz3(const pipeline_flags& f) {
  require_raw_values(f);
  if (!f.sz3_bound) throw usage_error("--compression sz3 needs --sz3-bound");
}

void validate_zfp(const pipeline_flags& f) {
  require_raw_values(f);
  std::vector<std::string> given;
  if (f.zfp_rate) given.emplace_back("--zfp-rate");
  if (f.zfp_precision) given.emplace_back("--zfp-precision");
  if (f.zfp_tolerance) given.emplace_back("--zfp-tolerance");
  if (f.zfp_mode) {
    const std::string needed = *f.zfp_mode == "fixed_rate"        ? "--zfp-rate"
                               : *f.zfp_mode == "fixed_precision" ? "--zfp-precision"
                                                                  : "--zfp-tolerance";
    for (const std::string& g : given) {
      if (g != needed) throw usage_error(g + " does not apply to --zfp-mode " + *f.zfp_mode);
    }
    if (given.empty()) throw usage_error("--zfp-mode " + *f.zfp_mode + " needs " + needed);
    return;
  }
  if (given.empty()) {
    throw usage_error("--compression zfp needs one of --zfp-rate, --zfp-precision or --zfp-tolerance");
  }
  if (given.size() > 1) throw usage_error(given[0] + " and " + given[1] + " cannot be used together");
}

void validate_szip(const pipeline_flags& f) {
  if (f.encoding == "simple_packing") {
    const std::uint32_t b = f.bits.value_or(default_bits);
    if (b != 8 && b != 16 && b != 24 && b != 32) {
      // libaec codes whole 1/2/3/4-byte samples; other widths lose data
      // (spec 03 §7.6), which the library refuses to write.
      throw usage_error(
          "--compression szip after --encoding simple_packing needs --bits 8, 16, 24 or 32, got " +
          std::to_string(b));
    }
  }
  codecs::szip_params p;
  // The sample width comes from the data and is checked at encode time; 1 bit
  // passes every width-dependent rule, so only the flag values are judged.
  p.bits_per_sample = 1;
  p.rsi = f.szip_rsi.value_or(default_szip_rsi);
  p.block_size = f.szip_block_size.value_or(default_szip_block_size);
  p.flags = f.szip_flags.value_or(default_szip_flags);
  if (p.flags > 127) {
    throw usage_error("--szip-flags " + std::to_string(p.flags) +
                      " has bits outside the 7 libaec flags (0..127)");
  }
  try {
    codecs::szip_validate(p);
  } catch (const tensogram::error& e) {
    // Keep the rule, drop the library's category prefixes.
    std::string_view why = e.detail();
    if (const auto at = why.rfind("szip error: "); at != std::string_view::npos) why.remove_prefix(at + 12);
    throw usage_error("invalid szip options: " + std::string(why));
  }
}

}  // namespace

std::vector<std::string> compression_choices(pipeline_flag_set set) {
  std::vector<std::string> out;
  for (const std::string& c : candidate_codecs(set)) {
    if (is_compression_built_in(c)) out.push_back(c);
  }
  return out;
}

void add_pipeline_flags(CLI::App& cmd, pipeline_flags& flags, pipeline_flag_set set) {
  const std::string group = "Pipeline (applied to every object)";
  cmd.add_option("--encoding", flags.encoding, "Encoding stage; simple_packing needs float64 data")
      ->check(CLI::IsMember({"none", "simple_packing"}))
      ->type_name("ENC")
      ->capture_default_str()
      ->group(group);
  cmd.add_option("--bits", flags.bits, "Bits per packed value for simple_packing (default 16)")
      ->check(CLI::Range(0, 64))
      ->type_name("N")
      ->group(group);
  cmd.add_option(
         "--filter", flags.filter,
         "Filter stage; shuffle's element size is the packed byte width after simple_packing, else the "
         "dtype width")
      ->check(CLI::IsMember({"none", "shuffle"}))
      ->type_name("FILTER")
      ->capture_default_str()
      ->group(group);
  cmd.add_option("--compression", flags.compression, "Compression stage (codecs built into this tensogram)")
      ->check(compression_validator(set))
      ->type_name("CODEC")
      ->capture_default_str()
      ->group(group);
  cmd.add_option("--compression-level", flags.compression_level,
                 set == pipeline_flag_set::reference
                     ? "Level for zstd (default 3) and blosc2 (default 5); ignored by other codecs"
                     : "Level for zstd (default 3; levels 20-22 need up to 700 MB of memory) and blosc2 "
                       "(default 5)")
      ->type_name("L")
      ->group(group);
  if (set == pipeline_flag_set::extended) {
    cmd.add_option("--zfp-mode", flags.zfp_mode,
                   "zfp mode; implied by whichever of --zfp-rate, --zfp-precision, --zfp-tolerance is given")
        ->check(CLI::IsMember(zfp_modes))
        ->type_name("MODE")
        ->group(group);
    // Rates above zfp_max_rate only add zero padding to every block; the
    // codec refuses them (docs/pipeline.md), so the flag does too.
    cmd.add_option("--zfp-rate", flags.zfp_rate, "zfp fixed_rate: bits per value, at most 4164.5")
        ->check(finite_number("POSITIVE", false, codecs::zfp_max_rate,
                              "not in range 0 to 4164.5: fixed-rate zfp blocks are limited to 16658 bits"))
        ->type_name("R")
        ->group(group);
    cmd.add_option("--zfp-precision", flags.zfp_precision, "zfp fixed_precision: bit planes kept (1-64)")
        ->check(CLI::Range(1, 64))
        ->type_name("P")
        ->group(group);
    cmd.add_option("--zfp-tolerance", flags.zfp_tolerance, "zfp fixed_accuracy: largest absolute error")
        ->check(finite_number("POSITIVE", false))
        ->type_name("T")
        ->group(group);
    cmd.add_option("--sz3-mode", flags.sz3_mode,
                   "sz3 error bound: abs (largest absolute error), rel (fraction of the value range) or psnr "
                   "(dB); default abs")
        ->check(CLI::IsMember(sz3_modes))
        ->type_name("MODE")
        ->group(group);
    cmd.add_option("--sz3-bound", flags.sz3_bound, "sz3 error bound in the --sz3-mode's unit; 0 is lossless")
        ->check(finite_number("NONNEGATIVE", true))
        ->type_name("B")
        ->group(group);
    cmd.add_option("--szip-rsi", flags.szip_rsi,
                   "szip blocks per reference sample interval (1-4096, default 128)")
        ->type_name("N")
        ->group(group);
    cmd.add_option("--szip-block-size", flags.szip_block_size,
                   "szip samples per block (8, 16, 32, 64; default 16)")
        ->type_name("N")
        ->group(group);
    cmd.add_option("--szip-flags", flags.szip_flags,
                   "szip flags as the descriptor stores them (libaec bits; default 8 = preprocess)")
        ->type_name("N")
        ->group(group);
  }
  // Checked once the whole command line is known; CLI11 turns the
  // ValidationError into the usage-error path of main() (exit 2).
  cmd.final_callback([&flags, set] {
    try {
      validate_pipeline_flags(flags, set);
    } catch (const usage_error& e) {
      throw CLI::ValidationError(e.what());
    }
  });
}

void validate_pipeline_flags(const pipeline_flags& f, pipeline_flag_set set) {
  const bool strict = set == pipeline_flag_set::extended;
  if (strict && f.bits && f.encoding != "simple_packing") {
    throw usage_error("--bits applies to --encoding simple_packing only");
  }
  if (strict && f.compression_level && f.compression != "zstd" && f.compression != "blosc2") {
    throw usage_error("--compression-level applies to --compression zstd or blosc2 only");
  }
  if (const auto flag = first_zfp_flag(f); flag && !is_zfp(f)) {
    throw usage_error(*flag + " requires --compression zfp");
  }
  if (const auto flag = first_sz3_flag(f); flag && f.compression != "sz3") {
    throw usage_error(*flag + " requires --compression sz3");
  }
  if (const auto flag = first_szip_flag(f); flag && f.compression != "szip") {
    throw usage_error(*flag + " requires --compression szip");
  }
  if (is_zfp(f)) validate_zfp(f);
  if (f.compression == "sz3") validate_sz3(f);
  if (f.compression == "szip") validate_szip(f);
}

void apply_pipeline_flags(const pipeline_flags& f, data_object_descriptor& d, const std::string& what) {
  const bool packing = f.encoding == "simple_packing";
  const std::uint32_t bits = f.bits.value_or(default_bits);
  if (packing) {
    if (d.dtype != dtype::float64) {
      throw tool_error(what + ": --encoding simple_packing needs float64 data, got " +
                       std::string(dtype_name(d.dtype)));
    }
    d.encoding = "simple_packing";
    // The encoder computes the reference value and binary scale factor from
    // the values (spec 03 §4.3); the decimal scale factor is 0 (spec 05 §1.1).
    d.params.set("sp_bits_per_value", cbor::value(bits));
    d.params.set("sp_decimal_scale_factor", cbor::value(0));
  }
  if (f.filter == "shuffle") {
    d.filter = "shuffle";
    const std::uint64_t size = packing ? std::max<std::uint32_t>(1, (bits + 7) / 8) : dtype_width(d.dtype);
    if (packing) {
      // The shuffle filter needs whole elements (spec 03 §5): a packed
      // stream of N x bits bits must split into ceil(bits/8)-byte pieces.
      const std::uint64_t packed = codecs::simple_packing_size(d.element_count(), bits);
      if (packed % size != 0) {
        throw tool_error(what + ": --filter shuffle after --encoding simple_packing --bits " +
                         std::to_string(bits) + " needs the packed size (" + std::to_string(packed) +
                         " bytes) to be a multiple of " + std::to_string(size) +
                         "; use a multiple of 8 for --bits");
      }
    }
    d.params.set("shuffle_element_size", cbor::value(size));
  }
  d.compression = f.compression;
  if (f.compression == "zstd") {
    d.params.set("zstd_level", cbor::value(f.compression_level.value_or(default_zstd_level)));
  } else if (f.compression == "blosc2") {
    d.params.set("blosc2_clevel", cbor::value(f.compression_level.value_or(default_blosc2_clevel)));
    d.params.set("blosc2_codec", cbor::value("lz4"));
  } else if (f.compression == "szip") {
    // szip codes samples of at most 32 bits: raw 64-bit data must be packed
    // or shuffled into bytes first (spec 05 §1.1).
    if (!packing && f.filter != "shuffle" && dtype_width(d.dtype) > 4) {
      throw tool_error(
          what + ": --compression szip cannot code " + std::string(dtype_name(d.dtype)) +
          " samples directly (at most 32 bits); add --filter shuffle or --encoding simple_packing");
    }
    d.params.set("szip_rsi", cbor::value(f.szip_rsi.value_or(default_szip_rsi)));
    d.params.set("szip_block_size", cbor::value(f.szip_block_size.value_or(default_szip_block_size)));
    d.params.set("szip_flags", cbor::value(f.szip_flags.value_or(default_szip_flags)));
  } else if (f.compression == "zfp") {
    if (d.dtype != dtype::float64) {
      throw tool_error(what + ": --compression zfp needs float64 data, got " +
                       std::string(dtype_name(d.dtype)));
    }
    const std::string mode = zfp_mode_of(f);
    d.params.set("zfp_mode", cbor::value(mode));
    if (mode == "fixed_rate") d.params.set("zfp_rate", cbor::value(*f.zfp_rate));
    if (mode == "fixed_precision") d.params.set("zfp_precision", cbor::value(*f.zfp_precision));
    if (mode == "fixed_accuracy") d.params.set("zfp_tolerance", cbor::value(*f.zfp_tolerance));
  } else if (f.compression == "sz3") {
    if (d.dtype != dtype::float64) {
      throw tool_error(what + ": --compression sz3 needs float64 data, got " +
                       std::string(dtype_name(d.dtype)));
    }
    d.params.set("sz3_error_bound_mode", cbor::value(f.sz3_mode.value_or("abs")));
    d.params.set("sz3_error_bound", cbor::value(*f.sz3_bound));
  }
}

}  // namespace tensogram::cli
