// Library exceptions → Python exceptions for `tensogram.metatensor`.
//
//   metatensor::error (a file that breaks the format) → MetatensorError,
//     message "<NAME>: what and where" with the format's error name
//     (ST_OFFSETS, MT_BLOB_BOUNDS, ...), also in its `code` attribute
//   unknown tensor name → TensorNotFoundError (MetatensorError and KeyError,
//     as safetensors programs catch KeyError)
//   I/O → FileNotFoundError when the path does not exist, else OSError
//   remote files: network failures → ConnectionError, time-outs →
//     TimeoutError, a file the server does not have → FileNotFoundError
//     (all OSErrors); other refusals → MetatensorError with the code
//   invalid arguments (wrong kind, bad value) → ValueError
//
// The translator is module-local: the `tensogram` extension's translator
// also knows the library's framing errors (the base class of
// metatensor::error) and must not catch ours first.
#include <Python.h>

#include <string>

#include "metatensor/error.hpp"
#include "metatensor/stream_types.hpp"
#include "mt_binding.hpp"
#include "tensogram/core/error.hpp"

namespace metatensor::python {

namespace {

// Owned by the module (its attributes); these borrowed pointers stay valid
// while the module is loaded, and extension modules are never unloaded.
PyObject* metatensor_error_type = nullptr;
PyObject* not_found_error_type = nullptr;

void raise_coded(PyObject* type, std::string_view code, const std::string& text) {
  // Messages quote input (a schema, a header), which may hold invalid UTF-8:
  // replaced, so that the exception is still raised.
  const auto message = py::reinterpret_steal<py::object>(
      PyUnicode_DecodeUTF8(text.data(), static_cast<Py_ssize_t>(text.size()), "replace"));
  if (!message) throw py::error_already_set();
  py::object exc = py::reinterpret_borrow<py::object>(type)(message);
  exc.attr("code") = code.empty() ? py::object(py::none()) : py::object(py::str(std::string(code)));
  PyErr_SetObject(type, exc.ptr());
}

void translate(std::exception_ptr p) {
  try {
    std::rethrow_exception(p);
  } catch (const metatensor::error& e) {
    raise_coded(metatensor_error_type, errc_name(e.kind()), std::string(e.detail()));
  } catch (const tensogram::io_error& e) {
    PyErr_SetString(PyExc_OSError, std::string(e.detail()).c_str());
  } catch (const tensogram::invalid_arg_error& e) {
    PyErr_SetString(PyExc_ValueError, std::string(e.detail()).c_str());
  } catch (const streaming::protocol_error& e) {
    // A remote file the server does not have is a missing file; other
    // refusals and protocol violations carry their code (MT_BAD_RANGE, ...).
    if (e.code() == streaming::stream_errc::not_found) {
      PyErr_SetString(PyExc_FileNotFoundError, e.what());
    } else {
      raise_coded(metatensor_error_type, streaming::stream_errc_name(static_cast<std::uint64_t>(e.code())),
                  e.what());
    }
  } catch (const tensogram::remote_error& e) {
    PyErr_SetString(PyExc_ConnectionError, e.what());  // an OSError, as network failures are in Python
  } catch (const tensogram::timeout_error& e) {
    PyErr_SetString(PyExc_TimeoutError, e.what());
  } catch (const tensogram::error& e) {
    raise_coded(metatensor_error_type, "", e.what());
  }
}

}  // namespace

void throw_not_found(std::string_view name) {
  raise_coded(not_found_error_type, "MT_NOT_FOUND",
              "MT_NOT_FOUND: file does not contain tensor \"" + std::string(name) + "\"");
  throw py::error_already_set();
}

void throw_metatensor_error(std::string_view code, const std::string& text) {
  raise_coded(metatensor_error_type, code, text);
  throw py::error_already_set();
}

void register_errors(py::module_& m) {
  py::object base = py::reinterpret_steal<py::object>(
      PyErr_NewException("tensogram.metatensor.MetatensorError", PyExc_Exception, nullptr));
  base.attr("__doc__") =
      "A file breaks the metatensor or safetensors format, or an operation cannot be done. Attribute "
      "`code`: the format's error name (e.g. \"ST_OFFSETS\", \"MT_BLOB_BOUNDS\") or None.";
  base.attr("code") = py::none();
  m.attr("MetatensorError") = base;
  py::tuple bases = py::make_tuple(base, py::reinterpret_borrow<py::object>(PyExc_KeyError));
  py::object not_found = py::reinterpret_steal<py::object>(
      PyErr_NewException("tensogram.metatensor.TensorNotFoundError", bases.ptr(), nullptr));
  not_found.attr("__doc__") = "The file has no tensor of that name (a KeyError, code \"MT_NOT_FOUND\").";
  m.attr("TensorNotFoundError") = not_found;
  metatensor_error_type = base.ptr();
  not_found_error_type = not_found.ptr();
  py::register_local_exception_translator(&translate);
}

}  // namespace metatensor::python
