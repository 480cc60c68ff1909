// Views of a file as numpy objects (docs/metatensor-python.md): flat
// tensors as ndarrays, struct tensors as structured ndarrays and blob
// tensors as BlobSequence, all over the file image without copying.
#include <Python.h>

#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include "mt_binding.hpp"
#include "tensogram/core/error.hpp"

namespace metatensor::python {

namespace {

// The numpy dtype of a BlobRef (§6.4): two little-endian U64.
py::dtype blob_ref_dtype() {
  py::list fields;
  fields.append(py::make_tuple("offset", "<u8"));
  fields.append(py::make_tuple("length", "<u8"));
  return py::dtype::from_args(fields);
}

// One String or List element of a blob tensor or a record field.
py::object blob_object(const opened_ptr& f, const type_layout& item, std::span<const std::byte> bytes) {
  if (item.type == value_type::string) {
    PyObject* text = PyUnicode_DecodeUTF8(reinterpret_cast<const char*>(bytes.data()),
                                          static_cast<Py_ssize_t>(bytes.size()), "strict");
    if (text == nullptr) {
      PyErr_Clear();
      throw_metatensor_error("MT_UTF8", "MT_UTF8: string element is not valid UTF-8");
    }
    return py::reinterpret_steal<py::object>(text);
  }
  const type_layout& elem = *item.elem;
  const std::uint64_t count = elem.size == 0 ? 0 : bytes.size() / elem.size;
  return view_array(f, bytes, type_dtype(elem), std::span<const std::uint64_t>(&count, 1));
}

// A blob tensor (§5.1), or a String/List field of every record of a struct
// tensor, as a lazy sequence: element i is read when asked for, in O(1)
// through its BlobRef; nothing is decoded up front.
class blob_sequence {
 public:
  // `View`: a blob_view, or the field_view of a String/List field.
  template <class View>
  blob_sequence(opened_ptr f, const View& v, const type_layout& item, std::uint64_t count)
      : f_(std::move(f)), src_(v), item_(&item), dims_(v.dims().begin(), v.dims().end()), count_(count) {}

  [[nodiscard]] std::uint64_t size() const noexcept { return count_; }
  [[nodiscard]] py::tuple shape() const { return py::cast(dims_); }
  [[nodiscard]] std::string kind() const { return item_->type == value_type::string ? "string" : "list"; }

  // A flat C-order index, negative from the end, or a tuple of one index
  // per dimension.
  [[nodiscard]] py::object get(const py::handle& key) const {
    const std::uint64_t i = flat_index(key);
    const auto bytes = std::visit(
        [&](const auto& v) {
          if constexpr (std::is_same_v<std::decay_t<decltype(v)>, blob_view>) {
            return v.bytes(i);
          } else {
            return v.blob(i);
          }
        },
        src_);
    return blob_object(f_, *item_, bytes);
  }

  // The BlobRefs of a blob tensor as a read-only (..., 2) uint64 array of
  // (offset, length); a record field's are in the structured array.
  [[nodiscard]] py::array refs() const {
    const auto* v = std::get_if<blob_view>(&src_);
    if (v == nullptr) {
      throw tensogram::invalid_arg_error(
          "refs() of a record field: read them from the structured array's field");
    }
    std::vector<std::uint64_t> shape = dims_;
    shape.push_back(2);
    return view_array(f_, v->index(), py::dtype("<u8"), shape);
  }

 private:
  [[nodiscard]] std::uint64_t flat_index(const py::handle& key) const {
    const auto& dims = dims_;
    if (py::isinstance<py::tuple>(key)) {
      const auto t = py::reinterpret_borrow<py::tuple>(key);
      if (t.size() != dims.size()) {
        throw py::index_error("MT_BAD_RANGE: " + std::to_string(t.size()) + " indices for a tensor of rank " +
                              std::to_string(dims.size()));
      }
      std::uint64_t flat = 0;
      for (std::size_t d = 0; d < dims.size(); ++d) flat = flat * dims[d] + wrap(t[d], dims[d], d);
      return flat;
    }
    return wrap(key, count_, 0);
  }

  static std::uint64_t wrap(const py::handle& index, std::uint64_t n, std::size_t axis) {
    if (!PyIndex_Check(index.ptr())) throw py::type_error("BlobSequence indices must be integers");
    const auto i = index.cast<long long>();
    const long long size = static_cast<long long>(n);
    if (i < -size || i >= size) {
      throw py::index_error("MT_BAD_RANGE: index " + std::to_string(i) + " is out of bounds for axis " +
                            std::to_string(axis) + " with size " + std::to_string(n));
    }
    return static_cast<std::uint64_t>(i < 0 ? i + size : i);
  }

  opened_ptr f_;
  std::variant<blob_view, field_view> src_;
  const type_layout* item_;
  std::vector<std::uint64_t> dims_;
  std::uint64_t count_;
};

py::object bfloat16_dtype() {
  try {
    return py::module_::import("ml_dtypes").attr("bfloat16");
  } catch (const py::error_already_set&) {
    return py::dtype("<u2");  // the raw bits, as the tensogram module does without ml_dtypes
  }
}

}  // namespace

// The numpy dtype of one record field or List element, fixed-array dims
// included as a numpy sub-array shape.
py::dtype type_dtype(const type_layout& t) {
  py::dtype element = [&] {
    switch (t.type) {
      case value_type::scalar: return numpy_dtype(t.scalar);
      case value_type::record: return record_dtype(*t.record);
      case value_type::string:
      case value_type::list: break;
    }
    return blob_ref_dtype();
  }();
  if (t.shape.empty()) return element;
  py::tuple shape(t.shape.size());
  for (std::size_t i = 0; i < t.shape.size(); ++i) shape[i] = py::int_(t.shape[i]);
  return py::dtype::from_args(py::make_tuple(element, shape));
}

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

py::dtype record_dtype(const record_layout& record) {
  py::list names;
  py::list formats;
  py::list offsets;
  for (const auto& field : record.fields) {
    names.append(field.name);
    formats.append(type_dtype(field.type));
    offsets.append(field.offset);
  }
  py::dict spec;
  spec["names"] = names;
  spec["formats"] = formats;
  spec["offsets"] = offsets;
  spec["itemsize"] = record.size;
  return py::dtype::from_args(spec);
}

py::array view_array(const opened_ptr& f, std::span<const std::byte> bytes, const py::dtype& dt,
                     std::span<const std::uint64_t> shape) {
  std::vector<py::ssize_t> dims(shape.begin(), shape.end());
  // The base owns a reference to the opened file: the image outlives the
  // array even when the File is closed first.
  py::capsule owner(new opened_ptr(f), [](void* p) { delete static_cast<opened_ptr*>(p); });
  py::array out(dt, dims, {}, bytes.data(), owner);
  if (!f->writable) out.attr("flags").attr("writeable") = false;  // the file is mapped read-only (§9)
  return out;
}

template <class File>
py::object tensor_of(const opened_ptr& f, const File& mt, std::string_view name);

py::object tensor_object(const opened_ptr& f, std::string_view name) {
  if (!f->mt) {
    const auto* t = f->plain->find(name);
    if (t == nullptr) throw_not_found(name);
    return view_array(f, t->bytes(), numpy_dtype(t->type()), t->shape());
  }
  if (f->migrated) return tensor_of(f, *f->migrated, name);
  return tensor_of(f, *f->mt, name);
}

// A tensor of a file (`metatensor::file`) or of a file read through a
// reader schema (`metatensor::migrated_file`, whose views may be converted
// copies that `f` keeps alive): the two share these view accessors.
template <class File>
py::object tensor_of(const opened_ptr& f, const File& mt, std::string_view name) {
  if (!mt.contains(name)) throw_not_found(name);
  switch (mt.layout(name).kind) {
    case tensor_kind::flat: {
      const auto v = mt.flat(name);
      return view_array(f, v.bytes(), numpy_dtype(v.type()), v.dims());
    }
    case tensor_kind::record: {
      const auto v = mt.records(name);
      return view_array(f, v.bytes(), record_dtype(v.record()), v.dims());
    }
    case tensor_kind::blob: break;
  }
  const auto v = mt.blobs(name);
  return py::cast(blob_sequence(f, v, v.item(), v.size()));
}

py::object blob_field_object(const opened_ptr& f, std::string_view name, std::string_view path) {
  if (!f->mt || !(f->migrated ? f->migrated->contains(name) : f->mt->contains(name))) throw_not_found(name);
  // ValueError for a flat/blob tensor or unknown field.
  const auto field = f->migrated ? f->migrated->field(name, path) : f->mt->records(name).field(path);
  if (field.type().type != value_type::string && field.type().type != value_type::list) {
    throw tensogram::invalid_arg_error(
        "field \"" + std::string(path) + "\" of \"" + std::string(name) +
        "\" is not a String or List field: read it from get_tensor's structured array");
  }
  return py::cast(blob_sequence(f, field, field.type(), field.count()));
}

void register_arrays(py::module_& m) {
  py::class_<blob_sequence>(
      m, "BlobSequence", "A blob tensor (strings or ragged lists): element i is read in O(1) when indexed.")
      .def("__len__", &blob_sequence::size)
      .def(
          "__getitem__", &blob_sequence::get, py::arg("index"),
          "Element at a flat C-order index (negative from the end) or a tuple of indices: str for strings, a "
          "read-only ndarray over the file for lists.")
      .def_property_readonly("shape", &blob_sequence::shape, "The logical dims.")
      .def_property_readonly("kind", &blob_sequence::kind, "\"string\" or \"list\".")
      .def("refs", &blob_sequence::refs,
           "The BlobRefs (offset, length in the heap) as a read-only uint64 array.");
}

}  // namespace metatensor::python
