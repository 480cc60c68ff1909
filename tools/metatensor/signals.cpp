// SIGINT/SIGTERM taken by a sigwait thread (see signals.hpp).
#include "signals.hpp"

#include <pthread.h>

#include <utility>

namespace metatensor::cli {

sigset_t blocked_signals::set() {
  sigset_t s;
  sigemptyset(&s);
  sigaddset(&s, SIGINT);
  sigaddset(&s, SIGTERM);
  sigaddset(&s, SIGHUP);
  return s;
}

blocked_signals::blocked_signals() {
  const sigset_t s = set();
  pthread_sigmask(SIG_BLOCK, &s, &previous_);
}

int blocked_signals::wait() const {
  const sigset_t s = set();
  int signo = 0;
  while (sigwait(&s, &signo) != 0) {
  }
  return signo;
}

blocked_signals::~blocked_signals() {
  pthread_sigmask(SIG_SETMASK, &previous_, nullptr);
}

signal_thread::signal_thread(std::function<void(int)> on_signal) {
  thread_ = std::thread([this, on_signal = std::move(on_signal)] {
    const sigset_t s = blocked_signals::set();
    int signo = 0;
    while (sigwait(&s, &signo) != 0) {
    }
    // The destructor wakes us with a signal of the set too: tell it apart.
    if (stopping_.load()) return;
    received_.store(signo);
    on_signal(signo);
  });
}

signal_thread::~signal_thread() {
  stopping_.store(true);
  if (received_.load() == 0) {
    // A thread-directed signal: only this thread can take it. If a real
    // signal won the race, this one stays pending on a thread that exits
    // and is discarded.
    pthread_kill(thread_.native_handle(), SIGTERM);
  }
  thread_.join();
}

const char* signal_name(int signo) noexcept {
  switch (signo) {
    case SIGINT: return "SIGINT";
    case SIGTERM: return "SIGTERM";
    case SIGHUP: return "SIGHUP";
    default: return "signal";
  }
}

}  // namespace metatensor::cli
