// The metatensor schema dialect compiler (spec 06 §4, §5, §6.1–§6.5, §8.4).
//
// Compilation runs in three passes so that every error is reported against
// the schema node that causes it (its JSON Pointer is in every message):
//
// 1. The dialect walk visits every subschema reachable through the
//    structure and combinator keywords (and `$defs`), applying §4.1–§4.3:
//    rejected keywords, unknown `TypeDef:` keywords, the keyword classes
//    allowed inside combinators and next to `$ref`. It records every schema
//    location and every `$id`.
// 2. Every `$ref` is resolved (JSON Pointer fragment or exact `$id`), and
//    the graph of subschemas plus references is searched for cycles and for
//    effective nesting deeper than §8.4 allows.
// 3. Each root property is compiled (§5.1 dimensions and element kind,
//    §4.4–§4.5 type rules, §6.1–§6.2 sizes and the C record rule). Records
//    are compiled once per schema node, so shared definitions cost nothing
//    extra and the result is a DAG of shared `record_layout`s.
#include <algorithm>
#include <array>
#include <initializer_list>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "metatensor/layout.hpp"
#include "strict_json.hpp"
#include "tensogram/core/error.hpp"
#include "text.hpp"

namespace metatensor {
namespace {

using json = nlohmann::json;

// Every message names the offending node by its JSON Pointer (the root is "").
[[noreturn]] void fail(errc code, std::string_view ptr, std::string_view what) {
  std::string msg = "schema node ";
  msg += detail::quoted(ptr);
  msg += ": ";
  msg += what;
  throw error(code, msg);
}

std::string child(const std::string& ptr, std::string_view key) {
  std::string out = ptr;
  detail::append_pointer_token(out, key);
  return out;
}

std::string child(const std::string& ptr, std::size_t index) {
  return child(ptr, std::to_string(index));
}

bool is_pow2(std::uint64_t v) noexcept {
  return v != 0 && (v & (v - 1)) == 0;
}

template <class Range>
bool in(const Range& r, std::string_view k) {
  return std::find(r.begin(), r.end(), k) != r.end();
}

// §4.3: keywords that make a schema unusable for layout.
constexpr std::array<std::string_view, 17> rejected_keywords = {
    "$anchor",           "$dynamicRef",   "$dynamicAnchor",    "$recursiveRef",    "$recursiveAnchor",
    "$vocabulary",       "definitions",   "additionalItems",   "unevaluatedItems", "unevaluatedProperties",
    "patternProperties", "propertyNames", "dependentRequired", "dependentSchemas", "dependencies",
    "minProperties",     "maxProperties"};

// §4.2 structure keywords other than `$ref` and the `TypeDef:` keywords.
constexpr std::array<std::string_view, 8> structure_keywords = {
    "type", "properties", "required", "items", "prefixItems", "minItems", "maxItems", "additionalProperties"};

// §4.2 combinators: their subschemas may hold value keywords, annotations
// and `type` only. `contains` is a value keyword whose subschema constrains
// values only, so it is held to the same rule.
constexpr std::array<std::string_view, 3> combinator_arrays = {"allOf", "anyOf", "oneOf"};
constexpr std::array<std::string_view, 5> combinator_schemas = {"not", "if", "then", "else", "contains"};

constexpr std::string_view typedef_prefix = "TypeDef:";
constexpr std::string_view kw_struct = "TypeDef:Struct";
constexpr std::string_view kw_string = "TypeDef:String";
constexpr std::string_view kw_list = "TypeDef:List";
constexpr std::string_view kw_align = "TypeDef:Align";

bool is_typedef(std::string_view k) noexcept {
  return k.substr(0, typedef_prefix.size()) == typedef_prefix;
}

// The JSON `type` values a scalar leaf may carry (§4.4 table).
enum type_bits : unsigned {
  t_boolean = 1U,
  t_integer = 2U,
  t_number = 4U,
  t_array = 8U,
  t_object = 16U,
  t_string = 32U
};

struct scalar_keyword {
  std::string_view name;
  dtype type;
  unsigned types;
};

// §4.4 scalar keywords.
constexpr std::array<scalar_keyword, 22> scalar_keywords = {{
    {"TypeDef:Bool", dtype::boolean, t_boolean},
    {"TypeDef:Int8", dtype::i8, t_integer | t_number},
    {"TypeDef:Uint8", dtype::u8, t_integer | t_number},
    {"TypeDef:Int16", dtype::i16, t_integer | t_number},
    {"TypeDef:Uint16", dtype::u16, t_integer | t_number},
    {"TypeDef:Int32", dtype::i32, t_integer | t_number},
    {"TypeDef:Uint32", dtype::u32, t_integer | t_number},
    {"TypeDef:Int64", dtype::i64, t_integer | t_number},
    {"TypeDef:Uint64", dtype::u64, t_integer | t_number},
    {"TypeDef:Float16", dtype::f16, t_integer | t_number},
    {"TypeDef:BFloat16", dtype::bf16, t_integer | t_number},
    {"TypeDef:Float32", dtype::f32, t_integer | t_number},
    {"TypeDef:Float64", dtype::f64, t_integer | t_number},
    {"TypeDef:Complex64", dtype::c64, t_array},
    {"TypeDef:Float8E4M3", dtype::f8_e4m3, t_number},
    {"TypeDef:Float8E5M2", dtype::f8_e5m2, t_number},
    {"TypeDef:Float8E8M0", dtype::f8_e8m0, t_number},
    {"TypeDef:Float8E4M3FNUZ", dtype::f8_e4m3fnuz, t_number},
    {"TypeDef:Float8E5M2FNUZ", dtype::f8_e5m2fnuz, t_number},
    {"TypeDef:Float4E2M1", dtype::f4, t_number},
    {"TypeDef:Float6E2M3", dtype::f6_e2m3, t_number},
    {"TypeDef:Float6E3M2", dtype::f6_e3m2, t_number},
}};

const scalar_keyword* find_scalar(std::string_view k) noexcept {
  for (const auto& s : scalar_keywords) {
    if (s.name == k) return &s;
  }
  return nullptr;
}

bool known_typedef(std::string_view k) noexcept {
  return find_scalar(k) != nullptr || k == kw_struct || k == kw_string || k == kw_list || k == kw_align;
}

bool sub_byte(dtype t) noexcept {
  return t == dtype::f4 || t == dtype::f6_e2m3 || t == dtype::f6_e3m2;
}

// ---------------------------------------------------------------------------
// Pass 1: the dialect walk.

struct schema_index {
  std::map<std::string, const json*> nodes;               // every schema location
  std::map<std::string, std::vector<std::string>> ids;    // `$id` -> locations
  std::map<std::string, std::vector<std::string>> edges;  // applied subschemas (not `$defs`)
  std::map<std::string, std::string> ref_target;          // `$ref` location -> target location
  std::vector<std::pair<std::string, std::string>> refs;  // (location, `$ref` value)
};

class dialect_walker {
 public:
  explicit dialect_walker(schema_index& index) : index_(index) {}

  void walk(const json& node, const std::string& ptr, bool value_only, std::size_t depth) {
    if (depth > max_schema_depth) {
      fail(errc::mt_limit, ptr,
           "schema nested deeper than " + std::to_string(max_schema_depth) + " levels (§8.4)");
    }
    index_.nodes.emplace(ptr, &node);
    if (node.is_boolean()) return;  // boolean schemas are allowed as subschemas
    if (!node.is_object())
      fail(errc::mt_schema_dialect, ptr, "a schema must be an object or a boolean (§4.1)");

    // Unknown binary keywords fail closed (§4.3), before anything else.
    for (const auto& [k, v] : node.items()) {
      if (is_typedef(k) && !known_typedef(k))
        fail(errc::mt_unknown_typedef, ptr, "unknown keyword " + detail::quoted(k) + " (§4.3)");
    }
    for (const auto& [k, v] : node.items()) check_keyword(node, ptr, k, v, value_only);

    if (auto it = node.find("$id"); it != node.end() && it->is_string()) {
      index_.ids[it->get<std::string>()].push_back(ptr);
    }
    if (auto it = node.find("$ref"); it != node.end()) {
      if (!it->is_string()) fail(errc::mt_schema_dialect, ptr, "$ref must be a string (§4.3)");
      index_.refs.emplace_back(ptr, it->get<std::string>());
    }

    // Applied subschemas.
    auto& out = index_.edges[ptr];
    if (auto it = node.find("properties"); it != node.end()) {
      if (!it->is_object()) fail(errc::mt_schema_dialect, ptr, "properties must be an object");
      const std::string base = child(ptr, "properties");
      for (const auto& [k, v] : it->items()) {
        out.push_back(child(base, k));
        walk(v, out.back(), false, depth + 1);
      }
    }
    if (auto it = node.find("items"); it != node.end()) {
      out.push_back(child(ptr, "items"));
      walk(*it, out.back(), false, depth + 1);
    }
    if (auto it = node.find("prefixItems"); it != node.end()) {
      if (!it->is_array()) fail(errc::mt_schema_dialect, ptr, "prefixItems must be an array");
      const std::string base = child(ptr, "prefixItems");
      for (std::size_t i = 0; i < it->size(); ++i) {
        out.push_back(child(base, i));
        walk((*it)[i], out.back(), false, depth + 1);
      }
    }
    for (auto kw : combinator_arrays) {
      auto it = node.find(kw);
      if (it == node.end()) continue;
      if (!it->is_array() || it->empty())
        fail(errc::mt_schema_dialect, ptr, detail::quoted(kw) + " must be a non-empty array");
      const std::string base = child(ptr, kw);
      for (std::size_t i = 0; i < it->size(); ++i) {
        out.push_back(child(base, i));
        walk((*it)[i], out.back(), true, depth + 1);
      }
    }
    for (auto kw : combinator_schemas) {
      auto it = node.find(kw);
      if (it == node.end()) continue;
      out.push_back(child(ptr, kw));
      walk(*it, out.back(), true, depth + 1);
    }
    // `$defs` are definitions, not applied: no edge, and the usual context.
    if (auto it = node.find("$defs"); it != node.end()) {
      if (!it->is_object()) fail(errc::mt_schema_dialect, ptr, "$defs must be an object");
      const std::string base = child(ptr, "$defs");
      for (const auto& [k, v] : it->items()) walk(v, child(base, k), false, depth + 1);
    }
  }

 private:
  static void check_keyword(const json& node, const std::string& ptr, const std::string& k, const json& v,
                            bool value_only) {
    if (in(rejected_keywords, k))
      fail(errc::mt_schema_dialect, ptr, "keyword " + detail::quoted(k) + " is not allowed (§4.3)");
    if (k == "$schema" && !(v.is_string() && v.get<std::string>() == schema_dialect_uri)) {
      fail(errc::mt_schema_dialect, ptr, "$schema must be " + detail::quoted(schema_dialect_uri) + " (§4.1)");
    }
    if (k == "additionalProperties" && !(v.is_boolean() && !v.get<bool>())) {
      fail(errc::mt_schema_dialect, ptr, "additionalProperties must be false (§4.3)");
    }
    if (k == "items" && v.is_array()) {
      fail(errc::mt_schema_dialect, ptr,
           "items must be a single schema, not an array; use prefixItems (§4.3)");
    }
    const bool structure = in(structure_keywords, k) || is_typedef(k) || k == "$ref";
    if (value_only && structure && k != "type") {
      fail(errc::mt_schema_dialect, ptr,
           "structure keyword " + detail::quoted(k) +
               " inside a combinator subschema (§4.2: only value keywords, "
               "annotations and type)");
    }
    if (k != "$ref" && node.contains("$ref") && structure && k != kw_align) {
      fail(errc::mt_schema_dialect, ptr, "structure keyword " + detail::quoted(k) + " next to $ref (§4.3)");
    }
  }

  schema_index& index_;
};

// Decodes a `$ref` fragment (after '#') to a canonical JSON Pointer: %XX
// escapes first (URI fragment), then RFC 6901 ~0/~1. nullopt if malformed.
std::optional<std::string> fragment_pointer(std::string_view frag) {
  std::string decoded;
  for (std::size_t i = 0; i < frag.size(); ++i) {
    if (frag[i] != '%') {
      decoded += frag[i];
      continue;
    }
    if (i + 2 >= frag.size()) return std::nullopt;
    auto hex = [](char c) -> int {
      if (c >= '0' && c <= '9') return c - '0';
      if (c >= 'a' && c <= 'f') return c - 'a' + 10;
      if (c >= 'A' && c <= 'F') return c - 'A' + 10;
      return -1;
    };
    const int hi = hex(frag[i + 1]);
    const int lo = hex(frag[i + 2]);
    if (hi < 0 || lo < 0) return std::nullopt;
    decoded += static_cast<char>(hi * 16 + lo);
    i += 2;
  }
  if (decoded.empty()) return std::string{};
  if (decoded.front() != '/') return std::nullopt;
  std::string out;
  std::size_t pos = 1;
  while (true) {
    const std::size_t end = decoded.find('/', pos);
    const std::string_view raw =
        std::string_view(decoded).substr(pos, end == std::string::npos ? std::string::npos : end - pos);
    std::string token;
    for (std::size_t i = 0; i < raw.size(); ++i) {
      if (raw[i] != '~') {
        token += raw[i];
      } else if (i + 1 < raw.size() && (raw[i + 1] == '0' || raw[i + 1] == '1')) {
        token += raw[i + 1] == '0' ? '~' : '/';
        ++i;
      } else {
        return std::nullopt;
      }
    }
    out += '/';
    out += detail::pointer_token(token);
    if (end == std::string::npos) break;
    pos = end + 1;
  }
  return out;
}

// Pass 2a: resolves every `$ref` to a schema location (§4.3; nothing fetched).
void resolve_refs(schema_index& index) {
  for (const auto& [ptr, ref] : index.refs) {
    std::optional<std::string> target;
    if (!ref.empty() && ref.front() == '#') {
      if (auto p = fragment_pointer(std::string_view(ref).substr(1)); p && index.nodes.count(*p) != 0)
        target = p;
    }
    if (!target) {
      if (auto it = index.ids.find(ref); it != index.ids.end()) {
        if (it->second.size() != 1) {
          fail(errc::mt_schema_dialect, ptr,
               "$ref " + detail::quoted(ref) + " matches the $id of several subschemas");
        }
        target = it->second.front();
      }
    }
    if (!target) {
      fail(errc::mt_schema_dialect, ptr,
           "$ref " + detail::quoted(ref) +
               " is neither a JSON Pointer fragment to a subschema of this document nor the $id of one "
               "(§4.3)");
    }
    index.ref_target[ptr] = *target;
  }
}

// Pass 2b: reference cycles (§4.3) and effective nesting depth (§8.4) over
// the graph of applied subschemas plus `$ref` edges. Heights are memoised,
// so shared definitions are visited once; the recursion is bounded by the
// depth limit.
class cycle_checker {
 public:
  explicit cycle_checker(const schema_index& index) : index_(index) {}

  void run() {
    for (const auto& [ptr, node] : index_.nodes) visit(ptr, 1);
  }

 private:
  std::size_t visit(const std::string& ptr, std::size_t depth) {
    if (auto it = height_.find(ptr); it != height_.end()) {
      if (it->second == 0) return 0;  // grey: reported by the caller
      if (depth - 1 + it->second > max_schema_depth) too_deep(ptr);
      return it->second;
    }
    if (depth > max_schema_depth) too_deep(ptr);
    height_[ptr] = 0;  // grey
    std::size_t h = 0;
    auto step = [&](const std::string& next) {
      auto it = height_.find(next);
      if (it != height_.end() && it->second == 0) {
        fail(errc::mt_schema_dialect, ptr, "reference cycle through " + detail::quoted(next) + " (§4.3)");
      }
      h = std::max(h, visit(next, depth + 1));
    };
    if (auto it = index_.edges.find(ptr); it != index_.edges.end()) {
      for (const auto& next : it->second) step(next);
    }
    if (auto it = index_.ref_target.find(ptr); it != index_.ref_target.end()) step(it->second);
    height_[ptr] = h + 1;
    return h + 1;
  }

  [[noreturn]] static void too_deep(const std::string& ptr) {
    fail(errc::mt_limit, ptr,
         "schema nested deeper than " + std::to_string(max_schema_depth) + " levels through $ref (§8.4)");
  }

  const schema_index& index_;
  std::map<std::string, std::size_t> height_;  // 0 while on the current path
};

schema_index check_dialect(const json& document) {
  schema_index index;
  dialect_walker(index).walk(document, "", false, 1);  // the root is level 1
  resolve_refs(index);
  cycle_checker(index).run();
  return index;
}

// ---------------------------------------------------------------------------
// Pass 3: kinds and layout.

enum class node_kind : std::uint8_t { boolean, scalar, structure, tuple, string, list, array, other };

struct classified {
  node_kind kind = node_kind::other;
  const scalar_keyword* scalar = nullptr;
};

// A node after following `$ref`, with the largest `TypeDef:Align` met on the way.
struct resolved {
  const json* node = nullptr;
  std::string ptr;
  std::uint64_t align = 1;
  std::optional<std::string> align_ptr;  // first node carrying TypeDef:Align
};

// A non-negative integer written without fraction (parsed JSON holds it
// unsigned, JSON built in C++ from an `int` signed), or 0.
std::uint64_t non_negative_integer(const json& v) noexcept {
  if (v.is_number_unsigned()) return v.get<std::uint64_t>();
  if (v.is_number_integer() && v.get<std::int64_t>() >= 0)
    return static_cast<std::uint64_t>(v.get<std::int64_t>());
  return 0;
}

std::uint64_t read_uint(const json& v, const std::string& ptr, std::string_view kw) {
  if (v.is_number_unsigned()) return v.get<std::uint64_t>();
  if (v.is_number_integer() && v.get<std::int64_t>() >= 0)
    return static_cast<std::uint64_t>(v.get<std::int64_t>());
  // JSON Schema counts 3.0 as an integer; bounded so the cast is exact.
  if (v.is_number_float()) {
    const double d = v.get<double>();
    if (d >= 0 && d <= static_cast<double>(safetensors::max_json_integer) &&
        d == static_cast<double>(static_cast<std::uint64_t>(d))) {
      return static_cast<std::uint64_t>(d);
    }
  }
  fail(errc::mt_schema_type, ptr, detail::quoted(kw) + " must be a non-negative integer");
}

// `type` absent, one allowed name, or an array of allowed names (§4.4).
void check_type(const json& node, const std::string& ptr, unsigned allowed) {
  auto it = node.find("type");
  if (it == node.end()) return;
  auto ok = [allowed](const json& t) {
    if (!t.is_string()) return false;
    const auto& s = t.get_ref<const std::string&>();
    unsigned bit = 0;
    if (s == "boolean") bit = t_boolean;
    if (s == "integer") bit = t_integer;
    if (s == "number") bit = t_number;
    if (s == "array") bit = t_array;
    if (s == "object") bit = t_object;
    if (s == "string") bit = t_string;
    return (bit & allowed) != 0;
  };
  bool good = ok(*it);
  if (it->is_array()) {
    good = !it->empty() && std::all_of(it->begin(), it->end(), ok);
  }
  if (!good) fail(errc::mt_schema_type, ptr, "\"type\" " + it->dump() + " is not allowed here (§4.4)");
}

void require_true(const json& node, const std::string& ptr, std::string_view kw) {
  const json& v = node.at(std::string(kw));
  if (!(v.is_boolean() && v.get<bool>()))
    fail(errc::mt_schema_type, ptr, detail::quoted(kw) + " must be true (§4.4)");
}

void forbid(const json& node, const std::string& ptr, std::string_view what,
            std::initializer_list<std::string_view> keywords) {
  for (auto kw : keywords) {
    if (node.contains(std::string(kw)))
      fail(errc::mt_schema_type, ptr, std::string(what) + " must not carry " + detail::quoted(kw));
  }
}

std::size_t nested_fields(const type_layout& t, const std::map<const record_layout*, std::size_t>& counts) {
  if (t.type == value_type::record) return counts.at(t.record.get());
  if (t.type == value_type::list) return nested_fields(*t.elem, counts);
  return 0;
}

class compiler {
 public:
  explicit compiler(const schema_index& index) : index_(index) {}

  tensor_layout compile_tensor(const std::string& name) {
    tensor_layout out;
    out.name = name;
    resolved cur = resolve(child("/properties", name));
    out.root_align = cur.align;  // §4.4: TypeDef:Align on a root property
    classified c = classify(cur);
    // §5.1: arrays whose `items` is an object schema are dimensions.
    while (c.kind == node_kind::array && cur.node->at("items").is_object()) {
      check_type(*cur.node, cur.ptr, t_array);
      dimension_bounds b;
      if (auto it = cur.node->find("minItems"); it != cur.node->end())
        b.min = read_uint(*it, cur.ptr, "minItems");
      if (auto it = cur.node->find("maxItems"); it != cur.node->end())
        b.max = read_uint(*it, cur.ptr, "maxItems");
      out.dims.push_back(b);
      if (out.dims.size() > safetensors::max_rank) fail(errc::mt_limit, cur.ptr, "rank above 32 (§8.4)");
      cur = resolve(child(cur.ptr, "items"));
      no_align(cur);
      c = classify(cur);
    }
    switch (c.kind) {
      case node_kind::scalar:
        check_scalar(cur, c);
        out.kind = tensor_kind::flat;
        out.flat_dtype = c.scalar->type;
        break;
      case node_kind::structure:
      case node_kind::tuple:
        out.kind = tensor_kind::record;
        out.record = record_of(cur, c);
        out.has_heap = out.record->has_blobs();
        break;
      case node_kind::string:
      case node_kind::list:
        out.kind = tensor_kind::blob;
        out.item = compile_type_at(cur, c);
        out.has_heap = true;
        break;
      default:
        fail(errc::mt_schema_type, cur.ptr,
             "the element of logical tensor " + detail::quoted(name) +
                 " is not a scalar leaf, struct, tuple, String or List (§5.1)");
    }
    return out;
  }

 private:
  resolved resolve(std::string ptr) {
    resolved r;
    while (true) {
      const json& node = *index_.nodes.at(ptr);
      if (node.is_object()) {
        if (auto it = node.find(std::string(kw_align)); it != node.end()) {
          const std::uint64_t a = non_negative_integer(*it);
          if (!is_pow2(a) || a > 65536) {
            fail(errc::mt_schema_type, ptr,
                 "TypeDef:Align must be a power of two between 1 and 65536 (§4.4)");
          }
          r.align = std::max(r.align, a);
          if (!r.align_ptr) r.align_ptr = ptr;
        }
        if (auto it = index_.ref_target.find(ptr); it != index_.ref_target.end()) {
          ptr = it->second;  // finite: cycles were rejected
          continue;
        }
      }
      r.node = &node;
      r.ptr = std::move(ptr);
      return r;
    }
  }

  // The `default` annotation of a field (§11.3): the nearest one along the
  // `$ref` chain, so a referencing node can override its target's.
  std::optional<json> default_along_refs(std::string ptr) const {
    while (true) {
      const json& node = *index_.nodes.at(ptr);
      if (!node.is_object()) return std::nullopt;
      if (auto it = node.find("default"); it != node.end()) return *it;
      const auto ref = index_.ref_target.find(ptr);
      if (ref == index_.ref_target.end()) return std::nullopt;
      ptr = ref->second;  // finite: cycles were rejected
    }
  }

  static void no_align(const resolved& r) {
    if (r.align_ptr) {
      fail(errc::mt_schema_type, *r.align_ptr,
           "TypeDef:Align is only allowed on a struct field, a tuple element or a root property (§4.4)");
    }
  }

  static classified classify(const resolved& r) {
    const json& n = *r.node;
    if (n.is_boolean()) return {node_kind::boolean, nullptr};
    std::optional<std::string> kind_kw;
    for (const auto& [k, v] : n.items()) {
      if (!is_typedef(k) || k == kw_align) continue;
      if (kind_kw)
        fail(errc::mt_schema_type, r.ptr,
             "carries both " + detail::quoted(*kind_kw) + " and " + detail::quoted(k) + " (§4.4)");
      kind_kw = k;
    }
    if (kind_kw) {
      if (const auto* s = find_scalar(*kind_kw)) return {node_kind::scalar, s};
      if (*kind_kw == kw_struct) return {node_kind::structure, nullptr};
      if (*kind_kw == kw_string) return {node_kind::string, nullptr};
      return {node_kind::list, nullptr};
    }
    if (n.contains("prefixItems")) return {node_kind::tuple, nullptr};
    if (n.contains("items")) return {node_kind::array, nullptr};
    return {node_kind::other, nullptr};
  }

  static void check_scalar(const resolved& r, const classified& c) {
    require_true(*r.node, r.ptr, c.scalar->name);
    forbid(*r.node, r.ptr, "a scalar leaf", {"properties", "items", "prefixItems"});
    check_type(*r.node, r.ptr, c.scalar->types);
  }

  // A type inside a record or a List (§4.4, §4.5, §6.1); `r` already resolved.
  type_layout compile_type_at(const resolved& r, const classified& c) {
    type_layout t;
    switch (c.kind) {
      case node_kind::scalar: {
        check_scalar(r, c);
        if (sub_byte(c.scalar->type)) {
          fail(errc::mt_schema_type, r.ptr,
               detail::quoted(c.scalar->name) + " is a sub-byte type, allowed in flat tensors only (§4.4)");
        }
        t.type = value_type::scalar;
        t.scalar = c.scalar->type;
        t.size = safetensors::dtype_bits(t.scalar) / 8;
        t.align = safetensors::dtype_alignment(t.scalar);
        return t;
      }
      case node_kind::structure:
      case node_kind::tuple: {
        t.type = value_type::record;
        t.record = record_of(r, c);
        t.size = t.record->size;
        t.align = t.record->align;
        return t;
      }
      case node_kind::string:
        require_true(*r.node, r.ptr, kw_string);
        check_type(*r.node, r.ptr, t_string);
        forbid(*r.node, r.ptr, "a TypeDef:String node", {"properties", "items", "prefixItems"});
        t.type = value_type::string;
        t.size = 16;  // BlobRef (§6.4)
        t.align = 8;
        return t;
      case node_kind::list: {
        require_true(*r.node, r.ptr, kw_list);
        check_type(*r.node, r.ptr, t_array);
        forbid(*r.node, r.ptr, "a TypeDef:List node", {"properties", "prefixItems"});
        if (!r.node->contains("items")) fail(errc::mt_schema_type, r.ptr, "TypeDef:List needs items (§4.4)");
        const resolved e = resolve(child(r.ptr, "items"));
        no_align(e);
        type_layout elem = compile_type_at(e, classify(e));
        if (elem.has_blobs()) {
          fail(errc::mt_schema_type, e.ptr,
               "a List element must be fixed-size: no String or List anywhere inside (§4.4)");
        }
        t.type = value_type::list;
        t.elem = std::make_shared<const type_layout>(std::move(elem));
        t.size = 16;
        t.align = 8;
        return t;
      }
      case node_kind::array: {
        // §4.5 fixed array: minItems == maxItems == n >= 1.
        check_type(*r.node, r.ptr, t_array);
        const json& n = *r.node;
        const auto mn = n.find("minItems");
        const auto mx = n.find("maxItems");
        std::uint64_t len = 0;
        if (mn != n.end() && mx != n.end()) {
          len = read_uint(*mn, r.ptr, "minItems");
          if (read_uint(*mx, r.ptr, "maxItems") != len) len = 0;
        }
        if (len == 0) {
          fail(errc::mt_schema_type, r.ptr,
               "an array inside a record or List must be a fixed array (minItems == maxItems >= 1), a tuple "
               "or a TypeDef:List (§4.5)");
        }
        const resolved e = resolve(child(r.ptr, "items"));
        no_align(e);
        t = compile_type_at(e, classify(e));
        if (len > max_record_size / t.size) {
          fail(errc::mt_limit, r.ptr, "fixed array larger than 2^24 bytes (§6.2, §8.4)");
        }
        t.shape.insert(t.shape.begin(), len);
        t.size *= len;
        return t;
      }
      default:
        fail(errc::mt_schema_type, r.ptr,
             "not a scalar leaf, struct, tuple, fixed array, String or List (§4.4, §4.5)");
    }
  }

  // One field: resolves the node, takes its TypeDef:Align (§6.2).
  std::pair<type_layout, std::uint64_t> compile_field(const std::string& ptr) {
    const resolved r = resolve(ptr);
    return {compile_type_at(r, classify(r)), r.align};
  }

  std::shared_ptr<const record_layout> record_of(const resolved& r, const classified& c) {
    if (auto it = records_.find(r.ptr); it != records_.end()) return it->second;
    auto rec = c.kind == node_kind::structure ? compile_struct(r) : compile_tuple(r);
    std::size_t count = 0;
    for (const auto& f : rec->fields) {
      count += 1 + nested_fields(f.type, field_counts_);  // each term <= max_record_fields
      if (count > max_record_fields) {
        fail(errc::mt_limit, r.ptr,
             "record with more than 65,536 fields, counting nested fields (§6.2, §8.4)");
      }
    }
    field_counts_[rec.get()] = count;
    records_.emplace(r.ptr, rec);
    return rec;
  }

  std::shared_ptr<const record_layout> compile_struct(const resolved& r) {
    const json& n = *r.node;
    std::uint64_t struct_align = 1;
    const json& v = n.at(std::string(kw_struct));
    if (v.is_object()) {
      const auto a = v.find("align");
      const std::uint64_t av = a != v.end() ? non_negative_integer(*a) : 0;
      if (v.size() != 1 || !is_pow2(av) || av > 4096) {
        fail(errc::mt_schema_type, r.ptr,
             "TypeDef:Struct must be true or {\"align\": n}, n a power of two between 1 and 4096 (§4.4)");
      }
      struct_align = av;
    } else if (!(v.is_boolean() && v.get<bool>())) {
      fail(errc::mt_schema_type, r.ptr, "TypeDef:Struct must be true or {\"align\": n} (§4.4)");
    }
    check_type(n, r.ptr, t_object);
    forbid(n, r.ptr, "a TypeDef:Struct node", {"items", "prefixItems"});
    const auto props = n.find("properties");
    if (props == n.end() || props->empty()) {
      fail(errc::mt_schema_type, r.ptr, "TypeDef:Struct needs properties with at least one member (§4.4)");
    }
    const auto req = n.find("required");
    if (req == n.end() || !req->is_array()) {
      fail(errc::mt_schema_type, r.ptr, "TypeDef:Struct needs required listing every property (§4.4)");
    }
    if (req->size() > max_record_fields) {
      fail(errc::mt_limit, r.ptr, "record with more than 65,536 fields (§6.2, §8.4)");
    }
    std::set<std::string> seen;
    for (const auto& f : *req) {
      if (!f.is_string() || !props->contains(f.get<std::string>())) {
        fail(errc::mt_schema_type, r.ptr, "required entry " + f.dump() + " is not a property (§4.4)");
      }
      if (!seen.insert(f.get<std::string>()).second) {
        fail(errc::mt_schema_type, r.ptr, "required lists " + f.dump() + " twice (§4.4)");
      }
    }
    for (const auto& [k, s] : props->items()) {
      if (seen.count(k) == 0) {
        fail(errc::mt_schema_type, r.ptr,
             "property " + detail::quoted(k) + " is missing from required (§4.4)");
      }
    }
    std::vector<std::string> names;
    for (const auto& f : *req) names.push_back(f.get<std::string>());  // field order = required order
    const std::string base = child(r.ptr, "properties");
    return lay_out(
        r.ptr, names, [&](std::size_t i) { return child(base, names[i]); }, struct_align, false);
  }

  std::shared_ptr<const record_layout> compile_tuple(const resolved& r) {
    const json& n = *r.node;
    check_type(n, r.ptr, t_array);
    forbid(n, r.ptr, "a tuple", {"properties"});
    const json& items = n.at("prefixItems");
    const std::size_t k = items.size();
    if (k == 0) fail(errc::mt_schema_type, r.ptr, "a tuple needs at least one prefixItems schema (§4.5)");
    const auto it = n.find("items");
    if (it == n.end() || !(it->is_boolean() && !it->get<bool>())) {
      fail(errc::mt_schema_type, r.ptr, "a tuple must have \"items\": false (§4.5)");
    }
    for (auto kw : {"minItems", "maxItems"}) {
      if (auto m = n.find(kw); m != n.end() && read_uint(*m, r.ptr, kw) != k) {
        fail(errc::mt_schema_type, r.ptr,
             std::string(kw) + " of a tuple must equal the prefixItems count (§4.5)");
      }
    }
    if (k > max_record_fields) fail(errc::mt_limit, r.ptr, "record with more than 65,536 fields (§8.4)");
    std::vector<std::string> names;
    for (std::size_t i = 0; i < k; ++i) names.push_back(std::to_string(i));
    const std::string base = child(r.ptr, "prefixItems");
    return lay_out(
        r.ptr, names, [&](std::size_t i) { return child(base, i); }, 1, true);
  }

  // §6.2: the C record rule. Every intermediate value stays below
  // 2^24 + 2^16 (each type is at most 2^24 bytes, alignments at most 2^16).
  template <class PtrOf>
  std::shared_ptr<const record_layout> lay_out(const std::string& ptr, const std::vector<std::string>& names,
                                               PtrOf ptr_of, std::uint64_t struct_align, bool tuple) {
    auto rec = std::make_shared<record_layout>();
    rec->tuple = tuple;
    rec->align = struct_align;
    std::uint64_t cursor = 0;
    for (std::size_t i = 0; i < names.size(); ++i) {
      const std::string field_ptr = ptr_of(i);
      auto [type, raised] = compile_field(field_ptr);
      const std::uint64_t fa = std::max(type.align, raised);
      field_layout f;
      f.name = names[i];
      f.default_value = default_along_refs(field_ptr);
      f.offset = detail::align_up(cursor, fa);
      cursor = f.offset + type.size;
      if (cursor > max_record_size) fail(errc::mt_limit, ptr, "record larger than 2^24 bytes (§6.2, §8.4)");
      rec->align = std::max(rec->align, fa);
      f.type = std::move(type);
      rec->fields.push_back(std::move(f));
    }
    rec->size = detail::align_up(cursor, rec->align);
    if (rec->size > max_record_size) fail(errc::mt_limit, ptr, "record larger than 2^24 bytes (§6.2, §8.4)");
    return rec;
  }

  const schema_index& index_;
  std::map<std::string, std::shared_ptr<const record_layout>> records_;
  std::map<const record_layout*, std::size_t> field_counts_;
};

// §3.2 logical tensor names.
void check_name(const std::string& name, const std::string& ptr) {
  if (name.empty()) fail(errc::mt_schema_name, ptr, "a logical tensor name must not be empty (§3.2)");
  if (name.rfind("__", 0) == 0)
    fail(errc::mt_schema_name, ptr, "logical tensor name must not begin with \"__\" (§3.2)");
  if (name.find('#') != std::string::npos) {
    fail(errc::mt_schema_name, ptr, "logical tensor name must not contain '#' (§3.2)");
  }
}

// Follows the `$ref` chain of a validated document.
const json& follow_refs(const schema_index& index, std::string ptr) {
  for (auto it = index.ref_target.find(ptr); it != index.ref_target.end(); it = index.ref_target.find(ptr)) {
    ptr = it->second;
  }
  return *index.nodes.at(ptr);
}

}  // namespace

// ---------------------------------------------------------------------------

std::string_view scalar_typedef_keyword(dtype t) noexcept {
  for (const auto& s : scalar_keywords) {
    if (s.type == t) return s.name;
  }
  return {};
}

nlohmann::json scalar_schema(dtype t) {
  for (const auto& s : scalar_keywords) {
    if (s.type != t) continue;
    // The first `type` the §4.4 table allows, in the table's order.
    const char* type = (s.types & t_boolean) ? "boolean"
                       : (t == dtype::f16 || t == dtype::bf16 || t == dtype::f32 || t == dtype::f64 ||
                          (s.types & t_integer) == 0)
                           ? ((s.types & t_array) ? "array" : "number")
                           : "integer";
    return {{"type", type}, {std::string(s.name), true}};
  }
  throw tensogram::invalid_arg_error("no scalar TypeDef keyword for this dtype");
}

std::string_view kind_name(tensor_kind k) noexcept {
  switch (k) {
    case tensor_kind::flat: return "flat";
    case tensor_kind::record: return "struct";
    case tensor_kind::blob: return "blob";
  }
  return "flat";
}

std::uint64_t type_layout::element_size() const noexcept {
  switch (type) {
    case value_type::scalar: return safetensors::dtype_bits(scalar) / 8;
    case value_type::record: return record ? record->size : 0;
    case value_type::string:
    case value_type::list: return 16;
  }
  return 0;
}

bool type_layout::has_blobs() const noexcept {
  switch (type) {
    case value_type::scalar: return false;
    case value_type::record: return record && record->has_blobs();
    case value_type::string:
    case value_type::list: return true;
  }
  return false;
}

const field_layout* record_layout::find(std::string_view name) const noexcept {
  for (const auto& f : fields) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

bool record_layout::has_blobs() const noexcept {
  return std::any_of(fields.begin(), fields.end(), [](const field_layout& f) { return f.type.has_blobs(); });
}

std::string tensor_layout::heap_name() const {
  return name + "#heap";
}

dtype tensor_layout::primary_dtype() const noexcept {
  return kind == tensor_kind::flat ? flat_dtype : dtype::u8;
}

std::optional<std::uint64_t> tensor_layout::trailing_dim() const noexcept {
  switch (kind) {
    case tensor_kind::flat: return std::nullopt;
    case tensor_kind::record: return record ? record->size : 0;
    case tensor_kind::blob: return 16;
  }
  return std::nullopt;
}

std::uint64_t tensor_layout::primary_element_align() const noexcept {
  switch (kind) {
    case tensor_kind::flat: return safetensors::dtype_alignment(flat_dtype);
    case tensor_kind::record: return record ? record->align : 1;
    case tensor_kind::blob: return 8;  // BlobRef index
  }
  return 1;
}

namespace {
// §6.5: the largest align(E) over the List types reachable from a type.
// The expanded tree is bounded by the field limit checked at compile time.
std::uint64_t list_align(const type_layout& t) noexcept {
  switch (t.type) {
    case value_type::list: return t.elem ? t.elem->align : 1;
    case value_type::record: {
      std::uint64_t a = 1;
      if (t.record) {
        for (const auto& f : t.record->fields) a = std::max(a, list_align(f.type));
      }
      return a;
    }
    default: return 1;
  }
}
}  // namespace

std::uint64_t tensor_layout::heap_element_align() const noexcept {
  switch (kind) {
    case tensor_kind::flat: return 1;
    case tensor_kind::record: {
      std::uint64_t a = 1;
      if (record) {
        for (const auto& f : record->fields) a = std::max(a, list_align(f.type));
      }
      return a;
    }
    case tensor_kind::blob: return list_align(item);
  }
  return 1;
}

std::uint64_t tensor_layout::primary_placement(std::uint64_t file_alignment) const noexcept {
  return std::max({file_alignment, primary_element_align(), root_align});
}

std::uint64_t tensor_layout::heap_placement(std::uint64_t file_alignment) const noexcept {
  return std::max({file_alignment, heap_element_align(), root_align});
}

const tensor_layout* compiled_schema::find(std::string_view name) const noexcept {
  const auto it = tensors_.find(std::string(name));
  return it == tensors_.end() ? nullptr : &it->second;
}

const nlohmann::json& compiled_schema::property_schema(std::string_view name) const {
  if (tensors_.count(std::string(name)) == 0) {
    throw tensogram::invalid_arg_error("schema has no root property " + detail::quoted(name));
  }
  // The document was validated at compile time: the walk cannot fail.
  const schema_index index = check_dialect(document_);
  return follow_refs(index, child("/properties", name));
}

compiled_schema compile_schema(nlohmann::json document) {
  compiled_schema out;
  out.document_ = std::move(document);
  const json& doc = out.document_;

  // §4.1 first: a document in another dialect is not interpreted further.
  if (doc.is_object()) {
    if (auto it = doc.find("$schema");
        it != doc.end() && !(it->is_string() && it->get_ref<const std::string&>() == schema_dialect_uri)) {
      fail(errc::mt_schema_dialect, "", "$schema must be " + detail::quoted(schema_dialect_uri) + " (§4.1)");
    }
  }
  if (!doc.is_object()) fail(errc::mt_schema_type, "", "the root schema must be an object (§4.6)");

  // §8.4, before any per-node work: the tensor count bounds everything else.
  if (auto p = doc.find("properties"); p != doc.end() && p->is_object() && p->size() > max_logical_tensors) {
    fail(errc::mt_limit, "/properties", "more than 2^20 logical tensors (§8.4)");
  }
  const schema_index index = check_dialect(doc);

  // §4.6 the root.
  if (auto t = doc.find("type");
      t == doc.end() || !(t->is_string() && t->get_ref<const std::string&>() == "object")) {
    fail(errc::mt_schema_type, "", "the root must have \"type\": \"object\" (§4.6)");
  }
  for (const auto& [k, v] : doc.items()) {
    if (is_typedef(k))
      fail(errc::mt_schema_type, "", "the root must not carry " + detail::quoted(k) + " (§4.6)");
  }
  const auto props = doc.find("properties");
  if (props == doc.end()) fail(errc::mt_schema_type, "", "the root must have properties (§4.6)");
  if (auto req = doc.find("required"); req != doc.end()) {
    if (!req->is_array())
      fail(errc::mt_schema_type, "/required", "required must be an array of property names");
    for (const auto& r : *req) {
      if (!r.is_string() || !props->contains(r.get<std::string>())) {
        fail(errc::mt_schema_type, "/required",
             "required entry " + r.dump() + " is not a root property (§4.6)");
      }
      out.required_.insert(r.get<std::string>());
    }
  }

  compiler c(index);
  for (const auto& [name, schema] : props->items()) {
    check_name(name, child("/properties", name));
    out.tensors_.emplace(name, c.compile_tensor(name));
  }
  return out;
}

compiled_schema compile_schema_text(std::string_view text) {
  json doc = parse_strict_json(text, json_errors{errc::mt_schema_json, errc::mt_schema_json, "schema"});
  if (const std::string big = first_oversized_integer(doc); !big.empty()) {
    throw error(errc::mt_schema_json, "schema: integer " + big + " exceeds 2^53 - 1 (§3.1)");
  }
  return compile_schema(std::move(doc));
}

}  // namespace metatensor
