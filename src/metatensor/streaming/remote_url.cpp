// URLs of remote files: `metatensor://host[:port]/resource` for the QUIC
// protocol of spec 06 §10, `http(s)://...` for the range mapping of §10.9.
// The resource of a QUIC URL is percent-decoded (RFC 3986 §2.1) because it
// travels as a JSON string in OPEN, not as a URL; HTTP URLs go to libcurl
// as given.
#include <charconv>
#include <cstdint>
#include <string>
#include <string_view>

#include "tensogram/core/error.hpp"
#include "tensogram/core/hex.hpp"
#include "transport.hpp"

namespace metatensor::streaming::detail {

namespace {

[[noreturn]] void bad_url(std::string_view url, std::string_view why) {
  throw tensogram::invalid_arg_error("URL \"" + std::string(url) + "\": " + std::string(why));
}

std::string percent_decode(std::string_view url, std::string_view s) {
  std::optional<std::string> out = tensogram::percent_decode(s);
  if (!out) bad_url(url, "bad percent escape in the path");
  if (out->find('\0') != std::string::npos) bad_url(url, "the path contains %00");
  return std::move(*out);
}

}  // namespace

remote_url parse_remote_url(std::string_view url) {
  remote_url r;
  r.text = std::string(url);
  const auto sep = url.find("://");
  if (sep == std::string_view::npos) bad_url(url, "no scheme (expected metatensor://, http:// or https://)");
  const std::string_view scheme = url.substr(0, sep);
  if (scheme == "metatensor") {
    r.kind = remote_url::scheme::quic;
    r.port = 4433;
  } else if (scheme == "http") {
    r.kind = remote_url::scheme::http;
    r.port = 80;
  } else if (scheme == "https") {
    r.kind = remote_url::scheme::https;
    r.port = 443;
  } else {
    bad_url(url, "unsupported scheme \"" + std::string(scheme) + "\" (expected metatensor, http or https)");
  }
  std::string_view rest = url.substr(sep + 3);
  const auto slash = rest.find('/');
  std::string_view authority = rest.substr(0, slash);
  const std::string_view path = slash == std::string_view::npos ? std::string_view{} : rest.substr(slash + 1);
  if (authority.find('@') != std::string_view::npos) bad_url(url, "user information is not supported");
  if (authority.empty()) bad_url(url, "no host");
  std::string_view port_text;
  if (authority.front() == '[') {  // IPv6 literal, RFC 3986 §3.2.2
    const auto close = authority.find(']');
    if (close == std::string_view::npos) bad_url(url, "unterminated IPv6 address");
    r.host = std::string(authority.substr(1, close - 1));
    const std::string_view after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':') bad_url(url, "junk after the IPv6 address");
      port_text = after.substr(1);
    }
  } else {
    const auto colon = authority.rfind(':');
    r.host = std::string(authority.substr(0, colon));
    if (colon != std::string_view::npos) port_text = authority.substr(colon + 1);
  }
  if (r.host.empty()) bad_url(url, "no host");
  if (!port_text.empty() || authority.back() == ':') {
    unsigned value = 0;
    const auto [end, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), value);
    if (ec != std::errc{} || end != port_text.data() + port_text.size() || value == 0 || value > 65535) {
      bad_url(url, "bad port \"" + std::string(port_text) + "\"");
    }
    r.port = static_cast<std::uint16_t>(value);
  }
  if (r.kind == remote_url::scheme::quic) {
    if (path.find_first_of("?#") != std::string_view::npos)
      bad_url(url, "query and fragment are not supported");
    r.resource = percent_decode(url, path);
    if (r.resource.empty()) bad_url(url, "no file named after the host");
  } else {
    r.resource = std::string(path);
  }
  return r;
}

}  // namespace metatensor::streaming::detail
