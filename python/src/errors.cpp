// Library exceptions → Python exceptions (spec 04 B.7).
//
//   framing/metadata/encoding/compression/object errors → ValueError with the
//     reference's prefixes ("FramingError: ", ...)
//   invalid arguments → ValueError; I/O → OSError; remote → OSError
//     ("RemoteError: "); timeouts → TimeoutError; anything else of the
//     library → RuntimeError
//   hash verification → MissingHashError / HashMismatchError, which derive
//     from IntegrityError(Exception) and not from RuntimeError (B.7 doc drift)
#include <Python.h>

#include <string>

#include "binding.hpp"
#include "tensogram/core/error.hpp"
#include "tensogram/core/hex.hpp"
#if TENSOGRAM_HAS_IMPORTERS
#include "tensogram/importers/conversion.hpp"
#endif

namespace tensogram::python {

namespace {

py::object module_attr(const char* name) {
  return py::module_::import("tensogram._tensogram").attr(name);
}

void raise(PyObject* type, const std::string& text) {
  PyErr_SetString(type, text.c_str());
}

// An instance of one of our exception classes with extra attributes.
void raise_with(const char* cls_name, const std::string& text,
                std::initializer_list<std::pair<const char*, py::object>> attrs) {
  py::object cls = module_attr(cls_name);
  py::object exc = cls(text);
  for (const auto& [name, value] : attrs) exc.attr(name) = value;
  PyErr_SetObject(cls.ptr(), exc.ptr());
}

void translate(std::exception_ptr p) {
  try {
    std::rethrow_exception(p);
  } catch (const hash_mismatch_error& e) {
    const py::object index =
        e.object_index() ? py::object(py::int_(*e.object_index())) : py::object(py::none());
    const std::string where = e.object_index() ? std::to_string(*e.object_index()) : std::string("None");
    raise_with("HashMismatchError",
               "HashMismatch: object_index=" + where + ", expected=" + hex16(e.expected()) +
                   ", actual=" + hex16(e.actual()),
               {{"object_index", index},
                {"expected", py::str(hex16(e.expected()))},
                {"actual", py::str(hex16(e.actual()))}});
  } catch (const missing_hash_error& e) {
    raise_with("MissingHashError", "MissingHash: " + std::string(e.detail()),
               {{"object_index", py::int_(e.object_index())}});
#if TENSOGRAM_HAS_IMPORTERS
  } catch (const importers::conversion_error& e) {
    // spec 05 §2.6, §4.7: library failures are RuntimeError, the rest ValueError.
    raise(e.kind() == importers::conversion_failure::library ? PyExc_RuntimeError : PyExc_ValueError,
          e.what());
#endif
  } catch (const framing_error& e) {
    raise(PyExc_ValueError, "FramingError: " + std::string(e.detail()));
  } catch (const metadata_error& e) {
    raise(PyExc_ValueError, "MetadataError: " + std::string(e.detail()));
  } catch (const encoding_error& e) {
    raise(PyExc_ValueError, "EncodingError: " + std::string(e.detail()));
  } catch (const compression_error& e) {
    raise(PyExc_ValueError, "CompressionError: " + std::string(e.detail()));
  } catch (const object_error& e) {
    raise(PyExc_ValueError, "ObjectError: " + std::string(e.detail()));
  } catch (const invalid_arg_error& e) {
    raise(PyExc_ValueError, std::string(e.detail()));
  } catch (const remote_error& e) {
    raise(PyExc_OSError, "RemoteError: " + std::string(e.detail()));
  } catch (const io_error& e) {
    raise(PyExc_OSError, std::string(e.detail()));
  } catch (const timeout_error& e) {
    raise(PyExc_TimeoutError, std::string(e.detail()));
  } catch (const error& e) {
    raise(PyExc_RuntimeError, e.what());
  }
  // Everything else (py::error_already_set, std::bad_alloc, ...) is left to
  // pybind11's own translators by rethrowing.
}

}  // namespace

void raise_not_instance(py::handle obj, std::string_view param, std::string_view type) {
  std::string text = param.empty() ? "" : "argument '" + std::string(param) + "': ";
  if (obj.is_none()) {
    text += "'None' is not an instance of '" + std::string(type) + "'";
  } else {
    text += "'" + py::str(py::type::handle_of(obj).attr("__qualname__")).cast<std::string>() +
            "' object is not an instance of '" + std::string(type) + "'";
  }
  throw py::type_error(text);
}

void warn_caller(const std::string& text) {
  int level = 1;
  if (PyFrameObject* frame = PyEval_GetFrame(); frame != nullptr) {  // borrowed
    const py::object code =
        py::reinterpret_steal<py::object>(reinterpret_cast<PyObject*>(PyFrame_GetCode(frame)));
    const std::string file = py::str(code.attr("co_filename"));
    constexpr std::string_view wrapper = "/tensogram/_arguments.py";
    if (file.size() >= wrapper.size() &&
        file.compare(file.size() - wrapper.size(), wrapper.size(), wrapper) == 0)
      level = 2;
  }
  if (PyErr_WarnEx(PyExc_UserWarning, text.c_str(), level) != 0) throw py::error_already_set();
}

bool strict_bool_arg(py::handle value, std::string_view param) {
  if (PyBool_Check(value.ptr())) return value.ptr() == Py_True;
  if (py::isinstance(value, py::module_::import("numpy").attr("bool_")))
    return PyObject_IsTrue(value.ptr()) == 1;
  raise_not_instance(value, param, "bool");
}

void register_errors(py::module_& m) {
  // PyErr_NewException returns a new reference; the module attribute owns it.
  py::object integrity = py::reinterpret_steal<py::object>(
      PyErr_NewException("tensogram.IntegrityError", PyExc_Exception, nullptr));
  integrity.attr("__doc__") = "Hash verification failed (base of MissingHashError and HashMismatchError).";
  m.attr("IntegrityError") = integrity;
  py::object missing = py::reinterpret_steal<py::object>(
      PyErr_NewException("tensogram.MissingHashError", integrity.ptr(), nullptr));
  missing.attr("__doc__") =
      "verify_hash=True but the object was written without a hash. Attribute: object_index.";
  m.attr("MissingHashError") = missing;
  py::object mismatch = py::reinterpret_steal<py::object>(
      PyErr_NewException("tensogram.HashMismatchError", integrity.ptr(), nullptr));
  mismatch.attr("__doc__") =
      "A stored xxh3 hash disagrees with the data. Attributes: object_index, expected, actual (hex).";
  m.attr("HashMismatchError") = mismatch;
  py::register_exception_translator(&translate);
}

}  // namespace tensogram::python
