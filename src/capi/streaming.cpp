// C ABI: the streaming encoder, one message written object by object to a
// local file (spec 04 §C.4, spec 07 C2.4 "Streaming encoder").
#include <optional>
#include <string>

#include "capi.hpp"
#include "encode_args.hpp"
#include "tensogram/message/streaming_encoder.hpp"

struct tgm_streaming_encoder_t : tensogram::capi::handle_tag<0x7467'6d73'656e'6364> {  // "tgmsencd"
  tgm_streaming_encoder_t(const std::string& path, const std::string& metadata_json,
                          const tensogram::encode_options& o)
      : enc(path, metadata_json, o) {}
  tensogram::streaming_encoder enc;
  bool finished = false;
};

namespace {

namespace capi = tensogram::capi;
constexpr const char* encoder_type = "tgm_streaming_encoder_t";

// Options are checked before the file is touched (the C++ encoder validates
// them before opening its sink, and writes to a temporary file renamed into
// place by finish): a rejected mask method leaves no file behind, unlike the
// reference (spec 07 C2.4; docs/c-api.md).
tgm_error create(const char* fn, const char* path, const char* metadata_json, const char* hash_algo,
                 uint32_t threads, const TgmEncodeMaskOptions* mask_options, tgm_streaming_encoder_t** out) {
  return capi::guarded([&] {
    capi::required(fn, "out", out);
    const std::string p = capi::text_arg(fn, "path", path);
    const std::string json = capi::text_arg(fn, "metadata_json", metadata_json);
    const tensogram::encode_options opts = capi::encode_opts(fn, hash_algo, threads, mask_options);
    *out = new tgm_streaming_encoder_t(p, json, opts);
  });
}

template <typename Write>
tgm_error write(const char* fn, tgm_streaming_encoder_t* enc, const char* descriptor_json,
                const uint8_t* data, size_t data_len, Write w) {
  return capi::guarded([&] {
    tgm_streaming_encoder_t& e = capi::live(fn, encoder_type, enc);
    const std::string json = capi::text_arg(fn, "descriptor_json", descriptor_json);
    // `data` must be non-NULL even for an empty object (spec 07 C2.4).
    const auto bytes = capi::bytes_arg(fn, "data", data, data_len);
    w(e.enc, json, reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
  });
}

}  // namespace

extern "C" {

tgm_error tgm_streaming_encoder_create(const char* path, const char* metadata_json, const char* hash_algo,
                                       uint32_t threads, tgm_streaming_encoder_t** out) {
  return create("tgm_streaming_encoder_create", path, metadata_json, hash_algo, threads, nullptr, out);
}

tgm_error tgm_streaming_encoder_create_with_options(const char* path, const char* metadata_json,
                                                    const char* hash_algo, uint32_t threads,
                                                    const TgmEncodeMaskOptions* mask_options,
                                                    tgm_streaming_encoder_t** out) {
  return create("tgm_streaming_encoder_create_with_options", path, metadata_json, hash_algo, threads,
                mask_options, out);
}

tgm_error tgm_streaming_encoder_write_preceder(tgm_streaming_encoder_t* enc, const char* metadata_json) {
  constexpr const char* fn = "tgm_streaming_encoder_write_preceder";
  return capi::guarded([&] {
    tgm_streaming_encoder_t& e = capi::live(fn, encoder_type, enc);
    e.enc.write_preceder(capi::text_arg(fn, "metadata_json", metadata_json));
  });
}

tgm_error tgm_streaming_encoder_write(tgm_streaming_encoder_t* enc, const char* descriptor_json,
                                      const uint8_t* data, size_t data_len) {
  return write("tgm_streaming_encoder_write", enc, descriptor_json, data, data_len,
               [](tensogram::streaming_encoder& e, const std::string& d, const std::uint8_t* p,
                  std::size_t n) { e.write_object(d, p, n); });
}

tgm_error tgm_streaming_encoder_write_pre_encoded(tgm_streaming_encoder_t* enc, const char* descriptor_json,
                                                  const uint8_t* data, size_t data_len) {
  return write("tgm_streaming_encoder_write_pre_encoded", enc, descriptor_json, data, data_len,
               [](tensogram::streaming_encoder& e, const std::string& d, const std::uint8_t* p,
                  std::size_t n) { e.write_object_pre_encoded(d, p, n); });
}

size_t tgm_streaming_encoder_count(const tgm_streaming_encoder_t* enc) {
  const tgm_streaming_encoder_t* e = capi::live_or_null("tgm_streaming_encoder_count", encoder_type, enc);
  return e != nullptr && !e->finished ? e->enc.object_count() : 0;
}

tgm_error tgm_streaming_encoder_finish(tgm_streaming_encoder_t* enc) {
  return capi::guarded([&] {
    tgm_streaming_encoder_t& e = capi::live("tgm_streaming_encoder_finish", encoder_type, enc);
    (void)e.enc.finish();  // a second finish throws invalid_arg_error "... already finished"
    e.finished = true;
  });
}

void tgm_streaming_encoder_free(tgm_streaming_encoder_t* enc) {
  capi::free_handle("tgm_streaming_encoder_free", encoder_type, enc);
}

}  // extern "C"
