// `metatensor validate [--deep] FILE...` (spec 06 §8).
//
// Every metatensor file is a safetensors file, so the base layer is checked
// first (§2 rules 1–10: header length, JSON, dtypes, shapes, contiguous
// in-bounds data offsets). A file that passes it but has no
// `metatensor.version` key is a valid plain safetensors file: reported as
// such ("valid safetensors, no metatensor schema") with its own exit code
// rather than as MT_NOT_METATENSOR, which would call it invalid.
//
// `--header-schema S` also checks the safetensors header itself against a
// header schema (docs/metatensor.md "Header schemas": the tensors grouped by
// dotted names, leaves TensorRef entries), for metatensor and plain
// safetensors files alike; a violation is MT_HEADER_SCHEMA naming the tensor
// and the JSON Pointer. A plain safetensors file that passes a header schema
// has been checked against a schema, so it counts as fully valid (exit 0).
#include <nlohmann/json.hpp>
#include <optional>

#include <metatensor.hpp>
#include <tensogram/core/buffer.hpp>

#include "metatensor_commands.hpp"
#include "progress.hpp"

namespace metatensor::cli {
namespace {

// Checks one file (metatensor::validate_image, the verdict Python's
// `validate` shares); fills "valid", "format" and "level" of `entry`.
void validate_one(const std::string& path, bool deep, const std::optional<header_schema>& headers,
                  nlohmann::json& entry) {
  file_format format = file_format::metatensor;
  try {
    const tensogram::buffer image = tensogram::buffer::map_file(path);
    format = validate_image(image, deep);
    if (headers) (void)validate_header(safetensors::file::from_buffer(image), *headers);
  } catch (const metatensor::error& e) {
    throw e.with_context(path);
  }
  entry["format"] = file_format_name(format);
  std::string level = entry["level"].get<std::string>();
  if (format == file_format::safetensors) level = deep ? "safetensors, deep" : "safetensors";
  if (headers) level += ", header schema";
  entry["level"] = level;
  entry["valid"] = true;
}

}  // namespace

int run_validate(const validate_args& args, std::ostream& out, bool show_progress) {
  std::optional<header_schema> headers;
  if (!args.header_schema.empty()) {
    try {
      headers = header_schema::open(args.header_schema);
    } catch (const metatensor::error& e) {
      throw e.with_context("header schema");
    }
  }
  nlohmann::json all = nlohmann::json::array();
  bool all_valid = true;
  bool any_plain = false;
  tensogram::cli::progress bar("validate", args.files.size(), show_progress && args.files.size() > 1);
  for (const std::string& path : args.files) {
    nlohmann::json entry = {{"file", path}, {"level", args.deep ? "deep" : "structural"}};
    try {
      validate_one(path, args.deep, headers, entry);
    } catch (const metatensor::error& e) {
      // The spec's error name (§8.2) first, then what and where.
      entry["valid"] = false;
      entry["error"] = {{"code", errc_name(e.kind())}, {"message", e.what()}};
    } catch (const tensogram::error& e) {
      entry["valid"] = false;
      entry["error"] = {{"code", "IO"}, {"message", e.what()}};
    }
    const bool valid = entry["valid"].get<bool>();
    const bool plain = valid && entry["format"] == "safetensors" && !headers;
    all_valid = all_valid && valid;
    any_plain = any_plain || plain;
    if (!args.json) {
      if (plain) {
        out << path << ": valid safetensors, no metatensor schema (" << entry["level"].get<std::string>()
            << ")\n";
      } else if (valid) {
        out << path << ": OK (" << entry["level"].get<std::string>() << ")\n";
      } else {
        out << path << ": INVALID: " << entry["error"]["message"].get<std::string>() << '\n';
      }
    }
    all.push_back(std::move(entry));
    bar.advance();
  }
  bar.finish();
  if (args.json) out << all.dump(2) << '\n';
  if (!all_valid) return exit_invalid;
  return any_plain ? exit_plain_safetensors : 0;
}

}  // namespace metatensor::cli
