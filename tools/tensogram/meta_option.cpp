#include "meta_option.hpp"

#include <charconv>
#include <cmath>
#include <cstdint>
#include <vector>

#include "tool_error.hpp"

namespace tensogram::cli {

namespace {

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

// RFC 8259 §6 number grammar; sets `integral` when there is neither a
// fraction nor an exponent.
bool is_json_number(std::string_view s, bool& integral) {
  std::size_t i = 0;
  if (i < s.size() && s[i] == '-') ++i;
  if (i >= s.size() || !is_digit(s[i])) return false;
  if (s[i] == '0') {
    ++i;
  } else {
    while (i < s.size() && is_digit(s[i])) ++i;
  }
  integral = true;
  if (i < s.size() && s[i] == '.') {
    integral = false;
    ++i;
    if (i >= s.size() || !is_digit(s[i])) return false;
    while (i < s.size() && is_digit(s[i])) ++i;
  }
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    integral = false;
    ++i;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
    if (i >= s.size() || !is_digit(s[i])) return false;
    while (i < s.size() && is_digit(s[i])) ++i;
  }
  return i == s.size();
}

std::vector<std::string_view> split_path(std::string_view key) {
  std::vector<std::string_view> segs;
  std::size_t start = 0;
  for (;;) {
    const std::size_t dot = key.find('.', start);
    segs.push_back(key.substr(start, dot == std::string_view::npos ? key.npos : dot - start));
    if (dot == std::string_view::npos) return segs;
    start = dot + 1;
  }
}

}  // namespace

cbor::value parse_meta_value(std::string_view text) {
  bool integral = false;
  if (!is_json_number(text, integral)) return cbor::value(text);
  const char* first = text.data();
  const char* last = text.data() + text.size();
  if (integral) {
    if (text[0] == '-') {
      std::int64_t v = 0;
      if (std::from_chars(first, last, v).ec == std::errc{}) return cbor::value(v);
    } else {
      std::uint64_t v = 0;
      if (std::from_chars(first, last, v).ec == std::errc{}) return cbor::value(v);
    }
  }
  // Same rule as JSON → CBOR elsewhere in the library (spec 02 §2.2):
  // numbers that are not 64-bit integers become floats.
  double d = 0;
  const auto r = std::from_chars(first, last, d);
  if (r.ec == std::errc{} && r.ptr == last && std::isfinite(d)) return cbor::value(d);
  return cbor::value(text);
}

cbor::value build_meta_map(std::span<const std::string> assignments) {
  cbor::value root = cbor::value::make_map();
  for (const std::string& a : assignments) {
    const std::size_t eq = a.find('=');
    if (eq == std::string::npos) throw tool_error("invalid --meta '" + a + "': expected key=value");
    const std::string_view key = std::string_view(a).substr(0, eq);
    const std::vector<std::string_view> segs = split_path(key);
    for (const std::string_view seg : segs) {
      if (seg.empty()) throw tool_error("invalid --meta '" + a + "': empty key segment");
    }
    if (segs.front() == "_reserved_") {
      throw tool_error("invalid --meta '" + a + "': _reserved_ is managed by the library");
    }
    cbor::value* cur = &root;
    for (std::size_t i = 0; i + 1 < segs.size(); ++i) {
      cbor::value* next = cur->find(segs[i]);
      if (next == nullptr) {
        next = &cur->set(segs[i], cbor::value::make_map());
      } else if (!next->is_map()) {
        throw tool_error("invalid --meta '" + a + "': '" +
                         std::string(key.substr(
                             0, static_cast<std::size_t>(segs[i].data() + segs[i].size() - key.data()))) +
                         "' is already set to a value that is not a map");
      }
      cur = next;
    }
    cur->set(segs.back(), parse_meta_value(std::string_view(a).substr(eq + 1)));
  }
  return root;
}

}  // namespace tensogram::cli
