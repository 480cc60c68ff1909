// The loopback UDP impairment proxy of the streaming tests (see udp_proxy.hpp).
#include "udp_proxy.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <system_error>
#include <vector>

namespace tgtest {

namespace {

using clock_type = std::chrono::steady_clock;

[[noreturn]] void throw_errno(const std::string& what) {
  throw std::system_error(errno, std::generic_category(), "udp_proxy: " + what);
}

sockaddr_in loopback(std::uint16_t port) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(port);
  return a;
}

tensogram::detail::unique_fd udp_socket() {
  tensogram::detail::unique_fd fd(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  if (fd.get() < 0) throw_errno("socket");
  // Bulk QUIC transfers send bursts of datagrams; larger buffers keep the
  // kernel from dropping more than the impairment asks for. Best effort:
  // the kernel caps these at net.core.[rw]mem_max.
  const int size = 4 << 20;
  (void)::setsockopt(fd.get(), SOL_SOCKET, SO_RCVBUF, &size, sizeof size);
  (void)::setsockopt(fd.get(), SOL_SOCKET, SO_SNDBUF, &size, sizeof size);
  return fd;
}

void check_probability(double p, const char* name) {
  if (!(p >= 0.0 && p <= 1.0)) {
    throw std::invalid_argument(std::string("udp_proxy: ") + name + " must be a probability in [0, 1]");
  }
}

// A datagram held back by the reorder impairment.
struct held_datagram {
  std::vector<std::byte> data;
  bool duplicate = false;
  clock_type::time_point since;
};

// The state of one direction of traffic.
struct direction {
  std::mt19937_64 rng;
  std::uint64_t seen = 0;  // datagrams read in this direction
  std::optional<held_datagram> held;

  // One uniform draw in [0, 1); generate_canonical keeps the sequence a
  // function of the engine alone.
  double draw() { return std::generate_canonical<double, 53>(rng); }
};

// Datagrams read per socket per wakeup: bounded so that a flood in one
// direction cannot starve the other or the stop request.
constexpr int max_batch = 64;

}  // namespace

udp_proxy::udp_proxy(std::uint16_t target_port, impairment cfg) : cfg_(cfg) {
  check_probability(cfg_.drop, "drop");
  check_probability(cfg_.reorder, "reorder");
  check_probability(cfg_.duplicate, "duplicate");

  client_fd_ = udp_socket();
  sockaddr_in self = loopback(0);
  if (::bind(client_fd_.get(), reinterpret_cast<const sockaddr*>(&self), sizeof self) != 0) {
    throw_errno("bind 127.0.0.1:0");
  }
  socklen_t len = sizeof self;
  if (::getsockname(client_fd_.get(), reinterpret_cast<sockaddr*>(&self), &len) != 0) {
    throw_errno("getsockname");
  }
  port_ = ntohs(self.sin_port);

  // Connected, so replies are read only from the target and plain send()
  // reaches it.
  server_fd_ = udp_socket();
  const sockaddr_in target = loopback(target_port);
  if (::connect(server_fd_.get(), reinterpret_cast<const sockaddr*>(&target), sizeof target) != 0) {
    throw_errno("connect 127.0.0.1:" + std::to_string(target_port));
  }

  stop_fd_ = tensogram::detail::unique_fd(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  if (stop_fd_.get() < 0) throw_errno("eventfd");

  thread_ = std::thread([this] { run(); });
}

udp_proxy::~udp_proxy() {
  const std::uint64_t one = 1;
  // An eventfd write of 1 cannot fail short of a counter overflow; the
  // thread wakes from poll and returns.
  (void)::write(stop_fd_.get(), &one, sizeof one);
  if (thread_.joinable()) thread_.join();
}

void udp_proxy::run() noexcept {
  // Direction 0: client -> server, 1: server -> client. Each has its own
  // engine so one direction's traffic never shifts the other's decisions.
  std::array<direction, 2> dirs{
      direction{std::mt19937_64(cfg_.seed), 0, std::nullopt},
      direction{std::mt19937_64(cfg_.seed ^ 0x9E3779B97F4A7C15ULL), 0, std::nullopt}};
  sockaddr_in client{};
  bool have_client = false;

  const auto send_raw = [&](int d, const std::vector<std::byte>& data) {
    // Errors (a full buffer, ECONNREFUSED from an earlier ICMP) are losses
    // the peers recover from, as on a real network.
    if (d == 0) {
      (void)::send(server_fd_.get(), data.data(), data.size(), 0);
    } else {
      (void)::sendto(client_fd_.get(), data.data(), data.size(), 0,
                     reinterpret_cast<const sockaddr*>(&client), sizeof client);
    }
  };
  // Counters are updated before the send, so a peer that has the datagram
  // also sees it counted.
  const auto emit = [&](int d, const std::vector<std::byte>& data, bool duplicate) {
    ++forwarded_;
    if (duplicate) ++duplicated_;
    forwarded_bytes_ += data.size() * (duplicate ? 2 : 1);
    send_raw(d, data);
    if (duplicate) send_raw(d, data);
  };
  const auto process = [&](int d, std::vector<std::byte> data) {
    direction& dir = dirs[static_cast<std::size_t>(d)];
    ++received_;
    if (d == 1 && !have_client) {  // nobody to reply to yet
      ++dropped_;
      return;
    }
    if (dir.seen++ < cfg_.skip_first) {
      emit(d, data, false);
      return;
    }
    // Always three draws, whatever the outcome: the k-th datagram's fate
    // depends on the seed and k only.
    const double u_drop = dir.draw();
    const double u_reorder = dir.draw();
    const double u_duplicate = dir.draw();
    if (u_drop < cfg_.drop) {
      ++dropped_;
      return;
    }
    const bool duplicate = u_duplicate < cfg_.duplicate;
    if (dir.held) {
      // This one overtakes the held one, which follows right after.
      held_datagram h = std::move(*dir.held);
      dir.held.reset();
      emit(d, data, duplicate);
      ++reordered_;
      emit(d, h.data, h.duplicate);
      return;
    }
    if (u_reorder < cfg_.reorder) {
      dir.held = held_datagram{std::move(data), duplicate, clock_type::now()};
      return;
    }
    emit(d, data, duplicate);
  };

  std::vector<std::byte> buffer(65536);
  for (;;) {
    int timeout_ms = -1;
    const auto now = clock_type::now();
    for (const direction& dir : dirs) {
      if (!dir.held) continue;
      const auto left = std::chrono::ceil<std::chrono::milliseconds>(dir.held->since + reorder_hold - now);
      const int ms = static_cast<int>(std::max<std::int64_t>(0, left.count()));
      timeout_ms = timeout_ms < 0 ? ms : std::min(timeout_ms, ms);
    }
    std::array<pollfd, 3> fds{pollfd{stop_fd_.get(), POLLIN, 0}, pollfd{client_fd_.get(), POLLIN, 0},
                              pollfd{server_fd_.get(), POLLIN, 0}};
    const int ready = ::poll(fds.data(), fds.size(), timeout_ms);
    if (ready < 0 && errno != EINTR) return;
    if (fds[0].revents != 0) return;

    if (ready > 0 && fds[1].revents != 0) {
      for (int i = 0; i < max_batch; ++i) {
        sockaddr_in from{};
        socklen_t from_len = sizeof from;
        const ssize_t n = ::recvfrom(client_fd_.get(), buffer.data(), buffer.size(), MSG_DONTWAIT,
                                     reinterpret_cast<sockaddr*>(&from), &from_len);
        if (n < 0) break;  // EAGAIN: drained (other errors: try again next wakeup)
        client = from;     // replies go to the client's last address
        have_client = true;
        process(0, std::vector<std::byte>(buffer.begin(), buffer.begin() + n));
      }
    }
    if (ready > 0 && fds[2].revents != 0) {
      for (int i = 0; i < max_batch; ++i) {
        const ssize_t n = ::recv(server_fd_.get(), buffer.data(), buffer.size(), MSG_DONTWAIT);
        if (n < 0) {
          // ECONNREFUSED reports an ICMP error for an earlier send (the
          // target not listening yet): keep reading.
          if (errno == ECONNREFUSED) continue;
          break;
        }
        process(1, std::vector<std::byte>(buffer.begin(), buffer.begin() + n));
      }
    }

    // A held datagram with no successor in time goes out on its own
    // (delayed, not reordered).
    const auto later = clock_type::now();
    for (int d = 0; d < 2; ++d) {
      direction& dir = dirs[static_cast<std::size_t>(d)];
      if (dir.held && later - dir.held->since >= reorder_hold) {
        held_datagram h = std::move(*dir.held);
        dir.held.reset();
        emit(d, h.data, h.duplicate);
      }
    }
  }
}

}  // namespace tgtest
