// Python values ⇄ CBOR values, and the argument dicts of spec 04 B.2/B.3.
#include <pybind11/stl.h>

#include <array>
#include <limits>
#include <string>

#include "binding.hpp"
#include "tensogram/core/byte_order.hpp"
#include "tensogram/core/dtype.hpp"
#include "tensogram/core/error.hpp"

namespace tensogram::python {

namespace {

std::string type_name(py::handle obj) {
  return py::str(py::type::handle_of(obj).attr("__name__"));
}

[[noreturn]] void value_error(const std::string& text) {
  throw py::value_error(text);
}

cbor::value int_to_cbor(py::handle obj, std::string_view where) {
  // Both int64 and uint64 ranges (CBOR holds either); beyond → ValueError.
  int overflow = 0;
  const long long v = PyLong_AsLongLongAndOverflow(obj.ptr(), &overflow);
  if (overflow == 0) {
    if (v == -1 && PyErr_Occurred() != nullptr) throw py::error_already_set();
    return cbor::value(static_cast<std::int64_t>(v));
  }
  if (overflow > 0) {
    const unsigned long long u = PyLong_AsUnsignedLongLong(obj.ptr());
    if (!PyErr_Occurred()) return cbor::value(static_cast<std::uint64_t>(u));
    PyErr_Clear();
  }
  value_error("integer " + std::string(py::str(obj)) + " in " + std::string(where) +
              " does not fit in 64 bits");
}

}  // namespace

cbor::value to_cbor(py::handle obj, std::string_view where) {
  if (obj.is_none()) return cbor::value(nullptr);
  if (PyBool_Check(obj.ptr())) return cbor::value(obj.ptr() == Py_True);
  if (PyLong_Check(obj.ptr())) return int_to_cbor(obj, where);
  if (PyFloat_Check(obj.ptr())) return cbor::value(PyFloat_AsDouble(obj.ptr()));
  if (PyUnicode_Check(obj.ptr())) return cbor::value(obj.cast<std::string>());
  if (PyDict_Check(obj.ptr())) {
    cbor::value out = cbor::value::make_map();
    cbor::map& entries = *out.as_map();
    for (const auto& [k, v] : obj.cast<py::dict>()) {
      const std::string key = PyUnicode_Check(k.ptr()) ? k.cast<std::string>() : std::string(py::repr(k));
      entries.push_back({to_cbor(k, where), to_cbor(v, std::string(where) + "." + key)});
    }
    return out;
  }
  if (PyList_Check(obj.ptr())) {
    cbor::array items;
    const py::list list = obj.cast<py::list>();
    items.reserve(list.size());
    for (py::handle item : list) items.push_back(to_cbor(item, where));
    return cbor::value(std::move(items));
  }
  // numpy scalars (np.int64, np.float32, np.bool_) are taken by value: they
  // arrive whenever metadata is computed with numpy.
  if (py::hasattr(obj, "dtype") && py::hasattr(obj, "item") && !py::isinstance<py::array>(obj)) {
    return to_cbor(obj.attr("item")(), where);
  }
  value_error("cannot convert " + type_name(obj) + " to CBOR (in " + std::string(where) + ")");
}

py::object to_python(const cbor::value& v) {
  switch (v.type()) {
    case cbor::value::kind::null: return py::none();
    case cbor::value::kind::boolean: return py::bool_(*v.as_bool());
    case cbor::value::kind::integer: {
      if (auto i = v.as_int64()) return py::int_(*i);
      if (auto u = v.as_uint64()) return py::int_(*u);
      value_error("metadata integer " + v.as_integer()->to_string() + " does not fit in 64 bits");
    }
    case cbor::value::kind::floating: return py::float_(*v.as_float());
    case cbor::value::kind::text: return py::str(*v.as_text());
    case cbor::value::kind::bytes: {
      const cbor::byte_string& b = *v.as_bytes();
      return py::bytes(reinterpret_cast<const char*>(b.data()), b.size());
    }
    case cbor::value::kind::array: {
      const cbor::array& a = *v.as_array();
      py::list out(a.size());
      for (std::size_t i = 0; i < a.size(); ++i) out[i] = to_python(a[i]);
      return out;
    }
    case cbor::value::kind::map: {
      py::dict out;
      for (const cbor::map_entry& e : *v.as_map()) out[to_python(e.key)] = to_python(e.val);
      return out;
    }
    case cbor::value::kind::tag: return to_python(v.as_tag()->content());
  }
  return py::none();
}

global_metadata metadata_from_dict(py::handle dict) {
  if (!PyDict_Check(dict.ptr())) {
    throw py::type_error("metadata must be a dict, not " + type_name(dict));
  }
  global_metadata g;
  const py::dict d = dict.cast<py::dict>();
  cbor::value free_form = cbor::value::make_map();
  bool has_explicit_extra = false;
  if (d.contains("_reserved_")) {
    value_error("'_reserved_' is managed by the library and must not be set by the caller");
  }
  if (d.contains("base")) {
    const py::handle base = d["base"];
    if (!PyList_Check(base.ptr())) value_error("'base' must be a list of dicts, not " + type_name(base));
    std::size_t i = 0;
    for (py::handle entry : base.cast<py::list>()) {
      if (!PyDict_Check(entry.ptr())) {
        value_error("base[" + std::to_string(i) + "] must be a dict, not " + type_name(entry));
      }
      if (entry.cast<py::dict>().contains("_reserved_")) {
        value_error("base[" + std::to_string(i) + "] contains '_reserved_', which is managed by the library");
      }
      g.base.push_back(to_cbor(entry, "base[" + std::to_string(i) + "]"));
      ++i;
    }
  }
  // "_extra_" wins over its alias "extra" (B.2).
  for (const char* key : {"_extra_", "extra"}) {
    if (!d.contains(key) || has_explicit_extra) continue;
    const py::handle extra = d[key];
    if (!PyDict_Check(extra.ptr())) value_error("'" + std::string(key) + "' must be a dict");
    g.extra = to_cbor(extra, key);
    has_explicit_extra = true;
  }
  for (const auto& [k, v] : d) {
    const std::string key = py::str(k);
    if (key == "base" || key == "_extra_" || key == "extra") continue;
    if (!PyUnicode_Check(k.ptr())) value_error("metadata keys must be str, not " + type_name(k));
    free_form.set(key, to_cbor(v, key));
  }
  for (const cbor::map_entry& e : *free_form.as_map()) {
    const std::string& k = *e.key.as_text();
    if (!g.extra.contains(k)) g.extra.set(k, e.val);
  }
  return g;
}

namespace {

std::vector<std::uint64_t> uint_list(py::handle obj, const char* key) {
  if (!PyList_Check(obj.ptr()) && !PyTuple_Check(obj.ptr())) {
    value_error(std::string("descriptor '") + key + "' must be a list of ints, not " + type_name(obj));
  }
  std::vector<std::uint64_t> out;
  for (py::handle item : obj) {
    if (PyBool_Check(item.ptr()) || !PyIndex_Check(item.ptr())) {
      value_error(std::string("descriptor '") + key + "' must hold ints, found " + type_name(item));
    }
    const py::int_ i = py::reinterpret_steal<py::int_>(PyNumber_Index(item.ptr()));
    if (PyObject_RichCompareBool(i.ptr(), py::int_(0).ptr(), Py_LT) == 1) {
      value_error(std::string("descriptor '") + key + "' holds a negative value " +
                  std::string(py::str(item)));
    }
    out.push_back(i.cast<std::uint64_t>());
  }
  return out;
}

std::string text_field(py::handle obj, const char* key) {
  if (!PyUnicode_Check(obj.ptr())) {
    value_error(std::string("descriptor '") + key + "' must be a str, not " + type_name(obj));
  }
  return obj.cast<std::string>();
}

// Keys that describe the data rather than its encoding (B.3): they belong in
// base[i], where tools and the xarray engine look for them.
constexpr std::array<std::string_view, 11> k_application_keys = {
    "name",      "param", "shortName", "long_name", "description", "units",
    "dim_names", "mars",  "cf",        "product",   "instrument"};

}  // namespace

data_object_descriptor descriptor_from_dict(py::handle dict) {
  if (!PyDict_Check(dict.ptr())) throw py::type_error("descriptor must be a dict, not " + type_name(dict));
  const py::dict d = dict.cast<py::dict>();
  for (const char* key : {"type", "shape", "dtype"}) {
    if (!d.contains(key)) value_error(std::string("descriptor is missing the required key '") + key + "'");
  }
  data_object_descriptor desc;
  desc.type = text_field(d["type"], "type");
  desc.shape = uint_list(d["shape"], "shape");
  desc.ndim = desc.shape.size();
  const std::string dtype_text = text_field(d["dtype"], "dtype");
  const auto dt = parse_dtype(dtype_text);
  if (!dt) value_error("unknown dtype: " + dtype_text);
  desc.dtype = *dt;
  desc.strides = d.contains("strides") ? uint_list(d["strides"], "strides") : contiguous_strides(desc.shape);
  if (d.contains("byte_order")) {
    const std::string order = text_field(d["byte_order"], "byte_order");
    const auto o = parse_byte_order(order);
    if (!o) value_error("byte_order must be 'little' or 'big', not '" + order + "'");
    desc.byte_order = *o;
  } else {
    desc.byte_order = native_byte_order();
  }
  for (const char* key : {"encoding", "filter", "compression"}) {
    if (!d.contains(key)) continue;
    std::string text = text_field(d[key], key);
    if (std::string_view(key) == "encoding") desc.encoding = std::move(text);
    if (std::string_view(key) == "filter") desc.filter = std::move(text);
    if (std::string_view(key) == "compression") desc.compression = std::move(text);
  }
  std::string app_keys;
  for (const auto& [k, v] : d) {
    if (!PyUnicode_Check(k.ptr())) value_error("descriptor keys must be str, not " + type_name(k));
    const std::string key = k.cast<std::string>();
    if (key == "type" || key == "shape" || key == "dtype" || key == "strides" || key == "byte_order" ||
        key == "encoding" || key == "filter" || key == "compression" || key == "ndim" || key == "hash") {
      continue;
    }
    for (std::string_view app : k_application_keys) {
      if (key == app) app_keys += (app_keys.empty() ? "" : ", ") + key;
    }
    desc.params.set(key, to_cbor(v, "descriptor." + key));
  }
  if (!app_keys.empty()) {
    PyErr_WarnEx(PyExc_UserWarning,
                 ("descriptor carries application metadata (" + app_keys +
                  "); put it in the metadata's base[i] instead — it is stored as an encoding parameter")
                     .c_str(),
                 2);
  }
  return desc;
}

encode_options make_encode_options(const py::object& hash, std::uint32_t threads, bool allow_nan,
                                   bool allow_inf, const py::object& nan_mask_method,
                                   const py::object& pos_inf_mask_method,
                                   const py::object& neg_inf_mask_method,
                                   const py::object& small_mask_threshold_bytes,
                                   const py::object& aggregate_hash) {
  encode_options o;
  if (hash.is_none()) {
    o.hash_algo = "none";
  } else {
    // Spec 08 §1.2, §1.6: str only; an unknown name is the core's text with
    // its lowercase Display prefix (`metadata error: unknown hash type: …`).
    if (!PyUnicode_Check(hash.ptr())) raise_not_instance(hash, "hash", "str");
    const std::string h = hash.cast<std::string>();
    try {
      (void)hash_name_enables_hashing(h);
    } catch (const metadata_error& e) {
      value_error(e.what());
    }
    o.hash_algo = h;
  }
  o.threads = threads;
  o.allow_nan = allow_nan;
  o.allow_inf = allow_inf;
  auto method = [](const py::object& m, std::string& out) {
    if (!m.is_none()) out = py::str(m);
  };
  method(nan_mask_method, o.nan_mask_method);
  method(pos_inf_mask_method, o.pos_inf_mask_method);
  method(neg_inf_mask_method, o.neg_inf_mask_method);
  if (!small_mask_threshold_bytes.is_none()) {
    const auto t = small_mask_threshold_bytes.cast<long long>();
    if (t < 0) value_error("small_mask_threshold_bytes must be >= 0");
    o.small_mask_threshold_bytes = static_cast<std::ptrdiff_t>(t);
  }
  if (!aggregate_hash.is_none()) {
    const std::string a = py::str(aggregate_hash);
    if (a == "auto") {
      o.aggregate_hash = aggregate_hash_policy::automatic;
    } else if (a == "none") {
      o.aggregate_hash = aggregate_hash_policy::none;
    } else if (a == "header") {
      o.aggregate_hash = aggregate_hash_policy::header;
    } else if (a == "footer") {
      o.aggregate_hash = aggregate_hash_policy::footer;
    } else if (a == "both") {
      o.aggregate_hash = aggregate_hash_policy::both;
    } else {
      value_error("aggregate_hash must be None, 'auto', 'none', 'header', 'footer' or 'both', not '" + a +
                  "'");
    }
  }
  return o;
}

decode_options make_decode_options(bool native_byte_order, std::uint32_t threads, bool restore_non_finite,
                                   bool verify_hash) {
  decode_options o;
  o.native_byte_order = native_byte_order;
  o.threads = threads;
  o.restore_non_finite = restore_non_finite;
  o.verify_hash = verify_hash;
  return o;
}

std::vector<std::pair<std::uint64_t, std::uint64_t>> ranges_from_list(py::handle ranges) {
  std::vector<std::pair<std::uint64_t, std::uint64_t>> out;
  std::size_t i = 0;
  for (py::handle r : ranges) {
    const py::sequence pair = py::reinterpret_borrow<py::sequence>(r);
    if (!PySequence_Check(r.ptr()) || pair.size() != 2) {
      value_error("ranges[" + std::to_string(i) + "] must be a (start, count) pair");
    }
    const auto start = pair[0].cast<long long>();
    const auto count = pair[1].cast<long long>();
    if (start < 0 || count < 0) {
      value_error("ranges[" + std::to_string(i) + "] = (" + std::to_string(start) + ", " +
                  std::to_string(count) + ") has a negative start or count");
    }
    out.emplace_back(static_cast<std::uint64_t>(start), static_cast<std::uint64_t>(count));
    ++i;
  }
  return out;
}

}  // namespace tensogram::python
