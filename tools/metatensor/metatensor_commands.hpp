// The subcommands of the `metatensor` tool (spec 06; issue "Metatensor v1").
//
// Each `run_*` writes its normal output to `out`, warnings to `err`, and
// throws `tensogram::cli::tool_error` (or a library error) on failure; main()
// turns exceptions into `error: ...` and exit code 1, as the `tensogram` tool
// does. Commands with a verdict (validate, diff) return their exit code.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "pipeline_flags.hpp"

namespace metatensor::cli {

/// `info FILE...`: format, alignment, logical and physical tensors.
struct info_args {
  std::vector<std::string> files;
  bool json = false;
};
void run_info(const info_args& args, std::ostream& out);

/// `validate [--deep] FILE...`: structural (default) or deep validation
/// (spec 06 §8.1). Returns 0 when every file is valid, 1 otherwise.
struct validate_args {
  std::vector<std::string> files;
  bool deep = false;
  bool json = false;
};
int run_validate(const validate_args& args, std::ostream& out, bool show_progress);

/// `dump FILE`: header metadata, schema, layout table and the first values
/// of every logical tensor (their §8.3 logical value).
struct dump_args {
  std::string file;
  std::vector<std::string> tensors;  ///< only these (default: all)
  std::uint64_t count = 8;           ///< values shown per tensor (0 = all)
  bool json = false;
};
void run_dump(const dump_args& args, std::ostream& out);

/// `diff OLD NEW`: schema evolution (§11.5) between two schemas, each given
/// as a JSON schema file or as a metatensor file (its embedded schema).
/// Returns 1 when the verdict is "incompatible", 0 otherwise.
struct diff_args {
  std::string old_path;
  std::string new_path;
  bool json = false;
};
int run_diff(const diff_args& args, std::ostream& out);

/// `from-tgm IN.tgm -o OUT`: every Tensogram object becomes a flat tensor.
struct from_tgm_args {
  std::string input;
  std::string output;
  std::uint64_t alignment = 64;
  std::string name_key;  ///< metadata key naming each tensor (default: m<i>_o<j>)
};
void run_from_tgm(const from_tgm_args& args, std::ostream& out, std::ostream& err, bool show_progress);

/// `to-tgm IN -o OUT.tgm [PIPELINE]`: flat tensors of a metatensor or plain
/// safetensors file become the objects of one Tensogram message.
struct to_tgm_args {
  std::string input;
  std::string output;
  tensogram::cli::pipeline_flags pipeline;
};
void run_to_tgm(const to_tgm_args& args, std::ostream& out, std::ostream& err, bool show_progress);

/// `from-npy IN.npy... -o OUT`: one logical tensor per .npy file (named after
/// the file stem); structured dtypes become struct tensors.
struct from_npy_args {
  std::vector<std::string> inputs;
  std::string output;
  std::uint64_t alignment = 64;
};
void run_from_npy(const from_npy_args& args, std::ostream& out, std::ostream& err, bool show_progress);

}  // namespace metatensor::cli
