// `reshuffle`: every message rebuilt in the buffered layout, index and hash
// frames in the header (random access), e.g. to turn streaming output into
// files that can be read object by object (spec 04 §A.5).
//
// Objects are carried over verbatim (message_edit.hpp): the reshuffled file
// decodes to exactly the same values as the input.
#include <tensogram.hpp>

#include "commands.hpp"
#include "global_options.hpp"
#include "message_edit.hpp"
#include "progress.hpp"
#include "tgm_file.hpp"

namespace tensogram::cli {

void run_reshuffle(const reshuffle_args& args, const global_options& globals, std::ostream& out) {
  tgm_file in = open_tgm(args.input);
  const std::size_t count = in.count();
  progress bar("reshuffle", count, progress_wanted(globals));
  encode_options options;  // hashing on (xxh3)
  options.threads = globals.threads;

  // Temporary file + rename: no partial OUTPUT on failure, and OUTPUT may
  // be INPUT.
  output_file output(args.output, atomic_write_options{.sync = !args.no_sync});
  for (std::size_t i = 0; i < count; ++i) {
    const buffer msg = in.message(i);  // the objects below are views into it
    wire_message wm = read_wire_message(msg, globals.threads);
    strip_reserved(wm.metadata);
    output.write(encode_wire(wm.metadata, wm.objects, options));
    bar.advance();
  }
  output.commit();
  bar.finish();
  out << "Reshuffled " << count << " message(s) from " << args.input << " to " << args.output << '\n';
}

}  // namespace tensogram::cli
