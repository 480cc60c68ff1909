// Canonical CBOR encoding and strict, bounded decoding (spec 02 §1).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "tensogram/cbor/value.hpp"

namespace tensogram::cbor {

/// Appends the canonical encoding of `v` to `out`: shortest integer and
/// length arguments (§1.2), shortest lossless float width (§1.3), map
/// entries sorted by their encoded key bytes at every level (§1.4),
/// definite lengths only.
void encode_to(const value& v, std::vector<std::byte>& out);

/// The canonical encoding of `v`.
[[nodiscard]] std::vector<std::byte> encode(const value& v);

/// Limits applied while decoding untrusted bytes.
struct decode_limits {
  /// Nested arrays/maps/tags accepted; one more is rejected (spec 01 §19.1).
  std::size_t max_depth = 256;
};

struct decoded_item {
  value item;
  /// Bytes the item occupied; bytes after it are not read.
  std::size_t consumed = 0;
};

/// Decodes exactly one item from the start of `bytes`, ignoring anything
/// after it (the reference's leniency, §1.5). Accepts any integer width,
/// any key order and indefinite lengths. Never allocates more than the
/// remaining input can describe. Throws `metadata_error` naming the byte
/// offset on truncation, invalid UTF-8, reserved additional information,
/// unsupported simple values or excessive nesting.
[[nodiscard]] decoded_item decode_prefix(std::span<const std::byte> bytes, const decode_limits& limits = {});

/// `decode_prefix(bytes).item`.
[[nodiscard]] value decode(std::span<const std::byte> bytes, const decode_limits& limits = {});

/// The validator's canonical check (§1.6): every map's encoded keys are in
/// strictly increasing bytewise order, recursively.
[[nodiscard]] bool has_canonical_key_order(const value& v);

/// Stricter: `bytes` hold exactly one item whose canonical re-encoding is
/// identical (also catches over-long integers and indefinite lengths).
[[nodiscard]] bool is_canonical_encoding(std::span<const std::byte> bytes);

/// Bits of the shortest IEEE width that reproduces `d` exactly, as used by
/// the encoder: 2 (half), 4 (single) or 8 (double) bytes.
[[nodiscard]] std::size_t shortest_float_width(double d) noexcept;

/// IEEE binary16 bits → double (exact).
[[nodiscard]] double half_to_double(std::uint16_t h) noexcept;

/// Offset of the first byte of `text` that does not start a well-formed
/// UTF-8 sequence (RFC 3629: no overlong forms, surrogates or code points
/// above U+10FFFF), or nothing when all of `text` is valid. The rule CBOR
/// text strings are decoded with, and the C API's check of its string
/// arguments (spec 07 C2.3).
[[nodiscard]] std::optional<std::size_t> utf8_error_offset(std::string_view text) noexcept;

}  // namespace tensogram::cbor
