// `get`: the text values of the requested keys, one line per matching
// message; strict about missing keys (spec 04 §A.5).
#include <tensogram.hpp>

#include "commands.hpp"
#include "key_lookup.hpp"
#include "tgm_file.hpp"
#include "tool_error.hpp"
#include "where_clause.hpp"

namespace tensogram::cli {

void run_get(const get_args& args, std::ostream& out) {
  const std::optional<where_clause> clause =
      args.where ? std::optional<where_clause>(parse_where(*args.where)) : std::nullopt;
  const std::vector<std::string> keys = parse_key_list(args.keys);

  for (const std::string& path : args.files) {
    tgm_file f = open_tgm(path);
    for (std::size_t m = 0; m < f.count(); ++m) {
      // Like `ls`, only the metadata frame is read (a streaming message's
      // header metadata).
      const metadata meta = decode_metadata(f.message(m).bytes());
      const global_metadata& g = meta.global();
      if (clause && !matches(g, *clause)) continue;
      std::string line;
      for (std::size_t i = 0; i < keys.size(); ++i) {
        const std::optional<std::string> v = lookup_key(g, keys[i]);
        // The first message lacking a key ends the command; the lines
        // already printed stay printed (main flushes stdout first).
        if (!v) throw tool_error("key not found: " + keys[i]);
        if (i > 0) line += ' ';
        line += *v;
      }
      out << line << '\n';
    }
  }
}

}  // namespace tensogram::cli
