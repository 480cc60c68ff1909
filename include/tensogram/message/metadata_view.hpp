// `metadata` and `meta_value`: the reference C++ wrapper's read-only views
// of decoded metadata (spec 04 Part D), over `global_metadata`.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tensogram/cbor/value.hpp"
#include "tensogram/message/metadata.hpp"

namespace tensogram {

enum class value_type { null, boolean, integer, floating, string, bytes, array, map };

/// A borrowed cursor into a metadata value; valid while the `metadata` (or
/// `message`) it came from lives. A default-constructed cursor is invalid.
class meta_value {
 public:
  meta_value() = default;
  explicit meta_value(const cbor::value* v) noexcept : v_(v) {}

  [[nodiscard]] bool valid() const noexcept { return v_ != nullptr; }
  /// Tags report the type of their content.
  [[nodiscard]] value_type type() const noexcept;
  [[nodiscard]] bool is_null() const noexcept { return type() == value_type::null; }
  [[nodiscard]] bool is_bool() const noexcept { return type() == value_type::boolean; }
  [[nodiscard]] bool is_int() const noexcept { return type() == value_type::integer; }
  [[nodiscard]] bool is_float() const noexcept { return type() == value_type::floating; }
  [[nodiscard]] bool is_string() const noexcept { return type() == value_type::string; }
  [[nodiscard]] bool is_bytes() const noexcept { return type() == value_type::bytes; }
  [[nodiscard]] bool is_array() const noexcept { return type() == value_type::array; }
  [[nodiscard]] bool is_map() const noexcept { return type() == value_type::map; }

  [[nodiscard]] std::optional<std::int64_t> as_int() const noexcept;
  [[nodiscard]] std::optional<std::uint64_t> as_uint() const noexcept;
  /// Float, or integer widened.
  [[nodiscard]] std::optional<double> as_double() const noexcept;
  [[nodiscard]] std::optional<bool> as_bool() const noexcept;
  [[nodiscard]] std::optional<std::string_view> as_string() const noexcept;
  /// An owned copy, as the reference wrapper returns (spec 07 D2.2).
  [[nodiscard]] std::optional<std::vector<std::uint8_t>> as_bytes() const;
  /// The same bytes borrowed (no copy); valid while the metadata lives.
  [[nodiscard]] std::optional<std::span<const std::byte>> bytes_view() const noexcept;

  /// Elements of an array or entries of a map; 0 otherwise.
  [[nodiscard]] std::size_t size() const noexcept;
  // Lookups return std::optional, as the reference wrapper's do (spec 07
  // D2.2): empty when out of range, absent or of the wrong kind.
  /// Array element.
  [[nodiscard]] std::optional<meta_value> at(std::size_t i) const noexcept;
  /// Array element, or an invalid cursor when out of range or not an array.
  [[nodiscard]] meta_value operator[](std::size_t i) const noexcept { return at(i).value_or(meta_value()); }
  /// Map lookup of one key (no dot splitting).
  [[nodiscard]] bool contains(std::string_view key) const noexcept { return get(key).has_value(); }
  [[nodiscard]] std::optional<meta_value> get(std::string_view key) const noexcept;
  /// i-th map entry's key (empty for a non-text key, as tgm_value_map_key_at
  /// gives NULL) and value, in the map's stored order.
  [[nodiscard]] std::optional<std::string_view> key_at(std::size_t i) const noexcept;
  [[nodiscard]] std::optional<meta_value> value_at(std::size_t i) const noexcept;

  /// The underlying CBOR value (nullptr when invalid).
  [[nodiscard]] const cbor::value* raw() const noexcept { return v_; }

  /// Iteration over array elements.
  class iterator {
   public:
    using value_type = meta_value;
    using difference_type = std::ptrdiff_t;
    iterator() = default;
    iterator(const cbor::value* v, std::size_t i) noexcept : v_(v), i_(i) {}
    meta_value operator*() const noexcept;
    iterator& operator++() noexcept {
      ++i_;
      return *this;
    }
    iterator operator++(int) noexcept {
      iterator t = *this;
      ++i_;
      return t;
    }
    friend bool operator==(const iterator& a, const iterator& b) noexcept {
      return a.v_ == b.v_ && a.i_ == b.i_;
    }

   private:
    const cbor::value* v_ = nullptr;
    std::size_t i_ = 0;
  };
  [[nodiscard]] iterator begin() const noexcept { return iterator(v_, 0); }
  [[nodiscard]] iterator end() const noexcept {
    return iterator(v_, v_ != nullptr && v_->is_array() ? size() : 0);
  }

 private:
  const cbor::value* v_ = nullptr;
};

/// Decoded message metadata (shares ownership of the model, cheap to copy).
class metadata {
 public:
  metadata();
  explicit metadata(global_metadata g);
  explicit metadata(std::shared_ptr<const global_metadata> g) noexcept : g_(std::move(g)) {}

  /// Wire version (always 3).
  [[nodiscard]] std::uint64_t version() const noexcept { return 3; }
  /// Number of `base` entries.
  [[nodiscard]] std::size_t num_objects() const noexcept { return g_->base.size(); }

  // Legacy getters (spec 02 §12): pseudo-key `version` → 3; string getter
  // stringifies integers, floats and booleans; "" / default when absent.
  [[nodiscard]] std::string get_string(const std::string& key) const;
  [[nodiscard]] std::int64_t get_int(const std::string& key, std::int64_t dflt = 0) const;
  [[nodiscard]] double get_float(const std::string& key, double dflt = 0.0) const;
  [[nodiscard]] std::string get_string_at(std::size_t obj, const std::string& key) const;
  [[nodiscard]] std::int64_t get_int_at(std::size_t obj, const std::string& key, std::int64_t dflt = 0) const;
  [[nodiscard]] double get_float_at(std::size_t obj, const std::string& key, double dflt = 0.0) const;

  /// JSON of `base[obj]` including `_reserved_`; "" when out of range.
  [[nodiscard]] std::string object_to_json(std::size_t obj) const;
  /// `{"base":[...],"_reserved_":{...},"_extra_":{...}}`, empty sections omitted.
  [[nodiscard]] std::string to_json() const;

  // Precise API.
  [[nodiscard]] bool contains(std::string_view path) const { return g_->get(path) != nullptr; }
  [[nodiscard]] bool contains_at(std::size_t obj, std::string_view path) const {
    return g_->get_at(obj, path) != nullptr;
  }
  [[nodiscard]] std::optional<meta_value> get(std::string_view path) const;
  [[nodiscard]] std::optional<meta_value> get_at(std::size_t obj, std::string_view path) const;
  [[nodiscard]] std::optional<std::int64_t> try_get_int(std::string_view path) const;
  [[nodiscard]] std::optional<std::uint64_t> try_get_uint(std::string_view path) const;
  [[nodiscard]] std::optional<double> try_get_double(std::string_view path) const;
  [[nodiscard]] std::optional<std::string_view> try_get_string(std::string_view path) const;
  [[nodiscard]] std::optional<bool> try_get_bool(std::string_view path) const;

  /// Map cursors for enumeration; an absent section is an empty map.
  [[nodiscard]] meta_value object(std::size_t obj) const noexcept;
  [[nodiscard]] meta_value extra() const noexcept { return meta_value(&g_->extra); }
  [[nodiscard]] meta_value reserved() const noexcept { return meta_value(&g_->reserved); }

  /// The typed model.
  [[nodiscard]] const global_metadata& global() const noexcept { return *g_; }
  [[nodiscard]] const std::shared_ptr<const global_metadata>& shared() const noexcept { return g_; }

 private:
  std::shared_ptr<const global_metadata> g_;
};

}  // namespace tensogram
