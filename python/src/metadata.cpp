// `Metadata`, `DataObjectDescriptor` and `Message` (spec 04 B.6).
#include <pybind11/stl.h>

#include <string>
#include <unordered_set>

#include "binding.hpp"

namespace tensogram::python {

namespace {

// The merged top-level key set of the Mapping protocol: keys of base[0],
// base[1], ... (never `_reserved_`), then of `_extra_`, first seen first.
std::vector<std::string> merged_keys(const global_metadata& g) {
  std::vector<std::string> keys;
  std::unordered_set<std::string> seen;
  auto add_from = [&](const cbor::value& m, bool skip_reserved) {
    const cbor::map* entries = m.as_map();
    if (entries == nullptr) return;
    for (const cbor::map_entry& e : *entries) {
      const std::string* k = e.key.as_text();
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

std::string list_repr(const std::vector<std::string>& items) {
  py::list l;
  for (const auto& s : items) l.append(py::str(s));
  return py::repr(l);
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
Read-only metadata of one message (spec 04 B.6).

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
            for (const cbor::value& e : v.meta.global().base) out.append(to_python(e));
            return out;
          },
          "Per-object metadata dicts, each including its '_reserved_' entry.")
      .def_property_readonly(
          "extra", [](const metadata_view& v) { return to_python(v.meta.global().extra); },
          "Message-level annotations ('_extra_').")
      .def_property_readonly(
          "reserved", [](const metadata_view& v) { return to_python(v.meta.global().reserved); },
          "Library-managed provenance ('_reserved_' at message level).")
      .def("__getitem__",
           [](const metadata_view& v, const std::string& key) {
             const cbor::value* found = top_level(v.meta.global(), key);
             if (found == nullptr) throw py::key_error(key);
             return to_python(*found);
           })
      .def("__contains__",
           [](const metadata_view& v, const py::object& key) {
             return py::isinstance<py::str>(key) &&
                    top_level(v.meta.global(), key.cast<std::string>()) != nullptr;
           })
      .def(
          "get",
          [](const metadata_view& v, const std::string& key, const py::object& dflt) {
            return get_or(top_level(v.meta.global(), key), dflt);
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
        std::vector<std::string> extra_keys;
        if (const cbor::map* e = v.meta.global().extra.as_map()) {
          for (const cbor::map_entry& entry : *e) {
            if (const std::string* k = entry.key.as_text()) extra_keys.push_back(*k);
          }
        }
        return "Metadata(version=3, base_len=" + std::to_string(v.meta.global().base.size()) +
               ", extra_keys=" + list_repr(extra_keys) + ")";
      });

  py::class_<descriptor_view>(m, "DataObjectDescriptor", R"doc(
Read-only descriptor of one data object (spec 04 B.6): its type, shape,
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
          "params", [](const descriptor_view& d) { return to_python(d.descriptor.params); },
          "Every other descriptor key: codec settings such as 'sp_bits_per_value', 'zstd_level'.")
      .def_property_readonly(
          "hash", [](const descriptor_view&) { return py::none(); },
          "Always None (hashes live in the frame, see validate()); kept for compatibility.")
      .def("__repr__", [](const descriptor_view& d) {
        return "DataObjectDescriptor(type=" + std::string(py::repr(py::str(d.descriptor.type))) +
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
