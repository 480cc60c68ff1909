// C ABI: the streaming encoder, one message written object by object to a
// local file (spec 04 §C.4, spec 07 C2.4 "Streaming encoder"), or to memory
// that the caller drains (an extension for the WebAssembly package's
// StreamingEncoder, docs/wasm.md).
#include <memory>
#include <optional>
#include <sstream>
#include <streambuf>
#include <string>
#include <utility>

#include "capi.hpp"
#include "encode_args.hpp"
#include "tensogram/message/streaming_encoder.hpp"

namespace tensogram::capi {

/// Output kept in memory until the caller takes it. Seekable (a string
/// stream): the encoder back-fills total_length, and the message is handed
/// out whole after finish. Not seekable (a streambuf without seekoff): the
/// encoder leaves total_length 0, and each take hands out what was produced
/// since the last one, frame by frame (spec 01 §18).
class memory_output {
 public:
  explicit memory_output(bool seekable)
      : seekable_(seekable), os_(seekable ? static_cast<std::streambuf*>(&text_) : &appender_) {
    os_.exceptions(std::ios::badbit);
  }
  memory_output(const memory_output&) = delete;
  memory_output& operator=(const memory_output&) = delete;
  ~memory_output() = default;

  std::ostream& stream() noexcept { return os_; }
  /// The bytes ready for the caller (and forgets them).
  std::string take(bool finished) {
    if (seekable_) {
      if (!finished || taken_) return {};
      taken_ = true;
      std::string whole = text_.str();
      text_.str({});
      return whole;
    }
    return std::exchange(appender_.bytes, {});
  }

 private:
  struct appending_buffer final : std::streambuf {
    std::string bytes;
    int_type overflow(int_type c) override {
      if (!traits_type::eq_int_type(c, traits_type::eof())) bytes.push_back(traits_type::to_char_type(c));
      return traits_type::not_eof(c);
    }
    std::streamsize xsputn(const char* s, std::streamsize n) override {
      bytes.append(s, static_cast<std::size_t>(n));
      return n;
    }
  };
  bool seekable_;
  bool taken_ = false;
  std::stringbuf text_{std::ios::in | std::ios::out | std::ios::binary};
  appending_buffer appender_;
  std::ostream os_;
};

}  // namespace tensogram::capi

struct tgm_streaming_encoder_t : tensogram::capi::handle_tag<0x7467'6d73'656e'6364> {  // "tgmsencd"
  tgm_streaming_encoder_t(const std::string& path, const std::string& metadata_json,
                          const tensogram::encode_options& o)
      : enc(path, metadata_json, o) {}
  tgm_streaming_encoder_t(std::unique_ptr<tensogram::capi::memory_output> out,
                          const std::string& metadata_json, const tensogram::encode_options& o)
      : memory(std::move(out)), enc(memory->stream(), metadata_json, o) {}
  // Declared before `enc`, which writes to it.
  std::unique_ptr<tensogram::capi::memory_output> memory;
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

tgm_error tgm_streaming_encoder_create_in_memory(const char* metadata_json, const char* hash_algo,
                                                 const TgmEncodeMaskOptions* mask_options, int32_t seekable,
                                                 tgm_streaming_encoder_t** out) {
  constexpr const char* fn = "tgm_streaming_encoder_create_in_memory";
  return capi::guarded([&] {
    capi::required(fn, "out", out);
    const std::string json = capi::text_arg(fn, "metadata_json", metadata_json);
    const tensogram::encode_options opts = capi::encode_opts(fn, hash_algo, 0, mask_options);
    auto memory = std::make_unique<capi::memory_output>(seekable != 0);
    *out = new tgm_streaming_encoder_t(std::move(memory), json, opts);
  });
}

tgm_error tgm_streaming_encoder_take(tgm_streaming_encoder_t* enc, tgm_bytes_t* out) {
  constexpr const char* fn = "tgm_streaming_encoder_take";
  return capi::guarded([&] {
    capi::required(fn, "out", out);
    tgm_streaming_encoder_t& e = capi::live(fn, encoder_type, enc);
    if (!e.memory) capi::throw_invalid(fn, "the encoder writes to a file, not to memory");
    *out = capi::make_bytes(e.memory->take(e.finished));
  });
}

uint64_t tgm_streaming_encoder_bytes_written(const tgm_streaming_encoder_t* enc) {
  const tgm_streaming_encoder_t* e =
      capi::live_or_null("tgm_streaming_encoder_bytes_written", encoder_type, enc);
  return e != nullptr ? e->enc.bytes_written() : 0;
}

void tgm_streaming_encoder_free(tgm_streaming_encoder_t* enc) {
  capi::free_handle("tgm_streaming_encoder_free", encoder_type, enc);
}

}  // extern "C"
