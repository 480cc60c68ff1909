// Shared pieces of the extension `tensogram._metatensor`, the C++ half of
// the Python module `tensogram.metatensor` (docs/metatensor-python.md).
//
// The binding is thin: libmetatensor opens, validates and lays out files;
// this layer only turns its views into numpy arrays over the same memory
// and its errors into Python exceptions. Conventions:
// * an opened file is an `opened` shared by the `File` object and every
//   array made from it (their numpy `base` holds a reference), so closing
//   the file never leaves an array pointing at unmapped memory;
// * the GIL is released while a file is mapped, validated or written.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <pybind11/stl/filesystem.h>

#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "metatensor/file.hpp"
#include "metatensor/migrate.hpp"
#include "metatensor/safetensors.hpp"

namespace metatensor::python {

namespace py = pybind11;

/// A file as opened: a metatensor file, or a plain safetensors file (one
/// without `metatensor.version`, which safetensors programs also read).
struct opened {
  /// Keeps the image alive when the library's buffer only borrows it (a
  /// copy-on-write map, a remote image); destroyed last, after the views.
  std::shared_ptr<const void> owner;
  /// Arrays over a private copy-on-write or remote image may be written
  /// (what PyTorch tensors need); over a read-only map they may not.
  bool writable = false;
  std::optional<metatensor::file> mt;
  std::optional<safetensors::file> plain;
  /// Set when opened through a reader schema (`safe_open(..., schema=)`):
  /// tensors are then presented in the reader's types (mt_migrate.cpp).
  std::optional<metatensor::migrated_file> migrated;

  [[nodiscard]] const safetensors::file& base() const noexcept { return mt ? mt->base() : *plain; }
};
using opened_ptr = std::shared_ptr<const opened>;

/// A metatensor file when the header says so, otherwise a plain safetensors
/// file, validated from the header only (mt_module.cpp).
[[nodiscard]] std::shared_ptr<opened> open_image(const tensogram::buffer& image);

/// An opened file handed from the other sources (mt_sources.cpp) to the
/// Python `File` (`File(handle)`).
struct opened_handle {
  opened_ptr f;
};

// ---- errors (mt_errors.cpp) -------------------------------------------------

/// Creates MetatensorError and TensorNotFoundError and installs the
/// module-local translator of library exceptions.
void register_errors(py::module_& m);
/// Raises TensorNotFoundError (a KeyError) for `name`.
[[noreturn]] void throw_not_found(std::string_view name);
/// Raises MetatensorError with `code` (a spec error name, or empty) and text.
[[noreturn]] void throw_metatensor_error(std::string_view code, const std::string& text);

// ---- arrays (mt_arrays.cpp) -------------------------------------------------

/// The numpy dtype of a safetensors dtype: BF16 as ml_dtypes.bfloat16 when
/// importable else uint16 bits, the F8 types as uint8 bytes, C64 as
/// complex64. Sub-byte dtypes have none (ValueError).
[[nodiscard]] py::dtype numpy_dtype(safetensors::dtype t);
/// A read-only numpy array over `bytes` of `f`, C order, `f` as its base.
[[nodiscard]] py::array view_array(const opened_ptr& f, std::span<const std::byte> bytes, const py::dtype& dt,
                                   std::span<const std::uint64_t> shape);
/// The tensor `name` as numpy: flat → ndarray, struct → structured ndarray,
/// blob → BlobSequence.
[[nodiscard]] py::object tensor_object(const opened_ptr& f, std::string_view name);
/// The String or List field `path` of every record of struct tensor `name`
/// as a BlobSequence (dims = the tensor's dims ++ the field's fixed dims).
[[nodiscard]] py::object blob_field_object(const opened_ptr& f, std::string_view name, std::string_view path);
/// The numpy structured dtype of a record (blob fields as (offset, length)).
[[nodiscard]] py::dtype record_dtype(const record_layout& record);
void register_arrays(py::module_& m);

// ---- schema migration (mt_migrate.cpp) -------------------------------------

/// Opens `path` and presents it through the reader schema `schema_json`
/// (JSON text); MetatensorError MT_SCHEMA_INCOMPATIBLE for an incompatible
/// pair, and for a plain safetensors file (it has no schema to migrate from).
[[nodiscard]] opened_ptr open_migrated(const std::filesystem::path& path, std::string_view schema_json);

// ---- writing (mt_writer.cpp) ------------------------------------------------

/// The safetensors dtype of a numpy dtype (TypeError naming tensor `name`
/// when safetensors has none).
[[nodiscard]] safetensors::dtype dtype_of(const py::dtype& dt, const std::string& name);
void register_writer(py::module_& m);

// ---- records/blobs writer, validate, diff (mt_tools.cpp) -------------------

/// The numpy dtype of a record field or List element (fixed-array dims as a
/// sub-array shape; String/List as their BlobRef).
[[nodiscard]] py::dtype type_dtype(const type_layout& t);
void register_tools(py::module_& m);
// ---- other sources: copy-on-write maps, remote files (mt_sources.cpp) -------

void register_sources(py::module_& m);

}  // namespace metatensor::python
