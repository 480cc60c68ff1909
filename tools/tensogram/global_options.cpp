#include "global_options.hpp"

#include <algorithm>
#include <cctype>

#include <CLI/CLI.hpp>

namespace tensogram::cli {

namespace {

// Mask compression names of spec 04 §A.1 (spec 03 mask methods).
std::vector<std::string> mask_methods() {
  return {"none", "rle", "roaring", "lz4", "zstd", "blosc2"};
}

bool boolish_or_throw(const std::string& option, const std::string& text) {
  const auto v = parse_boolish(text);
  if (!v) {
    // clap's BoolishValueParser text (spec 08 §10).
    std::string value_name = option.substr(2);
    std::transform(value_name.begin(), value_name.end(), value_name.begin(),
                   [](unsigned char c) { return c == '-' ? '_' : static_cast<char>(std::toupper(c)); });
    throw usage_error("invalid value '" + text + "' for '" + option + "[=<" + value_name +
                      ">]': value was not a boolean");
  }
  return *v;
}

}  // namespace

std::optional<bool> parse_boolish(std::string_view text) {
  std::string lower(text);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  for (const char* t : {"y", "yes", "t", "true", "on", "1"}) {
    if (lower == t) return true;
  }
  for (const char* f : {"n", "no", "f", "false", "off", "0"}) {
    if (lower == f) return false;
  }
  return std::nullopt;
}

void validate_global_options(const global_options& opts) {
  (void)boolish_or_throw("--allow-nan", opts.allow_nan);
  (void)boolish_or_throw("--allow-inf", opts.allow_inf);
}

encode_options global_options::to_encode_options() const {
  encode_options o;
  o.threads = threads;
  o.allow_nan = boolish_or_throw("--allow-nan", allow_nan);
  o.allow_inf = boolish_or_throw("--allow-inf", allow_inf);
  o.nan_mask_method = nan_mask_method;
  o.pos_inf_mask_method = pos_inf_mask_method;
  o.neg_inf_mask_method = neg_inf_mask_method;
  o.small_mask_threshold_bytes = static_cast<std::ptrdiff_t>(
      std::min<std::uint64_t>(small_mask_threshold, static_cast<std::uint64_t>(PTRDIFF_MAX)));
  return o;
}

decode_options global_options::to_decode_options() const {
  decode_options o;
  o.threads = threads;
  return o;
}

void add_global_options(CLI::App& app, global_options& opts) {
  const std::string group = "Global options (before or after the subcommand)";
  app.add_option("--threads", opts.threads,
                 "Thread budget for decode/encode work; 0 = sequential (encoding commands only)")
      ->envname("TENSOGRAM_THREADS")
      ->type_name("THREADS")
      ->default_str("0")
      ->group(group);
  // Flags, so that a bare `--allow-nan` never swallows the next argument;
  // `--allow-nan=BOOL` still sets a value (spec 04 §A.1).
  app.add_flag("--allow-nan", opts.allow_nan,
               "Replace NaN by 0 and record a mask when encoding, instead of failing (=BOOL accepted)")
      ->envname("TENSOGRAM_ALLOW_NAN")
      ->type_name("ALLOW_NAN")
      ->group(group);
  app.add_flag("--allow-inf", opts.allow_inf, "Same for +Inf and -Inf (=BOOL accepted)")
      ->envname("TENSOGRAM_ALLOW_INF")
      ->type_name("ALLOW_INF")
      ->group(group);
  app.add_option("--nan-mask-method", opts.nan_mask_method, "Compression of the NaN mask")
      ->envname("TENSOGRAM_NAN_MASK_METHOD")
      ->check(CLI::IsMember(mask_methods()))
      ->type_name("NAN_MASK_METHOD")
      ->default_str("roaring")
      ->group(group);
  app.add_option("--pos-inf-mask-method", opts.pos_inf_mask_method, "Compression of the +Inf mask")
      ->envname("TENSOGRAM_POS_INF_MASK_METHOD")
      ->check(CLI::IsMember(mask_methods()))
      ->type_name("POS_INF_MASK_METHOD")
      ->default_str("roaring")
      ->group(group);
  app.add_option("--neg-inf-mask-method", opts.neg_inf_mask_method, "Compression of the -Inf mask")
      ->envname("TENSOGRAM_NEG_INF_MASK_METHOD")
      ->check(CLI::IsMember(mask_methods()))
      ->type_name("NEG_INF_MASK_METHOD")
      ->default_str("roaring")
      ->group(group);
  app.add_option("--small-mask-threshold", opts.small_mask_threshold,
                 "Masks smaller than this many bytes are stored uncompressed; 0 disables the fallback")
      ->envname("TENSOGRAM_SMALL_MASK_THRESHOLD")
      ->type_name("SMALL_MASK_THRESHOLD")
      ->default_str("128")
      ->group(group);
  app.add_flag("-q,--quiet", opts.quiet,
               "Do not draw progress bars on stderr (they appear only on a terminal)")
      ->envname("TENSOGRAM_QUIET")
      ->group(group);
}

}  // namespace tensogram::cli
