// Level 1, structure (spec 02 §15.1): preamble, total length and postamble
// (spec 01 §3, §7), then the frame walk — the one walker of
// format/walk.hpp under the validator's rules — whose findings become
// issues; data-object frames are split into descriptor and payload region
// (spec 01 §13.2), and the preamble flags are compared with the frames seen.
#include <array>
#include <cstdio>
#include <limits>
#include <string>

#include "tensogram/cbor/codec.hpp"
#include "tensogram/core/byte_order.hpp"
#include "tensogram/format/frame.hpp"
#include "tensogram/format/preamble.hpp"
#include "tensogram/format/walk.hpp"
#include "validate_internal.hpp"

namespace tensogram::validation {

namespace {

using format::frame_type;

// The 8 magic bytes as the reference prints them (a quoted string with
// non-printable bytes escaped), keeping descriptions valid UTF-8.
std::string quoted_bytes(std::span<const std::byte> b) {
  std::string s = "\"";
  for (std::byte x : b) {
    const auto c = static_cast<unsigned char>(x);
    if (c >= 0x20 && c < 0x7F && c != '"' && c != '\\') {
      s += static_cast<char>(c);
    } else {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", static_cast<unsigned>(c));
      s += buf;
    }
  }
  return s + "\"";
}

struct flag_name {
  std::uint16_t bit;
  std::string_view name;
};
constexpr std::array<flag_name, 7> k_flag_names = {{
    {format::message_flags::header_metadata, "HEADER_METADATA"},
    {format::message_flags::footer_metadata, "FOOTER_METADATA"},
    {format::message_flags::header_index, "HEADER_INDEX"},
    {format::message_flags::footer_index, "FOOTER_INDEX"},
    {format::message_flags::header_hashes, "HEADER_HASHES"},
    {format::message_flags::footer_hashes, "FOOTER_HASHES"},
    {format::message_flags::preceder_metadata, "PRECEDER_METADATA"},
}};

std::uint16_t flag_of(frame_type t) noexcept {
  switch (t) {
    case frame_type::header_metadata: return format::message_flags::header_metadata;
    case frame_type::footer_metadata: return format::message_flags::footer_metadata;
    case frame_type::header_index: return format::message_flags::header_index;
    case frame_type::footer_index: return format::message_flags::footer_index;
    case frame_type::header_hash: return format::message_flags::header_hashes;
    case frame_type::footer_hash: return format::message_flags::footer_hashes;
    case frame_type::preceder_metadata: return format::message_flags::preceder_metadata;
    case frame_type::ntensor: return 0;
  }
  return 0;
}

issue_code issue_code_of(format::walk_issue i) noexcept {
  switch (i) {
    case format::walk_issue::footer_offset_out_of_range: return issue_code::footer_offset_out_of_range;
    case format::walk_issue::footer_offset_mismatch: return issue_code::footer_offset_mismatch;
    case format::walk_issue::truncated_frame_header: return issue_code::truncated_frame_header;
    case format::walk_issue::invalid_frame_header: return issue_code::invalid_frame_header;
    case format::walk_issue::frame_length_overflow: return issue_code::frame_length_overflow;
    case format::walk_issue::frame_too_small: return issue_code::frame_too_small;
    case format::walk_issue::frame_exceeds_message: return issue_code::frame_exceeds_message;
    case format::walk_issue::missing_end_marker: return issue_code::missing_end_marker;
    case format::walk_issue::frame_order_violation: return issue_code::frame_order_violation;
    case format::walk_issue::preceder_not_followed_by_object:
      return issue_code::preceder_not_followed_by_object;
    case format::walk_issue::dangling_preceder: return issue_code::dangling_preceder;
    case format::walk_issue::non_zero_padding: return issue_code::non_zero_padding;
  }
  return issue_code::invalid_frame_header;
}

// Splits a located type-9 frame per spec 01 §13.2; records cbor_offset
// problems. Nothing when the descriptor/payload boundary cannot be located.
std::optional<object_ctx> slice_data_frame(const format::frame_view& f, std::size_t object_index,
                                           issue_list& out) {
  const std::span<const std::byte> frame = f.bytes;
  const std::size_t pos = f.offset;
  const std::size_t total = frame.size();
  const std::size_t footer = total - format::data_footer_size;  // cbor_offset field
  const std::uint64_t co = load_be64(frame.data() + footer);
  if (co < format::frame_header_size || co > footer) {
    out.error(issue_code::cbor_offset_invalid, k_structure, object_index, pos,
              "data object cbor_offset " + str(co) + " out of range [16, " + str(footer) + "] at offset " +
                  str(pos));
    return std::nullopt;
  }
  object_ctx o;
  o.frame_offset = pos;
  o.hash_present = f.hash_present();
  o.hash_slot = f.hash_slot();
  o.hashed_body = f.body();
  const auto cbor_start = static_cast<std::size_t>(co);
  if ((f.header.flags & format::frame_flags::cbor_after_payload) != 0) {
    o.descriptor_cbor = frame.subspan(cbor_start, footer - cbor_start);
    o.region = frame.subspan(format::frame_header_size, cbor_start - format::frame_header_size);
  } else {
    // The descriptor's own length says where the payload starts.
    try {
      const cbor::decoded_item item = cbor::decode_prefix(frame.subspan(cbor_start, footer - cbor_start));
      o.descriptor_cbor = frame.subspan(cbor_start, item.consumed);
      o.region = frame.subspan(cbor_start + item.consumed, footer - cbor_start - item.consumed);
    } catch (const std::exception& e) {
      out.error(
          issue_code::cbor_before_boundary_unknown, k_structure, object_index, pos,
          "CBOR-before descriptor parse failed, cannot determine payload boundary: " + std::string(e.what()));
      return std::nullopt;
    }
  }
  o.payload = o.region;
  return o;
}

// Collects the frames the walk locates and turns its findings into issues.
class structure_sink final : public format::walk_sink {
 public:
  structure_sink(located_frames& w, issue_list& out) : w_(w), out_(out) {}

  bool frame(const format::frame_view& f) override {
    observed |= flag_of(f.header.type);
    if (f.header.type == frame_type::ntensor) {
      if (std::optional<object_ctx> o = slice_data_frame(f, object_index_, out_))
        w_.objects.push_back(std::move(*o));
      ++object_index_;
    } else {
      // A 20–27 byte frame has no room for its hash slot: an empty body
      // (which then fails to parse at level 2).
      const std::size_t body_len =
          f.bytes.size() >= format::min_frame_size ? f.bytes.size() - format::min_frame_size : 0;
      w_.frames.push_back({f.header.type, f.offset, f.bytes.subspan(format::frame_header_size, body_len)});
    }
    return true;
  }

  void finding(format::walk_finding f) override {
    out_.add(issue_code_of(f.issue), k_structure,
             f.severity == format::walk_severity::error ? issue_severity::error : issue_severity::warning,
             std::nullopt, f.offset, std::move(f.message));
  }

  /// Flags of the frame types seen (preamble flag bits).
  std::uint16_t observed = 0;

 private:
  located_frames& w_;
  issue_list& out_;
  std::size_t object_index_ = 0;
};

// Preamble, total length and postamble (spec 01 §3, §3.2, §7): the offset
// of the postamble, or nothing after a fatal problem.
std::optional<std::size_t> check_extent(std::span<const std::byte> buf, format::preamble& pre,
                                        issue_list& out) {
  using format::min_message_size;
  using format::postamble_size;
  if (buf.size() < format::preamble_size) {
    out.error(issue_code::buffer_too_short, k_structure, std::nullopt, 0,
              "buffer too short for preamble: " + str(buf.size()) + " < 24");
    return std::nullopt;
  }
  if (!format::has_start_magic(buf)) {
    out.error(issue_code::invalid_magic, k_structure, std::nullopt, 0,
              "invalid magic bytes: expected TENSOGRM, got " + quoted_bytes(buf.first(8)));
    return std::nullopt;
  }
  try {
    pre = format::read_preamble(buf);
  } catch (const std::exception& e) {
    out.error(issue_code::preamble_parse_failed, k_structure, std::nullopt, 0,
              "preamble parse failed: " + std::string(e.what()));
    return std::nullopt;
  }
  if (pre.total_length == 0) {
    // Streaming message: it ends at the end of the buffer (spec 01 §3.2).
    const std::size_t post = buf.size() - postamble_size;
    if (!format::has_end_magic(buf.subspan(post + 16))) {
      out.error(issue_code::postamble_invalid, k_structure, std::nullopt, post,
                "missing or invalid postamble in streaming message");
      return std::nullopt;
    }
    return post;
  }
  if constexpr (sizeof(std::size_t) < sizeof(std::uint64_t)) {
    if (pre.total_length > std::numeric_limits<std::size_t>::max()) {
      out.error(issue_code::total_length_overflow, k_structure, std::nullopt, 16,
                "total_length " + str(pre.total_length) + " overflows usize");
      return std::nullopt;
    }
  }
  const auto total = static_cast<std::size_t>(pre.total_length);
  if (total > buf.size()) {
    out.error(issue_code::total_length_exceeds_buffer, k_structure, std::nullopt, 16,
              "total_length " + str(total) + " exceeds buffer size " + str(buf.size()));
    return std::nullopt;
  }
  if (total < min_message_size) {
    out.error(issue_code::total_length_too_small, k_structure, std::nullopt, 16,
              "total_length " + str(total) + " is smaller than minimum message size 48");
    return std::nullopt;
  }
  const std::size_t post = total - postamble_size;
  if (!format::has_end_magic(buf.subspan(post + 16))) {
    out.error(issue_code::postamble_invalid, k_structure, std::nullopt, post,
              "postamble invalid: no end magic 39277777 at offset " + str(post + 16));
    return std::nullopt;
  }
  // The decoder rejects a mirrored length that is neither 0 nor equal
  // (spec 01 §3.2); the validator must not pass what cannot be decoded.
  const std::uint64_t mirrored = load_be64(buf.data() + post + 8);
  if (mirrored != 0 && mirrored != pre.total_length) {
    out.error(issue_code::postamble_invalid, k_structure, std::nullopt, post + 8,
              "postamble invalid: total_length " + str(mirrored) + " does not match preamble total_length " +
                  str(pre.total_length));
    return std::nullopt;
  }
  return post;
}

// Preamble flag bits 0–6 against the frames seen; bit 7 is checked by the
// integrity level (spec 01 §3.1).
void check_flags(std::uint16_t declared, std::uint16_t observed, issue_list& out) {
  for (const flag_name& f : k_flag_names) {
    if (((declared & f.bit) != 0) != ((observed & f.bit) != 0)) {
      out.warning(issue_code::flag_mismatch, k_structure, std::nullopt, 10,
                  std::string(f.name) + " flag mismatch: declared " +
                      ((declared & f.bit) != 0 ? "set" : "clear") + ", observed " +
                      ((observed & f.bit) != 0 ? "present" : "absent"));
    }
  }
}

}  // namespace

std::optional<located_frames> check_structure(std::span<const std::byte> buf, issue_list& out) {
  format::preamble pre;
  const std::optional<std::size_t> post = check_extent(buf, pre, out);
  if (!post) return std::nullopt;
  located_frames w;
  w.preamble_flags = pre.flags;
  structure_sink sink(w, out);
  (void)format::walk({buf, 0, format::preamble_size, *post}, format::walk_policy::validator(), sink);
  check_flags(pre.flags, sink.observed, out);
  if ((sink.observed & (format::message_flags::header_metadata | format::message_flags::footer_metadata)) ==
      0) {
    out.error(issue_code::no_metadata_frame, k_structure, std::nullopt, std::nullopt,
              "no metadata frame found (neither header nor footer)");
  }
  return w;
}

}  // namespace tensogram::validation
