// The C ABI's file handle, shared by the file functions and the iterators.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <utility>

#include "capi.hpp"
#include "tensogram/io/file.hpp"

/// A local file. The file object is shared with the iterators created from
/// the handle, so closing the handle first leaves them valid.
struct tgm_file_t : tensogram::capi::handle_tag<0x7467'6d66'696c'6568> {  // "tgmfileh"
  tgm_file_t(std::shared_ptr<tensogram::file> f, std::string p) : file(std::move(f)), path(std::move(p)) {}
  std::shared_ptr<tensogram::file> file;
  std::string path;  // as given (tgm_file_path)
};

namespace tensogram::capi {

inline constexpr const char* file_type = "tgm_file_t";

/// Opens an existing local file. Opening does no I/O; reading the size
/// reports a missing or unreadable file (`io_error`) here, at open, where
/// the reference reports it (spec 07 C2.4 `tgm_file_open`).
[[nodiscard]] std::shared_ptr<file> open_existing(const std::string& path,
                                                  scan_mode mode = scan_mode::bidirectional);

/// `framing_error` "message index i out of range (count=n)" unless `index`
/// names a message of `f` (spec 07 C2.6; scans the file on first use).
void check_message_index(file& f, std::size_t index);

}  // namespace tensogram::capi
