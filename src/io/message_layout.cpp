#include "message_layout.hpp"

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "src/message/layout_reading.hpp"
#include "tensogram/core/byte_order.hpp"
#include "tensogram/core/error.hpp"
#include "tensogram/format/aggregate_frames.hpp"
#include "tensogram/format/frame.hpp"
#include "tensogram/format/preamble.hpp"
#include "tensogram/format/walk.hpp"
#include "tensogram/format/wire.hpp"

namespace tensogram::io {

namespace {

using format::frame_type;

// What the aggregate frames of one phase (header or footer) say.
struct phase_frames {
  std::optional<global_metadata> metadata;
  std::optional<format::index_body> index;
  std::uint64_t end = 0;  // first position after the phase's frames
};

// The metadata and index frames of one phase, parsed as the walk passes
// them; parse errors name the frame and the message's place in the file.
class phase_frames_sink final : public format::walk_sink {
 public:
  phase_frames_sink(phase_frames& out, const scan_entry& msg) : out_(out), msg_(msg) {}

  bool frame(const format::frame_view& f) override {
    try {
      switch (f.header.type) {
        case frame_type::header_metadata:
        case frame_type::footer_metadata: out_.metadata = global_metadata::from_cbor_bytes(f.body()); break;
        case frame_type::header_index:
        case frame_type::footer_index: out_.index = format::parse_index_body(f.body()); break;
        default: break;
      }
    } catch (const metadata_error& e) {
      throw metadata_error(std::string(e.detail()) + " (in " +
                           std::string(format::frame_type_name(f.header.type)) + " frame at offset " +
                           std::to_string(f.offset) + " of the message at file offset " +
                           std::to_string(msg_.offset) + ")");
    }
    return true;
  }

 private:
  phase_frames& out_;
  const scan_entry& msg_;
};

// Walks the frames of `want` from `pos` until a frame of another phase or
// `limit`, in `region` (which holds the message bytes starting at
// `region_offset`) and, for frames beyond it, in bytes read from the
// source. Returns nothing on anything irregular (the caller then reads the
// whole message and lets the full walk report it).
std::optional<phase_frames> walk_phase(byte_source& src, const scan_entry& msg, const buffer& region,
                                       std::uint64_t region_offset, std::uint64_t pos, std::uint64_t limit,
                                       format::phase want) {
  phase_frames out;
  phase_frames_sink sink(out, msg);
  buffer window = region;
  auto window_offset = static_cast<std::size_t>(region_offset);
  auto at = static_cast<std::size_t>(pos);
  for (;;) {
    const format::walk_outcome o =
        format::walk({window.bytes(), window_offset, at, static_cast<std::size_t>(limit)},
                     format::walk_policy::region(want), sink);
    switch (o.end) {
      case format::walk_end::needs_bytes:
        window = src.read_one({msg.offset + o.position, o.needed});
        if (window.size() < o.needed) return std::nullopt;  // a source that reads short cannot loop the walk
        window_offset = o.position;
        at = o.position;
        continue;
      case format::walk_end::finding: return std::nullopt;
      default: out.end = o.position; return out;
    }
  }
}

// An index is usable on its own when its frames lie in order inside the
// data-object region; each frame is checked again when it is read.
bool index_fits(const format::index_body& index, std::uint64_t body_start, std::uint64_t body_end) {
  if (index.offsets.size() != index.lengths.size()) return false;
  std::uint64_t at = body_start;
  for (std::size_t k = 0; k < index.offsets.size(); ++k) {
    const std::uint64_t off = index.offsets[k];
    const std::uint64_t len = index.lengths[k];
    if (off < at || off > body_end || len < format::frame_header_size || len > body_end - off) return false;
    at = off + len;
  }
  return true;
}

// `first` is the first metadata frame's metadata when it is another frame
// than `meta`'s.
std::shared_ptr<const cached_layout> from_index(global_metadata meta, std::optional<global_metadata> first,
                                                const format::index_body& index) {
  const std::size_t count = index.offsets.size();
  detail::pad_base_for_index(meta, count, &first);
  auto out = std::make_shared<cached_layout>();
  out->layout.metadata = std::move(meta);
  out->layout.objects.reserve(count);
  for (std::size_t k = 0; k < count; ++k) out->layout.objects.push_back({index.offsets[k], index.lengths[k]});
  if (first) out->first_metadata = std::make_shared<const global_metadata>(std::move(*first));
  return out;
}

// One walk gives the layout and the first metadata (detail::layout_reading).
loaded_layout from_whole(buffer whole) {
  detail::layout_reading r = detail::read_layout_and_first_metadata(whole.bytes());
  auto out = std::make_shared<cached_layout>();
  out->layout = std::move(r.layout);
  if (r.first_metadata)
    out->first_metadata = std::make_shared<const global_metadata>(std::move(*r.first_metadata));
  return loaded_layout{std::move(out), std::move(whole)};
}

}  // namespace

std::shared_ptr<const global_metadata> first_metadata_of(const std::shared_ptr<const cached_layout>& c) {
  if (c->first_metadata) return c->first_metadata;
  return {c, &c->layout.metadata};  // aliasing: shares the layout's ownership
}

loaded_layout load_message_layout(byte_source& src, scan_entry msg, std::optional<std::uint16_t> flags) {
  const std::uint64_t len = msg.length;
  const std::uint64_t head_len = std::min<std::uint64_t>(len, layout_region_size);
  const std::uint64_t tail_len = std::min<std::uint64_t>(len, layout_region_size);
  // A footer-indexed (streaming) message, known from the preamble the scan
  // read: its header and footer regions in one round trip (spec 04 E.3).
  const bool footer_indexed = flags && (*flags & format::message_flags::footer_index) != 0 &&
                              (*flags & format::message_flags::header_index) == 0 && head_len < len;
  buffer head;
  std::optional<buffer> early_tail;
  if (footer_indexed) {
    const byte_range both[2] = {{msg.offset, head_len}, {msg.offset + len - tail_len, tail_len}};
    std::vector<buffer> got = src.read(both);
    head = std::move(got[0]);
    early_tail = std::move(got[1]);
  } else {
    head = src.read_one({msg.offset, head_len});
  }
  if (head_len == len || len < format::min_message_size) return from_whole(std::move(head));
  const format::preamble pre = format::read_preamble(head.bytes());
  const std::uint64_t frames_end = len - format::postamble_size;
  auto read_whole = [&] { return from_whole(src.read_one({msg.offset, len})); };

  std::optional<phase_frames> header =
      walk_phase(src, msg, head, 0, format::preamble_size, frames_end, format::phase::header);
  if (!header) return read_whole();
  // Header index (buffered messages): the header region is the whole story
  // unless preceders may hide between the objects.
  if (header->index && header->metadata && (pre.flags & format::message_flags::preceder_metadata) == 0 &&
      index_fits(*header->index, header->end, frames_end)) {
    return loaded_layout{from_index(std::move(*header->metadata), std::nullopt, *header->index), {}};
  }
  // Footer index (streaming messages): the postamble says where the footer
  // frames start; their metadata already has the preceders merged (§18).
  std::uint64_t tail_off = len - tail_len;
  buffer tail = early_tail ? std::move(*early_tail) : src.read_one({msg.offset + tail_off, tail_len});
  const format::postamble post = format::read_postamble(
      tail.bytes().subspan(static_cast<std::size_t>(tail_len - format::postamble_size)));
  const std::uint64_t ffo = post.first_footer_offset;
  if (ffo < header->end || ffo > frames_end) return read_whole();
  if (ffo < tail_off) {
    tail = src.read_one({msg.offset + ffo, len - ffo});
    tail_off = ffo;
  }
  std::optional<phase_frames> footer =
      walk_phase(src, msg, tail, tail_off, ffo, frames_end, format::phase::footer);
  if (!footer) return read_whole();
  std::optional<format::index_body>& index = footer->index ? footer->index : header->index;
  if (!(footer->metadata || header->metadata) || !index || !index_fits(*index, header->end, ffo))
    return read_whole();
  // The footer's metadata (preceders merged, §18) is the layout's; the
  // header's, when there is one, is the first metadata frame.
  if (footer->metadata)
    return loaded_layout{from_index(std::move(*footer->metadata), std::move(header->metadata), *index), {}};
  return loaded_layout{from_index(std::move(*header->metadata), std::nullopt, *index), {}};
}

}  // namespace tensogram::io
