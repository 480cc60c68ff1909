// `Metadata`, `DataObjectDescriptor` and `Message` (spec 04 B.6).
#include <pybind11/stl.h>

#include <algorithm>
#include <string>
#include <unordered_set>

#include "binding.hpp"
#include "tensogram/core/hex.hpp"

namespace tensogram::python {

namespace {

// The entries of a first-level map (a base[i], extra, reserved, params) in
// the reference's order: sorted by the UTF-8 bytes of the key, as its
// sorted maps hold them (spec 08 §6); nested maps keep their wire order.
std::vector<const cbor::map_entry*> sorted_entries(const cbor::value& m) {
  std::vector<const cbor::map_entry*> out;
  if (const cbor::map* entries = m.as_map()) {
    for (const cbor::map_entry& e : *entries) out.push_back(&e);
  }
  std::stable_sort(out.begin(), out.end(), [](const cbor::map_entry* a, const cbor::map_entry* b) {
    const std::string* ka = a->key.as_text();
    const std::string* kb = b->key.as_text();
    if (ka == nullptr || kb == nullptr) return ka != nullptr && kb == nullptr;  // text keys first
    return *ka < *kb;  // std::string compares bytes (as unsigned char)
  });
  return out;
}

// A first-level map as a dict with sorted keys (spec 08 §6).
py::object sorted_dict(const cbor::value& m) {
  if (m.as_map() == nullptr) return to_python(m);
  py::dict out;
  for (const cbor::map_entry* e : sorted_entries(m)) out[to_python(e->key)] = to_python(e->val);
  return out;
}

// The merged top-level key set of the Mapping protocol: sorted keys of
// base[0] (never `_reserved_`), then the not yet seen sorted keys of
// base[1], ..., then of `_extra_` (spec 08 §6).
std::vector<std::string> merged_keys(const global_metadata& g) {
  std::vector<std::string> keys;
  std::unordered_set<std::string> seen;
  auto add_from = [&](const cbor::value& m, bool skip_reserved) {
    for (const cbor::map_entry* e : sorted_entries(m)) {
      const std::string* k = e->key.as_text();
      if (k == nullptr || (skip_reserved && *k == "_reserved_")) continue;
      if (seen.insert(*k).second) keys.push_back(*k);
    }
  };
  for (const cbor::value& entry : g.base) add_from(entry, true);
  add_from(g.extra, false);
  return keys;
}

// meta[key]: the first base entry holding the key, then `_extra_`.
const cbor::value* top_level(const global_metadata& g, std::string_view key) {
  if (key == "_reserved_") return g.extra.find(key);
  for (const cbor::value& entry : g.base) {
    if (const cbor::value* v = entry.find(key)) return v;
  }
  return g.extra.find(key);
}

py::object get_or(const cbor::value* v, const py::object& dflt) {
  return v != nullptr ? to_python(*v) : dflt;
}

// A key argument of meta[...], `in` and get(): str only (spec 08 §1.7).
std::string key_arg(const py::object& key) {
  if (!PyUnicode_Check(key.ptr())) raise_not_instance(key, "key", "str");
  return key.cast<std::string>();
}

py::list uint_list(const std::vector<std::uint64_t>& v) {
  py::list out;
  for (std::uint64_t x : v) out.append(py::int_(x));
  return out;
}

}  // namespace

py::object make_message(const message& msg, const message_source& source) {
  py::list objects;
  for (const decoded_object& o : msg.objects()) {
    objects.append(py::make_tuple(descriptor_view{o.descriptor()}, object_array(o, source)));
  }
  return py::module_::import("tensogram._tensogram")
      .attr("Message")(metadata_view{msg.get_metadata()}, objects);
}

void register_metadata(py::module_& m) {
  py::class_<metadata_view>(m, "Metadata", R"doc(
Read-only metadata of one message.

``meta[key]`` looks the key up in ``base[0]``, ``base[1]``, ... (skipping
``_reserved_``) and then in ``extra``; the Mapping protocol (``in``, ``get``,
``keys``, ``values``, ``items``, ``len``, iteration) uses the same merged key
set. Dotted paths go through ``get_path`` / ``has_path`` (message level) and
``get_path_at`` / ``has_path_at`` (one object).
)doc")
      .def_property_readonly(
          "version", [](const metadata_view&) { return 3; }, "Wire format version (3).")
      .def_property_readonly(
          "num_objects", [](const metadata_view& v) { return v.meta.global().base.size(); },
          "Number of base entries (one per object).")
      .def_property_readonly(
          "base",
          [](const metadata_view& v) {
            py::list out;
            for (const cbor::value& e : v.meta.global().base) out.append(sorted_dict(e));
            return out;
          },
          "Per-object metadata dicts, each including its '_reserved_' entry.")
      .def_property_readonly(
          "extra", [](const metadata_view& v) { return sorted_dict(v.meta.global().extra); },
          "Message-level annotations ('_extra_').")
      .def_property_readonly(
          "reserved", [](const metadata_view& v) { return sorted_dict(v.meta.global().reserved); },
          "Library-managed provenance ('_reserved_' at message level).")
      .def("__getitem__",
           [](const metadata_view& v, const py::object& key) {
             const cbor::value* found = top_level(v.meta.global(), key_arg(key));
             if (found == nullptr) throw py::key_error(key_arg(key));
             return to_python(*found);
           })
      .def("__contains__",
           [](const metadata_view& v, const py::object& key) {
             return top_level(v.meta.global(), key_arg(key)) != nullptr;
           })
      .def(
          "get",
          [](const metadata_view& v, const py::object& key, const py::object& dflt) {
            return get_or(top_level(v.meta.global(), key_arg(key)), dflt);
          },
          py::arg("key"), py::arg("default") = py::none(), "meta[key], or `default` when absent.")
      .def("keys", [](const metadata_view& v) { return merged_keys(v.meta.global()); })
      .def("values",
           [](const metadata_view& v) {
             py::list out;
             for (const auto& k : merged_keys(v.meta.global()))
               out.append(to_python(*top_level(v.meta.global(), k)));
             return out;
           })
      .def("items",
           [](const metadata_view& v) {
             py::list out;
             for (const auto& k : merged_keys(v.meta.global())) {
               out.append(py::make_tuple(k, to_python(*top_level(v.meta.global(), k))));
             }
             return out;
           })
      .def("__iter__",
           [](const metadata_view& v) { return py::iter(py::cast(merged_keys(v.meta.global()))); })
      .def("__len__", [](const metadata_view& v) { return merged_keys(v.meta.global()).size(); })
      .def(
          "has_path", [](const metadata_view& v, const std::string& path) { return v.meta.contains(path); },
          py::arg("path"), "Whether a dotted path (e.g. 'mars.param') resolves at message level.")
      .def(
          "get_path",
          [](const metadata_view& v, const std::string& path, const py::object& dflt) {
            return get_or(v.meta.global().get(path), dflt);
          },
          py::arg("path"), py::arg("default") = py::none(),
          "Value at a dotted path: base[0], base[1], ... then extra ('extra.' prefix: extra only).")
      .def(
          "has_path_at",
          [](const metadata_view& v, std::size_t obj, const std::string& path) {
            return v.meta.contains_at(obj, path);
          },
          py::arg("obj"), py::arg("path"), "Whether a dotted path resolves in base[obj].")
      .def(
          "get_path_at",
          [](const metadata_view& v, std::size_t obj, const std::string& path, const py::object& dflt) {
            return get_or(v.meta.global().get_at(obj, path), dflt);
          },
          py::arg("obj"), py::arg("path"), py::arg("default") = py::none(),
          "Value at a dotted path in base[obj] only ('_reserved_' hidden, no extra fallback).")
      .def("__repr__", [](const metadata_view& v) {
        // Spec 08 §6: sorted extra keys in Rust's debug quoting.
        std::string extra_keys;
        for (const cbor::map_entry* e : sorted_entries(v.meta.global().extra)) {
          if (const std::string* k = e->key.as_text()) {
            extra_keys += (extra_keys.empty() ? "" : ", ") + debug_quoted(*k);
          }
        }
        return "Metadata(version=3, base_len=" + std::to_string(v.meta.global().base.size()) +
               ", extra_keys=[" + extra_keys + "])";
      });

  py::class_<descriptor_view>(m, "DataObjectDescriptor", R"doc(
Read-only descriptor of one data object: its type, shape,
dtype, byte order, pipeline and the pipeline's parameters.
)doc")
      .def_property_readonly("obj_type", [](const descriptor_view& d) { return d.descriptor.type; })
      .def_property_readonly("ndim", [](const descriptor_view& d) { return d.descriptor.shape.size(); })
      .def_property_readonly("shape", [](const descriptor_view& d) { return uint_list(d.descriptor.shape); })
      .def_property_readonly("strides",
                             [](const descriptor_view& d) { return uint_list(d.descriptor.strides); })
      .def_property_readonly(
          "dtype", [](const descriptor_view& d) { return std::string(dtype_name(d.descriptor.dtype)); })
      .def_property_readonly(
          "byte_order",
          [](const descriptor_view& d) {
            return std::string(byte_order_name(d.descriptor.effective_byte_order()));
          },
          "'little' or 'big': the order of the stored elements.")
      .def_property_readonly("encoding", [](const descriptor_view& d) { return d.descriptor.encoding; })
      .def_property_readonly("filter", [](const descriptor_view& d) { return d.descriptor.filter; })
      .def_property_readonly("compression", [](const descriptor_view& d) { return d.descriptor.compression; })
      .def_property_readonly(
          "params", [](const descriptor_view& d) { return sorted_dict(d.descriptor.params); },
          "Every other descriptor key: codec settings such as 'sp_bits_per_value', 'zstd_level'.")
      .def_property_readonly(
          "hash", [](const descriptor_view&) { return py::none(); },
          "Always None (hashes live in the frame, see validate()); kept for compatibility.")
      .def("__repr__", [](const descriptor_view& d) {
        // Spec 08 §6: strings single-quoted without escaping.
        return "DataObjectDescriptor(type='" + d.descriptor.type + "'" +
               ", shape=" + std::string(py::repr(uint_list(d.descriptor.shape))) + ", dtype='" +
               std::string(dtype_name(d.descriptor.dtype)) + "', encoding='" + d.descriptor.encoding +
               "', compression='" + d.descriptor.compression + "')";
      });

  py::object message_type =
      py::module_::import("collections").attr("namedtuple")("Message", py::make_tuple("metadata", "objects"));
  message_type.attr("__module__") = "tensogram";
  message_type.attr("__doc__") =
      "A decoded message: `metadata` (Metadata) and `objects`, a list of (DataObjectDescriptor, ndarray).";
  m.attr("Message") = message_type;
}

}  // namespace tensogram::python
