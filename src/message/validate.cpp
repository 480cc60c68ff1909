// Validation of messages, buffers and files (spec 02 §15).
//
// The structure walk below is deliberately separate from the decoder's frame
// walk (decode.cpp): the decoder stops at the first problem, the validator
// records it and keeps going wherever the bytes still allow, and it applies
// the validator's own bounds (spec 01 §4.5: non-data frames ≥ 20 bytes,
// frames must end before the postamble; §8: padding must be zero). Bodies
// are parsed with the same library functions the decoder uses, so a body the
// validator accepts is one the decoder accepts.
#include "tensogram/message/validate.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdio>
#include <exception>
#include <limits>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "tensogram/cbor/codec.hpp"
#include "tensogram/core/buffer.hpp"
#include "tensogram/core/byte_order.hpp"
#include "tensogram/core/dtype.hpp"
#include "tensogram/core/error.hpp"
#include "tensogram/core/hex.hpp"
#include "tensogram/format/aggregate_frames.hpp"
#include "tensogram/format/frame.hpp"
#include "tensogram/format/hash.hpp"
#include "tensogram/format/preamble.hpp"
#include "tensogram/format/scan.hpp"
#include "tensogram/format/wire.hpp"
#include "tensogram/message/descriptor.hpp"
#include "tensogram/message/masks.hpp"
#include "tensogram/message/metadata.hpp"
#include "tensogram/message/non_finite.hpp"
#include "tensogram/message/pipeline_params.hpp"

namespace tensogram {

// ---------------------------------------------------------------------------
// Names

namespace {

struct code_entry {
  issue_code code;
  std::string_view name;
};

// Spec 02 §15.2, in order; the enumeration follows the same order.
constexpr std::array<code_entry, 55> k_codes = {{
    {issue_code::buffer_too_short, "buffer_too_short"},
    {issue_code::invalid_magic, "invalid_magic"},
    {issue_code::preamble_parse_failed, "preamble_parse_failed"},
    {issue_code::total_length_overflow, "total_length_overflow"},
    {issue_code::total_length_exceeds_buffer, "total_length_exceeds_buffer"},
    {issue_code::total_length_too_small, "total_length_too_small"},
    {issue_code::postamble_invalid, "postamble_invalid"},
    {issue_code::footer_offset_out_of_range, "footer_offset_out_of_range"},
    {issue_code::footer_offset_mismatch, "footer_offset_mismatch"},
    {issue_code::truncated_frame_header, "truncated_frame_header"},
    {issue_code::invalid_frame_header, "invalid_frame_header"},
    {issue_code::frame_length_overflow, "frame_length_overflow"},
    {issue_code::frame_too_small, "frame_too_small"},
    {issue_code::frame_exceeds_message, "frame_exceeds_message"},
    {issue_code::missing_end_marker, "missing_end_marker"},
    {issue_code::frame_order_violation, "frame_order_violation"},
    {issue_code::preceder_not_followed_by_object, "preceder_not_followed_by_object"},
    {issue_code::dangling_preceder, "dangling_preceder"},
    {issue_code::cbor_offset_invalid, "cbor_offset_invalid"},
    {issue_code::cbor_before_boundary_unknown, "cbor_before_boundary_unknown"},
    {issue_code::non_zero_padding, "non_zero_padding"},
    {issue_code::flag_mismatch, "flag_mismatch"},
    {issue_code::no_metadata_frame, "no_metadata_frame"},
    {issue_code::metadata_cbor_parse_failed, "metadata_cbor_parse_failed"},
    {issue_code::metadata_cbor_non_canonical, "metadata_cbor_non_canonical"},
    {issue_code::index_cbor_parse_failed, "index_cbor_parse_failed"},
    {issue_code::index_count_mismatch, "index_count_mismatch"},
    {issue_code::index_offset_mismatch, "index_offset_mismatch"},
    {issue_code::hash_frame_cbor_parse_failed, "hash_frame_cbor_parse_failed"},
    {issue_code::hash_frame_count_mismatch, "hash_frame_count_mismatch"},
    {issue_code::preceder_cbor_parse_failed, "preceder_cbor_parse_failed"},
    {issue_code::preceder_cbor_non_canonical, "preceder_cbor_non_canonical"},
    {issue_code::preceder_base_count_wrong, "preceder_base_count_wrong"},
    {issue_code::base_count_exceeds_objects, "base_count_exceeds_objects"},
    {issue_code::descriptor_cbor_parse_failed, "descriptor_cbor_parse_failed"},
    {issue_code::descriptor_cbor_non_canonical, "descriptor_cbor_non_canonical"},
    {issue_code::ndim_shape_mismatch, "ndim_shape_mismatch"},
    {issue_code::strides_shape_mismatch, "strides_shape_mismatch"},
    {issue_code::shape_overflow, "shape_overflow"},
    {issue_code::unknown_encoding, "unknown_encoding"},
    {issue_code::unknown_filter, "unknown_filter"},
    {issue_code::unknown_compression, "unknown_compression"},
    {issue_code::empty_obj_type, "empty_obj_type"},
    {issue_code::reserved_not_a_map, "reserved_not_a_map"},
    {issue_code::reserved_missing_tensor, "reserved_missing_tensor"},
    {issue_code::hash_mismatch, "hash_mismatch"},
    {issue_code::hash_verification_error, "hash_verification_error"},
    {issue_code::unknown_hash_algorithm, "unknown_hash_algorithm"},
    {issue_code::no_hash_available, "no_hash_available"},
    {issue_code::decode_pipeline_failed, "decode_pipeline_failed"},
    {issue_code::pipeline_config_failed, "pipeline_config_failed"},
    {issue_code::decode_object_failed, "decode_object_failed"},
    {issue_code::decoded_size_mismatch, "decoded_size_mismatch"},
    {issue_code::nan_detected, "nan_detected"},
    {issue_code::inf_detected, "inf_detected"},
}};

constexpr bool codes_in_enum_order() {
  for (std::size_t i = 0; i < k_codes.size(); ++i) {
    if (static_cast<std::size_t>(k_codes[i].code) != i || k_codes[i].name.empty()) return false;
  }
  return static_cast<std::size_t>(issue_code::inf_detected) + 1 == k_codes.size();
}
static_assert(codes_in_enum_order(), "k_codes must list every issue_code in enumeration order");

constexpr std::array<issue_code, k_codes.size()> make_code_list() {
  std::array<issue_code, k_codes.size()> out{};
  for (std::size_t i = 0; i < k_codes.size(); ++i) out[i] = k_codes[i].code;
  return out;
}
constexpr std::array<issue_code, k_codes.size()> k_code_list = make_code_list();

}  // namespace

std::string_view issue_code_name(issue_code c) noexcept {
  const auto i = static_cast<std::size_t>(c);
  return i < k_codes.size() ? k_codes[i].name : std::string_view("unknown");
}

std::span<const issue_code> all_issue_codes() noexcept {
  return k_code_list;
}

std::string_view validation_level_name(validation_level l) noexcept {
  switch (l) {
    case validation_level::structure: return "structure";
    case validation_level::metadata: return "metadata";
    case validation_level::integrity: return "integrity";
    case validation_level::fidelity: return "fidelity";
  }
  return "unknown";
}

std::string_view issue_severity_name(issue_severity s) noexcept {
  return s == issue_severity::error ? "error" : "warning";
}

std::string_view validation_mode_name(validation_mode m) noexcept {
  switch (m) {
    case validation_mode::quick: return "quick";
    case validation_mode::standard: return "default";
    case validation_mode::checksum: return "checksum";
    case validation_mode::full: return "full";
  }
  return "unknown";
}

validation_mode parse_validation_mode(std::string_view name) {
  for (validation_mode m : {validation_mode::quick, validation_mode::standard, validation_mode::checksum,
                            validation_mode::full}) {
    if (validation_mode_name(m) == name) return m;
  }
  throw invalid_arg_error("unknown validation level '" + std::string(name) +
                          "' (expected quick, default, checksum or full)");
}

validate_options validate_options::for_mode(validation_mode mode, bool check_canonical) noexcept {
  validate_options o;
  o.check_canonical = check_canonical;
  switch (mode) {
    case validation_mode::quick: o.max_level = validation_level::structure; break;
    case validation_mode::standard: o.max_level = validation_level::integrity; break;
    case validation_mode::checksum:
      o.max_level = validation_level::integrity;
      o.checksum_only = true;
      break;
    case validation_mode::full: o.max_level = validation_level::fidelity; break;
  }
  return o;
}

// ---------------------------------------------------------------------------
// Reports

bool message_report::ok() const noexcept {
  return error_count() == 0;
}

std::size_t message_report::error_count() const noexcept {
  return static_cast<std::size_t>(std::count_if(issues.begin(), issues.end(), [](const validation_issue& i) {
    return i.severity == issue_severity::error;
  }));
}

bool message_report::has(issue_code code) const noexcept {
  return std::any_of(issues.begin(), issues.end(),
                     [code](const validation_issue& i) { return i.code == code; });
}

bool file_report::ok() const noexcept {
  return file_issues.empty() &&
         std::all_of(messages.begin(), messages.end(), [](const message_report& m) { return m.ok(); });
}

std::size_t file_report::object_count() const noexcept {
  std::size_t n = 0;
  for (const message_report& m : messages) n += m.object_count;
  return n;
}

bool file_report::hash_verified() const noexcept {
  return !messages.empty() && std::all_of(messages.begin(), messages.end(),
                                          [](const message_report& m) { return m.hash_verified; });
}

std::size_t file_report::problem_count() const noexcept {
  std::size_t n = file_issues.size();
  for (const message_report& m : messages) n += m.error_count();
  return n;
}

// ---------------------------------------------------------------------------
// Message validation

namespace {

using format::frame_type;
using opt_u64 = std::optional<std::uint64_t>;

class issue_list {
 public:
  explicit issue_list(std::vector<validation_issue>& out) : out_(out) {}
  void error(issue_code c, validation_level l, opt_u64 object, opt_u64 offset, std::string d) {
    out_.push_back({c, l, issue_severity::error, object, offset, std::move(d)});
  }
  void warning(issue_code c, validation_level l, opt_u64 object, opt_u64 offset, std::string d) {
    out_.push_back({c, l, issue_severity::warning, object, offset, std::move(d)});
  }

 private:
  std::vector<validation_issue>& out_;
};

constexpr validation_level k_structure = validation_level::structure;
constexpr validation_level k_metadata = validation_level::metadata;
constexpr validation_level k_integrity = validation_level::integrity;
constexpr validation_level k_fidelity = validation_level::fidelity;

std::string str(std::uint64_t v) {
  return std::to_string(v);
}

// "<context>: <error>", without repeating the context when the library's
// message already starts with it ("failed to parse index CBOR: ...").
std::string failure(std::string_view context, const std::exception& e) {
  if (const auto* te = dynamic_cast<const tensogram::error*>(&e);
      te != nullptr && te->detail().starts_with(context)) {
    return std::string(te->detail());
  }
  return std::string(context) + ": " + e.what();
}

// A non-data frame located by the walk: its CBOR body for level 2/3.
struct body_frame {
  frame_type type;
  std::size_t offset = 0;
  std::span<const std::byte> body;
};

// One data-object frame whose descriptor and payload region could be
// located, enriched by the later levels.
struct object_ctx {
  std::size_t frame_offset = 0;
  bool hash_present = false;
  std::uint64_t hash_slot = 0;
  std::span<const std::byte> hashed_body;  // spec 01 §4.4
  std::span<const std::byte> descriptor_cbor;
  std::span<const std::byte> region;  // payload region: tensor bytes + mask blobs
  // After the descriptor is parsed: the encoded tensor bytes and the mask
  // blobs (spec 01 §13.3), `mask_base` being where the blobs start in `region`.
  std::span<const std::byte> payload;
  std::span<const std::byte> mask_region;
  std::uint64_t mask_base = 0;
  std::optional<data_object_descriptor> descriptor;
  bool descriptor_failed = false;
};

struct walk_result {
  std::vector<body_frame> frames;  // types 1, 2, 3, 5, 6, 7, 8 in wire order
  std::vector<object_ctx> objects;
  std::uint16_t preamble_flags = 0;
};

bool all_zero(std::span<const std::byte> b) noexcept {
  return std::all_of(b.begin(), b.end(), [](std::byte x) { return x == std::byte{0}; });
}

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

std::string_view phase_label(format::phase p) noexcept {
  switch (p) {
    case format::phase::header: return "header";
    case format::phase::body: return "data-object";
    case format::phase::footer: return "footer";
  }
  return "?";
}

// Slices a type-9 frame at `pos` (already bounds- and ENDF-checked) per
// spec 01 §13.2; records cbor_offset problems. Returns nothing when the
// descriptor/payload boundary cannot be located.
std::optional<object_ctx> slice_data_frame(std::span<const std::byte> buf, std::size_t pos,
                                           const format::frame_header& h, std::size_t object_index,
                                           issue_list& out) {
  const auto total = static_cast<std::size_t>(h.total_length);
  const std::size_t footer = pos + total - format::data_footer_size;  // cbor_offset field
  const std::uint64_t co = load_be64(buf.data() + footer);
  if (co < format::frame_header_size || co > total - format::data_footer_size) {
    out.error(issue_code::cbor_offset_invalid, k_structure, object_index, pos,
              "data object cbor_offset " + str(co) + " out of range [16, " +
                  str(total - format::data_footer_size) + "] at offset " + str(pos));
    return std::nullopt;
  }
  object_ctx o;
  o.frame_offset = pos;
  o.hash_present = (h.flags & format::frame_flags::hash_present) != 0;
  o.hash_slot = load_be64(buf.data() + pos + total - format::common_footer_size);
  o.hashed_body = buf.subspan(pos + format::frame_header_size,
                              total - format::frame_header_size - format::data_footer_size);
  const std::size_t cbor_start = pos + static_cast<std::size_t>(co);
  if ((h.flags & format::frame_flags::cbor_after_payload) != 0) {
    o.descriptor_cbor = buf.subspan(cbor_start, footer - cbor_start);
    o.region = buf.subspan(pos + format::frame_header_size, cbor_start - pos - format::frame_header_size);
  } else {
    // The descriptor's own length says where the payload starts.
    try {
      const cbor::decoded_item item = cbor::decode_prefix(buf.subspan(cbor_start, footer - cbor_start));
      o.descriptor_cbor = buf.subspan(cbor_start, item.consumed);
      o.region = buf.subspan(cbor_start + item.consumed, footer - cbor_start - item.consumed);
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

// Level 1 (spec 02 §15.1). Returns nothing after a fatal problem (the frame
// area cannot be located); otherwise the frames found, even after a problem
// stopped the walk early.
std::optional<walk_result> check_structure(std::span<const std::byte> buf, issue_list& out) {
  using namespace format;
  if (buf.size() < preamble_size) {
    out.error(issue_code::buffer_too_short, k_structure, std::nullopt, 0,
              "buffer too short for preamble: " + str(buf.size()) + " < 24");
    return std::nullopt;
  }
  if (!has_start_magic(buf)) {
    out.error(issue_code::invalid_magic, k_structure, std::nullopt, 0,
              "invalid magic bytes: expected TENSOGRM, got " + quoted_bytes(buf.first(8)));
    return std::nullopt;
  }
  preamble pre;
  try {
    pre = read_preamble(buf);
  } catch (const std::exception& e) {
    out.error(issue_code::preamble_parse_failed, k_structure, std::nullopt, 0,
              "preamble parse failed: " + std::string(e.what()));
    return std::nullopt;
  }

  // Total length and postamble (spec 01 §3.2, §7).
  std::size_t post = 0;
  if (pre.total_length > 0) {
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
    post = total - postamble_size;
    if (!has_end_magic(buf.subspan(post + 16))) {
      out.error(issue_code::postamble_invalid, k_structure, std::nullopt, post,
                "postamble invalid: no end magic 39277777 at offset " + str(post + 16));
      return std::nullopt;
    }
    // The decoder rejects a mirrored length that is neither 0 nor equal
    // (spec 01 §3.2); the validator must not pass what cannot be decoded.
    const std::uint64_t mirrored = load_be64(buf.data() + post + 8);
    if (mirrored != 0 && mirrored != pre.total_length) {
      out.error(issue_code::postamble_invalid, k_structure, std::nullopt, post + 8,
                "postamble invalid: total_length " + str(mirrored) +
                    " does not match preamble total_length " + str(pre.total_length));
      return std::nullopt;
    }
  } else {
    // Streaming message: it ends at the end of the buffer (spec 01 §3.2).
    post = buf.size() - postamble_size;
    if (!has_end_magic(buf.subspan(post + 16))) {
      out.error(issue_code::postamble_invalid, k_structure, std::nullopt, post,
                "missing or invalid postamble in streaming message");
      return std::nullopt;
    }
  }
  const std::uint64_t ffo = load_be64(buf.data() + post);
  if (ffo < preamble_size || ffo > post) {
    out.error(issue_code::footer_offset_out_of_range, k_structure, std::nullopt, post,
              "first_footer_offset " + str(ffo) + " out of range [24, " + str(post) + "]");
  }

  // Frame walk (spec 01 §8 with the validator's bounds of §4.5).
  walk_result w;
  w.preamble_flags = pre.flags;
  const std::size_t end = post;
  std::size_t pos = preamble_size;
  phase current = phase::header;
  bool pending_preceder = false;
  std::size_t object_index = 0;
  std::optional<std::size_t> first_footer;
  std::uint16_t observed = 0;
  while (pos < end) {
    if (end - pos < 2) {
      if (!all_zero(buf.subspan(pos, end - pos))) {
        out.warning(issue_code::non_zero_padding, k_structure, std::nullopt, pos,
                    "unexpected non-zero padding bytes at offset " + str(pos));
      }
      break;
    }
    if (!has_frame_marker(buf.subspan(pos))) {
      // Frames start at multiples of 8: skip to the next one, warning when
      // the skipped bytes are not zero padding.
      const std::size_t next = std::min<std::size_t>(static_cast<std::size_t>(align8(pos + 1)), end);
      if (!all_zero(buf.subspan(pos, next - pos))) {
        out.warning(issue_code::non_zero_padding, k_structure, std::nullopt, pos,
                    "unexpected non-zero padding bytes at offset " + str(pos));
      }
      pos = next;
      continue;
    }
    if (end - pos < frame_header_size) {
      out.error(issue_code::truncated_frame_header, k_structure, std::nullopt, pos,
                "truncated frame header at offset " + str(pos));
      break;
    }
    frame_header h;
    try {
      h = read_frame_header(buf.subspan(pos), pos);
    } catch (const std::exception& e) {
      out.error(issue_code::invalid_frame_header, k_structure, std::nullopt, pos,
                "invalid frame header at offset " + str(pos) + ": " + e.what());
      break;
    }
    const bool is_data = h.type == frame_type::ntensor;
    const std::uint64_t min_size =
        is_data ? min_data_frame_size : frame_header_size + frame_end_marker.size();
    if (h.total_length < min_size) {
      out.error(issue_code::frame_too_small, k_structure, std::nullopt, pos,
                "frame at offset " + str(pos) + " total_length " + str(h.total_length) + " < minimum " +
                    str(min_size));
      break;
    }
    if (h.total_length > std::numeric_limits<std::size_t>::max() - pos) {
      out.error(issue_code::frame_length_overflow, k_structure, std::nullopt, pos,
                "frame at offset " + str(pos) + " total_length " + str(h.total_length) + " causes overflow");
      break;
    }
    const std::size_t frame_end = pos + static_cast<std::size_t>(h.total_length);
    if (frame_end > end) {
      out.error(issue_code::frame_exceeds_message, k_structure, std::nullopt, pos,
                "frame at offset " + str(pos) + " extends into postamble (frame_end=" + str(frame_end) +
                    ", postamble_start=" + str(end) + ")");
      break;
    }
    const std::size_t endf = frame_end - frame_end_marker.size();
    if (!std::equal(frame_end_marker.begin(), frame_end_marker.end(),
                    buf.begin() + static_cast<std::ptrdiff_t>(endf),
                    [](char a, std::byte b) { return static_cast<std::byte>(a) == b; })) {
      out.error(issue_code::missing_end_marker, k_structure, std::nullopt, endf,
                "missing ENDF marker at offset " + str(endf) + " for frame starting at " + str(pos));
      break;
    }

    // Ordering and preceder rules (spec 01 §6).
    const phase ph = phase_of(h.type);
    if (ph < current) {
      out.error(issue_code::frame_order_violation, k_structure, std::nullopt, pos,
                "frame " + std::string(frame_type_name(h.type)) + " at offset " + str(pos) +
                    " appears after the " + std::string(phase_label(current)) +
                    " phase — frames must appear in order: headers, data "
                    "objects, footers");
    }
    if (ph == phase::footer && !first_footer) first_footer = pos;
    current = std::max(current, ph);
    if (pending_preceder && !is_data) {
      out.error(issue_code::preceder_not_followed_by_object, k_structure, std::nullopt, pos,
                "PrecederMetadata must be followed by a data-object frame, got " +
                    std::string(frame_type_name(h.type)) + " at offset " + str(pos));
      pending_preceder = false;
    }
    observed |= flag_of(h.type);
    if (h.type == frame_type::preceder_metadata) pending_preceder = true;

    if (is_data) {
      pending_preceder = false;
      if (std::optional<object_ctx> o = slice_data_frame(buf, pos, h, object_index, out)) {
        w.objects.push_back(std::move(*o));
      }
      ++object_index;
    } else {
      // A 20–27 byte frame has no room for its hash slot: an empty body
      // (which then fails to parse at level 2).
      const std::size_t body_len =
          h.total_length >= min_frame_size ? static_cast<std::size_t>(h.total_length) - min_frame_size : 0;
      w.frames.push_back({h.type, pos, buf.subspan(pos + frame_header_size, body_len)});
    }

    const std::uint64_t aligned = align8(frame_end);
    if (aligned <= end) {
      const auto next = static_cast<std::size_t>(aligned);
      if (!all_zero(buf.subspan(frame_end, next - frame_end))) {
        out.warning(issue_code::non_zero_padding, k_structure, std::nullopt, frame_end,
                    "non-zero alignment padding after frame at offset " + str(frame_end));
      }
      pos = next;
    } else {
      pos = frame_end;
    }
  }

  if (pending_preceder) {
    out.error(issue_code::dangling_preceder, k_structure, std::nullopt, std::nullopt,
              "dangling PrecederMetadata: no DataObject frame followed");
  }
  const std::uint64_t expected_ffo = first_footer.value_or(end);
  if (ffo != expected_ffo) {
    out.warning(issue_code::footer_offset_mismatch, k_structure, std::nullopt, std::nullopt,
                "first_footer_offset " + str(ffo) + " does not match actual first footer position " +
                    str(expected_ffo));
  }
  // Bits 0–6 only; bit 7 is checked by the integrity level (spec 01 §3.1).
  for (const flag_name& f : k_flag_names) {
    if (((pre.flags & f.bit) != 0) != ((observed & f.bit) != 0)) {
      out.warning(issue_code::flag_mismatch, k_structure, std::nullopt, 10,
                  std::string(f.name) + " flag mismatch: declared " +
                      ((pre.flags & f.bit) != 0 ? "set" : "clear") + ", observed " +
                      ((observed & f.bit) != 0 ? "present" : "absent"));
    }
  }
  if ((observed & (message_flags::header_metadata | message_flags::footer_metadata)) == 0) {
    out.error(issue_code::no_metadata_frame, k_structure, std::nullopt, std::nullopt,
              "no metadata frame found (neither header nor footer)");
  }
  return w;
}

// ---- level 2 ----------------------------------------------------------------

// The validator's canonical check (spec 02 §1.6): empty when canonical,
// else why not.
std::optional<std::string> canonical_problem(std::span<const std::byte> body) {
  try {
    if (cbor::has_canonical_key_order(cbor::decode(body))) return std::nullopt;
    return std::string("CBOR map keys not in canonical order (or duplicated)");
  } catch (const std::exception& e) {
    return "failed to parse CBOR: " + std::string(e.what());
  }
}

std::uint64_t mask_uint(const cbor::value& entry, std::string_view kind, const char* key) {
  const cbor::value* v = entry.find(key);
  const auto u = v != nullptr ? v->as_uint64() : std::nullopt;
  if (!u) {
    throw metadata_error("failed to deserialize descriptor: masks." + std::string(kind) + "." + key +
                         " must be an unsigned integer");
  }
  return *u;
}

// The present masks of a descriptor as (kind index, method, offset, length).
struct mask_ref {
  std::size_t kind = 0;
  std::string method;
  std::uint64_t offset = 0;
  std::uint64_t length = 0;
};

// Typed view of the `masks` sub-map (spec 02 §4.3); throws metadata_error
// when an entry is ill-typed (the reference's typed deserialisation fails).
std::vector<mask_ref> mask_refs(const data_object_descriptor& d) {
  std::vector<mask_ref> out;
  if (!d.masks) return out;
  for (std::size_t k = 0; k < mask_kind_names.size(); ++k) {
    const std::string_view kind = mask_kind_names[k];
    const cbor::value* entry = d.masks->find(kind);
    if (entry == nullptr) continue;
    if (!entry->is_map()) {
      throw metadata_error("failed to deserialize descriptor: masks." + std::string(kind) + " must be a map");
    }
    const cbor::value* method = entry->find("method");
    const std::string* name = method != nullptr ? method->as_text() : nullptr;
    if (name == nullptr) {
      throw metadata_error("failed to deserialize descriptor: masks." + std::string(kind) +
                           ".method must be text");
    }
    out.push_back({k, *name, mask_uint(*entry, kind, "offset"), mask_uint(*entry, kind, "length")});
  }
  return out;
}

data_object_descriptor parse_descriptor(std::span<const std::byte> cbor_bytes) {
  cbor::value v;
  try {
    v = cbor::decode(cbor_bytes);
  } catch (const metadata_error& e) {
    throw metadata_error("failed to parse descriptor CBOR: " + std::string(e.detail()));
  }
  data_object_descriptor d = data_object_descriptor::from_cbor(v);
  (void)mask_refs(d);
  return d;
}

// Splits the payload region at the smallest mask offset (spec 01 §13.2).
// Returns false when that offset lies beyond the region.
bool split_masks(object_ctx& o) {
  const std::vector<mask_ref> masks = mask_refs(*o.descriptor);
  if (masks.empty()) return true;
  std::uint64_t first = masks.front().offset;
  for (const mask_ref& m : masks) first = std::min(first, m.offset);
  if (first > o.region.size()) return false;
  o.payload = o.region.first(static_cast<std::size_t>(first));
  o.mask_region = o.region.subspan(static_cast<std::size_t>(first));
  o.mask_base = first;
  return true;
}

void check_descriptor(object_ctx& o, std::size_t i, issue_list& out, bool canonical) {
  if (canonical) {
    if (const auto problem = canonical_problem(o.descriptor_cbor)) {
      out.warning(issue_code::descriptor_cbor_non_canonical, k_metadata, i, std::nullopt,
                  "descriptor CBOR is not canonical: " + *problem);
    }
  }
  try {
    o.descriptor = parse_descriptor(o.descriptor_cbor);
  } catch (const std::exception& e) {
    o.descriptor_failed = true;
    out.error(issue_code::descriptor_cbor_parse_failed, k_metadata, i, std::nullopt,
              "descriptor CBOR parse failed: " + std::string(e.what()));
    return;
  }
  const data_object_descriptor& d = *o.descriptor;
  if (d.ndim != d.shape.size()) {
    out.error(issue_code::ndim_shape_mismatch, k_metadata, i, std::nullopt,
              "ndim " + str(d.ndim) + " != shape.len() " + str(d.shape.size()));
  }
  if (d.strides.size() != d.shape.size()) {
    out.error(issue_code::strides_shape_mismatch, k_metadata, i, std::nullopt,
              "strides.len() " + str(d.strides.size()) + " != shape.len() " + str(d.shape.size()));
  }
  if (!element_count(d.shape)) {
    out.error(issue_code::shape_overflow, k_metadata, i, std::nullopt, "shape product overflows u64");
  }
  if (!codecs::is_known_encoding(d.encoding)) {
    out.error(issue_code::unknown_encoding, k_metadata, i, std::nullopt,
              "unknown encoding '" + d.encoding + "'");
  }
  if (!codecs::is_known_filter(d.filter)) {
    out.error(issue_code::unknown_filter, k_metadata, i, std::nullopt, "unknown filter '" + d.filter + "'");
  }
  // Every name the wire format defines, built into this library or not
  // (spec 02 §15.2); level 3 reports codecs that cannot be run.
  if (!codecs::is_known_compression(d.compression)) {
    out.error(issue_code::unknown_compression, k_metadata, i, std::nullopt,
              "unknown compression '" + d.compression + "'");
  }
  if (d.type.empty()) {
    out.error(issue_code::empty_obj_type, k_metadata, i, std::nullopt, "obj_type is empty");
  }
  if (!split_masks(o)) {
    std::uint64_t first = std::numeric_limits<std::uint64_t>::max();
    for (const mask_ref& m : mask_refs(d)) first = std::min(first, m.offset);
    out.error(
        issue_code::descriptor_cbor_parse_failed, k_metadata, i, o.frame_offset,
        "mask offset " + str(first) + " out of range (payload region is " + str(o.region.size()) + " bytes)");
  }
}

void check_metadata(walk_result& w, issue_list& out, bool canonical) {
  std::optional<global_metadata> meta;
  const std::size_t objects = w.objects.size();
  for (const body_frame& f : w.frames) {
    switch (f.type) {
      case frame_type::header_metadata:
      case frame_type::footer_metadata:
        if (canonical) {
          if (const auto problem = canonical_problem(f.body)) {
            out.warning(issue_code::metadata_cbor_non_canonical, k_metadata, std::nullopt, std::nullopt,
                        "metadata CBOR is not canonical: " + *problem);
          }
        }
        try {
          meta = global_metadata::from_cbor_bytes(f.body);  // the last metadata frame wins (spec 01 §6)
        } catch (const std::exception& e) {
          // Without metadata the remaining checks have nothing to stand on.
          out.error(issue_code::metadata_cbor_parse_failed, k_metadata, std::nullopt, std::nullopt,
                    "failed to parse metadata CBOR: " + std::string(e.what()));
          return;
        }
        break;
      case frame_type::header_index:
      case frame_type::footer_index:
        try {
          const format::index_body idx = format::parse_index_body(f.body);
          if (idx.offsets.size() != objects) {
            // Reported twice, as the reference does (spec 02 §15.2).
            out.error(issue_code::index_count_mismatch, k_metadata, std::nullopt, std::nullopt,
                      "index offsets.len() " + str(idx.offsets.size()) + " != actual data object count " +
                          str(objects));
            out.error(
                issue_code::index_count_mismatch, k_metadata, std::nullopt, std::nullopt,
                "index offsets length " + str(idx.offsets.size()) + " != data object count " + str(objects));
          }
          for (std::size_t j = 0; j < idx.offsets.size() && j < objects; ++j) {
            if (idx.offsets[j] != w.objects[j].frame_offset) {
              out.error(issue_code::index_offset_mismatch, k_metadata, j, std::nullopt,
                        "index offset[" + str(j) + "] = " + str(idx.offsets[j]) +
                            " but actual data object frame at " + str(w.objects[j].frame_offset));
            }
          }
        } catch (const std::exception& e) {
          out.error(issue_code::index_cbor_parse_failed, k_metadata, std::nullopt, std::nullopt,
                    failure("failed to parse index CBOR", e));
        }
        break;
      case frame_type::header_hash:
      case frame_type::footer_hash:
        try {
          const format::hash_body hb = format::parse_hash_body(f.body);
          if (hb.hashes.size() != objects) {
            out.error(
                issue_code::hash_frame_count_mismatch, k_metadata, std::nullopt, std::nullopt,
                "hash frame has " + str(hb.hashes.size()) + " hashes but " + str(objects) + " data objects");
          }
        } catch (const std::exception& e) {
          out.error(issue_code::hash_frame_cbor_parse_failed, k_metadata, std::nullopt, std::nullopt,
                    failure("failed to parse hash frame CBOR", e));
        }
        break;
      default: break;
    }
  }

  for (const body_frame& f : w.frames) {
    if (f.type != frame_type::preceder_metadata) continue;
    if (canonical) {
      if (const auto problem = canonical_problem(f.body)) {
        out.warning(issue_code::preceder_cbor_non_canonical, k_metadata, std::nullopt, f.offset,
                    "preceder metadata CBOR is not canonical: " + *problem);
      }
    }
    try {
      const global_metadata p = global_metadata::from_cbor_bytes(f.body);
      if (p.base.size() != 1) {
        out.error(issue_code::preceder_base_count_wrong, k_metadata, std::nullopt, f.offset,
                  "PrecederMetadata base must have exactly 1 entry, got " + str(p.base.size()));
      }
    } catch (const std::exception& e) {
      out.error(issue_code::preceder_cbor_parse_failed, k_metadata, std::nullopt, f.offset,
                "failed to parse preceder metadata CBOR: " + std::string(e.what()));
    }
  }

  if (!meta) return;  // no_metadata_frame was reported by level 1
  if (meta->base.size() > objects) {
    out.error(issue_code::base_count_exceeds_objects, k_metadata, std::nullopt, std::nullopt,
              "metadata base has " + str(meta->base.size()) + " entries but message has " + str(objects) +
                  " data objects");
  }
  for (std::size_t i = 0; i < objects; ++i) check_descriptor(w.objects[i], i, out, canonical);

  for (std::size_t i = 0; i < meta->base.size() && i < objects; ++i) {
    const cbor::value* reserved = meta->base[i].find("_reserved_");
    if (reserved == nullptr) continue;  // a missing _reserved_ is not reported
    if (!reserved->is_map()) {
      out.error(issue_code::reserved_not_a_map, k_metadata, i, std::nullopt, "base._reserved_ is not a map");
    } else if (reserved->find("tensor") == nullptr) {
      out.warning(issue_code::reserved_missing_tensor, k_metadata, i, std::nullopt,
                  "base._reserved_ missing 'tensor' key");
    }
  }
}

// ---- level 4 ----------------------------------------------------------------

bool mask_bit(const std::vector<std::byte>& bits, std::uint64_t i) noexcept {
  return ((static_cast<unsigned>(bits[static_cast<std::size_t>(i / 8)]) >> (7 - i % 8)) & 1U) != 0;
}

std::string shape_text(const std::vector<std::uint64_t>& shape) {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i == 0 ? "" : ", ") + str(shape[i]);
  return s + "]";
}

// Decoded size, masks and NaN/Inf of one object (spec 02 §15.2 fidelity
// rows). `decoded` is in the declared byte order.
void check_fidelity(const object_ctx& o, std::size_t i, std::span<const std::byte> decoded, issue_list& out) {
  const data_object_descriptor& d = *o.descriptor;
  const std::optional<std::uint64_t> n = element_count(d.shape);
  if (!n) {
    out.error(issue_code::decoded_size_mismatch, k_fidelity, i, o.frame_offset,
              "shape product overflows, cannot verify decoded size");
    return;
  }
  const std::optional<std::uint64_t> expected = raw_byte_size(d.dtype, *n);
  if (!expected) {
    out.error(issue_code::decoded_size_mismatch, k_fidelity, i, o.frame_offset,
              "expected decoded size overflows usize");
    return;
  }
  if (decoded.size() != *expected) {
    out.error(issue_code::decoded_size_mismatch, k_fidelity, i, o.frame_offset,
              "decoded size " + str(decoded.size()) + " != expected " + str(*expected) + " (shape " +
                  shape_text(d.shape) + ", dtype " + std::string(dtype_name(d.dtype)) + ")");
    return;
  }

  // Positions the encoder recorded as non-finite are expected there.
  std::vector<std::vector<std::byte>> masks;
  try {
    for (const mask_ref& m : mask_refs(d)) {
      const std::uint64_t rel = m.offset - o.mask_base;  // offset ≥ mask_base by construction
      if (m.offset < o.mask_base || rel > o.mask_region.size() || m.length > o.mask_region.size() - rel) {
        throw framing_error("mask_" + std::string(mask_kind_names[m.kind]) + " (offset " + str(m.offset) +
                            ", length " + str(m.length) + ") exceeds the payload region");
      }
      masks.push_back(decode_mask_blob(
          o.mask_region.subspan(static_cast<std::size_t>(rel), static_cast<std::size_t>(m.length)), *n,
          m.method));
    }
  } catch (const std::exception& e) {
    out.error(issue_code::decode_object_failed, k_fidelity, i, o.frame_offset,
              "bitmask decode failed: " + std::string(e.what()));
    return;
  }
  auto masked = [&](std::uint64_t e) {
    return std::any_of(masks.begin(), masks.end(),
                       [e](const std::vector<std::byte>& m) { return mask_bit(m, e); });
  };

  const byte_order order = d.effective_byte_order();
  const std::size_t width = dtype_width(d.dtype);
  std::uint64_t from = 0;
  while (from < *n) {
    const auto start = static_cast<std::size_t>(from * width);
    const std::optional<non_finite_hit> hit =
        find_non_finite(d.dtype, order, decoded.subspan(start), true, true, from);
    if (!hit) return;
    if (masked(hit->element)) {
      from = hit->element + 1;
      continue;
    }
    non_finite_kind kind = hit->kind;
    std::string component;
    if (d.dtype == dtype::complex64 || d.dtype == dtype::complex128) {
      // Spec 02 §15.2: the real component is reported before the imaginary
      // one (whatever their kinds), unlike the encoder's priority.
      const dtype part = d.dtype == dtype::complex64 ? dtype::float32 : dtype::float64;
      const auto at = static_cast<std::size_t>(hit->element * width);
      const std::optional<non_finite_hit> c =
          find_non_finite(part, order, decoded.subspan(at, width), true, true);
      if (c) {
        kind = c->kind;
        component = c->element == 0 ? "real" : "imaginary";
      }
    }
    const bool nan = kind == non_finite_kind::nan;
    const std::string where = component.empty() ? " (not recorded in mask)"
                                                : " (" + component + " component, not recorded in mask)";
    out.error(
        nan ? issue_code::nan_detected : issue_code::inf_detected, k_fidelity, i, o.frame_offset,
        std::string("unexpected ") + (nan ? "NaN" : "Inf") + " at element " + str(hit->element) + where);
    return;  // first occurrence only
  }
}

// ---- level 3 ----------------------------------------------------------------

struct aggregate {
  frame_type type;
  std::size_t offset;
  std::vector<std::string> hashes;
};

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// Returns hash_verified before the "no error anywhere" rule. Fidelity issues
// go to `fidelity` so that the report lists all integrity issues first, yet
// each object is decoded once and its decoded bytes dropped straight away.
bool check_integrity(walk_result& w, issue_list& out, issue_list& fidelity, bool checksum_only,
                     bool run_fidelity) {
  bool all_verified = true;
  bool any_verified = false;

  // Aggregate hash frames (spec 01 §11, spec 02 §15.2).
  std::vector<aggregate> aggregates;
  for (const body_frame& f : w.frames) {
    if (f.type != frame_type::header_hash && f.type != frame_type::footer_hash) continue;
    try {
      format::hash_body hb = format::parse_hash_body(f.body);
      if (hb.algorithm != "xxh3") {
        out.warning(issue_code::unknown_hash_algorithm, k_integrity, std::nullopt, f.offset,
                    "unknown hash algorithm '" + hb.algorithm +
                        "' in hash frame, aggregate entries cannot be verified (inline slots still checked)");
        continue;
      }
      aggregates.push_back({f.type, f.offset, std::move(hb.hashes)});
    } catch (const std::exception& e) {
      all_verified = false;
      out.error(issue_code::hash_frame_cbor_parse_failed, k_integrity, std::nullopt, f.offset,
                failure("failed to parse hash frame CBOR", e));
    }
  }
  for (std::size_t k = 1; k < aggregates.size(); ++k) {
    const aggregate& a = aggregates.front();
    const aggregate& b = aggregates[k];
    bool same = a.hashes.size() == b.hashes.size();
    for (std::size_t j = 0; same && j < a.hashes.size(); ++j) same = lower(a.hashes[j]) == lower(b.hashes[j]);
    if (!same) {
      all_verified = false;
      out.error(issue_code::hash_mismatch, k_integrity, std::nullopt, b.offset,
                std::string(format::frame_type_name(b.type)) + " at offset " + str(b.offset) +
                    " disagrees with " + std::string(format::frame_type_name(a.type)) + " at offset " +
                    str(a.offset));
    }
  }
  for (const aggregate& a : aggregates) {
    for (std::size_t j = 0; j < a.hashes.size() && j < w.objects.size(); ++j) {
      const object_ctx& o = w.objects[j];
      // A slot without HASH_PRESENT is meaningless (spec 01 §4.2).
      if (!o.hash_present || lower(a.hashes[j]) == hex16(o.hash_slot)) continue;
      all_verified = false;
      out.error(issue_code::hash_mismatch, k_integrity, j, a.offset,
                std::string(format::frame_type_name(a.type)) + " entry " + str(j) + " (" + a.hashes[j] +
                    ") differs from the inline hash slot of object " + str(j) + " (" + hex16(o.hash_slot) +
                    ")");
    }
  }

  const bool hashes_present = (w.preamble_flags & format::message_flags::hashes_present) != 0;
  for (std::size_t i = 0; i < w.objects.size(); ++i) {
    object_ctx& o = w.objects[i];
    if (!o.descriptor && !o.descriptor_failed) {
      // Level 2 did not run (checksum mode).
      try {
        o.descriptor = parse_descriptor(o.descriptor_cbor);
        if (!split_masks(o)) o.payload = o.region;
      } catch (const std::exception& e) {
        o.descriptor_failed = true;
        out.error(issue_code::hash_verification_error, k_integrity, i, std::nullopt,
                  "failed to parse descriptor: " + std::string(e.what()));
      }
    }

    if (!hashes_present) {
      out.warning(
          issue_code::no_hash_available, k_integrity, i, std::nullopt,
          "HASHES_PRESENT flag is clear — message was encoded without hashes; cannot verify integrity");
      all_verified = false;
    } else if (!o.hash_present) {
      out.error(issue_code::hash_verification_error, k_integrity, i, o.frame_offset,
                "frame hash verification error: " + std::string(missing_hash_error(i).what()));
      all_verified = false;
    } else if (const std::uint64_t actual = format::xxh3_64(o.hashed_body); actual != o.hash_slot) {
      out.error(issue_code::hash_mismatch, k_integrity, i, o.frame_offset,
                "frame hash mismatch (expected " + hex16(o.hash_slot) + ", got " + hex16(actual) + ")");
      all_verified = false;
    } else {
      any_verified = true;
    }

    if (!o.descriptor || checksum_only) continue;
    const data_object_descriptor& d = *o.descriptor;
    if (d.encoding == "none" && d.filter == "none" && d.compression == "none") {
      // No decode check for raw payloads (spec 02 §15.2 notes).
      if (run_fidelity) check_fidelity(o, i, o.payload, fidelity);
      continue;
    }
    const std::optional<std::uint64_t> n = element_count(d.shape);
    if (!n) continue;  // shape_overflow was reported by level 2
    std::optional<codecs::pipeline> pl;
    try {
      pl.emplace(build_pipeline(d));
    } catch (const std::exception& e) {
      out.error(issue_code::pipeline_config_failed, k_integrity, i, o.frame_offset,
                "cannot build pipeline config: " + std::string(e.what()));
      continue;
    }
    buffer decoded;
    try {
      const byte_order order = d.effective_byte_order();
      decoded = pl->decode(buffer::borrowed(o.payload), *n, order, order);
    } catch (const std::exception& e) {
      out.error(issue_code::decode_pipeline_failed, k_integrity, i, o.frame_offset,
                "decode pipeline failed: " + std::string(e.what()));
      continue;
    }
    if (run_fidelity) check_fidelity(o, i, decoded.bytes(), fidelity);
  }
  return any_verified && all_verified;
}

}  // namespace

message_report validate_message(std::span<const std::byte> msg, const validate_options& options) {
  message_report report;
  const bool checksum_only = options.checksum_only;
  const validation_level effective =
      checksum_only ? std::max(options.max_level, validation_level::integrity) : options.max_level;
  const bool run_metadata =
      (effective >= validation_level::metadata && !checksum_only) || options.check_canonical;
  const bool run_integrity = effective >= validation_level::integrity;
  const bool run_fidelity = effective >= validation_level::fidelity && !checksum_only;

  std::vector<validation_issue> structure;
  issue_list structure_out(structure);
  std::optional<walk_result> walk = check_structure(msg, structure_out);
  for (validation_issue& i : structure) {
    // Checksum mode keeps structural errors (the hashes cannot be trusted
    // without a sound frame walk) but not structural warnings.
    if (!checksum_only || i.severity == issue_severity::error) report.issues.push_back(std::move(i));
  }

  if (walk) {
    report.object_count = walk->objects.size();
    issue_list out(report.issues);
    if (run_metadata) check_metadata(*walk, out, options.check_canonical);
    if (run_integrity) {
      std::vector<validation_issue> fidelity;
      issue_list fidelity_out(fidelity);
      report.hash_verified = check_integrity(*walk, out, fidelity_out, checksum_only, run_fidelity);
      report.issues.insert(report.issues.end(), std::make_move_iterator(fidelity.begin()),
                           std::make_move_iterator(fidelity.end()));
    }
  }
  if (!report.ok()) report.hash_verified = false;
  return report;
}

// ---------------------------------------------------------------------------
// Buffers and files

file_report validate_buffer(std::span<const std::byte> bytes, const validate_options& options,
                            const validate_progress& progress) {
  file_report report;
  const std::vector<scan_entry> found = format::scan(bytes);
  std::size_t expected = 0;
  for (std::size_t k = 0; k < found.size(); ++k) {
    const scan_entry& e = found[k];
    if (e.offset > expected) {
      report.file_issues.push_back(
          {expected, e.offset - expected,
           str(e.offset - expected) + " unrecognized bytes at offset " + str(expected)});
    }
    report.messages.push_back(validate_message(bytes.subspan(e.offset, e.length), options));
    expected = e.offset + e.length;
    if (progress) progress(k + 1, found.size());
  }
  if (expected < bytes.size()) {
    const std::size_t trailing = bytes.size() - expected;
    report.file_issues.push_back(
        {expected, trailing,
         report.messages.empty()
             ? str(trailing) + " bytes with no valid messages"
             : str(trailing) + " trailing bytes after last message at offset " + str(expected)});
  }
  return report;
}

file_report validate_file(const std::filesystem::path& path, const validate_options& options,
                          const validate_progress& progress) {
  // A read-only mapping: the scan reads preambles/postambles, validation
  // the pages of the message at hand; nothing is copied.
  const buffer mapped = buffer::map_file(path);
  return validate_buffer(mapped.bytes(), options, progress);
}

// ---------------------------------------------------------------------------
// JSON (spec 02 §15.3)

namespace {

using ojson = nlohmann::ordered_json;

ojson issue_json(const validation_issue& i) {
  ojson j;
  j["code"] = issue_code_name(i.code);
  j["level"] = validation_level_name(i.level);
  j["severity"] = issue_severity_name(i.severity);
  if (i.object_index) j["object_index"] = *i.object_index;
  if (i.byte_offset) j["byte_offset"] = *i.byte_offset;
  j["description"] = i.description;
  return j;
}

ojson report_json(const message_report& r) {
  ojson issues = ojson::array();
  for (const validation_issue& i : r.issues) issues.push_back(issue_json(i));
  ojson j;
  j["issues"] = std::move(issues);
  j["object_count"] = r.object_count;
  j["hash_verified"] = r.hash_verified;
  return j;
}

std::string dump(const ojson& j, int indent) {
  // Descriptions quote wire bytes; never let an invalid UTF-8 sequence turn
  // into an exception here.
  return j.dump(indent, ' ', false, ojson::error_handler_t::replace);
}

validate_options options_for(const char* level, bool check_canonical) {
  return validate_options::for_mode(parse_validation_mode(level != nullptr ? level : "default"),
                                    check_canonical);
}

}  // namespace

std::string to_json(const message_report& report, int indent) {
  return dump(report_json(report), indent);
}

std::string to_json(const file_report& report, int indent) {
  ojson issues = ojson::array();
  for (const file_issue& f : report.file_issues) {
    ojson j;
    j["byte_offset"] = f.byte_offset;
    j["length"] = f.length;
    j["description"] = f.description;
    issues.push_back(std::move(j));
  }
  ojson messages = ojson::array();
  for (const message_report& m : report.messages) messages.push_back(report_json(m));
  ojson j;
  j["file_issues"] = std::move(issues);
  j["messages"] = std::move(messages);
  return dump(j, indent);
}

std::string validate(const std::uint8_t* buf, std::size_t len, const char* level, bool check_canonical) {
  const validate_options options = options_for(level, check_canonical);
  if (buf == nullptr && len != 0) throw invalid_arg_error("null buffer with non-zero length");
  const std::span<const std::byte> bytes(reinterpret_cast<const std::byte*>(buf), buf == nullptr ? 0 : len);
  return to_json(validate_message(bytes, options));
}

std::string validate_file(const char* path, const char* level, bool check_canonical) {
  const validate_options options = options_for(level, check_canonical);
  if (path == nullptr) throw invalid_arg_error("null path");
  return to_json(validate_file(std::filesystem::path(path), options));
}

}  // namespace tensogram
