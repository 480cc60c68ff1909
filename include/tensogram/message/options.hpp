// Encode and decode options (spec 02 §13, §14; spec 04 Part D).
//
// Field names and defaults follow the reference C++ wrapper so that code
// written against it compiles unchanged; the fields after the marked line
// are this implementation's additions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "tensogram/message/metadata.hpp"

namespace tensogram {

/// Where the aggregate hash frame goes (spec 02 §13).
enum class aggregate_hash_policy {
  automatic,  ///< buffered: header; streaming: footer
  none,
  header,
  footer,
  both,
};

struct encode_options {
  /// "xxh3" = hash every frame; "" or "none" = no hashes. Anything else is a
  /// `metadata_error` ("unknown hash type").
  std::string hash_algo = "xxh3";
  std::uint32_t threads = 0;
  bool allow_nan = false;
  bool allow_inf = false;
  /// "" = default ("roaring").
  std::string nan_mask_method;
  std::string pos_inf_mask_method;
  std::string neg_inf_mask_method;
  /// < 0 = default (128); 0 disables the small-mask fallback.
  std::ptrdiff_t small_mask_threshold_bytes = -1;

  // --- additions beyond the reference wrapper ---
  aggregate_hash_policy aggregate_hash = aggregate_hash_policy::automatic;
  /// Provenance to write instead of this library's name/version, the current
  /// time and a fresh UUID: for reproducible output and byte-for-byte
  /// comparisons with other encoders.
  std::optional<tensogram::provenance> fixed_provenance;

  /// Whether frames are hashed; throws `metadata_error` for an unknown name.
  [[nodiscard]] bool hashing() const;
};

/// Whether the hash name `name` turns hashing on: "xxh3" → true, "none" →
/// false; anything else (also "") throws `metadata_error` with the
/// reference's text `unknown hash type: <name>; expected "xxh3" or "none"`
/// (spec 08 §1.2, §4).
[[nodiscard]] bool hash_name_enables_hashing(const std::string& name);

struct decode_options {
  /// Convert element bytes to the host's byte order (else: declared order).
  bool native_byte_order = true;
  std::uint32_t threads = 0;
  /// Write canonical NaN/Inf back where masks say so.
  bool restore_non_finite = true;
  /// Verify each touched data-object frame's xxh3 digest before decoding.
  bool verify_hash = false;
};

}  // namespace tensogram
