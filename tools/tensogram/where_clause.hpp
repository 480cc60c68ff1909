// The `-w` where-clause (spec 04 §A.3).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <tensogram/message/metadata.hpp>

namespace tensogram::cli {

struct where_clause {
  enum class op { equal, not_equal };
  std::string key;
  op operation = op::equal;
  /// The `/`-separated alternatives, untrimmed.
  std::vector<std::string> values;
};

/// Parses `KEY=V1/V2` or `KEY!=V1/V2`: split at the first `!=` when present,
/// else at the first `=`; no trimming, quoting or escapes. Throws
/// `tool_error` with the reference's text
/// "invalid where clause: invalid where-clause: <text> (expected key=value
/// or key!=value)" when neither operator is present.
[[nodiscard]] where_clause parse_where(std::string_view text);

/// Compares the text form of the key's value with each alternative
/// (exact string equality). A missing key fails `=` and passes `!=`.
[[nodiscard]] bool matches(const global_metadata& meta, const where_clause& clause);

}  // namespace tensogram::cli
