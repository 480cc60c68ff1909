#include "tensogram/io/async.hpp"

#include <atomic>
#include <condition_variable>
#include <exception>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <system_error>
#include <thread>
#include <type_traits>

#include "tensogram/core/error.hpp"

namespace tensogram::io {

namespace {

using steady = std::chrono::steady_clock;

// One pending operation's "settle once" state. Three parties race to settle
// it: the worker with the result, the token's callback with
// `cancelled_error`, the deadline watcher with `timeout_error`. The first
// wins (`settled_`) and is the only one to touch the promise; the others do
// nothing, which is how a worker's late result gets discarded.
class pending_base {
 public:
  pending_base(std::string what, std::function<void()> on_settled)
      : what_(std::move(what)), on_settled_(std::move(on_settled)) {}
  pending_base(const pending_base&) = delete;
  pending_base& operator=(const pending_base&) = delete;
  virtual ~pending_base() = default;

  [[nodiscard]] bool settled() const noexcept { return settled_.load(std::memory_order_acquire); }

  void cancel() noexcept {
    fail_with([&] { return cancelled_error(what_ + " was cancelled"); });
  }
  void expire(std::chrono::milliseconds timeout) noexcept {
    fail_with([&] {
      return timeout_error(what_ + " did not complete within " + std::to_string(timeout.count()) + " ms");
    });
  }

  virtual void fail(std::exception_ptr e) noexcept = 0;

 protected:
  // True for exactly one caller.
  bool claim() noexcept { return !settled_.exchange(true, std::memory_order_acq_rel); }
  // Called by the claimant once the promise is set (async_options::on_settled).
  // The hook is released right away: it may own what waits for this
  // operation (the C API's task), which need not live as long as the pool
  // job holding the operation.
  void notify() noexcept {
    std::function<void()> hook = std::move(on_settled_);
    if (!hook) return;
    try {
      hook();
    } catch (...) {  // documented as must-not-throw; never let it unwind into a worker
    }
  }

 private:
  template <typename Make>
  void fail_with(Make make) noexcept {
    if (settled()) return;  // spare building a message nobody will see
    try {
      fail(std::make_exception_ptr(make()));
    } catch (...) {
      fail(std::current_exception());  // the message could not be built (bad_alloc)
    }
  }

  std::string what_;
  std::function<void()> on_settled_;  // touched only by the claimant
  std::atomic<bool> settled_{false};
};

// The token's callback. It holds the operation weakly: the registration is a
// member of the operation, and a strong reference would keep it alive forever.
struct canceller {
  std::weak_ptr<pending_base> target;
  void operator()() const noexcept {
    if (auto op = target.lock()) op->cancel();
  }
};

template <typename T>
class pending final : public pending_base {
 public:
  using pending_base::pending_base;

  [[nodiscard]] std::future<T> future() { return promise_.get_future(); }

  // No argument for T = void.
  template <typename... V>
  void succeed(V&&... value) {
    if (!claim()) return;
    promise_.set_value(std::forward<V>(value)...);
    notify();
  }
  void fail(std::exception_ptr e) noexcept override {
    if (!claim()) return;
    promise_.set_exception(std::move(e));
    notify();
  }

  // Registered after construction (it needs the shared_ptr); unregistered
  // when the operation is destroyed.
  std::optional<std::stop_callback<canceller>> on_cancel;

 private:
  std::promise<T> promise_;
};

// Expires operations at their deadlines from one thread, started on the
// first operation with a timeout. Entries hold operations weakly, so an
// entry of a finished operation costs nothing until its worker removes it.
// The thread owns the watcher's state rather than the watcher: the last
// reference to an operation can be dropped on that thread, which can release
// the last async_file (an `open` result nobody collected) and so destroy the
// watcher from its own thread; it is then detached instead of joined.
class deadline_watcher {
 public:
  using key = std::pair<steady::time_point, std::uint64_t>;

  deadline_watcher() = default;
  deadline_watcher(const deadline_watcher&) = delete;
  deadline_watcher& operator=(const deadline_watcher&) = delete;
  ~deadline_watcher() {
    {
      const std::lock_guard lock(state_->mutex);
      state_->stopping = true;
    }
    state_->wake.notify_all();
    if (!thread_.joinable()) return;
    if (thread_.get_id() == std::this_thread::get_id()) {
      thread_.detach();
    } else {
      thread_.join();
    }
  }

  key add(std::chrono::milliseconds timeout, std::weak_ptr<pending_base> op) {
    const std::lock_guard lock(state_->mutex);
    auto& entries = state_->entries;
    // Started before the entry is added, so a failure to start leaves no
    // entry behind.
    const bool started = thread_.joinable();
    if (!started) {
      try {
        thread_ = std::thread([s = state_] { run(*s); });
      } catch (const std::system_error& e) {
        throw io_error(std::string("async deadline watcher: cannot start its thread: ") + e.what());
      }
    }
    const key k{steady::now() + timeout, state_->next_id++};
    const bool earliest = entries.empty() || k < entries.begin()->first;
    entries.emplace(k, entry{std::move(op), timeout});
    if (started && earliest) state_->wake.notify_one();
    return k;
  }

  void remove(const key& k) noexcept {
    const std::lock_guard lock(state_->mutex);
    state_->entries.erase(k);
  }

 private:
  struct entry {
    std::weak_ptr<pending_base> op;
    std::chrono::milliseconds timeout;
  };
  struct state {
    std::mutex mutex;
    std::condition_variable wake;
    std::map<key, entry> entries;
    std::uint64_t next_id = 0;
    bool stopping = false;
  };

  static void run(state& s) {
    std::unique_lock lock(s.mutex);
    while (!s.stopping) {
      if (s.entries.empty()) {
        s.wake.wait(lock);
        continue;
      }
      const auto first = s.entries.begin()->first.first;
      if (steady::now() < first) {
        s.wake.wait_until(lock, first);
        continue;
      }
      std::vector<entry> due;
      const auto now = steady::now();
      while (!s.entries.empty() && s.entries.begin()->first.first <= now) {
        due.push_back(std::move(s.entries.begin()->second));
        s.entries.erase(s.entries.begin());
      }
      // Settle outside the lock: settling wakes waiters, and dropping the
      // last reference to an operation may destroy a watcher (see above).
      lock.unlock();
      for (auto& e : due) {
        if (auto op = e.op.lock()) op->expire(e.timeout);
      }
      due.clear();
      lock.lock();
    }
  }

  std::shared_ptr<state> state_ = std::make_shared<state>();
  std::thread thread_;
};

}  // namespace

struct async_file::runtime {
  explicit runtime(std::shared_ptr<thread_pool> p)
      : pool(p ? std::move(p) : std::make_shared<thread_pool>()) {}
  std::shared_ptr<thread_pool> pool;
  // Declared last, destroyed first: its thread may still touch operations.
  deadline_watcher watcher;
};

namespace {

using runtime_ptr = std::shared_ptr<async_file::runtime>;

// Runs `fn()` on the runtime's pool as one cancellable, time-limited
// operation described by `what` (in error messages).
template <typename T, typename F>
std::future<T> launch(const runtime_ptr& rt, const async_options& options, std::string what, F fn) {
  auto op = std::make_shared<pending<T>>(std::move(what), options.on_settled);
  std::future<T> result = op->future();
  // With a token already cancelled the callback runs right here, settling
  // the operation before anything is queued.
  op->on_cancel.emplace(options.token.stop_token(), canceller{op});
  if (op->settled()) return result;
  if (options.timeout && *options.timeout <= std::chrono::milliseconds::zero()) {
    op->expire(*options.timeout);
    return result;
  }
  std::optional<deadline_watcher::key> deadline;
  try {
    if (options.timeout) deadline = rt->watcher.add(*options.timeout, op);
    // The task owns the runtime (pool and watcher) and, through `fn`, the
    // file: both outlive every async_file handle while it is pending.
    rt->pool->post([rt, op, deadline, fn = std::move(fn)]() mutable {
      // Cancelled or expired while queued: the I/O never starts.
      if (!op->settled()) {
        try {
          if constexpr (std::is_void_v<T>) {
            fn();
            op->succeed();
          } else {
            op->succeed(fn());
          }
        } catch (...) {
          op->fail(std::current_exception());
        }
      }
      if (deadline) rt->watcher.remove(*deadline);
    });
  } catch (...) {
    // No thread for the watcher, no memory for the task: reported through
    // the future like any other failure of the operation.
    if (deadline) rt->watcher.remove(*deadline);
    op->fail(std::current_exception());
  }
  return result;
}

std::string describe_call(std::string_view name, const std::string& source) {
  std::string s(name);
  s += " on ";
  s += source;
  return s;
}

std::string message_call(std::string_view name, std::size_t i, const std::string& source) {
  return describe_call(std::string(name) + "(message " + std::to_string(i) + ")", source);
}

std::string object_call(std::string_view name, std::size_t i, std::size_t j, const std::string& source) {
  return describe_call(
      std::string(name) + "(message " + std::to_string(i) + ", object " + std::to_string(j) + ")", source);
}

}  // namespace

async_file::async_file(std::shared_ptr<runtime> rt, std::shared_ptr<tensogram::file> f) noexcept
    : runtime_(std::move(rt)), file_(std::move(f)) {}

async_file::async_file(tensogram::file f, std::shared_ptr<thread_pool> pool)
    : async_file(std::make_shared<tensogram::file>(std::move(f)), std::move(pool)) {}

async_file::async_file(std::shared_ptr<tensogram::file> f, std::shared_ptr<thread_pool> pool)
    : runtime_(std::make_shared<runtime>(std::move(pool))), file_(std::move(f)) {
  if (!file_) throw invalid_arg_error("async_file: the file is null");
}

const std::shared_ptr<thread_pool>& async_file::pool() const noexcept {
  return runtime_->pool;
}

std::future<async_file> async_file::open(const std::filesystem::path& path, std::shared_ptr<thread_pool> pool,
                                         async_options options, scan_mode mode) {
  auto rt = std::make_shared<runtime>(std::move(pool));
  return launch<async_file>(rt, options, describe_call("open_async", path.string()), [rt, path, mode] {
    auto f = std::make_shared<tensogram::file>(tensogram::file::open(path, mode));
    // Opening does no I/O; probing the size reports a missing or unreadable
    // file from `open`, where callers expect it.
    (void)f->source().size();
    return async_file(rt, std::move(f));
  });
}

std::future<async_file> async_file::open_mmap(const std::filesystem::path& path,
                                              std::shared_ptr<thread_pool> pool, async_options options,
                                              scan_mode mode) {
  auto rt = std::make_shared<runtime>(std::move(pool));
  return launch<async_file>(rt, options, describe_call("open_mmap_async", path.string()), [rt, path, mode] {
    auto f = std::make_shared<tensogram::file>(tensogram::file::open_mmap(path, mode));
    (void)f->source().size();
    return async_file(rt, std::move(f));
  });
}

std::future<async_file> async_file::open_remote(const std::string& url, io::remote_options remote,
                                                std::shared_ptr<thread_pool> pool, async_options options,
                                                scan_mode mode) {
  auto rt = std::make_shared<runtime>(std::move(pool));
  return launch<async_file>(
      rt, options, describe_call("open_remote_async", url), [rt, url, remote = std::move(remote), mode] {
        auto f = std::make_shared<tensogram::file>(tensogram::file::open_remote(url, remote, mode));
        (void)f->source().size();  // one HEAD request: reachable, and how big
        return async_file(rt, std::move(f));
      });
}

std::future<std::size_t> async_file::message_count_async(async_options options) const {
  return launch<std::size_t>(runtime_, options, describe_call("message_count_async", source_name()),
                             [f = file_] { return f->message_count(); });
}

std::future<std::vector<scan_entry>> async_file::message_extents_async(async_options options) const {
  return launch<std::vector<scan_entry>>(runtime_, options,
                                         describe_call("message_extents_async", source_name()),
                                         [f = file_] { return f->message_extents(); });
}

std::future<buffer> async_file::message_bytes_async(std::size_t i, async_options options) const {
  return launch<buffer>(runtime_, options, message_call("message_bytes_async", i, source_name()),
                        [f = file_, i] { return f->message_bytes(i); });
}

std::future<std::vector<std::uint8_t>> async_file::read_message_async(std::size_t i,
                                                                      async_options options) const {
  return launch<std::vector<std::uint8_t>>(runtime_, options,
                                           message_call("read_message_async", i, source_name()),
                                           [f = file_, i] { return f->read_message(i); });
}

std::future<message> async_file::decode_message_async(std::size_t i, decode_options decode,
                                                      async_options options) const {
  return launch<message>(runtime_, options, message_call("decode_message_async", i, source_name()),
                         [f = file_, i, decode] { return f->decode_message(i, decode); });
}

std::future<metadata> async_file::decode_metadata_async(std::size_t i, async_options options) const {
  return launch<metadata>(runtime_, options, message_call("decode_metadata_async", i, source_name()),
                          [f = file_, i] { return f->decode_metadata(i); });
}

std::future<std::pair<metadata, std::vector<data_object_descriptor>>> async_file::decode_descriptors_async(
    std::size_t i, async_options options) const {
  return launch<std::pair<metadata, std::vector<data_object_descriptor>>>(
      runtime_, options, message_call("decode_descriptors_async", i, source_name()),
      [f = file_, i] { return f->decode_descriptors(i); });
}

std::future<message> async_file::decode_object_async(std::size_t i, std::size_t object_index,
                                                     decode_options decode, async_options options) const {
  return launch<message>(
      runtime_, options, object_call("decode_object_async", i, object_index, source_name()),
      [f = file_, i, object_index, decode] { return f->decode_object(i, object_index, decode); });
}

std::future<std::vector<buffer>> async_file::decode_range_async(
    std::size_t i, std::size_t object_index, std::vector<std::pair<std::uint64_t, std::uint64_t>> ranges,
    decode_options decode, async_options options) const {
  return launch<std::vector<buffer>>(runtime_, options,
                                     object_call("decode_range_async", i, object_index, source_name()),
                                     [f = file_, i, object_index, ranges = std::move(ranges), decode] {
                                       return f->decode_range(i, object_index, ranges, decode);
                                     });
}

// ---- async_executor ---------------------------------------------------------

async_executor::async_executor(std::shared_ptr<thread_pool> pool)
    : runtime_(std::make_shared<async_file::runtime>(std::move(pool))) {}

std::future<void> async_executor::run(std::string what, std::function<void()> fn,
                                      async_options options) const {
  if (!fn) throw invalid_arg_error("async_executor::run: empty function");
  return launch<void>(runtime_, options, std::move(what), std::move(fn));
}

const std::shared_ptr<thread_pool>& async_executor::pool() const noexcept {
  return runtime_->pool;
}

// ---- free functions ---------------------------------------------------------

std::future<async_file> open_async(const std::filesystem::path& path, std::shared_ptr<thread_pool> pool,
                                   async_options options) {
  return async_file::open(path, std::move(pool), std::move(options));
}

std::future<async_file> open_remote_async(const std::string& url, io::remote_options remote,
                                          std::shared_ptr<thread_pool> pool, async_options options) {
  return async_file::open_remote(url, std::move(remote), std::move(pool), std::move(options));
}

std::future<std::size_t> message_count_async(const async_file& f, async_options options) {
  return f.message_count_async(std::move(options));
}

std::future<std::vector<std::uint8_t>> read_message_async(const async_file& f, std::size_t i,
                                                          async_options options) {
  return f.read_message_async(i, std::move(options));
}

std::future<message> decode_message_async(const async_file& f, std::size_t i, decode_options decode,
                                          async_options options) {
  return f.decode_message_async(i, decode, std::move(options));
}

std::future<metadata> decode_metadata_async(const async_file& f, std::size_t i, async_options options) {
  return f.decode_metadata_async(i, std::move(options));
}

std::future<message> decode_object_async(const async_file& f, std::size_t i, std::size_t object_index,
                                         decode_options decode, async_options options) {
  return f.decode_object_async(i, object_index, decode, std::move(options));
}

std::future<std::vector<buffer>> decode_range_async(
    const async_file& f, std::size_t i, std::size_t object_index,
    std::vector<std::pair<std::uint64_t, std::uint64_t>> ranges, decode_options decode,
    async_options options) {
  return f.decode_range_async(i, object_index, std::move(ranges), decode, std::move(options));
}

}  // namespace tensogram::io
