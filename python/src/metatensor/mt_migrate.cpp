// Opening a file through a reader schema for `safe_open(..., schema=...)`
// (docs/metatensor-python.md, "Reading with a newer schema"): the library's
// `migrated_file` does the work; the arrays are made by mt_arrays.cpp from
// its views, which keep converted copies alive through the `opened`.
#include <string>

#include "metatensor/migrate.hpp"
#include "mt_binding.hpp"
#include "tensogram/core/buffer.hpp"

namespace metatensor::python {

opened_ptr open_migrated(const std::filesystem::path& path, std::string_view schema_json) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec) && !ec) {
    PyErr_SetString(PyExc_FileNotFoundError, ("No such file or directory: '" + path.string() + "'").c_str());
    throw py::error_already_set();
  }
  const std::string text(schema_json);  // copied: read without the GIL below
  py::gil_scoped_release unlocked;      // compiling, mapping and validating touch no Python object
  const compiled_schema reader = compile_schema_text(text);  // its errors name the schema node
  try {
    auto out = std::make_shared<opened>();
    out->mt = metatensor::file::from_buffer(tensogram::buffer::map_file(path));
    out->migrated = migrated_file::resolve(*out->mt, reader);
    return out;
  } catch (const metatensor::error& e) {
    throw e.with_context(path.string());
  }
}

}  // namespace metatensor::python
