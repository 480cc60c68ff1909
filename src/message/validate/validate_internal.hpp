// The pieces the validation levels share (spec 02 §15): the issue list, the
// frames and objects the structure level locates and the later levels
// enrich, and each level's entry point. Laid out as the reference's
// `validate/` module: structure, metadata, integrity and fidelity levels,
// report and type names, and the driver (validate.cpp). Internal: not
// installed, not part of the public API.
#pragma once

#include <cstddef>
#include <cstdint>
#include <exception>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tensogram/format/wire.hpp"
#include "tensogram/message/descriptor.hpp"
#include "tensogram/message/validate.hpp"

namespace tensogram::validation {

using opt_u64 = std::optional<std::uint64_t>;

constexpr validation_level k_structure = validation_level::structure;
constexpr validation_level k_metadata = validation_level::metadata;
constexpr validation_level k_integrity = validation_level::integrity;
constexpr validation_level k_fidelity = validation_level::fidelity;

/// Appends issues to a report's list.
class issue_list {
 public:
  explicit issue_list(std::vector<validation_issue>& out) : out_(out) {}
  void add(issue_code c, validation_level l, issue_severity s, opt_u64 object, opt_u64 offset,
           std::string d) {
    out_.push_back({c, l, s, object, offset, std::move(d)});
  }
  void error(issue_code c, validation_level l, opt_u64 object, opt_u64 offset, std::string d) {
    add(c, l, issue_severity::error, object, offset, std::move(d));
  }
  void warning(issue_code c, validation_level l, opt_u64 object, opt_u64 offset, std::string d) {
    add(c, l, issue_severity::warning, object, offset, std::move(d));
  }

 private:
  std::vector<validation_issue>& out_;
};

inline std::string str(std::uint64_t v) {
  return std::to_string(v);
}

/// "<context>: <error>", without repeating the context when the library's
/// message already starts with it ("failed to parse index CBOR: ...").
[[nodiscard]] std::string failure(std::string_view context, const std::exception& e);

/// A non-data frame located by the structure level: its CBOR body for the
/// metadata and integrity levels.
struct body_frame {
  format::frame_type type;
  std::size_t offset = 0;
  std::span<const std::byte> body;
};

/// One data-object frame whose descriptor and payload region could be
/// located, enriched by the later levels.
struct object_ctx {
  std::size_t frame_offset = 0;
  bool hash_present = false;
  std::uint64_t hash_slot = 0;
  std::span<const std::byte> hashed_body;  // spec 01 §4.4
  std::span<const std::byte> descriptor_cbor;
  std::span<const std::byte> region;  // payload region: tensor bytes + mask blobs
  /// After the descriptor is parsed: the encoded tensor bytes, up to the
  /// first mask blob (spec 01 §13.3).
  std::span<const std::byte> payload;
  std::optional<data_object_descriptor> descriptor;
  bool descriptor_failed = false;
};

/// What the structure level found: the frames to check further.
struct located_frames {
  std::vector<body_frame> frames;  // types 1, 2, 3, 5, 6, 7, 8 in wire order
  std::vector<object_ctx> objects;
  std::uint16_t preamble_flags = 0;
};

/// Level 1 (spec 02 §15.1). Nothing after a fatal problem (the frame area
/// cannot be located); otherwise the frames found, even after a problem
/// stopped the walk early.
[[nodiscard]] std::optional<located_frames> check_structure(std::span<const std::byte> buf, issue_list& out);

/// A descriptor from its CBOR bytes, its `masks` entries checked as the
/// reference's typed deserialisation does; throws on any problem.
[[nodiscard]] data_object_descriptor parse_descriptor(std::span<const std::byte> cbor_bytes);
/// Sets `o.payload`: the payload region up to the smallest mask offset.
/// False when that offset lies beyond the region.
bool split_masks(object_ctx& o);

/// Level 2.
void check_metadata(located_frames& w, issue_list& out, bool canonical);

/// Level 3; runs level 4 on each object it decodes when `run_fidelity`.
/// Returns hash_verified before the "no error anywhere" rule.
bool check_integrity(located_frames& w, issue_list& out, issue_list& fidelity, bool checksum_only,
                     bool run_fidelity);

/// Level 4 on one object: `decoded` in the declared byte order.
void check_fidelity(const object_ctx& o, std::size_t i, std::span<const std::byte> decoded, issue_list& out);

}  // namespace tensogram::validation
