// Lowercase hexadecimal rendering used for hash digests (spec 01 §12) and
// byte strings in JSON (spec 02 §2.1).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

namespace tensogram {

/// `format("%016x", v)`: 16 lowercase hex digits, zero padded.
[[nodiscard]] std::string hex16(std::uint64_t v);

/// Lowercase hex of every byte, two digits each.
[[nodiscard]] std::string hex_bytes(std::span<const std::byte> bytes);

}  // namespace tensogram
