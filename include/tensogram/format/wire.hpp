// Constants of wire format v3 (spec 01 §2, §3.1, §4.2, §5).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace tensogram::format {

inline constexpr std::array<char, 8> start_magic = {'T', 'E', 'N', 'S', 'O', 'G', 'R', 'M'};
inline constexpr std::array<char, 8> end_magic = {'3', '9', '2', '7', '7', '7', '7', '7'};
inline constexpr std::array<char, 2> frame_start_marker = {'F', 'R'};
inline constexpr std::array<char, 4> frame_end_marker = {'E', 'N', 'D', 'F'};

inline constexpr std::uint16_t wire_version = 3;
inline constexpr std::uint16_t frame_version = 1;
inline constexpr std::size_t preamble_size = 24;
inline constexpr std::size_t postamble_size = 24;
inline constexpr std::size_t frame_header_size = 16;
inline constexpr std::size_t min_message_size = preamble_size + postamble_size;
/// `[hash u64][ENDF]`, the footer of every non-data frame.
inline constexpr std::size_t common_footer_size = 12;
/// `[cbor_offset u64][hash u64][ENDF]`, the footer of a data-object frame.
inline constexpr std::size_t data_footer_size = 20;
inline constexpr std::size_t min_frame_size = frame_header_size + common_footer_size;     // 28
inline constexpr std::size_t min_data_frame_size = frame_header_size + data_footer_size;  // 36

enum class frame_type : std::uint16_t {
  header_metadata = 1,
  header_index = 2,
  header_hash = 3,
  footer_hash = 5,
  footer_index = 6,
  footer_metadata = 7,
  preceder_metadata = 8,
  ntensor = 9,
};

/// Frame phases; a message's frames never go back to an earlier phase (§6).
enum class phase : std::uint8_t { header = 0, body = 1, footer = 2 };

[[nodiscard]] constexpr phase phase_of(frame_type t) noexcept {
  switch (t) {
    case frame_type::header_metadata:
    case frame_type::header_index:
    case frame_type::header_hash: return phase::header;
    case frame_type::preceder_metadata:
    case frame_type::ntensor: return phase::body;
    default: return phase::footer;
  }
}

[[nodiscard]] constexpr std::size_t footer_size(frame_type t) noexcept {
  return t == frame_type::ntensor ? data_footer_size : common_footer_size;
}

[[nodiscard]] std::string_view frame_type_name(frame_type t) noexcept;

/// Preamble flag bits (§3.1).
namespace message_flags {
inline constexpr std::uint16_t header_metadata = 0x0001;
inline constexpr std::uint16_t footer_metadata = 0x0002;
inline constexpr std::uint16_t header_index = 0x0004;
inline constexpr std::uint16_t footer_index = 0x0008;
inline constexpr std::uint16_t header_hashes = 0x0010;
inline constexpr std::uint16_t footer_hashes = 0x0020;
inline constexpr std::uint16_t preceder_metadata = 0x0040;
inline constexpr std::uint16_t hashes_present = 0x0080;
}  // namespace message_flags

/// Frame header flag bits (§4.2).
namespace frame_flags {
inline constexpr std::uint16_t cbor_after_payload = 0x0001;
inline constexpr std::uint16_t hash_present = 0x0002;
}  // namespace frame_flags

[[nodiscard]] constexpr std::uint64_t align8(std::uint64_t x) noexcept {
  return (x + 7) & ~std::uint64_t{7};
}

}  // namespace tensogram::format
