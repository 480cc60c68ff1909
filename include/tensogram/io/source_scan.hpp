// Scanning a byte source for messages with bounded memory (spec 01 §16,
// spec 04 E.3): preamble and postamble probes hop from message to message;
// only regions that are not well formed are read in chunks.
#pragma once

#include <cstdint>
#include <vector>

#include "tensogram/format/scan.hpp"
#include "tensogram/io/byte_source.hpp"

namespace tensogram {

/// How a file finds its messages (spec 01 §16).
enum class scan_mode {
  /// Forward preamble hops paired with backward postamble hops from the end
  /// (the reference's default). Each round reads one forward and one
  /// backward probe in a single batch (one round trip remotely) and finds
  /// two messages.
  bidirectional,
  /// Forward hops only: one probe, one message per round.
  forward,
};

namespace io {

/// Bytes read per chunk where the scanner has to search (garbage between
/// messages, the end of a streaming message): the scanner's memory bound.
inline constexpr std::uint64_t scan_chunk_size = 64 * 1024;

/// Messages of `source` as `(offset, length)` in file order. On well-formed
/// input the result equals `format::scan` of the whole contents; garbage
/// between messages and truncated tails are skipped (spec 01 §16.2, §16.5).
/// Memory use is bounded by `scan_chunk_size` plus the result. A mapped
/// source is scanned in place. With `flags`, also returns each message's
/// preamble flags (the scan reads them anyway), parallel to the result.
[[nodiscard]] std::vector<scan_entry> scan_source(
    byte_source& source, scan_mode mode = scan_mode::bidirectional,
    std::uint64_t max_message_size = format::default_max_message_size,
    std::vector<std::uint16_t>* flags = nullptr);

}  // namespace io
}  // namespace tensogram
