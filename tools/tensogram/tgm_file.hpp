// A .tgm file opened for reading by the commands: a `tensogram::file`
// memory-mapped for local paths, read with HTTP range requests for http(s)
// URLs (spec 04 E.3); garbage between messages is skipped (spec 01 §16).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include <tensogram/core/buffer.hpp>
#include <tensogram/io/file.hpp>

namespace tensogram::cli {

class tgm_file {
 public:
  explicit tgm_file(tensogram::file f) : file_(std::move(f)) {}

  /// Number of messages (scans on first use).
  [[nodiscard]] std::size_t count() { return file_.message_count(); }
  /// Size of the file in bytes.
  [[nodiscard]] std::uint64_t size() { return file_.source().size(); }
  /// Message `i`'s bytes (sharing the mapping for local files).
  [[nodiscard]] buffer message(std::size_t i) { return file_.message_bytes(i); }
  [[nodiscard]] tensogram::file& file() noexcept { return file_; }

 private:
  tensogram::file file_;
};

/// Opens `path` (a local path or an http(s) URL). Errors (a missing file, an
/// unreachable URL) surface as the library's `io_error`/`remote_error` on
/// first use, naming the path.
[[nodiscard]] tgm_file open_tgm(const std::string& path);

}  // namespace tensogram::cli
