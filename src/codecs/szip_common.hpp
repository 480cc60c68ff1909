// What src/codecs/szip.cpp (native: our own coder, libaec where ours cannot
// promise libaec's answer), src/codecs/szip_libaec.cpp and
// src/codecs/szip_builtin.cpp (our own coder only, builds without libaec)
// share beyond szip.hpp: the checks in
// front of a decode and of a range decode (spec 03 §7.5). Private to
// src/codecs/szip*.cpp.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

#include "tensogram/codecs/szip.hpp"

namespace tensogram::codecs::szip_common {

/// The payload room the reference reserves for `n` input bytes (spec 03
/// §7.3): n + n/4 + 256.
constexpr std::size_t payload_bound(std::size_t n) noexcept {
  return n + n / 4 + 256;
}

/// Validates `p` and the sizes of a full decode; false when there is nothing
/// to decode (`expected` 0 and an empty payload).
bool check_decode_sizes(std::span<const std::byte> payload, const szip_params& p, std::size_t expected);

/// Where a range decode starts: the bit of the start of the RSI that holds
/// `byte_pos` (walked from the stream, never taken from `stored_offsets`,
/// whose count only bounds the RSI index) and the decoded bytes of that RSI
/// before `byte_pos`. Validates `p` and the range.
struct range_start {
  std::uint64_t bit = 0;
  std::uint64_t skip = 0;
};
range_start locate_range(std::span<const std::byte> payload, const szip_params& p,
                         std::span<const std::uint64_t> stored_offsets, std::uint64_t total_bytes,
                         std::uint64_t byte_pos, std::uint64_t byte_size);

/// What every szip_decompress_range does first: szip_validate, then
/// locate_range; std::nullopt for an empty range (nothing to decode).
std::optional<range_start> start_range(std::span<const std::byte> payload, const szip_params& p,
                                       std::span<const std::uint64_t> stored_offsets,
                                       std::uint64_t total_bytes, std::uint64_t byte_pos,
                                       std::uint64_t byte_size);

}  // namespace tensogram::codecs::szip_common
