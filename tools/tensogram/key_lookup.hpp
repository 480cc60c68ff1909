// Key lookup shared by `-w`, `-p` and the JSON key lists (spec 04 §A.2, §A.4).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <tensogram/message/metadata.hpp>

namespace tensogram::cli {

/// The text form of the value at dotted `key` in `meta`, or nothing when the
/// key is absent. The pseudo-key `version` always gives the wire version
/// ("3"); every other path resolves through `global_metadata::get`
/// (base[0], base[1], ... then `_extra_`; `_reserved_` hidden; an
/// `extra.`/`_extra_.` prefix targets `_extra_` only) and is rendered with
/// `display_text`.
[[nodiscard]] std::optional<std::string> lookup_key(const global_metadata& meta, std::string_view key);

/// Splits a `-p` list at commas and trims surrounding whitespace from each
/// item (§A.4). Empty items are kept (they simply never match), like the
/// reference.
[[nodiscard]] std::vector<std::string> parse_key_list(std::string_view text);

}  // namespace tensogram::cli
