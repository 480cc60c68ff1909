// libFuzzer target: metatensor schemas (spec 06 §4–§7) and the JSON Schema
// evaluator (§8.3) over arbitrary text.
//
// Compiling must end in a `tensogram::error` or a compiled schema whose
// layout table can be rendered; the evaluator must accept or reject the
// document and then judge a few fixed values (and the document itself)
// without crashing, hanging or recursing without bound. Whenever the fast
// path of a file's schema (src/metatensor/schema/schema_fast_path.hpp)
// accepts the text, the reference must accept it too and compile the same
// layouts (a difference traps).
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <metatensor.hpp>

#include "src/metatensor/schema/schema_fast_path.hpp"

namespace {

// The fast path against `compile_schema_text` (embedded), by what they
// render: the layout table of every tensor at two alignments, the required
// set, the document and the element pointers.
void check_fast_path(std::string_view text) {
  const auto fast = metatensor::detail::schema_fast_path::compile_embedded(text);
  if (!fast) return;
  std::optional<metatensor::compiled_schema> ref;
  try {
    ref = metatensor::compile_schema_text(text, metatensor::schema_source::embedded);
  } catch (const tensogram::error&) {
    __builtin_trap();  // accepted what the reference refuses
  }
  std::vector<std::string> names;
  for (const auto& t : ref->tensors()) names.push_back(t.name);
  bool same = fast->tensors().size() == names.size() && fast->document() == ref->document();
  for (const std::uint64_t a : {16U, 4096U}) {
    same = same &&
           metatensor::layout_table_json(*fast, names, a) == metatensor::layout_table_json(*ref, names, a);
  }
  for (std::size_t k = 0; same && k < names.size(); ++k) {  // the same table, in the same order
    const auto& t = ref->tensors()[k];
    const auto* mine = &fast->tensors()[k];
    same = mine->name == t.name && fast->find(t.name) == mine && mine->required == t.required &&
           mine->rank() == t.rank();
    for (std::size_t i = 0; same && i < t.rank(); ++i) {
      same = mine->dims[i].min == t.dims[i].min && mine->dims[i].max == t.dims[i].max;
    }
    for (std::size_t level = 0; same && level <= t.rank(); ++level) {
      same = mine->node_pointer(level) == t.node_pointer(level);
    }
  }
  if (!same) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  volatile std::size_t sink = 0;
  check_fast_path(text);
  try {
    const metatensor::compiled_schema schema = metatensor::compile_schema_text(text);
    std::vector<std::string> names;
    for (const auto& t : schema.tensors()) names.push_back(t.name);
    sink = sink + metatensor::layout_table_json(schema, names, 64).dump().size();
  } catch (const tensogram::error&) {
  }
  nlohmann::json doc = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) return 0;
  try {
    const metatensor::json_schema_evaluator evaluator(doc);
    for (const nlohmann::json& value :
         {nlohmann::json(), nlohmann::json(0), nlohmann::json(-1.5), nlohmann::json("text"),
          nlohmann::json::array({1, "a", nullptr}), nlohmann::json::object({{"a", 1}}), doc}) {
      sink = sink + (evaluator.validate(value) ? 1 : 0);
    }
  } catch (const tensogram::error&) {
  }
  return 0;
}
