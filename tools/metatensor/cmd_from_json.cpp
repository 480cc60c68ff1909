// `metatensor from-json SCHEMA VALUES -o OUT`: a schema and a logical value
// (spec 06 §8.3: one JSON member per logical tensor) → one metatensor file,
// written by the library's writer in canonical form (§3.5). The way to make a
// file of any kind — records, strings, ragged lists — without writing code,
// and the C++ side of the cross-language writer tests.
#include <metatensor.hpp>
#include <nlohmann/json.hpp>

#include "metatensor_commands.hpp"
#include "schema_file.hpp"
#include "tool_error.hpp"

namespace metatensor::cli {

using tensogram::cli::tool_error;

namespace {

nlohmann::json read_values(const std::string& path) {
  const std::string text = read_text_file(path);
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    throw tool_error(path + ": not JSON: " + e.what());
  }
  if (!doc.is_object()) {
    throw tool_error(path +
                     ": the logical value must be a JSON object with one member per tensor "
                     "(metatensor-format §8.3), not " +
                     std::string(doc.type_name()));
  }
  return doc;
}

}  // namespace

void run_from_json(const from_json_args& args, std::ostream& out) {
  writer_options options;
  options.alignment = args.alignment;
  for (const std::string& kv : args.metadata) {
    const auto eq = kv.find('=');
    if (eq == std::string::npos || eq == 0) {
      throw tool_error("--metadata " + kv + ": expected KEY=VALUE");
    }
    if (!options.user_metadata.emplace(kv.substr(0, eq), kv.substr(eq + 1)).second) {
      throw tool_error("--metadata " + kv + ": key \"" + kv.substr(0, eq) + "\" given twice");
    }
  }
  const nlohmann::json values = read_values(args.values);
  file_builder builder(load_schema_file(args.schema), std::move(options));
  try {
    builder.set_logical_value(values);
  } catch (const metatensor::error& e) {
    throw tool_error(args.values + ": " + e.what());
  }
  builder.write(args.output, tensogram::atomic_write_options{.sync = !args.no_sync});
  out << "Wrote " << values.size() << (values.size() == 1 ? " tensor" : " tensors") << " to " << args.output
      << '\n';
}

}  // namespace metatensor::cli
