// Bytes in, numpy arrays out (spec 04 B.4), without copies where the data
// allows: payloads to encode are read in place from the caller's array or
// bytes, and decoded arrays wrap the library's result buffer (or view the
// caller's message) instead of being copied into numpy-owned memory.
#include <cstring>
#include <string>

#include "binding.hpp"
#include "tensogram/core/byte_order.hpp"
#include "tensogram/core/dtype.hpp"

namespace tensogram::python {

void borrowed_bytes::export_release::operator()(Py_buffer* view) const noexcept {
  PyBuffer_Release(view);
  std::default_delete<Py_buffer>()(view);
}

borrowed_bytes::borrowed_bytes(py::handle obj, std::string_view what)
    : obj_(py::reinterpret_borrow<py::object>(obj)) {
  if (py::isinstance<py::array>(obj)) {
    // numpy arrays are read through their data pointer: the buffer protocol
    // refuses dtypes it has no format code for (ml_dtypes.bfloat16).
    const auto arr = py::reinterpret_borrow<py::array>(obj);
    if ((arr.flags() & py::array::c_style) == 0) {
      throw py::value_error(std::string(what) +
                            " must be a C-contiguous array (use numpy.ascontiguousarray(a) first)");
    }
    bytes_ = {static_cast<const std::byte*>(arr.data()), static_cast<std::size_t>(arr.nbytes())};
    return;
  }
  // PyO3's text for a `bytes | bytearray` parameter (spec 08 §1.7); this
  // module takes any C-contiguous buffer besides.
  if (PyUnicode_Check(obj.ptr())) raise_not_instance(obj, what, "bytes | bytearray");
  auto view = std::make_unique<Py_buffer>();
  if (PyObject_GetBuffer(obj.ptr(), view.get(), PyBUF_C_CONTIGUOUS) != 0) {
    PyErr_Clear();  // replaced by the argument's conversion error
    raise_not_instance(obj, what, "bytes | bytearray");
  }
  bytes_ = {static_cast<const std::byte*>(view->buf), static_cast<std::size_t>(view->len)};
  export_.reset(view.release());
}

py::object borrowed_bytes::view_owner() const {
  // An immutable bytes object is its own keeper; anything else is pinned
  // through a memoryview, whose export stops a bytearray from being resized
  // under the array.
  if (PyBytes_CheckExact(obj_.ptr()) || py::isinstance<py::array>(obj_)) return obj_;
  return py::reinterpret_steal<py::object>(PyMemoryView_FromObject(obj_.ptr()));
}

namespace {

// The numpy name of a descriptor dtype; bitmask objects decode to their
// packed bytes.
const char* numpy_name(tensogram::dtype t) {
  switch (t) {
    case dtype::float16: return "float16";
    case dtype::bfloat16: return "uint16";  // unless ml_dtypes is present
    case dtype::float32: return "float32";
    case dtype::float64: return "float64";
    case dtype::complex64: return "complex64";
    case dtype::complex128: return "complex128";
    case dtype::int8: return "int8";
    case dtype::int16: return "int16";
    case dtype::int32: return "int32";
    case dtype::int64: return "int64";
    case dtype::uint8: return "uint8";
    case dtype::uint16: return "uint16";
    case dtype::uint32: return "uint32";
    case dtype::uint64: return "uint64";
    case dtype::bitmask: return "uint8";
  }
  return "uint8";
}

py::object numpy_module() {
  return py::module_::import("numpy");
}

}  // namespace

namespace {

// Spec 08 §1.5: the texts of a payload the call cannot take, checked before
// the bytes are borrowed.
py::handle checked_payload(py::handle data, payload_kind kind) {
  const bool array = py::isinstance<py::array>(data);
  const bool byte_array =
      array && py::reinterpret_borrow<py::array>(data).ndim() == 1 &&
      py::str(py::reinterpret_borrow<py::array>(data).dtype().attr("name")).cast<std::string>() == "uint8";
  const bool buffer = !array && !PyUnicode_Check(data.ptr()) && PyObject_CheckBuffer(data.ptr()) != 0;
  switch (kind) {
    case payload_kind::array_or_bytes:
      if (!array && !buffer) throw py::value_error("data must be a numpy array or bytes");
      break;
    case payload_kind::pre_encoded:
      if (!byte_array && !buffer) {
        throw py::value_error("encode_pre_encoded requires bytes data (got " +
                              py::str(py::type::handle_of(data).attr("__name__")).cast<std::string>() +
                              ") — the payload must already be in its final wire form");
      }
      break;
    case payload_kind::streaming_pre_encoded:
      // PyO3's Vec<u8> extraction errors, unchanged (a TypeError).
      if (PyUnicode_Check(data.ptr())) throw py::type_error("Can't extract `str` to `Vec`");
      if (array && !byte_array) {
        const py::array a = py::reinterpret_borrow<py::array>(data);
        const std::string elem = a.size() > 0 ? Py_TYPE(a.attr("flat")[py::int_(0)].ptr())->tp_name : "int";
        throw py::type_error("'" + elem + "' object cannot be interpreted as an integer");
      }
      if (!byte_array && !buffer) raise_not_instance(data, "", "Sequence");
      break;
  }
  return data;
}

}  // namespace

object_payload::object_payload(py::handle data, data_object_descriptor& descriptor, bool byte_order_given,
                               payload_kind kind)
    : bytes_(checked_payload(data, kind), "data") {
  if (!py::isinstance<py::array>(data) || kind != payload_kind::array_or_bytes) return;
  const auto arr = py::reinterpret_borrow<py::array>(data);
  const py::dtype dt = arr.dtype();
  const std::string name = py::str(dt.attr("name"));
  const std::string wanted(dtype_name(descriptor.dtype));
  // The array's element type must be the descriptor's, except for the raw
  // forms spec 04 B.4 documents: uint8 bytes for anything, uint16 for the
  // 16-bit floats numpy may not know (bfloat16).
  const bool same = name == wanted || (descriptor.dtype == dtype::bfloat16 && name == "bfloat16");
  const bool raw =
      name == "uint8" ||
      (name == "uint16" && (descriptor.dtype == dtype::float16 || descriptor.dtype == dtype::bfloat16));
  if (!same && !raw) {
    throw py::value_error("data is a numpy " + name + " array but the descriptor's dtype is " + wanted +
                          " (convert with a.astype(numpy." + wanted + ") or pass raw bytes)");
  }
  // A byte-swapped array ('>f4' on x86) declares its own order unless the
  // descriptor states one: its bytes are then stored as they are.
  const char order = py::str(dt.attr("byteorder")).cast<std::string>().front();
  if (!byte_order_given && (order == '<' || order == '>')) {
    descriptor.byte_order = order == '<' ? byte_order::little : byte_order::big;
  }
}

py::dtype numpy_dtype(tensogram::dtype t, bool simple_packing) {
  const py::object np = numpy_module();
  py::object dt;
  if (simple_packing) {
    dt = np.attr("dtype")("float64");
  } else if (t == dtype::bfloat16) {
    try {
      dt = np.attr("dtype")(py::module_::import("ml_dtypes").attr("bfloat16"));
    } catch (const py::error_already_set&) {
      dt = np.attr("dtype")("uint16");
    }
  } else {
    dt = np.attr("dtype")(numpy_name(t));
  }
  return py::reinterpret_steal<py::dtype>(dt.release());
}

py::array make_array(const tensogram::buffer& data, py::dtype dtype, std::vector<py::ssize_t> shape,
                     const message_source& source) {
  const auto itemsize = static_cast<std::size_t>(dtype.itemsize());
  std::size_t count = 1;
  for (py::ssize_t s : shape) count *= static_cast<std::size_t>(s);
  if (count * itemsize != data.size()) {
    throw std::runtime_error("decoded object holds " + std::to_string(data.size()) + " bytes, expected " +
                             std::to_string(count) + " elements of " + std::to_string(itemsize) + " bytes");
  }
  if (data.empty()) return py::array(dtype, shape);
  if (!source.bytes.empty() && tensogram::buffer::borrowed(source.bytes).contains(data.bytes())) {
    // A view of the caller's message: read-only, so that writing into a
    // decoded array can never change the message it came from.
    py::array arr(dtype, shape, {}, data.data(), source.owner);
    arr.attr("flags").attr("writeable") = false;
    return arr;
  }
  // The library's result: the array takes a share of the buffer's ownership.
  auto holder = std::make_unique<tensogram::buffer>(data);
  const void* ptr = holder->data();
  const bool writable = holder->kind() == tensogram::buffer::ownership::owned;
  py::capsule base(holder.get(),
                   [](void* p) { std::unique_ptr<tensogram::buffer>(static_cast<tensogram::buffer*>(p)); });
  holder.release();
  py::array arr(dtype, shape, {}, ptr, base);
  // Owned buffers (decode results, slices of a message read from a file) are
  // memory only this array reaches, so it is writable as the reference's
  // copies are; a file mapping is not.
  if (!writable) arr.attr("flags").attr("writeable") = false;
  return arr;
}

void warn_reinterpreted(const data_object_descriptor& d) {
  if (!d.reinterpreted_as_float64()) return;
  const std::string text = d.compression + " compressed this " + std::string(dtype_name(d.dtype)) + " (" +
                           std::string(byte_order_name(d.effective_byte_order())) +
                           "-endian) object's bytes as reinterpreted float64: the decoded values are what "
                           "the reference decoder returns, not the original data";
  warn_caller(text);
}

py::array object_array(const decoded_object& object, const message_source& source) {
  const data_object_descriptor& d = object.descriptor();
  warn_reinterpreted(d);
  const bool packed = d.encoding == "simple_packing";
  py::dtype dt = numpy_dtype(d.dtype, packed);
  std::vector<py::ssize_t> shape;
  const std::size_t size = object.data_buffer().size();
  if (d.dtype == dtype::bitmask && !packed) {
    shape.push_back(static_cast<py::ssize_t>(size));
  } else {
    std::size_t count = 1;
    for (std::uint64_t s : d.shape) {
      shape.push_back(static_cast<py::ssize_t>(s));
      count *= static_cast<std::size_t>(s);
    }
    const auto itemsize = static_cast<std::size_t>(dt.itemsize());
    if (d.reinterpreted_as_float64() && count * itemsize != size) {
      // zfp decodes 8·N bytes whatever the dtype (spec 03 §3.3): the
      // reference decoder's bytes do not fill the shape, so they come back
      // flat, as elements of the dtype where they divide into them.
      if (size % itemsize != 0) dt = py::dtype("uint8");
      shape = {static_cast<py::ssize_t>(size / static_cast<std::size_t>(dt.itemsize()))};
    }
  }
  return make_array(object.data_buffer(), std::move(dt), std::move(shape), source);
}

py::object range_arrays(std::vector<tensogram::buffer> parts, const data_object_descriptor& d, bool join) {
  warn_reinterpreted(d);
  const bool packed = d.encoding == "simple_packing";
  py::dtype dt = numpy_dtype(d.dtype, packed);
  const auto itemsize = static_cast<std::size_t>(dt.itemsize());
  if (join) {
    std::size_t total = 0;
    for (const auto& p : parts) total += p.size();
    py::array out(dt, std::vector<py::ssize_t>{static_cast<py::ssize_t>(total / itemsize)});
    auto* dst = static_cast<std::byte*>(out.mutable_data());
    for (const auto& p : parts) {
      if (p.size() != 0) std::memcpy(dst, p.data(), p.size());
      dst += p.size();
    }
    return py::object(std::move(out));
  }
  py::list out;
  for (auto& p : parts) {
    const auto n = static_cast<py::ssize_t>(p.size() / itemsize);
    out.append(make_array(p, dt, {n}, message_source{}));
  }
  return py::object(std::move(out));
}

}  // namespace tensogram::python
