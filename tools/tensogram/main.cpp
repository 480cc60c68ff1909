// `tensogram`: the command-line tool of tensogram-cpp (spec 04 Part A).
//
// Exit codes (spec 04 §A.1): 0 success; 1 runtime failure, reported as
// `error: <message>` (plus one `  caused by: <message>` line per nested
// cause) on stderr; 2 usage error (unknown flag or subcommand, missing or
// malformed argument), reported on stderr with a pointer to --help.
#include <cstdlib>
#include <exception>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <tensogram.hpp>

#include "clap_help.hpp"
#include "clap_style.hpp"
#include "cli_reference.hpp"
#include "commands.hpp"
#include "global_options.hpp"
#include "help_text.hpp"
#include "pipeline_flags.hpp"
#include "progress.hpp"

namespace {

using tensogram::cli::global_options;

constexpr int exit_runtime_error = 1;
constexpr int exit_usage_error = 2;

void print_error_chain(const std::exception& e, bool top) {
  std::cerr << (top ? "error: " : "  caused by: ") << e.what() << '\n';
  try {
    std::rethrow_if_nested(e);
  } catch (const std::exception& inner) {
    print_error_chain(inner, false);
  } catch (...) {
    std::cerr << "  caused by: unknown error\n";
  }
}

// Usage errors found after parsing, in clap's layout (spec 08 §10).
int usage_failure(const std::string& message, const CLI::App& app) {
  std::cerr << tensogram::cli::late_usage_error_text(message, app);
  return exit_usage_error;
}

// clap counts values from the global options' environment variables as
// given arguments (spec 08 §10 "no arguments"); empty values are absent.
bool global_option_from_environment() {
  for (const char* name :
       {"TENSOGRAM_THREADS", "TENSOGRAM_ALLOW_NAN", "TENSOGRAM_ALLOW_INF", "TENSOGRAM_NAN_MASK_METHOD",
        "TENSOGRAM_POS_INF_MASK_METHOD", "TENSOGRAM_NEG_INF_MASK_METHOD", "TENSOGRAM_SMALL_MASK_THRESHOLD",
        "TENSOGRAM_QUIET"}) {
    const char* v = std::getenv(name);
    if (v != nullptr && *v != '\0') return true;
  }
  return false;
}

// Global options are registered on the program; `fallthrough` lets a
// subcommand hand options it does not know to its parent, which is what
// makes them work after the subcommand name too (§A.1).
CLI::App* add_command(CLI::App& app, const std::string& name, const std::string& description) {
  CLI::App* sub = app.add_subcommand(name, description);
  sub->fallthrough();
  sub->footer("");  // not the program's footer; apply_help_text adds the example
  return sub;
}

// `--no-sync` on every command that writes files through the atomic writer
// (core/atomic_file.hpp): bulk jobs may trade power-loss durability for
// speed; a killed process still leaves the old file or the new one.
void add_no_sync_flag(CLI::App& cmd, bool& no_sync) {
  cmd.add_flag("--no-sync", no_sync,
               "Do not fsync the output: faster, but a power loss soon after may lose it (a crash of "
               "the process still leaves the old file or the new one)");
}

}  // namespace

int main(int argc, char** argv) {
  std::ios::sync_with_stdio(false);
  const std::string version(tensogram::library_version());
  const std::vector<std::string> args(argv + (argc > 0 ? 1 : 0), argv + argc);

  // clap conventions (spec 08 §10): usage lines use the executable's name,
  // the version line always says `tensogram 0.24.0`, `-V` only on the program.
  CLI::App app("Tensogram message format CLI", tensogram::cli::program_name(argc > 0 ? argv[0] : nullptr));
  app.formatter(std::make_shared<tensogram::cli::clap_formatter>());
  app.set_help_flag("-h,--help", "Print help");
  app.set_version_flag("-V,--version", std::string(tensogram::cli::version_line), "Print version");
  app.footer("This is tensogram-cpp " + version +
             ", the C++ implementation of the reference tensogram CLI (see docs/cli.md for the "
             "differences); convert-npy, to-npy and completion are additions.");
  app.require_subcommand(0, 1);

  global_options globals;
  tensogram::cli::add_global_options(app, globals);

  tensogram::cli::info_args info;
  CLI::App* info_cmd = add_command(app, "info", "Show file-level summary: message count, size, version");
  info_cmd->add_option("files", info.files, "Tensogram files")->type_name("FILES");

  tensogram::cli::ls_args ls;
  CLI::App* ls_cmd = add_command(app, "ls", "List metadata from messages in tabular format");
  ls_cmd->add_option("-w", ls.where, "Where-clause filter (e.g. mars.param=2t/10u, mars.class!=od)")
      ->type_name("WHERE_CLAUSE");
  ls_cmd->add_option("-p", ls.keys, "Comma-separated keys to display (default: version)")->type_name("KEYS");
  ls_cmd->add_flag("-j", ls.json, "JSON output (one pretty-printed object per message)");
  ls_cmd->add_option("files", ls.files, "Tensogram files")->type_name("FILES");

  tensogram::cli::dump_args dump;
  CLI::App* dump_cmd = add_command(app, "dump", "Full dump of message contents");
  dump_cmd->add_option("-w", dump.where, "Where-clause filter")->type_name("WHERE_CLAUSE");
  dump_cmd->add_option("-p", dump.keys, "Comma-separated keys (only with -j)")->type_name("KEYS");
  dump_cmd->add_flag("-j", dump.json, "JSON output");
  dump_cmd->add_option("files", dump.files, "Tensogram files")->type_name("FILES");

  tensogram::cli::get_args get;
  CLI::App* get_cmd = add_command(app, "get", "Extract specific key values (strict: errors on missing keys)");
  get_cmd->add_option("-w", get.where, "Where-clause filter")->type_name("WHERE_CLAUSE");
  get_cmd->add_option("-p", get.keys, "Comma-separated keys to extract")->required()->type_name("KEYS");
  get_cmd->add_option("files", get.files, "Tensogram files")->type_name("FILES");

  tensogram::cli::set_args set;
  CLI::App* set_cmd = add_command(app, "set", "Modify metadata key/value pairs");
  set_cmd->add_option("-s", set.pairs, "Key=value pairs to set (comma-separated; values are stored as text)")
      ->required()
      ->type_name("SET_VALUES");
  set_cmd->add_option("-w", set.where, "Where-clause filter (other messages are copied unchanged)")
      ->type_name("WHERE_CLAUSE");
  set_cmd->add_option("input", set.input, "Input file")->required()->type_name("INPUT");
  set_cmd->add_option("output", set.output, "Output file (replaced atomically)")
      ->required()
      ->type_name("OUTPUT");
  add_no_sync_flag(*set_cmd, set.no_sync);

  tensogram::cli::copy_args copy;
  CLI::App* copy_cmd = add_command(app, "copy", "Copy/split messages from input to output");
  copy_cmd->add_option("-w", copy.where, "Where-clause filter")->type_name("WHERE_CLAUSE");
  copy_cmd->add_option("input", copy.input, "Input file")->required()->type_name("INPUT");
  copy_cmd
      ->add_option("output", copy.output,
                   "Output path; [key] placeholders fan messages out to several files, appending")
      ->required()
      ->type_name("OUTPUT");
  add_no_sync_flag(*copy_cmd, copy.no_sync);

  tensogram::cli::merge_args merge;
  CLI::App* merge_cmd = add_command(app, "merge", "Merge messages from multiple files into a single message");
  merge_cmd->add_option("inputs", merge.inputs, "Input files")->type_name("INPUTS");
  merge_cmd->add_option("-o,--output", merge.output, "Output file")->required()->type_name("OUTPUT");
  merge_cmd
      ->add_option("-s,--strategy", merge.strategy,
                   "Conflicting _extra_ keys: first (default) keeps the first value, last the last, "
                   "error fails")
      ->type_name("STRATEGY");
  add_no_sync_flag(*merge_cmd, merge.no_sync);

  tensogram::cli::split_args split;
  CLI::App* split_cmd =
      add_command(app, "split", "Split multi-object messages into separate single-object files");
  split_cmd->add_option("input", split.input, "Input file")->required()->type_name("INPUT");
  split_cmd
      ->add_option("-o,--output", split.output,
                   "Output template ([index] for numbering, e.g. split_[index].tgm)")
      ->required()
      ->type_name("OUTPUT");
  add_no_sync_flag(*split_cmd, split.no_sync);

  tensogram::cli::reshuffle_args reshuffle;
  CLI::App* reshuffle_cmd =
      add_command(app, "reshuffle", "Reshuffle frames: move footer frames to header position");
  reshuffle_cmd->add_option("input", reshuffle.input, "Input file")->required()->type_name("INPUT");
  reshuffle_cmd->add_option("-o,--output", reshuffle.output, "Output file")->required()->type_name("OUTPUT");
  add_no_sync_flag(*reshuffle_cmd, reshuffle.no_sync);

  // The GRIB/NetCDF converters (spec 04 §A.5, spec 05) in builds with the
  // importers (ecCodes, netCDF-C), as in the reference.
  tensogram::cli::convert_grib_args cgrib;
  tensogram::cli::convert_netcdf_args cnc;
  tensogram::cli::to_grib_args tgrib;
  tensogram::cli::to_netcdf_args tnc;
  CLI::App* cgrib_cmd = nullptr;
  CLI::App* cnc_cmd = nullptr;
  CLI::App* tgrib_cmd = nullptr;
  CLI::App* tnc_cmd = nullptr;
#if TENSOGRAM_HAS_IMPORTERS
  cgrib_cmd =
      add_command(app, "convert-grib", "Convert GRIB messages to Tensogram format (requires ecCodes)");
  cgrib_cmd->add_option("inputs", cgrib.inputs, "GRIB files")->required()->type_name("INPUTS");
  cgrib_cmd->add_option("-o,--output", cgrib.output, "Output file (replaced atomically); default: stdout")
      ->type_name("OUTPUT");
  cgrib_cmd->add_flag("--split", cgrib.split,
                      "One Tensogram message per GRIB message (default: one per input file, one object per "
                      "GRIB message)");
  cgrib_cmd->add_flag("--all-keys", cgrib.all_keys,
                      "Also store the ecCodes namespaces (ls, geography, time, vertical, parameter, "
                      "statistics) under base[i].grib");
  tensogram::cli::add_pipeline_flags(*cgrib_cmd, cgrib.pipeline,
                                     tensogram::cli::pipeline_flag_set::reference);

#endif

  tensogram::cli::validate_args validate;
  CLI::App* validate_cmd = add_command(app, "validate", "Validate .tgm files for correctness and integrity");
  CLI::Option* quick_flag =
      validate_cmd->add_flag("--quick", validate.quick, "Quick mode: structure only (level 1)");
  CLI::Option* checksum_flag = validate_cmd->add_flag(
      "--checksum", validate.checksum, "Checksum only: hash verification, no metadata/decode checks");
  CLI::Option* full_flag = validate_cmd->add_flag(
      "--full", validate.full, "Full mode: levels 1-4, including full decode and NaN/Inf detection");
  quick_flag->excludes(checksum_flag)->excludes(full_flag);
  checksum_flag->excludes(full_flag);
  validate_cmd->add_flag("--canonical", validate.canonical,
                         "Check RFC 8949 canonical CBOR key ordering (combinable with any mode)");
  validate_cmd->add_flag("--json", validate.json,
                         "JSON output (one pretty-printed array, one element per file)");
  validate_cmd->add_option("files", validate.files, "Files to validate")->required()->type_name("FILES");

  tensogram::cli::doctor_args doctor;
  CLI::App* doctor_cmd = add_command(
      app, "doctor", "Report environment diagnostics: build info, compiled-in features, self-test");
  doctor_cmd->add_flag("--json", doctor.json, "JSON output");

#if TENSOGRAM_HAS_IMPORTERS
  cnc_cmd =
      add_command(app, "convert-netcdf", "Convert NetCDF files to Tensogram format (requires libnetcdf)");
  cnc_cmd->add_option("inputs", cnc.inputs, "NetCDF files")->required()->type_name("INPUTS");
  cnc_cmd->add_option("-o,--output", cnc.output, "Output file (replaced atomically); default: stdout")
      ->type_name("OUTPUT");
  cnc_cmd
      ->add_option("--split-by", cnc.split_by,
                   "file (one message per file), variable (one per variable) or record (one per index of "
                   "the first unlimited dimension)")
      ->type_name("MODE");
  cnc_cmd->add_flag("--cf", cnc.cf, "Lift the CF attributes (standard_name, units, ...) into base[i].cf");
  cnc_cmd->add_flag("--root-group-only", cnc.root_group_only,
                    "Convert only the root group, as the reference does (default: nested groups too, named "
                    "group.sub.variable)");
  tensogram::cli::add_pipeline_flags(*cnc_cmd, cnc.pipeline, tensogram::cli::pipeline_flag_set::reference);

  tgrib_cmd = add_command(
      app, "to-grib", "Reconstruct GRIB from a Tensogram file (reverse of convert-grib; requires ecCodes)");
  tgrib_cmd->add_option("input", tgrib.input, "Input .tgm file")->required()->type_name("INPUT");
  tgrib_cmd
      ->add_option("-o,--output", tgrib.output, "Output GRIB file (replaced atomically); default: stdout")
      ->type_name("OUTPUT");

  tnc_cmd =
      add_command(app, "to-netcdf",
                  "Reconstruct NetCDF from a Tensogram file (reverse of convert-netcdf; requires libnetcdf)");
  tnc_cmd->add_option("input", tnc.input, "Input .tgm file")->required()->type_name("INPUT");
  tnc_cmd
      ->add_option("-o,--output", tnc.output,
                   "Output NetCDF file (written to a temporary file, then renamed)")
      ->required()
      ->type_name("OUTPUT");
#endif

  // Additions of tensogram-cpp, after the reference's subcommands.
  tensogram::cli::convert_npy_args conv;
  CLI::App* conv_cmd = add_command(
      app, "convert-npy", "Convert NumPy .npy arrays into one Tensogram message (one object per array)");
  conv_cmd->add_option("inputs", conv.inputs, "Input .npy files")->required()->type_name("IN.npy");
  conv_cmd->add_option("-o,--output", conv.output, "Output .tgm file (replaced atomically)")
      ->required()
      ->type_name("OUT.tgm");
  conv_cmd
      ->add_option("--meta", conv.meta,
                   "Metadata for every object's base entry; dotted keys nest (mars.param=2t); repeatable")
      ->type_name("KEY=VALUE")
      ->allow_extra_args(false);  // one KEY=VALUE per --meta, so inputs may follow
  tensogram::cli::add_pipeline_flags(*conv_cmd, conv.pipeline, tensogram::cli::pipeline_flag_set::extended);
  add_no_sync_flag(*conv_cmd, conv.no_sync);

  tensogram::cli::to_npy_args to_npy;
  CLI::App* to_npy_cmd =
      add_command(app, "to-npy", "Write every object of a Tensogram file as <message>_<object>.npy");
  to_npy_cmd->add_option("input", to_npy.input, "Input .tgm file")->required()->type_name("FILE.tgm");
  to_npy_cmd->add_option("-o,--output", to_npy.output_dir, "Output directory (created if missing)")
      ->required()
      ->type_name("DIR");

  // Registered last so that they see every subcommand above.
  tensogram::cli::doc_commands docs;
  tensogram::cli::add_doc_commands(app, docs);
  // clap's generated `help [COMMAND]...`, listed last (spec 08 §10).
  std::vector<std::string> help_names;
  CLI::App* help_cmd =
      app.add_subcommand("help", "Print this message or the help of the given subcommand(s)");
  help_cmd->add_option("command", help_names, "Print help for the subcommand(s)")->type_name("COMMAND");
  help_cmd->prefix_command();
  help_cmd->footer("");
  tensogram::cli::apply_help_text(app);

  if (args.empty() && !global_option_from_environment()) {
    // No arguments at all: the help on stderr, no `error:` line, exit 2.
    std::cerr << app.help();
    return exit_usage_error;
  }

  try {
    app.parse(argc, argv);
    if (app.get_subcommands().empty()) throw CLI::RequiredError::Subcommand(1);
  } catch (const CLI::ParseError& e) {
    const bool version_after_subcommand = dynamic_cast<const CLI::CallForVersion*>(&e) != nullptr &&
                                          tensogram::cli::version_flag_after_subcommand(app, args);
    // --help and --version are "errors" with exit code 0; CLI11 prints them.
    if (e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success) && !version_after_subcommand) {
      return app.exit(e);
    }
    if (app.get_subcommands().empty() && dynamic_cast<const CLI::RequiredError*>(&e) != nullptr) {
      std::string list;
      for (const std::string& n : tensogram::cli::subcommand_names(app))
        list += (list.empty() ? "" : ", ") + n;
      std::cerr << tensogram::cli::usage_error_text("'" + app.get_name() +
                                                        "' requires a subcommand but one was not provided\n"
                                                        "  [subcommands: " +
                                                        list + "]",
                                                    tensogram::cli::usage_of(app, app.get_name()));
      return exit_usage_error;
    }
    std::cerr << tensogram::cli::clap_error_text(e, app, args);
    return exit_usage_error;
  }
  if (help_cmd->parsed()) {
    std::vector<std::string> names = help_names;
    for (const std::string& r : help_cmd->remaining()) names.push_back(r);
    std::string out;
    std::string err;
    const int code = tensogram::cli::run_help_command(app, names, out, err);
    std::cout << out << std::flush;
    std::cerr << err;
    return code;
  }
  try {
    tensogram::cli::validate_global_options(globals);
  } catch (const tensogram::cli::usage_error& e) {
    return usage_failure(e.what(), app);
  }

  try {
    if (info_cmd->parsed()) tensogram::cli::run_info(info, std::cout);
    if (ls_cmd->parsed()) tensogram::cli::run_ls(ls, std::cout);
    if (dump_cmd->parsed()) tensogram::cli::run_dump(dump, std::cout);
    if (get_cmd->parsed()) tensogram::cli::run_get(get, std::cout);
    if (set_cmd->parsed()) tensogram::cli::run_set(set);
    if (copy_cmd->parsed()) tensogram::cli::run_copy(copy, globals);
    if (merge_cmd->parsed()) tensogram::cli::run_merge(merge, globals, std::cout);
    if (split_cmd->parsed()) tensogram::cli::run_split(split, globals, std::cout);
    if (reshuffle_cmd->parsed()) tensogram::cli::run_reshuffle(reshuffle, globals, std::cout);
    if (conv_cmd->parsed()) {
      tensogram::cli::run_convert_npy(conv, globals.to_encode_options(), std::cout, std::cerr,
                                      tensogram::cli::progress_wanted(globals));
    }
    if (to_npy_cmd->parsed()) {
      tensogram::cli::run_to_npy(to_npy, globals.to_decode_options(), std::cout, std::cerr);
    }
#if TENSOGRAM_HAS_IMPORTERS
    if (cgrib_cmd->parsed()) {
      tensogram::cli::run_convert_grib(cgrib, globals.to_encode_options(), std::cout, std::cerr,
                                       tensogram::cli::progress_wanted(globals));
    }
    if (cnc_cmd->parsed()) {
      tensogram::cli::run_convert_netcdf(cnc, globals.to_encode_options(), std::cout, std::cerr,
                                         tensogram::cli::progress_wanted(globals));
    }
    if (tgrib_cmd->parsed()) tensogram::cli::run_to_grib(tgrib, std::cout);
    if (tnc_cmd->parsed()) tensogram::cli::run_to_netcdf(tnc, std::cout);
#else
    (void)cgrib_cmd;
    (void)cnc_cmd;
    (void)tgrib_cmd;
    (void)tnc_cmd;
#endif
    if (validate_cmd->parsed()) {
      // The report is the output; failure is exit 1 without `error:` (§A.1).
      const int code = tensogram::cli::run_validate(validate, std::cout, std::cerr,
                                                    tensogram::cli::progress_wanted(globals));
      std::cout.flush();
      return code;
    }
    if (doctor_cmd->parsed()) {
      const int code = tensogram::cli::run_doctor(doctor, std::cout);
      std::cout.flush();
      return code;
    }
    tensogram::cli::run_doc_commands(docs, app, std::cout);
  } catch (const std::exception& e) {
    // Output printed before the failure stays printed (like the reference).
    std::cout.flush();
    print_error_chain(e, true);
    return exit_runtime_error;
  }
  std::cout.flush();
  return 0;
}
