// A schema (and any text file) named on the command line: a JSON schema document, or the schema
// embedded in a metatensor file (`metatensor.schema`, spec 06 §3.1). Used by
// `diff` and `from-json`.
#pragma once

#include <string>

#include <metatensor.hpp>

namespace metatensor::cli {

/// The whole of the text file `path` (a schema, a JSON value). Throws tool_error
/// naming the file when it cannot be opened or read.
[[nodiscard]] std::string read_text_file(const std::string& path);

/// Compiles the schema in file `path` (as authored, spec 06 §4; a schema
/// embedded in a metatensor file as that file's). Throws tool_error naming the
/// file when it is neither a metatensor file nor a valid schema document.
[[nodiscard]] compiled_schema load_schema_file(const std::string& path);

}  // namespace metatensor::cli
