// `metatensor to-tgm IN -o OUT.tgm [PIPELINE]`: the flat tensors of a
// metatensor file (or of any safetensors file) → one Tensogram message.
//
// Struct and blob tensors have no Tensogram equivalent (objects are plain
// N-d arrays) and are refused by name. When the file came from `from-tgm`,
// the per-object metadata it kept under `tensogram.messages` is restored;
// otherwise each object's base metadata is `{"name": <tensor name>}` and the
// user metadata of the file becomes the message's `_extra_` section.
//
// Every safetensors dtype converts. Those with a Tensogram dtype (integers,
// F16, BF16, F32, F64, C64) map to it; the others (BOOL, F8_*, F4, F6_*)
// become `uint8` objects of the tensor's raw bytes (shape [byte count]),
// whose base metadata records the original as `"safetensors": {"dtype":
// "F8_E4M3", "shape": [...]}` so that `from-tgm` restores dtype, shape and
// bytes exactly. A file without tensors becomes a message without objects.
#include <map>

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

// Base metadata of each object `from-tgm` recorded, by tensor name.
std::map<std::string, nlohmann::json> recorded_bases(const std::map<std::string, std::string>& metadata) {
  std::map<std::string, nlohmann::json> out;
  const auto it = metadata.find("tensogram.messages");
  if (it == metadata.end()) return out;
  const nlohmann::json doc = nlohmann::json::parse(it->second, nullptr, /*allow_exceptions=*/false);
  if (!doc.is_array()) return out;
  for (const auto& msg : doc) {
    if (!msg.is_object() || !msg.contains("objects") || !msg.contains("metadata")) continue;
    const auto& names = msg["objects"];
    const auto& meta = msg["metadata"];
    if (!names.is_array() || !meta.is_object()) continue;
    const auto base = meta.find("base");
    for (std::size_t j = 0; j < names.size(); ++j) {
      if (!names[j].is_string()) continue;
      nlohmann::json entry =
          base != meta.end() && base->is_array() && j < base->size() ? (*base)[j] : nlohmann::json();
      if (entry.is_object()) entry.erase("_reserved_");  // library-managed, rewritten by the encoder
      out[names[j].get<std::string>()] = std::move(entry);
    }
  }
  return out;
}

}  // namespace

void run_to_tgm(const to_tgm_args& args, std::ostream& out, std::ostream& err, bool show_progress) {
  const safetensors::file base = safetensors::file::open(args.input);
  const bool is_metatensor = base.metadata().count("metatensor.version") != 0;
  std::optional<metatensor::file> mt;
  std::vector<std::string> names;
  if (is_metatensor) {
    mt.emplace(metatensor::file::open(args.input));  // structural validation
    for (const std::string& name : mt->tensor_names()) {
      const tensor_layout& l = mt->layout(name);
      if (l.kind != tensor_kind::flat) {
        throw tool_error("tensor \"" + name + "\" is a " + std::string(kind_name(l.kind)) +
                         " tensor; Tensogram objects are plain N-d arrays, so only flat tensors convert");
      }
      names.push_back(name);
    }
  } else {
    for (const auto& t : base.tensors()) names.emplace_back(t.name());
  }
  const auto bases = recorded_bases(base.metadata());

  tensogram::global_metadata meta;
  std::vector<tensogram::object_input> objects;
  tensogram::cli::progress bar("to-tgm", names.size() + 1, show_progress);
  for (const std::string& name : names) {
    const safetensors::tensor_view& t = base.at(name);
    const std::vector<std::uint64_t> shape(t.shape().begin(), t.shape().end());
    const auto dt = safetensors::to_tensogram(t.type());
    // No Tensogram dtype: the raw bytes, the original recorded (see above).
    const std::vector<std::uint64_t> object_shape = dt ? shape : std::vector<std::uint64_t>{t.bytes().size()};
    tensogram::data_object_descriptor d = tensogram::data_object_descriptor::contiguous(
        dt.value_or(tensogram::dtype::uint8), object_shape, tensogram::byte_order::little);
    tensogram::cli::apply_pipeline_flags(args.pipeline, d, "tensor \"" + name + "\"");
    objects.push_back(tensogram::object_input{std::move(d), t.bytes()});
    const auto recorded = bases.find(name);
    nlohmann::json entry = recorded != bases.end() && recorded->second.is_object()
                               ? recorded->second
                               : nlohmann::json{{"name", name}};
    if (!dt) {
      entry[std::string(raw_dtype_key)] = {{"dtype", safetensors::dtype_name(t.type())}, {"shape", shape}};
    }
    meta.base.push_back(tensogram::cbor::from_json(entry));
    bar.advance();
  }
  if (bases.empty()) {
    for (const auto& [k, v] : base.metadata()) {
      if (k.rfind("metatensor.", 0) != 0) meta.extra.set(k, tensogram::cbor::value(v));
    }
  }
  const std::vector<std::byte> encoded = tensogram::encode(meta, objects);
  tensogram::write_file_atomically(args.output, encoded,
                                   tensogram::atomic_write_options{.sync = !args.no_sync});
  bar.advance();
  bar.finish();
  (void)err;
  out << "Wrote " << objects.size() << (objects.size() == 1 ? " object" : " objects") << " to " << args.output
      << '\n';
}

}  // namespace metatensor::cli
