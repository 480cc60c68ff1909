// libcurl and HTTP header helpers shared by the two HTTP range readers:
// tensogram's byte source (src/io/http_source.cpp) and metatensor
// streaming's §10.9 fallback transport
// (src/metatensor/streaming/http/http_transport.cpp). Private to the project:
// not installed, not part of the public API. It lives in the core library,
// which metatensor_streaming links, so both readers use one copy.
#pragma once

#include <curl/curl.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace tensogram::io::detail {

/// libcurl's global environment, set up once per process before the first
/// handle is made. Throws `remote_error` when libcurl cannot be initialised.
void ensure_curl_initialised();

struct easy_deleter {
  void operator()(CURL* h) const noexcept { curl_easy_cleanup(h); }
};
struct multi_deleter {
  void operator()(CURLM* h) const noexcept { curl_multi_cleanup(h); }
};
struct slist_deleter {
  void operator()(curl_slist* l) const noexcept { curl_slist_free_all(l); }
};
using easy_ptr = std::unique_ptr<CURL, easy_deleter>;
using multi_ptr = std::unique_ptr<CURLM, multi_deleter>;
using slist_ptr = std::unique_ptr<curl_slist, slist_deleter>;

/// Sets what every range request of the project's HTTP readers needs:
/// no signals, redirects (at most 10) within http/https only, the
/// `user_agent`, TCP_NODELAY and no Accept-Encoding (a compressed reply
/// would not be the bytes of the range). False when libcurl refused one.
[[nodiscard]] bool set_range_request_options(CURL* h, const char* user_agent) noexcept;

/// The URL without "user:password@", for messages: credentials never appear
/// in exceptions or logs.
std::string redact_url(std::string_view url);

/// Whether `text` starts with `prefix`, ASCII case-insensitively (header
/// names and URL schemes are case-insensitive).
bool iequals_prefix(std::string_view text, std::string_view prefix) noexcept;

/// `s` without leading blanks and trailing blanks or line ends (header
/// lines arrive with their CRLF).
std::string_view trim(std::string_view s) noexcept;

/// A whole decimal number, or empty when `s` is anything else.
std::optional<std::uint64_t> parse_u64(std::string_view s) noexcept;

/// A parsed `Content-Range` header (RFC 9110 §14.4): "bytes first-last/total"
/// or, on a 416 reply, "bytes */total". Unknown parts stay empty.
struct content_range {
  std::optional<std::uint64_t> first;
  std::optional<std::uint64_t> last;
  std::optional<std::uint64_t> total;
};

content_range parse_content_range(std::string_view value);

}  // namespace tensogram::io::detail
