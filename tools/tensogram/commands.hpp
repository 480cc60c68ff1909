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

#include <tensogram/doctor.hpp>
#include <tensogram/message/options.hpp>

#include "pipeline_flags.hpp"

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

struct global_options;

/// `get -p KEYS [-w WHERE] [FILES]...` (§A.5): strict, the first message
/// lacking a key ends the command with "key not found: <key>".
struct get_args {
  std::optional<std::string> where;
  std::string keys;
  std::vector<std::string> files;
};
void run_get(const get_args& args, std::ostream& out);

/// `set -s K=V[,K=V...] [-w WHERE] INPUT OUTPUT` (§A.5).
struct set_args {
  std::string pairs;
  std::optional<std::string> where;
  std::string input;
  std::string output;
  /// --no-sync: skip the fsync of the output (atomic_write_options::sync).
  bool no_sync = false;
};
void run_set(const set_args& args);

/// `copy [-w WHERE] INPUT OUTPUT` (§A.5); OUTPUT may hold `[key]` placeholders.
struct copy_args {
  std::optional<std::string> where;
  std::string input;
  std::string output;
  /// --no-sync: skip the fsync of the output (atomic_write_options::sync).
  bool no_sync = false;
};
void run_copy(const copy_args& args, const global_options& globals);

/// `merge -o OUTPUT [-s STRATEGY] [INPUTS]...` (§A.5).
struct merge_args {
  std::vector<std::string> inputs;
  std::string output;
  std::string strategy = "first";
  /// --no-sync: skip the fsync of the output (atomic_write_options::sync).
  bool no_sync = false;
};
void run_merge(const merge_args& args, const global_options& globals, std::ostream& out);

/// `split -o TEMPLATE INPUT` (§A.5).
struct split_args {
  std::string input;
  std::string output;
  /// --no-sync: skip the fsync of the output (atomic_write_options::sync).
  bool no_sync = false;
};
void run_split(const split_args& args, const global_options& globals, std::ostream& out);

/// `reshuffle -o OUTPUT INPUT` (§A.5).
struct reshuffle_args {
  std::string input;
  std::string output;
  /// --no-sync: skip the fsync of the output (atomic_write_options::sync).
  bool no_sync = false;
};
void run_reshuffle(const reshuffle_args& args, const global_options& globals, std::ostream& out);

/// `convert-npy IN.npy... -o OUT.tgm [--meta key=value]... [PIPELINE]`
/// (tensogram-cpp only): one message with one object per input array, each
/// encoded with the pipeline flags (extended set, pipeline_flags.hpp).
struct convert_npy_args {
  std::vector<std::string> inputs;
  std::string output;
  std::vector<std::string> meta;
  pipeline_flags pipeline;
  /// --no-sync: skip the fsync of the output (atomic_write_options::sync).
  bool no_sync = false;
};
/// `show_progress`: draw a progress bar on stderr (see progress.hpp).
void run_convert_npy(const convert_npy_args& args, const encode_options& options, std::ostream& out,
                     std::ostream& err, bool show_progress = false);

/// `to-npy FILE.tgm -o DIR` (tensogram-cpp only): one .npy per object.
struct to_npy_args {
  std::string input;
  std::string output_dir;
};
void run_to_npy(const to_npy_args& args, const decode_options& options, std::ostream& out, std::ostream& err);

/// `validate [--quick | --checksum | --full] [--canonical] [--json] FILES...`
/// (§A.5). Issues go to `err`, OK lines (or the JSON array) to `out`.
/// Returns the exit code: 1 iff some file failed (the report shows why; no
/// `error:` line, §A.1). Throws `io_error` for a file that cannot be opened.
/// `show_progress`: a bar on `err` for large files (see progress.hpp).
struct validate_args {
  bool quick = false;
  bool checksum = false;
  bool full = false;
  bool canonical = false;
  bool json = false;
  std::vector<std::string> files;
};
int run_validate(const validate_args& args, std::ostream& out, std::ostream& err, bool show_progress = false);

/// `doctor [--json]` (§A.5). Returns the exit code: 1 iff a self-test row
/// failed (the report shows why; no `error:` line, §A.1).
/// `convert-grib INPUTS... [-o OUT] [--split] [--all-keys] [PIPELINE]`
/// (§A.5, spec 05 §2). Built only with the importers.
struct convert_grib_args {
  std::vector<std::string> inputs;
  std::optional<std::string> output;
  bool split = false;
  bool all_keys = false;
  pipeline_flags pipeline;
};
void run_convert_grib(const convert_grib_args& args, const encode_options& options, std::ostream& out,
                      std::ostream& err, bool show_progress);

/// `convert-netcdf INPUTS... [-o OUT] [--split-by MODE] [--cf] [PIPELINE]`
/// (§A.5, spec 05 §4), plus `--root-group-only` (the reference's scope).
struct convert_netcdf_args {
  std::vector<std::string> inputs;
  std::optional<std::string> output;
  std::string split_by = "file";
  bool cf = false;
  bool root_group_only = false;
  pipeline_flags pipeline;
};
void run_convert_netcdf(const convert_netcdf_args& args, const encode_options& options, std::ostream& out,
                        std::ostream& err, bool show_progress);

/// `to-grib INPUT [-o OUT]` (§A.5, spec 05 §3).
struct to_grib_args {
  std::string input;
  std::optional<std::string> output;
};
void run_to_grib(const to_grib_args& args, std::ostream& out);

/// `to-netcdf INPUT -o OUT` (§A.5, spec 05 §5).
struct to_netcdf_args {
  std::string input;
  std::string output;
};
void run_to_netcdf(const to_netcdf_args& args, std::ostream& out);

struct doctor_args {
  bool json = false;
};
int run_doctor(const doctor_args& args, std::ostream& out);
/// The library's report plus the converter rows only the CLI has.
[[nodiscard]] doctor_report cli_doctor_report();
/// The human report (label columns 22 and 42, two-space indent).
void print_doctor_human(const doctor_report& report, std::ostream& out);
/// Prints `report` (JSON or human) and returns the exit code of `doctor`.
int write_doctor_report(const doctor_report& report, bool json, std::ostream& out);

}  // namespace tensogram::cli
