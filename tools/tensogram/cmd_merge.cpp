// `merge`: every object of every message of every input into one message
// (spec 04 §A.5).
//
// Objects are carried over verbatim (message_edit.hpp), so the merged
// message holds each input object bit for bit — also for lossy and masked
// pipelines, which the reference decodes and encodes again.
#include <tensogram.hpp>

#include "commands.hpp"
#include "global_options.hpp"
#include "message_edit.hpp"
#include "progress.hpp"
#include "tgm_file.hpp"
#include "tool_error.hpp"

namespace tensogram::cli {

namespace {

enum class merge_strategy { first, last, error };

merge_strategy parse_strategy(const std::string& s) {
  if (s == "first") return merge_strategy::first;
  if (s == "last") return merge_strategy::last;
  if (s == "error") return merge_strategy::error;
  // A runtime error (exit 1), not a usage error: the reference validates
  // the value after parsing (§A.5).
  throw tool_error("unknown merge strategy '" + s + "': expected first, last, or error");
}

// One `_extra_` key of a later message into the merged map.
void merge_key(cbor::value& merged, const std::string& key, const cbor::value& v, merge_strategy strategy) {
  const cbor::value* existing = merged.find(key);
  switch (strategy) {
    case merge_strategy::first:
      if (existing == nullptr) merged.set(key, v);
      break;
    case merge_strategy::last: merged.set(key, v); break;
    case merge_strategy::error:
      if (existing != nullptr && !(*existing == v)) {
        throw tool_error("conflicting values for key '" + key +
                         "' (use --strategy first or last to resolve)");
      }
      merged.set(key, v);
      break;
  }
}

}  // namespace

void run_merge(const merge_args& args, const global_options& globals, std::ostream& out) {
  if (args.inputs.empty()) throw tool_error("no input files specified");
  const merge_strategy strategy = parse_strategy(args.strategy);

  // The inputs stay open (mapped) until the output is encoded: the objects
  // gathered below are views into them.
  std::vector<tgm_file> inputs;
  std::vector<buffer> messages;
  inputs.reserve(args.inputs.size());
  std::uint64_t total = 0;
  for (const std::string& path : args.inputs) {
    inputs.push_back(open_tgm(path));
    total += inputs.back().count();
  }
  // One step per message plus one for encoding and writing the result.
  progress bar("merge", total + 1, progress_wanted(globals));

  std::optional<global_metadata> merged;
  std::vector<wire_object> objects;
  for (tgm_file& f : inputs) {
    for (std::size_t i = 0; i < f.count(); ++i) {
      messages.push_back(f.message(i));
      wire_message wm = read_wire_message(messages.back(), globals.threads);
      if (!merged) {
        // The first message's metadata is the starting point (its `_extra_`
        // as is); later messages add base entries and `_extra_` keys.
        merged = std::move(wm.metadata);
      } else {
        // Base entries stay aligned with objects: the decoder gives every
        // object one (spec 02 §3.2), so concatenating them in object order
        // keeps each entry with its object.
        for (cbor::value& entry : wm.metadata.base) merged->base.push_back(std::move(entry));
        if (const cbor::map* m = wm.metadata.extra.as_map()) {
          for (const cbor::map_entry& e : *m) {
            if (const std::string* key = e.key.as_text()) merge_key(merged->extra, *key, e.val, strategy);
          }
        }
      }
      for (wire_object& o : wm.objects) objects.push_back(std::move(o));
      bar.advance();
    }
  }

  global_metadata meta = merged ? std::move(*merged) : global_metadata{};
  strip_reserved(meta);
  encode_options options;  // hashing on (xxh3)
  options.threads = globals.threads;
  // Nothing is written unless every input was read and checked, the
  // strategy found no conflict and the message encoded (output_file).
  write_output(args.output, encode_wire(meta, objects, options), atomic_write_options{.sync = !args.no_sync});
  bar.advance();
  bar.finish();
  out << "Merged " << objects.size() << " objects from " << args.inputs.size() << " file(s) into "
      << args.output << " (strategy: " << args.strategy << ")\n";
}

}  // namespace tensogram::cli
