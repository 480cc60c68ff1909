// The clap conventions of the `tensogram` command line (spec 08 §10):
// version, help flags and the `help` subcommand, no-argument and
// no-subcommand behaviour, the usage-error layout and texts, argument
// rendering, subcommand order and abouts, and the usage name (argv[0]).
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "clap_style.hpp"
#include "test_support.hpp"

namespace tensogram::cli::test {
namespace {

const std::string try_line = "\n\nFor more information, try '--help'.\n";

// A clap usage error: stderr only, exit 2, `error: <message>` first, the
// usage line and the try line last.
void expect_clap_error(const run_result& r, const std::string& message, const std::string& usage) {
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err.rfind("error: " + message + "\n", 0), 0U) << r.err;
  const std::string tail = "\nUsage: " + usage + try_line;
  ASSERT_GE(r.err.size(), tail.size()) << r.err;
  EXPECT_EQ(r.err.substr(r.err.size() - tail.size()), tail) << r.err;
}

// ---- version ----------------------------------------------------------------

TEST(CliClap, VersionOnTheProgramOnly) {
  for (const char* flag : {"--version", "-V"}) {
    const run_result r = run_cli({flag});
    EXPECT_EQ(r.exit_code, 0);
    EXPECT_EQ(r.out, "tensogram 0.24.0\n");
    EXPECT_EQ(r.err, "");
  }
  expect_clap_error(run_cli({"info", "-V"}), "unexpected argument '-V' found",
                    "tensogram info [OPTIONS] [FILES]...");
  // Before the subcommand it is the program's flag.
  const run_result before = run_cli({"-V", "info"});
  EXPECT_EQ(before.exit_code, 0);
  EXPECT_EQ(before.out, "tensogram 0.24.0\n");
  expect_clap_error(run_cli({"doctor", "--version"}), "unexpected argument '--version' found",
                    "tensogram doctor [OPTIONS]");
}

// ---- help -------------------------------------------------------------------

TEST(CliClap, HelpSubcommandIsTheLongHelpOfTheNamedCommand) {
  const run_result program = run_cli({"--help"});
  ASSERT_EQ(program.exit_code, 0);
  const run_result help = run_cli({"help"});
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_EQ(help.out, program.out);
  EXPECT_EQ(help.err, "");
  for (const char* sub : {"info", "ls", "validate", "merge", "help"}) {
    SCOPED_TRACE(sub);
    const run_result direct = run_cli({sub, "--help"});
    const run_result via_help = run_cli({"help", sub});
    EXPECT_EQ(via_help.exit_code, 0);
    EXPECT_EQ(via_help.err, "");
    EXPECT_EQ(via_help.out, direct.out);
    EXPECT_NE(via_help.out.find("\nUsage: tensogram " + std::string(sub)), std::string::npos) << via_help.out;
  }
  expect_clap_error(run_cli({"help", "bogus"}), "unrecognized subcommand 'bogus'",
                    "tensogram [OPTIONS] <COMMAND>");
}

TEST(CliClap, HelpLayout) {
  const run_result r = run_cli({"--help"});
  ASSERT_EQ(r.exit_code, 0);
  EXPECT_EQ(
      r.out.rfind("Tensogram message format CLI\n\nUsage: tensogram [OPTIONS] <COMMAND>\n\nCommands:\n", 0),
      0U)
      << r.out;
  EXPECT_NE(r.out.find("\n  help  "), std::string::npos);
  EXPECT_NE(r.out.find("Print this message or the help of the given subcommand(s)\n\nOptions:\n"),
            std::string::npos);
  EXPECT_NE(r.out.find("      --threads <THREADS>  "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("[env: TENSOGRAM_THREADS=] [default: 0]\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("--allow-nan[=<ALLOW_NAN>]"), std::string::npos);
  EXPECT_NE(r.out.find("[possible values: true, false]"), std::string::npos);
  EXPECT_NE(r.out.find("\n  -h, --help "), std::string::npos);
  EXPECT_NE(r.out.find("\n  -V, --version "), std::string::npos);
  EXPECT_NE(r.out.find("tensogram-cpp"), std::string::npos);

  // Env-backed options show the current value; global options appear in
  // every subcommand's Options.
  const run_result ls = run_cli({"ls", "-h"}, {"TENSOGRAM_THREADS=3"});
  ASSERT_EQ(ls.exit_code, 0);
  EXPECT_EQ(
      ls.out.rfind(
          "List metadata from messages in tabular format\n\nUsage: tensogram ls [OPTIONS] [FILES]...\n\n"
          "Arguments:\n  [FILES]...  ",
          0),
      0U)
      << ls.out;
  EXPECT_NE(ls.out.find("[env: TENSOGRAM_THREADS=3]"), std::string::npos) << ls.out;
  EXPECT_NE(ls.out.find("\n  -w <WHERE_CLAUSE> "), std::string::npos) << ls.out;
  EXPECT_EQ(ls.out.find("-V, --version"), std::string::npos);
}

TEST(CliClap, SubcommandOrderAndAbouts) {
  const run_result r = run_cli({"--help"});
  ASSERT_EQ(r.exit_code, 0);
  const std::vector<std::pair<std::string, std::string>> expected = {
      {"info", "Show file-level summary: message count, size, version"},
      {"ls", "List metadata from messages in tabular format"},
      {"dump", "Full dump of message contents"},
      {"get", "Extract specific key values (strict: errors on missing keys)"},
      {"set", "Modify metadata key/value pairs"},
      {"copy", "Copy/split messages from input to output"},
      {"merge", "Merge messages from multiple files into a single message"},
      {"split", "Split multi-object messages into separate single-object files"},
      {"reshuffle", "Reshuffle frames: move footer frames to header position"},
      {"convert-grib", "Convert GRIB messages to Tensogram format (requires ecCodes)"},
      {"validate", "Validate .tgm files for correctness and integrity"},
      {"doctor", "Report environment diagnostics: build info, compiled-in features, self-test"},
      {"convert-netcdf", "Convert NetCDF files to Tensogram format (requires libnetcdf)"},
      {"to-grib", "Reconstruct GRIB from a Tensogram file (reverse of convert-grib; requires ecCodes)"},
      {"to-netcdf",
       "Reconstruct NetCDF from a Tensogram file (reverse of convert-netcdf; requires libnetcdf)"},
      {"help", "Print this message or the help of the given subcommand(s)"},
  };
  std::size_t last = 0;
  for (const auto& [name, about] : expected) {
    const std::size_t at = r.out.find("\n  " + name + " ");
    if (at == std::string::npos && name.find("grib") == std::string::npos &&
        name.find("netcdf") == std::string::npos) {
      ADD_FAILURE() << name << " missing";
      continue;
    }
    if (at == std::string::npos) continue;  // a build without the converters
    EXPECT_GT(at, last) << name << " out of order";
    last = at;
    const std::size_t eol = r.out.find('\n', at + 1);
    EXPECT_EQ(r.out.substr(eol - about.size(), about.size()), about) << name;
  }
}

// ---- no arguments, no subcommand, unknown subcommand ---------------------------

TEST(CliClap, NoArgumentsPrintsTheHelpToStderr) {
  const run_result r = run_cli({});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, run_cli({"--help"}).out);
  EXPECT_EQ(r.err.find("error:"), std::string::npos);
}

TEST(CliClap, OptionsWithoutSubcommand) {
  const run_result opts = run_cli({"--threads", "2"});
  expect_clap_error(opts, "'tensogram' requires a subcommand but one was not provided",
                    "tensogram [OPTIONS] <COMMAND>");
  EXPECT_NE(opts.err.find("\n  [subcommands: info, ls, dump, get, set, copy, merge, split, reshuffle, "),
            std::string::npos)
      << opts.err;
  EXPECT_NE(opts.err.find(", help]\n"), std::string::npos) << opts.err;
  // A global option's environment variable counts as an argument.
  const run_result env = run_cli({}, {"TENSOGRAM_THREADS=2"});
  EXPECT_EQ(env.err, opts.err);
  EXPECT_EQ(env.exit_code, 2);
}

TEST(CliClap, UnrecognizedSubcommandWithTip) {
  const run_result close = run_cli({"inof"});
  expect_clap_error(close, "unrecognized subcommand 'inof'", "tensogram [OPTIONS] <COMMAND>");
  EXPECT_NE(close.err.find(
                "error: unrecognized subcommand 'inof'\n\n  tip: a similar subcommand exists: 'info'\n\n"),
            std::string::npos)
      << close.err;
  const run_result far = run_cli({"zzzz"});
  expect_clap_error(far, "unrecognized subcommand 'zzzz'", "tensogram [OPTIONS] <COMMAND>");
  EXPECT_EQ(far.err.find("tip:"), std::string::npos);
}

// ---- other usage errors -------------------------------------------------------

TEST(CliClap, UsageErrorTexts) {
  expect_clap_error(run_cli({"doctor", "extra"}), "unexpected argument 'extra' found",
                    "tensogram doctor [OPTIONS]");
  expect_clap_error(run_cli({"merge", "a.tgm"}),
                    "the following required arguments were not provided:\n  --output <OUTPUT>",
                    "tensogram merge [OPTIONS] --output <OUTPUT> [INPUTS]...");
  expect_clap_error(run_cli({"set", "-s", "a=1"}),
                    "the following required arguments were not provided:\n  <INPUT>\n  <OUTPUT>",
                    "tensogram set [OPTIONS] -s <SET_VALUES> <INPUT> <OUTPUT>");
  expect_clap_error(run_cli({"--threads", "abc", "info"}),
                    "invalid value 'abc' for '--threads <THREADS>': invalid digit found in string",
                    "tensogram info [OPTIONS] [FILES]...");
  expect_clap_error(
      run_cli({"info"}, {"TENSOGRAM_THREADS=99999999999"}),
      "invalid value '99999999999' for '--threads <THREADS>': number too large to fit in target type",
      "tensogram info [OPTIONS] [FILES]...");
  expect_clap_error(run_cli({"info", "--allow-nan=maybe"}),
                    "invalid value 'maybe' for '--allow-nan[=<ALLOW_NAN>]': value was not a boolean",
                    "tensogram info [OPTIONS] [FILES]...");
  expect_clap_error(run_cli({"validate", "--quick", "--full", "x.tgm"}),
                    "the argument '--quick' cannot be used with '--full'",
                    "tensogram validate [OPTIONS] <FILES>...");
  expect_clap_error(run_cli({"ls", "-w"}),
                    "a value is required for '-w <WHERE_CLAUSE>' but none was supplied",
                    "tensogram ls [OPTIONS] [FILES]...");
  expect_clap_error(run_cli({"get", "x.tgm"}),
                    "the following required arguments were not provided:\n  -p <KEYS>",
                    "tensogram get [OPTIONS] -p <KEYS> [FILES]...");
  const run_result dash = run_cli({"info", "-x"});
  expect_clap_error(dash, "unexpected argument '-x' found", "tensogram info [OPTIONS] [FILES]...");
  EXPECT_NE(dash.err.find("\n\n  tip: to pass '-x' as a value, use '-- -x'\n\n"), std::string::npos)
      << dash.err;
}

// ---- usage name ----------------------------------------------------------------

TEST(CliClap, UsageUsesTheExecutableName) {
  const scratch_dir dir;
  const std::filesystem::path alias = dir / "tgm-tool";
  std::filesystem::create_symlink(TENSOGRAM_CLI, alias);
  const run_result r = run_program(alias.string(), {"info", "-V"});
  expect_clap_error(r, "unexpected argument '-V' found", "tgm-tool info [OPTIONS] [FILES]...");
  const run_result v = run_program(alias.string(), {"-V"});
  EXPECT_EQ(v.out, "tensogram 0.24.0\n");
}

// ---- helpers -------------------------------------------------------------------

TEST(CliClap, JaroMatchesStrsim) {
  EXPECT_DOUBLE_EQ(jaro("", ""), 1.0);
  EXPECT_DOUBLE_EQ(jaro("abc", ""), 0.0);
  EXPECT_NEAR(jaro("martha", "marhta"), 0.944444, 1e-6);  // strsim's documented example
  EXPECT_NEAR(jaro("dixon", "dicksonx"), 0.766667, 1e-6);
  EXPECT_EQ(similar_subcommand_tip("dumb", {"info", "dump"}), "a similar subcommand exists: 'dump'");
  EXPECT_EQ(similar_subcommand_tip("xyz", {"info", "dump"}), "");
}

TEST(CliClap, RenderArg) {
  CLI::App app("t", "t");
  std::string s;
  std::vector<std::string> v;
  bool b = false;
  EXPECT_EQ(render_arg(*app.add_option("--threads", s)->type_name("THREADS")), "--threads <THREADS>");
  EXPECT_EQ(render_arg(*app.add_option("-o,--output", s)->type_name("OUTPUT")), "--output <OUTPUT>");
  EXPECT_EQ(render_arg(*app.add_option("-p", s)->type_name("KEYS")), "-p <KEYS>");
  EXPECT_EQ(render_arg(*app.add_flag("--quick", b)), "--quick");
  EXPECT_EQ(render_arg(*app.add_option("input", s)->required()->type_name("INPUT")), "<INPUT>");
  EXPECT_EQ(render_arg(*app.add_option("files", v)->type_name("FILES")), "[FILES]...");
}

}  // namespace
}  // namespace tensogram::cli::test
