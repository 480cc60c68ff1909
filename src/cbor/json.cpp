#include "tensogram/cbor/json.hpp"

#include <cmath>
#include <string>

#include "tensogram/core/error.hpp"
#include "tensogram/core/hex.hpp"

namespace tensogram::cbor {

namespace {

// A non-text map key is named by its compact JSON text, which the enclosing
// dump escapes again, so every level of keys nested inside keys can double a
// name's length (quotes and backslashes double when escaped): exponential in
// the nesting depth, i.e. a few hundred bytes of hostile CBOR could ask for
// more memory than exists. Real metadata never nests keys this deep.
constexpr int max_key_nesting = 8;

nlohmann::json convert(const value& v, const json_options& options, int key_nesting) {
  switch (v.type()) {
    case value::kind::null: return nullptr;
    case value::kind::boolean: return *v.as_bool();
    case value::kind::integer: {
      const integer& i = *v.as_integer();
      if (!i.negative) return i.magnitude;
      if (auto s = i.to_int64()) return *s;
      return i.to_string();
    }
    case value::kind::floating: {
      const double d = *v.as_float();
      if (!std::isfinite(d)) return nullptr;
      return d;
    }
    case value::kind::text: return *v.as_text();
    case value::kind::bytes: return hex_bytes(*v.as_bytes());
    case value::kind::array: {
      nlohmann::json out = nlohmann::json::array();
      for (const value& item : *v.as_array()) out.push_back(convert(item, options, key_nesting));
      return out;
    }
    case value::kind::map: {
      nlohmann::json out = nlohmann::json::object();
      for (const map_entry& e : *v.as_map()) {
        std::string name;
        if (const std::string* k = e.key.as_text()) {
          name = *k;
        } else {
          if (key_nesting >= max_key_nesting) {
            throw metadata_error("CBOR map keys nested more than " + std::to_string(max_key_nesting) +
                                 " deep inside other keys cannot be named in JSON");
          }
          name = convert(e.key, options, key_nesting + 1).dump();
        }
        out[name] = convert(e.val, options, key_nesting);
      }
      return out;
    }
    case value::kind::tag:
      if (!options.unwrap_tags) return nullptr;
      return convert(v.as_tag()->content(), options, key_nesting);
  }
  return nullptr;
}

}  // namespace

nlohmann::json to_json(const value& v, const json_options& options) {
  return convert(v, options, 0);
}

value from_json(const nlohmann::json& j) {
  switch (j.type()) {
    case nlohmann::json::value_t::null: return value(nullptr);
    case nlohmann::json::value_t::boolean: return value(j.get<bool>());
    case nlohmann::json::value_t::number_integer: return value(j.get<std::int64_t>());
    case nlohmann::json::value_t::number_unsigned: {
      const auto u = j.get<std::uint64_t>();
      if (u <= static_cast<std::uint64_t>(INT64_MAX)) return value(u);
      return value(static_cast<double>(u));
    }
    case nlohmann::json::value_t::number_float: return value(j.get<double>());
    case nlohmann::json::value_t::string: return value(j.get<std::string>());
    case nlohmann::json::value_t::array: {
      array a;
      a.reserve(j.size());
      for (const auto& item : j) a.push_back(from_json(item));
      return value(std::move(a));
    }
    case nlohmann::json::value_t::object: {
      map m;
      m.reserve(j.size());
      for (const auto& [k, item] : j.items()) m.push_back(map_entry{value(k), from_json(item)});
      return value(std::move(m));
    }
    case nlohmann::json::value_t::binary: {
      const auto& bin = j.get_binary();
      byte_string b(bin.size());
      for (std::size_t i = 0; i < bin.size(); ++i) b[i] = static_cast<std::byte>(bin[i]);
      return value(std::move(b));
    }
    case nlohmann::json::value_t::discarded: break;
  }
  return value(nullptr);
}

value from_json_text(std::string_view text) {
  try {
    return from_json(nlohmann::json::parse(text));
  } catch (const nlohmann::json::exception& e) {
    throw metadata_error(std::string("invalid JSON: ") + e.what());
  }
}

std::string to_json_text(const value& v, int indent, const json_options& options) {
  return to_json(v, options).dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace tensogram::cbor
