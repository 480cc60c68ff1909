// One CBOR value type for the whole library (spec 02 §1).
//
// A `cbor::value` holds any item the reference reads or writes: null,
// booleans, integers over the full CBOR range (−2^64 … 2^64−1), floats,
// text, byte strings, arrays, maps (any key type, insertion order kept,
// duplicates representable) and tags. Equality compares floats by bit
// pattern and maps entry by entry in stored order, which is what
// `compute_common` needs (spec 02 §11).
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <variant>
#include <vector>

namespace tensogram::cbor {

class value;
struct map_entry;

using array = std::vector<value>;
/// Entries in stored order; encode sorts them canonically.
using map = std::vector<map_entry>;
using byte_string = std::vector<std::byte>;

/// An integer of CBOR major type 0 or 1: `negative ? -1 - magnitude : magnitude`.
struct integer {
  bool negative = false;
  std::uint64_t magnitude = 0;

  [[nodiscard]] static integer from_int64(std::int64_t v) noexcept {
    return v < 0 ? integer{true, static_cast<std::uint64_t>(-(v + 1))}
                 : integer{false, static_cast<std::uint64_t>(v)};
  }
  [[nodiscard]] static integer from_uint64(std::uint64_t v) noexcept { return {false, v}; }
  /// The value as int64, if it fits.
  [[nodiscard]] std::optional<std::int64_t> to_int64() const noexcept;
  /// The value as uint64, if it is non-negative.
  [[nodiscard]] std::optional<std::uint64_t> to_uint64() const noexcept;
  /// Decimal text (works across the full range).
  [[nodiscard]] std::string to_string() const;
  friend bool operator==(const integer&, const integer&) = default;
};

/// A tagged item (major type 6); the content is owned and deep-copied.
class tagged {
 public:
  tagged(std::uint64_t number, value content);
  tagged(const tagged& other);
  tagged(tagged&&) noexcept = default;
  tagged& operator=(const tagged& other);
  tagged& operator=(tagged&&) noexcept = default;
  ~tagged();

  [[nodiscard]] std::uint64_t number() const noexcept { return number_; }
  [[nodiscard]] const value& content() const noexcept { return *content_; }
  [[nodiscard]] value& content() noexcept { return *content_; }

 private:
  std::uint64_t number_;
  std::unique_ptr<value> content_;
};

class value {
 public:
  enum class kind { null, boolean, integer, floating, text, bytes, array, map, tag };

  // The non-template constructors and the factories are defined below
  // `map_entry`: the variant's constexpr constructors are instantiated
  // eagerly by clang, which then needs `map_entry` complete.
  value() noexcept;
  value(std::nullptr_t) noexcept;
  value(bool b) noexcept;
  template <typename I,
            std::enable_if_t<std::is_integral_v<I> && !std::is_same_v<I, bool> && !std::is_same_v<I, char>,
                             int> = 0>
  value(I i) noexcept
      : value(std::is_signed_v<I> ? integer::from_int64(static_cast<std::int64_t>(i))
                                  : integer::from_uint64(static_cast<std::uint64_t>(i))) {}
  value(integer i) noexcept;
  value(double d) noexcept;
  value(float f) noexcept;
  value(std::string s) noexcept;
  value(std::string_view s);
  value(const char* s);
  value(byte_string b) noexcept;
  value(array a) noexcept;
  value(map m) noexcept;
  value(tagged t) noexcept;

  /// An empty map / array, for building values fluently.
  [[nodiscard]] static value make_map();
  [[nodiscard]] static value make_array();
  /// A map from `{key, value}` pairs with text keys, in the given order.
  [[nodiscard]] static value make_map(std::initializer_list<std::pair<std::string_view, value>> items);

  [[nodiscard]] kind type() const noexcept { return static_cast<kind>(v_.index()); }
  [[nodiscard]] bool is_null() const noexcept { return type() == kind::null; }
  [[nodiscard]] bool is_bool() const noexcept { return type() == kind::boolean; }
  [[nodiscard]] bool is_integer() const noexcept { return type() == kind::integer; }
  [[nodiscard]] bool is_float() const noexcept { return type() == kind::floating; }
  [[nodiscard]] bool is_text() const noexcept { return type() == kind::text; }
  [[nodiscard]] bool is_bytes() const noexcept { return type() == kind::bytes; }
  [[nodiscard]] bool is_array() const noexcept { return type() == kind::array; }
  [[nodiscard]] bool is_map() const noexcept { return type() == kind::map; }
  [[nodiscard]] bool is_tag() const noexcept { return type() == kind::tag; }

  // Typed access: nothing / nullptr when the value is of another kind.
  [[nodiscard]] std::optional<bool> as_bool() const noexcept;
  [[nodiscard]] const integer* as_integer() const noexcept { return std::get_if<integer>(&v_); }
  [[nodiscard]] std::optional<std::int64_t> as_int64() const noexcept;
  [[nodiscard]] std::optional<std::uint64_t> as_uint64() const noexcept;
  /// A float, or an integer widened to double.
  [[nodiscard]] std::optional<double> as_double() const noexcept;
  [[nodiscard]] const std::string* as_text() const noexcept { return std::get_if<std::string>(&v_); }
  [[nodiscard]] std::string* as_text() noexcept { return std::get_if<std::string>(&v_); }
  [[nodiscard]] const byte_string* as_bytes() const noexcept { return std::get_if<byte_string>(&v_); }
  [[nodiscard]] const array* as_array() const noexcept { return std::get_if<array>(&v_); }
  [[nodiscard]] array* as_array() noexcept { return std::get_if<array>(&v_); }
  [[nodiscard]] const map* as_map() const noexcept { return std::get_if<map>(&v_); }
  [[nodiscard]] map* as_map() noexcept { return std::get_if<map>(&v_); }
  [[nodiscard]] const tagged* as_tag() const noexcept { return std::get_if<tagged>(&v_); }
  /// The raw double of a float value.
  [[nodiscard]] const double* as_float() const noexcept { return std::get_if<double>(&v_); }

  // Map helpers (text keys). `find` returns the last entry with the key,
  // matching "later occurrence replaces earlier" (spec 02 §1.5).
  [[nodiscard]] const value* find(std::string_view key) const noexcept;
  [[nodiscard]] value* find(std::string_view key) noexcept;
  [[nodiscard]] bool contains(std::string_view key) const noexcept { return find(key) != nullptr; }
  /// Sets `key` (replacing an existing entry in place, else appending).
  /// Turns a null value into a map first. Throws std::logic_error on other kinds.
  value& set(std::string_view key, value v);
  /// Removes every entry with `key`; returns whether one existed.
  bool erase(std::string_view key) noexcept;
  /// Access-or-insert for maps, like nlohmann::json.
  value& operator[](std::string_view key);
  /// Number of entries (map), elements (array) or 0.
  [[nodiscard]] std::size_t size() const noexcept;

  friend bool operator==(const value& a, const value& b) noexcept;

 private:
  std::variant<std::monostate, bool, integer, double, std::string, byte_string, array, map, tagged> v_;
};

struct map_entry {
  value key;
  value val;
  friend bool operator==(const map_entry& a, const map_entry& b) noexcept {
    return a.key == b.key && a.val == b.val;
  }
};

/// Builds a map with text keys the way repeated `value::set` calls would
/// (an existing key's value is replaced in place, a new key is appended),
/// in linear rather than quadratic total time. `set` searches the map on
/// every call; decoders build maps from untrusted input, which can hold
/// hundreds of thousands of keys. Small maps (metadata sections, descriptor
/// parameters: a handful of keys) are searched linearly, which allocates
/// nothing; the hash index is built once a map outgrows that.
class text_map_builder {
 public:
  text_map_builder() = default;
  /// Starts from the entries of `m`; a text key then refers to its last
  /// entry, as `value::find` does.
  explicit text_map_builder(map m);
  void reserve(std::size_t n);
  void set(std::string key, value v);
  [[nodiscard]] bool contains(const std::string& key) const { return position(key) != npos; }
  /// The built map; the builder is left empty.
  [[nodiscard]] value take();

 private:
  static constexpr std::size_t npos = static_cast<std::size_t>(-1);
  // Above this many entries `index_` holds every text key.
  static constexpr std::size_t k_linear_limit = 16;
  [[nodiscard]] std::size_t position(const std::string& key) const;
  void build_index();

  map entries_;
  std::unordered_map<std::string, std::size_t> index_;  // key → position in entries_, once indexed
  bool indexed_ = false;
};

inline value::value() noexcept : v_(std::monostate{}) {}
inline value::value(std::nullptr_t) noexcept : v_(std::monostate{}) {}
inline value::value(bool b) noexcept : v_(b) {}
inline value::value(integer i) noexcept : v_(i) {}
inline value::value(double d) noexcept : v_(d) {}
inline value::value(float f) noexcept : v_(static_cast<double>(f)) {}
inline value::value(std::string s) noexcept : v_(std::move(s)) {}
inline value::value(std::string_view s) : v_(std::string(s)) {}
inline value::value(const char* s) : v_(std::string(s)) {}
inline value::value(byte_string b) noexcept : v_(std::move(b)) {}
inline value::value(array a) noexcept : v_(std::move(a)) {}
inline value::value(map m) noexcept : v_(std::move(m)) {}
inline value::value(tagged t) noexcept : v_(std::move(t)) {}
inline value value::make_map() {
  return value(map{});
}
inline value value::make_array() {
  return value(array{});
}

}  // namespace tensogram::cbor
