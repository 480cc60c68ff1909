// The 24-byte preamble (spec 01 §3) and 24-byte postamble (spec 01 §7).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace tensogram::format {

struct preamble {
  std::uint16_t version = 3;
  std::uint16_t flags = 0;
  std::uint32_t reserved = 0;
  /// Whole message length, or 0 for a non-back-filled streaming message.
  std::uint64_t total_length = 0;
};

struct postamble {
  std::uint64_t first_footer_offset = 0;
  std::uint64_t total_length = 0;
};

/// True when `bytes` starts with `TENSOGRM`.
[[nodiscard]] bool has_start_magic(std::span<const std::byte> bytes) noexcept;
/// True when `bytes` starts with `39277777`.
[[nodiscard]] bool has_end_magic(std::span<const std::byte> bytes) noexcept;

/// Parses the preamble at the start of `bytes`. Throws `framing_error` for a
/// buffer under 24 bytes, a wrong magic or a version other than 3.
[[nodiscard]] preamble read_preamble(std::span<const std::byte> bytes);
void write_preamble(std::span<std::byte, 24> out, const preamble& p) noexcept;

/// Parses a postamble (24 bytes). Throws `framing_error` without the end magic.
[[nodiscard]] postamble read_postamble(std::span<const std::byte> bytes);
void write_postamble(std::span<std::byte, 24> out, const postamble& p) noexcept;

/// Where a message's frames live: `[24, frames_end)`, with the message
/// occupying `[0, message_end)` of the buffer it was read from.
struct message_extent {
  preamble head;
  std::size_t message_end = 0;
  std::size_t frames_end = 0;
};

/// Applies the decoder rules of §3.2 to the message at the start of `bytes`:
/// total_length bounds, end magic, mirrored length. With total_length 0 the
/// message ends at the end of the buffer, whose end magic we check too (a
/// deliberate strictness over the reference, §21).
[[nodiscard]] message_extent read_message_extent(std::span<const std::byte> bytes);

}  // namespace tensogram::format
