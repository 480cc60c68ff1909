// Program-wide options (spec 04 §A.1 "Global options"), accepted before or
// after the subcommand name, each with its environment variable.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

#include <tensogram/message/options.hpp>

namespace CLI {
class App;
}

namespace tensogram::cli {

struct global_options {
  std::uint32_t threads = 0;
  // Raw BOOL texts; validated by `resolve()` because CLI11's own flag
  // conversion accepts more spellings than the reference does.
  std::string allow_nan = "false";
  std::string allow_inf = "false";
  std::string nan_mask_method = "roaring";
  std::string pos_inf_mask_method = "roaring";
  std::string neg_inf_mask_method = "roaring";
  std::uint64_t small_mask_threshold = 128;
  /// `--quiet` / `-q` (env TENSOGRAM_QUIET): no progress bars on stderr. A
  /// tensogram-cpp addition; the reference has no progress output to hide.
  bool quiet = false;

  /// Encode options for the encoding commands. Throws `usage_error` for a
  /// BOOL value outside y/yes/t/true/on/1 and n/no/f/false/off/0.
  [[nodiscard]] encode_options to_encode_options() const;
  /// Decode options (only the thread budget applies).
  [[nodiscard]] decode_options to_decode_options() const;
};

/// A command-line value that is syntactically accepted by the parser but
/// invalid (spec 04 §A.1: reported like other usage errors, exit 2).
class usage_error : public std::runtime_error {
 public:
  explicit usage_error(const std::string& message) : std::runtime_error(message) {}
};

/// Registers the options on `app` (bound to `opts`).
void add_global_options(CLI::App& app, global_options& opts);

/// clap's BoolishValueParser: y/yes/t/true/on/1 → true, n/no/f/false/off/0 →
/// false, case-insensitive; anything else → nothing.
[[nodiscard]] std::optional<bool> parse_boolish(std::string_view text);

/// Validates every option value that CLI11 cannot check by itself; throws
/// `usage_error`.
void validate_global_options(const global_options& opts);

}  // namespace tensogram::cli
