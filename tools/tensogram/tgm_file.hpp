// A .tgm file opened for reading: memory-mapped bytes plus the messages a
// scan found in them (spec 01 §16; garbage between messages is skipped).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include <tensogram/core/buffer.hpp>
#include <tensogram/format/scan.hpp>

namespace tensogram::cli {

struct tgm_file {
  buffer bytes;
  std::vector<scan_entry> messages;

  /// Message `i`'s bytes, sharing the mapping.
  [[nodiscard]] buffer message(std::size_t i) const {
    return bytes.slice(messages.at(i).offset, messages.at(i).length);
  }
};

/// Maps and scans `path`. Throws the library's `io_error` when the file
/// cannot be opened (its message names the path).
[[nodiscard]] tgm_file open_tgm(const std::string& path);

}  // namespace tensogram::cli
