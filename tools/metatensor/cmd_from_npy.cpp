// `metatensor from-npy IN.npy... -o OUT`: .npy arrays → one metatensor file.
#include <filesystem>
#include <set>

#include <tensogram/core/buffer.hpp>

#include "metatensor_commands.hpp"
#include "npy_records.hpp"
#include "progress.hpp"
#include "tool_error.hpp"

namespace metatensor::cli {
namespace npy = tensogram::cli::npy;
using tensogram::cli::tool_error;

void run_from_npy(const from_npy_args& args, std::ostream& out, std::ostream& err, bool show_progress) {
  struct input {
    std::string name;
    tensogram::buffer file;
    npy::array array;
    std::vector<std::byte> reordered;  // C-order copy of a Fortran-order array
  };
  std::vector<input> inputs;
  inputs.reserve(args.inputs.size());
  std::set<std::string> names;
  nlohmann::json schema = {{"$schema", schema_dialect_uri},
                           {"type", "object"},
                           {"properties", nlohmann::json::object()},
                           {"required", nlohmann::json::array()},
                           {"additionalProperties", false}};
  for (const std::string& path : args.inputs) {
    input in;
    // The tensor is named after the file: "particles.npy" -> "particles".
    in.name = std::filesystem::path(path).stem().string();
    if (in.name.empty() || in.name.rfind("__", 0) == 0 || in.name.find('#') != std::string::npos) {
      throw tool_error(
          path + ": the file name gives the tensor name \"" + in.name +
          "\", which is not allowed (empty, starting with \"__\" or containing '#'; metatensor-format §3.2)");
    }
    if (!names.insert(in.name).second) throw tool_error(path + ": a second input named \"" + in.name + "\"");
    in.file = tensogram::buffer::map_file(path);
    try {
      in.array = npy::parse(in.file.bytes(), npy::text_dtypes::accept);
    } catch (const npy::npy_error& e) {
      throw tool_error(path + ": " + e.what());
    }
    try {
      schema["properties"][in.name] = npy_tensor_schema(in.array);
    } catch (const tool_error& e) {
      throw tool_error(path + ": " + e.what());
    }
    schema["required"].push_back(in.name);
    if (in.array.hdr.fortran_order && in.array.hdr.shape.size() > 1) {
      in.reordered = npy::fortran_to_c_order(in.array.data, in.array.hdr.shape, in.array.element.itemsize);
    }
    inputs.push_back(std::move(in));
  }
  writer_options options;
  options.alignment = args.alignment;
  file_builder builder(compile_schema(schema), options);
  tensogram::cli::progress bar("from-npy", inputs.size() + 1, show_progress);
  for (const input& in : inputs) {
    const std::span<const std::byte> data =
        in.reordered.empty() ? in.array.data : std::span<const std::byte>(in.reordered);
    add_npy_tensor(builder, in.name, in.array, data);
    bar.advance();
  }
  builder.write(args.output, tensogram::atomic_write_options{.sync = !args.no_sync});
  bar.advance();
  bar.finish();
  (void)err;
  out << "Wrote " << inputs.size() << (inputs.size() == 1 ? " tensor" : " tensors") << " to " << args.output
      << '\n';
}

}  // namespace metatensor::cli
