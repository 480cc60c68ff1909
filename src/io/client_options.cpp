#include "client_options.hpp"

#include <array>
#include <cctype>
#include <charconv>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <utility>

#include "tensogram/core/error.hpp"

namespace tensogram::io::detail {

namespace {

[[noreturn]] void parse_failure(std::string_view value, std::string_view as) {
  throw invalid_arg_error("Generic Config error: failed to parse \"" + std::string(value) + "\" as " +
                          std::string(as));
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// object_store's config bool (config.rs): 1 true on yes y / 0 false off no n.
bool parse_bool(std::string_view value) {
  const std::string v = lower(value);
  for (const char* t : {"1", "true", "on", "yes", "y"}) {
    if (v == t) return true;
  }
  for (const char* f : {"0", "false", "off", "no", "n"}) {
    if (v == f) return false;
  }
  parse_failure(value, "boolean");
}

std::optional<std::uint64_t> parse_unsigned(std::string_view value) {
  std::uint64_t v = 0;
  const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
  if (value.empty() || ec != std::errc() || end != value.data() + value.size()) return std::nullopt;
  return v;
}

// humantime durations, e.g. `30s`, `500ms`, `2m`, `1h 30m`: every number
// needs a unit. Returns milliseconds.
std::uint64_t parse_duration_ms(std::string_view value) {
  static constexpr std::array<std::pair<std::string_view, double>, 26> units = {{
      {"nsec", 1e-6}, {"ns", 1e-6},     {"usec", 1e-3},  {"us", 1e-3},   {"msec", 1},
      {"ms", 1},      {"seconds", 1e3}, {"second", 1e3}, {"secs", 1e3},  {"sec", 1e3},
      {"s", 1e3},     {"minutes", 6e4}, {"minute", 6e4}, {"mins", 6e4},  {"min", 6e4},
      {"m", 6e4},     {"hours", 3.6e6}, {"hour", 3.6e6}, {"hrs", 3.6e6}, {"hr", 3.6e6},
      {"h", 3.6e6},   {"days", 8.64e7}, {"day", 8.64e7}, {"d", 8.64e7},  {"weeks", 6.048e8},
      {"w", 6.048e8},
  }};
  double total = 0;
  std::size_t i = 0;
  bool any = false;
  while (i < value.size()) {
    if (value[i] == ' ') {
      ++i;
      continue;
    }
    const std::size_t digits = i;
    while (i < value.size() && std::isdigit(static_cast<unsigned char>(value[i])) != 0) ++i;
    const std::size_t unit = i;
    while (i < value.size() && std::isalpha(static_cast<unsigned char>(value[i])) != 0) ++i;
    const std::optional<std::uint64_t> n = parse_unsigned(value.substr(digits, unit - digits));
    const std::string_view u = value.substr(unit, i - unit);
    double scale = -1;
    for (const auto& [name, ms] : units) {
      if (u == name) scale = ms;
    }
    if (!n || scale < 0) parse_failure(value, "Duration");
    total += static_cast<double>(*n) * scale;
    any = true;
  }
  if (!any) parse_failure(value, "Duration");
  return static_cast<std::uint64_t>(total);
}

long as_long_ms(std::uint64_t ms) {
  constexpr std::uint64_t max = static_cast<std::uint64_t>(std::numeric_limits<long>::max());
  return static_cast<long>(ms > max ? max : ms);
}

}  // namespace

bool set_client_option(remote_options& options, std::string_view given_key, std::string_view value) {
  const std::string key = lower(given_key);
  if (key == "allow_http" || key == "http1_only" || key == "http2_only" ||
      key == "http2_keep_alive_while_idle" || key == "randomize_addresses") {
    (void)parse_bool(value);  // http:// is always allowed here; the rest is libcurl's business
    return true;
  }
  if (key == "allow_invalid_certificates") {
    options.verify_tls = !parse_bool(value);
    return true;
  }
  if (key == "timeout") {
    options.timeout_ms = as_long_ms(parse_duration_ms(value));
    return true;
  }
  if (key == "connect_timeout") {
    options.connect_timeout_ms = as_long_ms(parse_duration_ms(value));
    return true;
  }
  if (key == "pool_idle_timeout" || key == "http2_keep_alive_interval" || key == "http2_keep_alive_timeout") {
    (void)parse_duration_ms(value);
    return true;
  }
  if (key == "pool_max_idle_per_host") {
    if (!parse_unsigned(value)) parse_failure(value, "usize");
    return true;
  }
  if (key == "http2_max_frame_size") {
    const auto v = parse_unsigned(value);
    if (!v || *v > 0xffffffffU) parse_failure(value, "u32");
    return true;
  }
  if (key == "user_agent") {
    for (const char c : value) {
      const auto u = static_cast<unsigned char>(c);
      if ((u < 0x20 && u != '\t') || u == 0x7f) parse_failure(value, "HeaderValue");
    }
    options.headers.push_back("User-Agent: " + std::string(value));
    return true;
  }
  return key == "default_content_type" || key == "proxy_url" || key == "proxy_ca_certificate" ||
         key == "proxy_excludes";
}

}  // namespace tensogram::io::detail
