// What the server and client endpoints of the QUIC engine share (spec 06
// §10.2, §10.8): the UDP socket, the clock, the thread hand-off, and the
// event loop. Not a public header.
//
// The loop (endpoint_base::run_loop) waits in ppoll(2) on the socket and an
// eventfd (posted tasks, stop), with a timeout from the earliest
// ngtcp2_conn_get_expiry of its connections (loss detection, ACK delay,
// idle and handshake timers, pacing), CLOCK_MONOTONIC in nanoseconds.  Each
// iteration runs the posted tasks, reads datagrams in batches (recvmmsg),
// fires expired timers and then runs a write pass on every connection
// (connection.cpp), where the handler's `next_outgoing` is packed into
// packets with ngtcp2_conn_writev_stream and sent in batches (sendmmsg).
#pragma once

#include <ngtcp2/ngtcp2.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "src/core/unique_fd.hpp"
#include "tensogram/core/error.hpp"
#include "udp_io.hpp"

namespace metatensor::streaming::quic::detail {

using tensogram::detail::unique_fd;

// Datagrams read before the loop services timers and writes again, so a
// flood of incoming packets cannot starve ACKs and sends.
inline constexpr std::size_t rx_batches_per_turn = 8;

/// CLOCK_MONOTONIC in nanoseconds, ngtcp2's clock.
[[nodiscard]] inline ngtcp2_tstamp now_ns() noexcept {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<ngtcp2_tstamp>(ts.tv_sec) * NGTCP2_SECONDS + static_cast<ngtcp2_tstamp>(ts.tv_nsec);
}

[[nodiscard]] inline ngtcp2_duration to_ns(std::chrono::milliseconds ms) noexcept {
  return ms.count() <= 0 ? 0 : static_cast<ngtcp2_duration>(ms.count()) * NGTCP2_MILLISECONDS;
}

// ---------------------------------------------------------------------------
// The thread hand-off: posted tasks and the stop request, with an eventfd to
// wake the loop.

class wakeup_queue {
 public:
  wakeup_queue() : fd_(::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) {
    if (!fd_) throw tensogram::io_error("eventfd: " + errno_text(errno));
  }
  void post(std::function<void()> task) {
    {
      std::lock_guard lock(mutex_);
      tasks_.push_back(std::move(task));
    }
    wake();
  }
  void request_stop() noexcept {
    stop_.store(true);
    wake();
  }
  [[nodiscard]] bool stop_requested() const noexcept { return stop_.load(); }
  [[nodiscard]] int fd() const noexcept { return fd_.get(); }
  void drain() noexcept {
    std::uint64_t v = 0;
    while (::read(fd_.get(), &v, sizeof(v)) > 0) {
    }
  }
  std::vector<std::function<void()>> take() {
    std::lock_guard lock(mutex_);
    return std::exchange(tasks_, {});
  }

 private:
  void wake() noexcept {
    const std::uint64_t one = 1;
    // EAGAIN only when the counter is saturated, i.e. already signalled.
    (void)!::write(fd_.get(), &one, sizeof(one));
  }
  unique_fd fd_;
  std::mutex mutex_;
  std::vector<std::function<void()>> tasks_;
  std::atomic<bool> stop_{false};
};

class conn_impl;

// What a connection needs from its endpoint.
class endpoint_base {
 public:
  endpoint_base(const endpoint_base&) = delete;
  endpoint_base& operator=(const endpoint_base&) = delete;
  virtual ~endpoint_base() = default;

  udp_io& io() noexcept { return *io_; }
  [[nodiscard]] bool connected_socket() const noexcept { return connected_; }
  virtual void add_cid(const ngtcp2_cid& /*cid*/, conn_impl& /*c*/) {}
  virtual void remove_cid(const ngtcp2_cid& /*cid*/) {}

 protected:
  endpoint_base() = default;

  /// The loop: returns after `queue_.request_stop()`, having called
  /// on_stop() and run the tasks posted until then.
  void run_loop();
  /// Incoming datagram.
  virtual void dispatch(const std::uint8_t* data, std::size_t len, const sockaddr* from, socklen_t from_len,
                        ngtcp2_tstamp ts) = 0;
  /// Timers and write passes of every connection; returns the earliest
  /// deadline (UINT64_MAX: none).
  virtual ngtcp2_tstamp service(ngtcp2_tstamp ts) = 0;
  virtual void on_stop() = 0;
  /// The socket reported ICMP port unreachable (client sockets are connected).
  virtual void on_refused() {}
  /// Opens the endpoint's socket on the first address of host:port where
  /// `prepare(fd, ai)` succeeds (binds or connects; false with errno set
  /// tries the next address), then tunes it and sets up local_ and io_.
  /// Throws io_error "<failure> host:port: <last error>" when none works.
  void open_socket(const std::string& host, std::uint16_t port, bool passive, std::string_view failure,
                   const std::function<bool(int fd, const addrinfo& ai)>& prepare);

  unique_fd socket_;
  address local_;
  std::unique_ptr<udp_io> io_;
  wakeup_queue queue_;
  bool connected_ = false;
};

}  // namespace metatensor::streaming::quic::detail
