// Help text in clap 4.6's layout (spec 08 §10 "help layout"), as a CLI11
// formatter: `<about>\n\nUsage: <usage>\n`, then `Commands:`, `Arguments:`
// and `Options:` sections (global options in every subcommand's
// `Options:`, `[env: NAME=value]`, `[default: v]`, `[possible values: …]`),
// then the footer (the usage example).
#pragma once

#include <string>

#include <functional>  // CLI/FormatterFwd.hpp uses std::function without including it

#include <CLI/FormatterFwd.hpp>

namespace tensogram::cli {

class clap_formatter : public CLI::FormatterBase {
 public:
  /// `name` is the command path (`tensogram ls`), as CLI11 passes it.
  std::string make_help(const CLI::App* app, std::string name, CLI::AppFormatMode mode) const override;
};

}  // namespace tensogram::cli
