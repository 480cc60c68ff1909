// libFuzzer target: metatensor schemas (spec 06 §4–§7) and the JSON Schema
// evaluator (§8.3) over arbitrary text.
//
// Compiling must end in a `tensogram::error` or a compiled schema whose
// layout table can be rendered; the evaluator must accept or reject the
// document and then judge a few fixed values (and the document itself)
// without crashing, hanging or recursing without bound.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include <metatensor.hpp>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  volatile std::size_t sink = 0;
  try {
    const metatensor::compiled_schema schema = metatensor::compile_schema_text(text);
    std::vector<std::string> names;
    for (const auto& [name, _] : schema.tensors()) names.push_back(name);
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
