// JSON Schema draft 2020-12 evaluation for the metatensor dialect (spec 06
// §4.1–§4.3, §8.3, §8.4).
//
// Construction compiles the keywords of every node of the schema document
// (schema_document.hpp: the locations reachable from the root through the
// applicator keywords, `$defs` and resolved `$ref`s) into a table parallel
// to the document's, rejecting anything outside the dialect. Evaluation then
// walks that table; it never re-reads the document.
#include "metatensor/json_schema.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <compare>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

#include "ecma_regex.hpp"
#include "json_compare.hpp"
#include "metatensor/layout.hpp"
#include "schema_document.hpp"
#include "src/metatensor/text.hpp"
#include "tensogram/core/error.hpp"

namespace metatensor {
namespace {

using json = nlohmann::json;
using detail::schema_document;
using detail::schema_keyword;
constexpr std::size_t npos = schema_document::npos;

[[noreturn]] void fail(errc code, const std::string& detail) {
  throw error(code, detail);
}

void append_index(std::string& path, std::size_t index) {
  path += '/';
  path += std::to_string(index);
}

// "schema location /properties/a" or "schema root" for error messages.
std::string schema_at(const std::string& where) {
  return where.empty() ? std::string("schema root") : "schema location " + where;
}

std::string value_at(const std::string& path) {
  return path.empty() ? std::string("value root") : "value " + path;
}

// ---------------------------------------------------------------------------
// Messages.

std::string format_number(const json& v) {
  if (v.is_number_unsigned()) return std::to_string(v.get<std::uint64_t>());
  if (v.is_number_integer()) return std::to_string(v.get<std::int64_t>());
  const double d = v.get<double>();
  if (std::isnan(d)) return "NaN";
  if (std::isinf(d)) return d > 0 ? "Infinity" : "-Infinity";
  char buf[64];
  const auto res = std::to_chars(buf, buf + sizeof buf, d);
  return std::string(buf, res.ptr);
}

// A short description of a value for messages (never throws on bad UTF-8).
std::string describe(const json& v) {
  if (v.is_number()) return format_number(v);
  if (v.is_array()) return "an array of " + std::to_string(v.size()) + " items";
  if (v.is_object()) return "an object of " + std::to_string(v.size()) + " members";
  std::string text = v.dump(-1, ' ', false, json::error_handler_t::replace);
  constexpr std::size_t max_text = 80;
  if (text.size() > max_text) {
    text.resize(max_text);
    text += "...";
  }
  return text;
}

// Unicode code points of UTF-8 text (§8.3): bytes that are not continuation
// bytes.
std::size_t code_points(std::string_view s) {
  return static_cast<std::size_t>(std::count_if(
      s.begin(), s.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0u) != 0x80u; }));
}

// ---------------------------------------------------------------------------
// Types.

enum type_bit : unsigned {
  t_null = 1u << 0,
  t_boolean = 1u << 1,
  t_object = 1u << 2,
  t_array = 1u << 3,
  t_number = 1u << 4,
  t_string = 1u << 5,
  t_integer = 1u << 6,
};

constexpr std::pair<std::string_view, unsigned> type_names[] = {
    {"null", t_null},     {"boolean", t_boolean}, {"object", t_object},   {"array", t_array},
    {"number", t_number}, {"string", t_string},   {"integer", t_integer},
};

// The type bits a value satisfies: "integer" is any number with a zero
// fractional part (so 1.0 is an integer, NaN and infinities are not).
unsigned value_types(const json& v) {
  switch (v.type()) {
    case json::value_t::null: return t_null;
    case json::value_t::boolean: return t_boolean;
    case json::value_t::object: return t_object;
    case json::value_t::array: return t_array;
    case json::value_t::string: return t_string;
    case json::value_t::number_integer:
    case json::value_t::number_unsigned: return t_number | t_integer;
    case json::value_t::number_float: {
      const double d = v.get<double>();
      return std::isfinite(d) && d == std::trunc(d) ? (t_number | t_integer) : t_number;
    }
    default: return 0;
  }
}

std::string type_list(unsigned bits) {
  std::string out;
  for (const auto& [name, bit] : type_names) {
    if ((bits & bit) == 0) continue;
    if (!out.empty()) out += " or ";
    out += name;
  }
  return out;
}

std::string value_type_name(const json& v) {
  if (v.is_number_float()) {
    const double d = v.get<double>();
    return std::isfinite(d) && d == std::trunc(d) ? "integer" : "number";
  }
  if (v.is_number()) return "integer";
  if (v.is_binary()) return "binary";
  return v.type_name();
}

}  // namespace

// ---------------------------------------------------------------------------
// The compiled table: one entry per node of the schema document.

struct json_schema_evaluator::compiled {
  struct node {
    const std::string* where = nullptr;  // JSON Pointer of the schema location
    bool reached = false;                // compiled, or queued to be
    bool is_boolean = false;
    bool boolean_value = true;
    unsigned types = 0;  // 0: no `type` keyword
    const json* enum_values = nullptr;
    const json* const_value = nullptr;
    const json* minimum = nullptr;
    const json* maximum = nullptr;
    const json* exclusive_minimum = nullptr;
    const json* exclusive_maximum = nullptr;
    const json* multiple_of = nullptr;
    std::optional<std::uint64_t> min_length, max_length, min_items, max_items, min_contains, max_contains;
    bool unique_items = false;
    std::size_t pattern = npos;  // index into `patterns`
    std::vector<std::size_t> prefix_items;
    std::size_t items = npos;
    std::size_t contains = npos;
    std::vector<std::pair<const std::string*, std::size_t>> properties;
    const json* properties_object = nullptr;
    bool no_additional_properties = false;
    std::vector<const std::string*> required;
    std::vector<std::size_t> all_of, any_of, one_of;
    std::size_t not_schema = npos, if_schema = npos, then_schema = npos, else_schema = npos;
    std::size_t ref = npos;
  };

  std::shared_ptr<const schema_document> document;
  std::vector<node> nodes;  // parallel to the document's table
  std::vector<detail::ecma_pattern> patterns;
  std::vector<const std::string*> pattern_sources;

  // --- construction -------------------------------------------------------
  explicit compiled(std::shared_ptr<const schema_document> doc);

  std::size_t reach(std::size_t n);
  void compile_node(std::size_t n);
  bool compile_core_keyword(std::size_t n, const std::string& key, const json& v);
  bool compile_validation_keyword(std::size_t n, const std::string& key, const json& v);
  bool compile_applicator_keyword(std::size_t n, const std::string& key, const json& v);
  std::vector<std::size_t> schema_array(std::size_t n, schema_keyword k, const json& v);
  void resolve_ref(std::size_t n);
  void reject_in_place_cycles() const;

  std::vector<std::size_t> queue;
  std::vector<std::size_t> pending_refs;
  std::vector<std::size_t> reach_order;  // the order of first reach: cycles are searched in it

  // --- evaluation ---------------------------------------------------------
  bool eval(std::size_t n, const json& v, std::string& path, std::size_t depth, schema_violation* out) const;
  bool eval_number(const node& s, const json& v, std::string& path, schema_violation* out) const;
  bool eval_string(const node& s, const json& v, std::string& path, schema_violation* out) const;
  bool eval_array(const node& s, const json& v, std::string& path, std::size_t depth,
                  schema_violation* out) const;
  bool eval_object(const node& s, const json& v, std::string& path, std::size_t depth,
                   schema_violation* out) const;
  bool eval_applicators(const node& s, const json& v, std::string& path, std::size_t depth,
                        schema_violation* out) const;
};

namespace {

// A template so that the private node type need not be named here.
template <class Node>
bool violate(schema_violation* out, const std::string& path, const Node& s, std::string_view keyword,
             std::string message) {
  if (out != nullptr) {
    out->pointer = path;
    out->keyword = std::string(keyword);
    message += " (";
    message += schema_at(*s.where);
    message += ')';
    out->message = std::move(message);
  }
  return false;
}

// Construction-time readers of keyword values (malformed → MT_SCHEMA_DIALECT).
[[noreturn]] void malformed(const std::string& where, std::string_view keyword, std::string_view expected) {
  fail(errc::mt_schema_dialect, "keyword \"" + std::string(keyword) + "\" at " + schema_at(where) +
                                    " must be " + std::string(expected));
}

std::uint64_t read_count(const json& v, const std::string& where, std::string_view keyword) {
  if (v.is_number_unsigned()) return v.get<std::uint64_t>();
  if (v.is_number_integer() && v.get<std::int64_t>() >= 0)
    return static_cast<std::uint64_t>(v.get<std::int64_t>());
  if (v.is_number_float()) {
    const double d = v.get<double>();
    if (std::isfinite(d) && d >= 0 && d == std::trunc(d)) {
      return d >= detail::two_pow_64 ? std::numeric_limits<std::uint64_t>::max()
                                     : static_cast<std::uint64_t>(d);
    }
  }
  malformed(where, keyword, "a non-negative integer");
}

const json* read_number(const json& v, const std::string& where, std::string_view keyword) {
  if (!v.is_number() || (v.is_number_float() && !std::isfinite(v.get<double>()))) {
    malformed(where, keyword, "a finite number");
  }
  return &v;
}

}  // namespace

json_schema_evaluator::compiled::compiled(std::shared_ptr<const schema_document> doc)
    : document(std::move(doc)), nodes(document->size()) {
  for (std::size_t n = 0; n < nodes.size(); ++n) nodes[n].where = &document->at(n).pointer;
  reach(0);
  while (!queue.empty() || !pending_refs.empty()) {
    while (!queue.empty()) {
      const std::size_t n = queue.back();
      queue.pop_back();
      compile_node(n);
    }
    // `$id`s are known once the tree below the root (and below every
    // reference target reached so far) has been compiled.
    std::vector<std::size_t> refs;
    refs.swap(pending_refs);
    for (const std::size_t n : refs) resolve_ref(n);
  }
  reject_in_place_cycles();
}

// A node the evaluation may apply: queued for compilation on first reach.
std::size_t json_schema_evaluator::compiled::reach(std::size_t n) {
  if (nodes[n].reached) return n;
  if (document->at(n).level > max_schema_nesting) {
    fail(errc::mt_limit, "subschemas nested deeper than 64 levels at " + schema_at(*nodes[n].where) +
                             " (metatensor-format §8.4)");
  }
  nodes[n].reached = true;
  queue.push_back(n);
  reach_order.push_back(n);
  return n;
}

void json_schema_evaluator::compiled::compile_node(std::size_t n) {
  node& s = nodes[n];
  const json& schema = *document->at(n).value;
  if (schema.is_boolean()) {
    s.is_boolean = true;
    s.boolean_value = schema.get<bool>();
    return;
  }
  if (!schema.is_object()) {
    fail(errc::mt_schema_dialect,
         schema_at(*s.where) + " is neither an object nor a boolean, so it is not a schema");
  }
  for (auto it = schema.begin(); it != schema.end(); ++it) {
    const std::string& key = it.key();
    if (std::find(detail::rejected_keywords.begin(), detail::rejected_keywords.end(), key) !=
        detail::rejected_keywords.end()) {
      fail(errc::mt_schema_dialect, "keyword \"" + key + "\" at " + schema_at(*s.where) +
                                        " is outside the metatensor schema dialect (metatensor-format §4.3)");
    }
    const json& v = it.value();
    (void)(compile_core_keyword(n, key, v) || compile_validation_keyword(n, key, v) ||
           compile_applicator_keyword(n, key, v));
    // Everything else is an annotation (§4.2): title, description, default,
    // examples, $comment, format (never asserted), deprecated, readOnly,
    // writeOnly, contentEncoding, contentMediaType, unknown keywords, and the
    // TypeDef: keywords, whose binary meaning structural validation enforces.
  }
}

// The core vocabulary: `$schema` (§4.1), `$id`, `$ref` (resolved once every
// `$id` of its generation is compiled) and `$defs`.
bool json_schema_evaluator::compiled::compile_core_keyword(std::size_t n, const std::string& key,
                                                           const json& v) {
  node& s = nodes[n];
  if (key == "$schema") {
    if (!v.is_string() || v.get_ref<const std::string&>() != schema_dialect_uri) {
      fail(errc::mt_schema_dialect, "\"$schema\" at " + schema_at(*s.where) + " must be \"" +
                                        std::string(schema_dialect_uri) + "\" (metatensor-format §4.1)");
    }
  } else if (key == "$id") {
    if (!v.is_string()) malformed(*s.where, key, "a string");
  } else if (key == "$ref") {
    if (!v.is_string()) malformed(*s.where, key, "a string");
    pending_refs.push_back(n);
  } else if (key == "$defs") {
    if (!v.is_object()) malformed(*s.where, key, "an object of schemas");
    for (const std::size_t c : document->children(n, schema_keyword::defs)) reach(c);
  } else {
    return false;
  }
  return true;
}

// The validation vocabulary (assertions on the value itself), except
// `required`, which goes with `properties`.
bool json_schema_evaluator::compiled::compile_validation_keyword(std::size_t n, const std::string& key,
                                                                 const json& v) {
  node& s = nodes[n];
  const std::string& where = *s.where;
  if (key == "type") {
    auto one = [&](const json& t) {
      if (t.is_string()) {
        for (const auto& [name, bit] : type_names) {
          if (t.get_ref<const std::string&>() == name) return bit;
        }
      }
      malformed(where, key, "a JSON Schema type name or a non-empty array of distinct type names");
    };
    if (v.is_array()) {
      if (v.empty()) malformed(where, key, "a non-empty array of distinct type names");
      for (const json& t : v) {
        const unsigned bit = one(t);
        if ((s.types & bit) != 0) malformed(where, key, "an array of distinct type names");
        s.types |= bit;
      }
    } else {
      s.types = one(v);
    }
  } else if (key == "enum") {
    if (!v.is_array()) malformed(where, key, "an array");
    s.enum_values = &v;
  } else if (key == "const") {
    s.const_value = &v;
  } else if (key == "minimum") {
    s.minimum = read_number(v, where, key);
  } else if (key == "maximum") {
    s.maximum = read_number(v, where, key);
  } else if (key == "exclusiveMinimum") {
    s.exclusive_minimum = read_number(v, where, key);
  } else if (key == "exclusiveMaximum") {
    s.exclusive_maximum = read_number(v, where, key);
  } else if (key == "multipleOf") {
    s.multiple_of = read_number(v, where, key);
    if (!(detail::compare_numbers(v, json(0)) == std::partial_ordering::greater)) {
      malformed(where, key, "a number greater than 0");
    }
  } else if (key == "minLength") {
    s.min_length = read_count(v, where, key);
  } else if (key == "maxLength") {
    s.max_length = read_count(v, where, key);
  } else if (key == "minItems") {
    s.min_items = read_count(v, where, key);
  } else if (key == "maxItems") {
    s.max_items = read_count(v, where, key);
  } else if (key == "minContains") {
    s.min_contains = read_count(v, where, key);
  } else if (key == "maxContains") {
    s.max_contains = read_count(v, where, key);
  } else if (key == "uniqueItems") {
    if (!v.is_boolean()) malformed(where, key, "a boolean");
    s.unique_items = v.get<bool>();
  } else if (key == "pattern") {
    if (!v.is_string()) malformed(where, key, "a string");
    s.pattern = patterns.size();
    patterns.emplace_back(v.get_ref<const std::string&>(), schema_at(where));
    pattern_sources.push_back(&v.get_ref<const std::string&>());
  } else {
    return false;
  }
  return true;
}

// The subschemas of keyword `k`, whose value `v` must be a non-empty array.
std::vector<std::size_t> json_schema_evaluator::compiled::schema_array(std::size_t n, schema_keyword k,
                                                                       const json& v) {
  if (!v.is_array() || v.empty())
    malformed(*nodes[n].where, detail::keyword_name(k), "a non-empty array of schemas");
  std::vector<std::size_t> out;
  for (const std::size_t c : document->children(n, k)) out.push_back(reach(c));
  return out;
}

// The applicator vocabulary, plus `required` and `additionalProperties`
// (which the dialect allows only as `false`) next to `properties`.
bool json_schema_evaluator::compiled::compile_applicator_keyword(std::size_t n, const std::string& key,
                                                                 const json& v) {
  node& s = nodes[n];
  const std::string& where = *s.where;
  auto single = [&](schema_keyword k) { return reach(document->children(n, k).front()); };
  if (key == "items") {
    if (v.is_array()) {
      fail(errc::mt_schema_dialect,
           "\"items\" at " + schema_at(where) +
               " is an array; the dialect takes \"prefixItems\" (metatensor-format §4.3)");
    }
    s.items = single(schema_keyword::items);
  } else if (key == "prefixItems") {
    s.prefix_items = schema_array(n, schema_keyword::prefix_items, v);
  } else if (key == "contains") {
    s.contains = single(schema_keyword::contains);
  } else if (key == "properties") {
    if (!v.is_object()) malformed(where, key, "an object of schemas");
    s.properties_object = &v;
    const auto children = document->children(n, schema_keyword::properties);
    std::size_t i = 0;
    for (auto p = v.begin(); p != v.end(); ++p) s.properties.emplace_back(&p.key(), reach(children[i++]));
  } else if (key == "required") {
    if (!v.is_array()) malformed(where, key, "an array of strings");
    for (const json& r : v) {
      if (!r.is_string()) malformed(where, key, "an array of strings");
      s.required.push_back(&r.get_ref<const std::string&>());
    }
  } else if (key == "additionalProperties") {
    if (!v.is_boolean() || v.get<bool>()) {
      fail(errc::mt_schema_dialect,
           "\"additionalProperties\" at " + schema_at(where) +
               " must be false, the only value of the dialect (metatensor-format §4.3)");
    }
    s.no_additional_properties = true;
  } else if (key == "allOf") {
    s.all_of = schema_array(n, schema_keyword::all_of, v);
  } else if (key == "anyOf") {
    s.any_of = schema_array(n, schema_keyword::any_of, v);
  } else if (key == "oneOf") {
    s.one_of = schema_array(n, schema_keyword::one_of, v);
  } else if (key == "not") {
    s.not_schema = single(schema_keyword::not_);
  } else if (key == "if") {
    s.if_schema = single(schema_keyword::if_);
  } else if (key == "then") {
    s.then_schema = single(schema_keyword::then_);
  } else if (key == "else") {
    s.else_schema = single(schema_keyword::else_);
  } else {
    return false;
  }
  return true;
}

// §4.3: `$ref` is a same-document JSON Pointer fragment ("#", "#/$defs/A",
// percent-encoded as a URI fragment) or exactly the `$id` of a subschema;
// the document resolved it, this states the dialect's verdict.
void json_schema_evaluator::compiled::resolve_ref(std::size_t n) {
  using detail::reference_status;
  const std::string& where = *nodes[n].where;
  const schema_document::reference& r = *document->reference_of(n);
  const std::string& ref = *r.text;
  if (r.is_fragment()) {
    if (r.status == reference_status::bad_escape) {
      fail(errc::mt_schema_dialect, "\"$ref\" at " + schema_at(where) + " has a bad percent-escape");
    }
    if (r.status == reference_status::anchor) {
      fail(errc::mt_schema_dialect,
           "\"$ref\": \"" + ref + "\" at " + schema_at(where) +
               " is an anchor reference, not a JSON Pointer (metatensor-format §4.3)");
    }
    if (document->at(n).embedded) {
      fail(errc::mt_schema_dialect,
           "\"$ref\": \"" + ref + "\" at " + schema_at(where) +
               " is a fragment inside a subschema with its own \"$id\", which 2020-12 "
               "resolves against that subschema, not the document (metatensor-format §4.3)");
    }
    if (r.status == reference_status::not_a_pointer) {
      fail(errc::mt_schema_dialect, "\"$ref\" at " + schema_at(where) + " is not a JSON Pointer");
    }
    if (r.status == reference_status::dangling) {
      fail(errc::mt_schema_dialect,
           "\"$ref\": \"" + ref + "\" at " + schema_at(where) + " does not resolve in the schema document");
    }
    nodes[n].ref = reach(r.target);
    return;
  }
  if (r.status == reference_status::unknown_id) {
    fail(errc::mt_schema_dialect,
         "\"$ref\": \"" + ref + "\" at " + schema_at(where) +
             " is neither a same-document JSON Pointer fragment nor the \"$id\" of a "
             "subschema; nothing is fetched (metatensor-format §4.3)");
  }
  if (r.status == reference_status::ambiguous_id) {
    fail(errc::mt_schema_dialect, "\"$ref\": \"" + ref + "\" at " + schema_at(where) +
                                      " names an \"$id\" carried by several subschemas");
  }
  nodes[n].ref = r.target;  // compiled already: an `$id` of this generation or an earlier one
}

// A cycle of `$ref` and in-place applicators never consumes the value, so
// evaluating it would not terminate (§4.3 rejects reference cycles).
void json_schema_evaluator::compiled::reject_in_place_cycles() const {
  auto edges = [&](const node& s) {
    std::vector<std::size_t> out;
    if (s.ref != npos) out.push_back(s.ref);
    out.insert(out.end(), s.all_of.begin(), s.all_of.end());
    out.insert(out.end(), s.any_of.begin(), s.any_of.end());
    out.insert(out.end(), s.one_of.begin(), s.one_of.end());
    for (const std::size_t c : {s.not_schema, s.if_schema, s.then_schema, s.else_schema}) {
      if (c != npos) out.push_back(c);
    }
    return out;
  };
  enum : std::uint8_t { white, grey, black };
  std::vector<std::uint8_t> colour(nodes.size(), white);
  struct frame {
    std::size_t n;
    std::vector<std::size_t> next;
    std::size_t i;
  };
  for (const std::size_t start : reach_order) {
    if (colour[start] != white) continue;
    std::vector<frame> stack;
    stack.push_back({start, edges(nodes[start]), 0});
    colour[start] = grey;
    while (!stack.empty()) {
      frame& f = stack.back();
      if (f.i == f.next.size()) {
        colour[f.n] = black;
        stack.pop_back();
        continue;
      }
      const std::size_t c = f.next[f.i++];
      if (colour[c] == grey) {
        fail(errc::mt_schema_dialect, "reference cycle through " + schema_at(*nodes[c].where) +
                                          " never descends into the value (metatensor-format §4.3)");
      }
      if (colour[c] == white) {
        colour[c] = grey;
        stack.push_back({c, edges(nodes[c]), 0});
      }
    }
  }
}
// ---------------------------------------------------------------------------
// Evaluation. `out` is null when only the verdict matters (anyOf, oneOf,
// not, if, contains), so no message is built then.

bool json_schema_evaluator::compiled::eval(std::size_t n, const json& v, std::string& path, std::size_t depth,
                                           schema_violation* out) const {
  if (depth > max_evaluation_depth) {
    fail(errc::mt_limit, "schema evaluation deeper than " + std::to_string(max_evaluation_depth) +
                             " levels at " + value_at(path) + " (metatensor-format §8.4)");
  }
  const node& s = nodes[n];
  if (s.is_boolean) {
    return s.boolean_value || violate(out, path, s, "false", "the schema false admits no value");
  }
  if (s.ref != npos && !eval(s.ref, v, path, depth + 1, out)) return false;
  if (s.types != 0 && (value_types(v) & s.types) == 0) {
    return violate(out, path, s, "type", "expected " + type_list(s.types) + ", got " + value_type_name(v));
  }
  if (s.enum_values != nullptr) {
    const auto& values = *s.enum_values;
    const bool found =
        std::any_of(values.begin(), values.end(), [&](const json& e) { return detail::json_equal(e, v); });
    if (!found) return violate(out, path, s, "enum", describe(v) + " is not one of the enumerated values");
  }
  if (s.const_value != nullptr && !detail::json_equal(*s.const_value, v)) {
    return violate(out, path, s, "const", describe(v) + " is not the constant " + describe(*s.const_value));
  }
  if (v.is_number() && !eval_number(s, v, path, out)) return false;
  if (v.is_string() && !eval_string(s, v, path, out)) return false;
  if (v.is_array() && !eval_array(s, v, path, depth, out)) return false;
  if (v.is_object() && !eval_object(s, v, path, depth, out)) return false;
  return eval_applicators(s, v, path, depth, out);
}

// §8.3: a keyword fails only if its violation test is true, so NaN (unordered)
// passes every bound; multipleOf fails for non-finite values.
bool json_schema_evaluator::compiled::eval_number(const node& s, const json& v, std::string& path,
                                                  schema_violation* out) const {
  using po = std::partial_ordering;
  if (s.minimum != nullptr && detail::compare_to_bound(v, *s.minimum) == po::less) {
    return violate(out, path, s, "minimum",
                   describe(v) + " is less than the minimum " + describe(*s.minimum));
  }
  if (s.maximum != nullptr && detail::compare_to_bound(v, *s.maximum) == po::greater) {
    return violate(out, path, s, "maximum",
                   describe(v) + " is greater than the maximum " + describe(*s.maximum));
  }
  if (s.exclusive_minimum != nullptr) {
    const po c = detail::compare_to_bound(v, *s.exclusive_minimum);
    if (c == po::less || c == po::equivalent) {
      return violate(
          out, path, s, "exclusiveMinimum",
          describe(v) + " is not greater than the exclusive minimum " + describe(*s.exclusive_minimum));
    }
  }
  if (s.exclusive_maximum != nullptr) {
    const po c = detail::compare_to_bound(v, *s.exclusive_maximum);
    if (c == po::greater || c == po::equivalent) {
      return violate(
          out, path, s, "exclusiveMaximum",
          describe(v) + " is not less than the exclusive maximum " + describe(*s.exclusive_maximum));
    }
  }
  if (s.multiple_of != nullptr && !detail::is_multiple_of(v, *s.multiple_of)) {
    return violate(out, path, s, "multipleOf",
                   describe(v) + " is not a multiple of " + describe(*s.multiple_of));
  }
  return true;
}

bool json_schema_evaluator::compiled::eval_string(const node& s, const json& v, std::string& path,
                                                  schema_violation* out) const {
  const std::string& text = v.get_ref<const std::string&>();
  if (s.min_length || s.max_length) {
    const std::size_t length = code_points(text);
    if (s.min_length && length < *s.min_length) {
      return violate(out, path, s, "minLength",
                     "string of " + std::to_string(length) +
                         " code points is shorter than the minimum length " + std::to_string(*s.min_length));
    }
    if (s.max_length && length > *s.max_length) {
      return violate(out, path, s, "maxLength",
                     "string of " + std::to_string(length) +
                         " code points is longer than the maximum length " + std::to_string(*s.max_length));
    }
  }
  if (s.pattern != npos) {
    using outcome = detail::ecma_pattern::outcome;
    const auto found = patterns[s.pattern].search(text);
    switch (found.kind) {
      case outcome::match: return true;  // unanchored search: any match anywhere
      case outcome::no_match:
        return violate(
            out, path, s, "pattern",
            describe(v) + " does not match the pattern " +
                json(*pattern_sources[s.pattern]).dump(-1, ' ', false, json::error_handler_t::replace));
      case outcome::invalid_utf8:
        return violate(out, path, s, "pattern", "the string is not valid UTF-8, so no pattern can match it");
      case outcome::out_of_memory:
        fail(errc::mt_limit, "out of memory matching a pattern at " + value_at(path));
      case outcome::over_budget: break;
    }
    // A budget was exhausted (PCRE2_ERROR_MATCHLIMIT, DEPTHLIMIT, HEAPLIMIT)
    // or the engine failed: an error, never a silent verdict.
    fail(errc::mt_limit, "pattern at " + schema_at(*s.where) + " on " + value_at(path) +
                             " exceeded the regex engine's limits: " + found.engine_message);
  }
  return true;
}

bool json_schema_evaluator::compiled::eval_array(const node& s, const json& v, std::string& path,
                                                 std::size_t depth, schema_violation* out) const {
  const std::size_t size = v.size();
  if (s.min_items && size < *s.min_items) {
    return violate(
        out, path, s, "minItems",
        "array of " + std::to_string(size) + " items has fewer than " + std::to_string(*s.min_items));
  }
  if (s.max_items && size > *s.max_items) {
    return violate(
        out, path, s, "maxItems",
        "array of " + std::to_string(size) + " items has more than " + std::to_string(*s.max_items));
  }
  const std::size_t base = path.size();
  for (std::size_t i = 0; i < size; ++i) {
    const std::size_t sub = i < s.prefix_items.size() ? s.prefix_items[i] : s.items;
    if (sub == npos) {
      if (i >= s.prefix_items.size()) break;
      continue;
    }
    append_index(path, i);
    const bool ok = eval(sub, v[i], path, depth + 1, out);
    path.resize(base);
    if (!ok) return false;
  }
  if (s.contains != npos) {
    const std::uint64_t min = s.min_contains.value_or(1);
    std::uint64_t matches = 0;
    for (std::size_t i = 0; i < size; ++i) {
      append_index(path, i);
      const bool ok = eval(s.contains, v[i], path, depth + 1, nullptr);
      path.resize(base);
      if (ok) ++matches;
      if (!s.max_contains && matches >= min) break;
      if (s.max_contains && matches > *s.max_contains) break;
    }
    if (matches < min) {
      return violate(out, path, s, min == 1 ? "contains" : "minContains",
                     "array has " + std::to_string(matches) + " items matching \"contains\", fewer than " +
                         std::to_string(min));
    }
    if (s.max_contains && matches > *s.max_contains) {
      return violate(
          out, path, s, "maxContains",
          "array has more than " + std::to_string(*s.max_contains) + " items matching \"contains\"");
    }
  }
  if (s.unique_items) {
    if (const auto dup = detail::first_duplicate(v)) {
      return violate(
          out, path, s, "uniqueItems",
          "items " + std::to_string(dup->first) + " and " + std::to_string(dup->second) + " are equal");
    }
  }
  return true;
}

bool json_schema_evaluator::compiled::eval_object(const node& s, const json& v, std::string& path,
                                                  std::size_t depth, schema_violation* out) const {
  for (const std::string* name : s.required) {
    if (!v.contains(*name)) {
      if (out != nullptr) out->member = *name;
      return violate(out, path, s, "required", "missing the required member \"" + *name + "\"");
    }
  }
  const std::size_t base = path.size();
  for (const auto& [name, sub] : s.properties) {
    const auto it = v.find(*name);
    if (it == v.end()) continue;
    detail::append_pointer_token(path, *name);
    const bool ok = eval(sub, *it, path, depth + 1, out);
    path.resize(base);
    if (!ok) return false;
  }
  if (s.no_additional_properties) {
    for (auto it = v.begin(); it != v.end(); ++it) {
      if (s.properties_object != nullptr && s.properties_object->contains(it.key())) continue;
      detail::append_pointer_token(path, it.key());
      const bool ok = violate(out, path, s, "additionalProperties",
                              "member \"" + it.key() + "\" is not listed in \"properties\"");
      path.resize(base);
      return ok;
    }
  }
  return true;
}

bool json_schema_evaluator::compiled::eval_applicators(const node& s, const json& v, std::string& path,
                                                       std::size_t depth, schema_violation* out) const {
  for (const std::size_t c : s.all_of) {
    if (!eval(c, v, path, depth + 1, out)) return false;
  }
  if (!s.any_of.empty()) {
    const bool any = std::any_of(s.any_of.begin(), s.any_of.end(),
                                 [&](std::size_t c) { return eval(c, v, path, depth + 1, nullptr); });
    if (!any) {
      return violate(
          out, path, s, "anyOf",
          "value matches none of the " + std::to_string(s.any_of.size()) + " \"anyOf\" subschemas");
    }
  }
  if (!s.one_of.empty()) {
    std::size_t matches = 0;
    for (const std::size_t c : s.one_of) {
      if (eval(c, v, path, depth + 1, nullptr) && ++matches > 1) break;
    }
    if (matches != 1) {
      return violate(out, path, s, "oneOf",
                     matches == 0 ? "value matches none of the \"oneOf\" subschemas"
                                  : "value matches more than one of the \"oneOf\" subschemas");
    }
  }
  if (s.not_schema != npos && eval(s.not_schema, v, path, depth + 1, nullptr)) {
    return violate(out, path, s, "not", "value matches the \"not\" subschema");
  }
  if (s.if_schema != npos) {
    const bool condition = eval(s.if_schema, v, path, depth + 1, nullptr);
    const std::size_t branch = condition ? s.then_schema : s.else_schema;
    if (branch != npos && !eval(branch, v, path, depth + 1, out)) return false;
  }
  return true;
}

// ---------------------------------------------------------------------------
// ---------------------------------------------------------------------------

namespace {

// The document table of an evaluator built from a plain document: the
// document itself, or, when it holds builder forms (layout.hpp,
// normalize_builder_schema), a rewritten copy that the table keeps.
std::shared_ptr<const schema_document> evaluator_table(const nlohmann::json& document) {
  json rewritten = normalize_builder_schema(document);
  if (rewritten == document) return std::make_shared<const schema_document>(document);
  return std::make_shared<const schema_document>(std::make_shared<const json>(std::move(rewritten)));
}

}  // namespace

json_schema_evaluator::json_schema_evaluator(const nlohmann::json& document)
    : compiled_(std::make_unique<const compiled>(evaluator_table(document))) {
  document_ = &compiled_->document->root();
}

json_schema_evaluator::json_schema_evaluator(const compiled_schema& schema)
    : document_(&schema.document()), compiled_(std::make_unique<const compiled>(schema.document_table())) {}

json_schema_evaluator::~json_schema_evaluator() = default;
json_schema_evaluator::json_schema_evaluator(json_schema_evaluator&&) noexcept = default;
json_schema_evaluator& json_schema_evaluator::operator=(json_schema_evaluator&&) noexcept = default;

std::optional<schema_violation> json_schema_evaluator::validate(const nlohmann::json& value,
                                                                std::string_view value_pointer) const {
  return validate_node(*document_, value, value_pointer);
}

std::optional<schema_violation> json_schema_evaluator::validate_node(const nlohmann::json& schema_node,
                                                                     const nlohmann::json& value,
                                                                     std::string_view value_pointer) const {
  const std::size_t n = compiled_->document->find(&schema_node);
  if (n == npos || !compiled_->nodes[n].reached) {
    throw tensogram::invalid_arg_error(
        "json_schema_evaluator::validate_node: the node is not a schema node of the evaluator's document");
  }
  std::string path(value_pointer);
  schema_violation violation;
  if (compiled_->eval(n, value, path, 0, &violation)) return std::nullopt;
  return violation;
}

}  // namespace metatensor
