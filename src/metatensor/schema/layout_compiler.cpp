// The layout pass of schema compilation (spec 06 §4.4–§4.5, §5.1,
// §6.1–§6.2, §8.4): each root property's kind, dimensions and element type,
// and the C record rule. Records are compiled once per schema node, so shared
// definitions cost nothing extra and the result is a DAG of shared
// `record_layout`s.
#include "layout_compiler.hpp"

#include <algorithm>
#include <initializer_list>
#include <optional>
#include <set>
#include <utility>

#include "schema_error.hpp"
#include "tensogram/core/memory.hpp"
#include "typedef_keywords.hpp"

namespace metatensor::detail {

namespace {

using json = nlohmann::json;

bool is_pow2(std::uint64_t v) noexcept {
  return v != 0 && (v & (v - 1)) == 0;
}

// Pass 3: kinds and layout.

enum class node_kind : std::uint8_t { boolean, scalar, structure, tuple, string, list, array, other };

struct classified {
  node_kind kind = node_kind::other;
  const scalar_keyword* scalar = nullptr;
};

// A node after following `$ref`, with the largest `TypeDef:Align` met on the way.
struct resolved {
  std::size_t n = schema_document::npos;
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
  fail_at_node(errc::mt_schema_type, ptr, detail::quoted(kw) + " must be a non-negative integer");
}

// `type` absent, one allowed name, or an array of allowed names (§4.4).
void check_type(const json& node, const std::string& ptr, unsigned allowed) {
  auto it = node.find("type");
  if (it == node.end()) return;
  auto ok = [allowed](const json& t) {
    return t.is_string() && (type_bit(t.get_ref<const std::string&>()) & allowed) != 0;
  };
  bool good = ok(*it);
  if (it->is_array()) {
    good = !it->empty() && std::all_of(it->begin(), it->end(), ok);
  }
  if (!good)
    fail_at_node(errc::mt_schema_type, ptr, "\"type\" " + it->dump() + " is not allowed here (§4.4)");
}

void require_true(const json& node, const std::string& ptr, std::string_view kw) {
  const json& v = node.at(std::string(kw));
  if (!(v.is_boolean() && v.get<bool>()))
    fail_at_node(errc::mt_schema_type, ptr, detail::quoted(kw) + " must be true (§4.4)");
}

void forbid(const json& node, const std::string& ptr, std::string_view what,
            std::initializer_list<std::string_view> keywords) {
  for (auto kw : keywords) {
    if (node.contains(std::string(kw)))
      fail_at_node(errc::mt_schema_type, ptr, std::string(what) + " must not carry " + detail::quoted(kw));
  }
}

std::size_t nested_fields(const type_layout& t, const std::map<const record_layout*, std::size_t>& counts) {
  if (t.type == value_type::record) return counts.at(t.record.get());
  if (t.type == value_type::list) return nested_fields(*t.elem, counts);
  return 0;
}

class compiler {
 public:
  compiler(const schema_document& document, const std::vector<std::size_t>& ref_targets)
      : doc_(document), targets_(ref_targets) {}

  // `schema` is `name`'s value in the root `properties`.
  tensor_layout compile_tensor(const std::string& name, const json& schema) {
    tensor_layout out;
    out.name = name;
    resolved cur = resolve(doc_.find(&schema));
    out.root_align = cur.align;  // §4.4: TypeDef:Align on a root property
    classified c = classify(cur);
    std::vector<std::string> pointers;  // per dimension, then the element's
    // §5.1: arrays whose `items` is an object schema are dimensions.
    while (c.kind == node_kind::array && cur.node->at("items").is_object()) {
      check_type(*cur.node, cur.ptr, t_array);
      dimension_bounds b;
      if (auto it = cur.node->find("minItems"); it != cur.node->end())
        b.min = read_uint(*it, cur.ptr, "minItems");
      if (auto it = cur.node->find("maxItems"); it != cur.node->end())
        b.max = read_uint(*it, cur.ptr, "maxItems");
      pointers.push_back(cur.ptr);
      out.dims.push_back(b);
      if (out.dims.size() > safetensors::max_rank)
        fail_at_node(errc::mt_limit, cur.ptr, "rank above 32 (§8.4)");
      cur = resolve(items_of(cur));
      no_align(cur);
      c = classify(cur);
    }
    pointers.push_back(cur.ptr);
    // Kept only where they differ from the pointers `node_pointer` builds
    // while `node_pointers` is empty.
    for (std::size_t level = 0; level < pointers.size(); ++level) {
      if (pointers[level] != out.node_pointer(level)) {
        out.node_pointers = std::move(pointers);
        break;
      }
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
        fail_at_node(errc::mt_schema_type, cur.ptr,
                     "the element of logical tensor " + detail::quoted(name) +
                         " is not a scalar leaf, struct, tuple, String or List (§5.1)");
    }
    return out;
  }

 private:
  resolved resolve(std::size_t n) {
    resolved r;
    while (true) {
      const json& node = *doc_.at(n).value;
      const std::string& ptr = doc_.at(n).pointer;
      if (node.is_object()) {
        if (auto it = node.find(std::string(kw_align)); it != node.end()) {
          const std::uint64_t a = non_negative_integer(*it);
          if (!is_pow2(a) || a > 65536) {
            fail_at_node(errc::mt_schema_type, ptr,
                         "TypeDef:Align must be a power of two between 1 and 65536 (§4.4)");
          }
          r.align = std::max(r.align, a);
          if (!r.align_ptr) r.align_ptr = ptr;
        }
        if (targets_[n] != schema_document::npos) {
          n = targets_[n];  // finite: cycles were rejected
          continue;
        }
      }
      r.n = n;
      r.node = &node;
      r.ptr = ptr;
      return r;
    }
  }

  // The `default` annotation of a field (§11.3): the nearest one along the
  // `$ref` chain, so a referencing node can override its target's.
  std::optional<json> default_along_refs(std::size_t n) const {
    while (true) {
      const json& node = *doc_.at(n).value;
      if (!node.is_object()) return std::nullopt;
      if (auto it = node.find("default"); it != node.end()) return *it;
      if (targets_[n] == schema_document::npos) return std::nullopt;
      n = targets_[n];  // finite: cycles were rejected
    }
  }

  static void no_align(const resolved& r) {
    if (r.align_ptr) {
      fail_at_node(
          errc::mt_schema_type, *r.align_ptr,
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
        fail_at_node(errc::mt_schema_type, r.ptr,
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
    type_layout t = compile_type_kind(r, c);
    t.pointer = r.ptr;
    return t;
  }

  type_layout compile_type_kind(const resolved& r, const classified& c) {
    type_layout t;
    switch (c.kind) {
      case node_kind::scalar: {
        check_scalar(r, c);
        if (sub_byte(c.scalar->type)) {
          fail_at_node(
              errc::mt_schema_type, r.ptr,
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
        if (!r.node->contains("items"))
          fail_at_node(errc::mt_schema_type, r.ptr, "TypeDef:List needs items (§4.4)");
        const resolved e = resolve(items_of(r));
        no_align(e);
        type_layout elem = compile_type_at(e, classify(e));
        if (elem.has_blobs()) {
          fail_at_node(errc::mt_schema_type, e.ptr,
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
          fail_at_node(
              errc::mt_schema_type, r.ptr,
              "an array inside a record or List must be a fixed array (minItems == maxItems >= 1), a tuple "
              "or a TypeDef:List (§4.5)");
        }
        const resolved e = resolve(items_of(r));
        no_align(e);
        t = compile_type_at(e, classify(e));
        if (len > max_record_size / t.size) {
          fail_at_node(errc::mt_limit, r.ptr, "fixed array larger than 2^24 bytes (§6.2, §8.4)");
        }
        t.shape.insert(t.shape.begin(), len);
        t.size *= len;
        return t;
      }
      default:
        fail_at_node(errc::mt_schema_type, r.ptr,
                     "not a scalar leaf, struct, tuple, fixed array, String or List (§4.4, §4.5)");
    }
  }

  // One field: resolves the node, takes its TypeDef:Align (§6.2).
  std::pair<type_layout, std::uint64_t> compile_field(std::size_t n) {
    const resolved r = resolve(n);
    return {compile_type_at(r, classify(r)), r.align};
  }

  std::shared_ptr<const record_layout> record_of(const resolved& r, const classified& c) {
    if (auto it = records_.find(r.n); it != records_.end()) return it->second;
    auto rec = c.kind == node_kind::structure ? compile_struct(r) : compile_tuple(r);
    std::size_t count = 0;
    for (const auto& f : rec->fields) {
      count += 1 + nested_fields(f.type, field_counts_);  // each term <= max_record_fields
      if (count > max_record_fields) {
        fail_at_node(errc::mt_limit, r.ptr,
                     "record with more than 65,536 fields, counting nested fields (§6.2, §8.4)");
      }
    }
    field_counts_[rec.get()] = count;
    records_.emplace(r.n, rec);
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
        fail_at_node(
            errc::mt_schema_type, r.ptr,
            "TypeDef:Struct must be true or {\"align\": n}, n a power of two between 1 and 4096 (§4.4)");
      }
      struct_align = av;
    } else if (!(v.is_boolean() && v.get<bool>())) {
      fail_at_node(errc::mt_schema_type, r.ptr, "TypeDef:Struct must be true or {\"align\": n} (§4.4)");
    }
    check_type(n, r.ptr, t_object);
    forbid(n, r.ptr, "a TypeDef:Struct node", {"items", "prefixItems"});
    const auto props = n.find("properties");
    if (props == n.end() || props->empty()) {
      fail_at_node(errc::mt_schema_type, r.ptr,
                   "TypeDef:Struct needs properties with at least one member (§4.4)");
    }
    const auto req = n.find("required");
    if (req == n.end() || !req->is_array()) {
      fail_at_node(errc::mt_schema_type, r.ptr,
                   "TypeDef:Struct needs required listing every property (§4.4)");
    }
    if (req->size() > max_record_fields) {
      fail_at_node(errc::mt_limit, r.ptr, "record with more than 65,536 fields (§6.2, §8.4)");
    }
    std::set<std::string> seen;
    for (const auto& f : *req) {
      if (!f.is_string() || !props->contains(f.get<std::string>())) {
        fail_at_node(errc::mt_schema_type, r.ptr, "required entry " + f.dump() + " is not a property (§4.4)");
      }
      if (!seen.insert(f.get<std::string>()).second) {
        fail_at_node(errc::mt_schema_type, r.ptr, "required lists " + f.dump() + " twice (§4.4)");
      }
    }
    for (const auto& [k, s] : props->items()) {
      if (seen.count(k) == 0) {
        fail_at_node(errc::mt_schema_type, r.ptr,
                     "property " + detail::quoted(k) + " is missing from required (§4.4)");
      }
    }
    std::vector<std::string> names;
    for (const auto& f : *req) names.push_back(f.get<std::string>());  // field order = required order
    return lay_out(
        r.ptr, names, [&](std::size_t i) { return doc_.find(&props->at(names[i])); }, struct_align, false);
  }

  std::shared_ptr<const record_layout> compile_tuple(const resolved& r) {
    const json& n = *r.node;
    check_type(n, r.ptr, t_array);
    forbid(n, r.ptr, "a tuple", {"properties"});
    const json& items = n.at("prefixItems");
    const std::size_t k = items.size();
    if (k == 0)
      fail_at_node(errc::mt_schema_type, r.ptr, "a tuple needs at least one prefixItems schema (§4.5)");
    const auto it = n.find("items");
    if (it == n.end() || !(it->is_boolean() && !it->get<bool>())) {
      fail_at_node(errc::mt_schema_type, r.ptr, "a tuple must have \"items\": false (§4.5)");
    }
    for (auto kw : {"minItems", "maxItems"}) {
      if (auto m = n.find(kw); m != n.end() && read_uint(*m, r.ptr, kw) != k) {
        fail_at_node(errc::mt_schema_type, r.ptr,
                     std::string(kw) + " of a tuple must equal the prefixItems count (§4.5)");
      }
    }
    if (k > max_record_fields)
      fail_at_node(errc::mt_limit, r.ptr, "record with more than 65,536 fields (§8.4)");
    std::vector<std::string> names;
    for (std::size_t i = 0; i < k; ++i) names.push_back(std::to_string(i));
    const auto elements = doc_.children(r.n, schema_keyword::prefix_items);
    return lay_out(
        r.ptr, names, [&](std::size_t i) { return elements[i]; }, 1, true);
  }

  // §6.2: the C record rule. Every intermediate value stays below
  // 2^24 + 2^16 (each type is at most 2^24 bytes, alignments at most 2^16).
  template <class NodeOf>
  std::shared_ptr<const record_layout> lay_out(const std::string& ptr, const std::vector<std::string>& names,
                                               NodeOf node_of, std::uint64_t struct_align, bool tuple) {
    auto rec = std::make_shared<record_layout>();
    rec->tuple = tuple;
    rec->align = struct_align;
    std::uint64_t cursor = 0;
    for (std::size_t i = 0; i < names.size(); ++i) {
      const std::size_t field = node_of(i);
      auto [type, raised] = compile_field(field);
      const std::uint64_t fa = std::max(type.align, raised);
      field_layout f;
      f.name = names[i];
      f.default_value = default_along_refs(field);
      f.pointer = doc_.at(field).pointer;
      f.offset = align_up(cursor, fa);
      cursor = f.offset + type.size;
      if (cursor > max_record_size)
        fail_at_node(errc::mt_limit, ptr, "record larger than 2^24 bytes (§6.2, §8.4)");
      rec->align = std::max(rec->align, fa);
      f.type = std::move(type);
      rec->fields.push_back(std::move(f));
    }
    rec->size = align_up(cursor, rec->align);
    if (rec->size > max_record_size)
      fail_at_node(errc::mt_limit, ptr, "record larger than 2^24 bytes (§6.2, §8.4)");
    return rec;
  }

  // The `items` subschema of a node that has one.
  std::size_t items_of(const resolved& r) const { return doc_.children(r.n, schema_keyword::items).front(); }

  const schema_document& doc_;
  const std::vector<std::size_t>& targets_;
  std::map<std::size_t, std::shared_ptr<const record_layout>> records_;  // by resolved node
  std::map<const record_layout*, std::size_t> field_counts_;
};

// §3.2 logical tensor names.
// The pointer of the failing property is built only on failure.
void check_name(const std::string& name) {
  const auto ptr = [&] { return child_pointer("/properties", name); };
  if (name.empty())
    fail_at_node(errc::mt_schema_name, ptr(), "a logical tensor name must not be empty (§3.2)");
  if (name.rfind("__", 0) == 0)
    fail_at_node(errc::mt_schema_name, ptr(), "logical tensor name must not begin with \"__\" (§3.2)");
  if (name.find('#') != std::string::npos) {
    fail_at_node(errc::mt_schema_name, ptr(), "logical tensor name must not contain '#' (§3.2)");
  }
}

}  // namespace

std::vector<tensor_layout> compile_layouts(const schema_document& document,
                                           const std::vector<std::size_t>& ref_targets) {
  compiler c(document, ref_targets);
  const auto& properties = document.root().at("properties");
  std::vector<tensor_layout> out;
  tensogram::reserve_advised(out, properties.size());
  // `properties` iterates in key order (byte-wise), the order of the table.
  for (const auto& [name, schema] : properties.items()) {
    check_name(name);
    out.push_back(c.compile_tensor(name, schema));
  }
  return out;
}

}  // namespace metatensor::detail
