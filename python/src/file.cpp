// `TensogramFile` and its iterator (spec 04 B.6).
#include <pybind11/stl.h>

#include <algorithm>
#include <cctype>
#include <memory>
#include <string>

#include "binding.hpp"
#include "tensogram/core/error.hpp"
#include "tensogram/io/file.hpp"

namespace tensogram::python {

namespace {

// One open file. Calls copy the shared handle under the GIL and then run
// without it, so `close()` from another thread never pulls the file from
// under a running call (the call finishes on its own reference).
class py_file {
 public:
  py_file(std::shared_ptr<tensogram::file> f, std::string source, bool remote, scan_mode mode)
      : file_(std::move(f)), source_(std::move(source)), remote_(remote), mode_(mode) {}

  [[nodiscard]] std::shared_ptr<tensogram::file> handle() const {
    if (!file_) throw py::value_error("I/O operation on closed TensogramFile '" + source_ + "'");
    return file_;
  }
  void close() { file_.reset(); }
  [[nodiscard]] bool closed() const noexcept { return file_ == nullptr; }
  [[nodiscard]] const std::string& source() const noexcept { return source_; }
  [[nodiscard]] bool remote() const noexcept { return remote_; }
  [[nodiscard]] scan_mode mode() const noexcept { return mode_; }

  std::size_t count() {
    auto f = handle();
    py::gil_scoped_release release;
    return f->message_count();
  }

  py::object decode_message(std::size_t i, const decode_options& o) {
    auto f = handle();
    message msg;
    {
      py::gil_scoped_release release;
      msg = f->decode_message(i, o);
    }
    return make_message(msg, message_source{});
  }

  /// A message index argument of the file calls: OverflowError when
  /// negative, the reference's `FramingError: message index <i> out of range
  /// (count=<n>)` past the end (spec 08 §1.1, §1.8), as the C++ API.
  std::size_t message_index(long long index) {
    const std::size_t i = checked_index(index, "index");
    if (const std::size_t n = count(); i >= n) {
      throw framing_error("message index " + std::to_string(i) + " out of range (count=" + std::to_string(n) +
                          ")");
    }
    return i;
  }

  /// Python index (negative from the end) → message index; IndexError.
  std::size_t resolve(long long index) {
    const auto n = static_cast<long long>(count());
    const long long i = index < 0 ? index + n : index;
    if (i < 0 || i >= n) {
      throw py::index_error("message index " + std::to_string(index) + " out of range for file with " +
                            std::to_string(n) + " messages");  // spec 08 §1.8
    }
    return static_cast<std::size_t>(i);
  }

 private:
  std::shared_ptr<tensogram::file> file_;
  std::string source_;
  bool remote_;
  scan_mode mode_;
};

// Iteration over a local file with its own handle (B.6: the iterator does
// not share the file object's position or cache).
class py_file_iter {
 public:
  explicit py_file_iter(const py_file& f) {
    if (f.remote()) throw std::runtime_error("iteration not supported on remote files");  // spec 08 §1.8
    py::gil_scoped_release release;
    file_ = std::make_shared<tensogram::file>(tensogram::file::open(f.source(), f.mode()));
    count_ = file_->message_count();
  }
  py::object next() {
    if (next_ >= count_) throw py::stop_iteration();
    const std::size_t i = next_++;
    message msg;
    {
      py::gil_scoped_release release;
      msg = file_->decode_message(i);
    }
    return make_message(msg, message_source{});
  }
  // Spec 08 §2: `len()` is what is left; the count is the scan's snapshot.
  [[nodiscard]] std::size_t position() const noexcept { return next_; }
  [[nodiscard]] std::size_t remaining() const noexcept { return count_ - next_; }

 private:
  std::shared_ptr<tensogram::file> file_;
  std::size_t count_ = 0;
  std::size_t next_ = 0;
};

std::string fspath(const py::object& path) {
  return py::str(py::module_::import("os").attr("fspath")(path));
}

scan_mode mode_of(bool bidirectional) {
  return bidirectional ? scan_mode::bidirectional : scan_mode::forward;
}

// storage_options of `open_remote` (spec 08 §3.1): a dict with str keys;
// values are used as str(value). The core applies them: the reference's
// object-store client keys (`timeout="30s"`, `allow_invalid_certificates`,
// `user_agent`, ...) and this build's `timeout_ms`, `connect_timeout_ms`,
// `verify_tls`, `header.<Name>`; `headers` may be a dict of request headers.
// Conversion is eager (type errors first); the values are applied after the
// URL check, and a malformed one fails the open: `RemoteError: cannot open
// '<source>': …` (spec 08 §3.2).
using storage_settings = std::vector<std::pair<std::string, std::string>>;

storage_settings storage_settings_from(const py::object& storage_options) {
  storage_settings settings;
  if (storage_options.is_none()) return settings;
  if (!PyDict_Check(storage_options.ptr())) raise_not_instance(storage_options, "storage_options", "dict");
  for (const auto& [k, v] : storage_options.cast<py::dict>()) {
    if (!PyUnicode_Check(k.ptr())) raise_not_instance(k, "", "str");
    const std::string key = k.cast<std::string>();
    if (key == "headers" && PyDict_Check(v.ptr())) {
      for (const auto& [hk, hv] : v.cast<py::dict>()) {
        settings.emplace_back("header." + std::string(py::str(hk)), std::string(py::str(hv)));
      }
      continue;
    }
    std::string text;
    try {
      text = py::str(v);
    } catch (const py::error_already_set&) {
      throw py::value_error("storage_options value for key '" + key + "' must be convertible to string");
    }
    settings.emplace_back(key, std::move(text));
  }
  return settings;
}

io::remote_options remote_options_from(const storage_settings& settings, const std::string& source) {
  io::remote_options o;
  for (const auto& [key, value] : settings) {
    try {
      io::set_remote_option(o, key, value);
    } catch (const invalid_arg_error& e) {
      throw remote_error("cannot open '" + source + "': " + std::string(e.detail()));
    }
  }
  return o;
}

// `bidirectional`: bool or numpy.bool_ only (spec 08 §3.1).
bool bidirectional_arg(const py::object& value) {
  return strict_bool_arg(value, "bidirectional");
}

// What the reference rejects at open, before any request (spec 08 §7.2):
// a URL that does not parse (`invalid URL '<source>': <url error>`, the url
// crate's texts) and a scheme no store serves (`cannot open '<source>': …`).
// Schemes of the object stores this build lacks (s3, gs, az, …) say so.
void check_remote_source(const std::string& url) {
  const std::size_t colon = url.find(':');
  bool scheme_ok =
      colon != std::string::npos && colon > 0 && std::isalpha(static_cast<unsigned char>(url[0])) != 0;
  for (std::size_t i = 0; scheme_ok && i < colon; ++i) {
    const auto c = static_cast<unsigned char>(url[i]);
    scheme_ok = std::isalnum(c) != 0 || c == '+' || c == '-' || c == '.';
  }
  if (!scheme_ok) throw remote_error("invalid URL '" + url + "': relative URL without a base");
  std::string scheme = url.substr(0, colon);
  std::transform(scheme.begin(), scheme.end(), scheme.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (scheme == "http" || scheme == "https") {
    std::string rest = url.substr(colon + 1);
    rest.erase(0, rest.find_first_not_of("/\\"));
    std::string host = rest.substr(0, rest.find_first_of("/\\?#"));
    if (const std::size_t at = host.rfind('@'); at != std::string::npos) host.erase(0, at + 1);
    const std::size_t port_colon = host.rfind(':');
    const bool has_port = port_colon != std::string::npos && host.find(']', port_colon) == std::string::npos;
    const std::string port = has_port ? host.substr(port_colon + 1) : "";
    if (has_port) host.erase(port_colon);
    if (host.empty()) throw remote_error("invalid URL '" + url + "': empty host");
    if (!port.empty() && (port.size() > 5 || port.find_first_not_of("0123456789") != std::string::npos ||
                          std::stoul(port) > 65535)) {
      throw remote_error("invalid URL '" + url + "': invalid port number");
    }
    return;
  }
  for (const char* store : {"s3", "s3a", "gs", "az", "adl", "azure", "abfs", "abfss"}) {
    if (scheme == store) {
      throw remote_error("cannot open '" + url + "': this build reads http(s) objects only (no " + scheme +
                         " store)");
    }
  }
  throw remote_error("cannot open '" + url + "': Generic URL error: Unable to recognise URL \"" + url + "\"");
}

py_file open_remote(const std::string& url, const py::object& storage_options, bool bidirectional) {
  const storage_settings settings = storage_settings_from(storage_options);
  check_remote_source(url);
  const io::remote_options o = remote_options_from(settings, url);
  const scan_mode mode = mode_of(bidirectional);
  std::shared_ptr<tensogram::file> f;
  {
    py::gil_scoped_release release;
    f = std::make_shared<tensogram::file>(tensogram::file::open_remote(url, o, mode));
    f->check_head();  // the reference's eager open (spec 08 §7.1)
  }
  return {std::move(f), url, true, mode};
}

// `{"metadata", "descriptor", "data"}` of a one-object decode (B.6
// `file_decode_object`).
py::dict object_result(const message& msg) {
  py::dict out;
  out["metadata"] = metadata_view{msg.get_metadata()};
  out["descriptor"] = descriptor_view{msg.object(0).descriptor()};
  out["data"] = object_array(msg.object(0), message_source{});
  return out;
}

// The core's text for a batch call on a local file (spec 08 §1.8); `what`
// is "object" or "range".
void require_remote(const py_file& self, const char* what) {
  if (!self.remote()) {
    PyErr_SetString(PyExc_OSError,
                    ("batch " + std::string(what) + " decode requires a remote backend").c_str());
    throw py::error_already_set();
  }
}

}  // namespace

void register_file(py::module_& m) {
  // The call-time checks of AsyncTensogramFile.open_remote (spec 08 §3.4):
  // argument conversion only, no URL parsing and no I/O (source None: not checked).
  m.def(
      "_check_remote_arguments",
      [](const py::object& source, const py::object& storage_options, const py::object& bidirectional) {
        if (!source.is_none() && !PyUnicode_Check(source.ptr())) raise_not_instance(source, "source", "str");
        (void)storage_settings_from(storage_options);
        (void)bidirectional_arg(bidirectional);
      },
      py::arg("source"), py::arg("storage_options"), py::arg("bidirectional"));
  py::class_<py_file_iter>(m, "TensogramFileIter", "Iterator of Message over a local file (own file handle).")
      .def("__iter__", [](py_file_iter& it) -> py_file_iter& { return it; })
      .def("__next__", &py_file_iter::next)
      .def("__len__", &py_file_iter::remaining)
      .def("__repr__", [](const py_file_iter& it) {
        return iterator_repr("TensogramFileIter", it.position(), it.remaining());
      });

  py::class_<py_file>(m, "TensogramFile", R"doc(
A file of concatenated messages, local or remote (http/https).

    with tensogram.TensogramFile.open("data.tgm") as f:
        print(len(f))
        meta, objects = f[0]
        for meta, objects in f: ...

Messages are found lazily on first use by reading only preambles and postambles. Every decode method
releases the GIL, and one file can be used from many threads at once.
)doc")
      .def_static(
          "open",
          [](const py::object& source, const py::object& bidirectional_value) {
            const bool bidirectional = bidirectional_arg(bidirectional_value);
            const std::string s = fspath(source);
            if (py::module_::import("tensogram._tensogram").attr("is_remote_url")(s).cast<bool>()) {
              return open_remote(s, py::none(), bidirectional);
            }
            // Spec 08 §7.1: the core's open checks that the path can be opened
            // (OSError "file not found: <path>") and reads nothing.
            const scan_mode mode = mode_of(bidirectional);
            std::shared_ptr<tensogram::file> f;
            {
              py::gil_scoped_release release;
              f = std::make_shared<tensogram::file>(tensogram::file::open(s, mode));
            }
            return py_file(std::move(f), s, false, mode);
          },
          py::arg("source"), py::kw_only(), py::arg("bidirectional") = true,
          "Opens a local path or a remote URL (auto-detected with is_remote_url).")
      .def_static(
          "open_remote",
          [](const std::string& source, const py::object& storage_options, const py::object& bidirectional) {
            return open_remote(source, storage_options, bidirectional_arg(bidirectional));
          },
          py::arg("source"), py::arg("storage_options") = py::none(), py::kw_only(),
          py::arg("bidirectional") = true,
          "Opens an http(s) URL; storage_options: headers (dict), timeout_ms, connect_timeout_ms, "
          "verify_tls.")
      .def_static(
          "create",
          [](const py::object& path) {
            const std::string s = fspath(path);
            std::shared_ptr<tensogram::file> f;
            {
              py::gil_scoped_release release;
              f = std::make_shared<tensogram::file>(tensogram::file::create(s));
            }
            return py_file(std::move(f), s, false, scan_mode::bidirectional);
          },
          py::arg("path"), "Creates (or truncates) a local file, ready for append().")
      .def("message_count", &py_file::count, "Number of messages (scans on first use).")
      .def("__len__", &py_file::count)
      .def(
          "append",
          [](py_file& self, const py::object& meta, const py::object& pairs, const py::object& hash,
             threads_arg threads, strict_bool<"allow_nan"> allow_nan, strict_bool<"allow_inf"> allow_inf,
             const py::object& nan_m, const py::object& pinf_m, const py::object& ninf_m,
             const py::object& small, const py::object& aggregate) {
            auto f = self.handle();
            const global_metadata g = metadata_from_dict(meta);
            const encode_inputs in(pairs, false);
            const encode_options o = make_encode_options(hash, threads, allow_nan, allow_inf, nan_m, pinf_m,
                                                         ninf_m, small, aggregate);
            py::gil_scoped_release release;
            const auto objects = in.objects();
            f->append(g, objects, o);
          },
          py::arg("global_meta_dict"), py::arg("descriptors_and_data"), py::arg("hash") = "xxh3",
          py::arg("threads") = 0, py::arg("allow_nan") = false, py::arg("allow_inf") = false,
          py::arg("nan_mask_method") = py::none(), py::arg("pos_inf_mask_method") = py::none(),
          py::arg("neg_inf_mask_method") = py::none(), py::arg("small_mask_threshold_bytes") = py::none(),
          py::arg("aggregate_hash") = py::none(),
          "Encodes one message (arguments as tensogram.encode) and appends it; earlier messages are never "
          "damaged.")
      .def(
          "decode_message",
          [](py_file& self, long long index, strict_bool<"native_byte_order"> native, threads_arg threads,
             strict_bool<"restore_non_finite"> restore, strict_bool<"verify_hash"> verify) {
            return self.decode_message(self.message_index(index),
                                       make_decode_options(native, threads, restore, verify));
          },
          py::arg("index"), py::arg("native_byte_order") = true, py::arg("threads") = 0,
          py::arg("restore_non_finite") = true, py::arg("verify_hash") = false, "Message i as a Message.")
      .def(
          "file_decode_metadata",
          [](py_file& self, long long msg_index) {
            auto f = self.handle();
            const std::size_t i = self.message_index(msg_index);
            py::gil_scoped_release release;
            return metadata_view{f->decode_metadata(i)};
          },
          py::arg("msg_index"), "Metadata of message i (reads only its metadata frames).")
      .def(
          "file_decode_descriptors",
          [](py_file& self, long long msg_index) {
            auto f = self.handle();
            const std::size_t i = self.message_index(msg_index);
            std::pair<metadata, std::vector<data_object_descriptor>> r;
            {
              py::gil_scoped_release release;
              r = f->decode_descriptors(i);
            }
            py::list descs;
            for (auto& d : r.second) descs.append(descriptor_view{std::move(d)});
            py::dict out;
            out["metadata"] = metadata_view{r.first};
            out["descriptors"] = descs;
            return out;
          },
          py::arg("msg_index"),
          "{'metadata': Metadata, 'descriptors': [DataObjectDescriptor]} without payloads.")
      .def(
          "file_decode_object",
          [](py_file& self, long long msg_index, long long obj_index, strict_bool<"native_byte_order"> native,
             threads_arg threads, strict_bool<"verify_hash"> verify) {
            auto f = self.handle();
            const std::size_t i = self.message_index(msg_index);
            const std::size_t obj = checked_index(obj_index, "obj_index");
            const decode_options o = make_decode_options(native, threads, true, verify);
            message msg;
            {
              py::gil_scoped_release release;
              msg = f->decode_object(i, obj, o);
            }
            return object_result(msg);
          },
          py::arg("msg_index"), py::arg("obj_index"), py::arg("native_byte_order") = true,
          py::arg("threads") = 0, py::arg("verify_hash") = false,
          "{'metadata', 'descriptor', 'data'} of one object, reading only that object's frame.")
      .def(
          "file_decode_range",
          [](py_file& self, long long msg_index, long long obj_index, const py::object& ranges,
             strict_bool<"join"> join, strict_bool<"native_byte_order"> native, threads_arg threads) {
            auto f = self.handle();
            const std::size_t i = self.message_index(msg_index);
            const std::size_t obj = checked_index(obj_index, "obj_index");
            const auto r = ranges_from_list(ranges);
            const decode_options o = make_decode_options(native, threads, true, false);
            std::vector<buffer> parts;
            data_object_descriptor d;
            {
              py::gil_scoped_release release;
              parts = f->decode_range(i, obj, r, o);
              auto descs = f->decode_descriptors(i).second;
              d = descs.at(obj);
            }
            return range_arrays(std::move(parts), d, join);
          },
          py::arg("msg_index"), py::arg("obj_index"), py::arg("ranges"), py::arg("join") = false,
          py::arg("native_byte_order") = true, py::arg("threads") = 0,
          "Element ranges of one object, as tensogram.decode_range.")
      .def(
          "file_decode_object_batch",
          [](py_file& self, const py::object& msg_indices, long long obj_index,
             strict_bool<"native_byte_order"> native, threads_arg threads,
             strict_bool<"verify_hash"> verify) {
            require_remote(self, "object");
            auto f = self.handle();
            const std::size_t obj = checked_index(obj_index, "obj_index");
            const decode_options o = make_decode_options(native, threads, true, verify);
            py::list out;
            for (py::handle h : msg_indices) {
              const std::size_t i = self.message_index(h.cast<long long>());
              message msg;
              {
                py::gil_scoped_release release;
                msg = f->decode_object(i, obj, o);
              }
              out.append(object_result(msg));
            }
            return out;
          },
          py::arg("msg_indices"), py::arg("obj_index"), py::arg("native_byte_order") = true,
          py::arg("threads") = 0, py::arg("verify_hash") = false,
          "file_decode_object over several messages (remote files only).")
      .def(
          "file_decode_range_batch",
          [](py_file& self, const py::object& msg_indices, long long obj_index, const py::object& ranges,
             strict_bool<"join"> join, strict_bool<"native_byte_order"> native, threads_arg threads) {
            require_remote(self, "range");
            auto f = self.handle();
            const std::size_t obj = checked_index(obj_index, "obj_index");
            const auto r = ranges_from_list(ranges);
            const decode_options o = make_decode_options(native, threads, true, false);
            py::list out;
            for (py::handle h : msg_indices) {
              const std::size_t i = self.message_index(h.cast<long long>());
              std::vector<buffer> parts;
              data_object_descriptor d;
              {
                py::gil_scoped_release release;
                parts = f->decode_range(i, obj, r, o);
                d = f->decode_descriptors(i).second.at(obj);
              }
              out.append(range_arrays(std::move(parts), d, join));
            }
            return out;
          },
          py::arg("msg_indices"), py::arg("obj_index"), py::arg("ranges"), py::arg("join") = false,
          py::arg("native_byte_order") = true, py::arg("threads") = 0,
          "file_decode_range over several messages (remote files only).")
      .def(
          "read_message",
          [](py_file& self, long long index) {
            auto f = self.handle();
            const std::size_t i = self.message_index(index);
            buffer b;
            {
              py::gil_scoped_release release;
              b = f->message_bytes(i);
            }
            return to_bytes(b.bytes());
          },
          py::arg("index"), "The raw bytes of message i.")
      .def(
          "messages",
          [](py_file& self) {
            auto f = self.handle();
            py::list out;
            const std::size_t n = self.count();
            for (std::size_t i = 0; i < n; ++i) {
              buffer b;
              {
                py::gil_scoped_release release;
                b = f->message_bytes(i);
              }
              out.append(to_bytes(b.bytes()));
            }
            return out;
          },
          "The raw bytes of every message.")
      .def("is_remote", &py_file::remote)
      .def("source", [](const py_file& self) { return self.source(); })
      .def(
          "__getitem__",
          [](py_file& self, const py::object& key) -> py::object {
            if (PySlice_Check(key.ptr())) {
              const auto slice = key.cast<py::slice>();
              std::size_t start = 0, stop = 0, step = 0, length = 0;
              if (!slice.compute(self.count(), &start, &stop, &step, &length)) throw py::error_already_set();
              py::list out;
              for (std::size_t k = 0; k < length; ++k) {
                out.append(self.decode_message(start + k * step, decode_options{}));
              }
              return py::object(std::move(out));
            }
            if (PyBool_Check(key.ptr()) || !PyIndex_Check(key.ptr())) {
              throw py::type_error("indices must be integers or slices");  // spec 08 §1.8
            }
            return self.decode_message(self.resolve(key.cast<long long>()), decode_options{});
          },
          py::arg("key"))
      .def("__iter__", [](const py_file& self) { return py_file_iter(self); })
      .def("close", &py_file::close, "Releases the file; later calls raise ValueError.")
      .def_property_readonly("closed", &py_file::closed)
      .def(
          "__enter__", [](py_file& self) -> py_file& { return self; }, py::return_value_policy::reference)
      .def(
          "__exit__",
          // Spec 08 §1.8: returns False and closes nothing; the file stays
          // usable after the block (close() releases it).
          [](py_file& /*self*/, const py::object&, const py::object&, const py::object&) { return false; },
          py::arg("exc_type"), py::arg("exc"), py::arg("tb"))
      .def("__repr__", [](const py_file& self) {
        return "TensogramFile(source='" + self.source() + "')";  // spec 08 §6: as given, unescaped
      });
}

}  // namespace tensogram::python
