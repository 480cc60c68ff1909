// Views of a file as numpy objects: flat tensors as ndarrays over the file
// image, without copying.
#include <Python.h>

#include <string>
#include <vector>

#include "mt_binding.hpp"
#include "tensogram/core/error.hpp"

namespace metatensor::python {

namespace {

py::object bfloat16_dtype() {
  try {
    return py::module_::import("ml_dtypes").attr("bfloat16");
  } catch (const py::error_already_set&) {
    return py::dtype("<u2");  // the raw bits, as the tensogram module does without ml_dtypes
  }
}

}  // namespace

py::dtype numpy_dtype(safetensors::dtype t) {
  using safetensors::dtype;
  switch (t) {
    case dtype::boolean: return py::dtype("?");
    case dtype::u8:
    case dtype::f8_e4m3:
    case dtype::f8_e5m2:
    case dtype::f8_e8m0:
    case dtype::f8_e4m3fnuz:
    case dtype::f8_e5m2fnuz: return py::dtype("u1");
    case dtype::i8: return py::dtype("i1");
    case dtype::u16: return py::dtype("<u2");
    case dtype::i16: return py::dtype("<i2");
    case dtype::u32: return py::dtype("<u4");
    case dtype::i32: return py::dtype("<i4");
    case dtype::u64: return py::dtype("<u8");
    case dtype::i64: return py::dtype("<i8");
    case dtype::f16: return py::dtype("<f2");
    case dtype::bf16: return py::dtype::from_args(bfloat16_dtype());
    case dtype::f32: return py::dtype("<f4");
    case dtype::f64: return py::dtype("<f8");
    case dtype::c64: return py::dtype("<c8");
    case dtype::f4:
    case dtype::f6_e2m3:
    case dtype::f6_e3m2: break;
  }
  throw tensogram::invalid_arg_error("dtype " + std::string(safetensors::dtype_name(t)) +
                                     " packs elements in less than a byte and has no numpy equivalent");
}

py::array view_array(const opened_ptr& f, std::span<const std::byte> bytes, const py::dtype& dt,
                     std::span<const std::uint64_t> shape) {
  std::vector<py::ssize_t> dims(shape.begin(), shape.end());
  // The base owns a reference to the opened file: the image outlives the
  // array even when the File is closed first.
  py::capsule owner(new opened_ptr(f), [](void* p) { delete static_cast<opened_ptr*>(p); });
  py::array out(dt, dims, {}, bytes.data(), owner);
  out.attr("flags").attr("writeable") = false;  // the file is mapped read-only (§9)
  return out;
}

py::object tensor_object(const opened_ptr& f, std::string_view name) {
  if (!f->mt) {
    const auto* t = f->plain->find(name);
    if (t == nullptr) throw_not_found(name);
    return view_array(f, t->bytes(), numpy_dtype(t->type()), t->shape());
  }
  const metatensor::file& mt = *f->mt;
  if (!mt.contains(name)) throw_not_found(name);
  const auto v = mt.flat(name);  // struct and blob tensors: ValueError naming the kind
  return view_array(f, v.bytes(), numpy_dtype(v.type()), v.dims());
}

}  // namespace metatensor::python
