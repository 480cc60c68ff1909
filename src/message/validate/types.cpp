// Names of the validation levels, modes, severities and issue codes
// (spec 02 §15.1, §15.2) and the options of each mode.
#include <array>
#include <string>

#include "tensogram/core/error.hpp"
#include "tensogram/message/validate.hpp"

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
  // The reference's text (spec 08 §1.7).
  throw invalid_arg_error("unknown validation level: '" + std::string(name) +
                          "', expected one of: quick, default, checksum, full");
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

}  // namespace tensogram
