#include "tensogram/core/thread_pool.hpp"

#include <condition_variable>
#include <deque>
#include <mutex>
#include <string>
#include <system_error>

#include "tensogram/core/error.hpp"

namespace tensogram {

struct thread_pool::shared {
  std::mutex mutex;
  std::condition_variable wake;
  std::deque<std::function<void()>> queue;
  bool stopping = false;
};

std::uint32_t thread_pool::default_threads() noexcept {
  const unsigned n = std::thread::hardware_concurrency();
  return n == 0 ? 1U : static_cast<std::uint32_t>(n);
}

thread_pool::thread_pool(std::uint32_t threads) : shared_(std::make_shared<shared>()) {
  const std::uint32_t n = threads == 0 ? default_threads() : threads;
  workers_.reserve(n);
  try {
    for (std::uint32_t i = 0; i < n; ++i) workers_.emplace_back([s = shared_] { work(s); });
  } catch (const std::system_error& e) {
    // Stop the workers already started before reporting, so no thread
    // outlives the failed construction.
    {
      const std::lock_guard lock(shared_->mutex);
      shared_->stopping = true;
    }
    shared_->wake.notify_all();
    for (auto& w : workers_) w.join();
    throw io_error("thread_pool: cannot start worker thread " + std::to_string(workers_.size() + 1) + " of " +
                   std::to_string(n) + ": " + e.what());
  }
}

thread_pool::~thread_pool() {
  {
    const std::lock_guard lock(shared_->mutex);
    shared_->stopping = true;
  }
  shared_->wake.notify_all();
  const auto self = std::this_thread::get_id();
  for (auto& w : workers_) {
    // Joining ourselves would deadlock; the detached worker owns `shared_`
    // and leaves once the queue is empty.
    if (w.get_id() == self) {
      w.detach();
    } else {
      w.join();
    }
  }
}

void thread_pool::post(std::function<void()> task) {
  {
    const std::lock_guard lock(shared_->mutex);
    shared_->queue.push_back(std::move(task));
  }
  shared_->wake.notify_one();
}

void thread_pool::work(const std::shared_ptr<shared>& s) {
  std::unique_lock lock(s->mutex);
  for (;;) {
    s->wake.wait(lock, [&] { return s->stopping || !s->queue.empty(); });
    if (s->queue.empty()) return;  // stopping, and everything queued has run
    std::function<void()> task = std::move(s->queue.front());
    s->queue.pop_front();
    lock.unlock();
    task();
    // Release the task's captures before taking the lock again: they may
    // own the pool, whose destructor takes the lock.
    task = nullptr;
    lock.lock();
  }
}

}  // namespace tensogram
