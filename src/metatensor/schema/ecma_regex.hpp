// ECMA-262 regular expressions for the `pattern` keyword of the metatensor
// dialect (spec 06 §8.3), on PCRE2: the pattern is rewritten where ECMA-262
// (u flag) and PCRE2 spell or read a construct differently, compiled with the
// closest PCRE2 options, and every search runs under match, depth and heap
// budgets, so a hostile pattern such as "(a+)+$" ends with an error instead
// of running for ages. Not a public header.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace metatensor::detail {

class ecma_pattern {
 public:
  /// Compiles `source`. Throws metatensor::error MT_SCHEMA_UNSUPPORTED when
  /// PCRE2 refuses it (or for `\S` inside a character class) and MT_LIMIT
  /// when out of memory; the message names `location` ("schema location
  /// /properties/a", "schema root").
  ecma_pattern(const std::string& source, const std::string& location);
  ~ecma_pattern();
  ecma_pattern(ecma_pattern&&) noexcept;
  ecma_pattern& operator=(ecma_pattern&&) noexcept;
  ecma_pattern(const ecma_pattern&) = delete;
  ecma_pattern& operator=(const ecma_pattern&) = delete;

  enum class outcome : std::uint8_t {
    match,  // found anywhere (the search is unanchored)
    no_match,
    invalid_utf8,   // the subject is not UTF-8, so nothing can match it
    out_of_memory,  // no match context could be made
    over_budget,    // a budget was exhausted or the engine failed
  };
  struct result {
    outcome kind;
    std::string engine_message;  // PCRE2's words, for `over_budget`
  };
  [[nodiscard]] result search(std::string_view subject) const;

 private:
  struct code;
  std::unique_ptr<code> code_;
};

}  // namespace metatensor::detail
