// Python values ⇄ CBOR values, and the argument dicts of spec 04 B.2/B.3.
#include <pybind11/stl.h>

#include <array>
#include <limits>
#include <string>

#include "binding.hpp"
#include "tensogram/core/byte_order.hpp"
#include "tensogram/core/dtype.hpp"
#include "tensogram/core/error.hpp"
#include "tensogram/core/hex.hpp"

namespace tensogram::python {

namespace {

std::string type_name(py::handle obj) {
  return py::str(py::type::handle_of(obj).attr("__name__"));
}

// CPython's tp_name (`float`, `numpy.float64`), which PyO3's integer
// conversion errors show (spec 08 §1.4, §1.12).
std::string tp_name(py::handle obj) {
  return Py_TYPE(obj.ptr())->tp_name;
}

[[noreturn]] void value_error(const std::string& text) {
  throw py::value_error(text);
}

// `cannot convert <type name> to CBOR` (spec 08 §1.3).
[[noreturn]] void unconvertible(py::handle obj) {
  value_error("cannot convert " + type_name(obj) + " to CBOR");
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

// Spec 08 §1.3 order: str, bool (numpy.bool_ too), anything with
// __index__ (an integer), anything with __float__ (a float), None, dict,
// list; tuples are not arrays. Integers keep their exact value up to the
// uint64 range (the reference turns those beyond int64 into floats, which
// would lose digits) and beyond it are an error.
cbor::value to_cbor(py::handle obj, std::string_view where) {
  if (PyUnicode_Check(obj.ptr())) return cbor::value(obj.cast<std::string>());
  if (PyBool_Check(obj.ptr())) return cbor::value(obj.ptr() == Py_True);
  if (py::isinstance(obj, py::module_::import("numpy").attr("bool_"))) return cbor::value(obj.cast<bool>());
  if (PyLong_Check(obj.ptr())) return int_to_cbor(obj, where);
  if (PyIndex_Check(obj.ptr())) {
    // numpy arrays have the slot but only integer scalars convert.
    if (PyObject* index = PyNumber_Index(obj.ptr()))
      return int_to_cbor(py::reinterpret_steal<py::object>(index), where);
    PyErr_Clear();
  }
  if (PyFloat_Check(obj.ptr())) return cbor::value(PyFloat_AsDouble(obj.ptr()));
  if (py::hasattr(obj, "__float__")) {
    const double v = PyFloat_AsDouble(obj.ptr());
    if (v == -1.0 && PyErr_Occurred() != nullptr) {
      PyErr_Clear();
      unconvertible(obj);
    }
    return cbor::value(v);
  }
  if (obj.is_none()) return cbor::value(nullptr);
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
  unconvertible(obj);
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

namespace {

// A dict key: str only (spec 08 §1.3, §1.4: PyO3's text, no argument prefix).
std::string key_text(py::handle key) {
  if (!PyUnicode_Check(key.ptr())) raise_not_instance(key, "", "str");
  return key.cast<std::string>();
}

}  // namespace

// Spec 08 §1.3: the checks, texts and order of the reference.
global_metadata metadata_from_dict(py::handle dict) {
  if (!PyDict_Check(dict.ptr())) raise_not_instance(dict, "global_meta_dict", "dict");
  global_metadata g;
  const py::dict d = dict.cast<py::dict>();
  if (d.contains("base")) {
    const py::handle base = d["base"];
    if (!PyList_Check(base.ptr())) value_error("'base' must be a list of dicts");
    std::size_t i = 0;
    for (py::handle entry : base.cast<py::list>()) {
      if (!PyDict_Check(entry.ptr())) value_error("expected a dict");
      for (const auto& kv : entry.cast<py::dict>()) (void)key_text(kv.first);
      if (entry.cast<py::dict>().contains("_reserved_")) {
        value_error("base entries must not contain '_reserved_' key — the encoder populates it");
      }
      g.base.push_back(to_cbor(entry, "base[" + std::to_string(i) + "]"));
      ++i;
    }
  }
  // "_extra_" wins over its convenience alias "extra" (B.2).
  if (d.contains("_extra_")) {
    if (!PyDict_Check(d["_extra_"].ptr())) value_error("'_extra_' must be a dict");
    g.extra = to_cbor(d["_extra_"], "_extra_");
  } else if (d.contains("extra")) {
    if (!PyDict_Check(d["extra"].ptr())) {
      value_error("'extra' must be a dict when provided as a convenience alias for '_extra_'");
    }
    g.extra = to_cbor(d["extra"], "extra");
  }
  if (d.contains("_reserved_")) {
    value_error("'_reserved_' must not be set by client code — the encoder populates it");
  }
  cbor::value free_form = cbor::value::make_map();
  for (const auto& [k, v] : d) {
    const std::string key = key_text(k);
    if (key == "base" || key == "_extra_" || key == "extra") continue;
    free_form.set(key, to_cbor(v, key));
  }
  for (const cbor::map_entry& e : *free_form.as_map()) {
    const std::string& k = *e.key.as_text();
    if (!g.extra.contains(k)) g.extra.set(k, e.val);
  }
  return g;
}

namespace {

// `shape` / `strides`: any sequence of non-negative ints (list, tuple, 1-D
// int ndarray), with PyO3's conversion errors (spec 08 §1.4).
std::vector<std::uint64_t> uint_list(py::handle obj) {
  if (PyUnicode_Check(obj.ptr())) throw py::type_error("Can't extract `str` to `Vec`");
  if (PySequence_Check(obj.ptr()) == 0) raise_not_instance(obj, "", "Sequence");
  std::vector<std::uint64_t> out;
  for (py::handle item : py::reinterpret_borrow<py::sequence>(obj)) {
    if (PyIndex_Check(item.ptr()) == 0) {
      throw py::type_error("'" + tp_name(item) + "' object cannot be interpreted as an integer");
    }
    const py::int_ i = py::reinterpret_steal<py::int_>(PyNumber_Index(item.ptr()));
    if (PyObject_RichCompareBool(i.ptr(), py::int_(0).ptr(), Py_LT) == 1) {
      PyErr_SetString(PyExc_OverflowError, "can't convert negative int to unsigned");
      throw py::error_already_set();
    }
    const unsigned long long v = PyLong_AsUnsignedLongLong(i.ptr());
    if (PyErr_Occurred() != nullptr) throw py::error_already_set();
    out.push_back(v);
  }
  return out;
}

// `type`, `dtype`, `byte_order` and the pipeline names: str only.
std::string text_field(py::handle obj) {
  if (!PyUnicode_Check(obj.ptr())) raise_not_instance(obj, "", "str");
  return obj.cast<std::string>();
}

// Keys that describe the data rather than its encoding (B.3): they belong in
// base[i], where tools and the xarray engine look for them.
constexpr std::array<std::string_view, 11> k_application_keys = {
    "name",      "param", "shortName", "long_name", "description", "units",
    "dim_names", "mars",  "cf",        "product",   "instrument"};

}  // namespace

// Spec 08 §1.4: type, shape, dtype (presence and types), strides, dtype
// name, byte_order, pipeline names, params; then the §1.11 warning.
data_object_descriptor descriptor_from_dict(py::handle dict) {
  if (!PyDict_Check(dict.ptr())) value_error("first element of each pair must be a descriptor dict");
  const py::dict d = dict.cast<py::dict>();
  const auto required = [&d](const char* key) -> py::handle {
    if (!d.contains(key)) value_error(std::string("descriptor missing '") + key + "'");
    return d[key];
  };
  data_object_descriptor desc;
  desc.type = text_field(required("type"));
  desc.shape = uint_list(required("shape"));
  desc.ndim = desc.shape.size();
  const std::string dtype_text = text_field(required("dtype"));
  desc.strides = d.contains("strides") ? uint_list(d["strides"]) : contiguous_strides(desc.shape);
  const auto dt = parse_dtype(dtype_text);
  if (!dt) value_error("unknown dtype: " + dtype_text);
  desc.dtype = *dt;
  if (d.contains("byte_order")) {
    const std::string order = text_field(d["byte_order"]);
    const auto o = parse_byte_order(order);
    if (!o) value_error("unknown byte_order: '" + order + "', expected 'little' or 'big'");
    desc.byte_order = *o;
  } else {
    desc.byte_order = native_byte_order();
  }
  for (const char* key : {"encoding", "filter", "compression"}) {
    if (!d.contains(key)) continue;
    std::string text = text_field(d[key]);
    if (std::string_view(key) == "encoding") desc.encoding = std::move(text);
    if (std::string_view(key) == "filter") desc.filter = std::move(text);
    if (std::string_view(key) == "compression") desc.compression = std::move(text);
  }
  std::string app_keys;
  for (const auto& [k, v] : d) {
    const std::string key = key_text(k);
    if (key == "type" || key == "shape" || key == "dtype" || key == "strides" || key == "byte_order" ||
        key == "encoding" || key == "filter" || key == "compression" || key == "ndim" || key == "hash") {
      continue;
    }
    for (std::string_view app : k_application_keys) {
      if (key == app) app_keys += (app_keys.empty() ? "'" : ", '") + key + "'";
    }
    desc.params.set(key, to_cbor(v, "descriptor." + key));
  }
  if (!app_keys.empty()) {
    // Spec 08 §1.11: the reference's text, stacklevel 1 (the Python line
    // that called encode/append/write_object); raised under -W error.
    const std::string text =
        "descriptor contains application-metadata-like keys (" + app_keys +
        ") that were captured into DataObjectDescriptor.params.  Application metadata belongs in "
        "meta['base'][i] — placing it in the descriptor dict works (xarray/zarr fall back to descriptor "
        "params) but is not canonical and may produce unexpected results in downstream tools. See "
        "examples/python/02b_generic_metadata.py for the recommended pattern.";
    if (text.find('\0') != std::string::npos) value_error("internal: warning message contained NUL");
    warn_caller(text);
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
    if (t < 0) {
      PyErr_SetString(PyExc_OverflowError, "can't convert negative int to unsigned");  // spec 08 §1.6
      throw py::error_already_set();
    }
    o.small_mask_threshold_bytes = static_cast<std::ptrdiff_t>(t);
  }
  if (!aggregate_hash.is_none()) {
    if (!PyUnicode_Check(aggregate_hash.ptr())) raise_not_instance(aggregate_hash, "aggregate_hash", "str");
    const std::string a = aggregate_hash.cast<std::string>();
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
      value_error("unknown aggregate_hash policy " + debug_quoted(a) +
                  "; expected one of: 'auto', 'none', 'header', 'footer', 'both'");
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
