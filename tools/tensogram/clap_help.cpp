#include "clap_help.hpp"

#include <algorithm>
#include <cstdlib>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>

#include "clap_style.hpp"

namespace tensogram::cli {

namespace {

using row = std::pair<std::string, std::string>;  // spec column, help column

bool visible(const CLI::Option* o) {
  return !o->get_group().empty();
}

// A flag that also takes `=VALUE` (`--allow-nan[=<ALLOW_NAN>]`).
bool optional_value_flag(const CLI::Option& o) {
  return o.get_expected_max() == 0 && !value_name(o).empty();
}

// `-o, --output <OUTPUT>`; long-only options are indented by four columns
// so that long names line up, as clap does.
std::string option_spec(const CLI::Option& o) {
  std::string s;
  if (!o.get_snames().empty()) {
    s = "-" + o.get_snames().front() + (o.get_lnames().empty() ? "" : ", ");
  } else {
    s = "    ";
  }
  if (!o.get_lnames().empty()) s += "--" + o.get_lnames().front();
  const std::string v = value_name(o);
  if (o.get_expected_max() == 0) return v.empty() ? s : s + "[=<" + v + ">]";
  return s + " <" + v + ">";
}

// The help text followed by clap's bracketed facts: env, default,
// possible values.
std::string option_help(const CLI::Option& o) {
  std::vector<std::string> parts;
  if (!o.get_description().empty()) parts.push_back(o.get_description());
  if (!o.get_envname().empty()) {
    const char* v = std::getenv(o.get_envname().c_str());
    parts.push_back("[env: " + o.get_envname() + "=" + (v == nullptr ? "" : v) + "]");
  }
  if (optional_value_flag(o)) {
    parts.emplace_back("[possible values: true, false]");
  } else {
    if (o.get_expected_max() != 0 && !o.get_default_str().empty()) {
      parts.push_back("[default: " + o.get_default_str() + "]");
    }
    std::string listed;
    for (const std::string& c : choices_of(o)) listed += (listed.empty() ? "" : ", ") + c;
    if (!listed.empty()) parts.push_back("[possible values: " + listed + "]");
  }
  std::string out;
  for (const std::string& p : parts) out += (out.empty() ? "" : " ") + p;
  return out;
}

void section(std::string& out, const std::string& heading, const std::vector<row>& rows) {
  if (rows.empty()) return;
  std::size_t width = 0;
  for (const row& r : rows) width = std::max(width, r.first.size());
  out += "\n" + heading + ":\n";
  for (const row& r : rows) {
    out += "  " + r.first;
    if (!r.second.empty()) out += std::string(width - r.first.size() + 2, ' ') + r.second;
    out += '\n';
  }
}

}  // namespace

std::string clap_formatter::make_help(const CLI::App* app, std::string name,
                                      CLI::AppFormatMode /*mode*/) const {
  std::string out;
  if (!app->get_description().empty()) out += app->get_description() + "\n\n";
  out += "Usage: " + usage_of(*app, name) + "\n";

  std::vector<row> commands;
  for (const CLI::App* s : app->get_subcommands([](const CLI::App* a) {
         return !a->get_name().empty() && !a->get_group().empty() && !a->get_disabled();
       })) {
    commands.emplace_back(s->get_name(), s->get_description());
  }
  section(out, "Commands", commands);

  std::vector<row> arguments;
  for (const CLI::Option* o : app->get_options()) {
    if (!o->nonpositional() && visible(o)) arguments.emplace_back(render_arg(*o), o->get_description());
  }
  section(out, "Arguments", arguments);

  // clap's generated `help` subcommand has no options.
  const bool help_subcommand = app->get_parent() != nullptr && app->get_name() == "help";
  std::vector<row> options;
  auto add_options = [&options](const CLI::App* a) {
    for (const CLI::Option* o : a->get_options()) {
      if (o->nonpositional() && visible(o) && o != a->get_help_ptr() && o != a->get_version_ptr()) {
        options.emplace_back(option_spec(*o), option_help(*o));
      }
    }
  };
  if (!help_subcommand) {
    add_options(app);
    // Global options, registered on the program, in every subcommand.
    for (const CLI::App* p = app->get_parent(); p != nullptr; p = p->get_parent()) add_options(p);
    if (const CLI::Option* h = app->get_help_ptr(); h != nullptr) {
      options.emplace_back(option_spec(*h), h->get_description());
    }
    if (const CLI::Option* v = app->get_version_ptr(); v != nullptr) {
      options.emplace_back(option_spec(*v), v->get_description());
    }
  }
  section(out, "Options", options);

  if (!app->get_footer().empty()) out += "\n" + app->get_footer() + "\n";
  return out;
}

}  // namespace tensogram::cli
