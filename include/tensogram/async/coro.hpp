// <tensogram/async/coro.hpp>: the reference wrapper's C++20 coroutine front
// end (namespace `tensogram::coro`, spec 07 D2.5) over
// <tensogram/async/callback.hpp>.
//
// Every async method returns an `awaiter<T>`; the operation is launched when
// the awaiter is created, not when it is awaited. `co_await` resumes the
// coroutine on the dispatcher thread that completed the operation (or
// continues inline when it had already completed) and throws the typed
// `tensogram::error` on failure. `task<T>` is a lazy coroutine type;
// `block_on` runs one to completion on the calling thread.
#pragma once

#if __cplusplus < 202002L
#error "<tensogram/async/coro.hpp> needs C++20 (coroutines)"
#endif

#include <chrono>
#include <condition_variable>
#include <coroutine>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "tensogram/async/callback.hpp"
#include "tensogram/core/error.hpp"

namespace tensogram::coro {

namespace tac = tensogram::async_callback;

namespace detail {

/// What an awaiter and its operation's callback share: the result, and the
/// coroutine waiting for it.
template <class T>
struct shared_state {
  std::mutex mu;
  std::optional<tac::result<T>> result;
  std::coroutine_handle<> waiter;

  void complete(tac::result<T> r) {
    std::coroutine_handle<> resume;
    {
      const std::lock_guard lock(mu);
      result.emplace(std::move(r));
      resume = std::exchange(waiter, {});
    }
    if (resume) resume.resume();
  }
};

/// Completion signal for block_on, shared so that the finishing thread never
/// touches memory the waiting thread may already have released.
struct done_signal {
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;
};

}  // namespace detail

/// The awaitable result of one launched operation.
template <class T>
class awaiter {
 public:
  explicit awaiter(std::shared_ptr<detail::shared_state<T>> s) noexcept : s_(std::move(s)) {}

  [[nodiscard]] bool await_ready() const noexcept {
    const std::lock_guard lock(s_->mu);
    return s_->result.has_value();
  }
  /// False (continue at once) when the operation completed in the meantime.
  [[nodiscard]] bool await_suspend(std::coroutine_handle<> h) noexcept {
    const std::lock_guard lock(s_->mu);
    if (s_->result.has_value()) return false;
    s_->waiter = h;
    return true;
  }
  T await_resume() {
    tac::result<T> r = std::move(*s_->result);
    if (!r.ok()) std::rethrow_exception(make_error(r.code(), r.message()));
    if constexpr (std::is_void_v<T>) {
      return;
    } else {
      return r.take();
    }
  }

 private:
  std::shared_ptr<detail::shared_state<T>> s_;
};

namespace detail {

/// A new awaiter and the callback that completes it, converting the callback
/// front end's value with `convert`.
template <class T, class From, class Convert>
std::pair<awaiter<T>, std::function<void(tac::result<From>)>> awaitable(Convert convert) {
  auto s = std::make_shared<shared_state<T>>();
  auto cb = [s, convert = std::move(convert)](tac::result<From> r) {
    if (!r.ok()) {
      s->complete(tac::result<T>::err(r.code(), r.message()));
    } else if constexpr (std::is_void_v<T>) {
      s->complete(tac::result<void>::ok_value());
    } else {
      s->complete(tac::result<T>::ok_value(convert(r.take())));
    }
  };
  return {awaiter<T>(std::move(s)), std::move(cb)};
}

template <class T>
std::pair<awaiter<T>, std::function<void(tac::result<T>)>> awaitable() {
  return awaitable<T, T>([](auto&& v) { return std::forward<decltype(v)>(v); });
}

/// The parts of a task's promise that do not depend on its value type.
struct promise_base {
  std::exception_ptr error;
  std::coroutine_handle<> continuation;
  std::shared_ptr<done_signal> signal;

  std::suspend_always initial_suspend() noexcept { return {}; }
  void unhandled_exception() noexcept { error = std::current_exception(); }

  /// At the end: transfer to the awaiting coroutine, or wake block_on.
  struct final_awaiter {
    bool await_ready() noexcept { return false; }
    template <class Promise>
    std::coroutine_handle<> await_suspend(std::coroutine_handle<Promise> h) noexcept {
      promise_base& p = h.promise();
      if (p.continuation) return p.continuation;
      if (const std::shared_ptr<done_signal> s = p.signal) {
        {
          const std::lock_guard lock(s->mu);
          s->done = true;
        }
        s->cv.notify_all();
      }
      return std::noop_coroutine();
    }
    void await_resume() noexcept {}
  };
  final_awaiter final_suspend() noexcept { return {}; }
};

template <class T>
struct value_promise : promise_base {
  std::optional<T> value;
  void return_value(T v) { value.emplace(std::move(v)); }
  T take() { return std::move(*value); }
};

struct void_promise : promise_base {
  void return_void() noexcept {}
  void take() noexcept {}
};

}  // namespace detail

/// A lazy coroutine: it starts when awaited (symmetric transfer) or run by
/// `sync_run`/`block_on`; an exception it throws is rethrown there.
/// Move-only.
template <class T>
class [[nodiscard]] task {
 public:
  struct promise_type
      : std::conditional_t<std::is_void_v<T>, detail::void_promise, detail::value_promise<T>> {
    task get_return_object() { return task(std::coroutine_handle<promise_type>::from_promise(*this)); }
  };

  task(task&& other) noexcept : h_(std::exchange(other.h_, {})) {}
  task& operator=(task&& other) noexcept {
    if (this != &other) {
      if (h_) h_.destroy();
      h_ = std::exchange(other.h_, {});
    }
    return *this;
  }
  task(const task&) = delete;
  task& operator=(const task&) = delete;
  ~task() {
    if (h_) h_.destroy();
  }

  bool await_ready() const noexcept { return false; }
  std::coroutine_handle<> await_suspend(std::coroutine_handle<> awaiting) noexcept {
    h_.promise().continuation = awaiting;
    return h_;
  }
  T await_resume() { return result(); }

  /// Runs the task on this thread until it first suspends, then blocks until
  /// it has finished (its later steps run on dispatcher threads).
  T sync_run() {
    auto signal = std::make_shared<detail::done_signal>();
    h_.promise().signal = signal;
    h_.resume();
    std::unique_lock lock(signal->mu);
    signal->cv.wait(lock, [&] { return signal->done; });
    lock.unlock();
    return result();
  }

 private:
  explicit task(std::coroutine_handle<promise_type> h) noexcept : h_(h) {}
  T result() {
    promise_type& p = h_.promise();
    if (p.error) std::rethrow_exception(p.error);
    return p.take();
  }

  std::coroutine_handle<promise_type> h_;
};

/// Runs `t` to completion on the calling thread.
template <class T>
T block_on(task<T> t) {
  return t.sync_run();
}

/// `tac::async_file` through awaiters. Move-only.
class async_file : public tac::detail::front<tac::async_file> {
 public:
  using millis = std::chrono::milliseconds;

  [[nodiscard]] static awaiter<async_file> open(const std::string& path,
                                                tac::cancellation_token* token = nullptr,
                                                millis timeout = millis::zero()) {
    auto [a, cb] = detail::awaitable<async_file, tac::async_file>(wrap);
    tac::async_file::open(path, std::move(cb), token, timeout);
    return a;
  }
  [[nodiscard]] static awaiter<async_file> open_remote(
      const std::string& url, const std::vector<std::pair<std::string, std::string>>& storage_options,
      bool bidirectional, tac::cancellation_token* token = nullptr, millis timeout = millis::zero()) {
    auto [a, cb] = detail::awaitable<async_file, tac::async_file>(wrap);
    tac::async_file::open_remote(url, storage_options, bidirectional, std::move(cb), token, timeout);
    return a;
  }

  [[nodiscard]] awaiter<std::size_t> message_count(tac::cancellation_token* token = nullptr,
                                                   millis timeout = millis::zero()) const {
    auto [a, cb] = detail::awaitable<std::size_t>();
    impl_->message_count(std::move(cb), token, timeout);
    return a;
  }
  [[nodiscard]] awaiter<tensogram::message> decode_message(std::size_t index,
                                                           tac::cancellation_token* token = nullptr,
                                                           millis timeout = millis::zero()) const {
    auto [a, cb] = detail::awaitable<tensogram::message>();
    impl_->decode_message(index, std::move(cb), token, timeout);
    return a;
  }
  [[nodiscard]] awaiter<tensogram::metadata> decode_metadata(std::size_t index,
                                                             tac::cancellation_token* token = nullptr,
                                                             millis timeout = millis::zero()) const {
    auto [a, cb] = detail::awaitable<tensogram::metadata>();
    impl_->decode_metadata(index, std::move(cb), token, timeout);
    return a;
  }
  [[nodiscard]] awaiter<std::vector<std::uint8_t>> read_message(std::size_t index,
                                                                tac::cancellation_token* token = nullptr,
                                                                millis timeout = millis::zero()) const {
    auto [a, cb] = detail::awaitable<std::vector<std::uint8_t>>();
    impl_->read_message(index, std::move(cb), token, timeout);
    return a;
  }

 private:
  explicit async_file(tac::async_file f) : front(std::move(f)) {}
  static async_file wrap(tac::async_file f) { return async_file(std::move(f)); }
};

/// `tac::async_streaming_encoder` through awaiters. Move-only.
class async_streaming_encoder : public tac::detail::encoder_front {
 public:
  using millis = std::chrono::milliseconds;

  [[nodiscard]] static awaiter<async_streaming_encoder> create(
      const std::string& path, const std::string& metadata_json, const std::string& hash_algo = "xxh3",
      std::uint32_t threads = 0, tac::cancellation_token* token = nullptr, millis timeout = millis::zero()) {
    auto [a, cb] = detail::awaitable<async_streaming_encoder, tac::async_streaming_encoder>(wrap);
    tac::async_streaming_encoder::create(path, metadata_json, std::move(cb), hash_algo, threads, token,
                                         timeout);
    return a;
  }

  [[nodiscard]] awaiter<void> write_object(const std::string& descriptor_json, const std::uint8_t* data,
                                           std::size_t len, tac::cancellation_token* token = nullptr,
                                           millis timeout = millis::zero()) {
    auto [a, cb] = detail::awaitable<void>();
    impl_->write_object(descriptor_json, data, len, std::move(cb), token, timeout);
    return a;
  }
  [[nodiscard]] awaiter<void> write_pre_encoded(const std::string& descriptor_json, const std::uint8_t* data,
                                                std::size_t len, tac::cancellation_token* token = nullptr,
                                                millis timeout = millis::zero()) {
    auto [a, cb] = detail::awaitable<void>();
    impl_->write_pre_encoded(descriptor_json, data, len, std::move(cb), token, timeout);
    return a;
  }
  [[nodiscard]] awaiter<void> write_preceder(const std::string& metadata_json,
                                             tac::cancellation_token* token = nullptr,
                                             millis timeout = millis::zero()) {
    auto [a, cb] = detail::awaitable<void>();
    impl_->write_preceder(metadata_json, std::move(cb), token, timeout);
    return a;
  }
  [[nodiscard]] awaiter<void> finish(bool backfill = true, tac::cancellation_token* token = nullptr,
                                     millis timeout = millis::zero()) {
    auto [a, cb] = detail::awaitable<void>();
    impl_->finish(std::move(cb), backfill, token, timeout);
    return a;
  }

  // try_object_count() and object_count(): encoder_front.

 private:
  explicit async_streaming_encoder(tac::async_streaming_encoder e) : encoder_front(std::move(e)) {}
  static async_streaming_encoder wrap(tac::async_streaming_encoder e) {
    return async_streaming_encoder(std::move(e));
  }
};

/// Awaits `file.message_count()`, then decodes messages 0…n−1 in order and
/// calls `fn(tensogram::message)` on each; stops early when `fn` returns a
/// bool that is false.
template <class Fn>
task<void> async_for_each(async_file& file, Fn fn) {
  const std::size_t n = co_await file.message_count();
  for (std::size_t i = 0; i < n; ++i) {
    tensogram::message m = co_await file.decode_message(i);
    if constexpr (std::is_same_v<std::invoke_result_t<Fn&, tensogram::message>, bool>) {
      if (!fn(std::move(m))) co_return;
    } else {
      fn(std::move(m));
    }
  }
}

}  // namespace tensogram::coro
