// §8.2 step 4 on simdjson's parse of the layout table (layout_table_check.hpp).
#include "src/metatensor/view/layout_table_check.hpp"

#include <optional>

#include "src/metatensor/json_dom.hpp"
#include "src/metatensor/schema/layout_table.hpp"

namespace metatensor::detail {

namespace dom = simdjson::dom;

struct layout_table_dom::parsed {
  dom::parser parser;
  dom::element root;
};

layout_table_dom::layout_table_dom(std::unique_ptr<parsed> p) : parsed_(std::move(p)) {}
layout_table_dom::~layout_table_dom() = default;

std::unique_ptr<layout_table_dom> layout_table_dom::read(std::string_view text, std::size_t readable) {
  auto p = std::make_unique<parsed>();
  const auto root = parse_strict_dom(text, p->parser, readable);
  if (!root) return nullptr;
  p->root = *root;
  return std::make_unique<layout_table_dom>(std::move(p));
}

namespace {

// An integer equal to `want`; a float of that value (equal under nlohmann's
// comparison) is left to `layout_entry_equals`.
bool integer_is(dom::element v, std::uint64_t want) {
  std::uint64_t u = 0;
  return v.is_uint64() && v.get_uint64().get(u) == simdjson::SUCCESS && u == want;
}

// The entry of a flat tensor (§7: kind, data, rank, align, dtype and, with a
// heap, heap) compared without allocating; false also for what only the
// nlohmann comparison can decide.
bool flat_entry_equals(dom::element entry, const tensor_layout& t, std::uint64_t alignment) {
  dom::object members;
  if (entry.get_object().get(members) != simdjson::SUCCESS) return false;
  unsigned seen = 0;  // parse_strict_dom refused duplicate keys
  for (const auto field : members) {
    const std::string_view k = field.key;
    bool ok = false;
    if (k == "kind") {
      ok = string_is(field.value, kind_name(t.kind));
    } else if (k == "data") {
      ok = string_is(field.value, t.name);
    } else if (k == "heap") {
      ok = t.has_heap && string_is(field.value, t.heap_name());
    } else if (k == "rank") {
      ok = integer_is(field.value, t.rank());
    } else if (k == "align") {
      ok = integer_is(field.value, t.primary_placement(alignment));
    } else if (k == "dtype") {
      ok = string_is(field.value, safetensors::dtype_name(t.flat_dtype));
    }
    if (!ok) return false;
    ++seen;
  }
  return seen == (t.has_heap ? 6U : 5U);
}

}  // namespace

bool layout_table_dom::equals(std::span<const named_layout> tensors, std::uint64_t alignment) const {
  dom::object top;
  if (parsed_->root.get_object().get(top) != simdjson::SUCCESS || top.size() != 1) return false;
  dom::object table;
  if (top.at_key("tensors").get_object().get(table) != simdjson::SUCCESS) return false;
  std::size_t i = 0;
  for (const auto field : table) {
    if (i == tensors.size() || field.key != tensors[i].first) return false;
    const tensor_layout& t = *tensors[i].second;
    if (t.kind != tensor_kind::flat || !flat_entry_equals(field.value, t, alignment)) {
      // Records, blobs and unusual spellings: the nlohmann comparison.
      nlohmann::json entry;
      if (!to_nlohmann(field.value, entry) || !layout_entry_equals(entry, t, alignment)) return false;
    }
    ++i;
  }
  return i == tensors.size();
}

}  // namespace metatensor::detail
