// <tensogram/async/callback.hpp>: the reference wrapper's callback front end
// (namespace `tensogram::async_callback`, spec 07 D2.3), with its names and
// signatures, over the C ABI's async runtime (spec 07 C2.5), which runs on
// our io/async thread pool.
//
// Each operation takes a callback that receives a `result<T>`. A launch that
// fails synchronously (a bad argument, a runtime that was shut down) calls
// it inline on the calling thread before the method returns; otherwise it
// is called exactly once on a dispatcher thread. An exception escaping the
// callback terminates the process (the adapters are noexcept). The wrapper
// objects need not outlive their pending operations.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "tensogram.h"
#include "tensogram/message/decode.hpp"
#include "tensogram/message/metadata_view.hpp"

namespace tensogram::async_callback {

/// An operation's outcome: a value, or a C error code and its text. Never
/// throws; `value()`/`take()` on a failed result are undefined, as in the
/// reference. Move-only (the value is held through a std::unique_ptr).
template <class T>
class result {
 public:
  result() = default;
  [[nodiscard]] static result<T> ok_value(T v) {
    result<T> r;
    r.ok_ = true;
    r.value_ = std::make_unique<T>(std::move(v));
    return r;
  }
  [[nodiscard]] static result<T> err(tgm_error code, std::string msg) {
    result<T> r;
    r.code_ = code;
    r.message_ = std::move(msg);
    return r;
  }
  [[nodiscard]] bool ok() const noexcept { return ok_; }
  /// TGM_ERROR_OK for a success (and for a default-constructed result).
  [[nodiscard]] tgm_error code() const noexcept { return code_; }
  [[nodiscard]] const std::string& message() const noexcept { return message_; }
  [[nodiscard]] T& value() noexcept { return *value_; }
  [[nodiscard]] const T& value() const noexcept { return *value_; }
  [[nodiscard]] T take() noexcept { return std::move(*value_); }

 private:
  bool ok_ = false;
  tgm_error code_ = TGM_ERROR_OK;
  std::string message_;
  std::unique_ptr<T> value_;
};

/// The outcome of an operation without a value (copyable).
template <>
class result<void> {
 public:
  result() = default;
  [[nodiscard]] static result<void> ok_value() {
    result<void> r;
    r.ok_ = true;
    return r;
  }
  [[nodiscard]] static result<void> err(tgm_error code, std::string msg) {
    result<void> r;
    r.code_ = code;
    r.message_ = std::move(msg);
    return r;
  }
  [[nodiscard]] bool ok() const noexcept { return ok_; }
  [[nodiscard]] tgm_error code() const noexcept { return code_; }
  [[nodiscard]] const std::string& message() const noexcept { return message_; }

 private:
  bool ok_ = false;
  tgm_error code_ = TGM_ERROR_OK;
  std::string message_;
};

/// Owns a C cancellation token; every operation launched with it becomes
/// Cancelled when it is cancelled. Move-only.
class cancellation_token {
 public:
  cancellation_token() : tok_(tgm_cancellation_token_create()) {}
  void cancel() noexcept { tgm_cancellation_token_cancel(tok_.get()); }
  [[nodiscard]] bool cancelled() const noexcept { return tgm_cancellation_token_is_cancelled(tok_.get()); }
  [[nodiscard]] tgm_cancellation_token_t* raw() noexcept { return tok_.get(); }

 private:
  struct deleter {
    void operator()(tgm_cancellation_token_t* t) const noexcept { tgm_cancellation_token_free(t); }
  };
  std::unique_ptr<tgm_cancellation_token_t, deleter> tok_;
};

/// A file read asynchronously (tgm_async_file_t). Move-only.
class async_file {
 public:
  using millis = std::chrono::milliseconds;

  static void open(const std::string& path, std::function<void(result<async_file>)> cb,
                   cancellation_token* token = nullptr, millis timeout = millis::zero());
  /// `storage_options` as key/value pairs (later duplicates win; empty =
  /// ambient settings); `bidirectional` scans from both ends.
  static void open_remote(const std::string& url,
                          const std::vector<std::pair<std::string, std::string>>& storage_options,
                          bool bidirectional, std::function<void(result<async_file>)> cb,
                          cancellation_token* token = nullptr, millis timeout = millis::zero());

  void message_count(std::function<void(result<std::size_t>)> cb, cancellation_token* token = nullptr,
                     millis timeout = millis::zero()) const;
  /// Host byte order, default threads, non-finite values restored, no hash
  /// verification (the reference's fixed options).
  void decode_message(std::size_t index, std::function<void(result<tensogram::message>)> cb,
                      cancellation_token* token = nullptr, millis timeout = millis::zero()) const;
  void decode_metadata(std::size_t index, std::function<void(result<tensogram::metadata>)> cb,
                       cancellation_token* token = nullptr, millis timeout = millis::zero()) const;
  void read_message(std::size_t index, std::function<void(result<std::vector<std::uint8_t>>)> cb,
                    cancellation_token* token = nullptr, millis timeout = millis::zero()) const;

  [[nodiscard]] tgm_async_file_t* raw() const noexcept { return f_.get(); }

  /// Takes ownership of a handle from tgm_async_task_join_async_file.
  explicit async_file(tgm_async_file_t* f) noexcept : f_(f) {}

 private:
  struct closer {
    void operator()(tgm_async_file_t* f) const noexcept { tgm_async_file_close(f); }
  };
  std::unique_ptr<tgm_async_file_t, closer> f_;
};

/// One message written progressively to a local file
/// (tgm_async_streaming_encoder_t); operations run one at a time, in launch
/// order. Move-only.
class async_streaming_encoder {
 public:
  using millis = std::chrono::milliseconds;

  enum class object_count_status { ok = 0, null_handle = 1, busy = 2, finished = 3 };
  struct object_count_result {
    object_count_status status;
    std::size_t value;
  };

  /// `hash_algo` "" = no hash.
  static void create(const std::string& path, const std::string& metadata_json,
                     std::function<void(result<async_streaming_encoder>)> cb,
                     const std::string& hash_algo = "xxh3", std::uint32_t threads = 0,
                     cancellation_token* token = nullptr, millis timeout = millis::zero());

  /// `data` is copied before the call returns.
  void write_object(const std::string& descriptor_json, const std::uint8_t* data, std::size_t len,
                    std::function<void(result<void>)> cb, cancellation_token* token = nullptr,
                    millis timeout = millis::zero());
  void write_pre_encoded(const std::string& descriptor_json, const std::uint8_t* data, std::size_t len,
                         std::function<void(result<void>)> cb, cancellation_token* token = nullptr,
                         millis timeout = millis::zero());
  void write_preceder(const std::string& metadata_json, std::function<void(result<void>)> cb,
                      cancellation_token* token = nullptr, millis timeout = millis::zero());
  void finish(std::function<void(result<void>)> cb, bool backfill = true, cancellation_token* token = nullptr,
              millis timeout = millis::zero());

  [[nodiscard]] object_count_result try_object_count() const noexcept;
  /// `static_cast<std::size_t>(-1)` unless the count is available now.
  [[nodiscard]] std::size_t object_count() const noexcept;

  [[nodiscard]] tgm_async_streaming_encoder_t* raw() const noexcept { return e_.get(); }

  /// Takes ownership of a handle from
  /// tgm_async_task_join_async_streaming_encoder.
  explicit async_streaming_encoder(tgm_async_streaming_encoder_t* e) noexcept : e_(e) {}

 private:
  struct freer {
    void operator()(tgm_async_streaming_encoder_t* e) const noexcept { tgm_async_streaming_encoder_free(e); }
  };
  std::unique_ptr<tgm_async_streaming_encoder_t, freer> e_;
};

namespace detail {

/// What the classes of the std::future and coroutine front ends share: a
/// move-only handle on the callback object, held through a std::shared_ptr
/// (spec 07 D2.4).
template <class Impl>
class front {
 public:
  front(front&&) noexcept = default;
  front& operator=(front&&) noexcept = default;
  front(const front&) = delete;
  front& operator=(const front&) = delete;

 protected:
  explicit front(Impl impl) : impl_(std::make_shared<Impl>(std::move(impl))) {}
  ~front() = default;

  std::shared_ptr<Impl> impl_;
};

/// The encoder's synchronous members, shared the same way.
class encoder_front : public front<async_streaming_encoder> {
 public:
  using object_count_status = async_streaming_encoder::object_count_status;
  using object_count_result = async_streaming_encoder::object_count_result;
  [[nodiscard]] object_count_result try_object_count() const noexcept { return impl_->try_object_count(); }
  [[nodiscard]] std::size_t object_count() const noexcept { return impl_->object_count(); }

 protected:
  explicit encoder_front(async_streaming_encoder e) : front(std::move(e)) {}
};

}  // namespace detail

/// Sizes the process-wide runtime before its first use (0 = default);
/// throws `invalid_arg_error` when it is already configured or built.
void runtime_configure(std::uint32_t workers = 0, std::uint32_t dispatcher_workers = 0,
                       std::uint64_t multipart_part_size_bytes = 0);
/// Waits up to `timeout` for in-flight work, then shuts the runtime down for
/// good; returns how many tasks had not finished (0 on a second call).
std::uint64_t runtime_shutdown_blocking(std::chrono::milliseconds timeout);

}  // namespace tensogram::async_callback
