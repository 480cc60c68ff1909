// `dump`: full metadata and per-object summary of each matching message
// (spec 04 §A.5).
#include <nlohmann/json.hpp>
#include <tensogram.hpp>
#include <tensogram/cbor/json.hpp>

#include "commands.hpp"
#include "json_text.hpp"
#include "key_lookup.hpp"
#include "tgm_file.hpp"
#include "where_clause.hpp"

namespace tensogram::cli {

namespace {

// `[d0, d1, ...]`: the reference prints the shape with Rust's Debug format.
std::string shape_text(const std::vector<std::uint64_t>& shape) {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i > 0) s += ", ";
    s += std::to_string(shape[i]);
  }
  return s + "]";
}

// A metadata map as a JSON object: member names sorted, values converted
// per spec 04 §A.5 (big integers as strings, non-finite floats as null,
// bytes as hex, tags unwrapped) by the library's CBOR → JSON conversion.
nlohmann::json map_json(const cbor::value& m) {
  nlohmann::json j = cbor::to_json(m);
  return j.is_object() ? j : nlohmann::json::object();
}

void print_block(std::ostream& out, const nlohmann::json& members) {
  for (const auto& [key, val] : members.items()) out << "    " << key << ": " << json_compact(val) << '\n';
}

void print_human(std::ostream& out, std::size_t index, const message& msg) {
  const global_metadata& g = msg.global();
  out << "=== Message " << index << " ===\n";
  out << "version: " << wire_version << '\n';
  out << "objects: " << msg.num_objects() << '\n';
  for (std::size_t j = 0; j < msg.num_objects(); ++j) {
    const data_object_descriptor& d = msg.object(j).descriptor();
    out << "  object[" << j << "]: type=" << d.type << ", dtype=" << dtype_name(d.dtype)
        << ", shape=" << shape_text(d.shape) << '\n';
  }
  // Base entries include the library's `_reserved_` (the reference shows
  // it here even though key lookup hides it); message-level `_reserved_`
  // (provenance) is not shown.
  for (std::size_t j = 0; j < g.base.size(); ++j) {
    out << "  base[" << j << "]:\n";
    print_block(out, map_json(g.base[j]));
  }
  if (g.extra.size() > 0) {
    out << "  extra:\n";
    print_block(out, map_json(g.extra));
  }
  out << '\n';
}

nlohmann::json message_json(const message& msg) {
  const global_metadata& g = msg.global();
  nlohmann::json j = nlohmann::json::object();
  j["version"] = wire_version;
  if (!g.base.empty()) {
    nlohmann::json base = nlohmann::json::array();
    for (const cbor::value& entry : g.base) base.push_back(map_json(entry));
    j["base"] = std::move(base);
  }
  if (g.extra.size() > 0) j["extra"] = map_json(g.extra);
  nlohmann::json objects = nlohmann::json::array();
  for (const decoded_object& o : msg.objects()) {
    const data_object_descriptor& d = o.descriptor();
    // type/dtype/shape plus the free parameters only: strides, byte order
    // and the pipeline stage names are deliberately left out (§A.5).
    nlohmann::json obj = map_json(d.params);
    obj["type"] = d.type;
    obj["dtype"] = std::string(dtype_name(d.dtype));
    obj["shape"] = d.shape;
    objects.push_back(std::move(obj));
  }
  j["objects"] = std::move(objects);
  return j;
}

}  // namespace

void run_dump(const dump_args& args, std::ostream& out) {
  const std::optional<where_clause> clause =
      args.where ? std::optional<where_clause>(parse_where(*args.where)) : std::nullopt;
  // A plain vector plus a flag: GCC 12 at -O3 reports a false
  // -Wmaybe-uninitialized for an optional<vector> here.
  const bool have_keys = args.keys.has_value();
  const std::vector<std::string> keys = have_keys ? parse_key_list(*args.keys) : std::vector<std::string>{};

  for (const std::string& path : args.files) {
    tgm_file f = open_tgm(path);
    // Numbering is the message's position in its file (restarting at 0 for
    // each file), also when a where-clause skips messages.
    for (std::size_t i = 0; i < f.count(); ++i) {
      const buffer bytes = f.message(i);
      // Filter on the cheap metadata-only decode, as the reference does,
      // then decode fully for the descriptors.
      if (clause && !matches(decode_metadata(bytes.bytes()).global(), *clause)) continue;
      const message msg = decode(bytes);
      if (!args.json) {
        // Human mode ignores -p (§A.5).
        print_human(out, i, msg);
      } else if (have_keys) {
        nlohmann::json obj = nlohmann::json::object();
        for (const std::string& k : keys) {
          if (auto v = lookup_key(msg.global(), k)) obj[k] = *v;
        }
        out << json_pretty(obj) << '\n';
      } else {
        out << json_pretty(message_json(msg)) << '\n';
      }
    }
  }
}

}  // namespace tensogram::cli
