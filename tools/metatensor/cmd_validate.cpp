// `metatensor validate [--deep] FILE...` (spec 06 §8).
#include <nlohmann/json.hpp>

#include <metatensor.hpp>

#include "metatensor_commands.hpp"
#include "progress.hpp"

namespace metatensor::cli {

int run_validate(const validate_args& args, std::ostream& out, bool show_progress) {
  nlohmann::json all = nlohmann::json::array();
  bool all_valid = true;
  tensogram::cli::progress bar("validate", args.files.size(), show_progress && args.files.size() > 1);
  for (const std::string& path : args.files) {
    nlohmann::json entry = {{"file", path}, {"level", args.deep ? "deep" : "structural"}};
    try {
      const metatensor::file f = metatensor::file::open(path);
      // Structural validation ends with the BlobRefs, which open defers (§8.1).
      f.check_all_blob_refs();
      if (args.deep) f.validate_deep();
      entry["valid"] = true;
    } catch (const metatensor::error& e) {
      // The spec's error name (§8.2) first, then what and where.
      entry["valid"] = false;
      entry["error"] = {{"code", errc_name(e.kind())}, {"message", e.what()}};
    } catch (const tensogram::error& e) {
      entry["valid"] = false;
      entry["error"] = {{"code", "IO"}, {"message", e.what()}};
    }
    all_valid = all_valid && entry["valid"].get<bool>();
    if (!args.json) {
      if (entry["valid"].get<bool>()) {
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
  return all_valid ? 0 : 1;
}

}  // namespace metatensor::cli
