// Deep validation, pass 4 (spec 06 §8.3): the schema's value keywords
// [MT_VALUE], with the JSON Schema evaluator.
//
// Bounded memory: the logical value of a tensor is never built as a whole
// unless the schema needs it. The dimension nodes of a root property are
// followed (`$ref`s resolved as the evaluator resolves them) while they carry
// only structure keywords; each element (or each sub-array below the first
// dimension node that carries a value keyword such as `uniqueItems`) is
// projected on its own and evaluated with `validate_node` against its schema
// node, which is equivalent because a dimension node without value keywords
// only applies `items` to each element (its `minItems`/`maxItems` were
// checked structurally, §5.1). Only value keywords on the root itself force
// the projection of the whole file.
//
// Every message starts with the JSON Pointer of the offending value (§8.3),
// e.g. "/particles/1/mass: minimum: ...".
#include "value_keywords.hpp"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "logical_value.hpp"
#include "metatensor/json_schema.hpp"
#include "src/metatensor/schema/schema_document.hpp"
#include "src/metatensor/text.hpp"
#include "tensogram/cbor/codec.hpp"

namespace metatensor::detail {

namespace {

using json = nlohmann::json;

bool is_value_keyword(std::string_view k) {
  static constexpr std::string_view keywords[] = {"enum",
                                                  "const",
                                                  "minimum",
                                                  "maximum",
                                                  "exclusiveMinimum",
                                                  "exclusiveMaximum",
                                                  "multipleOf",
                                                  "minLength",
                                                  "maxLength",
                                                  "pattern",
                                                  "uniqueItems",
                                                  "contains",
                                                  "minContains",
                                                  "maxContains",
                                                  "allOf",
                                                  "anyOf",
                                                  "oneOf",
                                                  "not",
                                                  "if",
                                                  "then",
                                                  "else"};
  return std::find(std::begin(keywords), std::end(keywords), k) != std::end(keywords);
}

// The nodes a schema node applies through `$ref` (itself first), as the
// evaluator resolved them (the schema document's references), or empty when
// a reference does not resolve.
std::vector<std::size_t> ref_chain(const schema_document& doc, std::size_t node) {
  std::vector<std::size_t> chain{node};
  while (const auto* ref = doc.reference_of(chain.back())) {
    if (ref->status != detail::reference_status::resolved || chain.size() > 2 * max_schema_depth) return {};
    chain.push_back(ref->target);
  }
  return chain;
}

// The schema values of a chain of nodes.
std::vector<const json*> values_of(const schema_document& doc, const std::vector<std::size_t>& chain) {
  std::vector<const json*> out;
  out.reserve(chain.size());
  for (const std::size_t n : chain) out.push_back(doc.at(n).value);
  return out;
}

bool has_value_keywords(const json& node) {
  if (!node.is_object()) return !node.is_boolean() || !node.get<bool>();
  for (const auto& [k, _] : node.items()) {
    if (is_value_keyword(k)) return true;
  }
  return false;
}

// True when every array satisfies `node`'s `type` (absent, "array", or a
// list containing "array").
bool type_admits(const json& node, std::string_view type) {
  if (!node.is_object()) return true;
  const auto it = node.find("type");
  if (it == node.end()) return true;
  if (it->is_string()) return *it == type;
  if (it->is_array()) return std::find(it->begin(), it->end(), json(type)) != it->end();
  return false;
}

// JSON type names every projected element of a flat dtype satisfies.
bool flat_element_trivially_valid(const std::vector<const json*>& chain, dtype t) {
  for (const auto* n : chain) {
    if (has_value_keywords(*n)) return false;
    bool ok = false;
    switch (t) {
      case dtype::boolean: ok = type_admits(*n, "boolean"); break;
      case dtype::c64: ok = type_admits(*n, "array"); break;
      case dtype::u8:
      case dtype::i8:
      case dtype::u16:
      case dtype::i16:
      case dtype::u32:
      case dtype::i32:
      case dtype::u64:
      case dtype::i64: ok = type_admits(*n, "integer") || type_admits(*n, "number"); break;
      default: ok = type_admits(*n, "number"); break;  // "integer" on a float leaf is a value test
    }
    if (!ok) return false;
  }
  return true;
}

// ---------------------------------------------------------------------------
// Fast path for the common case of numeric bounds on a flat tensor: the
// element schema carries only `minimum`/`maximum`/`exclusiveMinimum`/
// `exclusiveMaximum` (plus annotations, `type` and TypeDef keywords) and the
// dtype's values are exact binary64 numbers. Each element is compared in
// binary64 with the violation tests of §8.3 (NaN fails no bound: every
// comparison with it is false); an element that fails is handed to the
// evaluator, which produces the reported message. Integer dtypes wider than
// 32 bits and sub-byte floats take the general path.

struct numeric_bounds {
  std::vector<double> minimum, maximum, exclusive_minimum, exclusive_maximum;

  [[nodiscard]] bool admits(double v) const noexcept {
    for (const double b : minimum)
      if (v < b) return false;
    for (const double b : maximum)
      if (v > b) return false;
    for (const double b : exclusive_minimum)
      if (v <= b) return false;
    for (const double b : exclusive_maximum)
      if (v >= b) return false;
    return true;
  }
};

// A schema bound as an exact binary64 (integers beyond 2^53 are not).
std::optional<double> exact_bound(const json& v) {
  if (v.is_number_float()) return v.get<double>();
  constexpr std::uint64_t exact = std::uint64_t{1} << 53;
  if (v.is_number_unsigned() && v.get<std::uint64_t>() <= exact)
    return static_cast<double>(v.get<std::uint64_t>());
  if (v.is_number_integer()) {
    const auto i = v.get<std::int64_t>();
    if (i >= -static_cast<std::int64_t>(exact) && i <= static_cast<std::int64_t>(exact))
      return static_cast<double>(i);
  }
  return std::nullopt;
}

std::optional<numeric_bounds> flat_numeric_bounds(const std::vector<const json*>& chain, dtype t) {
  switch (t) {
    case dtype::boolean:
    case dtype::c64:
    case dtype::u64:
    case dtype::i64:
    case dtype::f4:
    case dtype::f6_e2m3:
    case dtype::f6_e3m2: return std::nullopt;
    default: break;
  }
  const bool is_int = t == dtype::u8 || t == dtype::i8 || t == dtype::u16 || t == dtype::i16 ||
                      t == dtype::u32 || t == dtype::i32;
  numeric_bounds out;
  for (const auto* n : chain) {
    if (!n->is_object()) return std::nullopt;
    if (!(type_admits(*n, "number") || (is_int && type_admits(*n, "integer")))) return std::nullopt;
    for (const auto& [k, v] : n->items()) {
      std::vector<double>* into = k == "minimum"            ? &out.minimum
                                  : k == "maximum"          ? &out.maximum
                                  : k == "exclusiveMinimum" ? &out.exclusive_minimum
                                  : k == "exclusiveMaximum" ? &out.exclusive_maximum
                                                            : nullptr;
      if (into) {
        const auto b = exact_bound(v);
        if (!b) return std::nullopt;
        into->push_back(*b);
      } else if (is_value_keyword(k)) {
        return std::nullopt;
      }
    }
  }
  return out;
}

// Element `i` of a flat tensor of a byte-aligned numeric dtype as binary64.
double flat_number(dtype t, const std::byte* p) {
  switch (t) {
    case dtype::u8: return detail::load<std::uint8_t>(p);
    case dtype::i8: return detail::load<std::int8_t>(p);
    case dtype::u16: return detail::load<std::uint16_t>(p);
    case dtype::i16: return detail::load<std::int16_t>(p);
    case dtype::u32: return detail::load<std::uint32_t>(p);
    case dtype::i32: return detail::load<std::int32_t>(p);
    case dtype::f16: return tensogram::cbor::half_to_double(detail::load<std::uint16_t>(p));
    case dtype::bf16: return detail::decode_bf16(detail::load<std::uint16_t>(p));
    case dtype::f32: return detail::load<float>(p);
    case dtype::f64: return detail::load<double>(p);
    default: return detail::decode_f8(t, detail::load<std::uint8_t>(p));
  }
}

template <class T>
std::uint64_t first_outside_typed(const std::byte* data, std::uint64_t n, const numeric_bounds& b) {
  for (std::uint64_t i = 0; i < n; ++i) {
    if (!b.admits(static_cast<double>(detail::load<T>(data + i * sizeof(T))))) return i;
  }
  return n;
}

// Index of the first element outside the bounds, or `n`.
std::uint64_t first_outside(dtype t, const std::byte* data, std::uint64_t n, const numeric_bounds& b) {
  switch (t) {  // the common dtypes get a loop of their own (no per-element switch)
    case dtype::f32: return first_outside_typed<float>(data, n, b);
    case dtype::f64: return first_outside_typed<double>(data, n, b);
    case dtype::i32: return first_outside_typed<std::int32_t>(data, n, b);
    case dtype::u8: return first_outside_typed<std::uint8_t>(data, n, b);
    default: break;
  }
  const std::uint64_t size = safetensors::dtype_bits(t) / 8;
  for (std::uint64_t i = 0; i < n; ++i) {
    if (!b.admits(flat_number(t, data + i * size))) return i;
  }
  return n;
}

void check_values(const file& f, const json_schema_evaluator& ev, const std::string& name) {
  const schema_document& doc = *f.schema().document_table();
  const tensor_access a(f, name);
  const std::string root_ptr = detail::escape_token(name);
  // Follow the dimension nodes while they carry structure keywords only.
  const std::size_t property = doc.find(&doc.root().at("properties").at(name));
  std::size_t node = property;
  std::size_t level = 0;
  std::vector<std::size_t> chain_nodes = ref_chain(doc, node);
  std::vector<const json*> chain = values_of(doc, chain_nodes);
  while (level < a.dims.size() && !chain.empty()) {
    bool structural = true;
    for (const auto* n : chain)
      structural = structural && !has_value_keywords(*n) && type_admits(*n, "array");
    const json& last = *chain.back();
    if (!structural || !last.is_object() || !last.contains("items")) break;
    node = doc.children(chain_nodes.back(), detail::schema_keyword::items).front();
    chain_nodes = ref_chain(doc, node);
    chain = values_of(doc, chain_nodes);
    ++level;
  }
  if (chain.empty()) {  // an unresolved reference: evaluate the whole tensor
    node = property;
    level = 0;
  }
  if (level == a.dims.size() && a.layout->kind == tensor_kind::flat && !chain.empty() &&
      flat_element_trivially_valid(chain, a.layout->flat_dtype)) {
    return;
  }
  std::uint64_t start = 0;
  if (level == a.dims.size() && a.layout->kind == tensor_kind::flat && !chain.empty()) {
    if (const auto bounds = flat_numeric_bounds(chain, a.layout->flat_dtype)) {
      // Only the first element outside the bounds (if any) needs the
      // evaluator; the ones before it are known to pass.
      start = first_outside(a.layout->flat_dtype, a.data.data(), a.count, *bounds);
      if (start == a.count) return;
    }
  }
  const std::uint64_t outer = element_count(a.dims.first(level));
  const std::uint64_t inner = element_count(a.dims.subspan(level));
  for (std::uint64_t i = start; i < outer; ++i) {
    const std::string ptr = root_ptr + detail::index_pointer(a.dims.first(level), i);
    json value;
    try {
      value = a.subtree(level, i * inner);
    } catch (const detail::deep_failure& e) {
      throw error(e.code, ptr + e.pointer + ": " + e.what);
    }
    if (const auto v = ev.validate_node(*doc.at(node).value, value, ptr)) {
      throw error(errc::mt_value, v->pointer + ": " + v->keyword + ": " + v->message);
    }
  }
}

// Value keywords on the root (or on what a root `$ref` points to) apply to
// the whole logical value.
bool root_has_value_keywords(const schema_document& doc) {
  const auto chain = values_of(doc, ref_chain(doc, 0));
  if (chain.empty()) return true;  // unresolved: let the evaluator decide on the whole value
  return std::any_of(chain.begin(), chain.end(),
                     [](const json* n) { return n->is_object() && has_value_keywords(*n); });
}

}  // namespace

void check_value_keywords(const file& f) {
  const json_schema_evaluator ev(f.schema());
  if (root_has_value_keywords(*f.schema().document_table())) {
    if (const auto v = ev.validate(f.logical_value())) {
      throw error(errc::mt_value, v->pointer + ": " + v->keyword + ": " + v->message);
    }
    return;
  }
  for (const auto& name : f.tensor_names()) check_values(f, ev, name);
}

}  // namespace metatensor::detail
