// The fast path of compiling a file's schema (schema_fast_path.hpp).
#include "schema_fast_path.hpp"

#include <algorithm>
#include <span>
#include <utility>

#include "dialect_check.hpp"
#include "layout_compiler.hpp"
#include "src/metatensor/json_dom.hpp"
#include "src/metatensor/strict_json.hpp"
#include "src/metatensor/text.hpp"
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
// The grammar of the fast path.

namespace {

namespace dom = simdjson::dom;

// Ranks above this are left to the reference path (its limit is 32, §8.4).
constexpr std::size_t max_fast_rank = 8;

bool is_string(dom::element v) {
  return v.type() == dom::element_type::STRING;
}

// An annotation whose value the compiler never reads.
bool is_annotation(std::string_view key, dom::element v) {
  return (key == "title" || key == "description") && is_string(v);
}

// A non-negative integer (parse_strict_dom bounded it by 2^53 - 1); a float
// such as 3.0, which the reference also reads, is left to it.
bool read_count(dom::element v, std::uint64_t& out) {
  return v.is_uint64() && v.get_uint64().get(out) == simdjson::SUCCESS;
}

// §3.2 names, as `check_name` of the layout compiler.
bool allowed_name(std::string_view name) {
  return !name.empty() && !name.starts_with("__") && name.find('#') == std::string_view::npos;
}

// One root property: dimension nodes down to a scalar leaf. Fills `t` as
// `compiler::compile_tensor` does for a flat tensor; false when anything is
// outside the grammar.
bool flat_tensor(dom::element node, std::string_view name, tensor_layout& t) {
  t.name = std::string(name);
  t.kind = tensor_kind::flat;
  // No `$ref` on the way: the node pointers are the implicit ones
  // (`tensor_layout::node_pointer`).
  while (true) {
    dom::object members;
    if (node.get_object().get(members) != simdjson::SUCCESS) return false;
    const scalar_keyword* scalar = nullptr;
    std::optional<dom::element> items;
    std::string_view type;
    bool typed = false;
    dimension_bounds b;
    bool bounded = false;
    for (const auto field : members) {
      const std::string_view k = field.key;
      if (k == "items") {
        items = field.value;
      } else if (k == "type") {
        if (field.value.get_string().get(type) != simdjson::SUCCESS) return false;
        typed = true;
      } else if (k == "minItems") {
        if (!read_count(field.value, b.min)) return false;
        bounded = true;
      } else if (k == "maxItems") {
        std::uint64_t max = 0;
        if (!read_count(field.value, max)) return false;
        b.max = max;
        bounded = true;
      } else if (is_typedef(k)) {
        const auto* s = find_scalar(k);
        bool on = false;
        if (s == nullptr || scalar != nullptr || field.value.get_bool().get(on) != simdjson::SUCCESS || !on) {
          return false;
        }
        scalar = s;
      } else if (!is_annotation(k, field.value)) {
        return false;
      }
    }
    if (scalar != nullptr) {  // the leaf
      if (items || bounded || (typed && (type_bit(type) & scalar->types) == 0)) return false;
      t.flat_dtype = scalar->type;
      return true;
    }
    if (!items || !items->is_object() || (typed && type != "array") || t.dims.size() == max_fast_rank) {
      return false;
    }
    t.dims.push_back(b);
    node = *items;
  }
}

}  // namespace

std::optional<compiled_schema> schema_fast_path::compile_embedded(std::string_view text, std::size_t readable,
                                                                  dom::parser* parser) {
  auto out = compile_text(text, readable, parser);
  if (out) out->deferred_ = std::make_shared<deferred_document>(std::make_shared<const std::string>(text));
  return out;
}

std::optional<compiled_schema> schema_fast_path::compile_embedded(std::shared_ptr<const std::string> text,
                                                                  dom::parser* parser) {
  auto out = compile_text(*text, text->capacity(), parser);
  if (out) out->deferred_ = std::make_shared<deferred_document>(std::move(text));
  return out;
}

std::optional<compiled_schema> schema_fast_path::compile_text(std::string_view text, std::size_t readable,
                                                              dom::parser* reused) {
  std::optional<dom::parser> local;
  const auto root = parse_strict_dom(text, reused != nullptr ? *reused : local.emplace(), readable);
  dom::object top;
  if (!root || root->get_object().get(top) != simdjson::SUCCESS) return std::nullopt;
  bool typed = false;
  std::optional<dom::object> properties;
  std::optional<dom::array> required;
  for (const auto field : top) {
    const std::string_view k = field.key;
    if (k == "$schema") {
      if (!string_is(field.value, schema_dialect_uri)) return std::nullopt;
    } else if (k == "type") {
      if (!string_is(field.value, "object")) return std::nullopt;
      typed = true;
    } else if (k == "properties") {
      dom::object p;
      if (field.value.get_object().get(p) != simdjson::SUCCESS) return std::nullopt;
      properties = p;
    } else if (k == "required") {
      dom::array r;
      if (field.value.get_array().get(r) != simdjson::SUCCESS) return std::nullopt;
      required = r;
    } else if (k == "additionalProperties") {
      bool open = true;
      if (field.value.get_bool().get(open) != simdjson::SUCCESS || open) return std::nullopt;
    } else if (!is_annotation(k, field.value)) {
      return std::nullopt;
    }
  }
  // §8.4: the reference refuses more than 2^20 properties before anything
  // else (simdjson's count saturates at 2^24 - 1, above that bound).
  if (!typed || !properties || properties->size() > max_logical_tensors) return std::nullopt;

  compiled_schema out;
  auto& layouts = out.tensors_;
  tensogram::reserve_advised(layouts, properties->size());
  for (const auto field : *properties) {
    if (!allowed_name(field.key)) return std::nullopt;
    if (!flat_tensor(field.value, field.key, layouts.emplace_back())) return std::nullopt;
  }
  // The table is sorted by name, without duplicates (parse_strict_dom
  // refused duplicate keys; the reference path names them should one ever
  // get here). Writers usually list properties in order: then one
  // comparison per pair settles both (names share long prefixes, issue 27).
  const auto by_name = [](const tensor_layout& a, const tensor_layout& b) { return a.name < b.name; };
  const auto not_before = [&](const tensor_layout& a, const tensor_layout& b) { return !by_name(a, b); };
  if (std::adjacent_find(layouts.begin(), layouts.end(), not_before) != layouts.end()) {
    std::sort(layouts.begin(), layouts.end(), by_name);
    if (std::adjacent_find(layouts.begin(), layouts.end(), not_before) != layouts.end()) return std::nullopt;
  }
  if (required) {
    for (const auto r : *required) {
      std::string_view name;
      if (r.get_string().get(name) != simdjson::SUCCESS) return std::nullopt;
      tensor_layout* t = find_layout(std::span<tensor_layout>(layouts), name);
      if (t == nullptr) return std::nullopt;
      t->required = true;
    }
  }
  return out;
}

}  // namespace metatensor::detail
