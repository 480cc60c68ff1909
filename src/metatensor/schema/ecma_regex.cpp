#include "ecma_regex.hpp"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <utility>

#include "metatensor/error.hpp"

namespace metatensor::detail {

namespace {

// PCRE2 limits for one `pattern` match (§8.3): a hostile pattern such as
// "(a+)+$" stops with an error after about this much backtracking work
// instead of running for ages.
constexpr std::uint32_t pcre2_match_budget = 10'000'000;
constexpr std::uint32_t pcre2_depth_budget = 100'000;
constexpr std::uint32_t pcre2_heap_budget_kib = 32 * 1024;

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
std::string translate_pattern(std::string_view p, const std::string& location) {
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
          throw error(
              errc::mt_schema_unsupported,
              "pattern at " + location + " uses \\S inside a character class, which is not supported");
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
code_ptr compile_pattern(const std::string& ecma_pattern, const std::string& location) {
  const std::string pattern = translate_pattern(ecma_pattern, location);
  std::unique_ptr<pcre2_compile_context, compile_context_deleter> context(
      pcre2_compile_context_create(nullptr));
  if (!context) throw error(errc::mt_limit, "out of memory compiling the pattern at " + location);
  pcre2_set_compile_extra_options(context.get(), PCRE2_EXTRA_ALT_BSUX);
  pcre2_set_newline(context.get(), PCRE2_NEWLINE_ANYCRLF);
  const std::uint32_t options =
      PCRE2_UTF | PCRE2_DOLLAR_ENDONLY | PCRE2_ALLOW_EMPTY_CLASS | PCRE2_MATCH_UNSET_BACKREF | PCRE2_ALT_BSUX;
  int code = 0;
  PCRE2_SIZE offset = 0;
  code_ptr compiled(pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(), options,
                                  &code, &offset, context.get()));
  if (!compiled) {
    throw error(errc::mt_schema_unsupported,
                "pattern at " + location + " is not supported by the regex engine: " + pcre2_message(code) +
                    " at pattern offset " + std::to_string(offset));
  }
  return compiled;
}

}  // namespace

struct ecma_pattern::code {
  code_ptr compiled;
};

ecma_pattern::ecma_pattern(const std::string& source, const std::string& location)
    : code_(std::make_unique<code>(code{compile_pattern(source, location)})) {}

ecma_pattern::~ecma_pattern() = default;
ecma_pattern::ecma_pattern(ecma_pattern&&) noexcept = default;
ecma_pattern& ecma_pattern::operator=(ecma_pattern&&) noexcept = default;

ecma_pattern::result ecma_pattern::search(std::string_view subject) const {
  std::unique_ptr<pcre2_match_context, match_context_deleter> context(pcre2_match_context_create(nullptr));
  std::unique_ptr<pcre2_match_data, match_data_deleter> data(pcre2_match_data_create(1, nullptr));
  if (!context || !data) return {outcome::out_of_memory, {}};
  pcre2_set_match_limit(context.get(), pcre2_match_budget);
  pcre2_set_depth_limit(context.get(), pcre2_depth_budget);
  pcre2_set_heap_limit(context.get(), pcre2_heap_budget_kib);
  const int rc = pcre2_match(code_->compiled.get(), reinterpret_cast<PCRE2_SPTR>(subject.data()),
                             subject.size(), 0, 0, data.get(), context.get());
  if (rc >= 0) return {outcome::match, {}};
  if (rc == PCRE2_ERROR_NOMATCH) return {outcome::no_match, {}};
  if (rc <= PCRE2_ERROR_UTF8_ERR1 && rc >= PCRE2_ERROR_UTF8_ERR21) return {outcome::invalid_utf8, {}};
  // PCRE2_ERROR_MATCHLIMIT, DEPTHLIMIT, HEAPLIMIT, or an engine failure.
  return {outcome::over_budget, pcre2_message(rc)};
}

}  // namespace metatensor::detail
