// The §7 layout table (`metatensor.layout`) rendered from a compiled schema.
//
// The member names and their presence rules are exactly those of spec 06
// §7, because a validating reader compares this JSON with the file's own
// table as JSON values [MT_LAYOUT_MISMATCH]: an extra or missing member is
// a mismatch.
#include <string>

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
    json entry = json::object();
    entry["kind"] = std::string(kind_name(t->kind));
    entry["data"] = t->name;
    if (t->has_heap) entry["heap"] = t->heap_name();
    entry["rank"] = t->rank();
    entry["align"] = t->primary_placement(alignment);  // R of the primary (§6.5)
    switch (t->kind) {
      case tensor_kind::flat: entry["dtype"] = std::string(safetensors::dtype_name(t->flat_dtype)); break;
      case tensor_kind::record: entry["record"] = record_json(*t->record); break;
      case tensor_kind::blob: {
        // An item carries no shape: a blob element is never a fixed array
        // (an array there is a dimension, §5.1).
        json item = json::object();
        item["type"] = type_name(t->item);
        if (t->item.type == value_type::list && t->item.elem) item["elem"] = type_json(*t->item.elem);
        entry["item"] = std::move(item);
        break;
      }
    }
    tensors[name] = std::move(entry);
  }
  json out = json::object();
  out["tensors"] = std::move(tensors);
  return out;
}

}  // namespace metatensor
