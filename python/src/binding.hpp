// Shared pieces of the Python module `tensogram` (spec 04 Part B): value
// conversion, numpy arrays, the wrapped metadata and descriptor types and the
// registration functions of each part of the module.
//
// Conventions of every entry point:
// * Python objects are converted to library types with the GIL held, then
//   the GIL is released for the library call (encode, decode, file I/O), so
//   Python threads scale across cores (spec 04 B.1 "long operations release
//   the GIL").
// * Library errors become the exception types of spec 04 B.7 (errors.cpp).
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tensogram/cbor/value.hpp"
#include "tensogram/core/buffer.hpp"
#include "tensogram/core/memory.hpp"
#include "tensogram/message/decode.hpp"
#include "tensogram/message/descriptor.hpp"
#include "tensogram/message/encode.hpp"
#include "tensogram/message/metadata.hpp"
#include "tensogram/message/metadata_view.hpp"
#include "tensogram/message/options.hpp"

namespace tensogram::python {

namespace py = pybind11;

// ---- errors (errors.cpp) ----------------------------------------------------

/// Creates IntegrityError, MissingHashError, HashMismatchError and installs
/// the translator of library exceptions.
void register_errors(py::module_& m);

/// PyO3's conversion error (spec 08 §1.12): `argument '<param>': '<qualname>'
/// object is not an instance of '<type>'` (`'None' is not an instance of …`
/// for None); without the `argument` prefix when `param` is empty.
[[noreturn]] void raise_not_instance(py::handle obj, std::string_view param, std::string_view type);

/// `UserWarning(text)` attributed to the Python line that called into the
/// module (stacklevel 1, spec 08 §1.11), looking through the thin wrapper of
/// `tensogram/_arguments.py` that public calls pass.
void warn_caller(const std::string& text);

/// `True`/`False` or `numpy.bool_`, nothing else (spec 08 §1.12: PyO3 rejects
/// `0`, `1` and `None` for a `bool` parameter with `raise_not_instance`).
[[nodiscard]] bool strict_bool_arg(py::handle value, std::string_view param);

/// A string literal usable as a template argument (the parameter name of a
/// `strict_bool`).
template <std::size_t N>
struct param_name {
  char text[N] = {};
  constexpr param_name(const char (&s)[N]) {  // NOLINT(google-explicit-constructor): literal wrapper
    for (std::size_t i = 0; i < N; ++i) text[i] = s[i];
  }
};

/// A `bool` parameter converted by `strict_bool_arg`, whose error names the
/// parameter: declare `strict_bool<"verify_hash"> verify_hash` in a binding
/// lambda where a plain `bool` would let pybind11 accept `0`, `1` and `None`.
template <param_name Name>
struct strict_bool {
  bool value = false;
  constexpr operator bool() const noexcept { return value; }  // NOLINT(google-explicit-constructor)
};

// ---- values (values.cpp) ----------------------------------------------------

/// Python → CBOR per spec 04 B.2: str, bool, int (64-bit), float, None, dict,
/// list (numpy scalars are taken by value). Anything else is a ValueError
/// "cannot convert <type> to CBOR"; `where` names the place for the message.
[[nodiscard]] cbor::value to_cbor(py::handle obj, std::string_view where);
/// CBOR → Python per spec 04 B.6: text → str, integer → int, float, bool,
/// null → None, array → list, map → dict, bytes → bytes (tags: content).
[[nodiscard]] py::object to_python(const cbor::value& v);

/// The metadata dict of `encode`/`append`/`StreamingEncoder` (spec 04 B.2).
[[nodiscard]] global_metadata metadata_from_dict(py::handle dict);
/// A descriptor dict (spec 04 B.3); warns about application-looking keys.
[[nodiscard]] data_object_descriptor descriptor_from_dict(py::handle dict);
/// The encode options shared by `encode`, `append` and `StreamingEncoder`.
[[nodiscard]] encode_options make_encode_options(const py::object& hash, std::uint32_t threads,
                                                 bool allow_nan, bool allow_inf,
                                                 const py::object& nan_mask_method,
                                                 const py::object& pos_inf_mask_method,
                                                 const py::object& neg_inf_mask_method,
                                                 const py::object& small_mask_threshold_bytes,
                                                 const py::object& aggregate_hash);
[[nodiscard]] decode_options make_decode_options(bool native_byte_order, std::uint32_t threads,
                                                 bool restore_non_finite, bool verify_hash);
/// `[(start, count), ...]` element ranges of `decode_range`.
[[nodiscard]] std::vector<std::pair<std::uint64_t, std::uint64_t>> ranges_from_list(py::handle ranges);

// ---- bytes and arrays (arrays.cpp) ------------------------------------------

/// A read-only byte run borrowed from a Python object through the buffer
/// protocol. Holding it keeps the export alive (a bytearray cannot be
/// resized meanwhile); it must be destroyed with the GIL held.
class borrowed_bytes {
 public:
  /// Any C-contiguous buffer; `what` names the argument in errors.
  borrowed_bytes(py::handle obj, std::string_view what);
  [[nodiscard]] std::span<const std::byte> bytes() const noexcept { return bytes_; }
  /// A non-owning library buffer over the bytes.
  [[nodiscard]] tensogram::buffer as_buffer() const noexcept { return tensogram::buffer::borrowed(bytes_); }
  /// The object decoded arrays that view these bytes keep alive as their
  /// `base`: the object itself when it is immutable `bytes`, else a
  /// memoryview that holds the buffer export.
  [[nodiscard]] py::object view_owner() const;

 private:
  /// Releases a buffer export (PyBuffer_Release) and frees its struct.
  struct export_release {
    void operator()(Py_buffer* view) const noexcept;
  };
  py::object obj_;
  std::unique_ptr<Py_buffer, export_release> export_;
  std::span<const std::byte> bytes_;
};

/// Which call a payload comes from: its accepted forms and error texts
/// differ (spec 08 §1.5).
enum class payload_kind {
  array_or_bytes,         ///< encode, append, write_object
  pre_encoded,            ///< encode_pre_encoded
  streaming_pre_encoded,  ///< StreamingEncoder.write_object_pre_encoded
};

/// The payload of one `(descriptor, data)` pair of encode (spec 04 B.4):
/// a C-contiguous numpy array or any bytes-like object (pre-encoded: bytes
/// or a 1-D uint8 array). Sets the descriptor's byte order from a
/// byte-swapped array when the dict gave none.
class object_payload {
 public:
  object_payload(py::handle data, data_object_descriptor& descriptor, bool byte_order_given,
                 payload_kind kind);
  [[nodiscard]] std::span<const std::byte> bytes() const noexcept { return bytes_.bytes(); }

 private:
  borrowed_bytes bytes_;
};

/// The `(descriptor, data)` pairs of encode/append/write_object (spec 04
/// B.4), parsed with the GIL held; the payloads stay borrowed from the
/// caller's objects until this is destroyed (with the GIL held).
class encode_inputs {
 public:
  /// `pairs`: a list of 2-tuples (B.4); `pre_encoded` refuses numpy arrays.
  encode_inputs(py::handle pairs, bool pre_encoded);
  [[nodiscard]] std::vector<object_input> objects() const;

 private:
  std::vector<data_object_descriptor> descriptors_;
  std::vector<object_payload> payloads_;
};

/// A Python bytes object with a copy of `v`.
[[nodiscard]] py::bytes to_bytes(std::span<const std::byte> v);
/// Encodes into a vector whose capacity is reserved (and advised) up front,
/// so a message about the size of its input is written into huge pages.
[[nodiscard]] std::vector<std::byte> encode_message(const global_metadata& metadata,
                                                    std::span<const object_input> objects,
                                                    const encode_options& options, bool pre_encoded);
/// A non-negative Python index as size_t (ValueError naming `what`).
[[nodiscard]] std::size_t checked_index(long long index, const char* what);

/// Where the bytes of a decoded message came from, so that objects decoded
/// as views of them become arrays whose `base` keeps that memory alive.
struct message_source {
  std::span<const std::byte> bytes;  ///< empty: every view is of library memory
  py::object owner;                  ///< base for arrays viewing `bytes`
};

/// The numpy dtype of decoded elements (spec 04 B.4): simple_packing →
/// float64, bfloat16 → ml_dtypes.bfloat16 when importable else uint16,
/// bitmask → uint8. Always in native byte order, also for
/// `native_byte_order=False`, whose wire-order bytes are then reinterpreted
/// as native (spec 08 §5).
[[nodiscard]] py::dtype numpy_dtype(tensogram::dtype t, bool simple_packing);

/// An ndarray over decoded bytes without copying them. Views of the message
/// are read-only with `source.owner` as base; library-owned results are
/// writable with a capsule owning the library buffer as base.
[[nodiscard]] py::array make_array(const tensogram::buffer& data, py::dtype dtype,
                                   std::vector<py::ssize_t> shape, const message_source& source);
/// The array of a decoded object, shaped like its descriptor (bitmask: flat
/// packed bytes).
[[nodiscard]] py::array object_array(const decoded_object& object, const message_source& source);
/// One 1-D array per range result of `decode_range`, or one joined array.
[[nodiscard]] py::object range_arrays(std::vector<tensogram::buffer> parts, const data_object_descriptor& d,
                                      bool join);

// ---- Metadata and DataObjectDescriptor (metadata.cpp) ---------------------

/// `tensogram.Metadata`: a read-only view of one message's metadata.
struct metadata_view {
  tensogram::metadata meta;
};
/// `tensogram.DataObjectDescriptor`.
struct descriptor_view {
  data_object_descriptor descriptor;
};
void register_metadata(py::module_& m);

/// `Message(metadata, objects)` with `objects` a list of
/// `(DataObjectDescriptor, ndarray)` pairs.
[[nodiscard]] py::object make_message(const message& msg, const message_source& source);

/// `<Name>(position=<p>, remaining=<r>)`, the repr of the message iterators (spec 08 §2).
[[nodiscard]] inline std::string iterator_repr(std::string_view name, std::size_t position,
                                               std::size_t remaining) {
  return std::string(name) + "(position=" + std::to_string(position) +
         ", remaining=" + std::to_string(remaining) + ")";
}

// ---- the rest of the module -------------------------------------------------

void register_functions(py::module_& m);
void register_file(py::module_& m);
void register_streaming(py::module_& m);
void register_converters(py::module_& m);

}  // namespace tensogram::python

namespace tensogram::python {

/// The `threads` parameter (u32 in the reference): converted with PyO3's
/// errors (spec 08 §1.6) — TypeError for a non-integer, OverflowError for a
/// value outside u32 — rather than pybind11's "incompatible arguments".
struct threads_arg {
  std::uint32_t value = 0;
  operator std::uint32_t() const noexcept { return value; }  // NOLINT(google-explicit-constructor)
};

}  // namespace tensogram::python

namespace pybind11::detail {

template <>
struct type_caster<tensogram::python::threads_arg> {
  PYBIND11_TYPE_CASTER(tensogram::python::threads_arg, const_name("int"));

  bool load(handle src, bool /*convert*/) {
    if (PyFloat_Check(src.ptr()) || PyIndex_Check(src.ptr()) == 0) {
      throw type_error(std::string("argument 'threads': '") + Py_TYPE(src.ptr())->tp_name +
                       "' object cannot be interpreted as an integer");
    }
    const object index = reinterpret_steal<object>(PyNumber_Index(src.ptr()));
    if (!index) throw error_already_set();
    int overflow = 0;
    const long long v = PyLong_AsLongLongAndOverflow(index.ptr(), &overflow);
    if (overflow != 0) {
      PyErr_SetString(PyExc_OverflowError, "Python int too large to convert to C long");
      throw error_already_set();
    }
    if (v < 0 || v > 0xffffffffLL) {
      PyErr_SetString(PyExc_OverflowError, "out of range integral type conversion attempted");
      throw error_already_set();
    }
    value.value = static_cast<std::uint32_t>(v);
    return true;
  }

  static handle cast(tensogram::python::threads_arg v, return_value_policy /*policy*/, handle /*parent*/) {
    return PyLong_FromUnsignedLong(v.value);
  }
};

}  // namespace pybind11::detail

namespace pybind11::detail {

/// Loads `tensogram::python::strict_bool`: a wrong type raises the reference's
/// TypeError at once (the binding has a single overload, so no other overload
/// is skipped by throwing here).
template <tensogram::python::param_name Name>
struct type_caster<tensogram::python::strict_bool<Name>> {
  PYBIND11_TYPE_CASTER(tensogram::python::strict_bool<Name>, const_name("bool"));
  bool load(handle src, bool /*convert*/) {
    value.value = tensogram::python::strict_bool_arg(src, Name.text);
    return true;
  }
  static handle cast(tensogram::python::strict_bool<Name> v, return_value_policy /*policy*/,
                     handle /*parent*/) {
    return pybind11::bool_(v.value).release();
  }
};

}  // namespace pybind11::detail
