// The frame walker: the one implementation of the frame sequence rules of
// spec 01 §6–§8 (phase order, preceder pairing, frame bounds and `ENDF`,
// padding between frames, the postamble's first_footer_offset), for every
// reader of a message: the decoder (§14.1–§14.3), the validator (spec 02
// §15.1) and random access through an index (§15).
//
// The reference walks frames in several places with small, documented
// differences (which frames are checked, how the walk steps over bytes
// between frames, how it rounds to the next frame); `walk_rules` names each
// variant, so that every variant lives here, side by side.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "tensogram/format/frame.hpp"
#include "tensogram/format/wire.hpp"

namespace tensogram::format {

/// Which reader walks, and so which variant of the rules applies and in
/// whose words findings are reported.
enum class walk_rules : std::uint8_t {
  /// Full decode (§14.1): bytes other than `FR` between frames are skipped
  /// one at a time; every frame is checked (§4.5 sizes, bounds, `ENDF`)
  /// and so is its place (§6), before its body is looked at; the next
  /// frame is looked for at the frame start plus its length rounded to 8.
  decode,
  /// Metadata-only decode (§14.2): no ordering checks; only metadata frames
  /// (types 1, 7) are located, the others merely skipped (length ≥ 16; one
  /// that runs past the frame area ends the walk quietly).
  decode_metadata,
  /// Hash verification pre-pass (§14.3): no ordering checks; every frame
  /// must end inside the frame area; data-object frames are passed on with
  /// only that check (the pre-pass locates those it verifies itself).
  hash_prepass,
  /// The validator (spec 02 §15.1): findings are collected; a frame the
  /// walk cannot locate ends it, an ordering problem does not. Frames start
  /// at multiples of 8 (non-zero bytes skipped to get there are reported),
  /// non-data frames need only room for header and `ENDF` (20 bytes), the
  /// place of a frame is judged once it is located, and the postamble's
  /// first_footer_offset is checked against the frames found (§7).
  validate,
  /// The frames of one phase (`walk_policy::region_phase`), one after the
  /// other at 8-aligned offsets, as random access reads a header or footer
  /// region (§15). The walk ends at the first frame of another phase; any
  /// other irregularity is a finding (the caller then walks the whole
  /// message instead).
  phase_region,
};

/// What a walk can find wrong with a frame sequence. The names are those of
/// the validator's issue codes for the same conditions (spec 02 §15.2).
enum class walk_issue : std::uint8_t {
  footer_offset_out_of_range,
  footer_offset_mismatch,
  truncated_frame_header,
  invalid_frame_header,
  frame_length_overflow,
  frame_too_small,
  frame_exceeds_message,
  missing_end_marker,
  frame_order_violation,
  preceder_not_followed_by_object,
  dangling_preceder,
  non_zero_padding,
};

enum class walk_severity : std::uint8_t { error, warning };

struct walk_finding {
  walk_issue issue = walk_issue::invalid_frame_header;
  walk_severity severity = walk_severity::error;
  /// Offset from the message start, when the finding has a place.
  std::optional<std::uint64_t> offset;
  /// In the words of the reader the rules belong to: the decoder's
  /// framing error text, or the validator's issue description.
  std::string message;
};

/// What the walk does with a finding.
enum class finding_action : std::uint8_t {
  /// Throw `framing_error(message)` (the decoders).
  raise,
  /// End the walk and return the finding (`walk_outcome::finding`).
  stop,
  /// Pass it to `walk_sink::finding` and go on where the bytes allow.
  collect,
};

struct walk_policy {
  walk_rules rules = walk_rules::decode;
  finding_action action = finding_action::raise;
  /// The phase a `phase_region` walk reads.
  phase region_phase = phase::header;

  /// A decoder's walk: findings are framing errors.
  [[nodiscard]] static constexpr walk_policy decoder(walk_rules rules = walk_rules::decode) noexcept {
    return {rules, finding_action::raise, phase::header};
  }
  /// The validator's walk: findings are collected.
  [[nodiscard]] static constexpr walk_policy validator() noexcept {
    return {walk_rules::validate, finding_action::collect, phase::header};
  }
  /// The frames of phase `p` from the walk's start: the first finding ends
  /// the walk and is returned.
  [[nodiscard]] static constexpr walk_policy region(phase p) noexcept {
    return {walk_rules::phase_region, finding_action::stop, p};
  }
};

/// What a walk reads: the message bytes `[bytes_offset, bytes_offset +
/// bytes.size())` (all of them, or a window of a message read piecewise) and
/// the frame area `[begin, end)`; `end` is the postamble's offset. All
/// offsets are from the message start.
struct walk_region {
  std::span<const std::byte> bytes;
  std::size_t bytes_offset = 0;
  std::size_t begin = preamble_size;
  std::size_t end = 0;
};

/// Receives what a walk finds, in wire order.
class walk_sink {
 public:
  virtual ~walk_sink() = default;
  /// A frame the walk located (offsets from the message start; `bytes` from
  /// header to `ENDF`, inside the walked bytes). Return false to end the walk.
  virtual bool frame(const frame_view& f) = 0;
  /// A finding, when the policy collects them.
  virtual void finding(walk_finding f);

 protected:
  walk_sink() = default;
  walk_sink(const walk_sink&) = default;
  walk_sink& operator=(const walk_sink&) = default;
};

enum class walk_end : std::uint8_t {
  /// No frame header fits before the end of the frame area.
  frames_end,
  /// The sink returned false.
  sink,
  /// A `phase_region` walk reached a frame of another phase.
  other_phase,
  /// A finding ended the walk (`finding_action::stop`).
  finding,
  /// The next header or frame lies outside the walked bytes: read
  /// `[position, position + needed)` and walk on from `position`.
  needs_bytes,
};

struct walk_outcome {
  walk_end end = walk_end::frames_end;
  /// Where the walk stopped: the position after the last frame, or the
  /// frame (or finding) that ended it.
  std::size_t position = 0;
  /// `needs_bytes`: how many bytes from `position`.
  std::size_t needed = 0;
  /// `finding`: the finding that ended the walk.
  std::optional<walk_finding> finding;
};

/// Walks the frames of `region` under `policy`, passing each located frame
/// to `sink`. Allocates nothing unless it reports a finding.
walk_outcome walk(const walk_region& region, const walk_policy& policy, walk_sink& sink);

}  // namespace tensogram::format
