// A message's layout together with what `decode_metadata` returns, from
// one walk of its frames. `read_message_layout` gives the metadata of a full
// decode (last metadata frame, base padded, preceders merged: spec 01
// §14.1), `decode_metadata` the first metadata frame as it stands (§14.2); a
// reader that needs both (a file read through a byte source caches both per
// message) would otherwise parse the same frame twice. In the common case
// (one metadata frame, a base entry per object, no preceders) the two are
// the same value and `first_metadata` stays empty.
// Internal: not installed, not part of the public API.
#pragma once

#include <cstddef>
#include <optional>
#include <span>

#include "tensogram/message/decode.hpp"
#include "tensogram/message/metadata.hpp"

namespace tensogram::detail {

struct layout_reading {
  message_layout layout;
  /// The first metadata frame's metadata when it differs from
  /// `layout.metadata`; empty when they are equal.
  std::optional<global_metadata> first_metadata;
};

/// `read_message_layout` of `msg`, with the first metadata frame's metadata
/// kept aside when assembly changed it or a later frame replaced it.
[[nodiscard]] layout_reading read_layout_and_first_metadata(std::span<const std::byte> msg);

/// The index path's assembly (spec 01 §15): pads `meta.base` to `count`
/// entries. When padding changes `meta` and `first` points to an empty
/// value, `meta` is copied there first (it is then the first metadata
/// frame's, unpadded). Throws `metadata_error` when the base has more
/// entries than the message has objects.
void pad_base_for_index(global_metadata& meta, std::size_t count, std::optional<global_metadata>* first);

}  // namespace tensogram::detail
