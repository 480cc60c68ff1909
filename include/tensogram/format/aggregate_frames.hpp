// Bodies of index frames (types 2, 6; spec 01 §10) and hash frames
// (types 3, 5; spec 01 §11).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace tensogram::format {

struct index_body {
  std::vector<std::uint64_t> offsets;  // frame start of object i, from message start
  std::vector<std::uint64_t> lengths;  // frame total_length of object i
};

/// Parses an index body; throws `metadata_error` per spec 01 §10 (not a map,
/// non-text key, non-array, non-integer or negative entries, length mismatch).
[[nodiscard]] index_body parse_index_body(std::span<const std::byte> body);
/// Canonical CBOR `{"lengths": [...], "offsets": [...]}`.
[[nodiscard]] std::vector<std::byte> encode_index_body(const index_body& index);

struct hash_body {
  std::string algorithm;
  std::vector<std::string> hashes;  // 16 lowercase hex digits each
};

/// Parses a hash body; throws `metadata_error` per spec 01 §11.
[[nodiscard]] hash_body parse_hash_body(std::span<const std::byte> body);
/// Canonical CBOR `{"hashes": [hex16(d)...], "algorithm": "xxh3"}`.
[[nodiscard]] std::vector<std::byte> encode_hash_body(std::span<const std::uint64_t> digests);

}  // namespace tensogram::format
