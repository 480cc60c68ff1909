// The stage registry: builds an object's pipeline (encoding → filter →
// compression) from its descriptor and validates the combination
// (spec 02 §8, spec 03 §3).
//
// This build knows the `none` stage of every slot. Other stage names are
// reported exactly as the reference reports a codec that is not compiled in:
// an `encoding_error` "unknown encoding/filter/compression: NAME".
#pragma once

#include <cstddef>
#include <span>
#include <string_view>

#include "tensogram/message/descriptor.hpp"

namespace tensogram::codecs {

/// Stage names the wire format defines (spec 02 §17).
[[nodiscard]] bool is_known_encoding(std::string_view name) noexcept;
[[nodiscard]] bool is_known_filter(std::string_view name) noexcept;
[[nodiscard]] bool is_known_compression(std::string_view name) noexcept;

class pipeline {
 public:
  /// Validates the descriptor's stage names and parameters. Throws
  /// `encoding_error` for stages this build does not provide.
  [[nodiscard]] static pipeline build(const data_object_descriptor& d);

  /// True when every stage is `none`: the payload is the raw bytes.
  [[nodiscard]] bool is_identity() const noexcept { return identity_; }

  /// Whether range decode is served (spec 02 §8.6).
  [[nodiscard]] bool supports_range_decode() const noexcept { return identity_; }

 private:
  bool identity_ = true;
};

}  // namespace tensogram::codecs
