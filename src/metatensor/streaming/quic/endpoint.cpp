#include "endpoint.hpp"

#include <poll.h>

#include <array>

namespace metatensor::streaming::quic::detail {

void endpoint_base::run_loop() {
  for (;;) {
    for (auto& task : queue_.take()) {
      try {
        task();
      } catch (...) {
        // A posted task has nobody to report to; it must not end the loop.
      }
    }
    if (queue_.stop_requested()) {
      on_stop();
      for (auto& task : queue_.take()) {
        try {
          task();
        } catch (...) {
        }
      }
      return;
    }
    const ngtcp2_tstamp next = service(now_ns());

    std::array<pollfd, 2> fds{{{socket_.get(), POLLIN, 0}, {queue_.fd(), POLLIN, 0}}};
    timespec timeout{};
    timespec* tp = nullptr;
    if (next != UINT64_MAX) {
      const ngtcp2_tstamp now = now_ns();
      const ngtcp2_tstamp wait = next > now ? next - now : 0;
      timeout.tv_sec = static_cast<time_t>(wait / NGTCP2_SECONDS);
      timeout.tv_nsec = static_cast<long>(wait % NGTCP2_SECONDS);
      tp = &timeout;
    }
    const int rv = ::ppoll(fds.data(), fds.size(), tp, nullptr);
    if (rv < 0) continue;  // EINTR
    if ((fds[1].revents & POLLIN) != 0) queue_.drain();
    if ((fds[0].revents & (POLLIN | POLLERR)) != 0) {
      for (std::size_t i = 0; i < rx_batches_per_turn; ++i) {
        const ngtcp2_tstamp ts = now_ns();
        const bool more = io_->receive([&](const std::uint8_t* data, std::size_t len, const sockaddr* from,
                                           socklen_t from_len) { dispatch(data, len, from, from_len, ts); });
        if (!more) break;
      }
      if (io_->take_refused()) on_refused();
    }
  }
}

void endpoint_base::open_socket(const std::string& host, std::uint16_t port, bool passive,
                                std::string_view failure,
                                const std::function<bool(int fd, const addrinfo& ai)>& prepare) {
  const auto res = resolve(host, port, passive);
  std::string last_error = "no address";
  for (addrinfo* ai = res.get(); ai != nullptr; ai = ai->ai_next) {
    unique_fd fd(::socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, ai->ai_protocol));
    if (!fd || !prepare(fd.get(), *ai)) {
      last_error = errno_text(errno);
      continue;
    }
    socket_ = std::move(fd);
    break;
  }
  if (!socket_) {
    throw tensogram::io_error(std::string(failure) + " " + host + ":" + std::to_string(port) + ": " +
                              last_error);
  }
  tune_socket(socket_.get());
  local_.len = sizeof(local_.storage);
  if (::getsockname(socket_.get(), local_.sa(), &local_.len) != 0) {
    throw tensogram::io_error("getsockname: " + errno_text(errno));
  }
  io_ = std::make_unique<udp_io>(socket_.get());
}

}  // namespace metatensor::streaming::quic::detail
