// The subcommands of the `tensogram` tool (spec 04 Part A plus the two .npy
// converters of this implementation). Each `run_*` writes its normal output
// to `out` and warnings to `err`, and throws on failure (`tool_error` or a
// library `tensogram::error`); main() turns exceptions into `error: ...`
// and exit code 1.
#pragma once

#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include <tensogram/message/options.hpp>

namespace tensogram::cli {

/// `info [FILES]...` (§A.5).
struct info_args {
  std::vector<std::string> files;
};
void run_info(const info_args& args, std::ostream& out);

/// `ls [-w WHERE] [-p KEYS] [-j] [FILES]...` (§A.5).
struct ls_args {
  std::optional<std::string> where;
  std::optional<std::string> keys;
  bool json = false;
  std::vector<std::string> files;
};
void run_ls(const ls_args& args, std::ostream& out);

/// `dump [-w WHERE] [-p KEYS] [-j] [FILES]...` (§A.5).
struct dump_args {
  std::optional<std::string> where;
  std::optional<std::string> keys;
  bool json = false;
  std::vector<std::string> files;
};
void run_dump(const dump_args& args, std::ostream& out);

/// `convert-npy IN.npy... -o OUT.tgm [--meta key=value]...` (tensogram-cpp
/// only): one message with one object per input array.
struct convert_npy_args {
  std::vector<std::string> inputs;
  std::string output;
  std::vector<std::string> meta;
};
void run_convert_npy(const convert_npy_args& args, const encode_options& options, std::ostream& out,
                     std::ostream& err);

/// `to-npy FILE.tgm -o DIR` (tensogram-cpp only): one .npy per object.
struct to_npy_args {
  std::string input;
  std::string output_dir;
};
void run_to_npy(const to_npy_args& args, const decode_options& options, std::ostream& out, std::ostream& err);

}  // namespace tensogram::cli
