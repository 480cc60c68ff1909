// `validate [--quick | --checksum | --full] [--canonical] [--json] FILES...`
// (spec 04 §A.5, spec 02 §15).
//
// The report is the command's output: issues on stderr, OK lines on stdout
// (human form) or one JSON array on stdout; a failed file gives exit code 1
// without an `error:` line (§A.1). Only a file that cannot be opened is a
// plain runtime error.
#include <filesystem>
#include <memory>
#include <optional>
#include <system_error>

#include <nlohmann/json.hpp>
#include <tensogram/message/validate.hpp>

#include "commands.hpp"
#include "progress.hpp"

namespace tensogram::cli {

namespace {

// Files below this size validate in well under a second: no bar for them.
constexpr std::uintmax_t k_progress_min_bytes = std::uintmax_t{32} << 20;

validate_options options_of(const validate_args& args) {
  validation_mode m = validation_mode::standard;
  if (args.quick) m = validation_mode::quick;
  if (args.checksum) m = validation_mode::checksum;
  if (args.full) m = validation_mode::full;
  return validate_options::for_mode(m, args.canonical);
}

file_report validate_one(const std::string& path, const validate_options& options, bool show_progress,
                         std::ostream& err) {
  std::error_code ec;
  const std::uintmax_t size = std::filesystem::file_size(path, ec);
  const bool big = !ec && size >= k_progress_min_bytes;
  if (!show_progress || !big) return validate_file(std::filesystem::path(path), options);
  // The message count is known once the file is scanned: the bar starts at
  // the first report.
  std::unique_ptr<progress> bar;
  file_report report =
      validate_file(std::filesystem::path(path), options, [&](std::size_t /*done*/, std::size_t total) {
        if (!bar) {
          bar = std::make_unique<progress>("validate " + std::filesystem::path(path).filename().string(),
                                           total, true, err);
        }
        bar->advance();
      });
  if (bar) bar->finish();
  return report;
}

// §A.5 human form: file issues, then message issues (errors and warnings on
// failure, warnings only on success), then the OK or FAILED summary line.
void print_human(const std::string& path, const file_report& r, std::ostream& out, std::ostream& err) {
  for (const file_issue& f : r.file_issues) {
    err << path << ": WARNING — " << f.description << " (at byte offset " << f.byte_offset << ", " << f.length
        << " bytes)\n";
  }
  const bool ok = r.ok();
  for (std::size_t m = 0; m < r.messages.size(); ++m) {
    for (const validation_issue& i : r.messages[m].issues) {
      const bool error = i.severity == issue_severity::error;
      if (ok && error) continue;
      err << path << ": " << (error ? "FAILED" : "WARNING") << " — message " << (m + 1);
      if (i.object_index) err << ", object " << (*i.object_index + 1);
      err << ": " << i.description;
      if (i.byte_offset) err << " (at byte " << *i.byte_offset << ")";
      err << '\n';
    }
  }
  if (ok) {
    out << path << ": OK (" << r.messages.size() << " messages, " << r.object_count() << " objects"
        << (r.hash_verified() ? ", hash verified" : "") << ")\n";
  } else {
    const std::size_t problems = r.problem_count();
    err << path << ": FAILED (" << problems << (problems == 1 ? " error, " : " errors, ") << r.messages.size()
        << " messages, " << r.object_count() << " objects)\n";
  }
}

nlohmann::ordered_json file_json(const std::string& path, const file_report& r) {
  // The library renders the reports (member order of spec 02 §15.3).
  nlohmann::ordered_json body = nlohmann::ordered_json::parse(to_json(r));
  nlohmann::ordered_json j;
  j["file"] = path;
  j["status"] = r.status();
  j["messages"] = r.messages.size();
  j["objects"] = r.object_count();
  j["hash_verified"] = r.hash_verified();
  j["file_issues"] = std::move(body["file_issues"]);
  j["message_reports"] = std::move(body["messages"]);
  return j;
}

}  // namespace

int run_validate(const validate_args& args, std::ostream& out, std::ostream& err, bool show_progress) {
  const validate_options options = options_of(args);
  bool all_ok = true;
  if (args.json) {
    // Like the reference, a file that cannot be opened aborts before any
    // JSON is printed.
    nlohmann::ordered_json files = nlohmann::ordered_json::array();
    for (const std::string& path : args.files) {
      const file_report r = validate_one(path, options, show_progress, err);
      all_ok = all_ok && r.ok();
      files.push_back(file_json(path, r));
    }
    out << files.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) << '\n';
  } else {
    for (const std::string& path : args.files) {
      const file_report r = validate_one(path, options, show_progress, err);
      print_human(path, r, out, err);
      all_ok = all_ok && r.ok();
    }
  }
  return all_ok ? 0 : 1;
}

}  // namespace tensogram::cli
