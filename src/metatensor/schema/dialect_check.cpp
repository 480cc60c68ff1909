#include "dialect_check.hpp"

#include <algorithm>
#include <array>
#include <string>

#include "metatensor/layout.hpp"
#include "schema_error.hpp"
#include "typedef_keywords.hpp"

namespace metatensor::detail {

namespace {

using json = nlohmann::json;
constexpr std::size_t npos = schema_document::npos;

template <class Range>
bool in(const Range& r, std::string_view k) {
  return std::find(r.begin(), r.end(), k) != r.end();
}

// §4.2 structure keywords other than `$ref` and the `TypeDef:` keywords.
constexpr std::array<std::string_view, 8> structure_keywords = {
    "type", "properties", "required", "items", "prefixItems", "minItems", "maxItems", "additionalProperties"};

// §4.2 combinators: their subschemas may hold value keywords, annotations
// and `type` only. `contains` is a value keyword whose subschema constrains
// values only, so it is held to the same rule.
constexpr std::array<schema_keyword, 3> combinator_arrays = {schema_keyword::all_of, schema_keyword::any_of,
                                                             schema_keyword::one_of};
constexpr std::array<schema_keyword, 5> combinator_schemas = {schema_keyword::not_, schema_keyword::if_,
                                                              schema_keyword::then_, schema_keyword::else_,
                                                              schema_keyword::contains};

// The applied subschemas (every keyword but `$defs`), in the order the walk
// and the cycle search visit them.
constexpr std::array<schema_keyword, 11> applied_keywords = {
    schema_keyword::properties, schema_keyword::items,  schema_keyword::prefix_items, schema_keyword::all_of,
    schema_keyword::any_of,     schema_keyword::one_of, schema_keyword::not_,         schema_keyword::if_,
    schema_keyword::then_,      schema_keyword::else_,  schema_keyword::contains};

// ---------------------------------------------------------------------------
// Pass 1: the dialect walk, depth first through the tree.

class dialect_walker {
 public:
  explicit dialect_walker(const schema_document& document) : doc_(document) {}

  /// Nodes carrying a `$ref`, in walk order.
  std::vector<std::size_t> refs;

  void walk(std::size_t n, bool value_only) {
    const schema_document::node& at = doc_.at(n);
    const std::string& ptr = at.pointer;
    const json& node = *at.value;
    if (at.level > max_schema_depth) {
      fail_at_node(errc::mt_limit, ptr,
                   "schema nested deeper than " + std::to_string(max_schema_depth) + " levels (§8.4)");
    }
    if (node.is_boolean()) return;  // boolean schemas are allowed as subschemas
    if (!node.is_object())
      fail_at_node(errc::mt_schema_dialect, ptr, "a schema must be an object or a boolean (§4.1)");

    // Unknown binary keywords fail closed (§4.3), before anything else.
    for (const auto& [k, v] : node.items()) {
      if (is_typedef(k) && !known_typedef(k))
        fail_at_node(errc::mt_unknown_typedef, ptr, "unknown keyword " + detail::quoted(k) + " (§4.3)");
    }
    for (const auto& [k, v] : node.items()) check_keyword(node, ptr, k, v, value_only);

    if (auto it = node.find("$ref"); it != node.end()) {
      if (!it->is_string()) fail_at_node(errc::mt_schema_dialect, ptr, "$ref must be a string (§4.3)");
      refs.push_back(n);
    }

    // Applied subschemas.
    if (auto it = node.find("properties"); it != node.end()) {
      if (!it->is_object()) fail_at_node(errc::mt_schema_dialect, ptr, "properties must be an object");
      walk_children(n, schema_keyword::properties, false);
    }
    if (node.contains("items")) walk_children(n, schema_keyword::items, false);
    if (auto it = node.find("prefixItems"); it != node.end()) {
      if (!it->is_array()) fail_at_node(errc::mt_schema_dialect, ptr, "prefixItems must be an array");
      walk_children(n, schema_keyword::prefix_items, false);
    }
    for (const schema_keyword kw : combinator_arrays) {
      auto it = node.find(std::string(keyword_name(kw)));
      if (it == node.end()) continue;
      if (!it->is_array() || it->empty())
        fail_at_node(errc::mt_schema_dialect, ptr,
                     detail::quoted(keyword_name(kw)) + " must be a non-empty array");
      walk_children(n, kw, true);
    }
    for (const schema_keyword kw : combinator_schemas) walk_children(n, kw, true);
    // `$defs` are definitions, not applied: the usual context.
    if (auto it = node.find("$defs"); it != node.end()) {
      if (!it->is_object()) fail_at_node(errc::mt_schema_dialect, ptr, "$defs must be an object");
      walk_children(n, schema_keyword::defs, false);
    }
  }

 private:
  void walk_children(std::size_t n, schema_keyword k, bool value_only) {
    for (const std::size_t c : doc_.children(n, k)) walk(c, value_only);
  }

  static void check_keyword(const json& node, const std::string& ptr, const std::string& k, const json& v,
                            bool value_only) {
    if (in(rejected_keywords, k))
      fail_at_node(errc::mt_schema_dialect, ptr, "keyword " + detail::quoted(k) + " is not allowed (§4.3)");
    if (k == "$schema" && !(v.is_string() && v.get<std::string>() == schema_dialect_uri)) {
      fail_at_node(errc::mt_schema_dialect, ptr,
                   "$schema must be " + detail::quoted(schema_dialect_uri) + " (§4.1)");
    }
    if (k == "additionalProperties" && !(v.is_boolean() && !v.get<bool>())) {
      fail_at_node(errc::mt_schema_dialect, ptr, "additionalProperties must be false (§4.3)");
    }
    if (k == "items" && v.is_array()) {
      fail_at_node(errc::mt_schema_dialect, ptr,
                   "items must be a single schema, not an array; use prefixItems (§4.3)");
    }
    const bool structure = in(structure_keywords, k) || is_typedef(k) || k == "$ref";
    if (value_only && structure && k != "type") {
      fail_at_node(errc::mt_schema_dialect, ptr,
                   "structure keyword " + detail::quoted(k) +
                       " inside a combinator subschema (§4.2: only value keywords, "
                       "annotations and type)");
    }
    if (k != "$ref" && node.contains("$ref") && structure && k != kw_align) {
      fail_at_node(errc::mt_schema_dialect, ptr,
                   "structure keyword " + detail::quoted(k) + " next to $ref (§4.3)");
    }
  }

  const schema_document& doc_;
};

// ---------------------------------------------------------------------------
// Pass 2a: every `$ref` of the tree gets a target in the tree (§4.3; nothing
// fetched): the location its JSON Pointer fragment designates, else the one
// subschema whose `$id` is the reference's text.

void resolve_refs(const schema_document& doc, const std::vector<std::size_t>& refs,
                  std::vector<std::size_t>& targets) {
  for (const std::size_t n : refs) {
    const schema_document::reference& r = *doc.reference_of(n);
    std::size_t target = npos;
    if (r.is_fragment() && r.status == reference_status::resolved && doc.at(r.target).generation == 0) {
      target = r.target;
    }
    if (target == npos) {
      const auto ids = doc.nodes_with_id(*r.text, 0);
      if (ids.size() > 1) {
        fail_at_node(errc::mt_schema_dialect, doc.at(n).pointer,
                     "$ref " + detail::quoted(*r.text) + " matches the $id of several subschemas");
      }
      if (ids.size() == 1) target = ids.front();
    }
    if (target == npos) {
      fail_at_node(
          errc::mt_schema_dialect, doc.at(n).pointer,
          "$ref " + detail::quoted(*r.text) +
              " is neither a JSON Pointer fragment to a subschema of this document nor the $id of one "
              "(§4.3)");
    }
    targets[n] = target;
  }
}

// Pass 2b: reference cycles (§4.3) and effective nesting depth (§8.4) over
// the graph of applied subschemas plus `$ref` edges. Heights are memoised,
// so shared definitions are visited once; the recursion is bounded by the
// depth limit. Nodes are visited in the byte order of their JSON Pointers.
class cycle_checker {
 public:
  cycle_checker(const schema_document& doc, const std::vector<std::size_t>& targets)
      : doc_(doc), targets_(targets), height_(doc.size(), unvisited) {}

  void run() {
    std::vector<std::size_t> tree;
    for (std::size_t n = 0; n < doc_.size(); ++n) {
      if (doc_.at(n).generation == 0) tree.push_back(n);
    }
    std::sort(tree.begin(), tree.end(),
              [&](std::size_t a, std::size_t b) { return doc_.at(a).pointer < doc_.at(b).pointer; });
    for (const std::size_t n : tree) visit(n, 1);
  }

 private:
  static constexpr std::size_t unvisited = npos;
  static constexpr std::size_t on_path = 0;  // grey: on the current path

  std::size_t visit(std::size_t n, std::size_t depth) {
    if (height_[n] != unvisited) {
      if (height_[n] == on_path) return 0;  // reported by the caller
      if (depth - 1 + height_[n] > max_schema_depth) too_deep(n);
      return height_[n];
    }
    if (depth > max_schema_depth) too_deep(n);
    height_[n] = on_path;
    std::size_t h = 0;
    auto step = [&](std::size_t next) {
      if (height_[next] == on_path) {
        fail_at_node(errc::mt_schema_dialect, doc_.at(n).pointer,
                     "reference cycle through " + detail::quoted(doc_.at(next).pointer) + " (§4.3)");
      }
      h = std::max(h, visit(next, depth + 1));
    };
    for (const schema_keyword k : applied_keywords) {
      for (const std::size_t c : doc_.children(n, k)) step(c);
    }
    if (targets_[n] != npos) step(targets_[n]);
    height_[n] = h + 1;
    return h + 1;
  }

  [[noreturn]] void too_deep(std::size_t n) const {
    fail_at_node(
        errc::mt_limit, doc_.at(n).pointer,
        "schema nested deeper than " + std::to_string(max_schema_depth) + " levels through $ref (§8.4)");
  }

  const schema_document& doc_;
  const std::vector<std::size_t>& targets_;
  std::vector<std::size_t> height_;
};

}  // namespace

std::vector<std::size_t> check_dialect(const schema_document& document) {
  dialect_walker walker(document);
  walker.walk(0, false);  // the root is level 1
  std::vector<std::size_t> targets(document.size(), npos);
  resolve_refs(document, walker.refs, targets);
  // Without a resolved `$ref` the graph is the tree itself: no cycle, and
  // the walk above already bounded every node's level (§8.4), so the
  // search (a sort of every node's pointer) could not fail.
  if (std::any_of(targets.begin(), targets.end(), [](std::size_t t) { return t != npos; })) {
    cycle_checker(document, targets).run();
  }
  return targets;
}

}  // namespace metatensor::detail
