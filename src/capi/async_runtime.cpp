// C ABI: the async runtime, cancellation tokens, tasks, joins and completion
// callbacks (spec 04 §C.4 "Async API", spec 07 C2.4–C2.5).
#include <algorithm>
#include <chrono>
#include <thread>
#include <unordered_map>

#include "async.hpp"
#include "handles.hpp"
#include "tensogram/core/error.hpp"
#include "tensogram/core/thread_pool.hpp"

struct tgm_cancellation_token_t : tensogram::capi::handle_tag<0x7467'6d63'746f'6b6e> {  // "tgmctokn"
  tensogram::io::cancellation_token token;
};

struct tgm_async_task_t : tensogram::capi::handle_tag<0x7467'6d61'7461'736b> {  // "tgmatask"
  explicit tgm_async_task_t(std::shared_ptr<tensogram::capi::task_core> c) : core(std::move(c)) {}
  std::shared_ptr<tensogram::capi::task_core> core;
};

namespace tensogram::capi {

namespace {

constexpr const char* token_type = "tgm_cancellation_token_t";
constexpr const char* task_type = "tgm_async_task_t";

// The process-wide async runtime: the second (and last) piece of global
// state the C ABI defines, next to the thread-local last error. One worker
// pool and one dispatcher pool for completion callbacks, built by the first
// launcher and torn down for good by tgm_runtime_shutdown_blocking (spec 07
// C2.5: not built → built → shut down, never rebuilt).
class runtime {
 public:
  // Never destroyed: worker threads may still run at exit, and must not
  // find the runtime gone under them during static destruction.
  static runtime& instance() {
    static runtime* const r = new runtime();
    return *r;
  }

  void configure(std::uint32_t workers, std::uint32_t dispatchers, std::uint64_t part_size) {
    const std::lock_guard lock(mu_);
    if (configured_ || phase_ != phase::not_built) {
      throw invalid_arg_error("tgm_runtime_configure: runtime already configured or built");
    }
    configured_ = true;
    workers_ = workers;
    dispatchers_ = dispatchers;
    part_size_ = part_size;  // kept for the record: unused, as in the reference 0.24
  }

  io::async_executor executor() {
    const std::lock_guard lock(mu_);
    if (phase_ == phase::shut_down) throw io_error("runtime has been shut down");
    if (phase_ == phase::not_built) build();
    return *exec_;
  }

  void track(const std::shared_ptr<task_core>& t) {
    const std::lock_guard lock(mu_);
    live_.emplace(t.get(), t);
  }

  void untrack(const task_core* t) noexcept {
    const std::lock_guard lock(mu_);
    live_.erase(t);
    if (live_.empty()) idle_.notify_all();
  }

  // Runs a completion callback on a dispatcher thread; inline once the
  // dispatchers are gone (after shutdown), so a callback always runs.
  void dispatch(void (*cb)(void*), void* userdata) noexcept {
    {
      const std::lock_guard lock(mu_);
      if (dispatcher_) {
        try {
          dispatcher_->post([cb, userdata] { cb(userdata); });
          return;
        } catch (...) {  // no memory to queue it: run it here rather than lose it
        }
      }
    }
    cb(userdata);
  }

  std::uint64_t shutdown(std::uint64_t timeout_ms) {
    std::vector<std::weak_ptr<task_core>> remaining;
    {
      std::unique_lock lock(mu_);
      if (phase_ == phase::shut_down) return 0;  // idempotent
      const bool built = phase_ == phase::built;
      phase_ = phase::shut_down;  // new launches fail from here on
      if (!built) return 0;
      idle_.wait_for(lock, clamp_ms(timeout_ms), [&] { return live_.empty(); });
      for (const auto& [ptr, weak] : live_) remaining.push_back(weak);
    }
    // What did not finish in time is resolved as cancelled now, so no join
    // blocks forever and registered callbacks still fire (spec 07 C2.5).
    for (const auto& weak : remaining) {
      if (auto t = weak.lock()) t->cancel();
    }
    std::unique_ptr<thread_pool> dispatcher;
    std::optional<io::async_executor> exec;
    {
      const std::lock_guard lock(mu_);
      dispatcher = std::move(dispatcher_);
      exec = std::move(exec_);
      exec_.reset();
    }
    // Runs the callbacks still queued, then joins the dispatcher threads.
    dispatcher.reset();
    // The workers go with the last reference to their pool. When work was
    // still running, a worker may be inside a call that cannot be
    // interrupted (a blocked read): its result is discarded, and it is
    // joined on a thread of its own so that shutdown returns now.
    if (remaining.empty()) {
      exec.reset();
    } else {
      try {
        std::thread([e = std::move(exec)]() mutable { e.reset(); }).detach();
      } catch (...) {
        exec.reset();  // no thread to spare: wait here instead
      }
    }
    return remaining.size();
  }

  static std::chrono::milliseconds clamp_ms(std::uint64_t ms) {
    // Far enough to mean "no deadline", near enough not to overflow
    // steady_clock arithmetic in nanoseconds.
    constexpr std::uint64_t max_ms = 10ULL * 365 * 24 * 3600 * 1000;
    return std::chrono::milliseconds(static_cast<std::int64_t>(std::min(ms, max_ms)));
  }

 private:
  enum class phase : std::uint8_t { not_built, built, shut_down };

  void build() {
    const std::uint32_t cpus = thread_pool::default_threads();
    const std::uint32_t workers = workers_ != 0 ? workers_ : std::min(cpus, 8U);
    const std::uint32_t dispatchers = dispatchers_ != 0 ? dispatchers_ : std::min(cpus, 4U);
    auto pool = std::make_shared<thread_pool>(workers);
    auto dispatcher = std::make_unique<thread_pool>(dispatchers);
    exec_.emplace(std::move(pool));
    dispatcher_ = std::move(dispatcher);
    phase_ = phase::built;
  }

  std::mutex mu_;
  std::condition_variable idle_;
  phase phase_ = phase::not_built;
  bool configured_ = false;
  std::uint32_t workers_ = 0;
  std::uint32_t dispatchers_ = 0;
  std::uint64_t part_size_ = 0;
  std::optional<io::async_executor> exec_;
  std::unique_ptr<thread_pool> dispatcher_;
  // Tasks launched and not yet resolved.
  std::unordered_map<const task_core*, std::weak_ptr<task_core>> live_;
};

}  // namespace

const char* task_kind_name(task_kind k) noexcept {
  switch (k) {
    case task_kind::none: return "void (tgm_async_task_join_void)";
    case task_kind::size: return "size (tgm_async_task_join_size)";
    case task_kind::bytes: return "bytes (tgm_async_task_join_bytes)";
    case task_kind::message: return "message (tgm_async_task_join_message)";
    case task_kind::metadata: return "metadata (tgm_async_task_join_metadata)";
    case task_kind::async_file: return "async file (tgm_async_task_join_async_file)";
    case task_kind::multi_bytes: return "multi bytes (tgm_async_task_join_multi_bytes)";
    case task_kind::encoder: return "async streaming encoder (tgm_async_task_join_async_streaming_encoder)";
  }
  return "?";
}

// ---- task_core ------------------------------------------------------------------

void task_core::link(const io::cancellation_token& caller) {
  link_.emplace(caller.stop_token(), [own = token_]() mutable { own.cancel(); });
}

void task_core::arm(std::future<void> done, std::shared_ptr<std::optional<task_value>> slot) {
  std::unique_lock lock(mu_);
  done_ = std::move(done);
  slot_ = std::move(slot);
  try_resolve(lock);
}

void task_core::settled() {
  std::unique_lock lock(mu_);
  settled_ = true;
  try_resolve(lock);
}

void task_core::try_resolve(std::unique_lock<std::mutex>& lock) {
  if (state_ != state::pending || !settled_ || !done_) return;
  try {
    done_->get();  // ready: settled_ is only set after the future is
    value_ = (*slot_) ? std::move(**slot_) : task_value{};
  } catch (...) {
    error_ = std::current_exception();
  }
  done_.reset();
  slot_.reset();
  state_ = state::ready;
  const bool ok = !error_;
  void (*cb)(void*) = cb_registered_ ? cb_ : nullptr;
  void* userdata = userdata_;
  std::function<void(bool)> hook = std::move(on_resolved_);
  lock.unlock();
  resolved_.notify_all();
  runtime::instance().untrack(this);
  if (hook) hook(ok);
  if (cb != nullptr) runtime::instance().dispatch(cb, userdata);
}

bool task_core::ready() const {
  const std::lock_guard lock(mu_);
  return state_ != state::pending;
}

task_value task_core::join(const char* fn, task_kind expected) {
  std::unique_lock lock(mu_);
  resolved_.wait(lock, [&] { return state_ != state::pending; });
  if (state_ == state::consumed) throw_invalid(fn, "task result already consumed");
  state_ = state::consumed;
  std::optional<task_value> value = std::move(value_);
  value_.reset();
  std::exception_ptr error = std::move(error_);
  error_ = nullptr;
  lock.unlock();
  if (expected != kind_) {
    throw_invalid(fn, std::string("task result type mismatch (expected ") + task_kind_name(expected) +
                          ", the task yields " + task_kind_name(kind_) + "; the result is discarded)");
  }
  if (error) std::rethrow_exception(error);
  return value ? std::move(*value) : task_value{};
}

void task_core::set_completion(const char* fn, void (*cb)(void*), void* userdata) {
  if (cb == nullptr) throw_null(fn, "cb");
  std::unique_lock lock(mu_);
  if (cb_registered_) throw_invalid(fn, "completion callback already registered");
  if (state_ == state::consumed) throw_invalid(fn, "task result already consumed");
  cb_registered_ = true;
  cb_ = cb;
  userdata_ = userdata;
  if (state_ == state::ready) {
    lock.unlock();
    runtime::instance().dispatch(cb, userdata);
  }
}

// ---- launching ------------------------------------------------------------------

io::async_executor runtime_executor() {
  return runtime::instance().executor();
}

tgm_async_task_t* launch_task(const char* fn, task_kind kind, tgm_cancellation_token_t* cancel,
                              std::uint64_t timeout_ms, std::string what, std::function<task_value()> work,
                              const std::function<void(task_core&)>& prepare) {
  const io::cancellation_token* caller = cancel != nullptr ? &live(fn, token_type, cancel).token : nullptr;
  io::async_executor exec = runtime::instance().executor();
  auto core = std::make_shared<task_core>(kind);
  if (prepare) prepare(*core);
  if (caller != nullptr) core->link(*caller);
  auto handle = std::make_unique<tgm_async_task_t>(core);
  auto slot = std::make_shared<std::optional<task_value>>();

  io::async_options opts;
  if (timeout_ms > 0) opts.timeout = runtime::clamp_ms(timeout_ms);
  opts.token = core->token();
  opts.on_settled = [core] { core->settled(); };
  runtime::instance().track(core);
  try {
    std::future<void> done = exec.run(
        std::move(what), [slot, work = std::move(work)] { *slot = work(); }, std::move(opts));
    core->arm(std::move(done), std::move(slot));
  } catch (...) {
    runtime::instance().untrack(core.get());
    throw;
  }
  return handle.release();
}

task_value join_task(const char* fn, tgm_async_task_t* task, task_kind expected) {
  return live(fn, task_type, task).core->join(fn, expected);
}

}  // namespace tensogram::capi

namespace {

namespace capi = tensogram::capi;
using capi::task_kind;

}  // namespace

extern "C" {

tgm_error tgm_runtime_configure(uint32_t workers, uint32_t dispatcher_workers,
                                uint64_t multipart_part_size_bytes) {
  return capi::guarded(
      [&] { capi::runtime::instance().configure(workers, dispatcher_workers, multipart_part_size_bytes); });
}

uint64_t tgm_runtime_shutdown_blocking(uint64_t timeout_ms) {
  return capi::guarded_value<uint64_t>(0, [&] { return capi::runtime::instance().shutdown(timeout_ms); });
}

tgm_cancellation_token_t* tgm_cancellation_token_create(void) {
  return capi::guarded_value<tgm_cancellation_token_t*>(nullptr,
                                                        [] { return new tgm_cancellation_token_t(); });
}

void tgm_cancellation_token_cancel(tgm_cancellation_token_t* tok) {
  if (auto* t = const_cast<tgm_cancellation_token_t*>(
          capi::live_or_null("tgm_cancellation_token_cancel", capi::token_type, tok))) {
    t->token.cancel();  // settles the tasks launched with it, on this thread
  }
}

bool tgm_cancellation_token_is_cancelled(const tgm_cancellation_token_t* tok) {
  const auto* t = capi::live_or_null("tgm_cancellation_token_is_cancelled", capi::token_type, tok);
  return t != nullptr && t->token.is_cancelled();
}

void tgm_cancellation_token_free(tgm_cancellation_token_t* tok) {
  // Tasks launched with the token hold its shared state: freeing is safe.
  capi::free_handle("tgm_cancellation_token_free", capi::token_type, tok);
}

tgm_error tgm_async_task_set_completion(tgm_async_task_t* task, void (*cb)(void*), void* userdata) {
  constexpr const char* fn = "tgm_async_task_set_completion";
  return capi::guarded([&] { capi::live(fn, capi::task_type, task).core->set_completion(fn, cb, userdata); });
}

bool tgm_async_task_is_ready(const tgm_async_task_t* task) {
  return capi::guarded_value(false, [&] {
    const auto* t = capi::live_or_null("tgm_async_task_is_ready", capi::task_type, task);
    return t != nullptr && t->core->ready();
  });
}

void tgm_async_task_cancel(tgm_async_task_t* task) {
  if (const auto* t = capi::live_or_null("tgm_async_task_cancel", capi::task_type, task)) t->core->cancel();
}

void tgm_async_task_free(tgm_async_task_t* task) {
  // Does not cancel: the work and a registered callback still run.
  capi::free_handle("tgm_async_task_free", capi::task_type, task);
}

tgm_error tgm_async_task_join_void(tgm_async_task_t* task) {
  return capi::guarded([&] { (void)capi::join_task("tgm_async_task_join_void", task, task_kind::none); });
}

tgm_error tgm_async_task_join_size(tgm_async_task_t* task, uint64_t* out) {
  constexpr const char* fn = "tgm_async_task_join_size";
  return capi::guarded([&] {
    capi::required(fn, "out", out);  // before waiting: a NULL out does not consume the result
    *out = std::get<std::uint64_t>(capi::join_task(fn, task, task_kind::size));
  });
}

tgm_error tgm_async_task_join_bytes(tgm_async_task_t* task, tgm_bytes_t* out) {
  constexpr const char* fn = "tgm_async_task_join_bytes";
  return capi::guarded([&] {
    capi::required(fn, "out", out);
    const capi::task_value v = capi::join_task(fn, task, task_kind::bytes);
    *out = capi::make_bytes(std::get<tensogram::buffer>(v).bytes());
  });
}

tgm_error tgm_async_task_join_message(tgm_async_task_t* task, tgm_message_t** out) {
  constexpr const char* fn = "tgm_async_task_join_message";
  return capi::guarded([&] {
    capi::required(fn, "out", out);
    capi::task_value v = capi::join_task(fn, task, task_kind::message);
    *out = capi::new_message(std::move(std::get<tensogram::message>(v)));
  });
}

tgm_error tgm_async_task_join_metadata(tgm_async_task_t* task, tgm_metadata_t** out) {
  constexpr const char* fn = "tgm_async_task_join_metadata";
  return capi::guarded([&] {
    capi::required(fn, "out", out);
    const capi::task_value v = capi::join_task(fn, task, task_kind::metadata);
    *out = capi::new_metadata(std::get<tensogram::metadata>(v).global());
  });
}

tgm_error tgm_async_task_join_multi_bytes(tgm_async_task_t* task, tgm_bytes_t** out_array,
                                          size_t* out_count) {
  constexpr const char* fn = "tgm_async_task_join_multi_bytes";
  return capi::guarded([&] {
    capi::required(fn, "out_array", out_array);
    capi::required(fn, "out_count", out_count);
    const capi::task_value v = capi::join_task(fn, task, task_kind::multi_bytes);
    const auto& parts = std::get<std::vector<tensogram::buffer>>(v);
    tgm_bytes_t* array = capi::make_bytes_array(parts.size());
    try {
      for (std::size_t i = 0; i < parts.size(); ++i) array[i] = capi::make_bytes(parts[i].bytes());
    } catch (...) {
      (void)capi::release_bytes_array(array, parts.size());
      throw;
    }
    *out_array = array;
    *out_count = parts.size();
  });
}

}  // extern "C"
