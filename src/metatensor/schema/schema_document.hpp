// A schema document of the metatensor dialect, read once (spec 06 §4.1–§4.3):
// the table of every location that is applied as a schema, the `$id`s, and
// every `$ref` resolved. Not a public header.
//
// The document judges nothing. The layout compiler (schema_compile.cpp with
// dialect_check.cpp and layout_compiler.cpp) and the JSON Schema evaluator
// (json_schema.cpp) apply their own rules to this
// one table, in their own order and words; deep validation follows its
// references. A keyword whose value has the wrong shape (`properties` that
// is not an object, ...) simply contributes no subschemas: each reader
// reports the shape itself.
//
// Nodes:
//  * the root, and every subschema below it through the applicator keywords
//    and `$defs` (`schema_keyword`), are the "tree", generation 0, at their
//    nesting level (the root is level 1);
//  * a location that a JSON Pointer fragment `$ref` designates outside the
//    tree (e.g. `#/x-note`) is a node too, with its subschemas: generation
//    k + 1 when the reference sits in generation k, level half its pointer
//    length plus one (one keyword and one name per level).
// Nodes are not followed below level `max_schema_depth` + 1 (§8.4): a node
// at that level is in the table, its subschemas are not.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace metatensor::detail {

/// Keywords whose values hold subschemas (§4.2 applicators, and `$defs`).
enum class schema_keyword : std::uint8_t {
  defs,          // "$defs": an object of schemas
  properties,    // an object of schemas
  items,         // one schema (an array of schemas is outside the dialect)
  prefix_items,  // an array of schemas
  all_of,
  any_of,
  one_of,
  not_,
  if_,
  then_,
  else_,
  contains,
};
inline constexpr std::size_t schema_keyword_count = 12;

/// The keyword's spelling, e.g. "prefixItems".
[[nodiscard]] std::string_view keyword_name(schema_keyword k) noexcept;

/// §4.3: keywords outside the dialect, refused wherever they appear.
inline constexpr std::array<std::string_view, 17> rejected_keywords = {
    "$anchor",           "$dynamicRef",   "$dynamicAnchor",    "$recursiveRef",    "$recursiveAnchor",
    "$vocabulary",       "definitions",   "additionalItems",   "unevaluatedItems", "unevaluatedProperties",
    "patternProperties", "propertyNames", "dependentRequired", "dependentSchemas", "dependencies",
    "minProperties",     "maxProperties"};

/// How a `$ref` resolved (§4.3: a same-document JSON Pointer fragment, or
/// exactly the `$id` of a subschema; nothing is fetched).
enum class reference_status : std::uint8_t {
  resolved,
  bad_escape,     // a fragment with a bad percent-escape
  anchor,         // a fragment that is not a JSON Pointer ("#foo")
  not_a_pointer,  // a fragment with a bad '~' escape
  dangling,       // a fragment designating nothing in the document
  unknown_id,     // no subschema carries this `$id`
  ambiguous_id,   // several subschemas carry it
};

class schema_document {
 public:
  static constexpr std::size_t npos = static_cast<std::size_t>(-1);

  struct node {
    const nlohmann::json* value = nullptr;
    std::string pointer;           // JSON Pointer of the location ("" for the root)
    std::size_t level = 1;         // subschema nesting (§8.4)
    std::size_t generation = 0;    // 0: in the tree (see the file comment)
    bool embedded = false;         // below a non-root subschema that carries `$id`
    std::size_t reference = npos;  // index into references(), when `$ref` is a string
    // children_[first[k] .. first[k + 1]) are the subschemas of keyword k,
    // in the order of the keyword's value.
    std::array<std::size_t, schema_keyword_count + 1> first{};
  };

  struct reference {
    std::size_t source = npos;  // the node carrying `$ref`
    const std::string* text = nullptr;
    reference_status status = reference_status::resolved;
    /// The designated node when resolved. For an `$id` only the nodes of
    /// the source's generation or an earlier one count (the later ones are
    /// reached through this very reference chain).
    std::size_t target = npos;
    [[nodiscard]] bool is_fragment() const noexcept { return !text->empty() && text->front() == '#'; }
  };

  /// Reads `document`, which must outlive this object and stay unchanged.
  explicit schema_document(const nlohmann::json& document);
  /// Reads and keeps `document`.
  explicit schema_document(std::shared_ptr<const nlohmann::json> document);
  schema_document(const schema_document&) = delete;
  schema_document& operator=(const schema_document&) = delete;

  [[nodiscard]] const nlohmann::json& root() const noexcept { return *root_; }
  [[nodiscard]] std::size_t size() const noexcept { return nodes_.size(); }
  [[nodiscard]] const node& at(std::size_t n) const noexcept { return nodes_[n]; }
  /// The subschemas of `n` under keyword `k`.
  [[nodiscard]] std::span<const std::size_t> children(std::size_t n, schema_keyword k) const noexcept;
  /// The node whose value is `*value` (compared by address), or npos.
  [[nodiscard]] std::size_t find(const nlohmann::json* value) const noexcept;
  [[nodiscard]] const std::vector<reference>& references() const noexcept { return references_; }
  /// The `$ref` of `n`, or nullptr when it has no string `$ref`.
  [[nodiscard]] const reference* reference_of(std::size_t n) const noexcept {
    return nodes_[n].reference == npos ? nullptr : &references_[nodes_[n].reference];
  }
  /// The nodes up to `max_generation` whose `$id` is exactly `id`, in table order.
  [[nodiscard]] std::vector<std::size_t> nodes_with_id(const std::string& id,
                                                       std::size_t max_generation) const;

 private:
  void read();
  std::size_t add(const nlohmann::json& value, std::string pointer, std::size_t level, std::size_t generation,
                  bool embedded);
  void add_children(std::size_t n);
  void resolve(std::size_t reference_index);

  std::shared_ptr<const nlohmann::json> owned_;
  const nlohmann::json* root_;
  std::vector<node> nodes_;
  std::vector<std::size_t> children_;
  std::vector<reference> references_;
  std::unordered_map<const nlohmann::json*, std::size_t> by_address_;
  std::unordered_map<std::string, std::vector<std::size_t>> ids_;
};

}  // namespace metatensor::detail
