// `copy`: matching messages copied as raw bytes, to one file or fanned out
// through a `[key]` name template (spec 04 §A.5).
#include <cerrno>
#include <cstring>
#include <fstream>
#include <map>

#include <tensogram.hpp>
#include <tensogram/io/file.hpp>

#include "commands.hpp"
#include "message_edit.hpp"
#include "progress.hpp"
#include "tgm_file.hpp"
#include "where_clause.hpp"

namespace tensogram::cli {

void run_copy(const copy_args& args, const global_options& globals) {
  const std::optional<where_clause> clause =
      args.where ? std::optional<where_clause>(parse_where(*args.where)) : std::nullopt;
  tgm_file in = open_tgm(args.input);
  const std::size_t count = in.count();
  progress bar("copy", count, progress_wanted(globals));

  if (!is_key_template(args.output)) {
    // One output, created or replaced. Written to a temporary file renamed
    // into place at the end: a failure leaves any earlier OUTPUT as it was,
    // and OUTPUT may be INPUT itself (the input stays mapped, and readable,
    // until the rename). The reference truncates OUTPUT first, which
    // destroys the input when both are the same file.
    output_file writer(args.output, atomic_write_options{.sync = !args.no_sync});
    for (std::size_t i = 0; i < count; ++i) {
      const buffer msg = in.message(i);
      if (!clause || matches(decode_metadata(msg.bytes()).global(), *clause)) writer.write(msg.bytes());
      bar.advance();
    }
    writer.commit();
    bar.finish();
    return;
  }

  // Template: each message is appended to the file its expanded name
  // designates, created if absent and never truncated, so running twice
  // duplicates the messages (§A.5). `append_raw` appends one whole message
  // and cuts the file back if the write fails, so earlier messages are
  // never damaged. Directories are not created.
  // file::open needs an existing file (it opens eagerly, as the
  // reference's does): create an absent one empty first, never truncating.
  const auto open_for_append = [](const std::string& name) {
    if (!std::ofstream(name, std::ios::binary | std::ios::app)) {
      throw io_error("cannot create " + name + ": " + std::strerror(errno));
    }
    return tensogram::file::open(name);
  };
  std::map<std::string, tensogram::file> outputs;
  for (std::size_t i = 0; i < count; ++i) {
    const buffer msg = in.message(i);
    const metadata meta = decode_metadata(msg.bytes());
    if (!clause || matches(meta.global(), *clause)) {
      const std::string name = expand_key_template(args.output, meta.global());
      auto it = outputs.find(name);
      if (it == outputs.end()) it = outputs.emplace(name, open_for_append(name)).first;
      it->second.append_raw(msg.bytes());
    }
    bar.advance();
  }
  bar.finish();
}

}  // namespace tensogram::cli
