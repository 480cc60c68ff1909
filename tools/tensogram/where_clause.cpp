#include "where_clause.hpp"

#include <algorithm>

#include "key_lookup.hpp"
#include "tool_error.hpp"

namespace tensogram::cli {

namespace {
std::vector<std::string> split_alternatives(std::string_view text) {
  std::vector<std::string> out;
  std::size_t start = 0;
  for (;;) {
    const std::size_t slash = text.find('/', start);
    out.emplace_back(text.substr(start, slash == std::string_view::npos ? text.npos : slash - start));
    if (slash == std::string_view::npos) return out;
    start = slash + 1;
  }
}
}  // namespace

where_clause parse_where(std::string_view text) {
  where_clause c;
  if (const std::size_t ne = text.find("!="); ne != std::string_view::npos) {
    c.key = std::string(text.substr(0, ne));
    c.operation = where_clause::op::not_equal;
    c.values = split_alternatives(text.substr(ne + 2));
    return c;
  }
  if (const std::size_t eq = text.find('='); eq != std::string_view::npos) {
    c.key = std::string(text.substr(0, eq));
    c.operation = where_clause::op::equal;
    c.values = split_alternatives(text.substr(eq + 1));
    return c;
  }
  // The doubled wording is the reference's (its parser's message wrapped by
  // the command); scripts may match on it, so it is reproduced verbatim.
  throw tool_error("invalid where clause: invalid where-clause: " + std::string(text) +
                   " (expected key=value or key!=value)");
}

bool matches(const global_metadata& meta, const where_clause& clause) {
  const auto actual = lookup_key(meta, clause.key);
  if (!actual) return clause.operation == where_clause::op::not_equal;
  const bool any_equal = std::any_of(clause.values.begin(), clause.values.end(),
                                     [&](const std::string& v) { return v == *actual; });
  return clause.operation == where_clause::op::equal ? any_equal : !any_equal;
}

}  // namespace tensogram::cli
