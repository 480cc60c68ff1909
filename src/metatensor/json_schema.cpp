// JSON Schema draft 2020-12 evaluation for the metatensor dialect (spec 06
// §4.1–§4.3, §8.3, §8.4).
//
// Construction compiles every schema node reachable from the root (through
// the applicator keywords, `$defs` and resolved `$ref`s) into a flat table
// keyed by the node's address, rejecting anything outside the dialect.
// Evaluation then walks that table; it never re-parses the document.
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <compare>
#include <cstdint>
#include <deque>
#include <limits>
#include <numeric>
#include <unordered_map>
#include <utility>
#include <vector>

#include "metatensor/json_schema.hpp"
#include "tensogram/core/error.hpp"
#include "text.hpp"

namespace metatensor {
namespace {

using json = nlohmann::json;
constexpr std::size_t npos = static_cast<std::size_t>(-1);
constexpr std::string_view draft_2020_12 = "https://json-schema.org/draft/2020-12/schema";

// Nesting guard for comparisons of values (enum, const, uniqueItems): the
// caller bounds value nesting, this only keeps a programmatic document from
// exhausting the stack.
constexpr std::size_t max_compare_depth = json_schema_evaluator::max_evaluation_depth;

// PCRE2 limits for one `pattern` match (§8.3): a hostile pattern such as
// "(a+)+$" stops with an error after about this much backtracking work
// instead of running for ages.
constexpr std::uint32_t pcre2_match_budget = 10'000'000;
constexpr std::uint32_t pcre2_depth_budget = 100'000;
constexpr std::uint32_t pcre2_heap_budget_kib = 32 * 1024;

[[noreturn]] void fail(errc code, const std::string& detail) {
  throw error(code, detail);
}

void append_index(std::string& path, std::size_t index) {
  path += '/';
  path += std::to_string(index);
}

std::string child_pointer(const std::string& parent, std::string_view token) {
  std::string out = parent;
  detail::append_pointer_token(out, token);
  return out;
}

// "schema location /properties/a" or "schema root" for error messages.
std::string schema_at(const std::string& where) {
  return where.empty() ? std::string("schema root") : "schema location " + where;
}

std::string value_at(const std::string& path) {
  return path.empty() ? std::string("value root") : "value " + path;
}

// ---------------------------------------------------------------------------
// Numbers (§8.3). JSON numbers are held by nlohmann as int64, uint64 or
// double; the comparisons below are exact between those representations.

constexpr double two_pow_63 = 9223372036854775808.0;
constexpr double two_pow_64 = 18446744073709551616.0;

std::partial_ordering compare_int_double(std::int64_t a, double d) {
  if (std::isnan(d)) return std::partial_ordering::unordered;
  if (d >= two_pow_63) return std::partial_ordering::less;
  if (d < -two_pow_63) return std::partial_ordering::greater;
  const double t = std::trunc(d);  // in [-2^63, 2^63): exactly representable
  const auto ti = static_cast<std::int64_t>(t);
  if (a != ti) return a < ti ? std::partial_ordering::less : std::partial_ordering::greater;
  if (d > t) return std::partial_ordering::less;
  if (d < t) return std::partial_ordering::greater;
  return std::partial_ordering::equivalent;
}

std::partial_ordering compare_uint_double(std::uint64_t a, double d) {
  if (std::isnan(d)) return std::partial_ordering::unordered;
  if (d < 0) return std::partial_ordering::greater;
  if (d >= two_pow_64) return std::partial_ordering::less;
  const double t = std::trunc(d);
  const auto tu = static_cast<std::uint64_t>(t);
  if (a != tu) return a < tu ? std::partial_ordering::less : std::partial_ordering::greater;
  if (d > t) return std::partial_ordering::less;
  return std::partial_ordering::equivalent;
}

std::partial_ordering compare_int_uint(std::int64_t a, std::uint64_t b) {
  if (a < 0) return std::partial_ordering::less;
  return static_cast<std::uint64_t>(a) <=> b;
}

// Exact mathematical comparison of two JSON numbers (NaN is unordered).
std::partial_ordering compare_numbers(const json& a, const json& b) {
  using t = json::value_t;
  const t ta = a.type();
  const t tb = b.type();
  if (ta == t::number_float) {
    const double da = a.get<double>();
    if (tb == t::number_float) return da <=> b.get<double>();
    if (tb == t::number_integer) return 0 <=> compare_int_double(b.get<std::int64_t>(), da);
    return 0 <=> compare_uint_double(b.get<std::uint64_t>(), da);
  }
  if (ta == t::number_integer) {
    const std::int64_t ia = a.get<std::int64_t>();
    if (tb == t::number_float) return compare_int_double(ia, b.get<double>());
    if (tb == t::number_integer) return ia <=> b.get<std::int64_t>();
    return compare_int_uint(ia, b.get<std::uint64_t>());
  }
  const std::uint64_t ua = a.get<std::uint64_t>();
  if (tb == t::number_float) return compare_uint_double(ua, b.get<double>());
  if (tb == t::number_integer) return 0 <=> compare_int_uint(b.get<std::int64_t>(), ua);
  return ua <=> b.get<std::uint64_t>();
}

// A value against a schema bound (§8.3): integers compare exactly; a floating
// value compares as binary64 with the schema number read as binary64.
std::partial_ordering compare_to_bound(const json& value, const json& bound) {
  if (value.is_number_float()) return value.get<double>() <=> bound.get<double>();
  return compare_numbers(value, bound);
}

// |v| of an integer JSON number, exactly.
std::uint64_t magnitude(const json& v) {
  if (v.is_number_unsigned()) return v.get<std::uint64_t>();
  const std::int64_t i = v.get<std::int64_t>();
  return i >= 0 ? static_cast<std::uint64_t>(i) : static_cast<std::uint64_t>(-(i + 1)) + 1u;
}

// multipleOf (§8.3): integers by exact remainder when the divisor is a whole
// number; otherwise the binary64 quotient must be an integer. Non-finite
// values are never multiples.
bool is_multiple_of(const json& value, const json& divisor) {
  if (value.is_number_float()) {
    const double d = value.get<double>();
    if (!std::isfinite(d)) return false;
    const double q = d / divisor.get<double>();
    return std::isfinite(q) && q == std::trunc(q);
  }
  std::uint64_t whole = 0;
  if (divisor.is_number_unsigned() || divisor.is_number_integer()) {
    whole = magnitude(divisor);  // > 0, checked at construction
  } else {
    const double s = divisor.get<double>();
    if (s >= 1 && s < two_pow_64 && s == std::trunc(s)) whole = static_cast<std::uint64_t>(s);
  }
  if (whole != 0) return magnitude(value) % whole == 0;
  const double q = value.get<double>() / divisor.get<double>();
  return std::isfinite(q) && q == std::trunc(q);
}

std::string format_number(const json& v) {
  if (v.is_number_unsigned()) return std::to_string(v.get<std::uint64_t>());
  if (v.is_number_integer()) return std::to_string(v.get<std::int64_t>());
  const double d = v.get<double>();
  if (std::isnan(d)) return "NaN";
  if (std::isinf(d)) return d > 0 ? "Infinity" : "-Infinity";
  char buf[64];
  const auto res = std::to_chars(buf, buf + sizeof buf, d);
  return std::string(buf, res.ptr);
}

// A short description of a value for messages (never throws on bad UTF-8).
std::string describe(const json& v) {
  if (v.is_number()) return format_number(v);
  if (v.is_array()) return "an array of " + std::to_string(v.size()) + " items";
  if (v.is_object()) return "an object of " + std::to_string(v.size()) + " members";
  std::string text = v.dump(-1, ' ', false, json::error_handler_t::replace);
  constexpr std::size_t max_text = 80;
  if (text.size() > max_text) {
    text.resize(max_text);
    text += "...";
  }
  return text;
}

// ---------------------------------------------------------------------------
// JSON equality (enum, const, uniqueItems): numbers compare mathematically
// (1 == 1.0), NaN equals nothing, object member order is irrelevant.

bool json_equal(const json& a, const json& b, std::size_t depth) {
  if (depth > max_compare_depth)
    fail(errc::mt_limit,
         "values nested deeper than " + std::to_string(max_compare_depth) + " levels in a comparison");
  if (a.is_number() && b.is_number()) return compare_numbers(a, b) == std::partial_ordering::equivalent;
  if (a.type() != b.type()) return false;
  switch (a.type()) {
    case json::value_t::null: return true;
    case json::value_t::boolean: return a.get<bool>() == b.get<bool>();
    case json::value_t::string: return a.get_ref<const std::string&>() == b.get_ref<const std::string&>();
    case json::value_t::array: {
      if (a.size() != b.size()) return false;
      for (std::size_t i = 0; i < a.size(); ++i) {
        if (!json_equal(a[i], b[i], depth + 1)) return false;
      }
      return true;
    }
    case json::value_t::object: {
      if (a.size() != b.size()) return false;
      // nlohmann::json objects are std::map: both iterate in key order.
      auto ib = b.begin();
      for (auto ia = a.begin(); ia != a.end(); ++ia, ++ib) {
        if (ia.key() != ib.key() || !json_equal(ia.value(), ib.value(), depth + 1)) return false;
      }
      return true;
    }
    case json::value_t::binary: return a.get_binary() == b.get_binary();
    default: return false;
  }
}

int type_rank(const json& v) {
  switch (v.type()) {
    case json::value_t::null: return 0;
    case json::value_t::boolean: return 1;
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
    case json::value_t::number_float: return 2;
    case json::value_t::string: return 3;
    case json::value_t::array: return 4;
    case json::value_t::object: return 5;
    default: return 6;
  }
}

bool is_nan(const json& v) {
  return v.is_number_float() && std::isnan(v.get<double>());
}

// A total order whose equivalence contains json_equal (NaN sorts after every
// number and is equivalent to NaN): lets uniqueItems sort instead of
// comparing every pair.
std::weak_ordering json_order(const json& a, const json& b, std::size_t depth) {
  if (depth > max_compare_depth)
    fail(errc::mt_limit,
         "values nested deeper than " + std::to_string(max_compare_depth) + " levels in a comparison");
  const int ra = type_rank(a);
  const int rb = type_rank(b);
  if (ra != rb) return ra <=> rb;
  switch (ra) {
    case 1: return a.get<bool>() <=> b.get<bool>();
    case 2: {
      const bool na = is_nan(a);
      const bool nb = is_nan(b);
      if (na || nb) return na <=> nb;
      const auto c = compare_numbers(a, b);
      if (c == std::partial_ordering::less) return std::weak_ordering::less;
      if (c == std::partial_ordering::greater) return std::weak_ordering::greater;
      return std::weak_ordering::equivalent;
    }
    case 3: return a.get_ref<const std::string&>().compare(b.get_ref<const std::string&>()) <=> 0;
    case 4: {
      const std::size_t n = std::min(a.size(), b.size());
      for (std::size_t i = 0; i < n; ++i) {
        const auto c = json_order(a[i], b[i], depth + 1);
        if (c != 0) return c;
      }
      return a.size() <=> b.size();
    }
    case 5: {
      if (a.size() != b.size()) return a.size() <=> b.size();
      auto ib = b.begin();
      for (auto ia = a.begin(); ia != a.end(); ++ia, ++ib) {
        const int k = ia.key().compare(ib.key());
        if (k != 0) return k <=> 0;
        const auto c = json_order(ia.value(), ib.value(), depth + 1);
        if (c != 0) return c;
      }
      return std::weak_ordering::equivalent;
    }
    default: return std::weak_ordering::equivalent;
  }
}

// The first pair of equal items (by index), if any.
std::optional<std::pair<std::size_t, std::size_t>> first_duplicate(const json& array) {
  std::vector<std::size_t> order(array.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t x, std::size_t y) { return json_order(array[x], array[y], 0) < 0; });
  std::optional<std::pair<std::size_t, std::size_t>> best;
  std::size_t begin = 0;
  while (begin < order.size()) {
    std::size_t end = begin + 1;
    while (end < order.size() && json_order(array[order[begin]], array[order[end]], 0) == 0) ++end;
    // Inside a class, the items free of NaN are all equal to each other and
    // the others equal nothing; the class is sorted by index (stable sort).
    std::optional<std::size_t> first;
    for (std::size_t k = begin; k < end; ++k) {
      const std::size_t i = order[k];
      if (!json_equal(array[i], array[i], 0)) continue;
      if (!first) {
        first = i;
      } else {
        if (!best || std::pair(*first, i) < *best) best = std::pair(*first, i);
        break;
      }
    }
    begin = end;
  }
  return best;
}

// Unicode code points of UTF-8 text (§8.3): bytes that are not continuation
// bytes.
std::size_t code_points(std::string_view s) {
  return static_cast<std::size_t>(std::count_if(
      s.begin(), s.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0u) != 0x80u; }));
}

// ---------------------------------------------------------------------------
// Types.

enum type_bit : unsigned {
  t_null = 1u << 0,
  t_boolean = 1u << 1,
  t_object = 1u << 2,
  t_array = 1u << 3,
  t_number = 1u << 4,
  t_string = 1u << 5,
  t_integer = 1u << 6,
};

constexpr std::pair<std::string_view, unsigned> type_names[] = {
    {"null", t_null},     {"boolean", t_boolean}, {"object", t_object},   {"array", t_array},
    {"number", t_number}, {"string", t_string},   {"integer", t_integer},
};

// The type bits a value satisfies: "integer" is any number with a zero
// fractional part (so 1.0 is an integer, NaN and infinities are not).
unsigned value_types(const json& v) {
  switch (v.type()) {
    case json::value_t::null: return t_null;
    case json::value_t::boolean: return t_boolean;
    case json::value_t::object: return t_object;
    case json::value_t::array: return t_array;
    case json::value_t::string: return t_string;
    case json::value_t::number_integer:
    case json::value_t::number_unsigned: return t_number | t_integer;
    case json::value_t::number_float: {
      const double d = v.get<double>();
      return std::isfinite(d) && d == std::trunc(d) ? (t_number | t_integer) : t_number;
    }
    default: return 0;
  }
}

std::string type_list(unsigned bits) {
  std::string out;
  for (const auto& [name, bit] : type_names) {
    if ((bits & bit) == 0) continue;
    if (!out.empty()) out += " or ";
    out += name;
  }
  return out;
}

std::string value_type_name(const json& v) {
  if (v.is_number_float()) {
    const double d = v.get<double>();
    return std::isfinite(d) && d == std::trunc(d) ? "integer" : "number";
  }
  if (v.is_number()) return "integer";
  if (v.is_binary()) return "binary";
  return v.type_name();
}

// ---------------------------------------------------------------------------
// PCRE2 handles.

struct code_deleter {
  void operator()(pcre2_code* p) const noexcept { pcre2_code_free(p); }
};
struct compile_context_deleter {
  void operator()(pcre2_compile_context* p) const noexcept { pcre2_compile_context_free(p); }
};
struct match_context_deleter {
  void operator()(pcre2_match_context* p) const noexcept { pcre2_match_context_free(p); }
};
struct match_data_deleter {
  void operator()(pcre2_match_data* p) const noexcept { pcre2_match_data_free(p); }
};
using code_ptr = std::unique_ptr<pcre2_code, code_deleter>;

std::string pcre2_message(int code) {
  PCRE2_UCHAR buf[256];
  const int n = pcre2_get_error_message(code, buf, sizeof buf);
  if (n < 0) return "PCRE2 error " + std::to_string(code);
  return std::string(reinterpret_cast<const char*>(buf), static_cast<std::size_t>(n));
}

// ECMA-262 General_Category value aliases (long and short) and the short
// name PCRE2 understands (PCRE2 10.42 knows only the short names).
constexpr std::pair<std::string_view, std::string_view> general_categories[] = {
    {"Other", "C"},
    {"Control", "Cc"},
    {"cntrl", "Cc"},
    {"Format", "Cf"},
    {"Unassigned", "Cn"},
    {"Private_Use", "Co"},
    {"Surrogate", "Cs"},
    {"Letter", "L"},
    {"Cased_Letter", "LC"},
    {"Lowercase_Letter", "Ll"},
    {"Modifier_Letter", "Lm"},
    {"Other_Letter", "Lo"},
    {"Titlecase_Letter", "Lt"},
    {"Uppercase_Letter", "Lu"},
    {"Mark", "M"},
    {"Combining_Mark", "M"},
    {"Spacing_Mark", "Mc"},
    {"Enclosing_Mark", "Me"},
    {"Nonspacing_Mark", "Mn"},
    {"Number", "N"},
    {"Decimal_Number", "Nd"},
    {"digit", "Nd"},
    {"Letter_Number", "Nl"},
    {"Other_Number", "No"},
    {"Punctuation", "P"},
    {"punct", "P"},
    {"Connector_Punctuation", "Pc"},
    {"Dash_Punctuation", "Pd"},
    {"Close_Punctuation", "Pe"},
    {"Final_Punctuation", "Pf"},
    {"Initial_Punctuation", "Pi"},
    {"Other_Punctuation", "Po"},
    {"Open_Punctuation", "Ps"},
    {"Symbol", "S"},
    {"Currency_Symbol", "Sc"},
    {"Modifier_Symbol", "Sk"},
    {"Math_Symbol", "Sm"},
    {"Other_Symbol", "So"},
    {"Separator", "Z"},
    {"Line_Separator", "Zl"},
    {"Paragraph_Separator", "Zp"},
    {"Space_Separator", "Zs"},
};

// ECMA-262 \s: WhiteSpace and LineTerminator code points, as class contents
// in PCRE2 syntax (\uHHHH under PCRE2_ALT_BSUX). Without PCRE2_UCP, PCRE2's
// own \s is ASCII only.
constexpr std::string_view ecma_space = "\\t\\n\\v\\f\\r \\u00a0\\ufeff\\u2028\\u2029\\p{Zs}";

// Rewrites the ECMA-262 (u flag) constructs whose PCRE2 spelling or meaning
// differs: `.` excludes exactly the four line terminators; `\s`/`\S` are
// Unicode white space; `\p{Letter}`, `\p{gc=L}`, `\p{General_Category=...}`
// take PCRE2's short category names; a `[` inside a class is a literal (not
// a POSIX class). Everything else is passed through unchanged.
std::string translate_pattern(std::string_view p, const std::string& where) {
  std::string out;
  out.reserve(p.size() + 16);
  bool in_class = false;
  for (std::size_t i = 0; i < p.size(); ++i) {
    const char c = p[i];
    if (c == '\\' && i + 1 < p.size()) {
      const char e = p[i + 1];
      if ((e == 'p' || e == 'P') && i + 2 < p.size() && p[i + 2] == '{') {
        const std::size_t close = p.find('}', i + 3);
        if (close == std::string_view::npos) {  // left to PCRE2 to refuse
          out += p.substr(i);
          break;
        }
        std::string_view name = p.substr(i + 3, close - (i + 3));
        std::string_view value = name;
        bool category = true;
        if (const std::size_t eq = name.find('='); eq != std::string_view::npos) {
          value = name.substr(eq + 1);
          category = name.substr(0, eq) == "General_Category" || name.substr(0, eq) == "gc";
        }
        std::string_view mapped = name;
        if (category) {
          for (const auto& [long_name, short_name] : general_categories) {
            if (value == long_name || value == short_name) mapped = short_name;
          }
        }
        out += '\\';
        out += e;
        out += '{';
        out += mapped;
        out += '}';
        i = close;
        continue;
      }
      if (e == 's' || e == 'S') {
        if (in_class && e == 'S') {
          fail(errc::mt_schema_unsupported, "pattern at " + schema_at(where) +
                                                " uses \\S inside a character class, which is not supported");
        }
        if (!in_class) out += e == 's' ? "[" : "[^";
        out += ecma_space;
        if (!in_class) out += ']';
        ++i;
        continue;
      }
      out += c;
      out += e;
      ++i;
      continue;
    }
    if (in_class) {
      if (c == ']') in_class = false;
      if (c == '[') out += '\\';
      out += c;
      continue;
    }
    if (c == '[') {
      in_class = true;
      out += c;
      if (i + 1 < p.size() && p[i + 1] == '^') {
        out += '^';
        ++i;
      }
      // ECMA-262: a `]` right after `[` or `[^` closes an empty class, as
      // PCRE2_ALLOW_EMPTY_CLASS reads it.
      continue;
    }
    if (c == '.') {
      out += "[^\\n\\r\\u2028\\u2029]";
      continue;
    }
    out += c;
  }
  return out;
}

// Compiles an ECMA-262 pattern (§8.3) with the PCRE2 options closest to it:
// UTF mode (the u flag), `$` only at the very end, `[]`/`[^]` allowed, an
// unset back-reference matches the empty string, `\uHHHH` and `\u{H...}`
// escapes; the remaining differences are rewritten by translate_pattern.
code_ptr compile_pattern(const std::string& ecma_pattern, const std::string& where) {
  const std::string pattern = translate_pattern(ecma_pattern, where);
  std::unique_ptr<pcre2_compile_context, compile_context_deleter> context(
      pcre2_compile_context_create(nullptr));
  if (!context) fail(errc::mt_limit, "out of memory compiling the pattern at " + schema_at(where));
  pcre2_set_compile_extra_options(context.get(), PCRE2_EXTRA_ALT_BSUX);
  pcre2_set_newline(context.get(), PCRE2_NEWLINE_ANYCRLF);
  const std::uint32_t options =
      PCRE2_UTF | PCRE2_DOLLAR_ENDONLY | PCRE2_ALLOW_EMPTY_CLASS | PCRE2_MATCH_UNSET_BACKREF | PCRE2_ALT_BSUX;
  int code = 0;
  PCRE2_SIZE offset = 0;
  code_ptr compiled(pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(), options,
                                  &code, &offset, context.get()));
  if (!compiled) {
    fail(errc::mt_schema_unsupported, "pattern at " + schema_at(where) +
                                          " is not supported by the regex engine: " + pcre2_message(code) +
                                          " at pattern offset " + std::to_string(offset));
  }
  return compiled;
}

constexpr std::string_view rejected_keywords[] = {
    "$anchor",           "$dynamicRef",   "$dynamicAnchor",    "$recursiveRef",    "$recursiveAnchor",
    "$vocabulary",       "definitions",   "additionalItems",   "unevaluatedItems", "unevaluatedProperties",
    "patternProperties", "propertyNames", "dependentRequired", "dependentSchemas", "dependencies",
    "minProperties",     "maxProperties",
};

// Decodes the percent-escapes of a URI fragment (RFC 3986 §2.1).
std::optional<std::string> percent_decode(std::string_view s) {
  auto hex = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '%') {
      out += s[i];
      continue;
    }
    if (i + 2 >= s.size()) return std::nullopt;
    const int hi = hex(s[i + 1]);
    const int lo = hex(s[i + 2]);
    if (hi < 0 || lo < 0) return std::nullopt;
    out += static_cast<char>(hi * 16 + lo);
    i += 2;
  }
  return out;
}

// Splits a JSON Pointer ("/a/b~1c") into unescaped tokens.
std::optional<std::vector<std::string>> pointer_tokens(std::string_view p) {
  std::vector<std::string> tokens;
  if (p.empty()) return tokens;
  if (p.front() != '/') return std::nullopt;
  std::size_t pos = 1;
  while (true) {
    const std::size_t end = std::min(p.find('/', pos), p.size());
    std::string token;
    for (std::size_t i = pos; i < end; ++i) {
      if (p[i] != '~') {
        token += p[i];
      } else if (i + 1 < end && (p[i + 1] == '0' || p[i + 1] == '1')) {
        token += p[i + 1] == '0' ? '~' : '/';
        ++i;
      } else {
        return std::nullopt;
      }
    }
    tokens.push_back(std::move(token));
    if (end == p.size()) break;
    pos = end + 1;
  }
  return tokens;
}

// An array index token: decimal, no leading zero (RFC 6901 §4).
std::optional<std::size_t> array_index(const std::string& token, std::size_t size) {
  if (token.empty() || token.size() > 19 || (token.size() > 1 && token[0] == '0')) return std::nullopt;
  std::size_t index = 0;
  for (const char c : token) {
    if (c < '0' || c > '9') return std::nullopt;
    index = index * 10 + static_cast<std::size_t>(c - '0');
  }
  if (index >= size) return std::nullopt;
  return index;
}

}  // namespace

// ---------------------------------------------------------------------------
// The compiled schema table.

struct json_schema_evaluator::compiled {
  struct node {
    const json* src = nullptr;
    std::string where;      // JSON Pointer of the schema location
    std::size_t level = 1;  // subschema nesting level (root: 1)
    bool embedded = false;  // inside a non-root subschema that carries `$id`
    bool is_boolean = false;
    bool boolean_value = true;
    unsigned types = 0;  // 0: no `type` keyword
    const json* enum_values = nullptr;
    const json* const_value = nullptr;
    const json* minimum = nullptr;
    const json* maximum = nullptr;
    const json* exclusive_minimum = nullptr;
    const json* exclusive_maximum = nullptr;
    const json* multiple_of = nullptr;
    std::optional<std::uint64_t> min_length, max_length, min_items, max_items, min_contains, max_contains;
    bool unique_items = false;
    std::size_t pattern = npos;  // index into `patterns`
    std::vector<std::size_t> prefix_items;
    std::size_t items = npos;
    std::size_t contains = npos;
    std::vector<std::pair<const std::string*, std::size_t>> properties;
    const json* properties_object = nullptr;
    bool no_additional_properties = false;
    std::vector<const std::string*> required;
    std::vector<std::size_t> all_of, any_of, one_of;
    std::size_t not_schema = npos, if_schema = npos, then_schema = npos, else_schema = npos;
    const std::string* ref_text = nullptr;
    std::size_t ref = npos;
  };

  std::deque<node> nodes;  // a deque: references stay valid while nodes are added
  std::unordered_map<const json*, std::size_t> index;
  std::vector<code_ptr> patterns;
  std::vector<const std::string*> pattern_sources;

  // --- construction -------------------------------------------------------
  explicit compiled(const json& document);

  std::size_t add(const json& schema, std::string where, std::size_t level, bool embedded);
  void compile_node(std::size_t n);
  void resolve_ref(std::size_t n, const json& document);
  void reject_in_place_cycles() const;

  std::vector<std::size_t> queue;
  std::vector<std::size_t> pending_refs;
  std::unordered_map<std::string, std::vector<std::size_t>> ids;

  // --- evaluation ---------------------------------------------------------
  bool eval(std::size_t n, const json& v, std::string& path, std::size_t depth, schema_violation* out) const;
  bool eval_number(const node& s, const json& v, std::string& path, schema_violation* out) const;
  bool eval_string(const node& s, const json& v, std::string& path, schema_violation* out) const;
  bool eval_array(const node& s, const json& v, std::string& path, std::size_t depth,
                  schema_violation* out) const;
  bool eval_object(const node& s, const json& v, std::string& path, std::size_t depth,
                   schema_violation* out) const;
  bool eval_applicators(const node& s, const json& v, std::string& path, std::size_t depth,
                        schema_violation* out) const;
};

namespace {

// A template so that the private node type need not be named here.
template <class Node>
bool violate(schema_violation* out, const std::string& path, const Node& s, std::string_view keyword,
             std::string message) {
  if (out != nullptr) {
    out->pointer = path;
    out->keyword = std::string(keyword);
    message += " (";
    message += schema_at(s.where);
    message += ')';
    out->message = std::move(message);
  }
  return false;
}

// Construction-time readers of keyword values (malformed → MT_SCHEMA_DIALECT).
[[noreturn]] void malformed(const std::string& where, std::string_view keyword, std::string_view expected) {
  fail(errc::mt_schema_dialect, "keyword \"" + std::string(keyword) + "\" at " + schema_at(where) +
                                    " must be " + std::string(expected));
}

std::uint64_t read_count(const json& v, const std::string& where, std::string_view keyword) {
  if (v.is_number_unsigned()) return v.get<std::uint64_t>();
  if (v.is_number_integer() && v.get<std::int64_t>() >= 0)
    return static_cast<std::uint64_t>(v.get<std::int64_t>());
  if (v.is_number_float()) {
    const double d = v.get<double>();
    if (std::isfinite(d) && d >= 0 && d == std::trunc(d)) {
      return d >= two_pow_64 ? std::numeric_limits<std::uint64_t>::max() : static_cast<std::uint64_t>(d);
    }
  }
  malformed(where, keyword, "a non-negative integer");
}

const json* read_number(const json& v, const std::string& where, std::string_view keyword) {
  if (!v.is_number() || (v.is_number_float() && !std::isfinite(v.get<double>()))) {
    malformed(where, keyword, "a finite number");
  }
  return &v;
}

}  // namespace

json_schema_evaluator::compiled::compiled(const json& document) {
  add(document, "", 1, false);
  while (!queue.empty() || !pending_refs.empty()) {
    while (!queue.empty()) {
      const std::size_t n = queue.back();
      queue.pop_back();
      compile_node(n);
    }
    // `$id`s are known once the tree below the root (and below every
    // reference target reached so far) has been walked.
    std::vector<std::size_t> refs;
    refs.swap(pending_refs);
    for (const std::size_t n : refs) resolve_ref(n, document);
  }
  reject_in_place_cycles();
}

std::size_t json_schema_evaluator::compiled::add(const json& schema, std::string where, std::size_t level,
                                                 bool embedded) {
  if (const auto it = index.find(&schema); it != index.end()) return it->second;
  if (level > max_schema_nesting) {
    fail(errc::mt_limit,
         "subschemas nested deeper than 64 levels at " + schema_at(where) + " (spec 06 §8.4)");
  }
  const std::size_t n = nodes.size();
  node& s = nodes.emplace_back();
  s.src = &schema;
  s.where = std::move(where);
  s.level = level;
  s.embedded = embedded;
  index.emplace(&schema, n);
  queue.push_back(n);
  return n;
}

void json_schema_evaluator::compiled::compile_node(std::size_t n) {
  node& s = nodes[n];
  const json& schema = *s.src;
  if (schema.is_boolean()) {
    s.is_boolean = true;
    s.boolean_value = schema.get<bool>();
    return;
  }
  if (!schema.is_object()) {
    fail(errc::mt_schema_dialect,
         schema_at(s.where) + " is neither an object nor a boolean, so it is not a schema");
  }
  // A child's location, level and resource: a subschema carrying its own
  // `$id` starts an embedded resource (§4.3 fragment references refuse it).
  auto child = [&](const json& sub, std::string where) {
    const bool embedded = s.embedded || (sub.is_object() && sub.contains("$id"));
    return add(sub, std::move(where), s.level + 1, embedded);
  };
  auto schema_array = [&](const json& v, std::string_view keyword, std::vector<std::size_t>& into) {
    if (!v.is_array() || v.empty()) malformed(s.where, keyword, "a non-empty array of schemas");
    const std::string base = child_pointer(s.where, keyword);
    for (std::size_t i = 0; i < v.size(); ++i) {
      std::string where = base;
      append_index(where, i);
      into.push_back(child(v[i], std::move(where)));
    }
  };

  for (auto it = schema.begin(); it != schema.end(); ++it) {
    const std::string& key = it.key();
    const json& v = it.value();
    if (std::find(std::begin(rejected_keywords), std::end(rejected_keywords), key) !=
        std::end(rejected_keywords)) {
      fail(errc::mt_schema_dialect, "keyword \"" + key + "\" at " + schema_at(s.where) +
                                        " is outside the metatensor schema dialect (spec 06 §4.3)");
    }
    if (key == "$schema") {
      if (!v.is_string() || v.get_ref<const std::string&>() != draft_2020_12) {
        fail(errc::mt_schema_dialect, "\"$schema\" at " + schema_at(s.where) + " must be \"" +
                                          std::string(draft_2020_12) + "\" (spec 06 §4.1)");
      }
    } else if (key == "$id") {
      if (!v.is_string()) malformed(s.where, key, "a string");
      ids[v.get<std::string>()].push_back(n);
    } else if (key == "$ref") {
      if (!v.is_string()) malformed(s.where, key, "a string");
      s.ref_text = &v.get_ref<const std::string&>();
      pending_refs.push_back(n);
    } else if (key == "$defs") {
      if (!v.is_object()) malformed(s.where, key, "an object of schemas");
      const std::string base = child_pointer(s.where, key);
      for (auto d = v.begin(); d != v.end(); ++d) child(d.value(), child_pointer(base, d.key()));
    } else if (key == "type") {
      auto one = [&](const json& t) {
        if (t.is_string()) {
          for (const auto& [name, bit] : type_names) {
            if (t.get_ref<const std::string&>() == name) return bit;
          }
        }
        malformed(s.where, key, "a JSON Schema type name or a non-empty array of distinct type names");
      };
      if (v.is_array()) {
        if (v.empty()) malformed(s.where, key, "a non-empty array of distinct type names");
        for (const json& t : v) {
          const unsigned bit = one(t);
          if ((s.types & bit) != 0) malformed(s.where, key, "an array of distinct type names");
          s.types |= bit;
        }
      } else {
        s.types = one(v);
      }
    } else if (key == "enum") {
      if (!v.is_array()) malformed(s.where, key, "an array");
      s.enum_values = &v;
    } else if (key == "const") {
      s.const_value = &v;
    } else if (key == "minimum") {
      s.minimum = read_number(v, s.where, key);
    } else if (key == "maximum") {
      s.maximum = read_number(v, s.where, key);
    } else if (key == "exclusiveMinimum") {
      s.exclusive_minimum = read_number(v, s.where, key);
    } else if (key == "exclusiveMaximum") {
      s.exclusive_maximum = read_number(v, s.where, key);
    } else if (key == "multipleOf") {
      s.multiple_of = read_number(v, s.where, key);
      if (!(compare_numbers(v, json(0)) == std::partial_ordering::greater)) {
        malformed(s.where, key, "a number greater than 0");
      }
    } else if (key == "minLength") {
      s.min_length = read_count(v, s.where, key);
    } else if (key == "maxLength") {
      s.max_length = read_count(v, s.where, key);
    } else if (key == "minItems") {
      s.min_items = read_count(v, s.where, key);
    } else if (key == "maxItems") {
      s.max_items = read_count(v, s.where, key);
    } else if (key == "minContains") {
      s.min_contains = read_count(v, s.where, key);
    } else if (key == "maxContains") {
      s.max_contains = read_count(v, s.where, key);
    } else if (key == "uniqueItems") {
      if (!v.is_boolean()) malformed(s.where, key, "a boolean");
      s.unique_items = v.get<bool>();
    } else if (key == "pattern") {
      if (!v.is_string()) malformed(s.where, key, "a string");
      s.pattern = patterns.size();
      patterns.push_back(compile_pattern(v.get_ref<const std::string&>(), s.where));
      pattern_sources.push_back(&v.get_ref<const std::string&>());
    } else if (key == "items") {
      if (v.is_array()) {
        fail(errc::mt_schema_dialect, "\"items\" at " + schema_at(s.where) +
                                          " is an array; the dialect takes \"prefixItems\" (spec 06 §4.3)");
      }
      s.items = child(v, child_pointer(s.where, key));
    } else if (key == "prefixItems") {
      schema_array(v, key, s.prefix_items);
    } else if (key == "contains") {
      s.contains = child(v, child_pointer(s.where, key));
    } else if (key == "properties") {
      if (!v.is_object()) malformed(s.where, key, "an object of schemas");
      s.properties_object = &v;
      const std::string base = child_pointer(s.where, key);
      for (auto p = v.begin(); p != v.end(); ++p) {
        s.properties.emplace_back(&p.key(), child(p.value(), child_pointer(base, p.key())));
      }
    } else if (key == "required") {
      if (!v.is_array()) malformed(s.where, key, "an array of strings");
      for (const json& r : v) {
        if (!r.is_string()) malformed(s.where, key, "an array of strings");
        s.required.push_back(&r.get_ref<const std::string&>());
      }
    } else if (key == "additionalProperties") {
      if (!v.is_boolean() || v.get<bool>()) {
        fail(errc::mt_schema_dialect, "\"additionalProperties\" at " + schema_at(s.where) +
                                          " must be false, the only value of the dialect (spec 06 §4.3)");
      }
      s.no_additional_properties = true;
    } else if (key == "allOf") {
      schema_array(v, key, s.all_of);
    } else if (key == "anyOf") {
      schema_array(v, key, s.any_of);
    } else if (key == "oneOf") {
      schema_array(v, key, s.one_of);
    } else if (key == "not") {
      s.not_schema = child(v, child_pointer(s.where, key));
    } else if (key == "if") {
      s.if_schema = child(v, child_pointer(s.where, key));
    } else if (key == "then") {
      s.then_schema = child(v, child_pointer(s.where, key));
    } else if (key == "else") {
      s.else_schema = child(v, child_pointer(s.where, key));
    }
    // Everything else is an annotation (§4.2): title, description, default,
    // examples, $comment, format (never asserted), deprecated, readOnly,
    // writeOnly, contentEncoding, contentMediaType, unknown keywords, and the
    // TypeDef: keywords, whose binary meaning structural validation enforces.
  }
}

// §4.3: `$ref` is a same-document JSON Pointer fragment ("#", "#/$defs/A",
// percent-encoded as a URI fragment) or exactly the `$id` of a subschema.
void json_schema_evaluator::compiled::resolve_ref(std::size_t n, const json& document) {
  node& s = nodes[n];
  const std::string& ref = *s.ref_text;
  if (!ref.empty() && ref.front() == '#') {
    const auto fragment = percent_decode(std::string_view(ref).substr(1));
    if (!fragment)
      fail(errc::mt_schema_dialect, "\"$ref\" at " + schema_at(s.where) + " has a bad percent-escape");
    if (!fragment->empty() && fragment->front() != '/') {
      fail(errc::mt_schema_dialect, "\"$ref\": \"" + ref + "\" at " + schema_at(s.where) +
                                        " is an anchor reference, not a JSON Pointer (spec 06 §4.3)");
    }
    if (s.embedded) {
      fail(errc::mt_schema_dialect,
           "\"$ref\": \"" + ref + "\" at " + schema_at(s.where) +
               " is a fragment inside a subschema with its own \"$id\", which 2020-12 "
               "resolves against that subschema, not the document (spec 06 §4.3)");
    }
    const auto tokens = pointer_tokens(*fragment);
    if (!tokens)
      fail(errc::mt_schema_dialect, "\"$ref\" at " + schema_at(s.where) + " is not a JSON Pointer");
    const json* target = &document;
    bool embedded = false;
    std::string target_where;
    for (const std::string& token : *tokens) {
      if (target->is_object()) {
        const auto it = target->find(token);
        if (it == target->end())
          target = nullptr;
        else
          target = &*it;
      } else if (target->is_array()) {
        const auto i = array_index(token, target->size());
        target = i ? &(*target)[*i] : nullptr;
      } else {
        target = nullptr;
      }
      if (target == nullptr) {
        fail(errc::mt_schema_dialect, "\"$ref\": \"" + ref + "\" at " + schema_at(s.where) +
                                          " does not resolve in the schema document");
      }
      detail::append_pointer_token(target_where, token);
      embedded = embedded || (target->is_object() && target->contains("$id"));
    }
    const std::size_t depth = std::max<std::size_t>(1, tokens->size() / 2 + 1);
    const std::size_t t = add(*target, target_where, depth, embedded);
    nodes[n].ref = t;
    return;
  }
  const auto it = ids.find(ref);
  if (it == ids.end()) {
    fail(errc::mt_schema_dialect,
         "\"$ref\": \"" + ref + "\" at " + schema_at(s.where) +
             " is neither a same-document JSON Pointer fragment nor the \"$id\" of a "
             "subschema; nothing is fetched (spec 06 §4.3)");
  }
  if (it->second.size() != 1) {
    fail(errc::mt_schema_dialect, "\"$ref\": \"" + ref + "\" at " + schema_at(s.where) +
                                      " names an \"$id\" carried by several subschemas");
  }
  s.ref = it->second.front();
}

// A cycle of `$ref` and in-place applicators never consumes the value, so
// evaluating it would not terminate (§4.3 rejects reference cycles).
void json_schema_evaluator::compiled::reject_in_place_cycles() const {
  auto edges = [&](const node& s) {
    std::vector<std::size_t> out;
    if (s.ref != npos) out.push_back(s.ref);
    out.insert(out.end(), s.all_of.begin(), s.all_of.end());
    out.insert(out.end(), s.any_of.begin(), s.any_of.end());
    out.insert(out.end(), s.one_of.begin(), s.one_of.end());
    for (const std::size_t c : {s.not_schema, s.if_schema, s.then_schema, s.else_schema}) {
      if (c != npos) out.push_back(c);
    }
    return out;
  };
  enum : std::uint8_t { white, grey, black };
  std::vector<std::uint8_t> colour(nodes.size(), white);
  struct frame {
    std::size_t n;
    std::vector<std::size_t> next;
    std::size_t i;
  };
  for (std::size_t start = 0; start < nodes.size(); ++start) {
    if (colour[start] != white) continue;
    std::vector<frame> stack;
    stack.push_back({start, edges(nodes[start]), 0});
    colour[start] = grey;
    while (!stack.empty()) {
      frame& f = stack.back();
      if (f.i == f.next.size()) {
        colour[f.n] = black;
        stack.pop_back();
        continue;
      }
      const std::size_t c = f.next[f.i++];
      if (colour[c] == grey) {
        fail(errc::mt_schema_dialect, "reference cycle through " + schema_at(nodes[c].where) +
                                          " never descends into the value (spec 06 §4.3)");
      }
      if (colour[c] == white) {
        colour[c] = grey;
        stack.push_back({c, edges(nodes[c]), 0});
      }
    }
  }
}

// ---------------------------------------------------------------------------
// Evaluation. `out` is null when only the verdict matters (anyOf, oneOf,
// not, if, contains), so no message is built then.

bool json_schema_evaluator::compiled::eval(std::size_t n, const json& v, std::string& path, std::size_t depth,
                                           schema_violation* out) const {
  if (depth > max_evaluation_depth) {
    fail(errc::mt_limit, "schema evaluation deeper than " + std::to_string(max_evaluation_depth) +
                             " levels at " + value_at(path) + " (spec 06 §8.4)");
  }
  const node& s = nodes[n];
  if (s.is_boolean) {
    return s.boolean_value || violate(out, path, s, "false", "the schema false admits no value");
  }
  if (s.ref != npos && !eval(s.ref, v, path, depth + 1, out)) return false;
  if (s.types != 0 && (value_types(v) & s.types) == 0) {
    return violate(out, path, s, "type", "expected " + type_list(s.types) + ", got " + value_type_name(v));
  }
  if (s.enum_values != nullptr) {
    const auto& values = *s.enum_values;
    const bool found =
        std::any_of(values.begin(), values.end(), [&](const json& e) { return json_equal(e, v, 0); });
    if (!found) return violate(out, path, s, "enum", describe(v) + " is not one of the enumerated values");
  }
  if (s.const_value != nullptr && !json_equal(*s.const_value, v, 0)) {
    return violate(out, path, s, "const", describe(v) + " is not the constant " + describe(*s.const_value));
  }
  if (v.is_number() && !eval_number(s, v, path, out)) return false;
  if (v.is_string() && !eval_string(s, v, path, out)) return false;
  if (v.is_array() && !eval_array(s, v, path, depth, out)) return false;
  if (v.is_object() && !eval_object(s, v, path, depth, out)) return false;
  return eval_applicators(s, v, path, depth, out);
}

// §8.3: a keyword fails only if its violation test is true, so NaN (unordered)
// passes every bound; multipleOf fails for non-finite values.
bool json_schema_evaluator::compiled::eval_number(const node& s, const json& v, std::string& path,
                                                  schema_violation* out) const {
  using po = std::partial_ordering;
  if (s.minimum != nullptr && compare_to_bound(v, *s.minimum) == po::less) {
    return violate(out, path, s, "minimum",
                   describe(v) + " is less than the minimum " + describe(*s.minimum));
  }
  if (s.maximum != nullptr && compare_to_bound(v, *s.maximum) == po::greater) {
    return violate(out, path, s, "maximum",
                   describe(v) + " is greater than the maximum " + describe(*s.maximum));
  }
  if (s.exclusive_minimum != nullptr) {
    const po c = compare_to_bound(v, *s.exclusive_minimum);
    if (c == po::less || c == po::equivalent) {
      return violate(
          out, path, s, "exclusiveMinimum",
          describe(v) + " is not greater than the exclusive minimum " + describe(*s.exclusive_minimum));
    }
  }
  if (s.exclusive_maximum != nullptr) {
    const po c = compare_to_bound(v, *s.exclusive_maximum);
    if (c == po::greater || c == po::equivalent) {
      return violate(
          out, path, s, "exclusiveMaximum",
          describe(v) + " is not less than the exclusive maximum " + describe(*s.exclusive_maximum));
    }
  }
  if (s.multiple_of != nullptr && !is_multiple_of(v, *s.multiple_of)) {
    return violate(out, path, s, "multipleOf",
                   describe(v) + " is not a multiple of " + describe(*s.multiple_of));
  }
  return true;
}

bool json_schema_evaluator::compiled::eval_string(const node& s, const json& v, std::string& path,
                                                  schema_violation* out) const {
  const std::string& text = v.get_ref<const std::string&>();
  if (s.min_length || s.max_length) {
    const std::size_t length = code_points(text);
    if (s.min_length && length < *s.min_length) {
      return violate(out, path, s, "minLength",
                     "string of " + std::to_string(length) +
                         " code points is shorter than the minimum length " + std::to_string(*s.min_length));
    }
    if (s.max_length && length > *s.max_length) {
      return violate(out, path, s, "maxLength",
                     "string of " + std::to_string(length) +
                         " code points is longer than the maximum length " + std::to_string(*s.max_length));
    }
  }
  if (s.pattern != npos) {
    std::unique_ptr<pcre2_match_context, match_context_deleter> context(pcre2_match_context_create(nullptr));
    std::unique_ptr<pcre2_match_data, match_data_deleter> data(pcre2_match_data_create(1, nullptr));
    if (!context || !data) fail(errc::mt_limit, "out of memory matching a pattern at " + value_at(path));
    pcre2_set_match_limit(context.get(), pcre2_match_budget);
    pcre2_set_depth_limit(context.get(), pcre2_depth_budget);
    pcre2_set_heap_limit(context.get(), pcre2_heap_budget_kib);
    const int rc = pcre2_match(patterns[s.pattern].get(), reinterpret_cast<PCRE2_SPTR>(text.data()),
                               text.size(), 0, 0, data.get(), context.get());
    if (rc >= 0) return true;  // unanchored search: any match anywhere
    if (rc == PCRE2_ERROR_NOMATCH) {
      return violate(
          out, path, s, "pattern",
          describe(v) + " does not match the pattern " +
              json(*pattern_sources[s.pattern]).dump(-1, ' ', false, json::error_handler_t::replace));
    }
    if (rc <= PCRE2_ERROR_UTF8_ERR1 && rc >= PCRE2_ERROR_UTF8_ERR21) {
      return violate(out, path, s, "pattern", "the string is not valid UTF-8, so no pattern can match it");
    }
    // A budget was exhausted (PCRE2_ERROR_MATCHLIMIT, DEPTHLIMIT, HEAPLIMIT)
    // or the engine failed: an error, never a silent verdict.
    fail(errc::mt_limit, "pattern at " + schema_at(s.where) + " on " + value_at(path) +
                             " exceeded the regex engine's limits: " + pcre2_message(rc));
  }
  return true;
}

bool json_schema_evaluator::compiled::eval_array(const node& s, const json& v, std::string& path,
                                                 std::size_t depth, schema_violation* out) const {
  const std::size_t size = v.size();
  if (s.min_items && size < *s.min_items) {
    return violate(
        out, path, s, "minItems",
        "array of " + std::to_string(size) + " items has fewer than " + std::to_string(*s.min_items));
  }
  if (s.max_items && size > *s.max_items) {
    return violate(
        out, path, s, "maxItems",
        "array of " + std::to_string(size) + " items has more than " + std::to_string(*s.max_items));
  }
  const std::size_t base = path.size();
  for (std::size_t i = 0; i < size; ++i) {
    const std::size_t sub = i < s.prefix_items.size() ? s.prefix_items[i] : s.items;
    if (sub == npos) {
      if (i >= s.prefix_items.size()) break;
      continue;
    }
    append_index(path, i);
    const bool ok = eval(sub, v[i], path, depth + 1, out);
    path.resize(base);
    if (!ok) return false;
  }
  if (s.contains != npos) {
    const std::uint64_t min = s.min_contains.value_or(1);
    std::uint64_t matches = 0;
    for (std::size_t i = 0; i < size; ++i) {
      append_index(path, i);
      const bool ok = eval(s.contains, v[i], path, depth + 1, nullptr);
      path.resize(base);
      if (ok) ++matches;
      if (!s.max_contains && matches >= min) break;
      if (s.max_contains && matches > *s.max_contains) break;
    }
    if (matches < min) {
      return violate(out, path, s, min == 1 ? "contains" : "minContains",
                     "array has " + std::to_string(matches) + " items matching \"contains\", fewer than " +
                         std::to_string(min));
    }
    if (s.max_contains && matches > *s.max_contains) {
      return violate(
          out, path, s, "maxContains",
          "array has more than " + std::to_string(*s.max_contains) + " items matching \"contains\"");
    }
  }
  if (s.unique_items) {
    if (const auto dup = first_duplicate(v)) {
      return violate(
          out, path, s, "uniqueItems",
          "items " + std::to_string(dup->first) + " and " + std::to_string(dup->second) + " are equal");
    }
  }
  return true;
}

bool json_schema_evaluator::compiled::eval_object(const node& s, const json& v, std::string& path,
                                                  std::size_t depth, schema_violation* out) const {
  for (const std::string* name : s.required) {
    if (!v.contains(*name)) {
      return violate(out, path, s, "required", "missing the required member \"" + *name + "\"");
    }
  }
  const std::size_t base = path.size();
  for (const auto& [name, sub] : s.properties) {
    const auto it = v.find(*name);
    if (it == v.end()) continue;
    detail::append_pointer_token(path, *name);
    const bool ok = eval(sub, *it, path, depth + 1, out);
    path.resize(base);
    if (!ok) return false;
  }
  if (s.no_additional_properties) {
    for (auto it = v.begin(); it != v.end(); ++it) {
      if (s.properties_object != nullptr && s.properties_object->contains(it.key())) continue;
      detail::append_pointer_token(path, it.key());
      const bool ok = violate(out, path, s, "additionalProperties",
                              "member \"" + it.key() + "\" is not listed in \"properties\"");
      path.resize(base);
      return ok;
    }
  }
  return true;
}

bool json_schema_evaluator::compiled::eval_applicators(const node& s, const json& v, std::string& path,
                                                       std::size_t depth, schema_violation* out) const {
  for (const std::size_t c : s.all_of) {
    if (!eval(c, v, path, depth + 1, out)) return false;
  }
  if (!s.any_of.empty()) {
    const bool any = std::any_of(s.any_of.begin(), s.any_of.end(),
                                 [&](std::size_t c) { return eval(c, v, path, depth + 1, nullptr); });
    if (!any) {
      return violate(
          out, path, s, "anyOf",
          "value matches none of the " + std::to_string(s.any_of.size()) + " \"anyOf\" subschemas");
    }
  }
  if (!s.one_of.empty()) {
    std::size_t matches = 0;
    for (const std::size_t c : s.one_of) {
      if (eval(c, v, path, depth + 1, nullptr) && ++matches > 1) break;
    }
    if (matches != 1) {
      return violate(out, path, s, "oneOf",
                     matches == 0 ? "value matches none of the \"oneOf\" subschemas"
                                  : "value matches more than one of the \"oneOf\" subschemas");
    }
  }
  if (s.not_schema != npos && eval(s.not_schema, v, path, depth + 1, nullptr)) {
    return violate(out, path, s, "not", "value matches the \"not\" subschema");
  }
  if (s.if_schema != npos) {
    const bool condition = eval(s.if_schema, v, path, depth + 1, nullptr);
    const std::size_t branch = condition ? s.then_schema : s.else_schema;
    if (branch != npos && !eval(branch, v, path, depth + 1, out)) return false;
  }
  return true;
}

// ---------------------------------------------------------------------------

json_schema_evaluator::json_schema_evaluator(const nlohmann::json& document)
    : document_(&document), compiled_(std::make_unique<const compiled>(document)) {}

json_schema_evaluator::~json_schema_evaluator() = default;
json_schema_evaluator::json_schema_evaluator(json_schema_evaluator&&) noexcept = default;
json_schema_evaluator& json_schema_evaluator::operator=(json_schema_evaluator&&) noexcept = default;

std::optional<schema_violation> json_schema_evaluator::validate(const nlohmann::json& value,
                                                                std::string_view value_pointer) const {
  return validate_node(*document_, value, value_pointer);
}

std::optional<schema_violation> json_schema_evaluator::validate_node(const nlohmann::json& schema_node,
                                                                     const nlohmann::json& value,
                                                                     std::string_view value_pointer) const {
  const auto it = compiled_->index.find(&schema_node);
  if (it == compiled_->index.end()) {
    throw tensogram::invalid_arg_error(
        "json_schema_evaluator::validate_node: the node is not a schema node of the evaluator's document");
  }
  std::string path(value_pointer);
  schema_violation violation;
  if (compiled_->eval(it->second, value, path, 0, &violation)) return std::nullopt;
  return violation;
}

}  // namespace metatensor
