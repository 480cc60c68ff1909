// The fast path of compiling a file's schema (schema_fast_path.hpp).
#include "schema_fast_path.hpp"

#include <algorithm>
#include <array>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "dialect_check.hpp"
#include "layout_compiler.hpp"
#include "src/metatensor/strict_json.hpp"
#include "src/metatensor/text.hpp"
#include "src/metatensor/token_walk.hpp"
#include "tensogram/core/memory.hpp"
#include "typedef_keywords.hpp"

namespace metatensor::detail {

// ---------------------------------------------------------------------------
// The deferred document: what `compile_schema` builds, in its order.

void deferred_document::build() {
  auto doc = std::make_shared<const nlohmann::json>(
      parse_strict_json(*text_, json_errors{errc::mt_schema_json, errc::mt_schema_json, "schema"}));
  auto table = std::make_shared<const schema_document>(std::move(doc));
  ref_targets_ = check_dialect(*table);
  table_ = std::move(table);
  text_.reset();
}

const std::shared_ptr<const schema_document>& deferred_document::table() {
  std::call_once(built_, [this] { build(); });
  return table_;
}

const std::vector<std::size_t>& deferred_document::ref_targets() {
  std::call_once(built_, [this] { build(); });
  return ref_targets_;
}

// ---------------------------------------------------------------------------
// The grammar of the fast path, walked over the text's tokens
// (token_walk.hpp): no DOM, so a 200 k-tensor schema costs its structural
// index and the layouts, not ~40 MB of tape and strings besides (issue 27).
// The walk takes only what the grammar allows, so what it accepts is strict
// JSON (§3.1): every string's escapes are checked, every object's keys are
// told apart (a duplicate is declined), and nothing may follow the root.

namespace {

// Ranks above this are left to the reference path (its limit is 32, §8.4).
constexpr std::size_t max_fast_rank = 8;

// The walk and the scratch its escaped strings are undone into: keys and
// values apart, so that a key stays readable while its value is read.
struct schema_walk {
  token_walk tokens;
  const simdjson::internal::dom_parser_implementation& json;
  std::string key_scratch;
  std::string value_scratch;

  // A member's key (escapes undone) and its colon.
  bool key(std::string_view& k) {
    return tokens.string(k) && tokens.expect(':') && undo_escapes(json, k, key_scratch);
  }
  // A string value (escapes undone); valid until the next value is read.
  bool string(std::string_view& s) { return tokens.string(s) && undo_escapes(json, s, value_scratch); }
  // An annotation's value, which the compiler never reads: any string.
  bool annotation() {
    std::string_view ignored;
    return string(ignored);
  }
};

// The members a node may hold once each (a bit each).
enum member : unsigned {
  m_items = 1U << 0,
  m_type = 1U << 1,
  m_min = 1U << 2,
  m_max = 1U << 3,
  m_title = 1U << 4,
  m_description = 1U << 5,
};
using member_name = std::pair<std::string_view, unsigned>;
constexpr std::array<member_name, 6> node_members{{{"items", m_items},
                                                   {"type", m_type},
                                                   {"minItems", m_min},
                                                   {"maxItems", m_max},
                                                   {"title", m_title},
                                                   {"description", m_description}}};

// The bit of key `k` in `names`, 0 for a key outside them.
unsigned member_bit(std::span<const member_name> names, std::string_view k) noexcept {
  for (const auto& [name, bit] : names) {
    if (k == name) return bit;
  }
  return 0;
}

// The dimensions of the tensor being walked, outermost first.
struct dimension_walk {
  std::array<dimension_bounds, max_fast_rank> dims;
  std::size_t rank = 0;
  dtype leaf = dtype::u8;
};

// The node at depth `level` of a root property: a dimension, whose `items`
// (read where it occurs, as the node at `level` + 1) leads to the leaf, or
// the leaf. False when anything is outside the grammar.
bool node(schema_walk& w, std::size_t level, dimension_walk& out) {
  auto& t = w.tokens;
  if (!t.expect('{')) return false;
  const scalar_keyword* scalar = nullptr;
  unsigned seen = 0;
  std::string type;  // "array", "number", ...: within the short-string buffer
  dimension_bounds b;
  if (t.expect('}')) return false;  // neither a dimension nor a leaf
  do {
    std::string_view k;
    if (!w.key(k)) return false;
    if (is_typedef(k)) {
      const auto* s = find_scalar(k);
      bool on = false;
      if (s == nullptr || scalar != nullptr || !t.boolean(on) || !on) return false;
      scalar = s;
      continue;
    }
    const unsigned m = member_bit(node_members, k);
    if (m == 0 || (seen & m) != 0) return false;
    seen |= m;
    switch (m) {
      case m_items:
        if (level == max_fast_rank || !node(w, level + 1, out)) return false;
        break;
      case m_type: {
        std::string_view s;
        if (!w.string(s)) return false;
        type = s;
        break;
      }
      case m_min:
        if (!t.uint53(b.min)) return false;
        break;
      case m_max: {
        std::uint64_t max = 0;
        if (!t.uint53(max)) return false;
        b.max = max;
        break;
      }
      default:
        if (!w.annotation()) return false;
    }
  } while (t.expect(','));
  if (!t.expect('}')) return false;
  const bool typed = (seen & m_type) != 0;
  if (scalar != nullptr) {  // the leaf
    if ((seen & (m_items | m_min | m_max)) != 0 || (typed && (type_bit(type) & scalar->types) == 0)) {
      return false;
    }
    out.leaf = scalar->type;
    out.rank = level;
    return true;
  }
  if ((seen & m_items) == 0 || (typed && type != "array")) return false;
  out.dims[level] = b;
  return true;
}

// One root property: dimension nodes down to a scalar leaf. Fills `t` as
// `compiler::compile_tensor` does for a flat tensor.
bool flat_tensor(schema_walk& w, std::string_view name, tensor_layout& t) {
  t.name = std::string(name);  // first: an escaped name is in the scratch the walk reuses
  dimension_walk d;
  if (!node(w, 0, d)) return false;
  t.kind = tensor_kind::flat;
  t.flat_dtype = d.leaf;
  // No `$ref` on the way: the node pointers are the implicit ones
  // (`tensor_layout::node_pointer`).
  t.dims.assign(d.dims.begin(), d.dims.begin() + static_cast<std::ptrdiff_t>(d.rank));
  return true;
}

// §3.2 names, as `check_name` of the layout compiler.
bool allowed_name(std::string_view name) {
  return !name.empty() && !name.starts_with("__") && name.find('#') == std::string_view::npos;
}

// The root `properties` object, appended to `layouts` in text order. A
// property takes at least 11 tokens (`"n":{"items":{"TypeDef:U8":true}}`),
// which bounds the table's size before it is filled.
bool properties(schema_walk& w, std::size_t tokens, std::vector<tensor_layout>& layouts) {
  auto& t = w.tokens;
  if (!t.expect('{')) return false;
  tensogram::reserve_advised(layouts, std::min(tokens / 11 + 1, max_logical_tensors + 1));
  if (t.expect('}')) return true;
  do {
    std::string_view name;
    // §8.4: the reference refuses more than 2^20 properties before anything else.
    if (!w.key(name) || !allowed_name(name) || layouts.size() == max_logical_tensors) return false;
    if (!flat_tensor(w, name, layouts.emplace_back())) return false;
  } while (t.expect(','));
  return t.expect('}');
}

// The root `required` array: its names' token texts, escapes not undone.
bool required_names(schema_walk& w, std::vector<std::string_view>& names) {
  auto& t = w.tokens;
  if (!t.expect('[')) return false;
  if (t.expect(']')) return true;
  do {
    std::string_view raw;
    if (!t.string(raw)) return false;
    names.push_back(raw);
  } while (t.expect(','));
  return t.expect(']');
}

}  // namespace

std::optional<compiled_schema> schema_fast_path::compile_embedded(std::string_view text,
                                                                  std::size_t readable) {
  auto out = compile_text(text, readable);
  if (out) out->deferred_ = std::make_shared<deferred_document>(std::make_shared<const std::string>(text));
  return out;
}

std::optional<compiled_schema> schema_fast_path::compile_embedded(std::shared_ptr<const std::string> text) {
  auto out = compile_text(*text, text->capacity());
  if (out) out->deferred_ = std::make_shared<deferred_document>(std::move(text));
  return out;
}

std::optional<compiled_schema> schema_fast_path::compile_text(std::string_view text, std::size_t readable) {
  const auto index = structural_index::build(text, std::max(readable, text.size()));
  if (!index) return std::nullopt;
  schema_walk w{index->walk(), index->json(), {}, {}};
  auto& t = w.tokens;
  compiled_schema out;
  auto& layouts = out.tensors_;
  std::vector<std::string_view> required;
  // The root's members, once each (`type` and the annotations share their
  // bits with a node's).
  enum : unsigned { r_schema = 1U << 6, r_properties = 1U << 7, r_required = 1U << 8, r_closed = 1U << 9 };
  constexpr std::array<member_name, 7> root_members{{{"$schema", r_schema},
                                                     {"type", m_type},
                                                     {"properties", r_properties},
                                                     {"required", r_required},
                                                     {"additionalProperties", r_closed},
                                                     {"title", m_title},
                                                     {"description", m_description}}};
  unsigned seen = 0;
  if (!t.expect('{') || t.expect('}')) return std::nullopt;
  do {
    std::string_view k;
    if (!w.key(k)) return std::nullopt;
    const unsigned m = member_bit(root_members, k);
    if (m == 0 || (seen & m) != 0) return std::nullopt;
    seen |= m;
    std::string_view s;
    bool open = true;
    const bool ok = m == r_schema       ? w.string(s) && s == schema_dialect_uri
                    : m == m_type       ? w.string(s) && s == "object"
                    : m == r_properties ? properties(w, index->tokens(), layouts)
                    : m == r_required   ? required_names(w, required)
                    : m == r_closed     ? t.boolean(open) && !open
                                        : w.annotation();
    if (!ok) return std::nullopt;
  } while (t.expect(','));
  // One value, nothing after it (§3.1).
  if (!t.expect('}') || !t.done()) return std::nullopt;
  if ((seen & m_type) == 0 || (seen & r_properties) == 0) return std::nullopt;
  // The table is sorted by name, without duplicates (a duplicated key is
  // the reference path's to name). Writers usually list properties in
  // order: then one comparison per pair settles both (names share long
  // prefixes, issue 27).
  const auto by_name = [](const tensor_layout& a, const tensor_layout& b) { return a.name < b.name; };
  const auto not_before = [&](const tensor_layout& a, const tensor_layout& b) { return !by_name(a, b); };
  if (std::adjacent_find(layouts.begin(), layouts.end(), not_before) != layouts.end()) {
    std::sort(layouts.begin(), layouts.end(), by_name);
    if (std::adjacent_find(layouts.begin(), layouts.end(), not_before) != layouts.end()) return std::nullopt;
  }
  for (std::string_view name : required) {
    if (!undo_escapes(index->json(), name, w.value_scratch)) return std::nullopt;
    tensor_layout* l = find_layout(std::span<tensor_layout>(layouts), name);
    if (l == nullptr) return std::nullopt;
    l->required = true;
  }
  return out;
}

}  // namespace metatensor::detail
