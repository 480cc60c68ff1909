// The §7 layout table (`metatensor.layout`) rendered from a compiled schema.
//
// The member names and their presence rules are exactly those of spec 06
// §7, because a validating reader compares this JSON with the file's own
// table as JSON values [MT_LAYOUT_MISMATCH]: an extra or missing member is
// a mismatch.
#include <string>

#include "src/metatensor/schema/layout_table.hpp"

#include "metatensor/layout.hpp"
#include "tensogram/core/error.hpp"

namespace metatensor {
namespace {

using json = nlohmann::json;

// §7 `type`: a safetensors dtype name, "struct", "string" or "list".
std::string type_name(const type_layout& t) {
  switch (t.type) {
    case value_type::scalar: return std::string(safetensors::dtype_name(t.scalar));
    case value_type::record: return "struct";
    case value_type::string: return "string";
    case value_type::list: return "list";
  }
  return "struct";
}

}  // namespace

// An elem (§7): {type, shape} plus `record` for "struct". A field adds
// `name`/`offset` to this, and `elem` when the type is "list".
json type_json(const type_layout& type) {
  json out = json::object();
  out["type"] = type_name(type);
  out["shape"] = json::array();
  for (auto d : type.shape) out["shape"].push_back(d);
  if (type.type == value_type::record && type.record) out["record"] = record_json(*type.record);
  if (type.type == value_type::list && type.elem) out["elem"] = type_json(*type.elem);
  return out;
}

json record_json(const record_layout& record) {
  json fields = json::array();
  for (const auto& f : record.fields) {
    json field = type_json(f.type);
    field["name"] = f.name;
    field["offset"] = f.offset;
    fields.push_back(std::move(field));
  }
  json out = json::object();
  out["size"] = record.size;
  out["align"] = record.align;
  out["fields"] = std::move(fields);
  return out;
}

namespace detail {

json layout_entry_json(const tensor_layout& t, std::uint64_t alignment) {
  json entry = json::object();
  entry["kind"] = std::string(kind_name(t.kind));
  entry["data"] = t.name;
  if (t.has_heap) entry["heap"] = t.heap_name();
  entry["rank"] = t.rank();
  entry["align"] = t.primary_placement(alignment);  // R of the primary (§6.5)
  switch (t.kind) {
    case tensor_kind::flat: entry["dtype"] = std::string(safetensors::dtype_name(t.flat_dtype)); break;
    case tensor_kind::record: entry["record"] = record_json(*t.record); break;
    case tensor_kind::blob: {
      // An item carries no shape: a blob element is never a fixed array
      // (an array there is a dimension, §5.1).
      json item = json::object();
      item["type"] = type_name(t.item);
      if (t.item.type == value_type::list && t.item.elem) item["elem"] = type_json(*t.item.elem);
      entry["item"] = std::move(item);
      break;
    }
  }
  return entry;
}

bool layout_entry_equals(const json& entry, const tensor_layout& t, std::uint64_t alignment) {
  if (t.kind != tensor_kind::flat) return entry == layout_entry_json(t, alignment);
  // kind, data, rank, align, dtype and, with a heap, heap: nothing else.
  if (!entry.is_object() || entry.size() != (t.has_heap ? 6U : 5U)) return false;
  const auto is_string = [&](const char* key, std::string_view want) {
    const auto it = entry.find(key);
    return it != entry.end() && it->is_string() && it->get_ref<const std::string&>() == want;
  };
  const auto is_number = [&](const char* key, std::uint64_t want) {
    const auto it = entry.find(key);
    return it != entry.end() && *it == json(want);
  };
  return is_string("kind", kind_name(t.kind)) && is_string("data", t.name) &&
         (!t.has_heap || is_string("heap", t.heap_name())) && is_number("rank", t.rank()) &&
         is_number("align", t.primary_placement(alignment)) &&
         is_string("dtype", safetensors::dtype_name(t.flat_dtype));
}

}  // namespace detail

json layout_table_json(const compiled_schema& schema, std::span<const std::string> present,
                       std::uint64_t alignment) {
  if (alignment == 0 || (alignment & (alignment - 1)) != 0) {
    throw tensogram::invalid_arg_error("layout table: file alignment " + std::to_string(alignment) +
                                       " is not a power of two");
  }
  json tensors = json::object();
  for (const auto& name : present) {
    const tensor_layout* t = schema.find(name);
    if (t == nullptr) {
      throw tensogram::invalid_arg_error("layout table: \"" + name +
                                         "\" is not a root property of the schema");
    }
    tensors[name] = detail::layout_entry_json(*t, alignment);
  }
  json out = json::object();
  out["tensors"] = std::move(tensors);
  return out;
}

}  // namespace metatensor
