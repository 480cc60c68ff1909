// `metatensor dump FILE`: the header, the schema, the layout table and the
// first values of each logical tensor (their §8.3 logical value). A plain
// safetensors file (no `metatensor.version`) has no schema or layout table:
// its metadata and the first values of each tensor are shown.
#include <algorithm>
#include <nlohmann/json.hpp>

#include <metatensor.hpp>

#include "metatensor_commands.hpp"
#include "tool_error.hpp"

namespace metatensor::cli {
namespace {

std::uint64_t element_count(std::span<const std::uint64_t> dims) {
  std::uint64_t n = 1;
  for (auto d : dims) n *= d;  // bounded: validated at open
  return n;
}

// The "tensors:" section: per tensor its type (`type_key` of its entry in
// doc["tensors"]), dims (`dims_key`), element count and first values.
void print_tensors(std::ostream& out, const nlohmann::json& doc, const std::vector<std::string>& names,
                   const char* type_key, const char* dims_key) {
  out << "tensors:\n";
  for (const auto& name : names) {
    const auto& t = doc["tensors"][name];
    const auto elements = t["elements"].get<std::uint64_t>();
    out << "  " << name << " (" << t[type_key].get<std::string>() << ' ' << t[dims_key].dump() << ", "
        << elements << (elements == 1 ? " element" : " elements") << ")\n";
    std::uint64_t i = 0;
    for (const auto& v : t["values"]) {
      out << "    [" << i++ << "] " << v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)
          << '\n';
    }
    if (i < elements) out << "    ... " << elements - i << " more\n";
  }
}

// A plain safetensors file: its __metadata__ and physical tensors.
void dump_plain(const dump_args& args, const safetensors::file& base, std::ostream& out) {
  std::vector<std::string> names = args.tensors;
  if (names.empty()) {
    for (const auto& t : base.tensors()) names.emplace_back(t.name());
  }
  for (const auto& name : names) {
    if (base.find(name) == nullptr)
      throw tensogram::cli::tool_error(args.file + ": no tensor \"" + name + "\"");
  }
  nlohmann::json doc = {{"file", args.file},
                        {"format", "safetensors"},
                        {"size", base.image().size()},
                        {"user_metadata", base.metadata()},
                        {"tensors", nlohmann::json::object()}};
  for (const auto& name : names) {
    const auto& t = base.at(name);
    const std::uint64_t total = t.element_count();
    const std::uint64_t shown = args.count == 0 ? total : std::min<std::uint64_t>(args.count, total);
    doc["tensors"][name] = {{"dtype", safetensors::dtype_name(t.type())},
                            {"shape", std::vector<std::uint64_t>(t.shape().begin(), t.shape().end())},
                            {"elements", total},
                            {"values", flat_elements(t, 0, shown)}};
  }
  if (args.json) {
    out << doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
    return;
  }
  out << "file: " << args.file << " (safetensors, no metatensor schema, " << base.image().size()
      << " bytes)\n";
  out << "metadata:" << (base.metadata().empty() ? " (none)" : "") << '\n';
  for (const auto& [k, v] : base.metadata()) out << "  " << k << " = " << v << '\n';
  print_tensors(out, doc, names, "dtype", "shape");
}

}  // namespace

void run_dump(const dump_args& args, std::ostream& out) {
  const safetensors::file base = safetensors::file::open(args.file);
  if (base.metadata().count("metatensor.version") == 0) {
    dump_plain(args, base, out);
    return;
  }
  const metatensor::file f = metatensor::file::open(args.file);
  std::vector<std::string> names = args.tensors.empty() ? f.tensor_names() : args.tensors;
  for (const auto& name : names) {
    if (!f.contains(name))
      throw tensogram::cli::tool_error(args.file + ": no logical tensor \"" + name + "\"");
  }
  nlohmann::json doc = {{"file", args.file},
                        {"format", "metatensor"},
                        {"alignment", f.alignment()},
                        {"size", f.base().image().size()},
                        {"user_metadata", f.user_metadata()},
                        {"schema", f.schema().document()},
                        {"layout", f.layout_table()},
                        {"tensors", nlohmann::json::object()}};
  for (const auto& name : names) {
    const auto dims = f.dims(name);
    const std::uint64_t total = element_count(dims);
    const std::uint64_t shown = args.count == 0 ? total : std::min<std::uint64_t>(args.count, total);
    doc["tensors"][name] = {{"kind", kind_name(f.layout(name).kind)},
                            {"dims", std::vector<std::uint64_t>(dims.begin(), dims.end())},
                            {"elements", total},
                            {"values", f.logical_elements(name, 0, shown)}};
  }
  if (args.json) {
    out << doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
    return;
  }
  out << "file: " << args.file << " (metatensor 1, alignment " << f.alignment() << ", "
      << f.base().image().size() << " bytes)\n";
  out << "user metadata:" << (doc["user_metadata"].empty() ? " (none)" : "") << '\n';
  for (const auto& [k, v] : f.user_metadata()) out << "  " << k << " = " << v << '\n';
  out << "schema:\n" << f.schema().document().dump(2) << '\n';
  out << "layout:\n" << f.layout_table().dump(2) << '\n';
  print_tensors(out, doc, names, "kind", "dims");
}

}  // namespace metatensor::cli
