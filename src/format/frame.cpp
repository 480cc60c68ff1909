#include "tensogram/format/frame.hpp"

#include <cstring>
#include <string>

#include "tensogram/core/byte_order.hpp"
#include "tensogram/core/error.hpp"
#include "tensogram/format/hash.hpp"

namespace tensogram::format {

std::string_view frame_type_name(frame_type t) noexcept {
  switch (t) {
    case frame_type::header_metadata: return "HeaderMetadata";
    case frame_type::header_index: return "HeaderIndex";
    case frame_type::header_hash: return "HeaderHash";
    case frame_type::footer_hash: return "FooterHash";
    case frame_type::footer_index: return "FooterIndex";
    case frame_type::footer_metadata: return "FooterMetadata";
    case frame_type::preceder_metadata: return "PrecederMetadata";
    case frame_type::ntensor: return "NTensorFrame";
  }
  return "unknown";
}

bool has_frame_marker(std::span<const std::byte> bytes) noexcept {
  return bytes.size() >= 2 && std::memcmp(bytes.data(), frame_start_marker.data(), 2) == 0;
}

std::optional<frame_header> parse_frame_header(std::span<const std::byte> bytes) noexcept {
  const std::uint16_t type = load_be16(bytes.data() + 2);
  if (type == 0 || type == 4 || type >= 10) return std::nullopt;
  frame_header h;
  h.type = static_cast<frame_type>(type);
  h.version = load_be16(bytes.data() + 4);
  h.flags = load_be16(bytes.data() + 6);
  h.total_length = load_be64(bytes.data() + 8);
  return h;
}

std::string frame_header_error(std::span<const std::byte> bytes, std::size_t offset) {
  if (bytes.size() < frame_header_size) return "truncated frame header at offset " + std::to_string(offset);
  if (!has_frame_marker(bytes)) return "invalid frame magic at offset " + std::to_string(offset);
  const std::uint16_t type = load_be16(bytes.data() + 2);
  if (type == 4) {
    return "reserved frame type 4 (obsolete v2 NTensorFrame) not supported in v3 (at offset " +
           std::to_string(offset) + ")";
  }
  return "unknown frame type: " + std::to_string(type) + " at offset " + std::to_string(offset);
}

frame_header read_frame_header(std::span<const std::byte> bytes, std::size_t offset) {
  if (bytes.size() >= frame_header_size && has_frame_marker(bytes)) {
    if (const std::optional<frame_header> h = parse_frame_header(bytes)) return *h;
  }
  throw framing_error(frame_header_error(bytes, offset));
}

void write_frame_header(std::span<std::byte, 16> out, const frame_header& h) noexcept {
  std::memcpy(out.data(), frame_start_marker.data(), 2);
  store_be16(out.data() + 2, static_cast<std::uint16_t>(h.type));
  store_be16(out.data() + 4, h.version);
  store_be16(out.data() + 6, h.flags);
  store_be64(out.data() + 8, h.total_length);
}

std::uint64_t frame_view::hash_slot() const noexcept {
  return load_be64(bytes.data() + bytes.size() - common_footer_size);
}

frame_fault check_frame_extent(const frame_header& h, std::size_t offset, std::size_t limit,
                               std::uint64_t min_size) noexcept {
  if (h.total_length < min_size) return frame_fault::too_small;
  // Frames must end at or before `limit` (the postamble start): stricter than
  // the reference's buffer-end bound, as spec 01 §4.5 recommends.
  if (offset > limit || h.total_length > limit - offset) return frame_fault::exceeds_limit;
  return frame_fault::none;
}

bool has_end_marker(std::span<const std::byte> frame) noexcept {
  return frame.size() >= frame_end_marker.size() &&
         std::memcmp(frame.data() + frame.size() - frame_end_marker.size(), frame_end_marker.data(),
                     frame_end_marker.size()) == 0;
}

std::string frame_fault_error(frame_fault fault, const frame_header& h, std::size_t offset,
                              std::size_t limit) {
  const bool data = h.type == frame_type::ntensor;
  const std::string where = " at offset " + std::to_string(offset);
  if (fault == frame_fault::too_small) {
    if (data) return "data object frame too small: total_length " + std::to_string(h.total_length) + where;
    return "frame total_length " + std::to_string(h.total_length) + where + " is smaller than minimum 28";
  }
  return std::string(data ? "data object frame" : "frame") + " total_length " +
         std::to_string(h.total_length) + " exceeds buffer (frame" + where + ", frames end at " +
         std::to_string(limit) + ")";
}

std::string missing_end_marker_error(const frame_header& h, std::size_t offset) {
  if (h.type == frame_type::ntensor)
    return "missing ENDF marker in data object frame at offset " + std::to_string(offset);
  return "missing ENDF marker at offset " +
         std::to_string(offset + static_cast<std::size_t>(h.total_length) - 4);
}

frame_view locate_frame(std::span<const std::byte> message, std::size_t offset, const frame_header& h,
                        std::size_t limit) {
  const frame_fault fault = check_frame_extent(h, offset, limit, decoder_min_frame_size(h.type));
  if (fault != frame_fault::none) throw framing_error(frame_fault_error(fault, h, offset, limit));
  frame_view f;
  f.offset = offset;
  f.header = h;
  f.bytes = message.subspan(offset, static_cast<std::size_t>(h.total_length));
  if (!has_end_marker(f.bytes)) throw framing_error(missing_end_marker_error(h, offset));
  return f;
}

void pad_to_8(std::vector<std::byte>& out, std::size_t message_start) {
  const std::size_t rel = out.size() - message_start;
  out.resize(out.size() + (align8(rel) - rel), std::byte{0});
}

std::size_t write_frame(std::span<std::byte> dst, frame_type type, std::span<const std::byte> body,
                        bool hashing) {
  const std::size_t total = frame_header_size + body.size() + common_footer_size;
  frame_header h;
  h.type = type;
  h.flags = hashing ? frame_flags::hash_present : 0;
  h.total_length = total;
  write_frame_header(dst.first<16>(), h);
  if (!body.empty()) std::memcpy(dst.data() + frame_header_size, body.data(), body.size());
  std::byte* footer = dst.data() + frame_header_size + body.size();
  store_be64(footer, hashing ? xxh3_64(body) : 0);
  std::memcpy(footer + 8, frame_end_marker.data(), 4);
  return total;
}

void append_frame(std::vector<std::byte>& out, std::size_t message_start, frame_type type,
                  std::span<const std::byte> body, bool hashing) {
  const std::size_t start = out.size();
  out.resize(start + frame_header_size + body.size() + common_footer_size);
  write_frame(std::span<std::byte>(out).subspan(start), type, body, hashing);
  pad_to_8(out, message_start);
}

}  // namespace tensogram::format
