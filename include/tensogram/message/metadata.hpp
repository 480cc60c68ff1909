// The metadata model (spec 02 §3, §10, §11, §12).
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tensogram/cbor/value.hpp"

namespace tensogram {

/// GlobalMetadata: the body of metadata frames (types 1 and 7) and, with a
/// single `base` entry, of preceder frames (type 8).
struct global_metadata {
  /// `base[i]`: all metadata of data object i (a CBOR map with text keys).
  std::vector<cbor::value> base;
  /// Library-managed provenance; written only by the encoder.
  cbor::value reserved = cbor::value::make_map();
  /// Free-form message-level annotations; unknown top-level keys land here.
  cbor::value extra = cbor::value::make_map();

  /// Parses a GlobalMetadata map (§3.2): unknown top-level keys (including
  /// legacy `version`, `reserved`, `common`, `payload`) move into `_extra_`;
  /// a key present both at top level and in `_extra_` is a `metadata_error`.
  [[nodiscard]] static global_metadata from_cbor(const cbor::value& v);
  /// The same, moving the entries out of `v` instead of copying them.
  [[nodiscard]] static global_metadata from_cbor(cbor::value&& v);
  /// Parses CBOR bytes (one item; trailing bytes ignored).
  [[nodiscard]] static global_metadata from_cbor_bytes(std::span<const std::byte> bytes);

  /// The canonical CBOR map; empty sections are omitted (§3.1).
  [[nodiscard]] cbor::value to_cbor() const;
  [[nodiscard]] std::vector<std::byte> to_cbor_bytes() const;

  /// Dotted-path lookup at message level (§12): `extra.`/`_extra_.` prefix
  /// looks only in `_extra_`; otherwise base[0], base[1], ... (a first
  /// segment `_reserved_` never matches there), then `_extra_`.
  [[nodiscard]] const cbor::value* get(std::string_view path) const;
  /// Lookup in `base[i]` only (same `_reserved_` exclusion); nullptr when
  /// absent or `i` is out of range.
  [[nodiscard]] const cbor::value* get_at(std::size_t i, std::string_view path) const;

  friend bool operator==(const global_metadata&, const global_metadata&) = default;
};

/// Looks up a dotted path inside a map value: every segment must land on a
/// map entry with that text key; arrays are not addressable.
[[nodiscard]] const cbor::value* lookup_path(const cbor::value& root, std::string_view path);

/// `compute_common(base)` (§11): the keys of base[0] (except `_reserved_`)
/// that every entry holds with an equal value, and each entry without them
/// and without `_reserved_`.
struct common_split {
  cbor::value common = cbor::value::make_map();
  std::vector<cbor::value> remaining;
};
[[nodiscard]] common_split compute_common(std::span<const cbor::value> base);

/// Provenance written into `_reserved_` by the encoder (§3.3 step 5).
struct provenance {
  std::string encoder_name;
  std::string encoder_version;
  std::string time;  // YYYY-MM-DDThh:mm:ssZ
  std::string uuid;  // lowercase RFC 4122 v4

  /// This implementation, now, with a fresh random UUID.
  [[nodiscard]] static provenance current();
};

/// Name and version this library writes as `_reserved_.encoder`.
inline constexpr std::string_view library_encoder_name = "tensogram-cpp";
[[nodiscard]] std::string_view library_version() noexcept;

}  // namespace tensogram

namespace tensogram {

/// Text form of a metadata value for display and `-w` comparisons (spec 04
/// §A.2): text as is; integers in decimal; floats as the shortest decimal
/// that round-trips, without exponent, integral floats without ".0"; bools
/// `true`/`false`; null `null`; containers and bytes as compact JSON.
[[nodiscard]] std::string display_text(const cbor::value& v);

/// The text the legacy string getters return for a value (spec 02 §12, spec
/// 07 C2.4 `tgm_metadata_get_string`): text as is, integers, floats and
/// booleans as `display_text`; nothing for an absent value (nullptr), null,
/// bytes, containers, tags and text with an interior NUL.
[[nodiscard]] std::optional<std::string> legacy_text(const cbor::value* v);

}  // namespace tensogram
