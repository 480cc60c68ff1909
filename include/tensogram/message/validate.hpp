// Validation of messages, buffers and files (spec 02 §15, spec 04 A.5,
// Part B `validate`, Part C/D `validate`/`validate_file`).
//
// Validation never throws on bad data: every problem becomes an issue in a
// report. Levels build on each other: 1 structure (framing), 2 metadata (CBOR
// bodies and their consistency), 3 integrity (frame hashes, aggregate hash
// frames, decoding of non-trivial pipelines), 4 fidelity (full decode,
// decoded size, NaN/Inf not covered by a mask).
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace tensogram {

/// Validation levels (spec 02 §15.1); each includes the ones below it.
enum class validation_level : std::uint8_t { structure = 1, metadata = 2, integrity = 3, fidelity = 4 };

/// Named modes of the CLI flags and the `level=` argument of the string API
/// (spec 02 §15.1). `standard` is the mode named "default".
enum class validation_mode : std::uint8_t { quick, standard, checksum, full };

enum class issue_severity : std::uint8_t { error, warning };

/// The stable issue codes (spec 02 §15.2), in the spec's order.
enum class issue_code : std::uint8_t {
  // level 1: structure
  buffer_too_short,
  invalid_magic,
  preamble_parse_failed,
  total_length_overflow,
  total_length_exceeds_buffer,
  total_length_too_small,
  postamble_invalid,
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
  cbor_offset_invalid,
  cbor_before_boundary_unknown,
  non_zero_padding,
  flag_mismatch,
  no_metadata_frame,
  // level 2: metadata
  metadata_cbor_parse_failed,
  metadata_cbor_non_canonical,
  index_cbor_parse_failed,
  index_count_mismatch,
  index_offset_mismatch,
  hash_frame_cbor_parse_failed,
  hash_frame_count_mismatch,
  preceder_cbor_parse_failed,
  preceder_cbor_non_canonical,
  preceder_base_count_wrong,
  base_count_exceeds_objects,
  descriptor_cbor_parse_failed,
  descriptor_cbor_non_canonical,
  ndim_shape_mismatch,
  strides_shape_mismatch,
  shape_overflow,
  unknown_encoding,
  unknown_filter,
  unknown_compression,
  empty_obj_type,
  reserved_not_a_map,
  reserved_missing_tensor,
  // level 3: integrity
  hash_mismatch,
  hash_verification_error,
  unknown_hash_algorithm,
  no_hash_available,
  decode_pipeline_failed,
  pipeline_config_failed,
  // level 4: fidelity
  decode_object_failed,
  decoded_size_mismatch,
  nan_detected,
  inf_detected,
};

/// snake_case names as they appear in reports (`"hash_mismatch"`).
[[nodiscard]] std::string_view issue_code_name(issue_code c) noexcept;
/// Every code, in the order of the enumeration.
[[nodiscard]] std::span<const issue_code> all_issue_codes() noexcept;
/// `"structure"`, `"metadata"`, `"integrity"`, `"fidelity"`.
[[nodiscard]] std::string_view validation_level_name(validation_level l) noexcept;
/// `"error"`, `"warning"`.
[[nodiscard]] std::string_view issue_severity_name(issue_severity s) noexcept;
/// `"quick"`, `"default"`, `"checksum"`, `"full"`.
[[nodiscard]] std::string_view validation_mode_name(validation_mode m) noexcept;
/// The mode of a name above; throws `invalid_arg_error` for anything else.
[[nodiscard]] validation_mode parse_validation_mode(std::string_view name);

struct validate_options {
  /// Highest level run (spec 02 §15.1: default integrity).
  validation_level max_level = validation_level::integrity;
  /// Check canonical CBOR key order of metadata, preceder and descriptor
  /// bodies (runs the metadata level even in quick and checksum modes).
  bool check_canonical = false;
  /// Hash verification only: structural errors are kept, structural
  /// warnings, metadata checks, decode checks and fidelity are dropped.
  bool checksum_only = false;

  /// The options of a named mode (spec 02 §15.1 table).
  [[nodiscard]] static validate_options for_mode(validation_mode mode, bool check_canonical = false) noexcept;
};

struct validation_issue {
  issue_code code = issue_code::buffer_too_short;
  validation_level level = validation_level::structure;
  issue_severity severity = issue_severity::error;
  /// 0-based object index, when the issue concerns one object.
  std::optional<std::uint64_t> object_index;
  /// Offset from the start of the message, when the issue has a position.
  std::optional<std::uint64_t> byte_offset;
  std::string description;

  friend bool operator==(const validation_issue&, const validation_issue&) = default;
};

/// The report on one message (spec 02 §15.3).
struct message_report {
  std::vector<validation_issue> issues;
  /// Data-object frames whose descriptor and payload could be located.
  std::size_t object_count = 0;
  /// At least one object, every object's hash verified, and no error.
  bool hash_verified = false;

  /// True when no issue is an error (warnings allowed).
  [[nodiscard]] bool ok() const noexcept;
  [[nodiscard]] std::size_t error_count() const noexcept;
  /// Whether some issue has `code`.
  [[nodiscard]] bool has(issue_code code) const noexcept;
};

/// Bytes of a file or buffer outside every message (spec 01 §16.5).
struct file_issue {
  std::uint64_t byte_offset = 0;
  std::uint64_t length = 0;
  std::string description;

  friend bool operator==(const file_issue&, const file_issue&) = default;
};

/// The report on a file or multi-message buffer (spec 02 §15.3).
struct file_report {
  /// Gaps before messages and trailing bytes, in file order.
  std::vector<file_issue> file_issues;
  /// One report per message found by the scan, in file order.
  std::vector<message_report> messages;

  /// No file issue and every message OK.
  [[nodiscard]] bool ok() const noexcept;
  /// `"ok"` or `"failed"` (CLI JSON `status`).
  [[nodiscard]] std::string_view status() const noexcept { return ok() ? "ok" : "failed"; }
  [[nodiscard]] std::size_t object_count() const noexcept;
  /// At least one message and every message's `hash_verified`.
  [[nodiscard]] bool hash_verified() const noexcept;
  /// Errors over all messages plus file issues (the CLI's failure count).
  [[nodiscard]] std::size_t problem_count() const noexcept;
};

/// Validates the message at the start of `msg` (bytes after its
/// `total_length` are ignored; a streaming message with total_length 0 ends
/// at the end of `msg`). Never throws on bad data.
[[nodiscard]] message_report validate_message(std::span<const std::byte> msg,
                                              const validate_options& options = {});

/// Called after each message of a buffer or file: (messages done, total).
using validate_progress = std::function<void(std::size_t done, std::size_t total)>;

/// Validates every message of a buffer of concatenated messages, found by
/// the scan of spec 01 §16; bytes outside messages become file issues.
[[nodiscard]] file_report validate_buffer(std::span<const std::byte> bytes,
                                          const validate_options& options = {},
                                          const validate_progress& progress = {});

/// `validate_buffer` over a file, memory-mapped: only the pages of the
/// messages being checked are read. Throws `io_error` when the file cannot
/// be opened.
[[nodiscard]] file_report validate_file(const std::filesystem::path& path,
                                        const validate_options& options = {},
                                        const validate_progress& progress = {});

/// `{"issues": [...], "object_count": n, "hash_verified": b}` with issue
/// members in the CLI's order (code, level, severity, object_index,
/// byte_offset, description; absent optionals omitted). `indent < 0` gives
/// compact text.
[[nodiscard]] std::string to_json(const message_report& report, int indent = -1);
/// `{"file_issues": [{"byte_offset", "length", "description"}...],
/// "messages": [<report>...]}`.
[[nodiscard]] std::string to_json(const file_report& report, int indent = -1);

// ---- the reference C++ wrapper's string API (spec 04 Part D) --------------

/// JSON report of the message in `buf` (compact text). `level` is one of
/// quick, default, checksum, full (nullptr = default); anything else throws
/// `invalid_arg_error`, as does a null `buf` with non-zero `len`.
[[nodiscard]] std::string validate(const std::uint8_t* buf, std::size_t len, const char* level = "default",
                                   bool check_canonical = false);
/// JSON file report (`file_issues`, `messages`) of the file at `path`.
/// Throws `io_error` when the file cannot be opened.
[[nodiscard]] std::string validate_file(const char* path, const char* level = "default",
                                        bool check_canonical = false);

}  // namespace tensogram
