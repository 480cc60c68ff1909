// A small fixed-size thread pool (the core layer's "threads budget" for
// long-lived work such as the asynchronous file API). It is an ordinary
// object: whoever needs one owns it (usually through a shared_ptr), so the
// library keeps no global threads or queues.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <future>
#include <memory>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

namespace tensogram {

/// A fixed number of worker threads serving one FIFO queue.
///
/// Destruction *drains*: it stops waiting for new work, lets the workers run
/// every task still queued (tasks may even post more), then joins them, so a
/// future obtained from `submit` never ends up with a broken promise. The
/// destructor may run on one of the pool's own workers (a task that releases
/// the last shared_ptr to its pool): that worker is detached rather than
/// joined and finishes draining on its own, which is what lets operations
/// keep their pool alive without leaking it.
class thread_pool {
 public:
  /// `threads` workers; 0 means `default_threads()`.
  explicit thread_pool(std::uint32_t threads = 0);
  thread_pool(const thread_pool&) = delete;
  thread_pool& operator=(const thread_pool&) = delete;
  ~thread_pool();

  /// `std::thread::hardware_concurrency()`, or 1 when it is unknown.
  [[nodiscard]] static std::uint32_t default_threads() noexcept;

  /// Number of worker threads.
  [[nodiscard]] std::size_t size() const noexcept { return workers_.size(); }

  /// Queues `task`. An exception escaping it terminates the program, as it
  /// would on a `std::thread`; use `submit` to receive exceptions.
  void post(std::function<void()> task);

  /// Queues `f` and returns a future of its result (or of its exception).
  template <typename F>
  [[nodiscard]] auto submit(F&& f) -> std::future<std::invoke_result_t<std::decay_t<F>&>> {
    using result = std::invoke_result_t<std::decay_t<F>&>;
    // std::function needs a copyable callable and packaged_task is move-only.
    auto task = std::make_shared<std::packaged_task<result()>>(std::forward<F>(f));
    auto fut = task->get_future();
    post([task] { (*task)(); });
    return fut;
  }

 private:
  struct shared;
  static void work(const std::shared_ptr<shared>& s);
  // Held by every worker too: a worker detached by a destructor running on
  // it still needs the queue after the pool object is gone.
  std::shared_ptr<shared> shared_;
  std::vector<std::thread> workers_;
};

}  // namespace tensogram
