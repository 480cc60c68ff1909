// Frame headers, footers and bodies (spec 01 §4, §5, §13).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
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
/// The header at the start of `bytes` (16 bytes starting with `FR`), or
/// nothing when `read_frame_header` would reject it.
[[nodiscard]] std::optional<frame_header> parse_frame_header(std::span<const std::byte> bytes) noexcept;
/// Why `read_frame_header` rejects the header at the start of `bytes`: the
/// decoder's text (spec 01 §19.2 #9–#11).
[[nodiscard]] std::string frame_header_error(std::span<const std::byte> bytes, std::size_t offset);
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

/// What the size and bound checks of a frame find (§4.5).
enum class frame_fault : std::uint8_t { none, too_small, exceeds_limit };
/// The smallest frame the decoder accepts (§4.5): 36 bytes for a data-object
/// frame, 28 for the others.
[[nodiscard]] constexpr std::uint64_t decoder_min_frame_size(frame_type t) noexcept {
  return t == frame_type::ntensor ? min_data_frame_size : min_frame_size;
}
/// A frame read at `offset` must be at least `min_size` bytes and end at or
/// before `limit`.
[[nodiscard]] frame_fault check_frame_extent(const frame_header& h, std::size_t offset, std::size_t limit,
                                             std::uint64_t min_size) noexcept;
/// True when the frame `bytes` (header to `ENDF`) ends with `ENDF`.
[[nodiscard]] bool has_end_marker(std::span<const std::byte> frame) noexcept;
/// The decoder's text for a fault `check_frame_extent` found with the
/// decoder's minimum (§19.2 #13, #14, #16, #17).
[[nodiscard]] std::string frame_fault_error(frame_fault fault, const frame_header& h, std::size_t offset,
                                            std::size_t limit);
/// The decoder's text for a frame without `ENDF` (§19.2 #15, #18).
[[nodiscard]] std::string missing_end_marker_error(const frame_header& h, std::size_t offset);

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
