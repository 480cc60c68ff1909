#include "tensogram/cbor/value.hpp"
#include "tensogram/core/endian.hpp"

#include <algorithm>
#include <bit>
#include <stdexcept>
#include <utility>

namespace tensogram::cbor {

std::optional<std::int64_t> integer::to_int64() const noexcept {
  if (!negative) {
    if (magnitude > static_cast<std::uint64_t>(INT64_MAX)) return std::nullopt;
    return static_cast<std::int64_t>(magnitude);
  }
  if (magnitude > static_cast<std::uint64_t>(INT64_MAX)) return std::nullopt;
  return -1 - static_cast<std::int64_t>(magnitude);
}

std::optional<std::uint64_t> integer::to_uint64() const noexcept {
  if (negative) return std::nullopt;
  return magnitude;
}

std::string integer::to_string() const {
  if (!negative) return std::to_string(magnitude);
  // -1 - magnitude; magnitude may be 2^64-1, so compute the decimal of
  // magnitude + 1 without overflowing.
  if (magnitude == UINT64_MAX) return "-18446744073709551616";
  // Built by append rather than `"-" + std::to_string(...)`: GCC 12 at -O3
  // reports a false -Wrestrict inside that operator+ (GCC bug 105651).
  std::string s = "-";
  s += std::to_string(magnitude + 1);
  return s;
}

tagged::tagged(std::uint64_t number, value content)
    : number_(number), content_(std::make_unique<value>(std::move(content))) {}
tagged::tagged(const tagged& other)
    : number_(other.number_), content_(std::make_unique<value>(*other.content_)) {}
tagged& tagged::operator=(const tagged& other) {
  if (this != &other) {
    number_ = other.number_;
    content_ = std::make_unique<value>(*other.content_);
  }
  return *this;
}
tagged::~tagged() = default;

value value::make_map(std::initializer_list<std::pair<std::string_view, value>> items) {
  map m;
  m.reserve(items.size());
  for (const auto& [k, v] : items) m.push_back(map_entry{value(std::string(k)), v});
  return value(std::move(m));
}

std::optional<bool> value::as_bool() const noexcept {
  if (const bool* b = std::get_if<bool>(&v_)) return *b;
  return std::nullopt;
}

std::optional<std::int64_t> value::as_int64() const noexcept {
  if (const integer* i = as_integer()) return i->to_int64();
  return std::nullopt;
}

std::optional<std::uint64_t> value::as_uint64() const noexcept {
  if (const integer* i = as_integer()) return i->to_uint64();
  return std::nullopt;
}

std::optional<double> value::as_double() const noexcept {
  if (const double* d = std::get_if<double>(&v_)) return *d;
  if (const integer* i = as_integer()) {
    const double m = static_cast<double>(i->magnitude);
    return i->negative ? -1.0 - m : m;
  }
  return std::nullopt;
}

const value* value::find(std::string_view key) const noexcept {
  const map* m = as_map();
  if (m == nullptr) return nullptr;
  for (auto it = m->rbegin(); it != m->rend(); ++it) {
    const std::string* k = it->key.as_text();
    if (k != nullptr && *k == key) return &it->val;
  }
  return nullptr;
}

value* value::find(std::string_view key) noexcept {
  return const_cast<value*>(static_cast<const value&>(*this).find(key));
}

value& value::set(std::string_view key, value v) {
  if (is_null()) v_ = map{};
  map* m = as_map();
  if (m == nullptr) throw std::logic_error("cbor::value::set on a non-map value");
  if (value* existing = find(key)) {
    *existing = std::move(v);
    return *existing;
  }
  m->push_back(map_entry{value(std::string(key)), std::move(v)});
  return m->back().val;
}

bool value::erase(std::string_view key) noexcept {
  map* m = as_map();
  if (m == nullptr) return false;
  const auto before = m->size();
  std::erase_if(*m, [&](const map_entry& e) {
    const std::string* k = e.key.as_text();
    return k != nullptr && *k == key;
  });
  return m->size() != before;
}

value& value::operator[](std::string_view key) {
  if (value* existing = find(key)) return *existing;
  return set(key, value());
}

text_map_builder::text_map_builder(map m) : entries_(std::move(m)) {
  if (entries_.size() > k_linear_limit) build_index();
}

void text_map_builder::build_index() {
  index_.reserve(entries_.size());
  // Forward, so that a key repeated in the starting map maps to its last entry.
  for (std::size_t i = 0; i < entries_.size(); ++i) {
    if (const std::string* k = entries_[i].key.as_text()) index_[*k] = i;
  }
  indexed_ = true;
}

std::size_t text_map_builder::position(const std::string& key) const {
  if (indexed_) {
    const auto it = index_.find(key);
    return it == index_.end() ? npos : it->second;
  }
  // From the back: the last entry of a repeated key is the one that counts.
  for (std::size_t i = entries_.size(); i-- > 0;) {
    const std::string* k = entries_[i].key.as_text();
    if (k != nullptr && *k == key) return i;
  }
  return npos;
}

void text_map_builder::reserve(std::size_t n) {
  entries_.reserve(n);
  if (indexed_) index_.reserve(n);
}

void text_map_builder::set(std::string key, value v) {
  if (indexed_) {
    const auto [it, inserted] = index_.try_emplace(key, entries_.size());
    if (!inserted) {
      entries_[it->second].val = std::move(v);
      return;
    }
  } else if (const std::size_t at = position(key); at != npos) {
    entries_[at].val = std::move(v);
    return;
  }
  entries_.push_back(map_entry{value(std::move(key)), std::move(v)});
  if (!indexed_ && entries_.size() > k_linear_limit) build_index();
}

value text_map_builder::take() {
  index_.clear();
  indexed_ = false;
  return value(std::exchange(entries_, map{}));
}

std::size_t value::size() const noexcept {
  if (const map* m = as_map()) return m->size();
  if (const array* a = as_array()) return a->size();
  return 0;
}

bool operator==(const value& a, const value& b) noexcept {
  if (a.v_.index() != b.v_.index()) return false;
  switch (a.type()) {
    case value::kind::null: return true;
    case value::kind::boolean: return std::get<bool>(a.v_) == std::get<bool>(b.v_);
    case value::kind::integer: return std::get<integer>(a.v_) == std::get<integer>(b.v_);
    case value::kind::floating:
      // Bit-pattern equality: identical NaNs are equal, 0.0 != -0.0 (spec 02 §11).
      return tensogram::bit_cast<std::uint64_t>(std::get<double>(a.v_)) ==
             tensogram::bit_cast<std::uint64_t>(std::get<double>(b.v_));
    case value::kind::text: return std::get<std::string>(a.v_) == std::get<std::string>(b.v_);
    case value::kind::bytes: return std::get<byte_string>(a.v_) == std::get<byte_string>(b.v_);
    case value::kind::array: return std::get<array>(a.v_) == std::get<array>(b.v_);
    case value::kind::map: return std::get<map>(a.v_) == std::get<map>(b.v_);
    case value::kind::tag: {
      const tagged& x = std::get<tagged>(a.v_);
      const tagged& y = std::get<tagged>(b.v_);
      return x.number() == y.number() && x.content() == y.content();
    }
  }
  return false;
}

}  // namespace tensogram::cbor
