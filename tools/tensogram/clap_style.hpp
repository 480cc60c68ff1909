// The command-line conventions the reference CLI inherits from clap 4.6
// (spec 08 §10), reproduced over CLI11: usage lines, argument rendering,
// the usage-error layout, `help [COMMAND]...` and the translation of CLI11's
// parse errors into clap's texts.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace CLI {
class App;
class Option;
class ParseError;
}  // namespace CLI

namespace tensogram::cli {

/// The version line (spec 08 §10: always `tensogram`, whatever argv[0] is).
inline constexpr std::string_view version_line = "tensogram 0.24.0";

/// `v` joined with `sep`.
[[nodiscard]] std::string join(const std::vector<std::string>& v, std::string_view sep);

/// An option's value name, without the validator descriptions CLI11
/// appends to its type name (`ENC:{none,simple_packing}` → `ENC`).
[[nodiscard]] std::string value_name(const CLI::Option& o);

/// Fixed choices, read from "{a,b,c}" validator descriptions (CLI::IsMember
/// and the pipeline flags' codec validator use that form).
[[nodiscard]] std::vector<std::string> choices_of(const CLI::Option& o);

/// argv[0]'s file name: usage lines use the invoked executable's name.
[[nodiscard]] std::string program_name(const char* argv0);

/// An argument as clap renders it in messages: long name if any, else
/// short, with the value name (`--threads <THREADS>`, `-p <KEYS>`,
/// `--allow-nan[=<ALLOW_NAN>]`, `--quick`); positionals `<INPUT>`,
/// `[FILES]...`.
[[nodiscard]] std::string render_arg(const CLI::Option& o);

/// `Usage:` text of `cmd` without the title: `<path> [OPTIONS]`, the
/// required options, then the positionals (or `<COMMAND>` for the program).
/// `path` is the command path, e.g. `tensogram ls`.
[[nodiscard]] std::string usage_of(const CLI::App& cmd, const std::string& path);

/// clap's usage-error layout: `error: <message>` [`\n\n  tip: <tip>`]
/// `\n\nUsage: <usage>\n\nFor more information, try '--help'.\n`.
[[nodiscard]] std::string usage_error_text(const std::string& message, const std::string& usage,
                                           const std::string& tip = "");

/// Jaro similarity (strsim::jaro), which clap's suggestions use.
[[nodiscard]] double jaro(std::string_view a, std::string_view b);

/// The `tip:` text for an unknown subcommand `word` among `names` (clap:
/// candidates with Jaro similarity > 0.7, best last), or "" when none is close.
[[nodiscard]] std::string similar_subcommand_tip(std::string_view word,
                                                 const std::vector<std::string>& names);

/// Visible subcommand names of `app` in declaration order.
[[nodiscard]] std::vector<std::string> subcommand_names(const CLI::App& app);

/// Whether a `-V`/`--version` of `args` comes after the subcommand name:
/// only the program has the flag (spec 08 §10), so that is a usage error,
/// while `tensogram -V info` prints the version.
[[nodiscard]] bool version_flag_after_subcommand(const CLI::App& app, const std::vector<std::string>& args);

/// The complete stderr text for a CLI11 parse failure of the command line
/// `args` (without argv[0]) on `app` (named after the executable).
[[nodiscard]] std::string clap_error_text(const CLI::ParseError& e, const CLI::App& app,
                                          const std::vector<std::string>& args);

/// Text of a usage error found after parsing (e.g. a bad BOOL value), laid
/// out like clap's, against the command that was parsed.
[[nodiscard]] std::string late_usage_error_text(const std::string& message, const CLI::App& app);

/// `help [COMMAND]...`: the help of the program or of the named
/// (sub)subcommand into `out` (returns 0), or the clap error into `err`
/// (returns 2).
int run_help_command(const CLI::App& app, const std::vector<std::string>& names, std::string& out,
                     std::string& err);

}  // namespace tensogram::cli
