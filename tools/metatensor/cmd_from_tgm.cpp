// `metatensor from-tgm IN.tgm -o OUT`: each Tensogram object → a flat tensor.
//
// Tensogram metadata travels along as JSON under the user metadata key
// `tensogram.messages` (spec 06 §3.1: keys outside `metatensor.` are free):
// one entry per message, `{"metadata": <the message's metadata JSON>,
// "objects": [tensor names in object order]}`. `to-tgm` reads it back.
//
// A `uint8` object whose base metadata has `"safetensors": {"dtype", "shape"}`
// holds the raw bytes of a tensor whose dtype Tensogram lacks (BOOL, F8_*,
// F4, F6_*; written so by `to-tgm`): it is restored with that dtype and
// shape, its bytes unchanged. A message without objects adds no tensor.
#include <optional>
#include <set>

#include <metatensor.hpp>
#include <nlohmann/json.hpp>
#include <tensogram.hpp>
#include <tensogram/cbor/json.hpp>

#include "metatensor_commands.hpp"
#include "progress.hpp"
#include "tool_error.hpp"

namespace metatensor::cli {
using tensogram::cli::tool_error;

namespace {

std::string name_from_key(const tensogram::message& msg, std::size_t j, const std::string& key) {
  const tensogram::cbor::value* v = msg.global().get_at(j, key);
  if (!v) return {};
  if (const std::string* s = v->as_text()) return *s;
  return tensogram::cbor::to_json_text(*v);
}

// The dtype and shape a raw-bytes object had (see above), or nothing.
struct restored {
  safetensors::dtype type;
  std::vector<std::uint64_t> shape;
};

std::optional<restored> recorded_dtype(const tensogram::message& msg, std::size_t j,
                                       const tensogram::decoded_object& o, const std::string& where) {
  const tensogram::cbor::value* v = msg.global().get_at(j, raw_dtype_key);
  if (v == nullptr) return std::nullopt;
  const nlohmann::json rec = nlohmann::json::parse(tensogram::cbor::to_json_text(*v), nullptr, false);
  const auto bad = [&](const std::string& why) {
    return tool_error(where + ": metadata \"" + std::string(raw_dtype_key) + "\" " + why);
  };
  if (!rec.is_object() || !rec.contains("dtype") || !rec["dtype"].is_string() || !rec.contains("shape") ||
      !rec["shape"].is_array()) {
    throw bad("must be {\"dtype\": NAME, \"shape\": [...]}");
  }
  const auto type = safetensors::parse_dtype(rec["dtype"].get<std::string>());
  if (!type) throw bad("names no safetensors dtype: " + rec["dtype"].dump());
  restored out{*type, {}};
  std::uint64_t count = 1;
  for (const auto& d : rec["shape"]) {
    if (!d.is_number_unsigned()) throw bad("has a shape entry that is not an unsigned integer: " + d.dump());
    out.shape.push_back(d.get<std::uint64_t>());
    count = d.get<std::uint64_t>() == 0 || count == 0 ? 0 : count * d.get<std::uint64_t>();
    if (count > (std::uint64_t{1} << 56)) throw bad("has a shape too large");
  }
  const std::uint64_t bits = safetensors::dtype_bits(*type);
  const std::uint64_t want = (count * bits + 7) / 8;
  if (o.descriptor().dtype != tensogram::dtype::uint8 || o.bytes().size() != want) {
    throw bad("says " + rec["dtype"].get<std::string>() + " " + rec["shape"].dump() + " (" +
              std::to_string(want) + " bytes), but the object is " + o.dtype_string() + " of " +
              std::to_string(o.bytes().size()) + " bytes");
  }
  return out;
}

}  // namespace

void run_from_tgm(const from_tgm_args& args, std::ostream& out, std::ostream& err, bool show_progress) {
  if (tensogram::native_byte_order() != tensogram::byte_order::little) {
    throw tool_error("from-tgm needs a little-endian host (safetensors data is little-endian)");
  }
  tensogram::file in = tensogram::file::open_mmap(args.input);
  const std::size_t count = in.message_count();
  if (count == 0) throw tool_error(args.input + ": no Tensogram messages");

  struct tensor {
    std::string name;
    const tensogram::decoded_object* object;
    std::vector<std::uint64_t> shape;
  };
  std::vector<tensogram::message> messages;  // keep decoded bytes alive until written
  messages.reserve(count);
  std::vector<tensor> tensors;
  std::set<std::string> names;
  nlohmann::json provenance = nlohmann::json::array();
  nlohmann::json schema = {{"$schema", schema_dialect_uri},
                           {"type", "object"},
                           {"properties", nlohmann::json::object()},
                           {"required", nlohmann::json::array()},
                           {"additionalProperties", false}};
  tensogram::cli::progress bar("from-tgm", count + 1, show_progress);
  for (std::size_t i = 0; i < count; ++i) {
    messages.push_back(in.decode_message(i));
    const tensogram::message& msg = messages.back();
    nlohmann::json entry = {{"metadata", nlohmann::json::parse(msg.get_metadata().to_json())},
                            {"objects", nlohmann::json::array()}};
    for (std::size_t j = 0; j < msg.num_objects(); ++j) {
      const tensogram::decoded_object& o = msg.object(j);
      std::string name = args.name_key.empty() ? "" : name_from_key(msg, j, args.name_key);
      if (!args.name_key.empty() && name.empty()) {
        throw tool_error(args.input + ": message " + std::to_string(i) + " object " + std::to_string(j) +
                         " has no metadata key \"" + args.name_key + "\" to name its tensor");
      }
      if (name.empty()) {
        // Appended: GCC 12 -O3 reports a false -Wrestrict for "m" + std::string (GCC bug 105329).
        name = "m";
        name += std::to_string(i);
        name += "_o";
        name += std::to_string(j);
      }
      if (name.rfind("__", 0) == 0 || name.find('#') != std::string::npos) {
        throw tool_error("tensor name \"" + name + "\" is not allowed (starts with \"__\" or contains '#')");
      }
      if (!names.insert(name).second) {
        throw tool_error("two objects are both named \"" + name + "\"" +
                         (args.name_key.empty() ? "" : " (use a --name-key whose values are unique)"));
      }
      const std::string where = "object " + std::to_string(j) + " of message " + std::to_string(i);
      const auto raw = recorded_dtype(msg, j, o, where);
      const auto dt = raw ? std::optional(raw->type) : safetensors::from_tensogram(o.descriptor().dtype);
      if (!dt) {
        throw tool_error("object " + std::to_string(j) + " of message " + std::to_string(i) + " has dtype " +
                         o.dtype_string() + ", which safetensors cannot hold");
      }
      std::vector<std::uint64_t> shape = raw ? raw->shape : o.shape();
      nlohmann::json node = scalar_schema(*dt);
      for (std::size_t k = 0; k < shape.size(); ++k) node = {{"type", "array"}, {"items", std::move(node)}};
      schema["properties"][name] = std::move(node);
      schema["required"].push_back(name);
      entry["objects"].push_back(name);
      tensors.push_back({name, &o, std::move(shape)});
    }
    provenance.push_back(std::move(entry));
    bar.advance();
  }
  writer_options options;
  options.alignment = args.alignment;
  options.user_metadata["tensogram.messages"] = provenance.dump();
  file_builder builder(compile_schema(schema), options);
  for (const tensor& t : tensors) builder.set_flat_bytes(t.name, t.shape, t.object->bytes());
  builder.write(args.output, tensogram::atomic_write_options{.sync = !args.no_sync});
  bar.advance();
  bar.finish();
  (void)err;
  out << "Wrote " << tensors.size() << (tensors.size() == 1 ? " tensor" : " tensors") << " from " << count
      << (count == 1 ? " message" : " messages") << " to " << args.output << '\n';
}

}  // namespace metatensor::cli
