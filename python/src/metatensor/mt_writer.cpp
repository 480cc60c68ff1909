// Writing flat tensors from numpy arrays (`save`, `save_file`): a
// metatensor file whose schema has one root property per array, so the
// output is read back by safetensors too (every metatensor file is a valid
// safetensors file).
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "metatensor/layout.hpp"
#include "metatensor/writer.hpp"
#include "mt_binding.hpp"
#include "tensogram/core/error.hpp"

namespace metatensor::python {

// The safetensors dtype of a numpy dtype (numpy's kind and item size).
safetensors::dtype dtype_of(const py::dtype& dt, const std::string& name) {
  using safetensors::dtype;
  const char kind = dt.kind();
  const auto size = dt.itemsize();
  if (kind == 'b' && size == 1) return dtype::boolean;
  if (kind == 'u' || kind == 'i') {
    const bool u = kind == 'u';
    switch (size) {
      case 1: return u ? dtype::u8 : dtype::i8;
      case 2: return u ? dtype::u16 : dtype::i16;
      case 4: return u ? dtype::u32 : dtype::i32;
      case 8: return u ? dtype::u64 : dtype::i64;
      default: break;
    }
  }
  if (kind == 'f') {
    switch (size) {
      case 2: return dtype::f16;
      case 4: return dtype::f32;
      case 8: return dtype::f64;
      default: break;
    }
  }
  if (kind == 'c' && size == 8) return dtype::c64;
  const auto numpy_name = dt.attr("name").cast<std::string>();
  if (numpy_name == "bfloat16") return dtype::bf16;  // ml_dtypes
  throw py::type_error("tensor \"" + name + "\" has numpy dtype " + numpy_name +
                       ", which safetensors cannot hold");
}

namespace {
// An explicit dtype name, checked against the array's item size.
safetensors::dtype dtype_named(const std::string& text, const py::dtype& dt, const std::string& name) {
  const auto t = safetensors::parse_dtype(text);
  if (!t || safetensors::dtype_bits(*t) != static_cast<std::uint64_t>(dt.itemsize()) * 8) {
    throw tensogram::invalid_arg_error("tensor \"" + name + "\": dtype " + text +
                                       " does not fit numpy dtype " + dt.attr("name").cast<std::string>());
  }
  return *t;
}

// One input tensor: the array (C-contiguous, little-endian, as the Python
// layer passes it) kept referenced while its bytes are read without the GIL.
struct input {
  std::string name;
  safetensors::dtype type;
  std::vector<std::uint64_t> dims;
  py::array array;
  std::span<const std::byte> bytes;
};

std::vector<input> inputs_of(const py::list& tensors) {
  std::vector<input> out;
  for (const auto& item : tensors) {
    const auto pair = item.cast<py::tuple>();
    input in;
    in.name = pair[0].cast<std::string>();
    in.array = pair[1].cast<py::array>();
    // An optional third item names the safetensors dtype of the bytes (BF16
    // and F8 tensors from PyTorch arrive as integer arrays of their bits).
    in.type = pair.size() > 2 ? dtype_named(pair[2].cast<std::string>(), in.array.dtype(), in.name)
                              : dtype_of(in.array.dtype(), in.name);
    if ((in.array.flags() & py::array::c_style) == 0 || in.array.dtype().byteorder() == '>') {
      throw tensogram::invalid_arg_error("tensor \"" + in.name +
                                         "\": expected a C-contiguous little-endian array");
    }
    for (py::ssize_t d = 0; d < in.array.ndim(); ++d)
      in.dims.push_back(static_cast<std::uint64_t>(in.array.shape(d)));
    in.bytes = {static_cast<const std::byte*>(in.array.data()), static_cast<std::size_t>(in.array.nbytes())};
    out.push_back(std::move(in));
  }
  return out;
}

// The schema of flat tensors (§4–§5): one required root property per
// tensor, its dimensions unbounded nested arrays of the scalar type.
file_builder builder_for(const std::vector<input>& tensors, std::map<std::string, std::string> metadata) {
  nlohmann::json schema = {{"$schema", schema_dialect_uri},
                           {"type", "object"},
                           {"properties", nlohmann::json::object()},
                           {"required", nlohmann::json::array()},
                           {"additionalProperties", false}};
  for (const auto& t : tensors) {
    nlohmann::json node = scalar_schema(t.type);
    for (std::size_t d = 0; d < t.dims.size(); ++d) node = {{"type", "array"}, {"items", std::move(node)}};
    if (schema["properties"].contains(t.name)) {
      throw tensogram::invalid_arg_error("tensor name \"" + t.name + "\" given twice");
    }
    schema["properties"][t.name] = std::move(node);
    schema["required"].push_back(t.name);
  }
  writer_options options;
  options.user_metadata = std::move(metadata);
  file_builder builder(compile_schema(std::move(schema)), std::move(options));
  for (const auto& t : tensors) builder.set_flat_bytes(t.name, t.dims, t.bytes);
  return builder;
}

py::bytes serialize(const py::list& tensors, std::map<std::string, std::string> metadata) {
  const auto inputs = inputs_of(tensors);
  std::vector<std::byte> image;
  {
    py::gil_scoped_release unlocked;
    image = builder_for(inputs, std::move(metadata)).serialize();
  }
  return {reinterpret_cast<const char*>(image.data()), image.size()};
}

void write_file(const py::list& tensors, const std::filesystem::path& path,
                std::map<std::string, std::string> metadata) {
  const auto inputs = inputs_of(tensors);
  py::gil_scoped_release unlocked;
  builder_for(inputs, std::move(metadata)).write(path);
}

// Any schema and its §8.3 logical value (JSON texts): records, strings and
// ragged lists included. Slow (every element goes through JSON) but general.
py::bytes serialize_json(const std::string& schema, const std::string& value,
                         std::map<std::string, std::string> metadata) {
  std::vector<std::byte> image;
  {
    py::gil_scoped_release unlocked;
    writer_options options;
    options.user_metadata = std::move(metadata);
    file_builder builder(compile_schema_text(schema), std::move(options));
    builder.set_logical_value(nlohmann::json::parse(value));
    image = builder.serialize();
  }
  return {reinterpret_cast<const char*>(image.data()), image.size()};
}

}  // namespace

void register_writer(py::module_& m) {
  m.def("serialize", &serialize, py::arg("tensors"), py::arg("metadata"),
        "The metatensor file image of [(name, C-contiguous little-endian ndarray), ...] and user metadata.");
  m.def("write_file", &write_file, py::arg("tensors"), py::arg("path"), py::arg("metadata"),
        "`serialize` written atomically to `path`.");
  m.def("serialize_json", &serialize_json, py::arg("schema"), py::arg("value"), py::arg("metadata"),
        "The file image of a schema and its logical value (JSON texts; every kind of tensor).");
}

}  // namespace metatensor::python
