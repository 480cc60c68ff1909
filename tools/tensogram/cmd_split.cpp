// `split`: one output file per object (spec 04 §A.5).
//
// Messages with zero or one object are copied as they are; the objects of a
// multi-object message are carried over verbatim into one message each
// (message_edit.hpp), so every object survives bit for bit.
#include <tensogram.hpp>

#include "commands.hpp"
#include "global_options.hpp"
#include "message_edit.hpp"
#include "progress.hpp"
#include "tgm_file.hpp"

namespace tensogram::cli {

void run_split(const split_args& args, const global_options& globals, std::ostream& out) {
  tgm_file in = open_tgm(args.input);
  const std::size_t count = in.count();
  progress bar("split", count, progress_wanted(globals));
  encode_options options;  // hashing on (xxh3)
  options.threads = globals.threads;

  // Each output file is complete or absent: written through a temporary
  // file and renamed. When a later message fails, the files already
  // written remain (as with the reference, which writes as it goes).
  std::uint64_t written = 0;
  const atomic_write_options durability{.sync = !args.no_sync};
  for (std::size_t i = 0; i < count; ++i) {
    const buffer msg = in.message(i);
    // Read (and checked) in full even for the pass-through case, as the
    // reference decodes every message before looking at its object count.
    wire_message wm = read_wire_message(msg, globals.threads);
    if (wm.objects.size() <= 1) {
      write_output(expand_index_template(args.output, written++), msg.bytes(), durability);
      bar.advance();
      continue;
    }
    for (std::size_t k = 0; k < wm.objects.size(); ++k) {
      // Only this object's base entry, plus the message's `_extra_`.
      global_metadata one;
      one.extra = wm.metadata.extra;
      if (k < wm.metadata.base.size()) one.base.push_back(wm.metadata.base[k]);
      strip_reserved(one);
      write_output(expand_index_template(args.output, written++),
                   encode_wire(one, std::span<const wire_object>(&wm.objects[k], 1), options), durability);
    }
    bar.advance();
  }
  bar.finish();
  out << "Split into " << written << " message(s)\n";
}

}  // namespace tensogram::cli
