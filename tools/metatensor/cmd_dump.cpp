// `metatensor dump FILE`: the header, the schema, the layout table and the
// first values of each logical tensor (their §8.3 logical value).
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

}  // namespace

void run_dump(const dump_args& args, std::ostream& out) {
  const metatensor::file f = metatensor::file::open(args.file);
  std::vector<std::string> names = args.tensors.empty() ? f.tensor_names() : args.tensors;
  for (const auto& name : names) {
    if (!f.contains(name))
      throw tensogram::cli::tool_error(args.file + ": no logical tensor \"" + name + "\"");
  }
  nlohmann::json doc = {{"file", args.file},
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
  out << "tensors:\n";
  for (const auto& name : names) {
    const auto& t = doc["tensors"][name];
    out << "  " << name << " (" << t["kind"].get<std::string>() << ' ' << t["dims"].dump() << ", "
        << t["elements"].get<std::uint64_t>() << (t["elements"] == 1 ? " element" : " elements") << ")\n";
    std::uint64_t i = 0;
    for (const auto& v : t["values"]) {
      out << "    [" << i++ << "] " << v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)
          << '\n';
    }
    if (i < t["elements"].get<std::uint64_t>()) {
      out << "    ... " << t["elements"].get<std::uint64_t>() - i << " more\n";
    }
  }
}

}  // namespace metatensor::cli
