// tensogram::async_callback (include/tensogram/async/callback.hpp, spec 07
// D2.3): each operation launches the matching tgm_async_* task and registers
// a completion callback that joins it on the dispatcher thread, captures the
// last-error text there, frees the task and calls the user's callback.
#include "tensogram/async/callback.hpp"

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "handles.hpp"
#include "tensogram/core/error.hpp"

namespace tensogram::async_callback {

namespace {

// The text of a failure just reported on this thread (spec 07 D2.2: the
// last error, else the code's name).
std::string failure_text(tgm_error code) {
  const char* text = tgm_last_error();
  return text != nullptr ? std::string(text) : std::string(tgm_error_string(code));
}

template <class T>
using callback = std::function<void(result<T>)>;
template <class T>
using joiner = result<T> (*)(tgm_async_task_t*);

template <class T>
struct pending {
  tgm_async_task_t* task;
  callback<T> cb;
  joiner<T> join;
};

template <class T>
void on_complete(void* userdata) noexcept {
  const std::unique_ptr<pending<T>> p(static_cast<pending<T>*>(userdata));
  result<T> r = p->join(p->task);
  tgm_async_task_free(p->task);
  p->cb(std::move(r));
}

// Hands a launched task to the dispatcher, or reports a failed launch inline.
template <class T>
void deliver(tgm_error launched, tgm_async_task_t* task, callback<T> cb, joiner<T> join) noexcept {
  if (launched != TGM_ERROR_OK) {
    cb(result<T>::err(launched, failure_text(launched)));
    return;
  }
  // Owned by on_complete from here on: it may run (and free it) before
  // set_completion returns.
  pending<T>* p = std::make_unique<pending<T>>(pending<T>{task, std::move(cb), join}).release();
  const tgm_error e = tgm_async_task_set_completion(task, &on_complete<T>, p);
  if (e != TGM_ERROR_OK) {
    const std::unique_ptr<pending<T>> back(p);
    std::string text = failure_text(e);
    tgm_async_task_free(task);
    back->cb(result<T>::err(e, std::move(text)));
  }
}

template <class T, class Get>
result<T> joined(tgm_error e, Get&& get) {
  if (e != TGM_ERROR_OK) return result<T>::err(e, failure_text(e));
  return result<T>::ok_value(std::forward<Get>(get)());
}

result<void> join_void(tgm_async_task_t* t) {
  const tgm_error e = tgm_async_task_join_void(t);
  return e == TGM_ERROR_OK ? result<void>::ok_value() : result<void>::err(e, failure_text(e));
}

result<std::size_t> join_size(tgm_async_task_t* t) {
  std::uint64_t n = 0;
  const tgm_error e = tgm_async_task_join_size(t, &n);
  return joined<std::size_t>(e, [&] { return static_cast<std::size_t>(n); });
}

result<std::vector<std::uint8_t>> join_bytes(tgm_async_task_t* t) {
  tgm_bytes_t b{nullptr, 0};
  const tgm_error e = tgm_async_task_join_bytes(t, &b);
  return joined<std::vector<std::uint8_t>>(e, [&] {
    std::vector<std::uint8_t> out(b.data, b.data + b.len);
    tgm_bytes_free(b);
    return out;
  });
}

result<tensogram::message> join_message(tgm_async_task_t* t) {
  tgm_message_t* m = nullptr;
  const tgm_error e = tgm_async_task_join_message(t, &m);
  return joined<tensogram::message>(e, [&] {
    tensogram::message out = std::move(m->msg);
    tgm_message_free(m);
    return out;
  });
}

result<tensogram::metadata> join_metadata(tgm_async_task_t* t) {
  tgm_metadata_t* m = nullptr;
  const tgm_error e = tgm_async_task_join_metadata(t, &m);
  return joined<tensogram::metadata>(e, [&] {
    tensogram::metadata out = m->meta;
    tgm_metadata_free(m);
    return out;
  });
}

result<async_file> join_file(tgm_async_task_t* t) {
  tgm_async_file_t* f = nullptr;
  const tgm_error e = tgm_async_task_join_async_file(t, &f);
  return joined<async_file>(e, [&] { return async_file(f); });
}

result<async_streaming_encoder> join_encoder(tgm_async_task_t* t) {
  tgm_async_streaming_encoder_t* enc = nullptr;
  const tgm_error e = tgm_async_task_join_async_streaming_encoder(t, &enc);
  return joined<async_streaming_encoder>(e, [&] { return async_streaming_encoder(enc); });
}

tgm_cancellation_token_t* raw_token(cancellation_token* token) noexcept {
  return token != nullptr ? token->raw() : nullptr;
}

std::uint64_t millis_arg(std::chrono::milliseconds timeout) noexcept {
  return timeout.count() > 0 ? static_cast<std::uint64_t>(timeout.count()) : 0;
}

}  // namespace

// ---- async_file -------------------------------------------------------------------------------

void async_file::open(const std::string& path, std::function<void(result<async_file>)> cb,
                      cancellation_token* token, millis timeout) {
  tgm_async_task_t* t = nullptr;
  const tgm_error e = tgm_async_file_open(path.c_str(), raw_token(token), millis_arg(timeout), &t);
  deliver<async_file>(e, t, std::move(cb), &join_file);
}

void async_file::open_remote(const std::string& url,
                             const std::vector<std::pair<std::string, std::string>>& storage_options,
                             bool bidirectional, std::function<void(result<async_file>)> cb,
                             cancellation_token* token, millis timeout) {
  std::vector<const char*> keys;
  std::vector<const char*> values;
  for (const auto& [k, v] : storage_options) {
    keys.push_back(k.c_str());
    values.push_back(v.c_str());
  }
  tgm_async_task_t* t = nullptr;
  const tgm_error e = tgm_async_file_open_remote(url.c_str(), keys.data(), values.data(), keys.size(),
                                                 bidirectional, raw_token(token), millis_arg(timeout), &t);
  deliver<async_file>(e, t, std::move(cb), &join_file);
}

void async_file::message_count(std::function<void(result<std::size_t>)> cb, cancellation_token* token,
                               millis timeout) const {
  tgm_async_task_t* t = nullptr;
  const tgm_error e = tgm_async_file_message_count(f_.get(), raw_token(token), millis_arg(timeout), &t);
  deliver<std::size_t>(e, t, std::move(cb), &join_size);
}

void async_file::decode_message(std::size_t index, std::function<void(result<tensogram::message>)> cb,
                                cancellation_token* token, millis timeout) const {
  tgm_async_task_t* t = nullptr;
  const tgm_error e = tgm_async_file_decode_message(f_.get(), index, true, 0, true, false, raw_token(token),
                                                    millis_arg(timeout), &t);
  deliver<tensogram::message>(e, t, std::move(cb), &join_message);
}

void async_file::decode_metadata(std::size_t index, std::function<void(result<tensogram::metadata>)> cb,
                                 cancellation_token* token, millis timeout) const {
  tgm_async_task_t* t = nullptr;
  const tgm_error e =
      tgm_async_file_decode_metadata(f_.get(), index, raw_token(token), millis_arg(timeout), &t);
  deliver<tensogram::metadata>(e, t, std::move(cb), &join_metadata);
}

void async_file::read_message(std::size_t index, std::function<void(result<std::vector<std::uint8_t>>)> cb,
                              cancellation_token* token, millis timeout) const {
  tgm_async_task_t* t = nullptr;
  const tgm_error e = tgm_async_file_read_message(f_.get(), index, raw_token(token), millis_arg(timeout), &t);
  deliver<std::vector<std::uint8_t>>(e, t, std::move(cb), &join_bytes);
}

// ---- async_streaming_encoder ------------------------------------------------------------------

void async_streaming_encoder::create(const std::string& path, const std::string& metadata_json,
                                     std::function<void(result<async_streaming_encoder>)> cb,
                                     const std::string& hash_algo, std::uint32_t threads,
                                     cancellation_token* token, millis timeout) {
  tgm_async_task_t* t = nullptr;
  const tgm_error e = tgm_async_streaming_encoder_create(path.c_str(), metadata_json.c_str(),
                                                         hash_algo.empty() ? nullptr : hash_algo.c_str(),
                                                         threads, raw_token(token), millis_arg(timeout), &t);
  deliver<async_streaming_encoder>(e, t, std::move(cb), &join_encoder);
}

void async_streaming_encoder::write_object(const std::string& descriptor_json, const std::uint8_t* data,
                                           std::size_t len, std::function<void(result<void>)> cb,
                                           cancellation_token* token, millis timeout) {
  tgm_async_task_t* t = nullptr;
  const tgm_error e = tgm_async_streaming_encoder_write_object(e_.get(), descriptor_json.c_str(), data, len,
                                                               raw_token(token), millis_arg(timeout), &t);
  deliver<void>(e, t, std::move(cb), &join_void);
}

void async_streaming_encoder::write_pre_encoded(const std::string& descriptor_json, const std::uint8_t* data,
                                                std::size_t len, std::function<void(result<void>)> cb,
                                                cancellation_token* token, millis timeout) {
  tgm_async_task_t* t = nullptr;
  const tgm_error e = tgm_async_streaming_encoder_write_pre_encoded(
      e_.get(), descriptor_json.c_str(), data, len, raw_token(token), millis_arg(timeout), &t);
  deliver<void>(e, t, std::move(cb), &join_void);
}

void async_streaming_encoder::write_preceder(const std::string& metadata_json,
                                             std::function<void(result<void>)> cb, cancellation_token* token,
                                             millis timeout) {
  tgm_async_task_t* t = nullptr;
  const tgm_error e = tgm_async_streaming_encoder_write_preceder(e_.get(), metadata_json.c_str(),
                                                                 raw_token(token), millis_arg(timeout), &t);
  deliver<void>(e, t, std::move(cb), &join_void);
}

void async_streaming_encoder::finish(std::function<void(result<void>)> cb, bool backfill,
                                     cancellation_token* token, millis timeout) {
  tgm_async_task_t* t = nullptr;
  const tgm_error e =
      tgm_async_streaming_encoder_finish(e_.get(), backfill, raw_token(token), millis_arg(timeout), &t);
  deliver<void>(e, t, std::move(cb), &join_void);
}

async_streaming_encoder::object_count_result async_streaming_encoder::try_object_count() const noexcept {
  std::size_t n = 0;
  const TgmObjectCountStatus s = tgm_async_streaming_encoder_try_object_count(e_.get(), &n);
  return {static_cast<object_count_status>(s), s == TGM_OBJECT_COUNT_STATUS_OK ? n : 0};
}

std::size_t async_streaming_encoder::object_count() const noexcept {
  const object_count_result r = try_object_count();
  return r.status == object_count_status::ok ? r.value : static_cast<std::size_t>(-1);
}

// ---- runtime ----------------------------------------------------------------------------------

void runtime_configure(std::uint32_t workers, std::uint32_t dispatcher_workers,
                       std::uint64_t multipart_part_size_bytes) {
  const tgm_error e = tgm_runtime_configure(workers, dispatcher_workers, multipart_part_size_bytes);
  if (e != TGM_ERROR_OK) std::rethrow_exception(make_error(e, failure_text(e)));
}

std::uint64_t runtime_shutdown_blocking(std::chrono::milliseconds timeout) {
  return tgm_runtime_shutdown_blocking(millis_arg(timeout));
}

}  // namespace tensogram::async_callback
