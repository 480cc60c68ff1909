// The reference C++ wrapper's JSON-driven encode (spec 04 §C.3, Part D):
// metadata and descriptors as one JSON document, objects as raw pointers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "tensogram/message/descriptor.hpp"
#include "tensogram/message/metadata.hpp"
#include "tensogram/message/options.hpp"

namespace tensogram {

/// The parsed form of a `metadata_json` document.
struct json_message_spec {
  global_metadata metadata;
  std::vector<data_object_descriptor> descriptors;
};

/// Parses `{"descriptors": [...], "base": [...], "_extra_"|"extra": {...},
/// ...other keys → _extra_}`. Throws `metadata_error` on malformed JSON or
/// descriptors, `extra` and `_extra_` both present, or non-object sections.
[[nodiscard]] json_message_spec parse_message_json(const std::string& metadata_json);

/// Parses one descriptor object (the `descriptor_json` of the streaming
/// encoder, spec 04 §C.3); `byte_order` defaults to host order. Throws
/// `metadata_error` on malformed JSON or an invalid descriptor.
[[nodiscard]] data_object_descriptor parse_descriptor_json(const std::string& descriptor_json);

/// The `metadata_json` of the streaming encoders: as `parse_message_json`,
/// and a `descriptors` key is a `metadata_error` (each object's descriptor
/// comes with its data).
[[nodiscard]] global_metadata parse_streaming_metadata_json(const std::string& metadata_json);

/// Encodes raw native-layout objects described by `metadata_json`.
[[nodiscard]] std::vector<std::uint8_t> encode(
    const std::string& metadata_json, const std::vector<std::pair<const std::uint8_t*, std::size_t>>& objects,
    const encode_options& options = {});

/// As `encode`, with payloads already encoded per their descriptors.
[[nodiscard]] std::vector<std::uint8_t> encode_pre_encoded(
    const std::string& metadata_json, const std::vector<std::pair<const std::uint8_t*, std::size_t>>& objects,
    const encode_options& options = {});

}  // namespace tensogram
