#include "tensogram/core/parallel.hpp"

#include <algorithm>
#include <atomic>
#include <exception>
#include <thread>
#include <utility>
#include <vector>

namespace tensogram {

namespace {

#if defined(__cpp_lib_jthread)
using joining_thread = std::jthread;
#else
// A std::thread that joins when destroyed, as std::jthread does, for
// standard libraries without it (libc++ < 18: the WebAssembly build's
// Emscripten, docs/wasm.md, where threads > 1 never reaches this code).
class joining_thread {
 public:
  template <typename F>
  explicit joining_thread(F&& f) : t_(std::forward<F>(f)) {}
  joining_thread(joining_thread&&) noexcept = default;
  joining_thread& operator=(joining_thread&&) = delete;
  joining_thread(const joining_thread&) = delete;
  joining_thread& operator=(const joining_thread&) = delete;
  ~joining_thread() {
    if (t_.joinable()) t_.join();
  }

 private:
  std::thread t_;
};
#endif

}  // namespace

void parallel_for(std::size_t count, std::uint32_t threads, const std::function<void(std::size_t)>& task) {
  if (count == 0) return;
  if (threads <= 1 || count == 1) {
    for (std::size_t i = 0; i < count; ++i) task(i);
    return;
  }
  std::vector<std::exception_ptr> errors(count);
  std::atomic<std::size_t> next{0};
  auto worker = [&] {
    for (std::size_t i = next.fetch_add(1); i < count; i = next.fetch_add(1)) {
      try {
        task(i);
      } catch (...) {
        errors[i] = std::current_exception();
      }
    }
  };
  const std::size_t helpers = std::min<std::size_t>(threads, count) - 1;
  {
    std::vector<joining_thread> pool;
    pool.reserve(helpers);
    for (std::size_t t = 0; t < helpers; ++t) pool.emplace_back(worker);
    worker();
  }  // jthreads join here
  for (const std::exception_ptr& e : errors) {
    if (e) std::rethrow_exception(e);
  }
}

}  // namespace tensogram
