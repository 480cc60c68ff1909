// Reading NaN/Inf masks back (spec 02 §4.3, §9; spec 01 §13.3), beside
// their encoder (masks.cpp): the one parser of a descriptor's `masks` map,
// the one decoder of an object's mask blobs, and the one routine that writes
// canonical NaN/Inf where the masks say. The decoder and the validator both
// use them. Internal: not installed, not part of the public API.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "tensogram/core/byte_order.hpp"
#include "tensogram/message/decode.hpp"
#include "tensogram/message/descriptor.hpp"

namespace tensogram::detail {

/// One entry of a descriptor's `masks` map.
struct mask_entry {
  /// Index into `mask_kind_names` (nan, inf+, inf-).
  std::size_t kind = 0;
  /// The entry's `method`; null when absent or not text.
  const std::string* method = nullptr;
  /// The blob: `[offset, offset + length)` of the payload region.
  std::uint64_t offset = 0;
  std::uint64_t length = 0;
};

/// The entry of kind `kind` of `d.masks`, when there is one. Throws
/// `metadata_error` ("failed to deserialize descriptor: masks.<kind>...", as
/// the reference's typed deserialisation fails) when the entry is not a
/// map, when — with `method_required` — its method is not text, or when its
/// offset or length is not an unsigned integer. The entry points into `d`.
[[nodiscard]] std::optional<mask_entry> parse_mask_entry(const data_object_descriptor& d, std::size_t kind,
                                                         bool method_required);

/// Every entry of `d.masks`, in kind order (see `parse_mask_entry`).
struct mask_entries {
  std::array<mask_entry, 3> items{};
  std::size_t count = 0;
  [[nodiscard]] const mask_entry* begin() const noexcept { return items.data(); }
  [[nodiscard]] const mask_entry* end() const noexcept { return items.data() + count; }
  [[nodiscard]] bool empty() const noexcept { return count == 0; }
};
[[nodiscard]] mask_entries parse_mask_entries(const data_object_descriptor& d, bool method_required);

/// True when `d.masks` has an entry of a known kind.
[[nodiscard]] bool has_masks(const data_object_descriptor& d) noexcept;

/// The packed masks (ceil(N/8) bytes, MSB first) of the object `d`, from
/// its payload `region` (encoded tensor bytes followed by the mask blobs).
/// Throws `framing_error` for a blob outside the region, `encoding_error`
/// for a missing method or a blob that does not decode.
[[nodiscard]] object_masks decode_masks(const data_object_descriptor& d, std::span<const std::byte> region);

/// Writes canonical NaN/Inf (spec 02 §9) where the masks of `d` (blobs in
/// `region`) say so, into `out`: the decoded elements `[first, first +
/// count)` (all of them by default) in `out_order`. Throws `framing_error`
/// for a bitmask dtype or when `out` does not hold `count` elements.
void restore_non_finite(const data_object_descriptor& d, std::span<const std::byte> region,
                        std::span<std::byte> out, byte_order out_order, std::uint64_t first = 0,
                        std::optional<std::uint64_t> count = std::nullopt);

}  // namespace tensogram::detail
