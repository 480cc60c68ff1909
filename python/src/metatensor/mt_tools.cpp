// Writing records and blobs, whole-file validation and schema diffs for
// `tensogram.metatensor` (python/tensogram/metatensor/_writer.py,
// _schema.py): thin calls into libmetatensor. The Python layer turns values
// into bytes in the layout this file reports (`schema_layouts`); the
// library checks them (padding, BOOL, UTF-8, dims) and writes the
// canonical file, the same bytes as the CLI and the C++ API.
#include <Python.h>

#include <cstring>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "metatensor/compatibility.hpp"
#include "metatensor/error.hpp"
#include "metatensor/validate.hpp"
#include "metatensor/writer.hpp"
#include "mt_binding.hpp"
#include "tensogram/core/buffer.hpp"
#include "tensogram/core/error.hpp"

namespace metatensor::python {

namespace {

std::string_view value_type_name(value_type t) {
  switch (t) {
    case value_type::scalar: return "scalar";
    case value_type::record: return "record";
    case value_type::string: return "string";
    case value_type::list: break;
  }
  return "list";
}

// numpy has no dtype for sub-byte types: None there.
py::object numpy_dtype_or_none(dtype t) {
  if (safetensors::dtype_bits(t) % 8 != 0) return py::none();
  return numpy_dtype(t);
}

// A record as the Python writer walks it: per field its name, what it holds,
// its fixed-array shape and, below, the nested record or the List element.
py::list record_tree(const record_layout& rec) {
  py::list fields;
  for (const auto& f : rec.fields) {
    py::dict d;
    d["name"] = f.name;
    d["type"] = value_type_name(f.type.type);
    d["shape"] = py::cast(f.type.shape);
    if (f.type.type == value_type::record) d["record"] = record_tree(*f.type.record);
    if (f.type.type == value_type::list) d["element"] = type_dtype(*f.type.elem);
    fields.append(std::move(d));
  }
  return fields;
}

// Every logical tensor of a schema: kind, rank, whether required, and the
// numpy dtype its elements are written in.
py::dict schema_layouts(const std::string& text) {
  const compiled_schema schema = compile_schema_text(text);
  py::dict out;
  for (const auto& l : schema.tensors()) {
    py::dict d;
    d["kind"] = kind_name(l.kind);
    d["rank"] = l.rank();
    d["required"] = l.required;
    switch (l.kind) {
      case tensor_kind::flat:
        d["dtype"] = safetensors::dtype_name(l.flat_dtype);
        d["numpy"] = numpy_dtype_or_none(l.flat_dtype);
        break;
      case tensor_kind::record:
        d["numpy"] = record_dtype(*l.record);
        d["record"] = record_tree(*l.record);
        break;
      case tensor_kind::blob:
        d["item"] = value_type_name(l.item.type);
        if (l.item.type == value_type::list) d["element"] = type_dtype(*l.item.elem);
        break;
    }
    out[py::str(l.name)] = std::move(d);
  }
  return out;
}

std::string scalar_schema_text(const py::dtype& dt) {
  return scalar_schema(dtype_of(dt, "")).dump();
}

std::string dtype_name_of(const py::dtype& dt) {
  return std::string(safetensors::dtype_name(dtype_of(dt, "")));
}

// ---- writing ---------------------------------------------------------------

// Bytes of a C-contiguous array, which stays referenced by `keep`.
std::span<const std::byte> array_bytes(const py::array& a, const std::string& what) {
  if ((a.flags() & py::array::c_style) == 0) {
    throw tensogram::invalid_arg_error(what + ": expected a C-contiguous array");
  }
  return {static_cast<const std::byte*>(a.data()), static_cast<std::size_t>(a.nbytes())};
}

// A String (str: its UTF-8, refused when it holds lone surrogates; bytes:
// as given, the library checks UTF-8) or List element (bytes) as owned bytes.
std::string blob_text(const py::handle& v, const std::string& where) {
  if (PyUnicode_Check(v.ptr()) != 0) {
    Py_ssize_t size = 0;
    const char* p = PyUnicode_AsUTF8AndSize(v.ptr(), &size);
    if (p == nullptr) {
      PyErr_Clear();
      throw metatensor::error(errc::mt_utf8, where + ": the str cannot be encoded as UTF-8 (lone surrogate)");
    }
    return {p, static_cast<std::size_t>(size)};
  }
  if (PyBytes_Check(v.ptr()) != 0) return std::string(py::reinterpret_borrow<py::bytes>(v));
  throw py::type_error(where + ": expected str or bytes, got " +
                       std::string(py::str(py::type::handle_of(v).attr("__name__"))));
}

std::vector<std::byte> as_bytes(const std::string& s) {
  const auto* p = reinterpret_cast<const std::byte*>(s.data());
  return {p, p + s.size()};
}

std::vector<std::uint64_t> dims_of(const py::handle& dims) {
  return dims.cast<std::vector<std::uint64_t>>();
}

// One logical tensor, converted under the GIL, written without it.
struct pending {
  std::string name;
  std::string kind;  // "flat", "struct", "string", "list"
  std::vector<std::uint64_t> dims;
  py::array array;                  // flat elements / records (kept alive)
  std::span<const std::byte> data;  // their bytes
  std::vector<std::string> strings;
  std::vector<std::vector<std::byte>> lists;
  struct field_blobs {
    std::string path;
    bool string = true;
    std::vector<std::string> values;  // one per record
  };
  std::vector<field_blobs> fields;
};

// (name, kind, dims, payload[, fields]) tuples from _writer.py:
//   flat:   payload a C-contiguous little-endian ndarray of the tensor's dtype
//   struct: payload the records as an ndarray of the layout's record dtype;
//           fields [(path, "string"|"list", [value per record]), ...]
//   string: payload [str | bytes, ...] in C order
//   list:   payload [bytes of the packed elements, ...] in C order
std::vector<pending> pending_of(const py::list& entries, const compiled_schema& schema) {
  std::vector<pending> out;
  for (const auto& item : entries) {
    const auto t = item.cast<py::tuple>();
    pending p;
    p.name = t[0].cast<std::string>();
    p.kind = t[1].cast<std::string>();
    p.dims = dims_of(t[2]);
    const std::string what = "tensor \"" + p.name + "\"";
    if (p.kind == "flat" || p.kind == "struct") {
      p.array = t[3].cast<py::array>();
      p.data = array_bytes(p.array, what);
      if (p.kind == "flat") {
        const tensor_layout* l = schema.find(p.name);
        // A dtype the reader hands out for this tensor (uint8 for F8, uint16 bits for BF16) is accepted too.
        if (l != nullptr && l->kind == tensor_kind::flat) {
          const py::object as_read = numpy_dtype_or_none(l->flat_dtype);
          const bool read_dtype = !as_read.is_none() && as_read.cast<py::dtype>().equal(p.array.dtype());
          if (!read_dtype && dtype_of(p.array.dtype(), p.name) != l->flat_dtype) {
            throw py::type_error(what + ": numpy dtype " + std::string(py::str(p.array.dtype())) +
                                 " does not match the schema's " +
                                 std::string(safetensors::dtype_name(l->flat_dtype)));
          }
        }
      }
      if (p.kind == "struct" && t.size() > 4) {
        for (const auto& f : t[4].cast<py::list>()) {
          const auto ft = f.cast<py::tuple>();
          pending::field_blobs fb;
          fb.path = ft[0].cast<std::string>();
          fb.string = ft[1].cast<std::string>() == "string";
          const auto values = ft[2].cast<py::list>();
          fb.values.reserve(values.size());
          for (std::size_t i = 0; i < values.size(); ++i) {
            fb.values.push_back(
                blob_text(values[i], what + " record " + std::to_string(i) + " field \"" + fb.path + "\""));
          }
          p.fields.push_back(std::move(fb));
        }
      }
    } else if (p.kind == "string" || p.kind == "list") {
      const auto values = t[3].cast<py::list>();
      for (std::size_t i = 0; i < values.size(); ++i) {
        std::string v = blob_text(values[i], what + " element " + std::to_string(i));
        if (p.kind == "string") {
          p.strings.push_back(std::move(v));
        } else {
          p.lists.push_back(as_bytes(v));
        }
      }
    } else {
      throw tensogram::invalid_arg_error(what + ": unknown kind \"" + p.kind + "\"");
    }
    out.push_back(std::move(p));
  }
  return out;
}

void set_pending(file_builder& b, const pending& p) {
  if (p.kind == "flat") {
    b.set_flat_bytes(p.name, p.dims, p.data);
  } else if (p.kind == "string") {
    b.set_strings(p.name, p.dims, p.strings);
  } else if (p.kind == "list") {
    b.set_list_bytes(p.name, p.dims, p.lists);
  } else {
    record_writer& w = b.set_records(p.name, p.dims);
    w.set_all_bytes(p.data);
    for (const auto& f : p.fields) {
      if (f.values.size() != w.size()) {
        throw tensogram::invalid_arg_error("tensor \"" + p.name + "\" field \"" + f.path +
                                           "\": " + std::to_string(f.values.size()) + " values for " +
                                           std::to_string(w.size()) + " records");
      }
      for (std::size_t r = 0; r < f.values.size(); ++r) {
        if (f.string) {
          w.set_string(r, f.path, f.values[r]);
        } else {
          w.set_list_bytes(r, f.path, as_bytes(f.values[r]));
        }
      }
    }
  }
}

// The file of `entries` under `schema_text`: its bytes, or written
// atomically to `path` (then None).
py::object write(const std::string& schema_text, const py::list& entries,
                 std::map<std::string, std::string> metadata, std::uint64_t alignment,
                 const std::optional<std::filesystem::path>& path) {
  compiled_schema schema = compile_schema_text(schema_text);
  const std::vector<pending> tensors = pending_of(entries, schema);
  std::vector<std::byte> image;
  {
    py::gil_scoped_release unlocked;
    writer_options options;
    options.alignment = alignment;
    options.user_metadata = std::move(metadata);
    file_builder b(std::move(schema), std::move(options));
    for (const auto& p : tensors) {
      if (b.contains(p.name)) throw tensogram::invalid_arg_error("tensor \"" + p.name + "\" given twice");
      set_pending(b, p);
    }
    if (path) {
      b.write(*path);
    } else {
      image = b.serialize();
    }
  }
  if (path) return py::none();
  return py::bytes(reinterpret_cast<const char*>(image.data()), image.size());
}

// ---- validate, diff ----------------------------------------------------------

// "metatensor" or "safetensors" for a valid file (a path or a file image);
// MetatensorError with the first failure's name otherwise.
std::string validate(const py::object& source, bool deep) {
  if (py::isinstance<py::bytes>(source)) {
    const std::string_view view = source.cast<py::bytes>();  // immutable: read without the GIL
    py::gil_scoped_release unlocked;
    std::vector<std::byte> copy(view.size());
    if (!view.empty()) std::memcpy(copy.data(), view.data(), view.size());
    return std::string(file_format_name(validate_image(tensogram::buffer::owned(std::move(copy)), deep)));
  }
  const auto path = source.cast<std::filesystem::path>();
  std::error_code ec;
  if (!std::filesystem::exists(path, ec) && !ec) {
    PyErr_SetString(PyExc_FileNotFoundError, ("No such file or directory: '" + path.string() + "'").c_str());
    throw py::error_already_set();
  }
  py::gil_scoped_release unlocked;
  try {
    return std::string(file_format_name(validate_image(tensogram::buffer::map_file(path), deep)));
  } catch (const metatensor::error& e) {
    throw e.with_context(path.string());
  }
}

// The schema embedded in a safetensors file (its `metatensor.schema`): the
// text; None when the file is not a safetensors file at all (a schema
// document, then); ValueError for safetensors without a schema.
std::optional<std::string> embedded_schema(const std::filesystem::path& path) {
  py::gil_scoped_release unlocked;
  std::optional<safetensors::file> st;
  try {
    st.emplace(safetensors::file::open(path));
  } catch (const metatensor::error&) {
    return std::nullopt;
  }
  const auto it = st->metadata().find("metatensor.schema");
  if (it == st->metadata().end()) {
    throw tensogram::invalid_arg_error(path.string() +
                                       ": a safetensors file without a metatensor schema (no "
                                       "\"metatensor.schema\" key)");
  }
  return it->second;
}

// (verdict, [(path, change, class), ...]) of reading files written with
// schema `old_text` as `new_text`.
py::tuple diff(const std::string& old_text, const std::string& new_text) {
  const compatibility_report report =
      compatibility(compile_schema_text(old_text), compile_schema_text(new_text));
  py::list changes;
  for (const auto& c : report.changes) {
    changes.append(py::make_tuple(c.path, c.change, compatibility_class_name(c.verdict)));
  }
  return py::make_tuple(compatibility_class_name(report.verdict), changes);
}

}  // namespace

void register_tools(py::module_& m) {
  m.def("schema_layouts", &schema_layouts, py::arg("schema"),
        "Compiles a schema (JSON text) and describes each logical tensor: kind, rank, required and the numpy "
        "dtype of its elements.");
  m.def("scalar_schema", &scalar_schema_text, py::arg("dtype"),
        "The scalar leaf schema (JSON text) of a numpy dtype.");
  m.def("dtype_name", &dtype_name_of, py::arg("dtype"), "The safetensors dtype name of a numpy dtype.");
  m.def("write", &write, py::arg("schema"), py::arg("entries"), py::arg("metadata"), py::arg("alignment"),
        py::arg("path") = py::none(),
        "The file of prepared tensors: bytes, or written atomically to `path`.");
  m.def("validate", &validate, py::arg("source"), py::arg("deep"),
        "Validates a file (path or bytes) as `metatensor validate` does: \"metatensor\" or \"safetensors\".");
  m.def("embedded_schema", &embedded_schema, py::arg("path"),
        "The metatensor schema of a safetensors file, or None when the path is not a safetensors file.");
  m.def("diff", &diff, py::arg("old"), py::arg("new"),
        "(verdict, [(path, change, class), ...]) of reading files of schema `old` as `new`.");
}

}  // namespace metatensor::python
