#include "udp_io.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>

#include "tensogram/core/error.hpp"

namespace metatensor::streaming::quic::detail {

namespace {

constexpr int socket_buffer_bytes = 8 * 1024 * 1024;

}  // namespace

std::string errno_text(int err) {
  return std::strerror(err);
}

std::string to_string(const sockaddr* sa, socklen_t len) {
  std::array<char, NI_MAXHOST> host{};
  std::array<char, NI_MAXSERV> serv{};
  if (len == 0 || ::getnameinfo(sa, len, host.data(), host.size(), serv.data(), serv.size(),
                                NI_NUMERICHOST | NI_NUMERICSERV) != 0) {
    return "?";
  }
  // Built by appending: GCC 12 at -O3 reports a false -Wrestrict for
  // `"[" + std::string` (GCC bug 105329).
  std::string out;
  if (sa->sa_family == AF_INET6) out += '[';
  out += host.data();
  if (sa->sa_family == AF_INET6) out += ']';
  out += ':';
  out += serv.data();
  return out;
}

bool is_loopback(const sockaddr* sa) noexcept {
  if (sa->sa_family == AF_INET) {
    const auto* in = reinterpret_cast<const sockaddr_in*>(sa);
    return (ntohl(in->sin_addr.s_addr) >> 24) == 127;
  }
  if (sa->sa_family == AF_INET6) {
    const auto* in6 = reinterpret_cast<const sockaddr_in6*>(sa);
    if (IN6_IS_ADDR_LOOPBACK(&in6->sin6_addr)) return true;
    if (IN6_IS_ADDR_V4MAPPED(&in6->sin6_addr)) return in6->sin6_addr.s6_addr[12] == 127;
  }
  return false;
}

std::string client_key(const sockaddr* sa) {
  if (sa->sa_family == AF_INET) {
    const auto* in = reinterpret_cast<const sockaddr_in*>(sa);
    return std::string(reinterpret_cast<const char*>(&in->sin_addr), sizeof(in->sin_addr));
  }
  if (sa->sa_family == AF_INET6) {
    const auto* in6 = reinterpret_cast<const sockaddr_in6*>(sa);
    const auto* bytes = reinterpret_cast<const char*>(in6->sin6_addr.s6_addr);
    // The IPv4 key of a mapped address: the same client whichever socket
    // family it reached.
    if (IN6_IS_ADDR_V4MAPPED(&in6->sin6_addr)) return std::string(bytes + 12, 4);
    return std::string(bytes, 8);
  }
  return {};
}

void tune_socket(int fd) {
  // Larger kernel buffers absorb the bursts a high-bandwidth flow produces
  // on loopback (the kernel caps them at net.core.[rw]mem_max).
  int size = socket_buffer_bytes;
  (void)::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof(size));
  (void)::setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &size, sizeof(size));
}

std::unique_ptr<addrinfo, addrinfo_deleter> resolve(const std::string& host, std::uint16_t port,
                                                    bool passive) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_DGRAM;
  hints.ai_protocol = IPPROTO_UDP;
  if (passive) hints.ai_flags = AI_PASSIVE;
  addrinfo* res = nullptr;
  const std::string service = std::to_string(port);
  const int rv = ::getaddrinfo(host.empty() ? nullptr : host.c_str(), service.c_str(), &hints, &res);
  if (rv != 0) throw tensogram::io_error("cannot resolve '" + host + "': " + ::gai_strerror(rv));
  return std::unique_ptr<addrinfo, addrinfo_deleter>(res);
}

}  // namespace metatensor::streaming::quic::detail
