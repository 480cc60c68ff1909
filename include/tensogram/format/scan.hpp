// Locating messages in a buffer (spec 01 §16). Scanning never fails: bytes
// that do not form a message are skipped.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

namespace tensogram {

/// One message found by a scan: `[offset, offset + length)` of the buffer.
struct scan_entry {
  std::size_t offset = 0;
  std::size_t length = 0;
  friend bool operator==(const scan_entry&, const scan_entry&) = default;
};

namespace format {

/// The message starting exactly at `pos`, if any, within `[pos, bound)`
/// (§16.1). A streaming message (total_length 0) ends at the first end
/// magic after its preamble.
[[nodiscard]] std::optional<scan_entry> forward_hop(std::span<const std::byte> bytes, std::size_t pos,
                                                    std::size_t bound) noexcept;

/// Forward scan of `[begin, end)` (§16.2).
[[nodiscard]] std::vector<scan_entry> forward_scan(std::span<const std::byte> bytes, std::size_t begin,
                                                   std::size_t end);

/// Backward scan plausibility cap (§16.3).
inline constexpr std::uint64_t default_max_message_size = 4ULL << 30;

/// Bidirectional scan (§16.4), the reference's default; equal to the forward
/// scan on well-formed input, faster on large files.
[[nodiscard]] std::vector<scan_entry> scan(std::span<const std::byte> bytes,
                                           std::uint64_t max_message_size = default_max_message_size);

}  // namespace format
}  // namespace tensogram
