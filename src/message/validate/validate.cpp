// Validation of messages, buffers and files (spec 02 §15): the driver that
// runs the levels a mode asks for, over one message or every message a scan
// finds. The levels live beside it: structure.cpp (which walks the frames
// with the one frame walker of format/walk.hpp under the validator's rules),
// metadata.cpp, integrity.cpp and fidelity.cpp. Bodies are parsed with the
// same library functions the decoder uses, so a body the validator accepts
// is one the decoder accepts.
#include "tensogram/message/validate.hpp"

#include <algorithm>
#include <exception>
#include <iterator>
#include <string>
#include <utility>

#include "tensogram/core/buffer.hpp"
#include "tensogram/core/error.hpp"
#include "tensogram/format/scan.hpp"
#include "validate_internal.hpp"

namespace tensogram {

namespace validation {

// "<context>: <error>", without repeating the context when the library's
// message already starts with it ("failed to parse index CBOR: ...").
std::string failure(std::string_view context, const std::exception& e) {
  if (const auto* te = dynamic_cast<const tensogram::error*>(&e);
      te != nullptr && te->detail().starts_with(context)) {
    return std::string(te->detail());
  }
  return std::string(context) + ": " + e.what();
}

}  // namespace validation

message_report validate_message(std::span<const std::byte> msg, const validate_options& options) {
  message_report report;
  const bool checksum_only = options.checksum_only;
  const validation_level effective =
      checksum_only ? std::max(options.max_level, validation_level::integrity) : options.max_level;
  const bool run_metadata =
      (effective >= validation_level::metadata && !checksum_only) || options.check_canonical;
  const bool run_integrity = effective >= validation_level::integrity;
  const bool run_fidelity = effective >= validation_level::fidelity && !checksum_only;

  std::vector<validation_issue> structure;
  validation::issue_list structure_out(structure);
  std::optional<validation::located_frames> walk = validation::check_structure(msg, structure_out);
  for (validation_issue& i : structure) {
    // Checksum mode keeps structural errors (the hashes cannot be trusted
    // without a sound frame walk) but not structural warnings.
    if (!checksum_only || i.severity == issue_severity::error) report.issues.push_back(std::move(i));
  }

  if (walk) {
    report.object_count = walk->objects.size();
    validation::issue_list out(report.issues);
    if (run_metadata) validation::check_metadata(*walk, out, options.check_canonical);
    if (run_integrity) {
      std::vector<validation_issue> fidelity;
      validation::issue_list fidelity_out(fidelity);
      report.hash_verified =
          validation::check_integrity(*walk, out, fidelity_out, checksum_only, run_fidelity);
      report.issues.insert(report.issues.end(), std::make_move_iterator(fidelity.begin()),
                           std::make_move_iterator(fidelity.end()));
    }
  }
  if (!report.ok()) report.hash_verified = false;
  return report;
}

// ---------------------------------------------------------------------------
// Buffers and files

using validation::str;

file_report validate_buffer(std::span<const std::byte> bytes, const validate_options& options,
                            const validate_progress& progress) {
  file_report report;
  const std::vector<scan_entry> found = format::scan(bytes);
  std::size_t expected = 0;
  for (std::size_t k = 0; k < found.size(); ++k) {
    const scan_entry& e = found[k];
    if (e.offset > expected) {
      report.file_issues.push_back(
          {expected, e.offset - expected,
           str(e.offset - expected) + " unrecognized bytes at offset " + str(expected)});
    }
    report.messages.push_back(validate_message(bytes.subspan(e.offset, e.length), options));
    expected = e.offset + e.length;
    if (progress) progress(k + 1, found.size());
  }
  if (expected < bytes.size()) {
    const std::size_t trailing = bytes.size() - expected;
    report.file_issues.push_back(
        {expected, trailing,
         report.messages.empty()
             ? str(trailing) + " bytes with no valid messages"
             : str(trailing) + " trailing bytes after last message at offset " + str(expected)});
  }
  return report;
}

file_report validate_file(const std::filesystem::path& path, const validate_options& options,
                          const validate_progress& progress) {
  // A read-only mapping: the scan reads preambles/postambles, validation
  // the pages of the message at hand; nothing is copied.
  const buffer mapped = buffer::map_file(path);
  return validate_buffer(mapped.bytes(), options, progress);
}

}  // namespace tensogram
