// `ls`: one row (or JSON object) per matching message (spec 04 §A.5).
#include <nlohmann/json.hpp>
#include <tensogram.hpp>

#include "commands.hpp"
#include "json_text.hpp"
#include "key_lookup.hpp"
#include "tgm_file.hpp"
#include "where_clause.hpp"

namespace tensogram::cli {

void run_ls(const ls_args& args, std::ostream& out) {
  // The clause is parsed before anything is printed, so a bad clause gives
  // only the error line.
  const std::optional<where_clause> clause =
      args.where ? std::optional<where_clause>(parse_where(*args.where)) : std::nullopt;
  const std::vector<std::string> keys =
      args.keys ? parse_key_list(*args.keys) : std::vector<std::string>{"version"};

  // §A.5: the header row is printed even when nothing matches or no file
  // is given.
  if (!args.json) {
    for (std::size_t i = 0; i < keys.size(); ++i) out << (i > 0 ? "\t" : "") << keys[i];
    out << '\n';
  }

  for (const std::string& path : args.files) {
    tgm_file f = open_tgm(path);
    for (std::size_t m = 0; m < f.count(); ++m) {
      // `ls` reads only the metadata frame (no payload decoding): for a
      // streaming message that is its header metadata.
      const metadata meta = decode_metadata(f.message(m).bytes());
      const global_metadata& g = meta.global();
      if (clause && !matches(g, *clause)) continue;
      if (args.json) {
        // Only the keys found, every value as a JSON string; members sorted
        // by name like the reference's serde_json map.
        nlohmann::json obj = nlohmann::json::object();
        for (const std::string& k : keys) {
          if (auto v = lookup_key(g, k)) obj[k] = *v;
        }
        out << json_pretty(obj) << '\n';
      } else {
        for (std::size_t i = 0; i < keys.size(); ++i) {
          out << (i > 0 ? "\t" : "") << lookup_key(g, keys[i]).value_or("N/A");
        }
        out << '\n';
      }
    }
  }
}

}  // namespace tensogram::cli
