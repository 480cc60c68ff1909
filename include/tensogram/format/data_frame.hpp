// Splitting an NTensorFrame (type 9) into descriptor and payload region
// (spec 01 §13).
#pragma once

#include <cstddef>
#include <span>

#include "tensogram/cbor/value.hpp"
#include "tensogram/format/frame.hpp"

namespace tensogram::format {

struct data_frame_parts {
  /// The parsed descriptor item (not yet validated against the schema).
  cbor::value descriptor;
  /// Encoded tensor bytes followed by any mask blobs.
  std::span<const std::byte> payload_region;
  /// Frame-relative offset of the payload region.
  std::size_t region_offset = 0;
  bool cbor_after_payload = true;
};

/// Applies §13.2 to a located type-9 frame: `cbor_offset` bounds (Framing
/// error), descriptor CBOR parse (Metadata error "failed to parse descriptor
/// CBOR"), payload region for both layouts.
[[nodiscard]] data_frame_parts split_data_frame(const frame_view& frame);

}  // namespace tensogram::format
