// C ABI extensions for callers that do their own I/O (the WebAssembly
// package's TensogramFile, docs/wasm.md): validation of a buffer of many
// messages, the preamble of one message, a message's layout from the byte
// regions fetched so far, and decoding of one data-object frame on its own
// (spec 01 §15, spec 02 §14 "single-frame decode", spec 04 E.3). Each is a
// thin wrapper over the function the native file and remote readers use, so
// the format is parsed in one place.
#include <algorithm>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "capi.hpp"
#include "handles.hpp"
#include "src/io/message_layout.hpp"
#include "tensogram/cbor/json.hpp"
#include "tensogram/core/buffer.hpp"
#include "tensogram/core/endian.hpp"
#include "tensogram/core/error.hpp"
#include "tensogram/format/frame.hpp"
#include "tensogram/format/preamble.hpp"
#include "tensogram/format/wire.hpp"
#include "tensogram/io/byte_source.hpp"
#include "tensogram/message/decode.hpp"
#include "tensogram/message/validate.hpp"

namespace {

namespace capi = tensogram::capi;
using capi::guarded;
using capi::required;

// Thrown by regions_source when a read needs bytes the caller has not given.
struct needs_bytes {
  tensogram::io::byte_range range;
};

// Bytes the caller has fetched: `bytes` are those at `offset`.
struct region {
  std::uint64_t offset;
  std::span<const std::byte> bytes;
};

// The bytes [offset, offset + length) when one region holds them all, else
// `needs_bytes`.
std::span<const std::byte> covered(const std::vector<region>& given, std::uint64_t offset,
                                   std::uint64_t length) {
  for (const auto& g : given) {
    if (offset >= g.offset && offset - g.offset <= g.bytes.size() &&
        length <= g.bytes.size() - (offset - g.offset)) {
      return g.bytes.subspan(static_cast<std::size_t>(offset - g.offset), static_cast<std::size_t>(length));
    }
  }
  throw needs_bytes{{offset, length}};
}

// The bytes of one message that the caller has fetched, as a byte source:
// a read inside one region is served from it, any other read stops the
// layout loader with `needs_bytes` (the caller fetches that range and asks
// again).
class regions_source final : public tensogram::io::byte_source {
 public:
  regions_source(std::uint64_t size, std::vector<region> regions)
      : size_(size), regions_(std::move(regions)) {}

  std::uint64_t size() override { return size_; }
  std::vector<tensogram::buffer> read(std::span<const tensogram::io::byte_range> ranges) override {
    std::vector<tensogram::buffer> out;
    out.reserve(ranges.size());
    for (const auto& r : ranges)
      out.push_back(tensogram::buffer::borrowed(covered(regions_, r.offset, r.length)));
    return out;
  }
  std::string describe() const override { return "<fetched regions>"; }

 private:
  std::uint64_t size_;
  std::vector<region> regions_;
};

// The regions of a C call, checked.
std::vector<region> regions_arg(const char* fn, const uint64_t* offsets, const uint8_t* const* regions,
                                const size_t* lengths, size_t n) {
  if (n > 0) {
    required(fn, "region_offsets", offsets);
    required(fn, "regions", regions);
    required(fn, "region_lengths", lengths);
  }
  std::vector<region> given;
  for (size_t i = 0; i < n; ++i)
    given.push_back({offsets[i], capi::bytes_arg(fn, "regions[i]", regions[i], lengths[i])});
  return given;
}

// Frames up to this size are fetched whole for their descriptor; larger ones
// as their header, their last `descriptor_tail` bytes (footer and, usually,
// the whole descriptor CBOR) and, when the CBOR is longer, its region.
constexpr std::uint64_t whole_frame_limit = 64 * 1024;
constexpr std::uint64_t descriptor_tail = 8 * 1024;

// The descriptor of a data-object frame of `len` bytes from the regions given
// (spec 01 §13.2). A large frame with its descriptor CBOR after the payload
// is parsed as a copy in which only the header, the CBOR and the footer are
// present (the payload bytes are zeros, which the descriptor parse never
// reads), so the checks are those of decode_data_frame_descriptor.
tensogram::data_object_descriptor descriptor_from_regions(const std::vector<region>& given, std::uint64_t len,
                                                          std::size_t object_index) {
  namespace fmt = tensogram::format;
  if (len > std::numeric_limits<std::size_t>::max()) {
    throw tensogram::invalid_arg_error("frame length " + std::to_string(len) +
                                       " does not fit in this build's address space");
  }
  if (len <= whole_frame_limit) {
    return tensogram::decode_data_frame_descriptor(tensogram::buffer::borrowed(covered(given, 0, len)),
                                                   object_index);
  }
  const std::uint64_t tail_off = len - descriptor_tail;
  const std::span<const std::byte> tail = covered(given, tail_off, descriptor_tail);
  const std::span<const std::byte> head = covered(given, 0, fmt::frame_header_size);
  const fmt::frame_header h = fmt::read_frame_header(head, 0);
  const std::uint64_t p = len - fmt::data_footer_size;
  const std::uint64_t c = tensogram::load_be64(tail.data() + (p - tail_off));
  // CBOR before the payload (or a cbor_offset out of range, which the
  // parse reports): the whole frame.
  if ((h.flags & fmt::frame_flags::cbor_after_payload) == 0 || c < fmt::frame_header_size || c > p) {
    return tensogram::decode_data_frame_descriptor(tensogram::buffer::borrowed(covered(given, 0, len)),
                                                   object_index);
  }
  std::vector<std::byte> sparse(static_cast<std::size_t>(len));
  std::copy(head.begin(), head.end(), sparse.begin());
  std::copy(tail.begin(), tail.end(), sparse.begin() + static_cast<std::ptrdiff_t>(tail_off));
  if (c < tail_off) {
    const std::span<const std::byte> cbor = covered(given, c, tail_off - c);
    std::copy(cbor.begin(), cbor.end(), sparse.begin() + static_cast<std::ptrdiff_t>(c));
  }
  return tensogram::decode_data_frame_descriptor(tensogram::buffer::borrowed(sparse), object_index);
}

std::string metadata_json(const tensogram::global_metadata& g) {
  const std::unique_ptr<tgm_metadata_t> h(capi::new_metadata(g));
  return h->meta.to_json();
}

std::vector<std::pair<std::uint64_t, std::uint64_t>> ranges_arg(const char* fn, const uint64_t* offsets,
                                                                const uint64_t* counts, size_t n) {
  if (n > 0) {
    required(fn, "ranges_offsets", offsets);
    required(fn, "ranges_counts", counts);
  }
  std::vector<std::pair<std::uint64_t, std::uint64_t>> ranges;
  ranges.reserve(n);
  for (size_t i = 0; i < n; ++i) ranges.emplace_back(offsets[i], counts[i]);
  return ranges;
}

}  // namespace

extern "C" {

tgm_error tgm_validate_buffer(const uint8_t* buf, size_t buf_len, const char* level, int32_t check_canonical,
                              tgm_bytes_t* out) {
  constexpr const char* fn = "tgm_validate_buffer";
  return guarded([&] {
    required(fn, "out", out);
    const auto bytes = capi::bytes_arg(fn, "buf", buf, buf_len, true);
    const std::optional<std::string> lvl = capi::optional_text_arg(fn, "level", level);
    const auto mode = tensogram::parse_validation_mode(lvl ? *lvl : "default");
    const auto report =
        tensogram::validate_buffer(bytes, tensogram::validate_options::for_mode(mode, check_canonical != 0));
    *out = capi::make_bytes(tensogram::to_json(report));
  });
}

tgm_error tgm_read_preamble(const uint8_t* buf, size_t buf_len, uint64_t* out_total_length,
                            uint16_t* out_flags) {
  constexpr const char* fn = "tgm_read_preamble";
  return guarded([&] {
    required(fn, "out_total_length", out_total_length);
    required(fn, "out_flags", out_flags);
    const tensogram::format::preamble p =
        tensogram::format::read_preamble(capi::bytes_arg(fn, "buf", buf, buf_len));
    *out_total_length = p.total_length;
    *out_flags = p.flags;
  });
}

tgm_error tgm_layout_from_regions(uint64_t message_length, int32_t flags, const uint64_t* region_offsets,
                                  const uint8_t* const* regions, const size_t* region_lengths,
                                  size_t num_regions, tgm_bytes_t* out_json, uint64_t* out_need_offset,
                                  uint64_t* out_need_length) {
  constexpr const char* fn = "tgm_layout_from_regions";
  return guarded([&] {
    required(fn, "out_json", out_json);
    required(fn, "out_need_offset", out_need_offset);
    required(fn, "out_need_length", out_need_length);
    // scan_entry holds size_t: wasm32 cannot address a longer message.
    if (message_length > std::numeric_limits<std::size_t>::max()) {
      capi::throw_invalid(fn, "message_length " + std::to_string(message_length) +
                                  " does not fit in this build's address space");
    }
    std::vector<region> given = regions_arg(fn, region_offsets, regions, region_lengths, num_regions);
    *out_json = {nullptr, 0};
    *out_need_offset = 0;
    *out_need_length = 0;
    regions_source src(message_length, std::move(given));
    std::optional<std::uint16_t> f;
    if (flags >= 0) f = static_cast<std::uint16_t>(flags);
    try {
      const auto loaded =
          tensogram::io::load_message_layout(src, {0, static_cast<std::size_t>(message_length)}, f);
      std::string json = R"({"metadata":)" + metadata_json(loaded.layout->layout.metadata) +
                         R"(,"first_metadata":)" +
                         metadata_json(*tensogram::io::first_metadata_of(loaded.layout)) + R"(,"whole":)" +
                         (loaded.whole.empty() ? "false" : "true") + R"(,"objects":[)";
      bool first = true;
      for (const auto& o : loaded.layout->layout.objects) {
        json += (first ? "[" : ",[") + std::to_string(o.offset) + "," + std::to_string(o.length) + "]";
        first = false;
      }
      json += "]}";
      *out_json = capi::make_bytes(json);
    } catch (const needs_bytes& need) {
      *out_need_offset = need.range.offset;
      *out_need_length = need.range.length;
    }
  });
}

tgm_error tgm_data_frame_descriptor_from_regions(uint64_t frame_length, const uint64_t* region_offsets,
                                                 const uint8_t* const* regions, const size_t* region_lengths,
                                                 size_t num_regions, size_t object_index,
                                                 tgm_bytes_t* out_json, uint64_t* out_need_offset,
                                                 uint64_t* out_need_length) {
  constexpr const char* fn = "tgm_data_frame_descriptor_from_regions";
  return guarded([&] {
    required(fn, "out_json", out_json);
    required(fn, "out_need_offset", out_need_offset);
    required(fn, "out_need_length", out_need_length);
    const auto given = regions_arg(fn, region_offsets, regions, region_lengths, num_regions);
    *out_json = {nullptr, 0};
    *out_need_offset = 0;
    *out_need_length = 0;
    try {
      const auto d = descriptor_from_regions(given, frame_length, object_index);
      *out_json = capi::make_bytes(tensogram::cbor::to_json_text(d.to_cbor()));
    } catch (const needs_bytes& need) {
      *out_need_offset = need.range.offset;
      *out_need_length = need.range.length;
    }
  });
}

tgm_error tgm_decode_data_frame(const uint8_t* frame, size_t frame_len, size_t object_index,
                                int32_t verify_hash, int32_t restore_non_finite, tgm_message_t** out) {
  constexpr const char* fn = "tgm_decode_data_frame";
  return guarded([&] {
    required(fn, "out", out);
    // Owned copy: the handle outlives the caller's buffer.
    const auto in = capi::bytes_arg(fn, "frame", frame, frame_len);
    const auto bytes = tensogram::buffer::owned(std::vector<std::byte>(in.begin(), in.end()));
    std::vector<tensogram::decoded_object> objects;
    objects.push_back(tensogram::decode_data_frame(
        bytes, object_index, capi::decode_opts(true, 0, verify_hash != 0, restore_non_finite != 0)));
    *out = capi::new_message(tensogram::message(tensogram::metadata(), std::move(objects)));
  });
}

tgm_error tgm_decode_data_frame_range(const uint8_t* frame, size_t frame_len, size_t object_index,
                                      const uint64_t* ranges_offsets, const uint64_t* ranges_counts,
                                      size_t num_ranges, int32_t join, tgm_bytes_t* out, size_t* out_count) {
  constexpr const char* fn = "tgm_decode_data_frame_range";
  return guarded([&] {
    required(fn, "out", out);
    required(fn, "out_count", out_count);
    const auto ranges = ranges_arg(fn, ranges_offsets, ranges_counts, num_ranges);
    const auto bytes = capi::bytes_arg(fn, "frame", frame, frame_len);
    const auto parts = tensogram::decode_data_frame_range(tensogram::buffer::borrowed(bytes), object_index,
                                                          ranges, capi::decode_opts(true, 0, false));
    capi::copy_ranges(parts, join != 0, out, out_count);
  });
}

tgm_error tgm_data_frame_descriptor_json(const uint8_t* frame, size_t frame_len, size_t object_index,
                                         tgm_bytes_t* out) {
  constexpr const char* fn = "tgm_data_frame_descriptor_json";
  return guarded([&] {
    required(fn, "out", out);
    const auto bytes = capi::bytes_arg(fn, "frame", frame, frame_len);
    const auto d = tensogram::decode_data_frame_descriptor(tensogram::buffer::borrowed(bytes), object_index);
    *out = capi::make_bytes(tensogram::cbor::to_json_text(d.to_cbor()));
  });
}

}  // extern "C"
