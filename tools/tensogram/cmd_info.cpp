// `info`: per-file summary (spec 04 §A.5).
#include <tensogram.hpp>

#include "commands.hpp"
#include "tgm_file.hpp"

namespace tensogram::cli {

void run_info(const info_args& args, std::ostream& out) {
  for (const std::string& path : args.files) {
    tgm_file f = open_tgm(path);
    // Scanned before printing: an unreadable file prints nothing of its own.
    const std::size_t count = f.count();
    out << "File: " << path << '\n';
    out << "  Messages: " << count << '\n';
    out << "  Size: " << f.size() << " bytes\n";
    if (count > 0) {
      // The version comes from the preamble, but the reference still insists
      // that the first message's metadata parses before printing it.
      (void)decode_metadata(f.message(0).bytes());
      out << "  Version: " << wire_version << '\n';
    }
    out << '\n';
  }
}

}  // namespace tensogram::cli
