// `StreamingEncoder` (spec 04 B.6): builds one message in memory object by
// object with the library's streaming encoder (spec 01 §18 layout).
#include <cstring>
#include <optional>
#include <sstream>
#include <string>

#include "binding.hpp"
#include "tensogram/message/streaming_encoder.hpp"

namespace tensogram::python {

namespace {

class py_streaming_encoder {
 public:
  py_streaming_encoder(global_metadata metadata, encode_options options)
      : metadata_(std::move(metadata)), options_(std::move(options)) {
    start();
  }

  // Spec 08 §1.9: on a finished encoder, write_object converts the
  // descriptor and the data before its RuntimeError, write_object_pre_encoded
  // only the descriptor.
  void write_object(const py::object& descriptor, const py::object& data, bool pre_encoded) {
    const bool order_given =
        PyDict_Check(descriptor.ptr()) && descriptor.cast<py::dict>().contains("byte_order");
    data_object_descriptor d = descriptor_from_dict(descriptor);
    if (pre_encoded) {
      auto& enc = checked();
      const object_payload payload(data, d, order_given, payload_kind::streaming_pre_encoded);
      py::gil_scoped_release release;
      enc.write_object_pre_encoded(d, payload.bytes());
    } else {
      const object_payload payload(data, d, order_given, payload_kind::array_or_bytes);
      auto& enc = checked();
      py::gil_scoped_release release;
      enc.write_object(d, payload.bytes());
    }
  }

  /// Finishes the message. The library back-fills `total_length` into a
  /// seekable sink (our string stream); the plain streaming form of spec 01
  /// §18 keeps both copies 0, so they are cleared again unless asked for.
  py::bytes finish(bool backfilled, bool reset) {
    auto& enc = checked();
    std::string bytes;
    {
      py::gil_scoped_release release;
      enc.finish();
      bytes = std::move(*stream_).str();
    }
    encoder_.reset();
    stream_.reset();
    if (!backfilled && bytes.size() >= 48) {
      std::memset(bytes.data() + 16, 0, 8);                 // preamble total_length (§3)
      std::memset(bytes.data() + bytes.size() - 16, 0, 8);  // postamble total_length (§7)
    }
    if (reset) start();
    return py::bytes(bytes);
  }

  [[nodiscard]] std::size_t object_count() const noexcept { return encoder_ ? encoder_->object_count() : 0; }

 private:
  void start() {
    stream_ = std::make_unique<std::ostringstream>(std::ios::out | std::ios::binary);
    encoder_.emplace(*stream_, metadata_, options_);
  }
  streaming_encoder& checked() {
    if (!encoder_) throw std::runtime_error("StreamingEncoder already finished");
    return *encoder_;
  }

  global_metadata metadata_;
  encode_options options_;
  std::unique_ptr<std::ostringstream> stream_;
  std::optional<streaming_encoder> encoder_;
};

}  // namespace

void register_streaming(py::module_& m) {
  py::class_<py_streaming_encoder>(m, "StreamingEncoder", R"doc(
StreamingEncoder(global_meta_dict, hash="xxh3", threads=0, allow_nan=False, allow_inf=False,
                 nan_mask_method=None, pos_inf_mask_method=None, neg_inf_mask_method=None,
                 small_mask_threshold_bytes=None, aggregate_hash=None)

Builds one message object by object in the streaming layout (header metadata, data objects, footer
metadata, footer index):

    enc = tensogram.StreamingEncoder({"base": [{"name": "t2m"}]})
    enc.write_object({"type": "ntensor", "shape": [3], "dtype": "float32"}, np.ones(3, np.float32))
    msg = enc.finish_backfilled()

finish() leaves total_length 0 (the form a pipe receives); finish_backfilled() fills it in. After a
finish*() call the encoder is spent (RuntimeError), except for finish_and_reset*(), which start the next
message with the same metadata.
)doc")
      .def(py::init([](const py::object& meta, const py::object& hash, threads_arg threads,
                       strict_bool<"allow_nan"> allow_nan, strict_bool<"allow_inf"> allow_inf,
                       const py::object& nan_m, const py::object& pinf_m, const py::object& ninf_m,
                       const py::object& small, const py::object& aggregate) {
             return py_streaming_encoder(metadata_from_dict(meta),
                                         make_encode_options(hash, threads, allow_nan, allow_inf, nan_m,
                                                             pinf_m, ninf_m, small, aggregate));
           }),
           py::arg("global_meta_dict"), py::arg("hash") = "xxh3", py::arg("threads") = 0,
           py::arg("allow_nan") = false, py::arg("allow_inf") = false,
           py::arg("nan_mask_method") = py::none(), py::arg("pos_inf_mask_method") = py::none(),
           py::arg("neg_inf_mask_method") = py::none(), py::arg("small_mask_threshold_bytes") = py::none(),
           py::arg("aggregate_hash") = py::none())
      .def(
          "write_object",
          [](py_streaming_encoder& e, const py::object& d, const py::object& data) {
            e.write_object(d, data, false);
          },
          py::arg("descriptor_dict"), py::arg("data"),
          "Encodes one object through its pipeline and writes it.")
      .def(
          "write_object_pre_encoded",
          [](py_streaming_encoder& e, const py::object& d, const py::object& data) {
            e.write_object(d, data, true);
          },
          py::arg("descriptor_dict"), py::arg("data"),
          "Writes an already encoded payload (bytes-like) verbatim.")
      .def_property_readonly("object_count", &py_streaming_encoder::object_count)
      .def(
          "finish", [](py_streaming_encoder& e) { return e.finish(false, false); },
          "The message, total_length left 0 (streaming form).")
      .def(
          "finish_backfilled", [](py_streaming_encoder& e) { return e.finish(true, false); },
          "The message with both total_length fields filled in.")
      .def(
          "finish_and_reset", [](py_streaming_encoder& e) { return e.finish(false, true); },
          "finish(), then start the next message with the same metadata.")
      .def(
          "finish_and_reset_backfilled", [](py_streaming_encoder& e) { return e.finish(true, true); },
          "finish_backfilled(), then start the next message with the same metadata.");
}

}  // namespace tensogram::python
