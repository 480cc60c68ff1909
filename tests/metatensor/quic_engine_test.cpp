// The QUIC engine on loopback (spec 06 §10.2, §10.8): handshakes, stream
// transfers, STOP_SENDING / RESET_STREAM, application close, certificate
// verification, timeouts and hostile datagrams.
#include "src/metatensor/streaming/quic/quic_engine.hpp"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <random>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "src/core/unique_fd.hpp"
#include "tensogram/core/error.hpp"

namespace {

namespace q = metatensor::streaming::quic;
namespace fs = std::filesystem;
using namespace std::chrono_literals;

std::vector<std::byte> pattern(std::size_t n, std::uint32_t seed) {
  std::vector<std::byte> v(n);
  std::uint32_t x = seed * 2654435761u + 1;
  for (auto& b : v) {
    x = x * 1664525u + 1013904223u;
    b = static_cast<std::byte>(x >> 24);
  }
  return v;
}

std::vector<std::byte> bytes_of(std::string_view s) {
  std::vector<std::byte> v(s.size());
  std::memcpy(v.data(), s.data(), s.size());
  return v;
}

class temp_dir {
 public:
  temp_dir() {
    static std::atomic<int> counter{0};
    std::random_device rd;
    path_ = fs::temp_directory_path() / ("quic_engine_test_" + std::to_string(::getpid()) + "_" +
                                         std::to_string(counter++) + "_" + std::to_string(rd()));
    fs::create_directories(path_);
  }
  temp_dir(const temp_dir&) = delete;
  temp_dir& operator=(const temp_dir&) = delete;
  ~temp_dir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  [[nodiscard]] const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

struct close_event {
  std::uint64_t code = 0;
  std::string reason;
  bool by_peer = false;
};

// Everything the server's handlers saw, for the test thread.
struct server_log {
  std::mutex m;
  std::condition_variable cv;
  std::vector<std::pair<std::int64_t, std::uint64_t>> stop_sending;
  std::vector<close_event> closed;
  int handshakes = 0;
  int connections = 0;

  template <class P>
  bool wait(P pred, std::chrono::milliseconds timeout = 5s) {
    std::unique_lock lock(m);
    return cv.wait_for(lock, timeout, [&] { return pred(); });
  }
};

enum class server_mode { echo, big_reply, close_on_data };

// Echoes each stream once the client ended it; or answers with a large
// shared buffer; or closes the connection when data arrives.
class server_handler final : public q::connection_handler {
 public:
  server_handler(std::shared_ptr<server_log> log, server_mode mode,
                 std::shared_ptr<std::vector<std::byte>> big)
      : log_(std::move(log)), mode_(mode), big_(std::move(big)) {}

  void on_handshake_completed(q::connection&) override {
    std::lock_guard lock(log_->m);
    ++log_->handshakes;
    log_->cv.notify_all();
  }
  void on_stream_opened(q::connection&, std::int64_t id) override { streams_[id]; }
  void on_stream_data(q::connection& c, std::int64_t id, std::span<const std::byte> data, bool fin) override {
    if (mode_ == server_mode::close_on_data) {
      c.close(4, "not found here");
      return;
    }
    auto& s = streams_[id];
    s.in.insert(s.in.end(), data.begin(), data.end());
    if (fin) {
      s.ready = true;
      c.want_write();
    }
  }
  void on_stream_reset(q::connection&, std::int64_t, std::uint64_t) override {}
  void on_stop_sending(q::connection& c, std::int64_t id, std::uint64_t code) override {
    {
      std::lock_guard lock(log_->m);
      log_->stop_sending.emplace_back(id, code);
      log_->cv.notify_all();
    }
    streams_[id].done = true;
    c.reset_stream(id, code);  // §10.4 cancellation
  }
  void on_stream_closed(q::connection&, std::int64_t id, std::uint64_t) override { streams_.erase(id); }
  std::optional<q::outgoing> next_outgoing(q::connection&) override {
    for (auto& [id, s] : streams_) {
      if (!s.ready || s.done || s.blocked) continue;
      const auto& src = mode_ == server_mode::big_reply ? *big_ : s.in;
      return q::outgoing{id, std::span<const std::byte>(src).subspan(s.sent), true};
    }
    return std::nullopt;
  }
  void on_sent(q::connection&, std::int64_t id, std::size_t n, bool fin_sent) override {
    auto& s = streams_[id];
    s.sent += n;
    if (fin_sent) s.done = true;
  }
  void on_stream_blocked(q::connection&, std::int64_t id) override { streams_[id].blocked = true; }
  void on_stream_unblocked(q::connection& c, std::int64_t id) override {
    streams_[id].blocked = false;
    c.want_write();
  }
  void on_closed(q::connection&, std::uint64_t code, const std::string& reason, bool by_peer) override {
    std::lock_guard lock(log_->m);
    log_->closed.push_back({code, reason, by_peer});
    log_->cv.notify_all();
  }

 private:
  struct stream {
    std::vector<std::byte> in;
    std::size_t sent = 0;
    bool ready = false;
    bool done = false;
    bool blocked = false;
  };
  std::shared_ptr<server_log> log_;
  server_mode mode_;
  std::shared_ptr<std::vector<std::byte>> big_;
  std::map<std::int64_t, stream> streams_;
};

// A client handler that sends scripted requests and records everything.
class client_handler final : public q::connection_handler {
 public:
  struct stream {
    std::vector<std::byte> out;
    std::size_t sent = 0;
    bool fin_sent = false;
    bool blocked = false;
    std::vector<std::byte> in;
    std::size_t received = 0;
    bool fin = false;
    std::optional<std::uint64_t> reset_code;
    bool closed = false;
  };

  std::mutex m;
  std::condition_variable cv;
  bool handshake = false;
  int closed_count = 0;
  close_event closed;
  std::map<std::int64_t, stream> streams;
  bool keep_data = true;                             // store received bytes
  std::optional<std::uint64_t> stop_on_first_data;   // STOP_SENDING code
  std::function<void(q::connection&)> on_handshake;  // runs on the loop thread

  template <class P>
  bool wait(P pred, std::chrono::milliseconds timeout = 5s) {
    std::unique_lock lock(m);
    return cv.wait_for(lock, timeout, [&] { return pred(); });
  }

  // Loop thread only.
  std::int64_t send(q::connection& c, std::vector<std::byte> data) {
    const auto id = c.open_bidi_stream();
    EXPECT_TRUE(id.has_value());
    if (!id) return -1;
    std::lock_guard lock(m);
    streams[*id].out = std::move(data);
    c.want_write();
    return *id;
  }

  void on_handshake_completed(q::connection& c) override {
    {
      std::lock_guard lock(m);
      handshake = true;
      cv.notify_all();
    }
    if (on_handshake) on_handshake(c);
  }
  void on_stream_opened(q::connection&, std::int64_t) override {
    ADD_FAILURE() << "the server opened a stream";
  }
  void on_stream_data(q::connection& c, std::int64_t id, std::span<const std::byte> data, bool fin) override {
    bool stop = false;
    {
      std::lock_guard lock(m);
      auto& s = streams[id];
      if (keep_data) s.in.insert(s.in.end(), data.begin(), data.end());
      s.received += data.size();
      s.fin = s.fin || fin;
      stop = stop_on_first_data && !data.empty() && s.received == data.size();
      cv.notify_all();
    }
    if (stop) c.stop_sending(id, *stop_on_first_data);
  }
  void on_stream_reset(q::connection&, std::int64_t id, std::uint64_t code) override {
    std::lock_guard lock(m);
    streams[id].reset_code = code;
    cv.notify_all();
  }
  void on_stop_sending(q::connection&, std::int64_t, std::uint64_t) override {}
  void on_stream_closed(q::connection&, std::int64_t id, std::uint64_t) override {
    std::lock_guard lock(m);
    streams[id].closed = true;
    cv.notify_all();
  }
  std::optional<q::outgoing> next_outgoing(q::connection&) override {
    std::lock_guard lock(m);
    for (auto& [id, s] : streams) {
      if (s.fin_sent || s.blocked) continue;
      return q::outgoing{id, std::span<const std::byte>(s.out).subspan(s.sent), true};
    }
    return std::nullopt;
  }
  void on_sent(q::connection&, std::int64_t id, std::size_t n, bool fin_sent) override {
    std::lock_guard lock(m);
    auto& s = streams[id];
    s.sent += n;
    s.fin_sent = s.fin_sent || fin_sent;
  }
  void on_stream_blocked(q::connection&, std::int64_t id) override {
    std::lock_guard lock(m);
    streams[id].blocked = true;
  }
  void on_stream_unblocked(q::connection& c, std::int64_t id) override {
    {
      std::lock_guard lock(m);
      streams[id].blocked = false;
    }
    c.want_write();
  }
  void on_closed(q::connection&, std::uint64_t code, const std::string& reason, bool by_peer) override {
    std::lock_guard lock(m);
    ++closed_count;
    closed = {code, reason, by_peer};
    cv.notify_all();
  }
};

class QuicEngine : public ::testing::Test {
 protected:
  void SetUp() override {
    cert_ = dir_.path() / "cert.pem";
    key_ = dir_.path() / "key.pem";
    q::generate_self_signed(cert_, key_, {"localhost", "127.0.0.1", "::1"});
    log_ = std::make_shared<server_log>();
  }

  void start_server(server_mode mode = server_mode::echo, q::transport_limits limits = {},
                    std::shared_ptr<std::vector<std::byte>> big = nullptr) {
    q::server_config cfg;
    cfg.host = "127.0.0.1";
    cfg.cert_pem = cert_;
    cfg.key_pem = key_;
    cfg.limits = limits;
    auto log = log_;
    server_ = std::make_unique<q::server_endpoint>(
        cfg, [log, mode, big](q::connection&) -> std::unique_ptr<q::connection_handler> {
          {
            std::lock_guard lock(log->m);
            ++log->connections;
          }
          return std::make_unique<server_handler>(log, mode, big);
        });
    server_->start();
  }

  [[nodiscard]] q::client_config insecure_client() const {
    q::client_config cfg;
    cfg.host = "127.0.0.1";
    cfg.port = server_->port();
    cfg.verify_peer = false;
    return cfg;
  }

  // Starts the server and a client that verifies its certificate (trusting
  // `ca_file` besides the system CAs) under `server_name` (empty: the host).
  // The client lives as long as the caller keeps it, so what the server
  // learns afterwards is not its destructor's close.
  [[nodiscard]] std::unique_ptr<q::client_endpoint> verifying_client(client_handler& h, fs::path ca_file,
                                                                     std::string server_name) {
    start_server();
    auto cfg = insecure_client();
    cfg.verify_peer = true;
    cfg.ca_file = std::move(ca_file);
    cfg.server_name = std::move(server_name);
    return std::make_unique<q::client_endpoint>(cfg, h);
  }

  // The handshake completes.
  static void expect_handshake(client_handler& h) {
    ASSERT_TRUE(h.wait([&] { return h.handshake || h.closed_count > 0; }));
    std::lock_guard lock(h.m);
    EXPECT_TRUE(h.handshake) << h.closed.reason;
  }

  // The client refuses the server's certificate and says so.
  static void expect_certificate_refused(client_handler& h) {
    ASSERT_TRUE(h.wait([&] { return h.closed_count > 0; }));
    std::lock_guard lock(h.m);
    EXPECT_FALSE(h.handshake);
    EXPECT_NE(h.closed.reason.find("certificate"), std::string::npos) << h.closed.reason;
  }

  temp_dir dir_;
  fs::path cert_;
  fs::path key_;
  std::shared_ptr<server_log> log_;
  std::unique_ptr<q::server_endpoint> server_;
};

TEST_F(QuicEngine, SelfSignedCertificateFiles) {
  ASSERT_TRUE(fs::exists(cert_));
  ASSERT_TRUE(fs::exists(key_));
  std::ifstream c(cert_);
  std::stringstream text;
  text << c.rdbuf();
  EXPECT_NE(text.str().find("-----BEGIN CERTIFICATE-----"), std::string::npos);
  struct stat st {};
  ASSERT_EQ(::stat(key_.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  // No temporary files left behind.
  int entries = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir_.path())) ++entries;
  EXPECT_EQ(entries, 2);
}

TEST_F(QuicEngine, EchoOneStream) {
  start_server();
  client_handler h;
  const auto message = bytes_of("hello over QUIC, metatensor/1");
  h.on_handshake = [&](q::connection& c) { h.send(c, message); };
  q::client_endpoint client(insecure_client(), h);
  ASSERT_TRUE(h.wait([&] { return !h.streams.empty() && h.streams.begin()->second.fin; }));
  std::lock_guard lock(h.m);
  const auto& s = h.streams.begin()->second;
  EXPECT_EQ(h.streams.begin()->first, 0);  // §10.2: the first stream is stream 0
  EXPECT_EQ(s.in, message);
  EXPECT_EQ(h.closed_count, 0);
}

TEST_F(QuicEngine, LargeTransferArrivesIntact) {
  start_server();
  client_handler h;
  const auto data = pattern(16u << 20, 7);  // 16 MiB each way
  h.on_handshake = [&](q::connection& c) { h.send(c, data); };
  q::client_endpoint client(insecure_client(), h);
  ASSERT_TRUE(h.wait([&] { return !h.streams.empty() && h.streams.begin()->second.fin; }, 20s));
  std::lock_guard lock(h.m);
  const auto& s = h.streams.begin()->second;
  ASSERT_EQ(s.in.size(), data.size());
  EXPECT_TRUE(s.in == data);
}

TEST_F(QuicEngine, ParallelStreams) {
  start_server();
  client_handler h;
  constexpr int n = 8;
  std::vector<std::vector<std::byte>> payloads;
  for (int i = 0; i < n; ++i)
    payloads.push_back(pattern((512u << 10) + static_cast<std::size_t>(i) * 1000, i));
  std::vector<std::int64_t> ids;
  h.on_handshake = [&](q::connection& c) {
    for (const auto& p : payloads) ids.push_back(h.send(c, p));
  };
  q::client_endpoint client(insecure_client(), h);
  ASSERT_TRUE(h.wait([&] {
    int done = 0;
    for (const auto& [id, s] : h.streams) done += s.fin ? 1 : 0;
    return done == n;
  }));
  std::lock_guard lock(h.m);
  ASSERT_EQ(ids.size(), static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) {
    EXPECT_EQ(ids[static_cast<std::size_t>(i)], 4 * i);
    EXPECT_TRUE(h.streams[ids[static_cast<std::size_t>(i)]].in == payloads[static_cast<std::size_t>(i)]) << i;
  }
}

TEST_F(QuicEngine, StopSendingIsAnsweredWithReset) {
  auto big = std::make_shared<std::vector<std::byte>>(pattern(16u << 20, 3));
  start_server(server_mode::big_reply, {}, big);
  client_handler h;
  h.keep_data = false;
  h.stop_on_first_data = 3;  // MT_CANCELLED
  std::int64_t id = -1;
  h.on_handshake = [&](q::connection& c) { id = h.send(c, bytes_of("GET")); };
  q::client_endpoint client(insecure_client(), h);
  ASSERT_TRUE(h.wait([&] { return !h.streams.empty() && h.streams.begin()->second.reset_code.has_value(); }));
  {
    std::lock_guard lock(h.m);
    EXPECT_EQ(*h.streams[id].reset_code, 3u);
    EXPECT_FALSE(h.streams[id].fin);
    EXPECT_LT(h.streams[id].received, big->size());
  }
  ASSERT_TRUE(log_->wait([&] { return !log_->stop_sending.empty(); }));
  std::lock_guard lock(log_->m);
  EXPECT_EQ(log_->stop_sending[0].first, id);
  EXPECT_EQ(log_->stop_sending[0].second, 3u);
}

TEST_F(QuicEngine, CancellationsReturnConnectionCredit) {
  // A connection window of 2 MiB and 20 cancelled 4 MiB replies: the
  // undelivered bytes of each reset stream must be credited back, or the
  // last transfer stalls.
  q::transport_limits limits;
  limits.stream_window = 1u << 20;
  limits.connection_window = 2u << 20;
  auto big = std::make_shared<std::vector<std::byte>>(pattern(4u << 20, 5));
  start_server(server_mode::big_reply, limits, big);
  client_handler h;
  h.keep_data = false;
  h.stop_on_first_data = 3;
  auto cfg = insecure_client();
  cfg.limits = limits;
  std::shared_ptr<q::client_endpoint> client;
  h.on_handshake = [&](q::connection& c) { h.send(c, bytes_of("GET")); };
  client = std::make_shared<q::client_endpoint>(cfg, h);
  for (int i = 1; i < 20; ++i) {
    ASSERT_TRUE(h.wait([&] {
      int resets = 0;
      for (const auto& [id, s] : h.streams) resets += s.reset_code ? 1 : 0;
      return resets == i;
    })) << i;
    client->post([&](q::connection& c) { h.send(c, bytes_of("GET")); });
  }
  ASSERT_TRUE(h.wait([&] {
    int resets = 0;
    for (const auto& [id, s] : h.streams) resets += s.reset_code ? 1 : 0;
    return resets == 20;
  }));
  // Now a complete transfer.
  {
    std::lock_guard lock(h.m);
    h.stop_on_first_data.reset();
  }
  std::int64_t last = -1;
  client->post([&](q::connection& c) { last = h.send(c, bytes_of("GET")); });
  ASSERT_TRUE(h.wait([&] { return last >= 0 && h.streams[last].fin; }, 10s));
  std::lock_guard lock(h.m);
  EXPECT_EQ(h.streams[last].received, big->size());
}

TEST_F(QuicEngine, ApplicationCloseReachesServer) {
  start_server();
  client_handler h;
  h.on_handshake = [&](q::connection& c) { h.send(c, bytes_of("ping")); };
  {
    q::client_endpoint client(insecure_client(), h);
    // After a round trip the handshake is confirmed, so the close travels
    // in a 1-RTT packet with its code and reason (RFC 9000 §10.2.3).
    ASSERT_TRUE(h.wait([&] { return !h.streams.empty() && h.streams.begin()->second.fin; }));
    client.post([](q::connection& c) { c.close(7, "bye for now"); });
    ASSERT_TRUE(log_->wait([&] { return !log_->closed.empty(); }));
  }
  {
    std::lock_guard lock(log_->m);
    ASSERT_EQ(log_->closed.size(), 1u);
    EXPECT_EQ(log_->closed[0].code, 7u);
    EXPECT_EQ(log_->closed[0].reason, "bye for now");
    EXPECT_TRUE(log_->closed[0].by_peer);
  }
  std::lock_guard lock(h.m);
  EXPECT_EQ(h.closed_count, 1);  // not again when the endpoint is destroyed
  EXPECT_EQ(h.closed.code, 7u);
  EXPECT_FALSE(h.closed.by_peer);
}

TEST_F(QuicEngine, ServerCloseReachesClient) {
  start_server(server_mode::close_on_data);
  client_handler h;
  h.on_handshake = [&](q::connection& c) { h.send(c, bytes_of("GET nothing")); };
  q::client_endpoint client(insecure_client(), h);
  ASSERT_TRUE(h.wait([&] { return h.closed_count > 0; }));
  std::lock_guard lock(h.m);
  EXPECT_EQ(h.closed.code, 4u);
  EXPECT_EQ(h.closed.reason, "not found here");
  EXPECT_TRUE(h.closed.by_peer);
}

TEST_F(QuicEngine, ClientDestructionClosesOnce) {
  start_server();
  client_handler h;
  {
    q::client_endpoint client(insecure_client(), h);
    ASSERT_TRUE(h.wait([&] { return h.handshake; }));
  }
  EXPECT_EQ(h.closed_count, 1);
  EXPECT_EQ(h.closed.code, 0u);
  EXPECT_FALSE(h.closed.by_peer);
  ASSERT_TRUE(log_->wait([&] { return !log_->closed.empty(); }));
  std::lock_guard lock(log_->m);
  EXPECT_EQ(log_->closed[0].code, 0u);
  EXPECT_TRUE(log_->closed[0].by_peer);
}

TEST_F(QuicEngine, ServerStopClosesConnections) {
  start_server();
  client_handler h;
  q::client_endpoint client(insecure_client(), h);
  ASSERT_TRUE(h.wait([&] { return h.handshake; }));
  server_->stop();
  ASSERT_TRUE(h.wait([&] { return h.closed_count > 0; }));
  {
    std::lock_guard lock(h.m);
    EXPECT_EQ(h.closed.code, 0u);
    EXPECT_TRUE(h.closed.by_peer);
  }
  server_.reset();
  std::lock_guard lock(log_->m);
  ASSERT_EQ(log_->closed.size(), 1u);
  EXPECT_FALSE(log_->closed[0].by_peer);
}

TEST_F(QuicEngine, PostedTasksRunAfterClose) {
  start_server();
  client_handler h;
  q::client_endpoint client(insecure_client(), h);
  ASSERT_TRUE(h.wait([&] { return h.handshake; }));
  client.post([](q::connection& c) { c.close(0, "done"); });
  ASSERT_TRUE(h.wait([&] { return h.closed_count > 0; }));
  std::atomic<bool> ran{false};
  client.post([&](q::connection& c) {
    EXPECT_FALSE(c.open_bidi_stream().has_value());
    c.close(1, "again");  // no effect
    ran = true;
  });
  for (int i = 0; i < 200 && !ran; ++i) std::this_thread::sleep_for(5ms);
  EXPECT_TRUE(ran);
  std::lock_guard lock(h.m);
  EXPECT_EQ(h.closed_count, 1);
}

TEST_F(QuicEngine, UntrustedCertificateIsRefused) {
  client_handler h;
  const auto client = verifying_client(h, {}, "localhost");
  expect_certificate_refused(h);
}

TEST_F(QuicEngine, CertificateTrustedThroughCaFile) {
  client_handler h;
  const auto client = verifying_client(h, cert_, "localhost");
  expect_handshake(h);
}

TEST_F(QuicEngine, CertificateForIpAddress) {
  client_handler h;
  const auto client = verifying_client(h, cert_, "");  // the host, 127.0.0.1: an IP SAN
  expect_handshake(h);
}

TEST_F(QuicEngine, WrongServerNameIsRefused) {
  client_handler h;
  const auto client = verifying_client(h, cert_, "metatensor.example");
  expect_certificate_refused(h);
  // The server learns why too: the client's TLS alert.
  ASSERT_TRUE(log_->wait([&] { return !log_->closed.empty(); }));
}

TEST_F(QuicEngine, MissingCertificateThrows) {
  q::server_config cfg;
  cfg.cert_pem = dir_.path() / "missing.pem";
  cfg.key_pem = key_;
  EXPECT_THROW(
      q::server_endpoint(cfg, [](q::connection&) { return std::unique_ptr<q::connection_handler>(); }),
      tensogram::io_error);
  cfg.cert_pem = key_;  // a key is not a certificate
  EXPECT_THROW(
      q::server_endpoint(cfg, [](q::connection&) { return std::unique_ptr<q::connection_handler>(); }),
      tensogram::io_error);
}

TEST_F(QuicEngine, UnresolvableHostThrows) {
  client_handler h;
  q::client_config cfg;
  cfg.host = "no-such-host.invalid";
  cfg.port = 4433;
  EXPECT_THROW(q::client_endpoint(cfg, h), tensogram::io_error);
}

// A UDP socket bound to an ephemeral loopback port that never answers.
tensogram::detail::unique_fd silent_udp_socket(std::uint16_t& port) {
  tensogram::detail::unique_fd fd(::socket(AF_INET, SOCK_DGRAM, 0));
  sockaddr_in sin{};
  sin.sin_family = AF_INET;
  sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(sin);
  if (fd.get() < 0 || ::bind(fd.get(), reinterpret_cast<sockaddr*>(&sin), sizeof(sin)) != 0 ||
      ::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&sin), &len) != 0) {
    throw std::runtime_error("cannot bind a loopback UDP socket");
  }
  port = ntohs(sin.sin_port);
  return fd;
}

// A client of 127.0.0.1:`port` that accepts any certificate.
q::client_config loopback_client(std::uint16_t port, std::chrono::milliseconds handshake_timeout) {
  q::client_config cfg;
  cfg.host = "127.0.0.1";
  cfg.port = port;
  cfg.verify_peer = false;
  cfg.limits.handshake_timeout = handshake_timeout;
  return cfg;
}

// Nothing bound on the port: the kernel's ICMP port unreachable ends the
// attempt at once, not after the (here 20 s) handshake timeout.
TEST_F(QuicEngine, ClosedPortIsRefusedWithoutWaitingForTheTimeout) {
  std::uint16_t port = 0;
  silent_udp_socket(port);  // closed again at once: the port is free, nobody listens
  client_handler h;
  q::client_endpoint client(loopback_client(port, 20s), h);
  EXPECT_TRUE(h.wait([&] { return h.closed_count > 0; }, 5s));
  std::lock_guard lock(h.m);
  EXPECT_NE(h.closed.reason.find("refused"), std::string::npos) << h.closed.reason;
}

TEST_F(QuicEngine, HandshakeTimeout) {
  std::uint16_t port = 0;
  const auto silent = silent_udp_socket(port);
  client_handler h;
  q::client_endpoint client(loopback_client(port, 300ms), h);
  EXPECT_TRUE(h.wait([&] { return h.closed_count > 0; }, 3s));
  std::lock_guard lock(h.m);
  EXPECT_NE(h.closed.reason.find("handshake"), std::string::npos) << h.closed.reason;
}

TEST_F(QuicEngine, IdleTimeout) {
  q::transport_limits limits;
  limits.idle_timeout = 300ms;
  start_server(server_mode::echo, limits);
  client_handler h;
  auto cfg = insecure_client();
  cfg.limits = limits;
  q::client_endpoint client(cfg, h);
  ASSERT_TRUE(h.wait([&] { return h.closed_count > 0; }, 3s));
  {
    std::lock_guard lock(h.m);
    EXPECT_TRUE(h.handshake);
    EXPECT_NE(h.closed.reason.find("idle"), std::string::npos) << h.closed.reason;
  }
  ASSERT_TRUE(log_->wait([&] { return !log_->closed.empty(); }, 3s));
}

TEST_F(QuicEngine, HostileDatagramsAreIgnored) {
  start_server();
  const int fd = ::socket(AF_INET, SOCK_DGRAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(server_->port());
  to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  std::mt19937 rng(42);
  for (int i = 0; i < 300; ++i) {
    std::vector<std::uint8_t> junk(static_cast<std::size_t>(rng() % 1500) + 1);
    for (auto& b : junk) b = static_cast<std::uint8_t>(rng());
    if (i % 3 == 0) junk[0] |= 0xc0;  // long header, random version
    if (i % 7 == 0 && junk.size() > 5) {
      // An Initial of an unknown version: Version Negotiation territory.
      junk.resize(1200);
      junk[0] = 0xc0;
      junk[1] = 0x1a, junk[2] = 0x2a, junk[3] = 0x3a, junk[4] = 0x4a;
      junk[5] = 8;
    }
    (void)::sendto(fd, junk.data(), junk.size(), 0, reinterpret_cast<sockaddr*>(&to), sizeof(to));
  }
  ::close(fd);
  client_handler h;
  const auto message = bytes_of("still alive");
  h.on_handshake = [&](q::connection& c) { h.send(c, message); };
  q::client_endpoint client(insecure_client(), h);
  ASSERT_TRUE(h.wait([&] { return !h.streams.empty() && h.streams.begin()->second.fin; }));
  std::lock_guard lock(h.m);
  EXPECT_EQ(h.streams.begin()->second.in, message);
  std::lock_guard lock2(log_->m);
  EXPECT_EQ(log_->connections, 1);
}

TEST_F(QuicEngine, MaxConnectionsIsEnforced) {
  q::server_config cfg;
  cfg.host = "127.0.0.1";
  cfg.cert_pem = cert_;
  cfg.key_pem = key_;
  cfg.max_connections = 1;
  auto log = log_;
  q::server_endpoint server(cfg, [log](q::connection&) -> std::unique_ptr<q::connection_handler> {
    return std::make_unique<server_handler>(log, server_mode::echo, nullptr);
  });
  server.start();
  client_handler a;
  client_handler b;
  q::client_config ccfg;
  ccfg.host = "127.0.0.1";
  ccfg.port = server.port();
  ccfg.verify_peer = false;
  q::client_endpoint first(ccfg, a);
  ASSERT_TRUE(a.wait([&] { return a.handshake; }));
  q::client_endpoint second(ccfg, b);
  ASSERT_TRUE(b.wait([&] { return b.closed_count > 0; }));
  std::lock_guard lock(b.m);
  EXPECT_FALSE(b.handshake);
  EXPECT_NE(b.closed.reason.find("refused"), std::string::npos) << b.closed.reason;
}

}  // namespace
