// Reading a JSON text from simdjson's structural index alone (its stage 1),
// without a DOM (issue 27): no tape and no string buffer, the two largest
// parts of a DOM parse (for a 26 MB schema ~40 MB touched), and no stage 2.
// Shared by the header walk (fast_json.cpp) and the schema fast path
// (schema/schema_fast_path.cpp).
//
// Stage 1 validates UTF-8, closes every string, refuses unescaped control
// characters in strings and marks every structural character (`{}[]:,`),
// opening quote and first byte of a scalar. It does not check the JSON
// grammar: a walk takes tokens only where its own grammar expects them and
// declines everything else, so whatever a walk accepts is strict JSON (§3.1)
// of that grammar. Like every fast path of header reading, a walk only ever
// *accepts*; the reference path names the failure of what it declines. Not a
// public header (it includes simdjson).
#pragma once

#include <simdjson.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "metatensor/safetensors.hpp"

namespace metatensor::detail {

[[nodiscard]] inline bool is_json_space(char c) noexcept {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/// A cursor over the tokens of a text: `at[i]` is where token i starts,
/// `at[count]` the text's length (simdjson's sentinel). A string token runs
/// from its quote to the next token: its closing quote is its last byte that
/// is not JSON whitespace (anything else after the quote would be a token of
/// its own).
class token_walk {
 public:
  token_walk(const char* text, const std::uint32_t* at, std::uint32_t count) noexcept
      : text_(text), at_(at), count_(count) {}

  [[nodiscard]] bool done() const noexcept { return i_ == count_; }

  /// Takes the next token when it is the structural character `c`.
  bool expect(char c) noexcept {
    if (i_ == count_ || text_[at_[i_]] != c) return false;
    ++i_;
    return true;
  }

  /// Takes a string token: its text between the quotes, escapes not undone
  /// (`undo_escapes` checks and undoes them).
  bool string(std::string_view& raw) noexcept {
    if (i_ == count_ || text_[at_[i_]] != '"') return false;
    const char* const begin = text_ + at_[i_] + 1;
    const char* end = text_ + at_[i_ + 1];
    while (end > begin && is_json_space(end[-1])) --end;
    if (end == begin || end[-1] != '"') return false;
    raw = std::string_view(begin, static_cast<std::size_t>(end - 1 - begin));
    ++i_;
    return true;
  }

  /// Takes an integer token of §2 rule 7: digits only (no sign, so no `-0`;
  /// no fraction or exponent; no leading zero), at most 2^53 - 1.
  bool uint53(std::uint64_t& out) noexcept {
    if (i_ == count_) return false;
    const char* p = text_ + at_[i_];
    const char* const first = p;
    const char* const next = text_ + at_[i_ + 1];
    std::uint64_t v = 0;
    for (; p < next && *p >= '0' && *p <= '9'; ++p) {
      if (p - first == 16) return false;  // 17 digits exceed 2^53 - 1
      v = v * 10 + static_cast<std::uint64_t>(*p - '0');
    }
    if (p == first || (*first == '0' && p - first > 1) || v > safetensors::max_json_integer) return false;
    if (!rest_is_space(p)) return false;
    out = v;
    ++i_;
    return true;
  }

  /// Takes a `null` token.
  bool null() noexcept { return literal("null"); }

  /// Takes a `true` or `false` token.
  bool boolean(bool& out) noexcept {
    if (literal("true")) {
      out = true;
      return true;
    }
    if (literal("false")) {
      out = false;
      return true;
    }
    return false;
  }

 private:
  bool literal(std::string_view word) noexcept {
    if (i_ == count_) return false;
    const char* const p = text_ + at_[i_];
    const char* const next = text_ + at_[i_ + 1];
    if (static_cast<std::size_t>(next - p) < word.size() || std::memcmp(p, word.data(), word.size()) != 0) {
      return false;
    }
    if (!rest_is_space(p + word.size())) return false;
    ++i_;
    return true;
  }

  // True when only JSON whitespace lies between `p` and the next token.
  [[nodiscard]] bool rest_is_space(const char* p) const noexcept {
    for (const char* const next = text_ + at_[i_ + 1]; p < next; ++p) {
      if (!is_json_space(*p)) return false;
    }
    return true;
  }

  const char* text_;
  const std::uint32_t* at_;
  std::uint32_t count_;
  std::uint32_t i_ = 0;
};

/// Stage 1 of a text: its structural index (4 bytes per token, room for one
/// per byte, advised to huge pages) and, when fewer than simdjson's padding
/// bytes are readable after the text, the padded copy it was read from.
class structural_index {
 public:
  /// The index of `text`; `readable` bytes from `text.data()` may be read
  /// (at least `text.size()`: the text is read in place when that leaves
  /// simdjson's padding after it). Nothing when stage 1 refuses the text
  /// (invalid UTF-8, an unclosed string, a control character in a string)
  /// or the index cannot be allocated.
  [[nodiscard]] static std::optional<structural_index> build(std::string_view text, std::size_t readable);

  /// A walk from the first token. The text it reads is `text()`.
  [[nodiscard]] token_walk walk() const noexcept {
    return {text_, index_->structural_indexes.get(), index_->n_structural_indexes};
  }
  /// The text the tokens point into: the caller's, or the padded copy.
  [[nodiscard]] const char* text() const noexcept { return text_; }
  [[nodiscard]] std::uint32_t tokens() const noexcept { return index_->n_structural_indexes; }
  /// simdjson's parser implementation, whose `parse_string` undoes escapes.
  [[nodiscard]] const simdjson::internal::dom_parser_implementation& json() const noexcept { return *index_; }

 private:
  std::unique_ptr<simdjson::internal::dom_parser_implementation> index_;
  simdjson::padded_string copy_;
  const char* text_ = nullptr;
};

/// The value of a string token whose text (escapes not undone) is `raw`, with
/// simdjson's padding after it in `out`'s capacity: simdjson's unescaping
/// writes whole blocks, and a metadata string may hold a document that is
/// parsed next, in place (a metatensor header's schema and layout table, tens
/// of MB for 200 k tensors). A large one is advised to huge pages before its
/// first touch (issue 27). False for an invalid escape (a lone surrogate,
/// `\x`, ...).
bool unescape(const simdjson::internal::dom_parser_implementation& json, std::string_view raw,
              std::string& out);

/// Points `s`, a string token's text, at its value: in place when it holds no
/// escape, else undone into `scratch`. False for an invalid escape.
bool undo_escapes(const simdjson::internal::dom_parser_implementation& json, std::string_view& s,
                  std::string& scratch);

}  // namespace metatensor::detail
