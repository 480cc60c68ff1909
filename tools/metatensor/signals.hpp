// Shutting down `metatensor serve` and cleaning up after an interrupted
// `metatensor fetch` on SIGINT/SIGTERM without a signal handler.
//
// Signal handlers may only touch lock-free atomics and async-signal-safe
// calls, while stopping a server or removing a temporary file wants locks
// and ordinary code. So the signals are blocked instead (in the main thread
// before any other thread starts, so every thread inherits the mask) and
// one dedicated thread takes them with sigwait(2) and runs ordinary code.
// No global state is involved: each object owns its thread and mask.
//
//   blocked_signals block;                 // before the library starts threads
//   server srv(...);
//   srv.start();
//   block.wait();                          // SIGINT or SIGTERM
//   srv.stop();
// or, when the main thread has other work, a `signal_thread` runs a callback.
#pragma once

#include <signal.h>

#include <atomic>
#include <functional>
#include <thread>

namespace metatensor::cli {

/// Blocks SIGINT, SIGTERM and SIGHUP in the calling thread for its lifetime
/// (threads started meanwhile inherit the mask); restores the previous mask.
class blocked_signals {
 public:
  blocked_signals();
  ~blocked_signals();
  blocked_signals(const blocked_signals&) = delete;
  blocked_signals& operator=(const blocked_signals&) = delete;
  /// Waits for one of the signals (sigwait) and returns it.
  [[nodiscard]] int wait() const;
  /// The signals blocked.
  [[nodiscard]] static sigset_t set();

 private:
  sigset_t previous_;
};

/// A thread that waits for one of `blocked_signals::set()` and calls
/// `on_signal(signo)` on itself, once. The signals must be blocked in every
/// thread (construct a `blocked_signals` first). The destructor wakes the
/// thread if no signal came and joins it, so `on_signal` never runs after
/// destruction: declare this after what `on_signal` uses.
class signal_thread {
 public:
  explicit signal_thread(std::function<void(int)> on_signal);
  ~signal_thread();
  signal_thread(const signal_thread&) = delete;
  signal_thread& operator=(const signal_thread&) = delete;
  /// The signal received, 0 if none (yet).
  [[nodiscard]] int received() const noexcept { return received_.load(); }

 private:
  std::atomic<bool> stopping_{false};
  std::atomic<int> received_{0};
  std::thread thread_;
};

/// "SIGINT", "SIGTERM", ...
[[nodiscard]] const char* signal_name(int signo) noexcept;

}  // namespace metatensor::cli
