// Module-level functions (spec 04 B.5).
#include <pybind11/stl.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include "binding.hpp"
#include "tensogram/codecs/simple_packing.hpp"
#include "tensogram/core/error.hpp"
#include "tensogram/doctor.hpp"
#include "tensogram/message/encode.hpp"
#include "tensogram/message/masks.hpp"
#include "tensogram/message/validate.hpp"

namespace tensogram::python {

namespace {

py::object json_loads(const std::string& text) {
  return py::module_::import("json").attr("loads")(text);
}

// Message iterator over a private copy of the caller's buffer (B.5
// `iter_messages`): the caller may reuse its buffer while iterating.
class message_iter {
 public:
  message_iter(py::handle buf, bool verify_hash) : verify_(verify_hash) {
    const borrowed_bytes in(buf, "buf");
    copy_ = py::bytes(reinterpret_cast<const char*>(in.bytes().data()), in.bytes().size());
    const borrowed_bytes own(copy_, "buf");
    entries_ = tensogram::scan(own.bytes());
  }
  py::object next() {
    if (next_ >= entries_.size()) throw py::stop_iteration();
    const scan_entry e = entries_[next_++];
    const borrowed_bytes own(copy_, "buf");
    const buffer msg = own.as_buffer().slice(e.offset, e.length);
    decode_options o;
    o.verify_hash = verify_;
    message decoded;
    {
      py::gil_scoped_release release;
      decoded = tensogram::decode(msg, o);
    }
    return make_message(decoded, message_source{own.bytes(), copy_});
  }
  [[nodiscard]] std::size_t position() const noexcept { return next_; }
  [[nodiscard]] std::size_t remaining() const noexcept { return entries_.size() - next_; }

 private:
  py::bytes copy_;
  std::vector<scan_entry> entries_;
  std::size_t next_ = 0;
  bool verify_;
};

bool remote_scheme(const std::string& source) {
  const auto colon = source.find("://");
  if (colon == std::string::npos) return false;
  std::string scheme = source.substr(0, colon);
  std::transform(scheme.begin(), scheme.end(), scheme.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  for (const char* s : {"s3", "s3a", "gs", "az", "azure", "http", "https"}) {
    if (scheme == s) return true;
  }
  return false;
}

}  // namespace

encode_inputs::encode_inputs(py::handle pairs, bool pre_encoded) {
  // Spec 08 §1.5 texts.
  if (!PyList_Check(pairs.ptr())) raise_not_instance(pairs, "descriptors_and_data", "list");
  const std::string form = pre_encoded ? "each element must be a (descriptor_dict, bytes) tuple"
                                       : "each element must be a (descriptor_dict, data) tuple";
  const auto list = py::reinterpret_borrow<py::list>(pairs);
  descriptors_.reserve(list.size());
  payloads_.reserve(list.size());
  for (py::handle item : list) {
    if (!PyTuple_Check(item.ptr())) throw py::value_error(form);
    if (PyTuple_Size(item.ptr()) != 2) throw py::value_error(form + " of length 2");
    const auto pair = py::reinterpret_borrow<py::tuple>(item);
    const bool order_given = PyDict_Check(pair[0].ptr()) && pair[0].cast<py::dict>().contains("byte_order");
    descriptors_.push_back(descriptor_from_dict(pair[0]));
    payloads_.emplace_back(pair[1], descriptors_.back(), order_given,
                           pre_encoded ? payload_kind::pre_encoded : payload_kind::array_or_bytes);
  }
}

std::vector<object_input> encode_inputs::objects() const {
  std::vector<object_input> out;
  out.reserve(descriptors_.size());
  for (std::size_t i = 0; i < descriptors_.size(); ++i)
    out.push_back({descriptors_[i], payloads_[i].bytes()});
  return out;
}

py::bytes to_bytes(std::span<const std::byte> v) {
  // Allocated uninitialised, advised, then filled by one copy.
  auto out = py::reinterpret_steal<py::bytes>(
      PyBytes_FromStringAndSize(nullptr, static_cast<py::ssize_t>(v.size())));
  if (!out) throw py::error_already_set();
  char* dst = PyBytes_AS_STRING(out.ptr());
  advise_huge_pages(dst, v.size());
  if (!v.empty()) std::memcpy(dst, v.data(), v.size());
  return out;
}

std::vector<std::byte> encode_message(const global_metadata& metadata, std::span<const object_input> objects,
                                      const encode_options& options, bool pre_encoded) {
  if (pre_encoded) return tensogram::encode_pre_encoded(metadata, objects, options);
  std::size_t input = 0;
  for (const object_input& o : objects) input += o.data.size();
  // Room for the payloads plus frames, metadata, masks and a codec's
  // worst-case expansion of a few per mille; more is a normal reallocation.
  std::vector<std::byte> out;
  reserve_advised(out, input + input / 64 + (std::size_t{1} << 20));
  encode_into(metadata, objects, options, out);
  return out;
}

std::size_t checked_index(long long index, const char* /*what*/) {
  if (index < 0) {
    PyErr_SetString(PyExc_OverflowError, "can't convert negative int to unsigned");  // spec 08 §1.7
    throw py::error_already_set();
  }
  return static_cast<std::size_t>(index);
}

void register_functions(py::module_& m) {
  const char* encode_doc = R"doc(
encode(global_meta_dict, descriptors_and_data, hash="xxh3", threads=0, allow_nan=False, allow_inf=False,
       nan_mask_method=None, pos_inf_mask_method=None, neg_inf_mask_method=None,
       small_mask_threshold_bytes=None, aggregate_hash=None) -> bytes

Encodes one message. ``descriptors_and_data`` is a list of ``(descriptor_dict, data)`` tuples; ``data`` is a
C-contiguous numpy array of the descriptor's dtype or any bytes-like object holding the raw elements.
``hash=None`` writes no hashes. NaN/Inf are refused unless ``allow_nan``/``allow_inf``; then they are
replaced by zeros and recorded in companion masks (default method "roaring"). The GIL is released while
encoding.
)doc";
  m.def(
      "encode",
      [](const py::object& meta, const py::object& pairs, const py::object& hash, threads_arg threads,
         strict_bool<"allow_nan"> allow_nan, strict_bool<"allow_inf"> allow_inf, const py::object& nan_m,
         const py::object& pinf_m, const py::object& ninf_m, const py::object& small,
         const py::object& aggregate) {
        const global_metadata g = metadata_from_dict(meta);
        const encode_inputs in(pairs, false);
        const encode_options o =
            make_encode_options(hash, threads, allow_nan, allow_inf, nan_m, pinf_m, ninf_m, small, aggregate);
        std::vector<std::byte> out;
        {
          py::gil_scoped_release release;
          out = encode_message(g, in.objects(), o, false);
        }
        return to_bytes(out);
      },
      py::arg("global_meta_dict"), py::arg("descriptors_and_data"), py::arg("hash") = "xxh3",
      py::arg("threads") = 0, py::arg("allow_nan") = false, py::arg("allow_inf") = false,
      py::arg("nan_mask_method") = py::none(), py::arg("pos_inf_mask_method") = py::none(),
      py::arg("neg_inf_mask_method") = py::none(), py::arg("small_mask_threshold_bytes") = py::none(),
      py::arg("aggregate_hash") = py::none(), encode_doc);

  m.def(
      "encode_pre_encoded",
      [](const py::object& meta, const py::object& pairs, const py::object& hash, threads_arg threads) {
        const global_metadata g = metadata_from_dict(meta);
        const encode_inputs in(pairs, true);
        const encode_options o = make_encode_options(hash, threads, false, false, py::none(), py::none(),
                                                     py::none(), py::none(), py::none());
        std::vector<std::byte> out;
        {
          py::gil_scoped_release release;
          out = encode_message(g, in.objects(), o, true);
        }
        return to_bytes(out);
      },
      py::arg("global_meta_dict"), py::arg("descriptors_and_data"), py::arg("hash") = "xxh3",
      py::arg("threads") = 0,
      "Encodes one message whose payloads (bytes-like) are already in their final encoded form; they are "
      "written verbatim, hashes are still computed.");

  m.def(
      "decode",
      [](const py::object& buf, strict_bool<"native_byte_order"> native, threads_arg threads,
         strict_bool<"restore_non_finite"> restore, strict_bool<"verify_hash"> verify) {
        const borrowed_bytes in(buf, "buf");
        const decode_options o = make_decode_options(native, threads, restore, verify);
        message msg;
        {
          py::gil_scoped_release release;
          msg = tensogram::decode(in.as_buffer(), o);
        }
        return make_message(msg, message_source{in.bytes(), in.view_owner()});
      },
      py::arg("buf"), py::arg("native_byte_order") = true, py::arg("threads") = 0,
      py::arg("restore_non_finite") = true, py::arg("verify_hash") = false, R"doc(
decode(buf, native_byte_order=True, threads=0, restore_non_finite=True, verify_hash=False) -> Message

Decodes the first message of ``buf`` into ``Message(metadata, [(descriptor, ndarray), ...])``. Objects
stored without a codec in the requested byte order are returned as read-only views of ``buf`` (zero-copy;
the array keeps ``buf`` alive: ``arr.base`` is ``buf`` for bytes input); other objects are decoded into
writable arrays that own the library's buffer. simple_packing objects decode to float64.
)doc");

  m.def(
      "decode_with_masks",
      [](const py::object& buf, strict_bool<"native_byte_order"> native, threads_arg threads) {
        const borrowed_bytes in(buf, "buf");
        const decode_options o = make_decode_options(native, threads, false, false);
        message msg;
        std::vector<object_masks> masks;
        {
          py::gil_scoped_release release;
          msg = tensogram::decode(in.as_buffer(), o);
          masks = decode_object_masks(in.bytes());
        }
        const message_source source{in.bytes(), in.view_owner()};
        py::list objects;
        for (std::size_t i = 0; i < msg.objects().size(); ++i) {
          const decoded_object& obj = msg.objects()[i];
          const std::uint64_t n = obj.descriptor().element_count();
          py::dict kinds;
          for (std::size_t k = 0; k < mask_kind_names.size(); ++k) {
            if (!masks[i][k]) continue;
            // Unpacked to one bool per element (MSB-first bits, spec 02 §9).
            py::array_t<bool> flags(static_cast<py::ssize_t>(n));
            bool* out = flags.mutable_data();
            const std::vector<std::byte>& bits = *masks[i][k];
            for (std::uint64_t e = 0; e < n; ++e) {
              out[e] = (std::to_integer<unsigned>(bits[e / 8]) >> (7 - e % 8) & 1U) != 0;
            }
            kinds[py::str(std::string(mask_kind_names[k]))] = flags;
          }
          objects.append(py::make_tuple(descriptor_view{obj.descriptor()}, object_array(obj, source), kinds));
        }
        return py::module_::import("tensogram._tensogram")
            .attr("Message")(metadata_view{msg.get_metadata()}, objects);
      },
      py::arg("buf"), py::arg("native_byte_order") = true, py::arg("threads") = 0, R"doc(
decode_with_masks(buf, native_byte_order=True, threads=0) -> Message

Like decode(), but objects are ``(descriptor, ndarray, masks)``: the payload as stored (zeros where NaN/Inf
were substituted) and ``masks``, a dict with the keys present among "nan", "inf+", "inf-", each a bool array
of one flag per element.
)doc");

  m.def(
      "decode_metadata",
      [](const py::object& buf) {
        const borrowed_bytes in(buf, "buf");
        py::gil_scoped_release release;
        return metadata_view{tensogram::decode_metadata(in.bytes())};
      },
      py::arg("buf"), "Metadata of the first message, without touching payloads.");

  m.def(
      "decode_descriptors",
      [](const py::object& buf) {
        const borrowed_bytes in(buf, "buf");
        std::pair<metadata, std::vector<data_object_descriptor>> r;
        {
          py::gil_scoped_release release;
          r = tensogram::decode_descriptors(in.bytes());
        }
        py::list descs;
        for (auto& d : r.second) descs.append(descriptor_view{std::move(d)});
        return py::make_tuple(metadata_view{r.first}, descs);
      },
      py::arg("buf"), "(Metadata, [DataObjectDescriptor]) of the first message, without decoding payloads.");

  m.def(
      "decode_object",
      [](const py::object& buf, long long index, strict_bool<"native_byte_order"> native, threads_arg threads,
         strict_bool<"restore_non_finite"> restore, strict_bool<"verify_hash"> verify) {
        const borrowed_bytes in(buf, "buf");
        const decode_options o = make_decode_options(native, threads, restore, verify);
        const std::size_t i = checked_index(index, "index");
        message msg;
        {
          py::gil_scoped_release release;
          msg = tensogram::decode_object(in.as_buffer(), i, o);
        }
        const decoded_object& obj = msg.object(0);
        return py::make_tuple(metadata_view{msg.get_metadata()}, descriptor_view{obj.descriptor()},
                              object_array(obj, message_source{in.bytes(), in.view_owner()}));
      },
      py::arg("buf"), py::arg("index"), py::arg("native_byte_order") = true, py::arg("threads") = 0,
      py::arg("restore_non_finite") = true, py::arg("verify_hash") = false,
      "(Metadata, DataObjectDescriptor, ndarray) of one object, found through the index frame.");

  m.def(
      "decode_range",
      [](const py::object& buf, long long object_index, const py::object& ranges, strict_bool<"join"> join,
         strict_bool<"native_byte_order"> native, threads_arg threads,
         strict_bool<"restore_non_finite"> restore) {
        const borrowed_bytes in(buf, "buf");
        const auto r = ranges_from_list(ranges);
        const std::size_t i = checked_index(object_index, "object_index");
        const decode_options o = make_decode_options(native, threads, restore, false);
        std::vector<buffer> parts;
        data_object_descriptor d;
        {
          py::gil_scoped_release release;
          parts = tensogram::decode_range(in.as_buffer(), i, r, o);
          d = tensogram::decode_descriptors(in.bytes()).second.at(i);
        }
        return range_arrays(std::move(parts), d, join);
      },
      py::arg("buf"), py::arg("object_index"), py::arg("ranges"), py::arg("join") = false,
      py::arg("native_byte_order") = true, py::arg("threads") = 0, py::arg("restore_non_finite") = true,
      R"doc(
decode_range(buf, object_index, ranges, join=False, native_byte_order=True, threads=0, restore_non_finite=True)

Decodes element ranges ``[(start, count), ...]`` of the flattened object: one 1-D array per range, or one
joined array. Served for uncompressed, simple_packing, szip, blosc2 and fixed-rate zfp objects; stream
codecs (zstd, lz4, sz3) and the shuffle filter raise ValueError. Hashes are not verified.
)doc");

  m.def(
      "scan",
      [](const py::object& buf) {
        const borrowed_bytes in(buf, "buf");
        std::vector<scan_entry> entries;
        {
          py::gil_scoped_release release;
          entries = tensogram::scan(in.bytes());
        }
        py::list out;
        for (const auto& e : entries) out.append(py::make_tuple(e.offset, e.length));
        return out;
      },
      py::arg("buf"), "[(offset, length), ...] of the complete messages found in buf.");

  py::class_<message_iter>(m, "MessageIter",
                           "Iterator of Message over the messages of a buffer (owns a copy).")
      .def("__iter__", [](message_iter& it) -> message_iter& { return it; })
      .def("__next__", &message_iter::next)
      .def("__len__", &message_iter::remaining)
      .def("__repr__", [](const message_iter& it) {
        return iterator_repr("MessageIter", it.position(), it.remaining());
      });
  m.def(
      "iter_messages",
      [](const py::object& buf, strict_bool<"verify_hash"> verify) { return message_iter(buf, verify); },
      py::arg("buf"), py::kw_only(), py::arg("verify_hash") = false,
      "Iterates the messages of buf, decoding each into a Message.");

  m.def(
      "validate",
      [](const py::object& buf, const std::string& level, strict_bool<"check_canonical"> canonical) {
        const borrowed_bytes in(buf, "buf");
        const validate_options o = validate_options::for_mode(parse_validation_mode(level), canonical);
        std::string text;
        {
          py::gil_scoped_release release;
          text = to_json(validate_message(in.bytes(), o));
        }
        return json_loads(text);
      },
      py::arg("buf"), py::arg("level") = "default", py::arg("check_canonical") = false, R"doc(
validate(buf, level="default", check_canonical=False) -> dict

Checks the message in ``buf`` at ``level`` quick | default | checksum | full and returns
``{"issues": [...], "object_count": int, "hash_verified": bool}``. Never raises on bad data.
)doc");

  m.def(
      "validate_file",
      [](const py::object& path, const std::string& level, strict_bool<"check_canonical"> canonical) {
        const std::string p = py::str(py::module_::import("os").attr("fspath")(path));
        if (!py::module_::import("os").attr("path").attr("exists")(p).cast<bool>()) {
          errno = ENOENT;
          PyErr_SetFromErrnoWithFilename(PyExc_FileNotFoundError, p.c_str());
          throw py::error_already_set();
        }
        const validate_options o = validate_options::for_mode(parse_validation_mode(level), canonical);
        std::string text;
        {
          py::gil_scoped_release release;
          text = to_json(tensogram::validate_file(p, o));
        }
        return json_loads(text);
      },
      py::arg("path"), py::arg("level") = "default", py::arg("check_canonical") = false,
      "Validates every message of a file: {\"file_issues\": [...], \"messages\": [report, ...]}.");

  m.def(
      "compute_hash",
      [](const py::object& data, const py::object& algo) {
        // Spec 08 §4: bytes or bytearray only; "none" is accepted and still
        // gives the xxh3 digest; other names are the core's MetadataError.
        if (!PyBytes_Check(data.ptr()) && !PyByteArray_Check(data.ptr())) {
          raise_not_instance(data, "data", "bytes | bytearray");
        }
        if (!PyUnicode_Check(algo.ptr())) raise_not_instance(algo, "algo", "str");
        (void)hash_name_enables_hashing(algo.cast<std::string>());
        const borrowed_bytes in(data, "data");
        py::gil_scoped_release release;
        return tensogram::compute_hash(reinterpret_cast<const std::uint8_t*>(in.bytes().data()),
                                       in.bytes().size(), "xxh3");
      },
      py::arg("data"), py::arg("algo") = "xxh3",
      "16-character lowercase hex xxh3-64 digest of data (bytes or bytearray); algo \"xxh3\" or \"none\".");

  const auto packing_params = [](const py::array_t<double, py::array::c_style | py::array::forcecast>& values,
                                 std::uint32_t bits, std::int32_t decimal) {
    if (values.ndim() != 1) throw py::value_error("values must be a 1-D array");
    simple_packing_params p;
    try {
      py::gil_scoped_release release;
      p = simple_packing_compute_params(
          std::span<const double>(values.data(), static_cast<std::size_t>(values.size())), bits, decimal);
    } catch (const encoding_error& e) {
      // Spec 08 §1.2: the packing Display text, without a category prefix.
      throw py::value_error(std::string(e.detail()));
    }
    py::dict out;
    out["sp_reference_value"] = p.reference_value;
    out["sp_binary_scale_factor"] = p.binary_scale_factor;
    out["sp_decimal_scale_factor"] = p.decimal_scale_factor;
    out["sp_bits_per_value"] = p.bits_per_value;
    return out;
  };
  const char* packing_doc =
      "simple_packing parameters for values (1-D float64, no NaN): a dict of sp_reference_value, "
      "sp_binary_scale_factor, sp_decimal_scale_factor, sp_bits_per_value to spread into a descriptor.";
  m.def("compute_packing_params", packing_params, py::arg("values"), py::arg("bits_per_value"),
        py::arg("decimal_scale_factor") = 0, packing_doc);
  m.def("simple_packing_compute_params", packing_params, py::arg("values"), py::arg("bits_per_value"),
        py::arg("decimal_scale_factor") = 0, packing_doc);

  m.def(
      "doctor", [] { return json_loads(run_doctor().to_json()); },
      "Build information, compiled-in features and a self-test (the doctor JSON shape, core rows).");
  m.def("is_remote_url", &remote_scheme, py::arg("source"),
        "True for s3, s3a, gs, az, azure, http and https URLs (case-insensitive scheme).");
}

}  // namespace tensogram::python
