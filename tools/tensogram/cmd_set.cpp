// `set`: rewrite metadata keys of matching messages (spec 04 §A.5).
//
// Differences from the reference, both to avoid losing data:
// * rewritten messages are hashed (xxh3), where the reference writes them
//   without hashes (§A.7), which would silently drop the input's integrity
//   protection;
// * objects are carried over verbatim (message_edit.hpp) instead of decoded
//   and re-encoded, so lossy pipelines are not quantised a second time and
//   NaN/Inf masks survive.
#include <algorithm>
#include <exception>

#include <tensogram.hpp>

#include "commands.hpp"
#include "message_edit.hpp"
#include "tgm_file.hpp"
#include "tool_error.hpp"
#include "where_clause.hpp"

namespace tensogram::cli {

namespace {

// `objects.N.key` writes into a descriptor. Parameters the decoder does not
// read (a free `units` key, `zstd_level`) are harmless; one it reads would
// make the same stored bytes decode to other values. Objects re-encoded from
// their values are already compared by `encode_wire`; this check covers the
// ones stored verbatim, whose bytes are decoded under both descriptors and
// must agree. (With the current codecs every parameter such an object's
// decoder reads is on the immutable list, so this is a safety net for codecs
// added later.)
void check_changed_objects(const buffer& before, const std::vector<std::byte>& after,
                           const std::vector<wire_object>& old_objects,
                           const std::vector<data_object_descriptor>& new_descriptors) {
  const buffer rewritten = buffer::borrowed(after);
  for (std::size_t k = 0; k < old_objects.size(); ++k) {
    if (old_objects[k].descriptor == new_descriptors[k]) continue;
    const std::string what = "cannot set parameters of objects." + std::to_string(k) +
                             ": the stored payload would no longer decode to the same values";
    const message original = decode_object(before, k);
    message changed;
    try {
      changed = decode_object(rewritten, k);
    } catch (const std::exception&) {
      std::throw_with_nested(tool_error(what));
    }
    const std::span<const std::byte> a = original.object(0).bytes();
    const std::span<const std::byte> b = changed.object(0).bytes();
    if (!std::equal(a.begin(), a.end(), b.begin(), b.end())) throw tool_error(what);
  }
}

}  // namespace

void run_set(const set_args& args) {
  // Where-clause, pairs and forbidden keys are all checked before the input
  // is opened or anything is written (§A.5).
  const std::optional<where_clause> clause =
      args.where ? std::optional<where_clause>(parse_where(*args.where)) : std::nullopt;
  const std::vector<set_pair> pairs = parse_set_pairs(args.pairs);

  tgm_file in = open_tgm(args.input);
  const std::size_t count = in.count();
  // Temporary file + rename: a failure at any message leaves no partial
  // OUTPUT (an existing one is kept as it was), and OUTPUT may be INPUT.
  output_file out(args.output, atomic_write_options{.sync = !args.no_sync});
  encode_options options;  // hashing on (xxh3), the library default
  for (std::size_t i = 0; i < count; ++i) {
    const buffer msg = in.message(i);
    if (clause && !matches(decode_metadata(msg.bytes()).global(), *clause)) {
      out.write(msg.bytes());  // byte for byte
      continue;
    }
    wire_message wm = read_wire_message(msg, 0);
    std::vector<data_object_descriptor> descriptors;
    descriptors.reserve(wm.objects.size());
    for (const wire_object& o : wm.objects) descriptors.push_back(o.descriptor);
    for (const set_pair& p : pairs) apply_set_pair(wm.metadata, descriptors, p);
    strip_reserved(wm.metadata);

    std::vector<wire_object> objects = wm.objects;
    for (std::size_t k = 0; k < objects.size(); ++k) objects[k].descriptor = descriptors[k];
    const std::vector<std::byte> encoded = encode_wire(wm.metadata, objects, options);
    check_changed_objects(msg, encoded, wm.objects, descriptors);
    out.write(encoded);
  }
  out.commit();
}

}  // namespace tensogram::cli
