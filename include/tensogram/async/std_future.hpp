// <tensogram/async/std_future.hpp>: the reference wrapper's std::future front
// end (namespace `tensogram::stdfuture`, spec 07 D2.4): the classes and
// methods of <tensogram/async/callback.hpp> without the callback, each
// returning a std::future. Failures arrive from `.get()` as the typed
// `tensogram::error` hierarchy (`make_error`, spec 07 D2.2).
//
// Our own future-based API, with per-call pools and options, is
// `tensogram::io::async_file` in <tensogram/io/async.hpp>.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <future>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "tensogram/async/callback.hpp"
#include "tensogram/core/error.hpp"

namespace tensogram::stdfuture {

namespace tac = tensogram::async_callback;

namespace detail {

/// A callback that settles `promise` with the result, converting the value
/// with `convert` (the callback classes → ours).
template <class T, class From, class Convert>
std::function<void(tac::result<From>)> settle(std::shared_ptr<std::promise<T>> promise, Convert convert) {
  return [promise = std::move(promise), convert = std::move(convert)](tac::result<From> r) {
    if (!r.ok()) {
      promise->set_exception(make_error(r.code(), r.message()));
      return;
    }
    if constexpr (std::is_void_v<T>) {
      promise->set_value();
    } else {
      promise->set_value(convert(r.take()));
    }
  };
}

template <class T>
std::function<void(tac::result<T>)> settle(std::shared_ptr<std::promise<T>> promise) {
  return settle<T, T>(std::move(promise), [](auto&& v) { return std::forward<decltype(v)>(v); });
}

inline std::function<void(tac::result<void>)> settle_void(std::shared_ptr<std::promise<void>> promise) {
  return settle<void, void>(std::move(promise), [] {});
}

}  // namespace detail

/// `tac::async_file` through futures. Move-only.
class async_file : public tac::detail::front<tac::async_file> {
 public:
  using millis = std::chrono::milliseconds;

  [[nodiscard]] static std::future<async_file> open(const std::string& path,
                                                    tac::cancellation_token* token = nullptr,
                                                    millis timeout = millis::zero()) {
    auto p = std::make_shared<std::promise<async_file>>();
    std::future<async_file> f = p->get_future();
    tac::async_file::open(path, detail::settle<async_file, tac::async_file>(p, wrap), token, timeout);
    return f;
  }
  [[nodiscard]] static std::future<async_file> open_remote(
      const std::string& url, const std::vector<std::pair<std::string, std::string>>& storage_options,
      bool bidirectional, tac::cancellation_token* token = nullptr, millis timeout = millis::zero()) {
    auto p = std::make_shared<std::promise<async_file>>();
    std::future<async_file> f = p->get_future();
    tac::async_file::open_remote(url, storage_options, bidirectional,
                                 detail::settle<async_file, tac::async_file>(p, wrap), token, timeout);
    return f;
  }

  [[nodiscard]] std::future<std::size_t> message_count(tac::cancellation_token* token = nullptr,
                                                       millis timeout = millis::zero()) const {
    auto p = std::make_shared<std::promise<std::size_t>>();
    std::future<std::size_t> f = p->get_future();
    impl_->message_count(detail::settle(p), token, timeout);
    return f;
  }
  [[nodiscard]] std::future<tensogram::message> decode_message(std::size_t index,
                                                               tac::cancellation_token* token = nullptr,
                                                               millis timeout = millis::zero()) const {
    auto p = std::make_shared<std::promise<tensogram::message>>();
    std::future<tensogram::message> f = p->get_future();
    impl_->decode_message(index, detail::settle(p), token, timeout);
    return f;
  }
  [[nodiscard]] std::future<tensogram::metadata> decode_metadata(std::size_t index,
                                                                 tac::cancellation_token* token = nullptr,
                                                                 millis timeout = millis::zero()) const {
    auto p = std::make_shared<std::promise<tensogram::metadata>>();
    std::future<tensogram::metadata> f = p->get_future();
    impl_->decode_metadata(index, detail::settle(p), token, timeout);
    return f;
  }
  [[nodiscard]] std::future<std::vector<std::uint8_t>> read_message(std::size_t index,
                                                                    tac::cancellation_token* token = nullptr,
                                                                    millis timeout = millis::zero()) const {
    auto p = std::make_shared<std::promise<std::vector<std::uint8_t>>>();
    std::future<std::vector<std::uint8_t>> f = p->get_future();
    impl_->read_message(index, detail::settle(p), token, timeout);
    return f;
  }

  /// The callback object this wraps.
  [[nodiscard]] const tac::async_file& callback_file() const noexcept { return *impl_; }

 private:
  explicit async_file(tac::async_file f) : front(std::move(f)) {}
  static async_file wrap(tac::async_file f) { return async_file(std::move(f)); }
};

/// `tac::async_streaming_encoder` through futures. Move-only.
class async_streaming_encoder : public tac::detail::encoder_front {
 public:
  using millis = std::chrono::milliseconds;

  [[nodiscard]] static std::future<async_streaming_encoder> create(
      const std::string& path, const std::string& metadata_json, const std::string& hash_algo = "xxh3",
      std::uint32_t threads = 0, tac::cancellation_token* token = nullptr, millis timeout = millis::zero()) {
    auto p = std::make_shared<std::promise<async_streaming_encoder>>();
    std::future<async_streaming_encoder> f = p->get_future();
    tac::async_streaming_encoder::create(
        path, metadata_json, detail::settle<async_streaming_encoder, tac::async_streaming_encoder>(p, wrap),
        hash_algo, threads, token, timeout);
    return f;
  }

  [[nodiscard]] std::future<void> write_object(const std::string& descriptor_json, const std::uint8_t* data,
                                               std::size_t len, tac::cancellation_token* token = nullptr,
                                               millis timeout = millis::zero()) {
    auto p = std::make_shared<std::promise<void>>();
    std::future<void> f = p->get_future();
    impl_->write_object(descriptor_json, data, len, detail::settle_void(p), token, timeout);
    return f;
  }
  [[nodiscard]] std::future<void> write_pre_encoded(const std::string& descriptor_json,
                                                    const std::uint8_t* data, std::size_t len,
                                                    tac::cancellation_token* token = nullptr,
                                                    millis timeout = millis::zero()) {
    auto p = std::make_shared<std::promise<void>>();
    std::future<void> f = p->get_future();
    impl_->write_pre_encoded(descriptor_json, data, len, detail::settle_void(p), token, timeout);
    return f;
  }
  [[nodiscard]] std::future<void> write_preceder(const std::string& metadata_json,
                                                 tac::cancellation_token* token = nullptr,
                                                 millis timeout = millis::zero()) {
    auto p = std::make_shared<std::promise<void>>();
    std::future<void> f = p->get_future();
    impl_->write_preceder(metadata_json, detail::settle_void(p), token, timeout);
    return f;
  }
  [[nodiscard]] std::future<void> finish(bool backfill = true, tac::cancellation_token* token = nullptr,
                                         millis timeout = millis::zero()) {
    auto p = std::make_shared<std::promise<void>>();
    std::future<void> f = p->get_future();
    impl_->finish(detail::settle_void(p), backfill, token, timeout);
    return f;
  }

  // try_object_count() and object_count(): encoder_front.

 private:
  explicit async_streaming_encoder(tac::async_streaming_encoder e) : encoder_front(std::move(e)) {}
  static async_streaming_encoder wrap(tac::async_streaming_encoder e) {
    return async_streaming_encoder(std::move(e));
  }
};

}  // namespace tensogram::stdfuture
