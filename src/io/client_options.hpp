// The client keys of the reference's object store (object_store 0.13.2,
// spec 08 §3.3 "all (client keys)"), mapped onto this library's HTTP client.
#pragma once

#include <string_view>

#include "tensogram/io/byte_source.hpp"

namespace tensogram::io::detail {

/// Applies one client key (compared ASCII-case-insensitively) to `options`.
/// Returns false for a key that is not a client key. A value that does not
/// parse throws `invalid_arg_error` with object_store's text,
/// `Generic Config error: failed to parse "<value>" as <boolean|Duration|usize|u32|HeaderValue>`.
/// Keys without an equivalent here (pool sizes, HTTP/2 tuning, proxies) are
/// checked and have no effect.
bool set_client_option(remote_options& options, std::string_view key, std::string_view value);

}  // namespace tensogram::io::detail
