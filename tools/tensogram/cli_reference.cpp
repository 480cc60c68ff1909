#include "cli_reference.hpp"

#include <algorithm>
#include <sstream>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>

#include "clap_style.hpp"
#include "help_text.hpp"
#include "tool_error.hpp"

namespace tensogram::cli {

namespace {

// ---------------------------------------------------------------------------
// Reading the CLI11 tree.

// Visible subcommands in registration order: option groups are unnamed Apps
// and hidden subcommands have an empty group (CLI11's convention).
std::vector<const CLI::App*> visible_subcommands(const CLI::App& app) {
  return app.get_subcommands([](const CLI::App* a) {
    return !a->get_name().empty() && !a->get_group().empty() && !a->get_disabled();
  });
}

// Options of `app` minus -h/--help (every command has it; the reference
// says so once), hidden options (empty group) and positionals when
// `positional` is false (or only positionals when it is true).
std::vector<const CLI::Option*> options_of(const CLI::App& app, bool positional) {
  const CLI::Option* help = app.get_help_ptr();
  return app.get_options([help, positional](const CLI::Option* o) {
    return o != help && !o->get_group().empty() && o->get_positional() == positional &&
           (positional || o->nonpositional());
  });
}

bool is_flag(const CLI::Option& o) {
  return o.get_expected_max() == 0;  // add_flag sets expected(0)
}

std::vector<std::string> names_of(const CLI::Option& o) {
  std::vector<std::string> out;
  for (const std::string& s : o.get_snames()) out.push_back("-" + s);
  for (const std::string& l : o.get_lnames()) out.push_back("--" + l);
  return out;
}

// ---------------------------------------------------------------------------
// Markdown.

// Text for a table cell or paragraph: one line, no unescaped pipes, and no
// `<...>` that a Markdown renderer would take for HTML
// (`<message>_<object>.npy` in a description).
std::string text(std::string_view in) {
  std::string out;
  for (const char c : in) {
    switch (c) {
      case '\n': out += ' '; break;
      case '|': out += "\\|"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      default: out += c;
    }
  }
  return out;
}

// A code span (in a table cell, where pipes still need escaping: GFM).
std::string code(std::string_view in) {
  if (in.empty()) return {};
  std::string out = "`";
  for (const char c : in) {
    if (c == '|') {
      out += "\\|";
    } else {
      out += c == '\n' ? ' ' : c;
    }
  }
  return out + "`";
}

std::string positional_usage(const CLI::Option& o) {
  std::string name = value_name(o);
  if (name.empty()) name = o.get_name(true);
  if (o.get_items_expected_max() > 1) name += "...";
  return o.get_required() ? name : "[" + name + "]";
}

void option_table(std::ostringstream& md, const CLI::App& app, bool with_env) {
  const std::vector<const CLI::Option*> pos = options_of(app, true);
  const std::vector<const CLI::Option*> opts = options_of(app, false);
  if (pos.empty() && opts.empty()) return;
  md << (with_env ? "| Option | Value | Default | Env variable | Description |\n|---|---|---|---|---|\n"
                  : "| Argument / option | Value | Default | Description |\n|---|---|---|---|\n");
  for (const CLI::Option* o : pos) {
    std::string desc = o->get_description();
    if (o->get_required()) desc += " (required)";
    md << "| " << code(positional_usage(*o)) << " | " << code((o->get_type_name())) << " | "
       << code(o->get_default_str()) << " | " << (with_env ? code(o->get_envname()) + " | " : "")
       << text(desc) << " |\n";
  }
  for (const CLI::Option* o : opts) {
    std::vector<std::string> names;
    for (const std::string& n : names_of(*o)) names.push_back(code(n));
    std::string desc = o->get_description();
    if (o->get_required()) desc += " (required)";
    if (!is_flag(*o) && o->get_items_expected_max() > 1 && desc.find("repeatable") == std::string::npos) {
      desc += " (repeatable)";
    }
    md << "| " << join(names, ", ") << " | " << code((is_flag(*o) ? "" : o->get_type_name())) << " | "
       << code((o->get_default_str())) << " | " << (with_env ? code(o->get_envname()) + " | " : "")
       << text(desc) << " |\n";
  }
  md << '\n';
}

// ---------------------------------------------------------------------------
// Bash.

std::string quoted(const std::vector<std::string>& words) {
  const std::string s = join(words, " ");
  if (s.find('\'') != std::string::npos) throw tool_error("cannot quote for bash: " + s);
  return "'" + s + "'";
}

struct option_facts {
  std::vector<std::string> all;     // every name
  std::vector<std::string> valued;  // names that take a separate value
  std::vector<std::pair<std::vector<std::string>, std::vector<std::string>>> choices;  // names → choices
  std::vector<std::string> positional_choices;
};

option_facts facts_of(const CLI::App& app) {
  option_facts f;
  for (const CLI::Option* o : options_of(app, false)) {
    const std::vector<std::string> names = names_of(*o);
    f.all.insert(f.all.end(), names.begin(), names.end());
    if (!is_flag(*o)) f.valued.insert(f.valued.end(), names.begin(), names.end());
    std::vector<std::string> c = choices_of(*o);
    if (!c.empty()) f.choices.emplace_back(names, std::move(c));
  }
  for (const CLI::Option* o : options_of(app, true)) {
    // The first positional with fixed choices (e.g. `completion SHELL`).
    if (f.positional_choices.empty()) f.positional_choices = choices_of(*o);
  }
  return f;
}

std::string case_pattern(const std::string& prefix, const std::vector<std::string>& names) {
  std::vector<std::string> p;
  for (const std::string& n : names) p.push_back(prefix + n);
  return join(p, "|");
}

}  // namespace

void add_doc_commands(CLI::App& app, doc_commands& cmds) {
  cmds.completion = app.add_subcommand("completion", "Print a shell completion script (bash)");
  cmds.completion->add_option("shell", cmds.shell, "Shell to complete for")
      ->check(CLI::IsMember({"bash"}))
      ->required()
      ->type_name("SHELL");
  // Hidden (empty group): a maintainer's tool, run by the `cli-docs` target.
  cmds.markdown = app.add_subcommand("help-markdown", "Print the command-line reference as Markdown");
  cmds.markdown->group("");
}

bool run_doc_commands(const doc_commands& cmds, const CLI::App& app, std::ostream& out) {
  if (cmds.completion != nullptr && cmds.completion->parsed()) {
    out << render_bash_completion(app);
    return true;
  }
  if (cmds.markdown != nullptr && cmds.markdown->parsed()) {
    out << render_markdown(app);
    return true;
  }
  return false;
}

std::string render_markdown(const CLI::App& app) {
  const std::string prog = app.get_name();
  std::ostringstream md;
  md << "# `" << prog << "` command-line reference\n\n"
     << "<!-- Generated from the command-line definition by `" << prog
     << " help-markdown` (CMake target `cli-docs`).\n"
     << "     Do not edit: tests/tools/cli_docs_test.cpp fails when this file differs from the generated "
        "text. "
        "-->\n\n"
     << "Every subcommand and option of this build of `" << prog
     << "`, with an example each. [cli.md](cli.md) describes what the commands do in detail. `-h`/`--help` "
        "works on the program and on every subcommand.\n\n"
     << "```\n"
     << prog << " [GLOBAL OPTIONS] <SUBCOMMAND> [OPTIONS] [ARGS]\n"
     << "```\n\n"
     << "## Global options\n\n"
     << "Accepted before or after the subcommand name. The command line overrides the environment.\n\n";
  option_table(md, app, /*with_env=*/true);

  const std::vector<const CLI::App*> subs = visible_subcommands(app);
  md << "## Subcommands\n\n| Subcommand | Description |\n|---|---|\n";
  for (const CLI::App* s : subs) {
    md << "| [`" << s->get_name() << "`](#" << s->get_name() << ") | " << text(s->get_description())
       << " |\n";
  }
  md << '\n';
  for (const CLI::App* s : subs) {
    md << "### " << s->get_name() << "\n\n"
       << text(s->get_description()) << "\n\n```\n"
       << prog << ' ' << s->get_name();
    if (!options_of(*s, false).empty()) md << " [OPTIONS]";
    for (const CLI::Option* o : options_of(*s, true)) md << ' ' << positional_usage(*o);
    md << "\n```\n\n";
    option_table(md, *s, /*with_env=*/false);
    const subcommand_help* h = find_subcommand_help(s->get_name());
    md << "Example:\n\n```\n"
       << (h != nullptr ? h->example : "(no example: add one to tools/tensogram/help_text.cpp)")
       << "\n```\n\n";
  }
  std::string text = md.str();
  text.pop_back();  // one newline at the end of the file
  return text;
}

std::string render_bash_completion(const CLI::App& app) {
  const std::string prog = app.get_name();
  const std::string fn = "_" + prog;
  const option_facts global = facts_of(app);
  std::vector<std::string> root_options = {"-h", "--help"};
  if (const CLI::Option* v = app.get_version_ptr()) {
    for (const std::string& n : names_of(*v)) {
      if (std::find(global.all.begin(), global.all.end(), n) == global.all.end()) root_options.push_back(n);
    }
  }
  root_options.insert(root_options.end(), global.all.begin(), global.all.end());

  std::vector<std::string> sub_names;
  std::vector<std::pair<std::string, option_facts>> subs;
  for (const CLI::App* s : visible_subcommands(app)) {
    sub_names.push_back(s->get_name());
    subs.emplace_back(s->get_name(), facts_of(*s));
  }

  std::ostringstream sh;
  sh << "# bash completion for " << prog << "                                -*- shell-script -*-\n"
     << "#\n"
     << "# Generated by `" << prog << " completion bash` (CMake target `cli-docs`); do not edit.\n"
     << "# Install as share/bash-completion/completions/" << prog << " or source it from ~/.bashrc.\n\n"
     << fn << "_subcommands=" << quoted(sub_names) << "\n\n"
     << "# Option names of subcommand $1 (empty: none given yet), global options included.\n"
     << fn << "_options() {\n    case $1 in\n";
  for (const auto& [name, f] : subs) {
    std::vector<std::string> all = {"-h", "--help"};
    all.insert(all.end(), f.all.begin(), f.all.end());
    all.insert(all.end(), global.all.begin(), global.all.end());
    sh << "        " << name << ") printf '%s\\n' " << quoted(all) << " ;;\n";
  }
  sh << "        *) printf '%s\\n' " << quoted(root_options) << " ;;\n    esac\n}\n\n"
     << "# Succeeds when option $2 of subcommand $1 takes a separate value.\n"
     << fn << "_takes_value() {\n    case $2 in\n";
  if (!global.valued.empty()) sh << "        " << case_pattern("", global.valued) << ") return 0 ;;\n";
  sh << "    esac\n    case $1:$2 in\n";
  for (const auto& [name, f] : subs) {
    if (!f.valued.empty()) sh << "        " << case_pattern(name + ":", f.valued) << ") return 0 ;;\n";
  }
  sh << "    esac\n    return 1\n}\n\n"
     << "# Fixed choices for the value of option $2 of subcommand $1 ($2 empty: a positional argument).\n"
     << fn << "_choices() {\n    case $1:$2 in\n";
  for (const auto& [name, f] : subs) {
    for (const auto& [names, choices] : f.choices) {
      sh << "        " << case_pattern(name + ":", names) << ") printf '%s\\n' " << quoted(choices)
         << " ;;\n";
    }
    if (!f.positional_choices.empty()) {
      sh << "        " << name << ":) printf '%s\\n' " << quoted(f.positional_choices) << " ;;\n";
    }
  }
  for (const auto& [names, choices] : global.choices) {
    sh << "        " << case_pattern("*:", names) << ") printf '%s\\n' " << quoted(choices) << " ;;\n";
  }
  sh << "    esac\n}\n\n"
     << fn << "() {\n"
     << "    local cur=${COMP_WORDS[COMP_CWORD]} prev='' sub='' word i\n"
     << "    COMPREPLY=()\n"
     << "    # The subcommand is the first word that is neither an option nor an option's value.\n"
     << "    for ((i = 1; i < COMP_CWORD; i++)); do\n"
     << "        word=${COMP_WORDS[i]}\n"
     << "        if [[ $word == -* ]]; then\n"
     << "            if " << fn << "_takes_value \"$sub\" \"$word\"; then ((i++)); fi\n"
     << "        elif [[ -z $sub && \" $" << fn << "_subcommands \" == *\" $word \"* ]]; then\n"
     << "            sub=$word\n"
     << "        fi\n"
     << "    done\n"
     << "    ((COMP_CWORD > 1)) && prev=${COMP_WORDS[COMP_CWORD - 1]}\n"
     << "    # `--opt=value`: bash splits at `=` (COMP_WORDBREAKS).\n"
     << "    if [[ $cur == = ]]; then\n"
     << "        cur=''\n"
     << "    elif [[ $prev == = ]] && ((COMP_CWORD > 2)); then\n"
     << "        prev=${COMP_WORDS[COMP_CWORD - 2]}\n"
     << "    fi\n"
     << "    if [[ $prev == -* ]] && " << fn << "_takes_value \"$sub\" \"$prev\"; then\n"
     << "        # No fixed choices: an empty reply, and `-o default` completes file names.\n"
     << "        mapfile -t COMPREPLY < <(compgen -W \"$(" << fn
     << "_choices \"$sub\" \"$prev\")\" -- \"$cur\")\n"
     << "    elif [[ $cur == -* ]]; then\n"
     << "        mapfile -t COMPREPLY < <(compgen -W \"$(" << fn << "_options \"$sub\")\" -- \"$cur\")\n"
     << "    elif [[ -z $sub ]]; then\n"
     << "        mapfile -t COMPREPLY < <(compgen -W \"$" << fn << "_subcommands\" -- \"$cur\")\n"
     << "    else\n"
     << "        mapfile -t COMPREPLY < <(compgen -W \"$(" << fn << "_choices \"$sub\" '')\" -- \"$cur\")\n"
     << "    fi\n"
     << "    return 0\n"
     << "}\n\n"
     << "complete -o default -F " << fn << ' ' << prog << '\n';
  return sh.str();
}

}  // namespace tensogram::cli
