// `metatensor info FILE...`.
#include <iomanip>
#include <nlohmann/json.hpp>

#include <metatensor.hpp>

#include "metatensor_commands.hpp"

namespace metatensor::cli {
namespace {

std::string dims_text(std::span<const std::uint64_t> dims) {
  std::string out = "[";
  for (std::size_t i = 0; i < dims.size(); ++i) out += (i ? ", " : "") + std::to_string(dims[i]);
  return out + "]";
}

std::string element_text(const tensor_layout& l) {
  switch (l.kind) {
    case tensor_kind::flat: return std::string(safetensors::dtype_name(l.flat_dtype));
    case tensor_kind::record:
      return "record " + std::to_string(l.record->size) + " B, " + std::to_string(l.record->fields.size()) +
             (l.record->fields.size() == 1 ? " field" : " fields");
    case tensor_kind::blob:
      return l.item.type == value_type::string ? "string" : "list of " + type_json(*l.item.elem).dump();
  }
  return {};
}

nlohmann::json describe_metatensor(const std::string& path, const metatensor::file& f) {
  nlohmann::json doc = {{"file", path},
                        {"format", "metatensor"},
                        {"version", "1"},
                        {"size", f.base().image().size()},
                        {"alignment", f.alignment()},
                        {"physical_tensors", f.base().tensors().size()},
                        {"user_metadata", f.user_metadata()},
                        {"tensors", nlohmann::json::array()}};
  for (const std::string& name : f.tensor_names()) {
    const tensor_layout& l = f.layout(name);
    const auto dims = f.dims(name);
    nlohmann::json t = {{"name", name},
                        {"kind", kind_name(l.kind)},
                        {"dims", std::vector<std::uint64_t>(dims.begin(), dims.end())},
                        {"element", element_text(l)},
                        {"bytes", f.base().at(name).bytes().size()}};
    if (l.has_heap) t["heap_bytes"] = f.base().at(l.heap_name()).bytes().size();
    doc["tensors"].push_back(std::move(t));
  }
  return doc;
}

nlohmann::json describe_safetensors(const std::string& path, const safetensors::file& f) {
  nlohmann::json doc = {{"file", path},
                        {"format", "safetensors"},
                        {"size", f.image().size()},
                        {"user_metadata", f.metadata()},
                        {"tensors", nlohmann::json::array()}};
  for (const auto& t : f.tensors()) {
    doc["tensors"].push_back({{"name", t.name()},
                              {"kind", "flat"},
                              {"dims", std::vector<std::uint64_t>(t.shape().begin(), t.shape().end())},
                              {"element", safetensors::dtype_name(t.type())},
                              {"bytes", t.bytes().size()}});
  }
  return doc;
}

}  // namespace

void run_info(const info_args& args, std::ostream& out) {
  nlohmann::json all = nlohmann::json::array();
  for (const std::string& path : args.files) {
    const safetensors::file base = safetensors::file::open(path);
    // A safetensors file without metatensor.version is reported as such
    // rather than refused: `info` is how users find out what a file is.
    const bool is_mt = base.metadata().count("metatensor.version") != 0;
    const nlohmann::json doc =
        is_mt ? describe_metatensor(path, metatensor::file::open(path)) : describe_safetensors(path, base);
    if (args.json) {
      all.push_back(doc);
      continue;
    }
    out << path << ": "
        << (is_mt ? "metatensor 1" : "safetensors (no metatensor.version: not a metatensor file)") << ", "
        << doc["size"].get<std::uint64_t>() << " bytes";
    if (is_mt) out << ", alignment " << doc["alignment"].get<std::uint64_t>();
    const auto& tensors = doc["tensors"];
    out << ", " << tensors.size() << (is_mt ? " logical" : "")
        << (tensors.size() == 1 ? " tensor" : " tensors");
    if (is_mt) out << " (" << doc["physical_tensors"].get<std::size_t>() << " physical)";
    out << '\n';
    std::size_t width = 4;
    for (const auto& t : tensors) width = std::max(width, t["name"].get_ref<const std::string&>().size());
    for (const auto& t : tensors) {
      out << "  " << std::left << std::setw(static_cast<int>(width)) << t["name"].get<std::string>() << "  "
          << std::setw(6) << t["kind"].get<std::string>() << "  " << std::setw(14)
          << dims_text(t["dims"].get<std::vector<std::uint64_t>>()) << "  " << t["element"].get<std::string>()
          << ", " << t["bytes"].get<std::uint64_t>() << " B";
      if (t.contains("heap_bytes")) out << " + heap " << t["heap_bytes"].get<std::uint64_t>() << " B";
      out << '\n';
    }
    if (!doc["user_metadata"].empty()) {
      out << "  user metadata: ";
      bool first = true;
      for (const auto& [k, v] : doc["user_metadata"].items()) {
        out << (first ? "" : ", ") << k;
        first = false;
      }
      out << '\n';
    }
  }
  if (args.json) out << all.dump(2) << '\n';
}

}  // namespace metatensor::cli
