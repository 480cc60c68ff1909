// Documents generated from the CLI11 definition of `tensogram` itself, so
// they cannot drift from the parser: the Markdown reference
// (docs/cli-reference.md, hidden subcommand `help-markdown`) and the bash
// completion script (`completion bash`, committed as
// tools/tensogram/completion/tensogram.bash and installed to
// share/bash-completion/completions/tensogram). The CMake target `cli-docs`
// regenerates both; tests/tools/cli_docs_test.cpp fails when the committed
// files differ from what the binary generates.
#pragma once

#include <ostream>
#include <string>

namespace CLI {
class App;
}

namespace tensogram::cli {

/// The two subcommands, registered by `add_doc_commands`.
struct doc_commands {
  CLI::App* completion = nullptr;
  CLI::App* markdown = nullptr;
  std::string shell = "bash";
};

/// Registers `completion SHELL` and the hidden `help-markdown` on `app`.
void add_doc_commands(CLI::App& app, doc_commands& cmds);

/// Prints the document of whichever of the two subcommands was parsed.
/// Returns false when neither was.
bool run_doc_commands(const doc_commands& cmds, const CLI::App& app, std::ostream& out);

/// Markdown reference of every visible subcommand and option of `app`.
[[nodiscard]] std::string render_markdown(const CLI::App& app);

/// A bash completion script for `app` (no dependency on the
/// bash-completion package; `complete -o default` falls back to file names).
[[nodiscard]] std::string render_bash_completion(const CLI::App& app);

}  // namespace tensogram::cli
