#include "tensogram/format/walk.hpp"

#include <algorithm>
#include <array>
#include <limits>
#include <string>
#include <string_view>
#include <utility>

#include "tensogram/core/byte_order.hpp"
#include "tensogram/core/error.hpp"

namespace tensogram::format {

void walk_sink::finding(walk_finding /*f*/) {}

namespace {

std::string str(std::uint64_t v) {
  return std::to_string(v);
}

bool all_zero(std::span<const std::byte> b) noexcept {
  return std::all_of(b.begin(), b.end(), [](std::byte x) { return x == std::byte{0}; });
}

// A phase in the decoder's words, or in the validator's.
std::string_view phase_name(phase p, bool validator) noexcept {
  static constexpr std::array<std::string_view, 3> decoder_names = {"header", "data object", "footer"};
  static constexpr std::array<std::string_view, 3> validator_names = {"header", "data-object", "footer"};
  return (validator ? validator_names : decoder_names)[static_cast<std::size_t>(p)];
}

constexpr std::string_view k_order_rule =
    " phase — frames must appear in order: headers, data objects, footers";

// The next frame is looked for at the absolute offset after the frame
// rounded up to 8, unless that leaves the frame area (§8).
std::size_t round_offset(std::size_t frame_end, std::size_t end) noexcept {
  const std::uint64_t aligned = align8(frame_end);
  return aligned <= end ? static_cast<std::size_t>(aligned) : frame_end;
}

// One walk in progress. Offsets are from the message start.
class walker {
 public:
  walker(const walk_region& region, const walk_policy& policy, walk_sink& sink)
      : region_(region), policy_(policy), sink_(sink) {}

  walk_outcome run();

 private:
  [[nodiscard]] bool validating() const noexcept { return policy_.rules == walk_rules::validate; }
  [[nodiscard]] bool checks_order() const noexcept {
    return policy_.rules == walk_rules::decode || policy_.rules == walk_rules::validate;
  }

  // Message bytes [pos, pos + len): false (asking for them) when they lie
  // outside the walked bytes.
  bool ensure(std::size_t pos, std::size_t len);
  [[nodiscard]] std::span<const std::byte> at(std::size_t pos, std::size_t len) const noexcept {
    return region_.bytes.subspan(pos - region_.bytes_offset, len);
  }

  // Hands a finding on per the policy; true when the walk may go on.
  bool report(walk_issue issue, walk_severity severity, std::optional<std::uint64_t> offset,
              std::string message);
  // A finding after which the frame sequence cannot be followed.
  void fatal(walk_issue issue, std::optional<std::uint64_t> offset, std::string message) {
    (void)report(issue, walk_severity::error, offset, std::move(message));
    outcome_.end = walk_end::finding;
  }
  // A padding finding unless [from, to) is zero; false when it ended the walk.
  bool warn_unless_zero(std::size_t from, std::size_t to, std::size_t at_offset, std::string_view text);

  bool seek_header(std::size_t& pos);
  bool check_place(std::size_t pos, const frame_header& h);
  std::optional<frame_view> locate(std::size_t pos, const frame_header& h);
  bool yield(const frame_view& f);

  std::optional<std::size_t> decode_frame(std::size_t pos, const frame_header& h);
  std::optional<std::size_t> metadata_only_frame(std::size_t pos, const frame_header& h);
  std::optional<std::size_t> prepass_frame(std::size_t pos, const frame_header& h);
  std::optional<std::size_t> validate_frame(std::size_t pos, const frame_header& h);
  std::optional<std::size_t> region_frame(std::size_t pos, const frame_header& h);

  bool check_footer_offset_range();
  void finish_sequence();

  const walk_region& region_;
  const walk_policy policy_;
  walk_sink& sink_;
  walk_outcome outcome_;
  // Sequence state (§6). Plain flags and offsets rather than optionals:
  // GCC 12 -O3 warns maybe-uninitialized on optional<size_t> members here.
  phase phase_ = phase::header;
  bool preceder_pending_ = false;
  std::size_t preceder_at_ = 0;
  bool footer_seen_ = false;
  std::size_t first_footer_ = 0;
};

bool walker::ensure(std::size_t pos, std::size_t len) {
  const std::size_t from = region_.bytes_offset;
  if (pos >= from && pos - from <= region_.bytes.size() && len <= region_.bytes.size() - (pos - from)) {
    return true;
  }
  outcome_.end = walk_end::needs_bytes;
  outcome_.position = pos;
  outcome_.needed = len;
  return false;
}

bool walker::report(walk_issue issue, walk_severity severity, std::optional<std::uint64_t> offset,
                    std::string message) {
  switch (policy_.action) {
    case finding_action::raise: throw framing_error(message);
    case finding_action::stop:
      outcome_.end = walk_end::finding;
      outcome_.position = offset ? static_cast<std::size_t>(*offset) : region_.end;
      outcome_.finding = walk_finding{issue, severity, offset, std::move(message)};
      return false;
    case finding_action::collect:
      sink_.finding(walk_finding{issue, severity, offset, std::move(message)});
      break;
  }
  return true;
}

bool walker::warn_unless_zero(std::size_t from, std::size_t to, std::size_t at_offset,
                              std::string_view text) {
  if (all_zero(at(from, to - from))) return true;
  return report(walk_issue::non_zero_padding, walk_severity::warning, at_offset,
                std::string(text) + str(at_offset));
}

// Moves `pos` over the bytes between frames to the next frame header (§8);
// false when the walk ends there.
bool walker::seek_header(std::size_t& pos) {
  const std::size_t end = region_.end;
  while (pos < end) {
    if (validating()) {
      if (!ensure(pos, std::min(end - pos, frame_header_size))) return false;
      if (end - pos < 2) {
        (void)warn_unless_zero(pos, end, pos, "unexpected non-zero padding bytes at offset ");
        return false;
      }
      if (has_frame_marker(at(pos, 2))) {
        if (end - pos >= frame_header_size) return true;
        fatal(walk_issue::truncated_frame_header, pos, "truncated frame header at offset " + str(pos));
        return false;
      }
      // Frames start at multiples of 8: skip to the next one.
      const std::size_t next = std::min<std::size_t>(static_cast<std::size_t>(align8(pos + 1)), end);
      if (!warn_unless_zero(pos, next, pos, "unexpected non-zero padding bytes at offset ")) return false;
      pos = next;
      continue;
    }
    if (end - pos < frame_header_size) break;
    if (!ensure(pos, frame_header_size)) return false;
    if (has_frame_marker(at(pos, 2))) return true;
    if (policy_.rules == walk_rules::phase_region) {
      fatal(walk_issue::invalid_frame_header, pos, frame_header_error(at(pos, frame_header_size), pos));
      return false;
    }
    ++pos;  // any other byte between frames is tolerated
  }
  outcome_.end = walk_end::frames_end;
  outcome_.position = pos;
  return false;
}

// The frame's place in the sequence (§6): phases never go back; a preceder
// is followed by a data-object frame. False when a finding ended the walk.
bool walker::check_place(std::size_t pos, const frame_header& h) {
  const phase ph = phase_of(h.type);
  if (ph < phase_) {
    const std::string_view type = frame_type_name(h.type);
    std::string text = validating()
                           ? "frame " + std::string(type) + " at offset " + str(pos) + " appears after the " +
                                 std::string(phase_name(phase_, true)) + std::string(k_order_rule)
                           : "unexpected " + std::string(type) + " frame at offset " + str(pos) + " after " +
                                 std::string(phase_name(phase_, false)) + std::string(k_order_rule);
    if (!report(walk_issue::frame_order_violation, walk_severity::error, pos, std::move(text))) return false;
  }
  if (ph == phase::footer && !footer_seen_) {
    footer_seen_ = true;
    first_footer_ = pos;
  }
  phase_ = std::max(phase_, ph);
  if (preceder_pending_ && h.type != frame_type::ntensor) {
    std::string text = "PrecederMetadata must be followed by a data-object frame, got " +
                       std::string(frame_type_name(h.type));
    text += validating()
                ? " at offset " + str(pos)
                : " (preceder at offset " + str(preceder_at_) + ", next frame at offset " + str(pos) + ")";
    if (!report(walk_issue::preceder_not_followed_by_object, walk_severity::error, pos, std::move(text))) {
      return false;
    }
    preceder_pending_ = false;
  }
  if (h.type == frame_type::preceder_metadata) {
    preceder_pending_ = true;
    preceder_at_ = pos;
  } else if (h.type == frame_type::ntensor) {
    preceder_pending_ = false;
  }
  return true;
}

// The decoder's size, bound and `ENDF` checks (§4.5).
std::optional<frame_view> walker::locate(std::size_t pos, const frame_header& h) {
  const frame_fault fault = check_frame_extent(h, pos, region_.end, decoder_min_frame_size(h.type));
  if (fault != frame_fault::none) {
    fatal(fault == frame_fault::too_small ? walk_issue::frame_too_small : walk_issue::frame_exceeds_message,
          pos, frame_fault_error(fault, h, pos, region_.end));
    return std::nullopt;
  }
  const auto len = static_cast<std::size_t>(h.total_length);
  if (!ensure(pos, len)) return std::nullopt;
  const frame_view f{pos, h, at(pos, len)};
  if (!has_end_marker(f.bytes)) {
    fatal(walk_issue::missing_end_marker, pos + len - frame_end_marker.size(),
          missing_end_marker_error(h, pos));
    return std::nullopt;
  }
  return f;
}

bool walker::yield(const frame_view& f) {
  if (sink_.frame(f)) return true;
  outcome_.end = walk_end::sink;
  outcome_.position = f.offset;
  return false;
}

// §14.1: the place is checked as soon as the header is read.
std::optional<std::size_t> walker::decode_frame(std::size_t pos, const frame_header& h) {
  if (!check_place(pos, h)) return std::nullopt;
  const std::optional<frame_view> f = locate(pos, h);
  if (!f || !yield(*f)) return std::nullopt;
  // The frame length rounded up, unless that leaves the frame area.
  const std::uint64_t next = pos + align8(h.total_length);
  return next <= region_.end ? static_cast<std::size_t>(next)
                             : pos + static_cast<std::size_t>(h.total_length);
}

// §14.2: metadata frames are located, the others skipped.
std::optional<std::size_t> walker::metadata_only_frame(std::size_t pos, const frame_header& h) {
  if (h.type == frame_type::header_metadata || h.type == frame_type::footer_metadata) {
    const std::optional<frame_view> f = locate(pos, h);
    if (!f || !yield(*f)) return std::nullopt;
  } else {
    if (h.total_length < frame_header_size) {
      fatal(walk_issue::frame_too_small, pos,
            "frame at offset " + str(pos) + " has total_length " + str(h.total_length) + " < 16");
      return std::nullopt;
    }
    if (h.total_length > region_.end - pos) {
      outcome_.end = walk_end::frames_end;
      outcome_.position = pos;
      return std::nullopt;
    }
  }
  return round_offset(pos + static_cast<std::size_t>(h.total_length), region_.end);
}

// §14.3: every frame must end inside the frame area.
std::optional<std::size_t> walker::prepass_frame(std::size_t pos, const frame_header& h) {
  if (h.total_length > region_.end - pos) {
    fatal(walk_issue::frame_exceeds_message, pos,
          "frame at offset " + str(pos) + " (total_length " + str(h.total_length) +
              ") runs past first-message end " + str(region_.end));
    return std::nullopt;
  }
  const auto len = static_cast<std::size_t>(h.total_length);
  if (h.type == frame_type::ntensor) {
    if (!ensure(pos, len) || !yield(frame_view{pos, h, at(pos, len)})) return std::nullopt;
  }
  // A frame shorter than its own header would not move the walk (length 0
  // at an aligned offset loops forever): step over the header at least and
  // leave the error to the decoder's walk.
  return round_offset(pos + std::max(len, frame_header_size), region_.end);
}

// Spec 02 §15.1: a frame that cannot be located ends the walk; its place is
// judged once it is; non-zero padding after it is reported.
std::optional<std::size_t> walker::validate_frame(std::size_t pos, const frame_header& h) {
  const std::uint64_t len = h.total_length;
  const std::uint64_t min_size =
      h.type == frame_type::ntensor ? min_data_frame_size : frame_header_size + frame_end_marker.size();
  switch (check_frame_extent(h, pos, region_.end, min_size)) {
    case frame_fault::none: break;
    case frame_fault::too_small:
      fatal(walk_issue::frame_too_small, pos,
            "frame at offset " + str(pos) + " total_length " + str(len) + " < minimum " + str(min_size));
      return std::nullopt;
    case frame_fault::exceeds_limit:
      if (len > std::numeric_limits<std::size_t>::max() - pos) {
        fatal(walk_issue::frame_length_overflow, pos,
              "frame at offset " + str(pos) + " total_length " + str(len) + " causes overflow");
      } else {
        fatal(walk_issue::frame_exceeds_message, pos,
              "frame at offset " + str(pos) + " extends into postamble (frame_end=" + str(pos + len) +
                  ", postamble_start=" + str(region_.end) + ")");
      }
      return std::nullopt;
  }
  const std::size_t frame_end = pos + static_cast<std::size_t>(len);
  if (!ensure(pos, frame_end - pos)) return std::nullopt;
  const frame_view f{pos, h, at(pos, frame_end - pos)};
  if (!has_end_marker(f.bytes)) {
    const std::size_t endf = frame_end - frame_end_marker.size();
    fatal(walk_issue::missing_end_marker, endf,
          "missing ENDF marker at offset " + str(endf) + " for frame starting at " + str(pos));
    return std::nullopt;
  }
  if (!check_place(pos, h) || !yield(f)) return std::nullopt;
  const std::size_t next = round_offset(frame_end, region_.end);
  if (next != frame_end &&
      !warn_unless_zero(frame_end, next, frame_end, "non-zero alignment padding after frame at offset ")) {
    return std::nullopt;
  }
  return next;
}

// §15: consecutive frames of one phase.
std::optional<std::size_t> walker::region_frame(std::size_t pos, const frame_header& h) {
  if (phase_of(h.type) != policy_.region_phase) {
    outcome_.end = walk_end::other_phase;
    outcome_.position = pos;
    return std::nullopt;
  }
  const std::optional<frame_view> f = locate(pos, h);
  if (!f || !yield(*f)) return std::nullopt;
  return round_offset(pos + static_cast<std::size_t>(h.total_length), region_.end);
}

// §7: first_footer_offset lies in [24, postamble offset]. False when a
// finding ended the walk.
bool walker::check_footer_offset_range() {
  if (!ensure(region_.end, 8)) return false;
  const std::uint64_t ffo = load_be64(at(region_.end, 8).data());
  if (ffo >= preamble_size && ffo <= region_.end) return true;
  return report(walk_issue::footer_offset_out_of_range, walk_severity::error, region_.end,
                "first_footer_offset " + str(ffo) + " out of range [24, " + str(region_.end) + "]");
}

// The rules that look at the whole sequence once it has been walked.
void walker::finish_sequence() {
  if (checks_order() && preceder_pending_) {
    const bool go_on =
        validating()
            ? report(walk_issue::dangling_preceder, walk_severity::error, std::nullopt,
                     "dangling PrecederMetadata: no DataObject frame followed")
            : report(walk_issue::dangling_preceder, walk_severity::error, preceder_at_,
                     "dangling PrecederMetadata: no data-object frame followed (preceder at offset " +
                         str(preceder_at_) + ")");
    if (!go_on) return;
  }
  if (validating() && ensure(region_.end, 8)) {
    // §7: it names the first footer frame, or the postamble without one.
    const std::uint64_t ffo = load_be64(at(region_.end, 8).data());
    const std::size_t expected = footer_seen_ ? first_footer_ : region_.end;
    if (ffo != expected) {
      (void)report(walk_issue::footer_offset_mismatch, walk_severity::warning, std::nullopt,
                   "first_footer_offset " + str(ffo) + " does not match actual first footer position " +
                       str(expected));
    }
  }
}

walk_outcome walker::run() {
  std::size_t pos = region_.begin;
  outcome_.end = walk_end::frames_end;
  outcome_.position = pos;
  if (validating() && !check_footer_offset_range()) return outcome_;
  while (seek_header(pos)) {
    const std::optional<frame_header> h = parse_frame_header(at(pos, frame_header_size));
    if (!h) {
      std::string text = frame_header_error(at(pos, frame_header_size), pos);
      if (validating())
        text = "invalid frame header at offset " + str(pos) + ": " + framing_error(text).what();
      fatal(walk_issue::invalid_frame_header, pos, std::move(text));
      break;
    }
    std::optional<std::size_t> next;
    switch (policy_.rules) {
      case walk_rules::decode: next = decode_frame(pos, *h); break;
      case walk_rules::decode_metadata: next = metadata_only_frame(pos, *h); break;
      case walk_rules::hash_prepass: next = prepass_frame(pos, *h); break;
      case walk_rules::validate: next = validate_frame(pos, *h); break;
      case walk_rules::phase_region: next = region_frame(pos, *h); break;
    }
    if (!next) break;
    pos = *next;
    outcome_.position = pos;
  }
  // A collecting walk ended by a finding still judges what it has seen.
  const bool collected = policy_.action == finding_action::collect && outcome_.end == walk_end::finding;
  if (outcome_.end == walk_end::frames_end || collected) finish_sequence();
  return outcome_;
}

}  // namespace

walk_outcome walk(const walk_region& region, const walk_policy& policy, walk_sink& sink) {
  return walker(region, policy, sink).run();
}

}  // namespace tensogram::format
