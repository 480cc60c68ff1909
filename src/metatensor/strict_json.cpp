// Strict JSON parsing shared by the header and the embedded documents.
#include "strict_json.hpp"
#include "fast_json.hpp"
#include "text.hpp"

#include <optional>
#include <set>
#include <string>
#include <vector>

namespace metatensor {
namespace {

[[noreturn]] void fail(errc code, const std::string& detail) {
  throw error(code, detail);
}

// SAX handler of the first parsing pass: records the first duplicate key of
// any object (rule 4) and whether nesting exceeds `max_json_depth`. Key
// sets are kept only for the first `max_json_depth` levels.
struct header_checker {
  std::vector<std::set<std::string>> keys;  // one per open object or array
  std::size_t depth = 0;
  bool too_deep = false;
  std::optional<std::string> duplicate;
  std::string syntax_error;

  bool open() {
    ++depth;
    if (depth > max_json_depth) {
      too_deep = true;
    } else {
      keys.emplace_back();
    }
    return true;
  }
  bool close() {
    if (depth <= max_json_depth && !keys.empty()) keys.pop_back();
    --depth;
    return true;
  }
  bool null() { return true; }
  bool boolean(bool) { return true; }
  bool number_integer(std::int64_t) { return true; }
  bool number_unsigned(std::uint64_t) { return true; }
  bool number_float(double, const std::string&) { return true; }
  bool string(std::string&) { return true; }
  bool binary(nlohmann::json::binary_t&) { return true; }
  bool start_object(std::size_t) { return open(); }
  bool end_object() { return close(); }
  bool start_array(std::size_t) { return open(); }
  bool end_array() { return close(); }
  bool key(std::string& k) {
    if (depth <= max_json_depth && !keys.empty() && !keys.back().insert(k).second && !duplicate)
      duplicate = k;
    return true;
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::json::exception& e) {
    syntax_error = e.what();
    return false;
  }
};

}  // namespace

// Parses the header JSON (§2 rule 3) and reports duplicate keys (rule 4)
// after a complete parse, as the spec requires.
nlohmann::json parse_strict_json(std::string_view text, const json_errors& errors) {
  // A valid document is read once by simdjson (issue 27); anything else
  // goes through the reference passes, which name the first failure.
  if (auto doc = detail::parse_json_fast(text)) return std::move(*doc);
  return parse_strict_json_reference(text, errors);
}

nlohmann::json parse_strict_json_reference(std::string_view text, const json_errors& errors) {
  // nlohmann skips a UTF-8 byte-order mark; the reference parser rejects it.
  if (text.size() >= 3 && static_cast<unsigned char>(text[0]) == 0xEF &&
      static_cast<unsigned char>(text[1]) == 0xBB && static_cast<unsigned char>(text[2]) == 0xBF) {
    fail(errors.syntax, std::string(errors.what) + " starts with a byte-order mark");
  }
  // nlohmann's lexer treats a NUL byte as end of input and would ignore
  // what follows; NUL is never valid in JSON text (RFC 8259 §2, §7).
  if (const auto nul = text.find('\0'); nul != std::string_view::npos) {
    fail(errors.syntax, "NUL byte at " + std::string(errors.what) + " byte " + std::to_string(nul));
  }
  // Pass 1 (SAX, iterative, O(depth) bits of state): syntax of the whole
  // text, then duplicate keys (rule 4) and nesting depth (§8.4).
  header_checker checker;
  const bool ok =
      nlohmann::json::sax_parse(text.begin(), text.end(), &checker, nlohmann::json::input_format_t::json,
                                /*strict=*/true, /*ignore_comments=*/false);
  if (!ok) fail(errors.syntax, std::string(errors.what) + " is not one JSON value: " + checker.syntax_error);
  if (checker.duplicate)
    fail(errors.duplicate,
         "duplicate key " + detail::quoted(*checker.duplicate) + " in a " + errors.what + " object");
  if (checker.too_deep) {
    fail(errc::mt_limit,
         std::string(errors.what) + " JSON nested deeper than " + std::to_string(max_json_depth) + " levels");
  }
  // Pass 2: the DOM, now known to be well-formed and shallow.
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/true,
                                /*ignore_comments=*/false);
  } catch (const nlohmann::json::exception& e) {
    fail(errors.syntax, std::string(errors.what) + " is not one JSON value: " + e.what());
  }
  return doc;
}

std::string first_oversized_integer(const nlohmann::json& doc) {
  constexpr std::uint64_t limit = (std::uint64_t{1} << 53) - 1;
  std::vector<const nlohmann::json*> stack{&doc};
  while (!stack.empty()) {
    const auto* v = stack.back();
    stack.pop_back();
    if (v->is_number_unsigned()) {
      if (v->get<std::uint64_t>() > limit) return v->dump();
    } else if (v->is_number_integer()) {
      const auto i = v->get<std::int64_t>();
      if (i < -static_cast<std::int64_t>(limit)) return v->dump();
    } else if (v->is_structured()) {
      for (const auto& child : *v) stack.push_back(&child);
    }
  }
  return {};
}

}  // namespace metatensor
