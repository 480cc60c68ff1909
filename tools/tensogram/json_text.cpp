#include "json_text.hpp"

#include <array>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <string_view>
#include <system_error>

#include <nlohmann/json.hpp>
#include <tensogram/core/hex.hpp>

namespace tensogram::cli {

namespace {

// serde_json's escape set: `"`, `\`, the short escapes \b \t \n \f \r and
// \u00XX (lowercase hex) for the other control characters. Everything else,
// including non-ASCII UTF-8 and DEL, is written as is.
void append_string(std::string& out, std::string_view s) {
  out += '"';
  for (const char c : s) {
    const auto u = static_cast<unsigned char>(c);
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\b': out += "\\b"; break;
      case '\t': out += "\\t"; break;
      case '\n': out += "\\n"; break;
      case '\f': out += "\\f"; break;
      case '\r': out += "\\r"; break;
      default:
        if (u < 0x20) {
          out += "\\u00";
          append_hex_byte(out, u);
        } else {
          out += c;
        }
    }
  }
  out += '"';
}

void newline_indent(std::string& out, int depth) {
  out += '\n';
  out.append(static_cast<std::size_t>(depth) * 2, ' ');
}

void write(std::string& out, const nlohmann::json& j, bool pretty, int depth) {
  switch (j.type()) {
    case nlohmann::json::value_t::null:
    case nlohmann::json::value_t::discarded: out += "null"; return;
    case nlohmann::json::value_t::boolean: out += j.get<bool>() ? "true" : "false"; return;
    case nlohmann::json::value_t::number_integer: out += std::to_string(j.get<std::int64_t>()); return;
    case nlohmann::json::value_t::number_unsigned: out += std::to_string(j.get<std::uint64_t>()); return;
    case nlohmann::json::value_t::number_float: out += json_number(j.get<double>()); return;
    case nlohmann::json::value_t::string: append_string(out, j.get_ref<const std::string&>()); return;
    case nlohmann::json::value_t::binary: {
      // Not produced by cbor::to_json (bytes become hex text); render as an
      // array of numbers like nlohmann does, for completeness.
      nlohmann::json arr = nlohmann::json::array();
      for (const auto b : j.get_binary()) arr.push_back(b);
      write(out, arr, pretty, depth);
      return;
    }
    case nlohmann::json::value_t::array: {
      out += '[';
      bool first = true;
      for (const auto& item : j) {
        if (!first) out += ',';
        if (pretty) newline_indent(out, depth + 1);
        write(out, item, pretty, depth + 1);
        first = false;
      }
      if (pretty && !first) newline_indent(out, depth);
      out += ']';
      return;
    }
    case nlohmann::json::value_t::object: {
      out += '{';
      bool first = true;
      for (const auto& [key, item] : j.items()) {
        if (!first) out += ',';
        if (pretty) newline_indent(out, depth + 1);
        append_string(out, key);
        out += pretty ? ": " : ":";
        write(out, item, pretty, depth + 1);
        first = false;
      }
      if (pretty && !first) newline_indent(out, depth);
      out += '}';
      return;
    }
  }
}

}  // namespace

std::string json_number(double d) {
  if (!std::isfinite(d)) return "null";
  std::string out;
  if (std::signbit(d)) {
    out += '-';
    d = -d;
  }
  if (d == 0.0) return out + "0.0";

  // Shortest round-trip digits from the standard library (the same digits
  // ryu picks: shortest, then closest), in scientific form "D.DDDe±XX".
  std::array<char, 64> buf{};
  const auto r = std::to_chars(buf.data(), buf.data() + buf.size(), d, std::chars_format::scientific);
  const std::string_view sci(buf.data(), static_cast<std::size_t>(r.ptr - buf.data()));
  const std::size_t e_pos = sci.find('e');
  std::string digits;
  for (const char c : sci.substr(0, e_pos)) {
    if (c != '.') digits += c;
  }
  int exp10 = 0;
  std::from_chars(sci.data() + e_pos + (sci[e_pos + 1] == '+' ? 2 : 1), sci.data() + sci.size(), exp10);

  // ryu's layout (pretty/mod.rs format64): value = digits × 10^k, and
  // kk = len + k is the position of the decimal point.
  const int len = static_cast<int>(digits.size());
  const int kk = exp10 + 1;
  const int k = kk - len;
  if (k >= 0 && kk <= 16) {
    out += digits;
    out.append(static_cast<std::size_t>(k), '0');
    out += ".0";
  } else if (kk > 0 && kk <= 16) {
    out += digits.substr(0, static_cast<std::size_t>(kk));
    out += '.';
    out += digits.substr(static_cast<std::size_t>(kk));
  } else if (kk > -5 && kk <= 0) {
    out += "0.";
    out.append(static_cast<std::size_t>(-kk), '0');
    out += digits;
  } else {
    out += digits[0];
    if (len > 1) {
      out += '.';
      out += digits.substr(1);
    }
    out += 'e';
    out += std::to_string(kk - 1);
  }
  return out;
}

std::string json_compact(const nlohmann::json& j) {
  std::string out;
  write(out, j, false, 0);
  return out;
}

std::string json_pretty(const nlohmann::json& j) {
  std::string out;
  write(out, j, true, 0);
  return out;
}

}  // namespace tensogram::cli
