#include "clap_style.hpp"

#include <algorithm>
#include <cctype>
#include <string_view>
#include <utility>

#include <CLI/CLI.hpp>

namespace tensogram::cli {

namespace {

bool is_flag(const CLI::Option& o) {
  return o.get_expected_max() == 0;
}

// The command the parse reached: the deepest selected subcommand.
const CLI::App* deepest(const CLI::App& app) {
  const CLI::App* cur = &app;
  for (;;) {
    const std::vector<CLI::App*> subs = cur->get_subcommands();
    if (subs.empty()) return cur;
    cur = subs.front();
  }
}

// `tensogram ls`: the executable's name and the subcommand names down to `cmd`.
std::string command_path(const CLI::App* cmd) {
  std::string path = cmd->get_name();
  for (const CLI::App* p = cmd->get_parent(); p != nullptr; p = p->get_parent()) {
    path = p->get_name() + " " + path;
  }
  return path;
}

// An option of `cmd` or of a parent (the global options live on the
// program) by one of its names (`--threads`, `-p`, `input`).
const CLI::Option* find_option(const CLI::App* cmd, const std::string& name) {
  for (const CLI::App* a = cmd; a != nullptr; a = a->get_parent()) {
    for (const CLI::Option* o : a->get_options()) {
      if (o->check_name(name)) return o;
    }
  }
  return nullptr;
}

std::vector<const CLI::Option*> positionals(const CLI::App& cmd) {
  return cmd.get_options([](const CLI::Option* o) { return o->get_positional() && !o->nonpositional(); });
}

// Rust's `u32::from_str` / `u64::from_str` error texts, which clap shows
// for a bad integer value.
std::string integer_parse_reason(const std::string& v) {
  if (v.empty()) return "cannot parse integer from empty string";
  const std::string_view digits = v[0] == '+' ? std::string_view(v).substr(1) : std::string_view(v);
  if (!digits.empty() &&
      std::all_of(digits.begin(), digits.end(), [](unsigned char c) { return std::isdigit(c); })) {
    return "number too large to fit in target type";
  }
  return "invalid digit found in string";
}

// Arguments clap would list as "required but not provided" for `cmd`, in
// usage order (options, then positionals).
std::vector<std::string> missing_required(const CLI::App& cmd) {
  std::vector<std::string> out;
  for (const CLI::Option* o :
       cmd.get_options([](const CLI::Option* x) { return x->get_required() && x->nonpositional(); })) {
    if (o->count() == 0) out.push_back(render_arg(*o));
  }
  for (const CLI::Option* o : positionals(cmd)) {
    if (o->get_required() && o->count() == 0) out.push_back(render_arg(*o));
  }
  return out;
}

// `<v> not in {a,b,c}` (CLI::IsMember) → clap's possible-values error.
std::string invalid_value_text(const std::string& rendered, const std::string& detail) {
  const std::size_t not_in = detail.find(" not in {");
  if (not_in != std::string::npos && detail.back() == '}') {
    std::string choices = detail.substr(not_in + 9, detail.size() - not_in - 10);
    std::replace(choices.begin(), choices.end(), ',', ' ');
    std::string listed;
    for (const std::string& c : CLI::detail::split(choices, ' ')) {
      if (c.empty()) continue;
      listed += (listed.empty() ? "" : ", ") + c;
    }
    return "invalid value '" + detail.substr(0, not_in) + "' for '" + rendered +
           "'\n  [possible values: " + listed + "]";
  }
  // CLI::Range: "Value 65 not in range 0 to 64"; ours: "Value nan is not a
  // finite number > 0".
  for (const char* marker : {" not in range ", " is not a "}) {
    if (detail.rfind("Value ", 0) == 0 && detail.find(marker) != std::string::npos) {
      return "invalid value '" + detail.substr(6, detail.find(marker) - 6) + "' for '" + rendered +
             "': " + detail;
    }
  }
  return "invalid value for '" + rendered + "': " + detail;
}

// Tip for an unexpected `-x`/`--xyz`: a similar long option, else how to
// pass it as a value when the command takes positionals (clap's order).
std::string unexpected_argument_tip(const CLI::App& cmd, const std::string& arg) {
  if (arg.rfind("--", 0) == 0 && arg.size() > 2) {
    std::vector<std::string> longs;
    for (const CLI::App* a = &cmd; a != nullptr; a = a->get_parent()) {
      for (const CLI::Option* o : a->get_options()) {
        for (const std::string& l : o->get_lnames()) longs.push_back(l);
      }
    }
    const std::string word =
        arg.substr(2, arg.find('=') == std::string::npos ? std::string::npos : arg.find('=') - 2);
    double best = 0.7;
    std::string pick;
    for (const std::string& l : longs) {
      const double c = jaro(word, l);
      if (c > best) {
        best = c;
        pick = l;
      }
    }
    if (!pick.empty()) return "a similar argument exists: '--" + pick + "'";
  }
  if (arg.size() > 1 && arg[0] == '-' && !positionals(cmd).empty()) {
    return "to pass '" + arg + "' as a value, use '-- " + arg + "'";
  }
  return "";
}

}  // namespace

std::string join(const std::vector<std::string>& v, std::string_view sep) {
  std::string out;
  for (const std::string& s : v) {
    if (!out.empty()) out += sep;
    out += s;
  }
  return out;
}

std::string value_name(const CLI::Option& o) {
  const std::string t = o.get_type_name();
  return t.substr(0, t.find(':'));
}

std::vector<std::string> choices_of(const CLI::Option& o) {
  std::vector<std::string> out;
  const std::string t = o.get_type_name();
  std::size_t pos = t.find(':');
  while (pos != std::string::npos) {
    const std::size_t next = t.find(':', pos + 1);
    const std::string seg = t.substr(pos + 1, next == std::string::npos ? std::string::npos : next - pos - 1);
    if (seg.size() >= 2 && seg.front() == '{' && seg.back() == '}') {
      for (const std::string& item : CLI::detail::split(seg.substr(1, seg.size() - 2), ',')) {
        if (!item.empty()) out.push_back(item);
      }
    }
    pos = next;
  }
  return out;
}

std::string program_name(const char* argv0) {
  const std::string a = argv0 == nullptr ? "" : argv0;
  const std::size_t slash = a.find_last_of('/');
  const std::string base = slash == std::string::npos ? a : a.substr(slash + 1);
  return base.empty() ? "tensogram" : base;
}

std::string render_arg(const CLI::Option& o) {
  const std::string v = value_name(o);
  if (!o.nonpositional()) {
    std::string n = v.empty() ? o.get_name() : v;
    std::string out = o.get_required() ? "<" + n + ">" : "[" + n + "]";
    if (o.get_items_expected_max() > 1) out += "...";
    return out;
  }
  const std::string name =
      o.get_lnames().empty() ? "-" + o.get_snames().front() : "--" + o.get_lnames().front();
  if (is_flag(o)) return v.empty() ? name : name + "[=<" + v + ">]";
  return name + " <" + v + ">";
}

std::string usage_of(const CLI::App& cmd, const std::string& path) {
  std::string u = path;
  // clap's generated `help` subcommand has no options of its own.
  if (cmd.get_name() != "help" || cmd.get_parent() == nullptr) u += " [OPTIONS]";
  for (const CLI::Option* o :
       cmd.get_options([](const CLI::Option* x) { return x->get_required() && x->nonpositional(); })) {
    u += " " + render_arg(*o);
  }
  for (const CLI::Option* o : positionals(cmd)) u += " " + render_arg(*o);
  if (!subcommand_names(cmd).empty()) u += " <COMMAND>";
  return u;
}

std::string usage_error_text(const std::string& message, const std::string& usage, const std::string& tip) {
  std::string out = "error: " + message + "\n";
  if (!tip.empty()) out += "\n  tip: " + tip + "\n";
  return out + "\nUsage: " + usage + "\n\nFor more information, try '--help'.\n";
}

double jaro(std::string_view a, std::string_view b) {
  if (a.empty() && b.empty()) return 1.0;
  if (a.empty() || b.empty()) return 0.0;
  const std::size_t window = std::max<std::size_t>(std::max(a.size(), b.size()) / 2, 1) - 1;
  std::vector<bool> a_hit(a.size(), false);
  std::vector<bool> b_hit(b.size(), false);
  double matches = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const std::size_t lo = i > window ? i - window : 0;
    const std::size_t hi = std::min(b.size(), i + window + 1);
    for (std::size_t j = lo; j < hi; ++j) {
      if (!b_hit[j] && a[i] == b[j]) {
        a_hit[i] = b_hit[j] = true;
        ++matches;
        break;
      }
    }
  }
  if (matches == 0) return 0.0;
  double transpositions = 0;
  std::size_t k = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (!a_hit[i]) continue;
    while (!b_hit[k]) ++k;
    if (a[i] != b[k]) ++transpositions;
    ++k;
  }
  transpositions /= 2;
  return (matches / static_cast<double>(a.size()) + matches / static_cast<double>(b.size()) +
          (matches - transpositions) / matches) /
         3.0;
}

std::string similar_subcommand_tip(std::string_view word, const std::vector<std::string>& names) {
  std::vector<std::pair<double, std::string>> close;
  for (const std::string& n : names) {
    const double c = jaro(word, n);
    if (c > 0.7) close.emplace_back(c, n);
  }
  if (close.empty()) return "";
  std::stable_sort(close.begin(), close.end(),
                   [](const auto& x, const auto& y) { return x.first < y.first; });
  if (close.size() == 1) return "a similar subcommand exists: '" + close.front().second + "'";
  std::vector<std::string> quoted;
  for (const auto& [c, n] : close) quoted.push_back("'" + n + "'");
  return "some similar subcommands exist: " + join(quoted, ", ");
}

std::vector<std::string> subcommand_names(const CLI::App& app) {
  std::vector<std::string> out;
  for (const CLI::App* s : app.get_subcommands([](const CLI::App* a) {
         return !a->get_name().empty() && !a->get_group().empty() && !a->get_disabled();
       })) {
    out.push_back(s->get_name());
  }
  return out;
}

bool version_flag_after_subcommand(const CLI::App& app, const std::vector<std::string>& args) {
  const std::vector<CLI::App*> subs = app.get_subcommands();
  if (subs.empty()) return false;
  const auto sub = std::find(args.begin(), args.end(), subs.front()->get_name());
  const auto flag = std::find_if(args.begin(), args.end(),
                                 [](const std::string& a) { return a == "-V" || a == "--version"; });
  return sub != args.end() && flag != args.end() && flag > sub;
}

std::string clap_error_text(const CLI::ParseError& e, const CLI::App& app,
                            const std::vector<std::string>& args) {
  const CLI::App* cmd = deepest(app);
  const std::string usage = usage_of(*cmd, command_path(cmd));
  const std::string what = e.what();

  if (dynamic_cast<const CLI::CallForVersion*>(&e) != nullptr) {
    // Only the program has a version flag (spec 08 §10): after a
    // subcommand, `-V`/`--version` is an unexpected argument.
    std::string flag = "-V";
    for (std::size_t i = args.size(); i-- > 0;) {
      if (args[i] == "-V" || args[i] == "--version") flag = args[i];
    }
    return usage_error_text("unexpected argument '" + flag + "' found", usage);
  }
  if (dynamic_cast<const CLI::ExtrasError*>(&e) != nullptr) {
    std::vector<std::string> extras = app.remaining(true);
    const std::string x = extras.empty() ? what : extras.front();
    if (cmd == &app && (x.empty() || x[0] != '-')) {
      return usage_error_text("unrecognized subcommand '" + x + "'", usage,
                              similar_subcommand_tip(x, subcommand_names(app)));
    }
    return usage_error_text("unexpected argument '" + x + "' found", usage, unexpected_argument_tip(*cmd, x));
  }
  if (dynamic_cast<const CLI::RequiredError*>(&e) != nullptr) {
    std::vector<std::string> missing = missing_required(*cmd);
    if (missing.empty()) missing.push_back(what);
    return usage_error_text("the following required arguments were not provided:\n  " + join(missing, "\n  "),
                            usage);
  }
  if (dynamic_cast<const CLI::ExcludesError*>(&e) != nullptr) {
    const std::size_t at = what.find(" excludes ");
    if (at != std::string::npos) {
      const CLI::Option* a = find_option(cmd, what.substr(0, at));
      const CLI::Option* b = find_option(cmd, what.substr(at + 10));
      if (a != nullptr && b != nullptr) {
        return usage_error_text(
            "the argument '" + render_arg(*a) + "' cannot be used with '" + render_arg(*b) + "'", usage);
      }
    }
  }
  if (dynamic_cast<const CLI::ConversionError*>(&e) != nullptr) {
    // "Could not convert: --threads = lots"
    const std::string head = "Could not convert: ";
    const std::size_t eq = what.find(" = ");
    if (what.rfind(head, 0) == 0 && eq != std::string::npos) {
      const CLI::Option* o = find_option(cmd, what.substr(head.size(), eq - head.size()));
      const std::string v = what.substr(eq + 3);
      if (o != nullptr) {
        return usage_error_text(
            "invalid value '" + v + "' for '" + render_arg(*o) + "': " + integer_parse_reason(v), usage);
      }
    }
  }
  if (dynamic_cast<const CLI::ArgumentMismatch*>(&e) != nullptr) {
    // "-w: 1 required WHERE missing" and similar: the option's name first.
    const CLI::Option* o = find_option(cmd, what.substr(0, what.find(':')));
    if (o != nullptr) {
      return usage_error_text("a value is required for '" + render_arg(*o) + "' but none was supplied",
                              usage);
    }
  }
  if (dynamic_cast<const CLI::ValidationError*>(&e) != nullptr) {
    const std::size_t colon = what.find(": ");
    const CLI::Option* o =
        (colon != std::string::npos && what[0] == '-') ? find_option(cmd, what.substr(0, colon)) : nullptr;
    if (o != nullptr)
      return usage_error_text(invalid_value_text(render_arg(*o), what.substr(colon + 2)), usage);
  }
  return usage_error_text(what, usage);
}

std::string late_usage_error_text(const std::string& message, const CLI::App& app) {
  const CLI::App* cmd = deepest(app);
  return usage_error_text(message, usage_of(*cmd, command_path(cmd)));
}

int run_help_command(const CLI::App& app, const std::vector<std::string>& names, std::string& out,
                     std::string& err) {
  const CLI::App* cur = &app;
  for (const std::string& n : names) {
    const CLI::App* next = nullptr;
    for (const CLI::App* s : cur->get_subcommands([](const CLI::App* a) { return !a->get_name().empty(); })) {
      if (s->get_name() == n) next = s;
    }
    if (next == nullptr) {
      err = usage_error_text("unrecognized subcommand '" + n + "'", usage_of(*cur, command_path(cur)));
      return 2;
    }
    cur = next;
  }
  out = cur->get_formatter()->make_help(cur, command_path(cur), CLI::AppFormatMode::Normal);
  return 0;
}

}  // namespace tensogram::cli
