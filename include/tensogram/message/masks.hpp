// NaN / ±Inf substitution and the companion masks (spec 02 §9, spec 03 §11).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tensogram/cbor/value.hpp"
#include "tensogram/core/byte_order.hpp"
#include "tensogram/core/dtype.hpp"

namespace tensogram {

/// Mask kinds in payload order (nan, inf+, inf−) and their wire names.
inline constexpr std::array<std::string_view, 3> mask_kind_names = {"nan", "inf+", "inf-"};

/// Default method and small-mask threshold (spec 02 §13).
inline constexpr std::string_view default_mask_method = "roaring";
inline constexpr std::size_t default_small_mask_threshold = 128;

/// Result of substitute-and-mask: the input with every allowed non-finite
/// element zeroed, and one packed MSB-first bitmask (ceil(N/8) bytes) per
/// kind that occurred.
struct substituted_data {
  std::vector<std::byte> data;
  std::array<std::optional<std::vector<std::byte>>, 3> masks;
};

/// Scans float/complex elements in the declared order. Returns nothing when
/// no non-finite element exists (the caller keeps its bytes). Throws
/// `encoding_error` with the reference's strict-check text for the first
/// element whose kind is not allowed.
[[nodiscard]] std::optional<substituted_data> substitute_non_finite(dtype t, byte_order order,
                                                                    std::span<const std::byte> data,
                                                                    bool allow_nan, bool allow_inf);

/// True for `none`, `rle`, `roaring`, `lz4`, `zstd`, `blosc2`.
[[nodiscard]] bool is_known_mask_method(std::string_view method) noexcept;
/// Throws `invalid_arg_error` with the reference's text (spec 08 §1,
/// `unknown mask method "<m>" (expected "none" | ... | "blosc2")`) unless
/// `method` is known: a mask method is a caller's option (spec 07 C2.3).
void require_known_mask_method(std::string_view method);

/// The method actually written: `none` when the threshold is positive and
/// the packed mask is no larger than it, else `requested` (spec 03 §11.3).
[[nodiscard]] std::string effective_mask_method(std::string_view requested, std::uint64_t n,
                                                std::size_t threshold);

/// Blob of a packed mask of `n` bits (spec 03 §11.3). `blosc2` uses the
/// reference's defaults, codec lz4 and level 5.
[[nodiscard]] std::vector<std::byte> encode_mask_blob(std::span<const std::byte> packed, std::uint64_t n,
                                                      std::string_view method);

/// The `params` a mask entry of this method carries in the descriptor
/// (spec 02 §4.3): `{"codec": "lz4", "level": 5}` for blosc2 (always),
/// nothing for the others (zstd's level only appears when a caller set one,
/// which the options cannot).
[[nodiscard]] std::optional<cbor::value> mask_blob_params(std::string_view method);

/// Packed ceil(n/8) bytes from a blob. Throws `encoding_error`
/// ("bitmask decode (<method>): ...", or "unknown mask method").
[[nodiscard]] std::vector<std::byte> decode_mask_blob(std::span<const std::byte> blob, std::uint64_t n,
                                                      std::string_view method);

}  // namespace tensogram
