// See http_support.hpp.
#include "http_support.hpp"

#include <curl/curl.h>

#include <cctype>
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>

#include "tensogram/core/error.hpp"

namespace tensogram::io::detail {

// libcurl 7.84+ makes curl_global_init itself thread-safe when
// curl_version_info() reports CURL_VERSION_THREADSAFE; the function-local
// static (initialised exactly once, C++ [stmt.dcl]/4) makes sure this
// project calls it once even where that bit is absent. It is never cleaned
// up: other code in the process may use libcurl too, and curl_global_cleanup
// is not reference counted across libraries. The static is written once and
// then only read, so it is not mutable shared state.
void ensure_curl_initialised() {
  static const CURLcode rc = curl_global_init(CURL_GLOBAL_DEFAULT);
  if (rc != CURLE_OK) {
    throw remote_error(std::string("cannot initialise libcurl: ") + curl_easy_strerror(rc));
  }
}

bool set_range_request_options(CURL* h, const char* user_agent) noexcept {
  bool ok = true;
  const auto set = [&](CURLcode rc) { ok = ok && rc == CURLE_OK; };
  // Signals are not thread-safe: without NOSIGNAL, libcurl may use SIGALRM
  // for DNS timeouts, which breaks multi-threaded callers.
  set(curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L));
  set(curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 1L));
  set(curl_easy_setopt(h, CURLOPT_MAXREDIRS, 10L));
#if LIBCURL_VERSION_NUM >= 0x075500  // 7.85.0
  set(curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https"));
  set(curl_easy_setopt(h, CURLOPT_REDIR_PROTOCOLS_STR, "http,https"));
#else
  set(curl_easy_setopt(h, CURLOPT_PROTOCOLS, static_cast<long>(CURLPROTO_HTTP | CURLPROTO_HTTPS)));
  set(curl_easy_setopt(h, CURLOPT_REDIR_PROTOCOLS, static_cast<long>(CURLPROTO_HTTP | CURLPROTO_HTTPS)));
#endif
  set(curl_easy_setopt(h, CURLOPT_USERAGENT, user_agent));
  // No CURLOPT_ACCEPT_ENCODING: libcurl sends no Accept-Encoding unless told
  // to. Small requests must not wait for Nagle's algorithm.
  set(curl_easy_setopt(h, CURLOPT_TCP_NODELAY, 1L));
  return ok;
}

std::string redact_url(std::string_view url) {
  const auto scheme_end = url.find("://");
  if (scheme_end == std::string_view::npos) return std::string(url);
  const auto authority_start = scheme_end + 3;
  const auto authority_end = url.find_first_of("/?#", authority_start);
  const auto authority =
      url.substr(authority_start, authority_end == std::string_view::npos ? std::string_view::npos
                                                                          : authority_end - authority_start);
  const auto at = authority.rfind('@');
  if (at == std::string_view::npos) return std::string(url);
  std::string out(url.substr(0, authority_start));
  out += "***@";
  out += url.substr(authority_start + at + 1);
  return out;
}

bool iequals_prefix(std::string_view text, std::string_view prefix) noexcept {
  if (text.size() < prefix.size()) return false;
  for (std::size_t i = 0; i < prefix.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(text[i])) !=
        std::tolower(static_cast<unsigned char>(prefix[i]))) {
      return false;
    }
  }
  return true;
}

std::string_view trim(std::string_view s) noexcept {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r' || s.back() == '\n')) {
    s.remove_suffix(1);
  }
  return s;
}

std::optional<std::uint64_t> parse_u64(std::string_view s) noexcept {
  std::uint64_t v = 0;
  const auto* end = s.data() + s.size();
  const auto [p, ec] = std::from_chars(s.data(), end, v);
  if (ec != std::errc{} || p != end || s.empty()) return std::nullopt;
  return v;
}

content_range parse_content_range(std::string_view value) {
  content_range out;
  value = trim(value);
  if (!iequals_prefix(value, "bytes")) return out;
  value = trim(value.substr(5));
  const auto slash = value.find('/');
  if (slash == std::string_view::npos) return out;
  out.total = parse_u64(trim(value.substr(slash + 1)));
  const auto span = trim(value.substr(0, slash));
  if (const auto dash = span.find('-'); dash != std::string_view::npos) {
    out.first = parse_u64(span.substr(0, dash));
    out.last = parse_u64(span.substr(dash + 1));
  }
  return out;
}

}  // namespace tensogram::io::detail
