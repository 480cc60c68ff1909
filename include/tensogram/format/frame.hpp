// Frame headers, footers and bodies (spec 01 §4, §5, §13).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "tensogram/format/wire.hpp"

namespace tensogram::format {

struct frame_header {
  frame_type type = frame_type::header_metadata;
  std::uint16_t version = frame_version;
  std::uint16_t flags = 0;
  /// Bytes from the frame start through `ENDF`, without trailing padding.
  std::uint64_t total_length = 0;
};

/// True when `bytes` starts with the `FR` marker.
[[nodiscard]] bool has_frame_marker(std::span<const std::byte> bytes) noexcept;

/// Parses the 16-byte header at the start of `bytes`; `offset` is only used
/// in error messages. Throws `framing_error` for a missing `FR`, frame type
/// 0, 4 (obsolete v2 frame) or ≥ 10.
[[nodiscard]] frame_header read_frame_header(std::span<const std::byte> bytes, std::size_t offset);
void write_frame_header(std::span<std::byte, 16> out, const frame_header& h) noexcept;

/// One frame located inside a message.
struct frame_view {
  std::size_t offset = 0;  // from the message start
  frame_header header;
  std::span<const std::byte> bytes;  // the whole frame, header to ENDF
  /// The hashed body (§4.4): CBOR for types 1–8; payload region + CBOR for 9.
  [[nodiscard]] std::span<const std::byte> body() const noexcept {
    return bytes.subspan(frame_header_size, bytes.size() - frame_header_size - footer_size(header.type));
  }
  [[nodiscard]] std::uint64_t hash_slot() const noexcept;
  [[nodiscard]] bool hash_present() const noexcept { return (header.flags & frame_flags::hash_present) != 0; }
};

/// Checks the size limits and the `ENDF` marker of a frame whose header was
/// read at `offset` of `message`, with frames required to end at or before
/// `limit`; returns the located frame. Throws `framing_error` (§19.2 #12–18).
[[nodiscard]] frame_view locate_frame(std::span<const std::byte> message, std::size_t offset,
                                      const frame_header& h, std::size_t limit);

/// Writes a complete non-data frame (header, body, hash slot, ENDF) at the
/// start of `dst`, which must hold `28 + body.size()` bytes; returns that size.
std::size_t write_frame(std::span<std::byte> dst, frame_type type, std::span<const std::byte> body,
                        bool hashing);

/// Appends a complete non-data frame (header, body, hash slot, ENDF) plus
/// zero padding to the next multiple of 8 of `out.size()` relative to
/// `message_start`.
void append_frame(std::vector<std::byte>& out, std::size_t message_start, frame_type type,
                  std::span<const std::byte> body, bool hashing);

/// Appends zero bytes until `(out.size() - message_start) % 8 == 0`.
void pad_to_8(std::vector<std::byte>& out, std::size_t message_start);

}  // namespace tensogram::format
