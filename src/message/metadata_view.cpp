#include "tensogram/message/metadata_view.hpp"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "tensogram/cbor/json.hpp"

namespace tensogram {

namespace {
#if defined(__cpp_lib_to_chars)
// The shortest digits that read back as d, in fixed notation.
std::string fixed_shortest(double d) {
  char buf[400];
  const auto r = std::to_chars(buf, buf + sizeof buf, d, std::chars_format::fixed);
  return std::string(buf, r.ptr);
}
#else
// The same without floating-point std::to_chars, which libc++ 14
// (Emscripten 3.1.6, the WebAssembly build) lacks: the fewest significant
// digits printf's correctly rounded %.*e needs to read back as d, written
// out in fixed notation.
std::string fixed_shortest(double d) {
  char buf[40];
  for (int p = 0; p < 17; ++p) {
    std::snprintf(buf, sizeof buf, "%.*e", p, d);
    if (std::strtod(buf, nullptr) == d) break;
  }
  const std::string s(buf);  // [-]D[.DDD]e±XX
  const std::size_t e = s.find('e');
  std::string digits;
  for (std::size_t i = 0; i < e; ++i) {
    if (s[i] >= '0' && s[i] <= '9') digits += s[i];
  }
  const long point = std::strtol(s.c_str() + e + 1, nullptr, 10) + 1;  // digits before the point
  const long n = static_cast<long>(digits.size());
  std::string out = s[0] == '-' ? "-" : "";
  if (point <= 0) {
    out += "0." + std::string(static_cast<std::size_t>(-point), '0') + digits;
  } else if (point > n) {
    // An integer: as many characters with zeros or with the exact digits,
    // and to_chars takes the exact ones (the smallest difference).
    char whole[400];
    std::snprintf(whole, sizeof whole, "%.0f", d);
    return whole;
  } else if (point == n) {
    out += digits;
  } else {
    out += digits.substr(0, static_cast<std::size_t>(point)) + "." +
           digits.substr(static_cast<std::size_t>(point));
  }
  return out;
}
#endif
}  // namespace

std::string display_text(const cbor::value& v) {
  switch (v.type()) {
    case cbor::value::kind::text: return *v.as_text();
    case cbor::value::kind::integer: return v.as_integer()->to_string();
    case cbor::value::kind::floating: {
      const double d = *v.as_float();
      if (std::isnan(d)) return "NaN";
      if (std::isinf(d)) return d > 0 ? "inf" : "-inf";
      return fixed_shortest(d);
    }
    case cbor::value::kind::boolean: return *v.as_bool() ? "true" : "false";
    case cbor::value::kind::null: return "null";
    case cbor::value::kind::tag: return display_text(v.as_tag()->content());
    default: return cbor::to_json_text(v);
  }
}

// ---------------------------------------------------------------------------
// meta_value

namespace {
const cbor::value* untag(const cbor::value* v) noexcept {
  while (v != nullptr && v->is_tag()) v = &v->as_tag()->content();
  return v;
}
}  // namespace

value_type meta_value::type() const noexcept {
  const cbor::value* v = untag(v_);
  if (v == nullptr) return value_type::null;
  switch (v->type()) {
    case cbor::value::kind::null: return value_type::null;
    case cbor::value::kind::boolean: return value_type::boolean;
    case cbor::value::kind::integer: return value_type::integer;
    case cbor::value::kind::floating: return value_type::floating;
    case cbor::value::kind::text: return value_type::string;
    case cbor::value::kind::bytes: return value_type::bytes;
    case cbor::value::kind::array: return value_type::array;
    case cbor::value::kind::map: return value_type::map;
    case cbor::value::kind::tag: break;
  }
  return value_type::null;
}

std::optional<std::int64_t> meta_value::as_int() const noexcept {
  const cbor::value* v = untag(v_);
  return v != nullptr ? v->as_int64() : std::nullopt;
}
std::optional<std::uint64_t> meta_value::as_uint() const noexcept {
  const cbor::value* v = untag(v_);
  return v != nullptr ? v->as_uint64() : std::nullopt;
}
std::optional<double> meta_value::as_double() const noexcept {
  const cbor::value* v = untag(v_);
  return v != nullptr ? v->as_double() : std::nullopt;
}
std::optional<bool> meta_value::as_bool() const noexcept {
  const cbor::value* v = untag(v_);
  return v != nullptr ? v->as_bool() : std::nullopt;
}
std::optional<std::string_view> meta_value::as_string() const noexcept {
  const cbor::value* v = untag(v_);
  if (v == nullptr || !v->is_text()) return std::nullopt;
  return std::string_view(*v->as_text());
}
std::optional<std::span<const std::byte>> meta_value::bytes_view() const noexcept {
  const cbor::value* v = untag(v_);
  if (v == nullptr || !v->is_bytes()) return std::nullopt;
  return std::span<const std::byte>(*v->as_bytes());
}
std::optional<std::vector<std::uint8_t>> meta_value::as_bytes() const {
  const std::optional<std::span<const std::byte>> b = bytes_view();
  if (!b) return std::nullopt;
  const auto* p = reinterpret_cast<const std::uint8_t*>(b->data());
  return std::vector<std::uint8_t>(p, p + b->size());
}
std::size_t meta_value::size() const noexcept {
  const cbor::value* v = untag(v_);
  return v != nullptr ? v->size() : 0;
}
std::optional<meta_value> meta_value::at(std::size_t i) const noexcept {
  const cbor::value* v = untag(v_);
  const cbor::array* a = v != nullptr ? v->as_array() : nullptr;
  if (a == nullptr || i >= a->size()) return std::nullopt;
  return meta_value(&(*a)[i]);
}
std::optional<meta_value> meta_value::get(std::string_view key) const noexcept {
  const cbor::value* v = untag(v_);
  const cbor::value* found = v != nullptr ? v->find(key) : nullptr;
  if (found == nullptr) return std::nullopt;
  return meta_value(found);
}
std::optional<std::string_view> meta_value::key_at(std::size_t i) const noexcept {
  const cbor::value* v = untag(v_);
  const cbor::map* m = v != nullptr ? v->as_map() : nullptr;
  if (m == nullptr || i >= m->size()) return std::nullopt;
  const std::string* k = (*m)[i].key.as_text();
  if (k == nullptr) return std::nullopt;
  return std::string_view(*k);
}
std::optional<meta_value> meta_value::value_at(std::size_t i) const noexcept {
  const cbor::value* v = untag(v_);
  const cbor::map* m = v != nullptr ? v->as_map() : nullptr;
  if (m == nullptr || i >= m->size()) return std::nullopt;
  return meta_value(&(*m)[i].val);
}
meta_value meta_value::iterator::operator*() const noexcept {
  return meta_value(v_)[i_];
}

// ---------------------------------------------------------------------------
// metadata

metadata::metadata() : g_(std::make_shared<const global_metadata>()) {}
metadata::metadata(global_metadata g) : g_(std::make_shared<const global_metadata>(std::move(g))) {}

std::optional<std::string> legacy_text(const cbor::value* v) {
  if (v == nullptr) return std::nullopt;
  switch (v->type()) {
    case cbor::value::kind::text: {
      const std::string& s = *v->as_text();
      if (s.find('\0') != std::string::npos) return std::nullopt;
      return s;
    }
    case cbor::value::kind::integer:
    case cbor::value::kind::floating:
    case cbor::value::kind::boolean: return display_text(*v);
    default: return std::nullopt;
  }
}

namespace {
std::string legacy_string(const cbor::value* v) {
  return legacy_text(v).value_or(std::string());
}
std::int64_t legacy_int(const cbor::value* v, std::int64_t dflt) {
  if (v == nullptr) return dflt;
  return v->as_int64().value_or(dflt);
}
double legacy_float(const cbor::value* v, double dflt) {
  if (v == nullptr) return dflt;
  return v->as_double().value_or(dflt);
}
}  // namespace

std::string metadata::get_string(const std::string& key) const {
  if (key == "version") return "3";
  return legacy_string(g_->get(key));
}
std::int64_t metadata::get_int(const std::string& key, std::int64_t dflt) const {
  if (key == "version") return 3;
  return legacy_int(g_->get(key), dflt);
}
double metadata::get_float(const std::string& key, double dflt) const {
  return legacy_float(g_->get(key), dflt);
}
std::string metadata::get_string_at(std::size_t obj, const std::string& key) const {
  return legacy_string(g_->get_at(obj, key));
}
std::int64_t metadata::get_int_at(std::size_t obj, const std::string& key, std::int64_t dflt) const {
  return legacy_int(g_->get_at(obj, key), dflt);
}
double metadata::get_float_at(std::size_t obj, const std::string& key, double dflt) const {
  return legacy_float(g_->get_at(obj, key), dflt);
}

std::string metadata::object_to_json(std::size_t obj) const {
  if (obj >= g_->base.size()) return {};
  return cbor::to_json_text(g_->base[obj]);
}

std::string metadata::to_json() const {
  nlohmann::json j = nlohmann::json::object();
  if (!g_->base.empty()) {
    nlohmann::json base = nlohmann::json::array();
    for (const cbor::value& e : g_->base) base.push_back(cbor::to_json(e));
    j["base"] = std::move(base);
  }
  if (g_->reserved.size() != 0) j["_reserved_"] = cbor::to_json(g_->reserved);
  if (g_->extra.size() != 0) j["_extra_"] = cbor::to_json(g_->extra);
  return j.dump();
}

std::optional<meta_value> metadata::get(std::string_view path) const {
  const cbor::value* v = g_->get(path);
  if (v == nullptr) return std::nullopt;
  return meta_value(v);
}
std::optional<meta_value> metadata::get_at(std::size_t obj, std::string_view path) const {
  const cbor::value* v = g_->get_at(obj, path);
  if (v == nullptr) return std::nullopt;
  return meta_value(v);
}
std::optional<std::int64_t> metadata::try_get_int(std::string_view path) const {
  const cbor::value* v = g_->get(path);
  return v != nullptr ? v->as_int64() : std::nullopt;
}
std::optional<std::uint64_t> metadata::try_get_uint(std::string_view path) const {
  const cbor::value* v = g_->get(path);
  return v != nullptr ? v->as_uint64() : std::nullopt;
}
std::optional<double> metadata::try_get_double(std::string_view path) const {
  const cbor::value* v = g_->get(path);
  return v != nullptr ? v->as_double() : std::nullopt;
}
std::optional<std::string_view> metadata::try_get_string(std::string_view path) const {
  const cbor::value* v = g_->get(path);
  if (v == nullptr || !v->is_text()) return std::nullopt;
  return std::string_view(*v->as_text());
}
std::optional<bool> metadata::try_get_bool(std::string_view path) const {
  const cbor::value* v = g_->get(path);
  return v != nullptr ? v->as_bool() : std::nullopt;
}
meta_value metadata::object(std::size_t obj) const noexcept {
  if (obj >= g_->base.size()) return meta_value();
  return meta_value(&g_->base[obj]);
}

}  // namespace tensogram
