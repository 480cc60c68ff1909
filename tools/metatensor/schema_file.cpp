#include "schema_file.hpp"

#include <fstream>
#include <optional>
#include <sstream>
#include <utility>

#include "tool_error.hpp"

namespace metatensor::cli {

using tensogram::cli::tool_error;

std::string read_text_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw tool_error(path + ": cannot open");
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw tool_error(path + ": read error");
  return std::move(text).str();
}

// The safetensors reading of the file is tried first: a JSON document never
// passes the safetensors checks (its first 8 bytes are not a plausible length).
compiled_schema load_schema_file(const std::string& path) {
  std::optional<safetensors::file> st;
  try {
    st.emplace(safetensors::file::open(path));
  } catch (const metatensor::error&) {
    // Not a safetensors file: read it as a schema document below.
  }
  if (st) {
    const auto it = st->metadata().find("metatensor.schema");
    if (it == st->metadata().end()) {
      throw tool_error(path +
                       ": a safetensors file without a metatensor schema (no \"metatensor.schema\" key)");
    }
    return compile_schema_text(it->second);
  }
  const std::string text = read_text_file(path);
  try {
    return compile_schema_text(text);
  } catch (const metatensor::error& e) {
    throw tool_error(path + ": neither a metatensor file nor a valid schema document: " + e.what());
  }
}

}  // namespace metatensor::cli
