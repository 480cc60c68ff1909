// `--meta key=value` assignments of `convert-npy`.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include <tensogram/cbor/value.hpp>

namespace tensogram::cli {

/// The CBOR value of a `--meta` value text: a JSON number (RFC 8259
/// grammar: optional `-`, no leading zeros, optional fraction and exponent)
/// becomes a number — an integer when it has no fraction or exponent and
/// fits in 64 bits, else a float (finite only); everything else, e.g. `06`,
/// `+5`, `.5`, `1e999`, `nan`, `true`, the empty string, stays text.
[[nodiscard]] cbor::value parse_meta_value(std::string_view text);

/// Builds one map from `key=value` assignments, in order. The key is split
/// at the first `=`; dots in it create nested maps (`mars.param=2t` →
/// {"mars": {"param": "2t"}}). A later assignment to the same path replaces
/// the earlier value. Throws `tool_error` for a missing `=`, an empty key
/// segment, a first segment `_reserved_` (library-managed, spec 02 §3), or a
/// path that would descend into a non-map value set earlier.
[[nodiscard]] cbor::value build_meta_map(std::span<const std::string> assignments);

}  // namespace tensogram::cli
