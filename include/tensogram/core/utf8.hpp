// UTF-8 well-formedness (RFC 3629 §4), the one validator every layer uses:
// CBOR text strings (spec 02 §2, RFC 8949 §3.1), NetCDF attribute text on
// import, metatensor header JSON and String/Text blobs (spec 06 §2, §6.3).
#pragma once

#include <cstddef>
#include <string_view>

namespace tensogram {

/// Offset of the first byte of `text` that does not begin a well-formed
/// UTF-8 sequence — overlong forms, surrogates (U+D800..U+DFFF), code points
/// above U+10FFFF and truncated sequences are all ill-formed — or
/// `std::string_view::npos` when every byte is well-formed.
[[nodiscard]] std::size_t first_invalid_utf8(std::string_view text) noexcept;

[[nodiscard]] inline bool is_valid_utf8(std::string_view text) noexcept {
  return first_invalid_utf8(text) == std::string_view::npos;
}

}  // namespace tensogram
