// Documents generated from the CLI definition (tools/tensogram/cli_reference.hpp)
// must match their committed copies, so they cannot drift from the parser:
// docs/cli-reference.md (`tensogram help-markdown`) and
// tools/tensogram/completion/tensogram.bash (`tensogram completion bash`).
// Regenerate both with `cmake --build <build> --target cli-docs`.
// Also: every subcommand's --help shows its example, every example only
// uses options its subcommand has, and the completion script works in bash.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "help_text.hpp"
#include "test_support.hpp"

extern char** environ;

namespace tensogram::cli::test {
namespace {

const std::string source_dir = TENSOGRAM_SOURCE_DIR;
const std::string committed_markdown = source_dir + "/docs/cli-reference.md";
const std::string committed_completion = source_dir + "/tools/tensogram/completion/tensogram.bash";
const std::string regenerate = "; regenerate with `cmake --build <build> --target cli-docs`";

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return "<missing: " + path + ">";
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// `bash -c script` with `args` as $1..., no TENSOGRAM_* variables and no
// user start-up files (bash -c reads none when not interactive).
run_result run_bash(const std::string& script, const std::vector<std::string>& args = {}) {
  const scratch_dir tmp;
  const std::string out_path = (tmp / "stdout").string();
  const std::string err_path = (tmp / "stderr").string();
  std::vector<std::string> argv_store = {"bash", "--norc", "--noprofile", "-c", script, "bash"};
  argv_store.insert(argv_store.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& a : argv_store) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, 2, err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  pid_t pid = 0;
  const int rc = posix_spawnp(&pid, "bash", &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) throw std::runtime_error(std::string("cannot run bash: ") + std::strerror(rc));
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) throw std::runtime_error("waitpid failed");
  }
  run_result r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = slurp(out_path);
  r.err = slurp(err_path);
  return r;
}

std::vector<std::string> words(const std::string& text) {
  std::istringstream in(text);
  return {std::istream_iterator<std::string>(in), std::istream_iterator<std::string>()};
}

// The visible subcommands, as the completion script lists them.
std::vector<std::string> subcommands() {
  const run_result r =
      run_bash("source \"$1\" && printf '%s\\n' \"$_tensogram_subcommands\"", {committed_completion});
  return words(r.out);
}

// What the completion function offers for the command line `line` (the last
// word is the one being completed; "" for a fresh word).
std::vector<std::string> complete(const std::vector<std::string>& line) {
  std::vector<std::string> args = {committed_completion};
  args.insert(args.end(), line.begin(), line.end());
  const run_result r = run_bash(
      "source \"$1\"; shift; COMP_WORDS=(\"$@\"); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); _tensogram; "
      "printf '%s\\n' \"${COMPREPLY[@]}\"",
      args);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  return words(r.out);
}

TEST(CliDocs, MarkdownReferenceIsUpToDate) {
  const run_result r = run_cli({"help-markdown"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_EQ(r.out, slurp(committed_markdown)) << committed_markdown << " is stale" << regenerate;
}

TEST(CliDocs, CompletionScriptIsUpToDate) {
  const run_result r = run_cli({"completion", "bash"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_EQ(r.out, slurp(committed_completion)) << committed_completion << " is stale" << regenerate;
}

TEST(CliDocs, CompletionShellIsValidated) {
  const run_result r = run_cli({"completion", "zsh"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find("zsh not in {bash}"), std::string::npos) << r.err;
}

TEST(CliDocs, HelpMarkdownIsHidden) {
  const run_result r = run_cli({"--help"});
  ASSERT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out.find("help-markdown"), std::string::npos);
  EXPECT_NE(r.out.find("completion"), std::string::npos);
}

TEST(CliDocs, BashAcceptsTheScript) {
  const run_result syntax = run_bash("bash -n \"$1\"", {committed_completion});
  EXPECT_EQ(syntax.exit_code, 0) << syntax.err;
  const run_result loaded = run_bash("source \"$1\" && complete -p tensogram", {committed_completion});
  EXPECT_EQ(loaded.exit_code, 0) << loaded.err;
  EXPECT_EQ(loaded.out, "complete -o default -F _tensogram tensogram\n");
  EXPECT_EQ(loaded.err, "");
}

TEST(CliDocs, CompletionOffersSubcommandsOptionsAndChoices) {
  const std::vector<std::string> subs = subcommands();
  ASSERT_FALSE(subs.empty());
  EXPECT_EQ(complete({"tensogram", ""}), subs);
  EXPECT_EQ(complete({"tensogram", "do"}), (std::vector<std::string>{"doctor"}));
  EXPECT_EQ(complete({"tensogram", "--threads", "4", "doc"}), (std::vector<std::string>{"doctor"}));
  EXPECT_EQ(complete({"tensogram", "doctor", "--j"}), (std::vector<std::string>{"--json"}));
  EXPECT_EQ(complete({"tensogram", "completion", ""}), (std::vector<std::string>{"bash"}));
  EXPECT_EQ(complete({"tensogram", "convert-npy", "--encoding", ""}),
            (std::vector<std::string>{"none", "simple_packing"}));
  EXPECT_EQ(complete({"tensogram", "convert-npy", "--zfp-mode", "fixed_r"}),
            (std::vector<std::string>{"fixed_rate"}));
  EXPECT_EQ(complete({"tensogram", "ls", "--nan-mask-method", "r"}),
            (std::vector<std::string>{"rle", "roaring"}));
  // `--opt=value`: bash splits the word at `=`.
  EXPECT_EQ(complete({"tensogram", "--nan-mask-method", "=", "ro"}), (std::vector<std::string>{"roaring"}));
  // A value without fixed choices, or a file argument: nothing here, so
  // `complete -o default` offers file names.
  EXPECT_EQ(complete({"tensogram", "convert-npy", "-o", ""}), std::vector<std::string>{});
  EXPECT_EQ(complete({"tensogram", "info", ""}), std::vector<std::string>{});
  // A value is not taken for the subcommand.
  EXPECT_EQ(complete({"tensogram", "convert-npy", "-o", "info", "--me"}),
            (std::vector<std::string>{"--meta"}));
  const std::vector<std::string> conv = complete({"tensogram", "convert-npy", "--"});
  for (const char* o : {"--compression", "--encoding", "--zfp-rate", "--threads", "--help"}) {
    EXPECT_NE(std::find(conv.begin(), conv.end(), o), conv.end()) << o;
  }
}

TEST(CliDocs, EverySubcommandShowsAnExampleThatFitsIt) {
  const std::vector<std::string> subs = subcommands();
  for (const std::string& sub : subs) {
    SCOPED_TRACE(sub);
    const subcommand_help* h = find_subcommand_help(sub);
    ASSERT_NE(h, nullptr) << "add an example for '" << sub << "' to tools/tensogram/help_text.cpp";
    const std::vector<std::string> ex = words(std::string(h->example));
    ASSERT_GE(ex.size(), 2U);
    EXPECT_EQ(ex[0], "tensogram");
    EXPECT_EQ(ex[1], sub);
    // The example uses only options the subcommand (or the program) has.
    const run_result opts =
        run_bash("source \"$1\" && _tensogram_options \"$2\"", {committed_completion, sub});
    const std::vector<std::string> known = words(opts.out);
    for (const std::string& w : ex) {
      if (w.starts_with("-")) {
        EXPECT_NE(std::find(known.begin(), known.end(), w.substr(0, w.find('='))), known.end()) << w;
      }
    }
    const run_result help = run_cli({sub, "--help"});
    EXPECT_EQ(help.exit_code, 0) << help.err;
    EXPECT_NE(help.out.find("Example:\n  " + std::string(h->example) + "\n"), std::string::npos) << help.out;
  }
}

TEST(CliDocs, HelpTableHasNoDuplicates) {
  std::set<std::string_view> seen;
  for (const subcommand_help& h : subcommand_help_table()) {
    EXPECT_TRUE(seen.insert(h.name).second) << h.name;
    EXPECT_TRUE(h.example.starts_with("tensogram " + std::string(h.name))) << h.example;
  }
}

}  // namespace
}  // namespace tensogram::cli::test
