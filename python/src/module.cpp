// The extension module `tensogram._tensogram`, re-exported by the package
// `tensogram` (python/tensogram/__init__.py). Spec 04 Part B.
#include "binding.hpp"

PYBIND11_MODULE(_tensogram, m) {
  namespace py = pybind11;
  m.doc() = "Tensogram N-tensor messages (wire format v3): encode, decode, files, streaming, validation.";
  tensogram::python::register_errors(m);
  tensogram::python::register_metadata(m);
  tensogram::python::register_functions(m);
  tensogram::python::register_file(m);
  tensogram::python::register_streaming(m);
  tensogram::python::register_converters(m);
  m.attr("WIRE_VERSION") = 3;
  m.attr("__version__") = TENSOGRAM_PYTHON_VERSION;
}
