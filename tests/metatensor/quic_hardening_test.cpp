// The hardened QUIC server (issue 28 item 2, spec 06 §10 over RFC 9000):
// Retry round trips with our client, stateless resets for unknown
// connection IDs (sent, rate limited, and understood by our client),
// per-address limits, and a well-behaved client fetching while hostile peers
// flood Initials from many addresses, hold half-open handshakes, open
// never-read streams and storm the server with unknown-CID packets.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "hostile_peers.hpp"
#include "metatensor/safetensors.hpp"
#include "metatensor/stream_client.hpp"
#include "metatensor/stream_server.hpp"
#include "src/core/unique_fd.hpp"
#include "src/metatensor/streaming/quic/connection.hpp"
#include "src/metatensor/streaming/quic/udp_io.hpp"
#include "tensogram/core/error.hpp"

namespace {

namespace fs = std::filesystem;
namespace ms = metatensor::streaming;
using tensogram::detail::unique_fd;
using namespace std::chrono_literals;

constexpr std::size_t big_bytes = 16u << 20;

// Throughput is compared in optimized builds only: the sanitizer build
// (Debug, ASan) measures the sanitizers.  There each run fetches the file
// once instead of three times.
#ifdef NDEBUG
constexpr bool optimized_build = true;
constexpr int fetches_per_run = 3;
#else
constexpr bool optimized_build = false;
constexpr int fetches_per_run = 1;
#endif

sockaddr_in loopback(std::uint16_t port) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return a;
}

unique_fd bound_udp() {
  unique_fd fd(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  const sockaddr_in a = loopback(0);
  EXPECT_EQ(::bind(fd.get(), reinterpret_cast<const sockaddr*>(&a), sizeof(a)), 0);
  return fd;
}

std::uint16_t port_of(int fd) {
  sockaddr_in a{};
  socklen_t len = sizeof(a);
  (void)::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  return ntohs(a.sin_port);
}

// One datagram within `timeout`, or empty.
std::vector<std::uint8_t> receive(int fd, std::chrono::milliseconds timeout) {
  pollfd p{fd, POLLIN, 0};
  if (::poll(&p, 1, static_cast<int>(timeout.count())) <= 0) return {};
  std::vector<std::uint8_t> buf(65536);
  const auto n = ::recv(fd, buf.data(), buf.size(), 0);
  buf.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
  return buf;
}

std::vector<char> read_bytes(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// A UDP relay whose upstream can be switched: the client's packets go to
// whichever server is current, and only that server's answers come back.
class switchable_relay {
 public:
  explicit switchable_relay(std::uint16_t target) : target_(target) {
    client_side_ = bound_udp();
    server_side_ = bound_udp();
    thread_ = std::thread([this] { run(); });
  }
  ~switchable_relay() {
    stop_ = true;
    thread_.join();
  }
  switchable_relay(const switchable_relay&) = delete;
  switchable_relay& operator=(const switchable_relay&) = delete;
  [[nodiscard]] std::uint16_t port() const { return port_of(client_side_.get()); }
  void retarget(std::uint16_t port) { target_ = port; }

 private:
  void run() {
    std::vector<std::uint8_t> buf(65536);
    sockaddr_in client{};
    while (!stop_) {
      std::array<pollfd, 2> p{{{client_side_.get(), POLLIN, 0}, {server_side_.get(), POLLIN, 0}}};
      if (::poll(p.data(), p.size(), 20) <= 0) continue;
      if ((p[0].revents & POLLIN) != 0) {
        socklen_t len = sizeof(client);
        const auto n = ::recvfrom(client_side_.get(), buf.data(), buf.size(), 0,
                                  reinterpret_cast<sockaddr*>(&client), &len);
        const sockaddr_in to = loopback(target_.load());
        if (n > 0)
          (void)::sendto(server_side_.get(), buf.data(), static_cast<std::size_t>(n), 0,
                         reinterpret_cast<const sockaddr*>(&to), sizeof(to));
      }
      if ((p[1].revents & POLLIN) != 0) {
        sockaddr_in from{};
        socklen_t len = sizeof(from);
        const auto n = ::recvfrom(server_side_.get(), buf.data(), buf.size(), 0,
                                  reinterpret_cast<sockaddr*>(&from), &len);
        if (n > 0 && ntohs(from.sin_port) == target_.load() && client.sin_port != 0) {
          (void)::sendto(client_side_.get(), buf.data(), static_cast<std::size_t>(n), 0,
                         reinterpret_cast<const sockaddr*>(&client), sizeof(client));
        }
      }
    }
  }
  std::atomic<std::uint16_t> target_;
  unique_fd client_side_;
  unique_fd server_side_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

class QuicHardening : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = fs::temp_directory_path() / ("mt_harden_" + std::to_string(::getpid()));
    fs::create_directories(dir_ / "data");
    std::vector<std::vector<std::byte>> values{
        std::vector<std::byte>(big_bytes), std::vector<std::byte>(big_bytes), std::vector<std::byte>(1000)};
    std::mt19937 rng(5);
    for (auto& v : values) {
      for (auto& b : v) b = static_cast<std::byte>(rng());
    }
    namespace st = metatensor::safetensors;
    const std::vector<st::tensor_input> inputs{{"big", st::dtype::u8, {big_bytes}, values[0]},
                                               {"big2", st::dtype::u8, {big_bytes}, values[1]},
                                               {"small", st::dtype::u8, {values[2].size()}, values[2]}};
    st::write_file(dir_ / "data" / "model.safetensors", inputs);
  }
  static void TearDownTestSuite() {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  static ms::server_options options() {
    ms::server_options o;
    o.port = 0;
    o.tls_dir = dir_ / "tls";
    return o;
  }
  static std::unique_ptr<ms::server> start(ms::server_options o) {
    auto s = std::make_unique<ms::server>(dir_ / "data", std::move(o));
    s->start();
    return s;
  }
  static ms::client_options trusting(const ms::server& s) {
    ms::client_options o;
    o.ca_file = s.certificate();
    o.server_name = "localhost";
    o.open_timeout = 15s;
    return o;
  }
  static std::string url(std::uint16_t port) {
    return "metatensor://127.0.0.1:" + std::to_string(port) + "/model.safetensors";
  }
  // Fetches the whole file `times` times over (one connection each);
  // returns seconds, or a negative value on failure.
  static double fetch_all(const ms::server& s, std::chrono::seconds limit, int times = fetches_per_run) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < times; ++i) {
      if (!fetch_once(s, t0, limit)) return -1;
    }
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
  static bool fetch_once(const ms::server& s, std::chrono::steady_clock::time_point t0,
                         std::chrono::seconds limit) {
    try {
      auto f = ms::remote_file::open(url(s.port()), trusting(s));
      auto all = f.get_all();
      for (const auto& r : all) {
        if (!r.wait_for(std::chrono::duration_cast<std::chrono::milliseconds>(
                limit - (std::chrono::steady_clock::now() - t0))) ||
            r.error()) {
          return false;
        }
      }
      return f.image().size() == fs::file_size(dir_ / "data" / "model.safetensors");
    } catch (const std::exception& e) {
      ADD_FAILURE() << e.what();
      return false;
    }
  }

  // A connection to `a` whose packets then go to `b` (a restart of `a`, as
  // far as the client can tell) ends with a stateless reset from `b`.
  static void expect_reset_after_restart(const ms::server& a, const ms::server& b) {
    switchable_relay relay(a.port());
    auto f = ms::remote_file::open(url(relay.port()), trusting(a));
    f.get("small").wait();
    relay.retarget(b.port());
    auto r = f.get("big");
    ASSERT_TRUE(r.wait_for(10s));
    ASSERT_TRUE(r.error() != nullptr);
    try {
      std::rethrow_exception(r.error());
    } catch (const std::exception& e) {
      EXPECT_NE(std::string(e.what()).find("stateless reset"), std::string::npos) << e.what();
    }
    EXPECT_GE(b.stats().resets_sent, 1u);
  }

  static inline fs::path dir_;
};

TEST_F(QuicHardening, RetryRoundTripsWithOurClient) {
  auto o = options();
  o.testing_always_retry = true;
  auto server = start(o);
  auto f = ms::remote_file::open(url(server->port()), trusting(*server));
  f.get("small").wait();
  EXPECT_TRUE(f.has("small"));
  const auto st = server->stats();
  EXPECT_GE(st.retries_sent, 1u);
  EXPECT_EQ(st.accepted, 1u);  // the Initial answered with Retry left no connection behind
  EXPECT_EQ(st.invalid_tokens, 0u);
}

TEST_F(QuicHardening, StatelessResetForAnUnknownConnectionId) {
  auto o = options();
  o.testing_reset_secret.assign(32, 0x5a);
  o.stateless_resets_per_second = 50;
  auto server = start(o);
  const auto sock = bound_udp();
  const sockaddr_in to = loopback(server->port());
  std::mt19937 rng(9);
  auto probe = [&](std::size_t len) {
    std::vector<std::uint8_t> p(len);
    for (auto& b : p) b = static_cast<std::uint8_t>(rng());
    p[0] = static_cast<std::uint8_t>(0x40 | (p[0] & 0x3f));
    (void)::sendto(sock.get(), p.data(), p.size(), 0, reinterpret_cast<const sockaddr*>(&to), sizeof(to));
    return p;
  };
  // Too short to answer with a smaller reset (RFC 9000 §10.3.3): silence.
  (void)probe(21);
  EXPECT_TRUE(receive(sock.get(), 300ms).empty());

  const auto p = probe(60);
  const auto reset = receive(sock.get(), 2s);
  ASSERT_FALSE(reset.empty());
  EXPECT_LT(reset.size(), p.size());
  EXPECT_GE(reset.size(), 21u);
  EXPECT_EQ(reset[0] & 0xc0, 0x40);  // looks like a short-header packet
  ngtcp2_cid cid{};
  cid.datalen = metatensor::streaming::quic::detail::cid_length;
  std::memcpy(cid.data, p.data() + 1, cid.datalen);
  std::uint8_t token[NGTCP2_STATELESS_RESET_TOKENLEN];
  ASSERT_TRUE(metatensor::streaming::quic::detail::reset_token_for(o.testing_reset_secret, cid, token));
  EXPECT_EQ(std::memcmp(reset.data() + reset.size() - sizeof(token), token, sizeof(token)), 0);

  // A storm is answered at the configured rate at most (50/s, as many in
  // a burst).
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < 2000; ++i) (void)probe(60);
  std::size_t answers = 0;
  while (!receive(sock.get(), 300ms).empty()) ++answers;
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_GT(answers, 0u);
  EXPECT_LE(static_cast<double>(answers), 50 + 50 * seconds + 5);
  const auto st = server->stats();
  EXPECT_GT(st.resets_rate_limited, 0u);
  EXPECT_EQ(st.resets_sent, answers + 1);
}

TEST_F(QuicHardening, OurClientUnderstandsAStatelessReset) {
  // Server A serves the connection; then the relay sends the client's
  // packets to server B, which shares A's reset secret but not the
  // connection: as if A had restarted.
  auto o = options();
  o.testing_reset_secret.assign(32, 0x33);
  auto a = start(o);
  auto b = start(o);
  expect_reset_after_restart(*a, *b);
}

TEST_F(QuicHardening, ResetSecretOutlivesARestart) {
  // As above, with the secret taken from the file the first server made:
  // the second one (a restart) resets the first one's connections.
  const fs::path file = dir_ / "restart-reset.key";
  auto o = options();
  o.reset_secret_file = file;
  auto a = start(o);
  ASSERT_EQ(fs::file_size(file), 32u);
  EXPECT_EQ(fs::status(file).permissions() & fs::perms::all, fs::perms::owner_read | fs::perms::owner_write);
  const auto made = read_bytes(file);
  auto b = start(o);
  EXPECT_EQ(read_bytes(file), made);  // read, not replaced
  expect_reset_after_restart(*a, *b);
}

TEST_F(QuicHardening, SelfSignedServerKeepsItsResetSecretBesideItsCertificate) {
  auto o = options();
  o.tls_dir = dir_ / "tls-reset";
  (void)start(o);
  EXPECT_EQ(fs::file_size(o.tls_dir / "reset.key"), 32u);
  const auto made = read_bytes(o.tls_dir / "reset.key");
  (void)start(o);
  EXPECT_EQ(read_bytes(o.tls_dir / "reset.key"), made);
}

TEST_F(QuicHardening, ResetSecretFileOfAnotherSizeIsRefused) {
  const fs::path file = dir_ / "short-reset.key";
  std::ofstream(file, std::ios::binary) << "12345";
  auto o = options();
  o.reset_secret_file = file;
  try {
    (void)start(o);
    ADD_FAILURE() << "a 5-byte secret was accepted";
  } catch (const tensogram::io_error& e) {
    EXPECT_NE(std::string(e.what()).find(
                  "short-reset.key: a stateless reset secret must be 32 bytes, this file has 5"),
              std::string::npos)
        << e.what();
  }
  EXPECT_EQ(fs::file_size(file), 5u);  // a user's file is never replaced
}

TEST(QuicClientKey, Ipv6ClientsCountPerSlash64) {
  const auto v6 = [](const char* text) {
    sockaddr_in6 a{};
    a.sin6_family = AF_INET6;
    EXPECT_EQ(::inet_pton(AF_INET6, text, &a.sin6_addr), 1) << text;
    return metatensor::streaming::quic::detail::client_key(reinterpret_cast<const sockaddr*>(&a));
  };
  const auto v4 = [](const char* text) {
    sockaddr_in a{};
    a.sin_family = AF_INET;
    EXPECT_EQ(::inet_pton(AF_INET, text, &a.sin_addr), 1) << text;
    return metatensor::streaming::quic::detail::client_key(reinterpret_cast<const sockaddr*>(&a));
  };
  EXPECT_EQ(v6("2001:db8:1:2::1"), v6("2001:db8:1:2:ffff:ffff:ffff:fffe"));
  EXPECT_NE(v6("2001:db8:1:2::1"), v6("2001:db8:1:3::1"));
  EXPECT_EQ(v6("2001:db8:1:2::1").size(), 8u);
  // IPv4 clients of a dual-stack socket arrive IPv4-mapped: the same client.
  EXPECT_EQ(v6("::ffff:192.0.2.7"), v4("192.0.2.7"));
  EXPECT_NE(v4("192.0.2.7"), v4("192.0.2.8"));
  EXPECT_NE(v6("::ffff:192.0.2.7"), v6("::ffff:192.0.2.8"));
  sockaddr other{};
  other.sa_family = AF_UNIX;
  EXPECT_TRUE(metatensor::streaming::quic::detail::client_key(&other).empty());
}

TEST_F(QuicHardening, ConnectionsPerAddressAreLimited) {
  auto o = options();
  o.max_connections_per_address = 2;
  auto server = start(o);
  auto first = ms::remote_file::open(url(server->port()), trusting(*server));
  auto second = ms::remote_file::open(url(server->port()), trusting(*server));
  try {
    (void)ms::remote_file::open(url(server->port()), trusting(*server));
    ADD_FAILURE() << "a third connection from 127.0.0.1 was accepted";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("refused"), std::string::npos) << e.what();
  }
  EXPECT_EQ(server->stats().refused_per_address, 1u);
  EXPECT_EQ(server->stats().connections, 2u);
}

// The per-connection queue cap holds GETs back, and the waiting ones go most
// urgent first (§10.5): an urgent GET is not served behind a deferred one.
TEST_F(QuicHardening, QueueCapDefersGetsMostUrgentFirst) {
  auto o = options();
  o.max_queued_bytes = 1u << 20;
  auto server = start(o);
  auto f = ms::remote_file::open(url(server->port()), trusting(*server));
  std::mutex m;
  std::vector<std::string> order;
  auto note = [&](const ms::tensor_request& r) {
    std::lock_guard lock(m);
    order.push_back(r.tensor());
  };
  ms::request_options later;
  later.on_complete = note;
  ms::request_options urgent = later;
  urgent.urgency = 0;
  auto big = f.get("big", later);
  auto big2 = f.get("big2", later);
  // The urgent GET goes out once big's answer is queued and flowing (the
  // client could otherwise send it first, and no cap would be in the way).
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while (big.received() == 0 && std::chrono::steady_clock::now() < deadline) std::this_thread::yield();
  ASSERT_GT(big.received(), 0u);
  auto small = f.get("small", urgent);
  for (const auto* r : {&big, &big2, &small}) ASSERT_TRUE(r->wait_for(30s));
  for (const auto* r : {&big, &big2, &small}) EXPECT_FALSE(r->error());
  std::lock_guard lock(m);
  ASSERT_EQ(order.size(), 3u);
  const auto pos = [&](const std::string& n) {
    return std::find(order.begin(), order.end(), n) - order.begin();
  };
  EXPECT_LT(pos("small"), pos("big2"));  // not behind the deferred GET
  EXPECT_LT(pos("big"), pos("big2"));    // big2 waited for big to be handed to QUIC
  const auto st = server->stats();
  EXPECT_GE(st.gets_deferred, 1u);
  EXPECT_LE(st.queued_bytes_peak, big_bytes + 1000 + 2 * 4096);  // at most big and small at once
  EXPECT_EQ(st.queued_bytes, 0u);
}

TEST_F(QuicHardening, WellBehavedClientIsServedUnderHostileLoad) {
  auto o = options();
  o.retry_threshold = 8;
  o.max_connections = 64;
  o.max_connections_per_address = 32;
  o.handshake_timeout = 1500ms;
  o.max_queued_bytes = 4u << 20;
  o.stateless_resets_per_second = 100;
  o.refusal_log = [](const std::string&) {};  // counted in stats instead
  auto server = start(o);
  const auto file_size = fs::file_size(dir_ / "data" / "model.safetensors");

  // Unloaded and loaded fetches, interleaved and best-of, so that the load
  // of other processes on the machine affects both alike.
  double unloaded = 1e9;
  for (int i = 0; i < 2; ++i) {
    const double t = fetch_all(*server, 30s);
    ASSERT_GT(t, 0) << "unloaded fetch failed";
    unloaded = std::min(unloaded, t);
  }
  const auto rss_before = tgtest::current_rss();

  tgtest::attack_config cfg;
  cfg.port = server->port();
  cfg.resource = "model.safetensors";
  cfg.tensor = "big";
  cfg.distinct_initials = 12;  // more than the Retry threshold: some get Retry, the rest hold slots
  const auto setup_start = std::chrono::steady_clock::now();
  tgtest::hostile_load attack(cfg);
  const auto attack_start = std::chrono::steady_clock::now();
  // Sample the server while the attack runs.
  std::atomic<bool> sampling{true};
  std::atomic<std::uint64_t> max_handshaking{0};
  std::atomic<std::uint64_t> max_connections{0};
  std::atomic<std::uint64_t> max_queued{0};
  std::thread sampler([&] {
    while (sampling) {
      const auto st = server->stats();
      max_handshaking = std::max<std::uint64_t>(max_handshaking, st.handshaking);
      max_connections = std::max<std::uint64_t>(max_connections, st.connections);
      max_queued = std::max<std::uint64_t>(max_queued, st.queued_bytes);
      std::this_thread::sleep_for(5ms);
    }
  });
  // Let the attackers settle in (slowloris connected and blocked).
  const auto settle = std::chrono::steady_clock::now() + 5s;
  while (attack.slow_connected() < cfg.slowloris || attack.slow_gets() < cfg.slowloris) {
    if (std::chrono::steady_clock::now() > settle) break;
    std::this_thread::sleep_for(20ms);
  }
  // Best of 2 like the unloaded runs (each run fetches the file 3 times).
  double loaded = 1e9;
  for (int i = 0; i < 2; ++i) {
    const double t = fetch_all(*server, 30s);
    ASSERT_GT(t, 0) << "loaded fetch " << i << " failed";
    loaded = std::min(loaded, t);
  }
  // Long enough for the half-open handshakes to time out (1.5 s).
  while (std::chrono::steady_clock::now() - attack_start < 2500ms ||
         (server->stats().handshake_timeouts == 0 && std::chrono::steady_clock::now() - attack_start < 8s)) {
    std::this_thread::sleep_for(20ms);
  }
  const double attack_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - attack_start).count();
  const auto rss_during = tgtest::current_rss();
  sampling = false;
  sampler.join();
  const auto st = server->stats();

  const double mb = fetches_per_run * static_cast<double>(file_size) / 1e6;
  std::printf(
      "[ hostile ] attack set up in %.2f s, ran %.2f s; whole file %.1f MB (x%d per run): unloaded %.1f "
      "MB/s, "
      "loaded %.1f "
      "MB/s (ratio %.2f); "
      "initials %llu, probes %llu, resets back %llu, slowloris GETs %llu; retries %llu, accepted %llu, "
      "handshake timeouts %llu, resets sent %llu / rate-limited %llu, deferred GETs %llu; "
      "max handshaking %llu, max connections %llu, max queued %.1f MiB; RSS %llu -> %llu KiB (anon %llu -> "
      "%llu)\n",
      std::chrono::duration<double>(attack_start - setup_start).count(), attack_seconds,
      static_cast<double>(file_size) / 1e6, fetches_per_run, mb / unloaded, mb / loaded, unloaded / loaded,
      static_cast<unsigned long long>(attack.initials_sent()),
      static_cast<unsigned long long>(attack.probes_sent()),
      static_cast<unsigned long long>(attack.resets_received()),
      static_cast<unsigned long long>(attack.slow_gets()), static_cast<unsigned long long>(st.retries_sent),
      static_cast<unsigned long long>(st.accepted), static_cast<unsigned long long>(st.handshake_timeouts),
      static_cast<unsigned long long>(st.resets_sent),
      static_cast<unsigned long long>(st.resets_rate_limited),
      static_cast<unsigned long long>(st.gets_deferred),
      static_cast<unsigned long long>(max_handshaking.load()),
      static_cast<unsigned long long>(max_connections.load()),
      static_cast<double>(max_queued.load()) / (1 << 20), static_cast<unsigned long long>(rss_before.total),
      static_cast<unsigned long long>(rss_during.total), static_cast<unsigned long long>(rss_before.anon),
      static_cast<unsigned long long>(rss_during.anon));

  // The attack happened.
  EXPECT_GT(attack.initials_sent(), 1000u);
  EXPECT_GT(attack.probes_sent(), 2000u);
  EXPECT_EQ(attack.slow_connected(), cfg.slowloris);
  EXPECT_GT(attack.slow_gets(), 100u);
  // The defences engaged.
  EXPECT_GT(st.retries_sent, 0u);
  EXPECT_GT(st.handshake_timeouts, 0u);
  EXPECT_GT(st.resets_rate_limited, 0u);
  EXPECT_GT(st.gets_deferred, 0u);
  // Bounded state: half-open handshakes stop at the Retry threshold (plus
  // validated clients mid-handshake), connections at the limit, and each
  // connection queues at most max(max_queued_bytes, one answer).
  EXPECT_LE(max_handshaking.load(), o.retry_threshold + 2);
  EXPECT_LE(max_connections.load(), o.max_connections);
  const std::uint64_t frame_heads = 4096;  // RESPONSE and the DATA frame's head
  EXPECT_LE(st.queued_bytes_peak, std::max<std::uint64_t>(o.max_queued_bytes, big_bytes + frame_heads));
  EXPECT_LE(max_queued.load(), (cfg.slowloris + 2) * std::max<std::uint64_t>(o.max_queued_bytes, big_bytes));
  // Anonymous memory (the server and every client of this process) grows by
  // less than the file for all the attack: nothing is buffered per never-
  // reading stream.
  // (Not under ASan, whose quarantine keeps freed memory resident.)
  if (optimized_build) {
    EXPECT_LT(rss_during.anon, rss_before.anon + 64 * 1024) << "KiB";
  }
  // The throughput goal (loaded >= 50 % of unloaded) is a benchmark's
  // business, not a timed test's: tensogram_metatensor_hostile_bench measures
  // it with the server in a process of its own. Here the client must finish
  // (asserted above) and the ratio is only printed.
}

}  // namespace
