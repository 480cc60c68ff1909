// The forms schema builders emit, rewritten into the dialect (spec 06 §4.3
// "Normalisation", §4.6; docs/metatensor.md "Schemas from TypeBox"):
//
//  * draft-07 tuples, `"items": [s0, ...]` with `additionalItems`, become
//    `"prefixItems": [s0, ...]` with `"items"` taking the place of
//    `additionalItems` (`false` closes the tuple; absent or `true` leaves it
//    open, exactly the draft-07 meaning);
//  * a root that is only a `$ref` (TypeBox `Type.Module({...}).Import("X")`
//    emits `{"$defs": {...}, "$ref": "X"}`) takes the members of the schema
//    it designates, so the root is the object schema of §4.6 again; the
//    definition stays in `$defs` for the other references to it.
//
// Builder annotations (`$id`, `title`, `default`, `examples`, ...) are
// annotations of the dialect already (§4.2) and are kept. Anything else is
// left alone for the dialect checks to judge.
#include <string>
#include <utility>
#include <vector>

#include "json_pointer.hpp"
#include "metatensor/layout.hpp"

namespace metatensor {

namespace {

using json = nlohmann::json;

// Keywords whose values are one subschema / an array of them / an object of
// them (§4.2), plus the draft-07 `additionalItems` (a schema) and `items`
// (one schema, or the draft-07 array).
constexpr std::string_view single_keywords[] = {
    "items", "not", "if", "then", "else", "contains", "additionalItems", "additionalProperties"};
constexpr std::string_view array_keywords[] = {"prefixItems", "allOf", "anyOf", "oneOf", "items"};
constexpr std::string_view object_keywords[] = {"properties", "$defs"};

// Rewrites one node's draft-07 tuple, when it has one and no `prefixItems`.
void rewrite_tuple(json& node) {
  const auto items = node.find("items");
  if (items == node.end() || !items->is_array() || node.contains("prefixItems")) return;
  json prefix = std::move(*items);
  node.erase("items");
  json rest = true;  // draft-07: no `additionalItems` allows any further item
  if (const auto extra = node.find("additionalItems"); extra != node.end()) {
    rest = std::move(*extra);
    node.erase("additionalItems");
  }
  if (!prefix.empty()) node["prefixItems"] = std::move(prefix);
  if (!(rest.is_boolean() && rest.get<bool>())) node["items"] = std::move(rest);
}

// Depth first through every subschema location; the depth bound keeps a
// hostile document from exhausting the stack (the dialect check reports the
// nesting itself, §8.4).
void rewrite_tuples(json& node, std::size_t level) {
  if (!node.is_object() || level > max_schema_depth + 1) return;
  rewrite_tuple(node);
  for (const std::string_view k : single_keywords) {
    if (const auto it = node.find(std::string(k)); it != node.end() && it->is_object()) {
      rewrite_tuples(*it, level + 1);
    }
  }
  for (const std::string_view k : array_keywords) {
    if (const auto it = node.find(std::string(k)); it != node.end() && it->is_array()) {
      for (json& sub : *it) rewrite_tuples(sub, level + 1);
    }
  }
  for (const std::string_view k : object_keywords) {
    if (const auto it = node.find(std::string(k)); it != node.end() && it->is_object()) {
      for (auto& [name, sub] : it->items()) rewrite_tuples(sub, level + 1);
    }
  }
}

// Every object subschema below `node` (through `$defs` and the applicators)
// whose `$id` is `id`.
void find_ids(const json& node, const std::string& id, std::size_t level, std::vector<const json*>& out) {
  if (!node.is_object() || level > max_schema_depth + 1) return;
  if (level > 1) {
    if (const auto it = node.find("$id"); it != node.end() && it->is_string() && it->get<std::string>() == id)
      out.push_back(&node);
  }
  for (const std::string_view k : single_keywords) {
    if (const auto it = node.find(std::string(k)); it != node.end()) find_ids(*it, id, level + 1, out);
  }
  for (const std::string_view k : array_keywords) {
    if (const auto it = node.find(std::string(k)); it != node.end() && it->is_array()) {
      for (const json& sub : *it) find_ids(sub, id, level + 1, out);
    }
  }
  for (const std::string_view k : object_keywords) {
    if (const auto it = node.find(std::string(k)); it != node.end() && it->is_object()) {
      for (const auto& [name, sub] : it->items()) find_ids(sub, id, level + 1, out);
    }
  }
}

// The schema a root `$ref` designates (§4.3: a JSON Pointer fragment, or
// exactly one subschema's `$id`), or nullptr.
const json* root_target(const json& root, const std::string& ref) {
  if (!ref.empty() && ref.front() == '#') {
    const auto fragment = detail::percent_decode_fragment(std::string_view(ref).substr(1));
    if (!fragment) return nullptr;
    const auto tokens = detail::pointer_tokens(*fragment);
    if (!tokens || tokens->empty()) return nullptr;  // "#" is the root itself: a cycle
    const auto path = detail::pointer_path(root, *tokens);
    return path ? path->back() : nullptr;
  }
  std::vector<const json*> found;
  find_ids(root, ref, 1, found);
  return found.size() == 1 ? found.front() : nullptr;
}

// One step of root inlining; false when the root is not a bare `$ref` or the
// merge would be ambiguous (then the dialect checks report the root as is).
bool inline_root_ref(json& root) {
  const auto ref = root.find("$ref");
  if (ref == root.end() || !ref->is_string() || root.contains("properties") || root.contains("type")) {
    return false;
  }
  const json* target = root_target(root, ref->get<std::string>());
  if (target == nullptr || !target->is_object() || target == &root) return false;
  json merged = root;
  merged.erase("$ref");
  for (const auto& [k, v] : target->items()) {
    if (k == "$id") continue;  // the definition keeps its `$id`: references to it still resolve there
    if (merged.contains(k)) return false;
    merged[k] = v;
  }
  root = std::move(merged);
  return true;
}

}  // namespace

nlohmann::json normalize_builder_schema(nlohmann::json document) {
  rewrite_tuples(document, 1);
  // A chain of root references (a module importing an alias) is followed a
  // bounded number of times; a cycle is left for the dialect check (§4.3).
  for (std::size_t hop = 0; hop < max_schema_depth && document.is_object() && inline_root_ref(document);
       ++hop) {
  }
  return document;
}

}  // namespace metatensor
