// The loopback UDP impairment proxy used by the streaming tests (spec 06 §13
// "Streaming"): plain sockets on both sides, so the proxy is checked on its
// own before QUIC runs through it.
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "udp_proxy.hpp"

namespace {

using namespace std::chrono_literals;

// A UDP socket bound to 127.0.0.1:0.
class endpoint {
 public:
  endpoint() : fd_(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0)) {
    if (fd_.get() < 0) throw std::system_error(errno, std::generic_category(), "socket");
    sockaddr_in a = address(0);
    socklen_t len = sizeof a;
    if (::bind(fd_.get(), reinterpret_cast<const sockaddr*>(&a), sizeof a) != 0 ||
        ::getsockname(fd_.get(), reinterpret_cast<sockaddr*>(&a), &len) != 0) {
      throw std::system_error(errno, std::generic_category(), "bind");
    }
    port_ = ntohs(a.sin_port);
  }
  [[nodiscard]] std::uint16_t port() const { return port_; }

  void send_to(std::uint16_t port, const std::string& text) const {
    const sockaddr_in a = address(port);
    ASSERT_EQ(
        ::sendto(fd_.get(), text.data(), text.size(), 0, reinterpret_cast<const sockaddr*>(&a), sizeof a),
        static_cast<ssize_t>(text.size()));
  }

  struct datagram {
    std::string text;
    std::uint16_t from_port = 0;
  };
  // The next datagram, or nothing within `wait`.
  [[nodiscard]] std::optional<datagram> receive(std::chrono::milliseconds wait = 500ms) const {
    pollfd p{fd_.get(), POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(wait.count())) <= 0) return std::nullopt;
    std::string buf(65536, '\0');
    sockaddr_in from{};
    socklen_t len = sizeof from;
    const ssize_t n =
        ::recvfrom(fd_.get(), buf.data(), buf.size(), 0, reinterpret_cast<sockaddr*>(&from), &len);
    if (n < 0) return std::nullopt;
    buf.resize(static_cast<std::size_t>(n));
    return datagram{std::move(buf), ntohs(from.sin_port)};
  }
  // Everything that arrives until nothing has for `quiet`.
  [[nodiscard]] std::vector<std::string> drain(std::chrono::milliseconds quiet = 30ms) const {
    std::vector<std::string> out;
    while (auto d = receive(quiet)) out.push_back(std::move(d->text));
    return out;
  }

 private:
  static sockaddr_in address(std::uint16_t port) {
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons(port);
    return a;
  }

  tensogram::detail::unique_fd fd_;
  std::uint16_t port_ = 0;
};

std::vector<std::string> numbered(int n, const std::string& stem = "d") {
  std::vector<std::string> out;
  for (int i = 0; i < n; ++i) out.push_back(stem + std::to_string(i));
  return out;
}

// Waits (bounded) until the proxy has decided the fate of `n` datagrams.
void wait_settled(const tgtest::udp_proxy& p, std::uint64_t n) {
  const auto deadline = std::chrono::steady_clock::now() + 1s;
  while (p.forwarded() + p.dropped() < n && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(1ms);
  }
}

TEST(UdpProxy, PassesDatagramsBothWaysIntact) {
  const endpoint server;
  const endpoint client;
  const tgtest::udp_proxy proxy(server.port());
  ASSERT_NE(proxy.port(), 0);
  ASSERT_NE(proxy.port(), server.port());

  // Sizes from empty to a jumbo datagram: contents must come through byte for byte.
  const std::vector<std::string> payloads = {std::string(), "x", std::string(1200, 'q'),
                                             std::string(60000, '\x7f'), std::string("a\0b", 3)};
  for (const std::string& p : payloads) {
    client.send_to(proxy.port(), p);
    const auto at_server = server.receive();
    ASSERT_TRUE(at_server.has_value());
    EXPECT_EQ(at_server->text, p);
    // The reply goes to the proxy's forwarding socket, and back to the client from the proxy's port.
    server.send_to(at_server->from_port, "re:" + p);
    const auto at_client = client.receive();
    ASSERT_TRUE(at_client.has_value());
    EXPECT_EQ(at_client->text, "re:" + p);
    EXPECT_EQ(at_client->from_port, proxy.port());
  }
  EXPECT_EQ(proxy.received(), 2 * payloads.size());
  EXPECT_EQ(proxy.forwarded(), 2 * payloads.size());
  EXPECT_EQ(proxy.dropped(), 0u);
  EXPECT_EQ(proxy.reordered(), 0u);
  EXPECT_EQ(proxy.duplicated(), 0u);
}

TEST(UdpProxy, DropAllPassesNothing) {
  const endpoint server;
  const endpoint client;
  const tgtest::udp_proxy proxy(server.port(), {.drop = 1.0});
  for (const std::string& d : numbered(10)) client.send_to(proxy.port(), d);
  wait_settled(proxy, 10);
  EXPECT_TRUE(server.drain().empty());
  EXPECT_EQ(proxy.received(), 10u);
  EXPECT_EQ(proxy.dropped(), 10u);
  EXPECT_EQ(proxy.forwarded(), 0u);
}

TEST(UdpProxy, SkipFirstPassesTheHandshakeUntouched) {
  const endpoint server;
  const endpoint client;
  const tgtest::udp_proxy proxy(server.port(), {.drop = 1.0, .skip_first = 2});
  for (const std::string& d : numbered(5)) client.send_to(proxy.port(), d);
  wait_settled(proxy, 5);
  EXPECT_EQ(server.drain(), (std::vector<std::string>{"d0", "d1"}));
  EXPECT_EQ(proxy.forwarded(), 2u);
  EXPECT_EQ(proxy.dropped(), 3u);
}

TEST(UdpProxy, ReorderAllChangesOrderButDeliversEverything) {
  const endpoint server;
  const endpoint client;
  const tgtest::udp_proxy proxy(server.port(), {.reorder = 1.0});
  const std::vector<std::string> sent = numbered(10);
  for (const std::string& d : sent) client.send_to(proxy.port(), d);
  wait_settled(proxy, sent.size());
  const std::vector<std::string> got = server.drain();
  ASSERT_EQ(got.size(), sent.size());
  EXPECT_NE(got, sent);  // held ones follow their successors
  std::vector<std::string> sorted_got = got;
  std::vector<std::string> sorted_sent = sent;
  std::sort(sorted_got.begin(), sorted_got.end());
  std::sort(sorted_sent.begin(), sorted_sent.end());
  EXPECT_EQ(sorted_got, sorted_sent);
  EXPECT_GE(proxy.reordered(), 1u);
  EXPECT_LE(proxy.reordered(), sent.size() / 2);  // at most every other one overtakes
  EXPECT_EQ(proxy.forwarded(), sent.size());
  EXPECT_EQ(proxy.dropped(), 0u);
}

TEST(UdpProxy, HeldDatagramIsReleasedAfterTimeout) {
  const endpoint server;
  const endpoint client;
  const tgtest::udp_proxy proxy(server.port(), {.reorder = 1.0});
  client.send_to(proxy.port(), "alone");
  const auto got = server.receive(200ms);  // held ~5 ms, then sent anyway
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(got->text, "alone");
  EXPECT_EQ(proxy.reordered(), 0u);
  EXPECT_EQ(proxy.forwarded(), 1u);
}

TEST(UdpProxy, DuplicateAllSendsEverythingTwice) {
  const endpoint server;
  const endpoint client;
  const tgtest::udp_proxy proxy(server.port(), {.duplicate = 1.0});
  for (const std::string& d : numbered(4)) client.send_to(proxy.port(), d);
  wait_settled(proxy, 4);
  EXPECT_EQ(server.drain(), (std::vector<std::string>{"d0", "d0", "d1", "d1", "d2", "d2", "d3", "d3"}));
  EXPECT_EQ(proxy.forwarded(), 4u);
  EXPECT_EQ(proxy.duplicated(), 4u);
}

// Mixed impairments: the counters add up, and the same seed gives the same
// fates (which datagrams arrive, how often), whatever the timing.
TEST(UdpProxy, CountersAddUpAndSeedIsDeterministic) {
  const auto run = [](std::uint64_t seed) {
    const endpoint server;
    const endpoint client;
    const tgtest::udp_proxy proxy(server.port(),
                                  {.drop = 0.3, .reorder = 0.2, .duplicate = 0.2, .seed = seed});
    const std::vector<std::string> sent = numbered(60);
    for (const std::string& d : sent) client.send_to(proxy.port(), d);
    wait_settled(proxy, sent.size());
    std::vector<std::string> got = server.drain();
    EXPECT_EQ(proxy.received(), sent.size());
    EXPECT_EQ(proxy.forwarded() + proxy.dropped(), sent.size());
    EXPECT_EQ(got.size(), proxy.forwarded() + proxy.duplicated());
    EXPECT_GT(proxy.dropped(), 0u);
    EXPECT_GT(proxy.duplicated(), 0u);
    std::sort(got.begin(), got.end());
    return got;
  };
  const auto first = run(42);
  EXPECT_EQ(run(42), first);
  EXPECT_NE(run(43), first);
}

TEST(UdpProxy, RejectsProbabilitiesOutsideZeroOne) {
  EXPECT_THROW(tgtest::udp_proxy(9, {.drop = 1.5}), std::invalid_argument);
  EXPECT_THROW(tgtest::udp_proxy(9, {.reorder = -0.1}), std::invalid_argument);
}

}  // namespace
