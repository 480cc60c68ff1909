// Per-message layout read from a byte source with as few reads as the
// format allows (spec 01 §15, spec 04 E.3): the header region (metadata and
// index frames) in one read, the footer region in a second one only for
// footer-indexed messages, the whole message only when neither helps.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>

#include "tensogram/core/buffer.hpp"
#include "tensogram/format/scan.hpp"
#include "tensogram/io/byte_source.hpp"
#include "tensogram/message/decode.hpp"

namespace tensogram::io {

/// Bytes read from a message's start (and, for footer-indexed messages,
/// from its end) to find its metadata and index frames.
inline constexpr std::uint64_t layout_region_size = 256 * 1024;

struct cached_layout {
  /// Metadata of a full decode and each object's frame (offsets from the
  /// message start).
  message_layout layout;
  /// The first metadata frame's metadata (what `decode_metadata` returns)
  /// when it differs from `layout.metadata`; null when the two are the same
  /// (one metadata frame, a base entry per object, no preceders), which is
  /// the common case and then costs neither a second parse nor a copy.
  std::shared_ptr<const global_metadata> first_metadata;
};

/// What `decode_metadata` returns for the message of `c`, shared with the
/// `metadata` values handed out, which are never copies.
[[nodiscard]] std::shared_ptr<const global_metadata> first_metadata_of(
    const std::shared_ptr<const cached_layout>& c);

struct loaded_layout {
  std::shared_ptr<const cached_layout> layout;
  /// The whole message, when loading had to read (or happened to read) all
  /// of it; empty otherwise.
  buffer whole;
};

/// Loads the layout of the message at `msg` in `src`. `flags` are the
/// message's preamble flags when the scan kept them: a footer-indexed
/// message then reads its header and footer regions in one round trip.
[[nodiscard]] loaded_layout load_message_layout(byte_source& src, scan_entry msg,
                                                std::optional<std::uint16_t> flags = std::nullopt);

}  // namespace tensogram::io
