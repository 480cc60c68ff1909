#include "tensogram/message/decode.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <limits>
#include <new>
#include <string>

#include "layout_reading.hpp"
#include "masks_restore.hpp"
#include "tensogram/core/byte_order.hpp"
#include "tensogram/core/error.hpp"
#include "tensogram/core/hex.hpp"
#include "tensogram/format/aggregate_frames.hpp"
#include "tensogram/format/data_frame.hpp"
#include "tensogram/format/frame.hpp"
#include "tensogram/format/hash.hpp"
#include "tensogram/format/preamble.hpp"
#include "tensogram/format/walk.hpp"
#include "tensogram/format/wire.hpp"
#include "tensogram/message/masks.hpp"
#include "tensogram/message/pipeline_params.hpp"

namespace tensogram {

using detail::has_masks;
using format::align8;
using format::frame_type;
using format::frame_view;

// ---------------------------------------------------------------------------
// decoded_object / message

decoded_object::decoded_object(data_object_descriptor descriptor, buffer data,
                               tensogram::byte_order data_order, std::optional<std::uint64_t> hash,
                               bool is_view)
    : descriptor_(std::move(descriptor)),
      data_(std::move(data)),
      data_order_(data_order),
      hash_(hash),
      view_(is_view) {}

std::string decoded_object::hash_value() const {
  return hash_ ? hex16(*hash_) : std::string();
}

const decoded_object& message::object(std::size_t i) const {
  if (i >= objects_.size()) {
    throw object_error("object index " + std::to_string(i) +
                       " out of range (num_objects=" + std::to_string(objects_.size()) + ")");
  }
  return objects_[i];
}

namespace {

// ---------------------------------------------------------------------------
// Frame walk (spec 01 §14.1)

struct data_frame_entry {
  frame_view frame;
  std::optional<cbor::value> preceder;  // base entry from a type-8 frame, `_reserved_` stripped
};

// Records a parsed metadata frame: the last one wins, the first one is kept
// aside once a later one replaces it (`decode_metadata` returns it, §14.2).
// `Slot` tests true when it holds a frame.
template <typename Slot>
void keep_last_and_first(Slot& last, Slot& first, Slot parsed) {
  if (last && !first) first = std::move(last);
  last = std::move(parsed);
}

// Metadata frames parsed by the index read of a message, by frame offset
// (the last one and the first, as `keep_last_and_first` keeps them). When the
// index path fails or does not tile the body, the full walk takes them
// instead of parsing the same bytes again: a frame's metadata depends only
// on its bytes, so the result is the same.
struct parsed_metadata_frames {
  struct slot {
    std::optional<global_metadata> meta;
    std::size_t offset = 0;
    explicit operator bool() const noexcept { return meta.has_value(); }
  };
  slot last;
  slot first;

  void keep(global_metadata parsed, std::size_t offset) {
    keep_last_and_first(last, first, slot{std::move(parsed), offset});
  }
};

struct walked_message {
  format::message_extent extent;
  std::optional<global_metadata> meta;        // the last metadata frame wins (§6)
  std::optional<global_metadata> first_meta;  // the first one, once a later one replaced it
  std::vector<data_frame_entry> objects;
};

// Runs `parse` on a frame body, adding the frame's type and offset to any
// metadata error so the message says where (spec 01 §19.2 #24–#32).
template <typename Parse>
auto parse_in_frame(const frame_view& f, Parse parse) -> decltype(parse(f.body())) {
  try {
    return parse(f.body());
  } catch (const metadata_error& e) {
    throw metadata_error(std::string(e.detail()) + " (in " +
                         std::string(format::frame_type_name(f.header.type)) + " frame at offset " +
                         std::to_string(f.offset) + ")");
  }
}

global_metadata parse_metadata_frame(const frame_view& f) {
  return parse_in_frame(f, [](std::span<const std::byte> b) { return global_metadata::from_cbor_bytes(b); });
}

void check_aggregate_frame(const frame_view& f) {
  parse_in_frame(f, [&](std::span<const std::byte> b) {
    if (f.header.type == frame_type::header_index || f.header.type == frame_type::footer_index) {
      (void)format::parse_index_body(b);
    } else {
      (void)format::parse_hash_body(b);
    }
    return 0;
  });
}

// The bodies of a full decode's frames, in wire order; the walker has
// checked the frames and their order.
class message_frames final : public format::walk_sink {
 public:
  message_frames(walked_message& out, parsed_metadata_frames* parsed) : out_(out), parsed_(parsed) {}

  bool frame(const frame_view& f) override {
    switch (f.header.type) {
      case frame_type::header_metadata:
      case frame_type::footer_metadata:
        keep_last_and_first(out_.meta, out_.first_meta, std::optional(take_or_parse(f)));
        break;
      case frame_type::header_index:
      case frame_type::footer_index:
      case frame_type::header_hash:
      case frame_type::footer_hash:
        check_aggregate_frame(f);  // parsed so malformed frames fail, as in the reference
        break;
      case frame_type::preceder_metadata: {
        global_metadata g = parse_metadata_frame(f);
        if (g.base.size() != 1) {
          throw metadata_error("PrecederMetadata base must have exactly 1 entry, got " +
                               std::to_string(g.base.size()) + " (frame at offset " +
                               std::to_string(f.offset) + ")");
        }
        g.base[0].erase("_reserved_");
        preceder_ = std::move(g.base[0]);
        break;
      }
      case frame_type::ntensor:
        out_.objects.push_back(data_frame_entry{f, std::move(preceder_)});
        preceder_.reset();
        break;
    }
    return true;
  }

 private:
  global_metadata take_or_parse(const frame_view& f) {
    if (parsed_ != nullptr) {
      for (parsed_metadata_frames::slot* s : {&parsed_->last, &parsed_->first}) {
        if (s->meta && s->offset == f.offset) {
          global_metadata g = std::move(*s->meta);
          s->meta.reset();
          return g;
        }
      }
    }
    return parse_metadata_frame(f);
  }

  walked_message& out_;
  parsed_metadata_frames* parsed_;
  std::optional<cbor::value> preceder_;
};

// `parsed`: metadata frames an index read of the same message already
// parsed, taken instead of parsed again.
walked_message walk_message(std::span<const std::byte> msg, parsed_metadata_frames* parsed = nullptr) {
  walked_message w;
  w.extent = format::read_message_extent(msg);
  message_frames sink(w, parsed);
  (void)format::walk({msg.first(w.extent.message_end), 0, format::preamble_size, w.extent.frames_end},
                     format::walk_policy::decoder(), sink);
  return w;
}

// Final metadata of a full decode: last metadata frame, base padded to the
// object count, preceder entries merged shallowly (spec 01 §14.1, 02 §10).
global_metadata assemble_metadata(std::optional<global_metadata> meta,
                                  const std::vector<data_frame_entry>& objects) {
  if (!meta) throw metadata_error("no metadata frame found in message");
  global_metadata g = std::move(*meta);
  if (g.base.size() > objects.size()) {
    throw metadata_error("metadata base has " + std::to_string(g.base.size()) +
                         " entries but message contains " + std::to_string(objects.size()) + " objects");
  }
  g.base.resize(objects.size(), cbor::value::make_map());
  for (std::size_t i = 0; i < objects.size(); ++i) {
    if (!objects[i].preceder) continue;
    // A builder, not value::set: linear in the number of (untrusted) keys.
    cbor::text_map_builder merged(std::move(*g.base[i].as_map()));
    for (const cbor::map_entry& e : *objects[i].preceder->as_map()) merged.set(*e.key.as_text(), e.val);
    g.base[i] = merged.take();
  }
  return g;
}

// ---------------------------------------------------------------------------
// One data-object frame → decoded object

struct sliced_object {
  data_object_descriptor descriptor;
  std::size_t payload_offset = 0;  // from message start
  std::span<const std::byte> payload;
  std::span<const std::byte> region;  // payload region: the payload, then the mask blobs
  std::optional<std::uint64_t> hash;
};

sliced_object slice_object(const frame_view& f, std::size_t frame_offset_in_msg) {
  format::data_frame_parts parts = format::split_data_frame(f);
  sliced_object s;
  try {
    s.descriptor = data_object_descriptor::from_cbor(std::move(parts.descriptor));
    // Shape product and decoded size must fit u64 (spec 01 §19.2 #35).
    if (!raw_byte_size(s.descriptor.dtype, s.descriptor.element_count())) {
      throw metadata_error("element count overflows usize");
    }
  } catch (const metadata_error& e) {
    throw metadata_error(std::string(e.detail()) + " (in data object frame at offset " +
                         std::to_string(frame_offset_in_msg) + ")");
  }
  if (f.hash_present()) s.hash = f.hash_slot();
  s.region = parts.payload_region;
  // The tensor bytes end where the first mask blob starts (spec 01 §13.3).
  std::size_t payload_len = s.region.size();
  if (s.descriptor.masks) {
    std::optional<std::uint64_t> first;
    for (std::size_t kind = 0; kind < mask_kind_names.size(); ++kind) {
      const std::optional<detail::mask_entry> m = detail::parse_mask_entry(s.descriptor, kind, false);
      if (!m) continue;
      std::uint64_t end = 0;
      if (__builtin_add_overflow(m->offset, m->length, &end) || end > s.region.size()) {
        throw framing_error(std::string("mask_") + std::string(mask_kind_names[kind]) + ".offset + length (" +
                            std::to_string(m->offset) + " + " + std::to_string(m->length) +
                            ") exceeds payload region size " + std::to_string(s.region.size()) +
                            " in frame at offset " + std::to_string(frame_offset_in_msg));
      }
      first = first ? std::min(*first, m->offset) : m->offset;
    }
    if (first) payload_len = static_cast<std::size_t>(*first);
  }
  s.payload = s.region.first(payload_len);
  s.payload_offset = frame_offset_in_msg + parts.region_offset;
  return s;
}

// Writes canonical NaN/Inf back where the object's masks say so, for the
// elements [first, first + out.size() / width).
void restore_non_finite(const sliced_object& s, std::span<std::byte> out, byte_order out_order,
                        std::uint64_t first = 0, std::optional<std::uint64_t> count = std::nullopt) {
  detail::restore_non_finite(s.descriptor, s.region, out, out_order, first, count);
}

decoded_object decode_sliced_impl(const buffer& msg, sliced_object s, const decode_options& options);

// Allocations sized by a descriptor are fallible and surface as errors
// (spec 01 §19.1): a shape claiming more than memory holds is an
// encoding_error naming the object, not a std::bad_alloc.
[[noreturn]] void allocation_failed(const data_object_descriptor& d) {
  throw encoding_error("cannot allocate the decoded size of an object of " +
                       std::to_string(d.element_count()) + " element(s) of " +
                       std::string(dtype_name(d.dtype)) + " (encoding " + d.encoding + ", compression " +
                       d.compression + ")");
}

decoded_object decode_sliced(const buffer& msg, sliced_object s, const decode_options& options) {
  const data_object_descriptor d = s.descriptor;
  try {
    return decode_sliced_impl(msg, std::move(s), options);
  } catch (const std::bad_alloc&) {
    allocation_failed(d);
  }
}

decoded_object decode_sliced_impl(const buffer& msg, sliced_object s, const decode_options& options) {
  const codecs::pipeline pl = build_pipeline(s.descriptor);
  const data_object_descriptor& d = s.descriptor;
  const byte_order stored = d.effective_byte_order();
  const byte_order wanted = options.native_byte_order ? native_byte_order() : stored;
  const bool restore = options.restore_non_finite && has_masks(d);
  // The threads budget splits simple_packing and shuffle; results never
  // depend on it (spec 02 §14).
  const codecs::decode_settings settings{.threads = s.payload.size() >= 65536 ? options.threads : 0,
                                         .writable = restore,
                                         .payload_offset = s.payload_offset};
  buffer decoded =
      pl.decode(msg.slice(s.payload_offset, s.payload.size()), d.element_count(), stored, wanted, settings);
  // Zero-copy: an object that needs no decoding comes back as its payload.
  const bool is_view = decoded.data() == s.payload.data();
  if (restore) restore_non_finite(s, std::span<std::byte>(decoded.mutable_data(), decoded.size()), wanted);
  return decoded_object(std::move(s.descriptor), std::move(decoded), wanted, s.hash, is_view);
}

// ---------------------------------------------------------------------------
// Hash verification pre-pass (spec 01 §14.3)

// Where the frames of the first message of `msg` end for the metadata-only
// decode and the hash pre-pass, which do not inspect the postamble
// (§14.2, §14.3).
std::size_t unchecked_frames_end(std::span<const std::byte> msg) {
  const format::preamble pre = format::read_preamble(msg);
  if (pre.total_length > msg.size()) {
    throw framing_error("total_length " + std::to_string(pre.total_length) + " exceeds buffer size " +
                        std::to_string(msg.size()));
  }
  const std::size_t msg_len = pre.total_length > 0 ? static_cast<std::size_t>(pre.total_length) : msg.size();
  return msg_len >= format::min_message_size ? msg_len - format::postamble_size : format::preamble_size;
}

// Verifies the digests of the data-object frames the pre-pass passes on:
// all of them, or only the target.
class hash_verifier final : public format::walk_sink {
 public:
  hash_verifier(std::span<const std::byte> msg, std::size_t frames_end, std::optional<std::size_t> target)
      : msg_(msg), frames_end_(frames_end), target_(target) {}

  bool frame(const frame_view& f) override {
    const std::size_t k = next_object_++;
    if (target_ && *target_ != k) return true;
    const frame_view located = format::locate_frame(msg_, f.offset, f.header, frames_end_);
    if (!located.hash_present()) throw missing_hash_error(k);
    const std::uint64_t actual = format::xxh3_64(located.body());
    const std::uint64_t expected = located.hash_slot();
    if (actual != expected) throw hash_mismatch_error(k, expected, actual);
    return !target_;
  }

 private:
  std::span<const std::byte> msg_;
  std::size_t frames_end_;
  std::optional<std::size_t> target_;
  std::size_t next_object_ = 0;
};

void verify_pass(std::span<const std::byte> msg, std::optional<std::size_t> target) {
  const std::size_t end = unchecked_frames_end(msg);
  hash_verifier sink(msg, end, target);
  (void)format::walk({msg, 0, format::preamble_size, end},
                     format::walk_policy::decoder(format::walk_rules::hash_prepass), sink);
}

// ---------------------------------------------------------------------------
// O(1) object location through an index frame (spec 01 §15)

struct indexed_message {
  format::message_extent extent;
  parsed_metadata_frames metadata;  // `last` is the message's, `first` as in walked_message
  format::index_body index;
  std::size_t body_start = 0;  // first frame after the header phase
  std::size_t body_end = 0;    // first footer frame, else the postamble
};

// The metadata and index of header or footer frames (the last of each
// wins); hash frames are parsed so malformed ones fail as in a full decode.
class index_frames final : public format::walk_sink {
 public:
  explicit index_frames(indexed_message& out) : out_(out) {}

  bool frame(const frame_view& f) override {
    switch (f.header.type) {
      case frame_type::header_metadata:
      case frame_type::footer_metadata: out_.metadata.keep(parse_metadata_frame(f), f.offset); break;
      case frame_type::header_index:
      case frame_type::footer_index:
        index = parse_in_frame(f, [](std::span<const std::byte> b) { return format::parse_index_body(b); });
        break;
      case frame_type::header_hash:
      case frame_type::footer_hash: check_aggregate_frame(f); break;
      default: break;
    }
    return true;
  }

  std::optional<format::index_body> index;

 private:
  indexed_message& out_;
};

// Reads the header-phase frames and the footer-phase frames (from the
// postamble's first_footer_offset) into `r` without touching the body.
// False when the message has preceders, lacks an index or metadata frame,
// or is irregular: callers then fall back to the full walk, which takes the
// metadata frames `r` parsed so far.
bool read_index(std::span<const std::byte> msg, indexed_message& r) {
  r.extent = format::read_message_extent(msg);
  if ((r.extent.head.flags & format::message_flags::preceder_metadata) != 0) return false;
  // Nor when its flags declare no index frame: walking its header here would
  // parse its metadata a second time for nothing before the full walk. The
  // flags are advisory (spec 01 §3.1), so they only choose the path, never
  // the result: the full walk finds an undeclared index frame too.
  if ((r.extent.head.flags & (format::message_flags::header_index | format::message_flags::footer_index)) ==
      0) {
    return false;
  }
  const std::span<const std::byte> m = msg.first(r.extent.message_end);
  const std::size_t end = r.extent.frames_end;
  index_frames sink(r);
  const format::walk_outcome header = format::walk({m, 0, format::preamble_size, end},
                                                   format::walk_policy::region(format::phase::header), sink);
  if (header.end == format::walk_end::finding) return false;
  r.body_start = header.position;
  r.body_end = end;
  if (r.extent.message_end >= format::min_message_size) {
    const std::uint64_t ffo = load_be64(m.data() + end);
    if (ffo >= format::preamble_size && ffo < end) {
      const auto footer_start = static_cast<std::size_t>(ffo);
      const format::walk_outcome footer =
          format::walk({m, 0, footer_start, end}, format::walk_policy::region(format::phase::footer), sink);
      if (footer.end != format::walk_end::frames_end) return false;
      r.body_end = footer_start;
    }
  }
  if (!sink.index || !r.metadata.last.meta) return false;
  r.index = std::move(*sink.index);
  return true;
}

// True when the indexed data-object frames, each padded to 8, fill the body
// exactly: no other frame (a preceder whose PRECEDER_METADATA flag was not
// set, an unindexed object) hides between them, so the header/footer
// metadata is the whole story and the index path agrees with a full walk.
bool index_tiles_body(const indexed_message& im) {
  const std::vector<std::uint64_t>& offsets = im.index.offsets;
  const std::vector<std::uint64_t>& lengths = im.index.lengths;
  std::uint64_t expect = im.body_start;
  for (std::size_t k = 0; k < offsets.size(); ++k) {
    if (offsets[k] != expect || expect > im.body_end || lengths[k] > im.body_end - expect) return false;
    expect = align8(expect + lengths[k]);
  }
  return expect == im.body_end;
}

buffer owning_copy(const buffer& b) {
  if (b.kind() != buffer::ownership::borrowed) return b;
  buffer out = buffer::allocate(b.size());
  if (!b.empty()) std::memcpy(out.mutable_data(), b.data(), b.size());
  return out;
}

message make_owning(message m) {
  std::vector<decoded_object> objects;
  objects.reserve(m.num_objects());
  for (const decoded_object& o : m) {
    objects.emplace_back(o.descriptor(), owning_copy(o.data_buffer()), o.data_byte_order(), o.hash_slot(),
                         o.is_view() && o.data_buffer().kind() != buffer::ownership::borrowed);
  }
  return message(m.get_metadata(), std::move(objects));
}

buffer borrow(const std::uint8_t* buf, std::size_t len) {
  if (buf == nullptr && len != 0) throw invalid_arg_error("null buffer with non-zero length");
  return buffer::borrowed(std::span<const std::byte>(reinterpret_cast<const std::byte*>(buf), len));
}

}  // namespace

// ---------------------------------------------------------------------------
// Public entry points

message decode(const buffer& msg, const decode_options& options) {
  if (options.verify_hash) verify_pass(msg.bytes(), std::nullopt);
  walked_message w = walk_message(msg.bytes());
  global_metadata g = assemble_metadata(std::move(w.meta), w.objects);
  std::vector<decoded_object> objects;
  objects.reserve(w.objects.size());
  for (const data_frame_entry& e : w.objects) {
    objects.push_back(decode_sliced(msg, slice_object(e.frame, e.frame.offset), options));
  }
  return message(metadata(std::move(g)), std::move(objects));
}

std::vector<object_masks> decode_object_masks(std::span<const std::byte> msg) {
  const walked_message w = walk_message(msg);
  std::vector<object_masks> out;
  out.reserve(w.objects.size());
  for (const data_frame_entry& e : w.objects) {
    const sliced_object s = slice_object(e.frame, e.frame.offset);
    out.push_back(has_masks(s.descriptor) ? detail::decode_masks(s.descriptor, s.region) : object_masks{});
  }
  return out;
}

namespace {

// The first metadata frame (§14.2).
class first_metadata final : public format::walk_sink {
 public:
  bool frame(const frame_view& f) override {
    found = f;
    return false;
  }
  std::optional<frame_view> found;
};

}  // namespace

metadata decode_metadata(std::span<const std::byte> msg) {
  const std::size_t end = unchecked_frames_end(msg);
  first_metadata sink;
  (void)format::walk({msg, 0, format::preamble_size, end},
                     format::walk_policy::decoder(format::walk_rules::decode_metadata), sink);
  if (!sink.found) throw metadata_error("no metadata frame found in message");
  return metadata(parse_metadata_frame(*sink.found));
}

std::pair<metadata, std::vector<data_object_descriptor>> decode_descriptors(std::span<const std::byte> msg) {
  walked_message w = walk_message(msg);
  global_metadata g = assemble_metadata(std::move(w.meta), w.objects);
  std::vector<data_object_descriptor> descriptors;
  descriptors.reserve(w.objects.size());
  for (const data_frame_entry& e : w.objects) {
    descriptors.push_back(slice_object(e.frame, e.frame.offset).descriptor);
  }
  return {metadata(std::move(g)), std::move(descriptors)};
}

namespace {

// One object located by index, with the message metadata a full decode
// would assemble (spec 01 §14.4, §15).
struct located_object {
  global_metadata metadata;
  sliced_object object;
};

located_object locate_object(std::span<const std::byte> bytes, std::size_t index) {
  indexed_message im;
  if (read_index(bytes, im) && index_tiles_body(im)) {
    const std::size_t count = im.index.offsets.size();
    if (index >= count) {
      throw object_error("object index " + std::to_string(index) +
                         " out of range (num_objects=" + std::to_string(count) + ")");
    }
    const std::uint64_t off = im.index.offsets[index];
    const std::size_t end = im.extent.frames_end;
    // `off` comes from the wire: compare without adding to it (a value near
    // 2^64 would wrap past the bound).
    if (off >= format::preamble_size && off < end && end - off >= format::frame_header_size &&
        format::has_frame_marker(bytes.subspan(static_cast<std::size_t>(off)))) {
      const auto pos = static_cast<std::size_t>(off);
      const format::frame_header h = format::read_frame_header(bytes.subspan(pos), pos);
      if (h.type == frame_type::ntensor && h.total_length == im.index.lengths[index]) {
        const frame_view f = format::locate_frame(bytes.first(im.extent.message_end), pos, h, end);
        global_metadata g = std::move(*im.metadata.last.meta);
        if (g.base.size() > count) {
          throw metadata_error("metadata base has " + std::to_string(g.base.size()) +
                               " entries but message contains " + std::to_string(count) + " objects");
        }
        g.base.resize(count, cbor::value::make_map());
        return located_object{std::move(g), slice_object(f, pos)};
      }
    }
    // The index disagrees with the frames: trust the frames.
  }
  walked_message w = walk_message(bytes, &im.metadata);
  global_metadata g = assemble_metadata(std::move(w.meta), w.objects);
  if (index >= w.objects.size()) {
    throw object_error("object index " + std::to_string(index) +
                       " out of range (num_objects=" + std::to_string(w.objects.size()) + ")");
  }
  const frame_view& f = w.objects[index].frame;
  return located_object{std::move(g), slice_object(f, f.offset)};
}

}  // namespace

message decode_object(const buffer& msg, std::size_t index, const decode_options& options) {
  if (options.verify_hash) verify_pass(msg.bytes(), index);
  located_object lo = locate_object(msg.bytes(), index);
  std::vector<decoded_object> one;
  one.push_back(decode_sliced(msg, std::move(lo.object), options));
  return message(metadata(std::move(lo.metadata)), std::move(one));
}

namespace {

std::vector<buffer> decode_sliced_range_impl(const sliced_object& s,
                                             std::span<const std::pair<std::uint64_t, std::uint64_t>> ranges,
                                             const decode_options& options);

std::vector<buffer> decode_sliced_range(const sliced_object& s,
                                        std::span<const std::pair<std::uint64_t, std::uint64_t>> ranges,
                                        const decode_options& options) {
  try {
    return decode_sliced_range_impl(s, ranges, options);
  } catch (const std::bad_alloc&) {
    allocation_failed(s.descriptor);
  }
}

std::vector<buffer> decode_sliced_range_impl(const sliced_object& s,
                                             std::span<const std::pair<std::uint64_t, std::uint64_t>> ranges,
                                             const decode_options& options) {
  const data_object_descriptor& d = s.descriptor;
  const codecs::pipeline pl = build_pipeline(d);
  pl.check_range_decode();
  std::vector<buffer> out;
  if (ranges.empty()) return out;
  const std::uint64_t n = d.element_count();
  const byte_order stored = d.effective_byte_order();
  const byte_order wanted = options.native_byte_order ? native_byte_order() : stored;
  const bool restore = options.restore_non_finite && has_masks(d);
  if (restore && d.dtype != dtype::bitmask) {
    // A range is the matching part of the full decode (spec 03 §3.3), and
    // the full decode of a masked object fails when it does not hold N·W
    // bytes; so does every range of it, with the same error.
    const std::uint64_t decoded = pl.decoded_size(n);
    const std::uint64_t width = dtype_width(d.dtype);
    if (decoded != n * width) {
      throw framing_error("decoded payload length " + std::to_string(decoded) + " does not match " +
                          std::to_string(n) + " element(s) × " + std::to_string(width));
    }
  }
  out.reserve(ranges.size());
  for (const auto& [offset, count] : ranges) {
    try {
      std::vector<std::byte> part = pl.decode_range(s.payload, n, stored, wanted, offset, count);
      if (restore) restore_non_finite(s, part, wanted, offset, count);
      out.push_back(buffer::owned(std::move(part)));
    } catch (const encoding_error& e) {
      const std::string_view detail = e.detail();
      if (detail.starts_with("range (")) throw;
      throw encoding_error("range (offset=" + std::to_string(offset) + ", count=" + std::to_string(count) +
                           "): " + std::string(detail));
    }
  }
  return out;
}

// The one data-object frame that makes up `frame` (spec 02 §14 "single-frame
// decode"), checked to be exactly one type-9 frame.
sliced_object slice_single_frame(const buffer& frame, std::size_t object_index, bool verify) {
  const std::span<const std::byte> bytes = frame.bytes();
  if (bytes.size() < format::frame_header_size || !format::has_frame_marker(bytes)) {
    throw framing_error("object " + std::to_string(object_index) + ": no frame header at the start of " +
                        std::to_string(bytes.size()) + " byte(s)");
  }
  const format::frame_header h = format::read_frame_header(bytes, 0);
  if (h.type != frame_type::ntensor) {
    throw framing_error("object " + std::to_string(object_index) + ": expected a data-object frame, got " +
                        std::string(format::frame_type_name(h.type)));
  }
  if (h.total_length != bytes.size()) {
    throw framing_error("object " + std::to_string(object_index) + ": frame total_length " +
                        std::to_string(h.total_length) + " but " + std::to_string(bytes.size()) +
                        " byte(s) were given");
  }
  const frame_view f = format::locate_frame(bytes, 0, h, bytes.size());
  if (verify) {
    // Spec 02 §14: verified before any CBOR is parsed.
    if (!f.hash_present()) throw missing_hash_error(object_index);
    const std::uint64_t actual = format::xxh3_64(f.body());
    if (actual != f.hash_slot()) throw hash_mismatch_error(object_index, f.hash_slot(), actual);
  }
  return slice_object(f, 0);
}

}  // namespace

std::vector<buffer> decode_range(const buffer& msg, std::size_t object_index,
                                 std::span<const std::pair<std::uint64_t, std::uint64_t>> ranges,
                                 const decode_options& options) {
  // Range decode never verifies hashes (spec 02 §8.6).
  const located_object lo = locate_object(msg.bytes(), object_index);
  return decode_sliced_range(lo.object, ranges, options);
}

decoded_object decode_data_frame(const buffer& frame, std::size_t object_index,
                                 const decode_options& options) {
  return decode_sliced(frame, slice_single_frame(frame, object_index, options.verify_hash), options);
}

std::vector<buffer> decode_data_frame_range(const buffer& frame, std::size_t object_index,
                                            std::span<const std::pair<std::uint64_t, std::uint64_t>> ranges,
                                            const decode_options& options) {
  return decode_sliced_range(slice_single_frame(frame, object_index, false), ranges, options);
}

data_object_descriptor decode_data_frame_descriptor(const buffer& frame, std::size_t object_index) {
  return slice_single_frame(frame, object_index, false).descriptor;
}

namespace {

// Both layout readers; `keep_first` keeps the first metadata frame's
// metadata aside when it is not the layout's (detail::layout_reading).
detail::layout_reading read_layout(std::span<const std::byte> msg, bool keep_first) {
  detail::layout_reading out;
  message_layout& layout = out.layout;
  indexed_message im;
  if (read_index(msg, im) && index_tiles_body(im)) {
    const std::size_t count = im.index.offsets.size();
    global_metadata g = std::move(*im.metadata.last.meta);
    if (keep_first) out.first_metadata = std::move(im.metadata.first.meta);
    detail::pad_base_for_index(g, count, keep_first ? &out.first_metadata : nullptr);
    layout.metadata = std::move(g);
    for (std::size_t k = 0; k < count; ++k)
      layout.objects.push_back({im.index.offsets[k], im.index.lengths[k]});
    return out;
  }
  walked_message w = walk_message(msg, &im.metadata);
  for (const data_frame_entry& e : w.objects)
    layout.objects.push_back({e.frame.offset, e.frame.bytes.size()});
  if (keep_first) {
    if (w.first_meta) {
      out.first_metadata = std::move(w.first_meta);
    } else if (w.meta && (w.meta->base.size() != w.objects.size() ||
                          std::any_of(w.objects.begin(), w.objects.end(),
                                      [](const data_frame_entry& e) { return e.preceder.has_value(); }))) {
      out.first_metadata = *w.meta;  // assembly (padding, preceders) changes it
    }
  }
  layout.metadata = assemble_metadata(std::move(w.meta), w.objects);
  return out;
}

}  // namespace

message_layout read_message_layout(std::span<const std::byte> msg) {
  return read_layout(msg, false).layout;
}

void detail::pad_base_for_index(global_metadata& meta, std::size_t count,
                                std::optional<global_metadata>* first) {
  if (meta.base.size() > count) {
    throw metadata_error("metadata base has " + std::to_string(meta.base.size()) +
                         " entries but message contains " + std::to_string(count) + " objects");
  }
  if (meta.base.size() == count) return;
  if (first != nullptr && !*first) *first = meta;  // padding the base changes it
  meta.base.resize(count, cbor::value::make_map());
}

detail::layout_reading detail::read_layout_and_first_metadata(std::span<const std::byte> msg) {
  return read_layout(msg, true);
}

std::vector<scan_entry> scan(std::span<const std::byte> bytes) {
  return format::scan(bytes);
}

void verify_hashes(std::span<const std::byte> msg, std::optional<std::size_t> object_index) {
  verify_pass(msg, object_index);
}

message decode(const std::uint8_t* buf, std::size_t len, const decode_options& options) {
  return make_owning(decode(borrow(buf, len), options));
}

metadata decode_metadata(const std::uint8_t* buf, std::size_t len) {
  return decode_metadata(borrow(buf, len).bytes());
}

message decode_object(const std::uint8_t* buf, std::size_t len, std::size_t index,
                      const decode_options& options) {
  return make_owning(decode_object(borrow(buf, len), index, options));
}

std::vector<std::vector<std::uint8_t>> decode_range(
    const std::uint8_t* buf, std::size_t len, std::size_t object_index,
    const std::vector<std::pair<std::uint64_t, std::uint64_t>>& ranges, const decode_options& options) {
  const std::vector<buffer> parts = decode_range(borrow(buf, len), object_index, ranges, options);
  std::vector<std::vector<std::uint8_t>> out;
  out.reserve(parts.size());
  for (const buffer& p : parts) {
    const auto* b = reinterpret_cast<const std::uint8_t*>(p.data());
    out.emplace_back(b, b + p.size());
  }
  return out;
}

std::vector<std::uint8_t> decode_range_joined(
    const std::uint8_t* buf, std::size_t len, std::size_t object_index,
    const std::vector<std::pair<std::uint64_t, std::uint64_t>>& ranges, const decode_options& options) {
  std::vector<std::uint8_t> out;
  for (const auto& part : decode_range(buf, len, object_index, ranges, options)) {
    out.insert(out.end(), part.begin(), part.end());
  }
  return out;
}

std::vector<scan_entry> scan(const std::uint8_t* buf, std::size_t len) {
  return scan(borrow(buf, len).bytes());
}

std::string compute_hash(const std::uint8_t* data, std::size_t len, const std::string& algo) {
  if (algo != "xxh3") throw invalid_arg_error("unknown hash algorithm: " + algo);
  return hex16(format::xxh3_64(borrow(data, len).bytes()));
}

}  // namespace tensogram
