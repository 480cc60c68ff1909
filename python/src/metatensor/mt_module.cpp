// The extension module `tensogram._metatensor`, wrapped by the package
// `tensogram.metatensor` (python/tensogram/metatensor/__init__.py): the
// `File` object behind `safe_open`, `load_file` and `load`.
#include <algorithm>
#include <cstring>
#include <filesystem>
#include <map>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "mt_binding.hpp"
#include "tensogram/core/buffer.hpp"
#include "tensogram/core/error.hpp"

namespace metatensor::python {

// A metatensor file when the header says so (`metatensor.version`),
// otherwise a plain safetensors file: both are validated by the library,
// which reads the header only (O(header), no tensor data).
std::shared_ptr<opened> open_image(const tensogram::buffer& image) {
  auto out = std::make_shared<opened>();
  try {
    out->mt = metatensor::file::from_buffer(image);
  } catch (const metatensor::error& e) {
    if (e.kind() != errc::mt_not_metatensor) throw;
    out->plain = safetensors::file::from_buffer(image);
  }
  return out;
}

namespace {

// The Python `File`: an opened file until `close`.
class py_file {
 public:
  explicit py_file(opened_ptr f) : f_(std::move(f)) {}

  static py_file open(const std::filesystem::path& path) {
    // FileNotFoundError as `open()` and safetensors raise it; other failures
    // (permissions, a directory) are the OSError of the mapping below.
    std::error_code ec;
    if (!std::filesystem::exists(path, ec) && !ec) {
      PyErr_SetString(PyExc_FileNotFoundError,
                      ("No such file or directory: '" + path.string() + "'").c_str());
      throw py::error_already_set();
    }
    py::gil_scoped_release unlocked;  // mapping and validation touch no Python object
    try {
      return py_file(open_image(tensogram::buffer::map_file(path)));
    } catch (const metatensor::error& e) {
      throw e.with_context(path.string());
    }
  }

  static py_file open_with_schema(const std::filesystem::path& path, std::string_view schema_json) {
    return py_file(open_migrated(path, schema_json));
  }

  // True when get_tensor(name) is a view of the file (identical layout),
  // false when it is a converted copy (reader schema only).
  [[nodiscard]] bool zero_copy(std::string_view name) const {
    const auto& f = *get();
    if (!f.migrated) return true;
    if (!f.migrated->contains(name)) throw_not_found(name);
    return f.migrated->zero_copy(name);
  }

  static py_file from_bytes(const py::bytes& data) {
    const std::string_view view = data;  // `bytes` is immutable: safe to read without the GIL
    py::gil_scoped_release unlocked;
    std::vector<std::byte> copy(view.size());
    if (!view.empty()) std::memcpy(copy.data(), view.data(), view.size());
    return py_file(open_image(tensogram::buffer::owned(std::move(copy))));
  }

  const opened_ptr& get() const {
    if (!f_)
      throw_metatensor_error("", "the file is closed (safe_open used after its `with` block or close())");
    return f_;
  }
  void close() noexcept { f_.reset(); }
  [[nodiscard]] bool closed() const noexcept { return f_ == nullptr; }

  [[nodiscard]] bool is_metatensor() const { return get()->mt.has_value(); }

  [[nodiscard]] std::vector<std::string> keys() const {
    const auto& f = *get();
    if (f.migrated) return f.migrated->tensor_names();
    if (f.mt) return f.mt->tensor_names();
    std::vector<std::string> names;
    for (const auto& t : f.plain->tensors()) names.emplace_back(t.name());
    std::sort(names.begin(), names.end());
    return names;
  }

  // safetensors semantics: None when the header has no `__metadata__`. For
  // metatensor files the user's keys only (the `metatensor.*` keys are the
  // format's own; `schema()` gives the schema).
  [[nodiscard]] py::object metadata() const {
    const auto& f = *get();
    if (f.mt) return py::cast(f.mt->user_metadata());
    if (!f.plain->has_metadata()) return py::none();
    return py::cast(f.plain->metadata());
  }

  [[nodiscard]] py::object schema() const {
    const auto& f = *get();
    if (!f.mt) return py::none();
    if (f.migrated) return py::str(f.migrated->schema().document().dump());  // the reader schema
    return py::str(f.mt->schema().document().dump());
  }

  // (kind, dtype, shape): kind "flat" / "struct" / "blob"; dtype the
  // safetensors name of a flat tensor, "struct", "string" or "list".
  [[nodiscard]] py::tuple info(std::string_view name) const {
    const auto& f = *get();
    std::vector<std::uint64_t> shape;
    std::string kind = "flat";
    std::string dtype;
    if (f.mt) {
      if (!(f.migrated ? f.migrated->contains(name) : f.mt->contains(name))) throw_not_found(name);
      const auto& l = f.migrated ? f.migrated->layout(name) : f.mt->layout(name);
      const auto dims = f.mt->dims(name);
      shape.assign(dims.begin(), dims.end());
      kind = std::string(kind_name(l.kind));
      if (l.kind == tensor_kind::flat) {
        dtype = std::string(safetensors::dtype_name(l.flat_dtype));
      } else if (l.kind == tensor_kind::record) {
        dtype = "struct";
      } else {
        dtype = l.item.type == value_type::string ? "string" : "list";
      }
    } else {
      const auto* t = f.plain->find(name);
      if (t == nullptr) throw_not_found(name);
      shape.assign(t->shape().begin(), t->shape().end());
      dtype = std::string(safetensors::dtype_name(t->type()));
    }
    return py::make_tuple(kind, dtype, shape);
  }

  [[nodiscard]] py::object tensor(std::string_view name) const { return tensor_object(get(), name); }
  [[nodiscard]] py::object blob_field(std::string_view name, std::string_view path) const {
    return blob_field_object(get(), name, path);
  }

  // The §8.3 logical value of a tensor as JSON text (what `metatensor dump`
  // prints), for comparing views with the library's own reading.
  [[nodiscard]] std::string logical_value(std::string_view name) const {
    const auto& f = *get();
    if (!f.mt) throw tensogram::invalid_arg_error("a plain safetensors file has no logical value");
    if (!f.mt->contains(name)) throw_not_found(name);
    return f.mt->logical_value(name).dump();
  }

 private:
  opened_ptr f_;
};

}  // namespace

}  // namespace metatensor::python

PYBIND11_MODULE(_metatensor, m) {
  namespace py = pybind11;
  using metatensor::python::py_file;
  m.doc() =
      "libmetatensor for Python: the extension behind tensogram.metatensor (docs/metatensor-python.md).";
  metatensor::python::register_errors(m);
  metatensor::python::register_arrays(m);
  metatensor::python::register_writer(m);
  metatensor::python::register_tools(m);
  metatensor::python::register_sources(m);
  py::class_<py_file>(m, "File",
                      "An opened metatensor or plain safetensors file (use tensogram.metatensor.safe_open).")
      .def(py::init([](const metatensor::python::opened_handle& h) { return py_file(h.f); }),
           py::arg("opened"), "A file opened by another source (open_copy_on_write, RemoteFile.opened).")
      .def_static("open", &py_file::open, py::arg("path"), "Maps and validates a file (header only).")
      .def_static("open_with_schema", &py_file::open_with_schema, py::arg("path"), py::arg("schema"),
                  "Maps a file and presents it through a newer compatible reader schema (JSON text).")
      .def("zero_copy", &py_file::zero_copy, py::arg("name"),
           "False when the tensor is a converted copy in the reader schema's types.")
      .def_static("from_bytes", &py_file::from_bytes, py::arg("data"), "Validates a copy of a file image.")
      .def("close", &py_file::close, "Releases the file; arrays already returned stay valid.")
      .def_property_readonly("closed", &py_file::closed)
      .def_property_readonly("is_metatensor", &py_file::is_metatensor,
                             "False for a plain safetensors file (no metatensor.version key).")
      .def("keys", &py_file::keys, "Tensor names, sorted (logical tensors of a metatensor file).")
      .def("metadata", &py_file::metadata, "User __metadata__ as dict[str, str], or None when absent.")
      .def("schema", &py_file::schema, "The metatensor schema as JSON text, or None for plain files.")
      .def("info", &py_file::info, py::arg("name"), "(kind, dtype, shape) of a tensor.")
      .def("tensor", &py_file::tensor, py::arg("name"),
           "A zero-copy read-only view: ndarray (flat), structured ndarray (struct) or BlobSequence (blob).")
      .def("blob_field", &py_file::blob_field, py::arg("name"), py::arg("field"),
           "A String/List field of every record of a struct tensor as a BlobSequence.")
      .def("logical_value", &py_file::logical_value, py::arg("name"),
           "The tensor's logical value as JSON text (as `metatensor dump` prints it).");
}
