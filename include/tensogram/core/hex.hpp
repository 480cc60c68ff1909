// Hexadecimal text both ways, the one copy every layer uses: lowercase
// rendering for hash digests (spec 01 §12), byte strings in JSON (spec 02
// §2.1), UUIDs and diagnostics; reading hex digits and percent escapes
// (RFC 3986 §2.1: URL paths, RFC 6901 §6: JSON Pointer URI fragments).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace tensogram {

/// `format("%016x", v)`: 16 lowercase hex digits, zero padded.
[[nodiscard]] std::string hex16(std::uint64_t v);

/// `format("%x", v)`: the fewest lowercase hex digits (at least one).
[[nodiscard]] std::string hex_digits(std::uint64_t v);

/// Lowercase hex of every byte, two digits each.
[[nodiscard]] std::string hex_bytes(std::span<const std::byte> bytes);

/// Rust's `{:?}` of a string (spec 08 notation dq): wrapped in `"`, with
/// `"` `\` newline tab CR NUL escaped as `\"` `\\` `\n` `\t` `\r` `\0`, other
/// control characters as `\u{<lowercase hex>}`; `'` and non-ASCII text stay.
[[nodiscard]] std::string debug_quoted(std::string_view text);

/// Appends the two lowercase hex digits of `b` to `out`.
void append_hex_byte(std::string& out, std::uint8_t b);

/// The value of one hex digit (either case), or -1 for any other character.
[[nodiscard]] constexpr int hex_digit_value(char c) noexcept {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

/// Replaces every `%XX` escape with its byte; nothing when an escape is
/// truncated or not two hex digits. Other characters are copied as they are.
[[nodiscard]] std::optional<std::string> percent_decode(std::string_view text);

}  // namespace tensogram
