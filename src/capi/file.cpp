// C ABI: files and iterators (spec 04 §C.4 "Files and iterators", spec 07
// C2.4 "File API", "Iterators").
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "capi.hpp"
#include "encode_args.hpp"
#include "file_handle.hpp"
#include "handles.hpp"
#include "tensogram/core/buffer.hpp"
#include "tensogram/core/error.hpp"
#include "tensogram/io/iterators.hpp"

struct tgm_buffer_iter_t : tensogram::capi::handle_tag<0x7467'6d62'6974'6572> {  // "tgmbiter"
  explicit tgm_buffer_iter_t(std::span<const std::byte> bytes) : it(bytes) {}
  tensogram::buffer_iterator it;
};

struct tgm_file_iter_t : tensogram::capi::handle_tag<0x7467'6d66'6974'6572> {  // "tgmfiter"
  explicit tgm_file_iter_t(std::shared_ptr<tensogram::file> f) : file(std::move(f)), it(*file) {}
  std::shared_ptr<tensogram::file> file;  // the iterator may outlive the tgm_file_t
  tensogram::file_iterator it;
};

struct tgm_object_iter_t : tensogram::capi::handle_tag<0x7467'6d6f'6974'6572> {  // "tgmoiter"
  tgm_object_iter_t(tensogram::buffer msg, const tensogram::decode_options& o) : it(std::move(msg), o) {}
  tensogram::object_iterator it;
};

namespace tensogram::capi {

std::shared_ptr<file> open_existing(const std::string& path, scan_mode mode) {
  auto f = std::make_shared<file>(file::open(path, mode));
  (void)f->source().size();
  return f;
}

void check_message_index(file& f, std::size_t index) {
  const std::size_t count = f.message_count();
  // The reference's text and category for the file calls (spec 07 C2.6),
  // checked here too because some calls validate before reaching the file.
  if (index >= count) {
    throw framing_error("message index " + std::to_string(index) +
                        " out of range (count=" + std::to_string(count) + ")");
  }
}

}  // namespace tensogram::capi

namespace {

namespace capi = tensogram::capi;
constexpr const char* buffer_iter_type = "tgm_buffer_iter_t";
constexpr const char* file_iter_type = "tgm_file_iter_t";
constexpr const char* object_iter_type = "tgm_object_iter_t";

tgm_error open_or_create(const char* fn, const char* path, tgm_file_t** out, bool create) {
  return capi::guarded([&] {
    capi::required(fn, "out", out);
    std::string p = capi::text_arg(fn, "path", path);
    auto f = create ? std::make_shared<tensogram::file>(tensogram::file::create(p)) : capi::open_existing(p);
    *out = new tgm_file_t(std::move(f), std::move(p));
  });
}

tgm_error append_encoded(const char* fn, tgm_file_t* file, const char* metadata_json,
                         const uint8_t* const* data_ptrs, const size_t* data_lens, size_t num_objects,
                         const char* hash_algo, uint32_t threads, const TgmEncodeMaskOptions* mask_options) {
  return capi::guarded([&] {
    tgm_file_t& f = capi::live(fn, capi::file_type, file);
    const tensogram::encode_options opts = capi::encode_opts(fn, hash_algo, threads, mask_options);
    const capi::encode_request r =
        capi::parse_encode_request(fn, metadata_json, data_ptrs, data_lens, num_objects);
    f.file->append(r.spec.metadata, r.inputs, opts);
  });
}

// Runs one iterator step; `step` returns false at the end, which is reported
// as TGM_ERROR_END_OF_ITER without touching the last error (spec 07 C2.4).
template <typename Step>
tgm_error iterate(Step step) {
  bool more = false;
  const tgm_error e = capi::guarded([&] { more = step(); });
  if (e != TGM_ERROR_OK) return e;
  return more ? TGM_ERROR_OK : TGM_ERROR_END_OF_ITER;
}

}  // namespace

extern "C" {

tgm_error tgm_file_open(const char* path, tgm_file_t** out) {
  return open_or_create("tgm_file_open", path, out, false);
}

tgm_error tgm_file_create(const char* path, tgm_file_t** out) {
  return open_or_create("tgm_file_create", path, out, true);
}

tgm_error tgm_file_message_count(tgm_file_t* file, size_t* out_count) {
  return capi::guarded([&] {
    capi::required("tgm_file_message_count", "out_count", out_count);
    *out_count = capi::live("tgm_file_message_count", capi::file_type, file).file->message_count();
  });
}

tgm_error tgm_file_decode_message(tgm_file_t* file, size_t index, int32_t native_byte_order, uint32_t threads,
                                  int32_t verify_hash, tgm_message_t** out) {
  constexpr const char* fn = "tgm_file_decode_message";
  return capi::guarded([&] {
    capi::required(fn, "out", out);
    tensogram::file& f = *capi::live(fn, capi::file_type, file).file;
    capi::check_message_index(f, index);
    *out = capi::new_message(
        f.decode_message(index, capi::decode_opts(native_byte_order != 0, threads, verify_hash != 0)));
  });
}

tgm_error tgm_file_read_message(tgm_file_t* file, size_t index, tgm_bytes_t* out) {
  constexpr const char* fn = "tgm_file_read_message";
  return capi::guarded([&] {
    capi::required(fn, "out", out);
    tensogram::file& f = *capi::live(fn, capi::file_type, file).file;
    capi::check_message_index(f, index);
    *out = capi::make_bytes(f.message_bytes(index).bytes());
  });
}

tgm_error tgm_file_append_raw(tgm_file_t* file, const uint8_t* buf, size_t buf_len) {
  constexpr const char* fn = "tgm_file_append_raw";
  return capi::guarded([&] {
    tgm_file_t& f = capi::live(fn, capi::file_type, file);
    f.file->append_raw(capi::bytes_arg(fn, "buf", buf, buf_len));
  });
}

const char* tgm_file_path(const tgm_file_t* file) {
  const tgm_file_t* f = capi::live_or_null("tgm_file_path", capi::file_type, file);
  return f != nullptr ? f->path.c_str() : nullptr;
}

tgm_error tgm_file_append(tgm_file_t* file, const char* metadata_json, const uint8_t* const* data_ptrs,
                          const size_t* data_lens, size_t num_objects, const char* hash_algo,
                          uint32_t threads) {
  return append_encoded("tgm_file_append", file, metadata_json, data_ptrs, data_lens, num_objects, hash_algo,
                        threads, nullptr);
}

tgm_error tgm_file_append_with_options(tgm_file_t* file, const char* metadata_json,
                                       const uint8_t* const* data_ptrs, const size_t* data_lens,
                                       size_t num_objects, const char* hash_algo, uint32_t threads,
                                       const TgmEncodeMaskOptions* mask_options) {
  return append_encoded("tgm_file_append_with_options", file, metadata_json, data_ptrs, data_lens,
                        num_objects, hash_algo, threads, mask_options);
}

void tgm_file_close(tgm_file_t* file) {
  capi::free_handle("tgm_file_close", capi::file_type, file);
}

tgm_error tgm_buffer_iter_create(const uint8_t* buf, size_t buf_len, tgm_buffer_iter_t** out) {
  return capi::guarded([&] {
    capi::required("tgm_buffer_iter_create", "out", out);
    *out = new tgm_buffer_iter_t(capi::bytes_arg("tgm_buffer_iter_create", "buf", buf, buf_len));
  });
}

size_t tgm_buffer_iter_count(const tgm_buffer_iter_t* iter) {
  const tgm_buffer_iter_t* it = capi::live_or_null("tgm_buffer_iter_count", buffer_iter_type, iter);
  return it != nullptr ? it->it.count() : 0;
}

tgm_error tgm_buffer_iter_next(tgm_buffer_iter_t* iter, const uint8_t** out_buf, size_t* out_len) {
  constexpr const char* fn = "tgm_buffer_iter_next";
  return iterate([&] {
    capi::required(fn, "out_buf", out_buf);
    capi::required(fn, "out_len", out_len);
    const uint8_t* data = nullptr;
    size_t len = 0;
    if (!capi::live(fn, buffer_iter_type, iter).it.next(data, len)) return false;
    *out_buf = data;
    *out_len = len;
    return true;
  });
}

void tgm_buffer_iter_free(tgm_buffer_iter_t* iter) {
  capi::free_handle("tgm_buffer_iter_free", buffer_iter_type, iter);
}

tgm_error tgm_file_iter_create(tgm_file_t* file, tgm_file_iter_t** out) {
  return capi::guarded([&] {
    capi::required("tgm_file_iter_create", "out", out);
    *out = new tgm_file_iter_t(capi::live("tgm_file_iter_create", capi::file_type, file).file);
  });
}

tgm_error tgm_file_iter_next(tgm_file_iter_t* iter, tgm_bytes_t* out) {
  constexpr const char* fn = "tgm_file_iter_next";
  return iterate([&] {
    capi::required(fn, "out", out);
    tensogram::buffer message;
    if (!capi::live(fn, file_iter_type, iter).it.next(message)) return false;
    *out = capi::make_bytes(message.bytes());
    return true;
  });
}

void tgm_file_iter_free(tgm_file_iter_t* iter) {
  capi::free_handle("tgm_file_iter_free", file_iter_type, iter);
}

tgm_error tgm_object_iter_create(const uint8_t* buf, size_t buf_len, int32_t native_byte_order,
                                 int32_t verify_hash, tgm_object_iter_t** out) {
  constexpr const char* fn = "tgm_object_iter_create";
  return capi::guarded([&] {
    capi::required(fn, "out", out);
    const auto bytes = capi::bytes_arg(fn, "buf", buf, buf_len);
    // The iterator keeps its own copy: the caller's buffer need not outlive it.
    tensogram::buffer copy = tensogram::buffer::owned(std::vector<std::byte>(bytes.begin(), bytes.end()));
    *out = new tgm_object_iter_t(std::move(copy),
                                 capi::decode_opts(native_byte_order != 0, 0, verify_hash != 0));
  });
}

tgm_error tgm_object_iter_next(tgm_object_iter_t* iter, tgm_message_t** out) {
  constexpr const char* fn = "tgm_object_iter_next";
  return iterate([&] {
    capi::required(fn, "out", out);
    tensogram::message m;
    if (!capi::live(fn, object_iter_type, iter).it.next(m)) return false;
    *out = capi::new_message(std::move(m));
    return true;
  });
}

void tgm_object_iter_free(tgm_object_iter_t* iter) {
  capi::free_handle("tgm_object_iter_free", object_iter_type, iter);
}

}  // extern "C"
