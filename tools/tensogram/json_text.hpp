// JSON text exactly as the reference CLI prints it (serde_json).
//
// Spec 04 §A.5 fixes the shape of the CLI's JSON output: compact values in
// `dump`'s human mode, 2-space pretty objects for `ls -j` / `dump -j`. The
// reference serialises with serde_json, whose layout differs from
// nlohmann::json::dump in the float format (ryu: `1e20`, `1e-7`, `0.0001`,
// `1.0`), so the tool renders nlohmann values with its own writer.
// Object members come out in the container's order; nlohmann::json keeps
// them sorted by name, which is what serde_json's default map does.
#pragma once

#include <string>

#include <nlohmann/json_fwd.hpp>

namespace tensogram::cli {

/// serde_json::to_string: no whitespace at all.
[[nodiscard]] std::string json_compact(const nlohmann::json& j);

/// serde_json::to_string_pretty: members and elements on their own lines,
/// two spaces per level, `"key": value`, empty containers as `{}` / `[]`.
[[nodiscard]] std::string json_pretty(const nlohmann::json& j);

/// A double as ryu (and so serde_json) formats it: shortest round-trip
/// digits; plain notation (`100.0`, `0.25`, `0.00001`) when the decimal
/// exponent of the leading digit is in [-5, 15], scientific without `+` or
/// padding (`1e16`, `1.5e-7`) otherwise. Non-finite values give `null`
/// (JSON has no spelling for them; the reference maps them to null too).
[[nodiscard]] std::string json_number(double d);

}  // namespace tensogram::cli
