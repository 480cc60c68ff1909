// UDP datagram I/O of the QUIC engine (spec 06 §10.2, §10.8): batched
// recvmmsg/sendmmsg with buffers allocated once per endpoint, socket
// addresses, and the datagram sizes the engine sends. Not a public header.
#pragma once

#include <netdb.h>
#include <ngtcp2/ngtcp2.h>
#include <sys/socket.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace metatensor::streaming::quic::detail {

// Receive buffers hold any UDP payload (RFC 9000 §18.2 max_udp_payload_size
// default 65527); a truncated datagram is dropped.
inline constexpr std::size_t rx_buffer_size = 65536;
inline constexpr std::size_t rx_batch = 32;
// Datagrams per sendmmsg.
inline constexpr std::size_t tx_batch = 32;
// UDP payload on real networks: the largest that Path MTU Discovery
// (RFC 9000 §14.3) probes for; starts at 1200 (§14.1).
inline constexpr std::size_t network_payload = NGTCP2_MAX_PMTUD_UDP_PAYLOAD_SIZE;
// UDP payload towards a loopback peer: the loopback MTU is 64 KiB, so large
// datagrams cost no fragmentation and cut the per-packet overhead (system
// calls, headers, ACKs, crypto calls) that bounds throughput: a 1 GiB
// stream moves at ~200 MB/s with 1452-byte datagrams, ~1 GB/s with 32 KiB.
inline constexpr std::size_t loopback_payload = 32768;

/// strerror(err).
[[nodiscard]] std::string errno_text(int err);

struct address {
  sockaddr_storage storage{};
  socklen_t len = 0;

  sockaddr* sa() noexcept { return reinterpret_cast<sockaddr*>(&storage); }
  [[nodiscard]] const sockaddr* sa() const noexcept { return reinterpret_cast<const sockaddr*>(&storage); }
  void assign(const sockaddr* a, socklen_t l) noexcept {
    len = std::min<socklen_t>(l, sizeof(storage));
    std::memcpy(&storage, a, len);
  }
};

/// "127.0.0.1:50123", "[::1]:4433"; "?" when the address cannot be printed.
[[nodiscard]] std::string to_string(const sockaddr* sa, socklen_t len);
/// True for 127.0.0.0/8, ::1 and IPv4-mapped 127.x addresses.
[[nodiscard]] bool is_loopback(const sockaddr* sa) noexcept;
/// The client a per-address connection limit counts, ports aside: an IPv4
/// address (also when a dual-stack socket reports it IPv4-mapped,
/// ::ffff:a.b.c.d), or the /64 prefix of an IPv6 address — one host or one
/// subscriber line is given a whole /64 (RFC 7421), so a limit per 128-bit
/// address would let a single client open 2^64 times its share. Empty for
/// other families.
[[nodiscard]] std::string client_key(const sockaddr* sa);
/// Larger kernel buffers for a high-bandwidth flow.
void tune_socket(int fd);

struct addrinfo_deleter {
  void operator()(addrinfo* a) const noexcept { ::freeaddrinfo(a); }
};
/// The UDP addresses of host:port (`passive`: for binding); throws
/// tensogram::io_error "cannot resolve '<host>': ...".
[[nodiscard]] std::unique_ptr<addrinfo, addrinfo_deleter> resolve(const std::string& host, std::uint16_t port,
                                                                  bool passive);

// Batched datagram I/O with buffers allocated once per endpoint.

class udp_io {
 public:
  explicit udp_io(int fd) : fd_(fd), rx_(rx_batch * rx_buffer_size), tx_(tx_batch * loopback_payload) {}

  /// Reads up to rx_batch datagrams; calls `f(data, len, from)` for each.
  /// Returns false when the socket has nothing more to read.
  template <class F>
  bool receive(F&& f) {
    std::array<mmsghdr, rx_batch> msgs{};
    std::array<iovec, rx_batch> iov{};
    std::array<sockaddr_storage, rx_batch> from{};
    for (std::size_t i = 0; i < rx_batch; ++i) {
      iov[i] = {rx_.data() + i * rx_buffer_size, rx_buffer_size};
      msgs[i].msg_hdr.msg_iov = &iov[i];
      msgs[i].msg_hdr.msg_iovlen = 1;
      msgs[i].msg_hdr.msg_name = &from[i];
      msgs[i].msg_hdr.msg_namelen = sizeof(from[i]);
    }
    const int n = ::recvmmsg(fd_, msgs.data(), rx_batch, MSG_DONTWAIT, nullptr);
    if (n <= 0) {
      // EAGAIN: drained.  ECONNREFUSED is an ICMP port unreachable on a
      // connected socket: remembered for the endpoint to judge (see
      // `take_refused`); other transient errors are left to QUIC's timers.
      if (n < 0 && errno == ECONNREFUSED) refused_ = true;
      return n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EBADF && errno != ECONNREFUSED;
    }
    for (int i = 0; i < n; ++i) {
      const auto& h = msgs[static_cast<std::size_t>(i)].msg_hdr;
      if ((h.msg_flags & MSG_TRUNC) != 0 || msgs[static_cast<std::size_t>(i)].msg_len == 0) continue;
      f(rx_.data() + static_cast<std::size_t>(i) * rx_buffer_size, msgs[static_cast<std::size_t>(i)].msg_len,
        reinterpret_cast<const sockaddr*>(&from[static_cast<std::size_t>(i)]), h.msg_namelen);
    }
    return static_cast<std::size_t>(n) == rx_batch;
  }

  /// True once after a read saw ECONNREFUSED.
  [[nodiscard]] bool take_refused() noexcept { return std::exchange(refused_, false); }

  std::uint8_t* slot(std::size_t i) noexcept { return tx_.data() + i * loopback_payload; }

  /// Sends datagrams [0, count) of the slots, of sizes `sizes`, to `to`
  /// (null on a connected socket).  A datagram the kernel refuses (full
  /// buffer) is lost, which QUIC recovers from (RFC 9002).
  void send(const std::size_t* sizes, std::size_t count, const sockaddr* to, socklen_t to_len) noexcept {
    std::array<mmsghdr, tx_batch> msgs{};
    std::array<iovec, tx_batch> iov{};
    for (std::size_t i = 0; i < count; ++i) {
      iov[i] = {slot(i), sizes[i]};
      msgs[i].msg_hdr.msg_iov = &iov[i];
      msgs[i].msg_hdr.msg_iovlen = 1;
      msgs[i].msg_hdr.msg_name = const_cast<sockaddr*>(to);
      msgs[i].msg_hdr.msg_namelen = to ? to_len : 0;
    }
    std::size_t done = 0;
    while (done < count) {
      const int n = ::sendmmsg(fd_, msgs.data() + done, static_cast<unsigned>(count - done), MSG_DONTWAIT);
      if (n < 0) {
        if (errno == EINTR) continue;
        return;
      }
      done += static_cast<std::size_t>(n);
    }
  }

  /// Sends one datagram held elsewhere.
  void send_one(const std::uint8_t* data, std::size_t len, const sockaddr* to, socklen_t to_len) noexcept {
    (void)::sendto(fd_, data, len, MSG_DONTWAIT, to, to ? to_len : 0);
  }

 private:
  int fd_;
  std::vector<std::uint8_t> rx_;
  std::vector<std::uint8_t> tx_;
  bool refused_ = false;
};

}  // namespace metatensor::streaming::quic::detail
