// `metatensor diff OLD NEW` (spec 06 §11.5). Exit 0 compatible, 1
// incompatible, 3 compatible but some dimension bound of NEW is tighter than
// OLD's (old files may fail to open with NEW: MT_SHAPE).
#include <iomanip>
#include <nlohmann/json.hpp>

#include <metatensor.hpp>

#include "metatensor_commands.hpp"
#include "schema_file.hpp"

namespace metatensor::cli {

int run_diff(const diff_args& args, std::ostream& out) {
  const compiled_schema old_schema = load_schema_file(args.old_path);
  const compiled_schema new_schema = load_schema_file(args.new_path);
  const compatibility_report report = compatibility(old_schema, new_schema);
  if (args.json) {
    nlohmann::json doc = {{"verdict", compatibility_class_name(report.verdict)},
                          {"changes", nlohmann::json::array()}};
    for (const auto& c : report.changes) {
      doc["changes"].push_back({{"path", c.path},
                                {"pointer", c.pointer},
                                {"change", c.change},
                                {"class", compatibility_class_name(c.verdict)}});
    }
    doc["dimension_warnings"] = nlohmann::json::array();
    for (const auto& w : report.dimension_warnings) {
      doc["dimension_warnings"].push_back({{"path", w.path}, {"pointer", w.pointer}, {"change", w.change}});
    }
    out << doc.dump(2) << '\n';
  } else {
    for (const auto& c : report.changes) {
      out << std::left << std::setw(18) << compatibility_class_name(c.verdict) << ' ' << c.path << ": "
          << c.change << '\n';
    }
    // Layouts agree, yet old files whose dims miss the new bounds fail to
    // open with the new schema (MT_SHAPE): said here, as diff cannot see data.
    for (const auto& w : report.dimension_warnings) {
      out << "warning: " << w.path << " (" << w.pointer << "): " << w.change << '\n';
    }
    out << "verdict: " << compatibility_class_name(report.verdict) << '\n';
  }
  if (report.verdict == compatibility_class::incompatible) return 1;
  return report.dimension_warnings.empty() ? 0 : 3;
}

}  // namespace metatensor::cli
