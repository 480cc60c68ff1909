// Reports (spec 02 §15.3): their summaries, their JSON form and the
// reference C++ wrapper's string API.
#include <algorithm>
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "tensogram/core/error.hpp"
#include "tensogram/message/validate.hpp"

namespace tensogram {

// ---------------------------------------------------------------------------
// Reports

bool message_report::ok() const noexcept {
  return error_count() == 0;
}

std::size_t message_report::error_count() const noexcept {
  return static_cast<std::size_t>(std::count_if(issues.begin(), issues.end(), [](const validation_issue& i) {
    return i.severity == issue_severity::error;
  }));
}

bool message_report::has(issue_code code) const noexcept {
  return std::any_of(issues.begin(), issues.end(),
                     [code](const validation_issue& i) { return i.code == code; });
}

bool file_report::ok() const noexcept {
  return file_issues.empty() &&
         std::all_of(messages.begin(), messages.end(), [](const message_report& m) { return m.ok(); });
}

std::size_t file_report::object_count() const noexcept {
  std::size_t n = 0;
  for (const message_report& m : messages) n += m.object_count;
  return n;
}

bool file_report::hash_verified() const noexcept {
  return !messages.empty() && std::all_of(messages.begin(), messages.end(),
                                          [](const message_report& m) { return m.hash_verified; });
}

std::size_t file_report::problem_count() const noexcept {
  std::size_t n = file_issues.size();
  for (const message_report& m : messages) n += m.error_count();
  return n;
}

// ---------------------------------------------------------------------------
// JSON (spec 02 §15.3)

namespace {

using ojson = nlohmann::ordered_json;

ojson issue_json(const validation_issue& i) {
  ojson j;
  j["code"] = issue_code_name(i.code);
  j["level"] = validation_level_name(i.level);
  j["severity"] = issue_severity_name(i.severity);
  if (i.object_index) j["object_index"] = *i.object_index;
  if (i.byte_offset) j["byte_offset"] = *i.byte_offset;
  j["description"] = i.description;
  return j;
}

ojson report_json(const message_report& r) {
  ojson issues = ojson::array();
  for (const validation_issue& i : r.issues) issues.push_back(issue_json(i));
  ojson j;
  j["issues"] = std::move(issues);
  j["object_count"] = r.object_count;
  j["hash_verified"] = r.hash_verified;
  return j;
}

std::string dump(const ojson& j, int indent) {
  // Descriptions quote wire bytes; never let an invalid UTF-8 sequence turn
  // into an exception here.
  return j.dump(indent, ' ', false, ojson::error_handler_t::replace);
}

validate_options options_for(const char* level, bool check_canonical) {
  return validate_options::for_mode(parse_validation_mode(level != nullptr ? level : "default"),
                                    check_canonical);
}

}  // namespace

std::string to_json(const message_report& report, int indent) {
  return dump(report_json(report), indent);
}

std::string to_json(const file_report& report, int indent) {
  ojson issues = ojson::array();
  for (const file_issue& f : report.file_issues) {
    ojson j;
    j["byte_offset"] = f.byte_offset;
    j["length"] = f.length;
    j["description"] = f.description;
    issues.push_back(std::move(j));
  }
  ojson messages = ojson::array();
  for (const message_report& m : report.messages) messages.push_back(report_json(m));
  ojson j;
  j["file_issues"] = std::move(issues);
  j["messages"] = std::move(messages);
  return dump(j, indent);
}

std::string validate(const std::uint8_t* buf, std::size_t len, const char* level, bool check_canonical) {
  const validate_options options = options_for(level, check_canonical);
  if (buf == nullptr && len != 0) throw invalid_arg_error("null buffer with non-zero length");
  const std::span<const std::byte> bytes(reinterpret_cast<const std::byte*>(buf), buf == nullptr ? 0 : len);
  return to_json(validate_message(bytes, options));
}

std::string validate_file(const char* path, const char* level, bool check_canonical) {
  const validate_options options = options_for(level, check_canonical);
  if (path == nullptr) throw invalid_arg_error("null path");
  return to_json(validate_file(std::filesystem::path(path), options));
}

}  // namespace tensogram
