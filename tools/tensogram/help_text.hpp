// One table of usage examples: a one-line example for every subcommand of
// `tensogram`. `--help` shows it (as the CLI11 footer) and the generated
// reference (docs/cli-reference.md, `tensogram help-markdown`) reads the same
// table, so the two cannot disagree. Descriptions stay where each subcommand
// is registered (main.cpp): the generators read them from the CLI11 tree, so
// they have a single source too.
#pragma once

#include <span>
#include <string_view>

namespace CLI {
class App;
}

namespace tensogram::cli {

struct subcommand_help {
  std::string_view name;
  std::string_view example;  ///< a complete command line starting with `tensogram`
};

/// Every subcommand the tool has or may have (spec 04 §A.1's list, the
/// converters included, plus this implementation's additions).
[[nodiscard]] std::span<const subcommand_help> subcommand_help_table() noexcept;

/// The entry for `name`, or nullptr.
[[nodiscard]] const subcommand_help* find_subcommand_help(std::string_view name) noexcept;

/// For every registered subcommand with an entry: puts "Example:" and the
/// example in front of its footer. Call once, after every subcommand is
/// registered.
void apply_help_text(CLI::App& app);

}  // namespace tensogram::cli
