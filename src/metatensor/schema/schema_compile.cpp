// Compiling a schema document of the metatensor dialect (spec 06 §4–§6,
// §8.4). The document is read once (schema_document.hpp) and checked in
// three passes, each reporting errors against the schema node that causes
// them (its JSON Pointer is in every message):
//  1. the dialect walk (§4.1–§4.3, §8.4) and
//  2. `$ref` targets, reference cycles and nesting through references
//     (dialect_check.cpp), then
//  3. each root property's layout (layout_compiler.cpp).
// The root itself is checked here (§4.1, §4.6, §8.4).
#include <memory>
#include <string>
#include <utility>

#include "dialect_check.hpp"
#include "layout_compiler.hpp"
#include "metatensor/layout.hpp"
#include "schema_document.hpp"
#include "schema_error.hpp"
#include "src/metatensor/strict_json.hpp"
#include "typedef_keywords.hpp"

namespace metatensor {

namespace {

using json = nlohmann::json;
using detail::fail_at_node;
using detail::quoted;

}  // namespace

compiled_schema compile_schema(nlohmann::json document, schema_source source) {
  compiled_schema out;
  if (source == schema_source::authored) document = normalize_builder_schema(std::move(document));
  auto owned = std::make_shared<const json>(std::move(document));
  const json& doc = *owned;

  // §4.1 first: a document in another dialect is not interpreted further.
  if (doc.is_object()) {
    if (auto it = doc.find("$schema");
        it != doc.end() && !(it->is_string() && it->get_ref<const std::string&>() == schema_dialect_uri)) {
      fail_at_node(errc::mt_schema_dialect, "",
                   "$schema must be " + detail::quoted(schema_dialect_uri) + " (§4.1)");
    }
  }
  if (!doc.is_object()) fail_at_node(errc::mt_schema_type, "", "the root schema must be an object (§4.6)");

  // §8.4, before any per-node work: the tensor count bounds everything else.
  if (auto p = doc.find("properties"); p != doc.end() && p->is_object() && p->size() > max_logical_tensors) {
    fail_at_node(errc::mt_limit, "/properties", "more than 2^20 logical tensors (§8.4)");
  }
  auto table = std::make_shared<const detail::schema_document>(std::move(owned));
  out.ref_targets_ = detail::check_dialect(*table);

  // §4.6 the root.
  if (auto t = doc.find("type");
      t == doc.end() || !(t->is_string() && t->get_ref<const std::string&>() == "object")) {
    fail_at_node(errc::mt_schema_type, "", "the root must have \"type\": \"object\" (§4.6)");
  }
  for (const auto& [k, v] : doc.items()) {
    if (detail::is_typedef(k))
      fail_at_node(errc::mt_schema_type, "", "the root must not carry " + detail::quoted(k) + " (§4.6)");
  }
  const auto props = doc.find("properties");
  if (props == doc.end()) fail_at_node(errc::mt_schema_type, "", "the root must have properties (§4.6)");
  const auto req = doc.find("required");
  if (req != doc.end()) {
    if (!req->is_array())
      fail_at_node(errc::mt_schema_type, "/required", "required must be an array of property names");
    for (const auto& r : *req) {
      if (!r.is_string() || !props->contains(r.get<std::string>())) {
        fail_at_node(errc::mt_schema_type, "/required",
                     "required entry " + r.dump() + " is not a root property (§4.6)");
      }
    }
  }

  out.tensors_ = detail::compile_layouts(*table, out.ref_targets_);
  if (req != doc.end()) {
    for (const auto& r : *req) {
      // Every entry names a compiled property (checked above).
      detail::find_layout(std::span<tensor_layout>(out.tensors_), r.get_ref<const std::string&>())->required =
          true;
    }
  }
  out.table_ = std::move(table);
  return out;
}

compiled_schema compile_schema_text(std::string_view text, schema_source source) {
  json doc = parse_strict_json(text, json_errors{errc::mt_schema_json, errc::mt_schema_json, "schema"});
  if (const std::string big = first_oversized_integer(doc); !big.empty()) {
    throw error(errc::mt_schema_json, "schema: integer " + big + " exceeds 2^53 - 1 (§3.1)");
  }
  return compile_schema(std::move(doc), source);
}

}  // namespace metatensor
