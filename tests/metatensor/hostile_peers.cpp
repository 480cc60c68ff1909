#include "hostile_peers.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <fstream>
#include <map>
#include <mutex>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>

#include "src/core/unique_fd.hpp"
#include "src/metatensor/streaming/protocol/stream_protocol.hpp"
#include "src/metatensor/streaming/quic/quic_engine.hpp"

namespace tgtest {

namespace {

namespace q = metatensor::streaming::quic;
namespace ms = metatensor::streaming;
using tensogram::detail::unique_fd;
using namespace std::chrono_literals;

sockaddr_in loopback(std::uint8_t last, std::uint16_t port) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl((127u << 24) | last);
  return a;
}

unique_fd udp_socket_on(std::uint8_t last) {
  unique_fd fd(::socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!fd) throw std::runtime_error("socket");
  const sockaddr_in a = loopback(last, 0);
  if (::bind(fd.get(), reinterpret_cast<const sockaddr*>(&a), sizeof(a)) != 0) {
    throw std::runtime_error("bind 127.0.0." + std::to_string(last));
  }
  return fd;
}

std::uint16_t port_of(int fd) {
  sockaddr_in a{};
  socklen_t len = sizeof(a);
  (void)::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  return ntohs(a.sin_port);
}

// A client handler that only records whether the handshake happened.
class silent_handler final : public q::connection_handler {
 public:
  void on_handshake_completed(q::connection&) override {}
  void on_stream_opened(q::connection&, std::int64_t) override {}
  void on_stream_data(q::connection&, std::int64_t, std::span<const std::byte>, bool) override {}
  void on_stream_reset(q::connection&, std::int64_t, std::uint64_t) override {}
  void on_stop_sending(q::connection&, std::int64_t, std::uint64_t) override {}
  void on_stream_closed(q::connection&, std::int64_t, std::uint64_t) override {}
  std::optional<q::outgoing> next_outgoing(q::connection&) override { return std::nullopt; }
  void on_sent(q::connection&, std::int64_t, std::size_t, bool) override {}
  void on_stream_blocked(q::connection&, std::int64_t) override {}
  void on_stream_unblocked(q::connection&, std::int64_t) override {}
  void on_closed(q::connection&, std::uint64_t, const std::string&, bool) override {}
};

}  // namespace

std::vector<std::vector<std::uint8_t>> capture_initials(std::size_t count) {
  const unique_fd sink = udp_socket_on(1);
  const std::uint16_t port = port_of(sink.get());
  std::map<std::uint16_t, std::vector<std::uint8_t>> first;  // by client port
  silent_handler handler;
  std::vector<std::unique_ptr<q::client_endpoint>> clients;
  for (std::size_t i = 0; i < count; ++i) {
    q::client_config cfg;
    cfg.host = "127.0.0.1";
    cfg.port = port;
    cfg.verify_peer = false;
    cfg.limits.handshake_timeout = 60s;
    clients.push_back(std::make_unique<q::client_endpoint>(cfg, handler));
  }
  std::vector<std::uint8_t> buf(65536);
  const auto deadline = std::chrono::steady_clock::now() + 5s;
  while (first.size() < count && std::chrono::steady_clock::now() < deadline) {
    pollfd p{sink.get(), POLLIN, 0};
    if (::poll(&p, 1, 100) <= 0) continue;
    sockaddr_in from{};
    socklen_t len = sizeof(from);
    const auto n =
        ::recvfrom(sink.get(), buf.data(), buf.size(), 0, reinterpret_cast<sockaddr*>(&from), &len);
    if (n <= 0) continue;
    first.try_emplace(ntohs(from.sin_port), buf.begin(), buf.begin() + n);
  }
  clients.clear();
  std::vector<std::vector<std::uint8_t>> out;
  for (auto& [p, d] : first) out.push_back(std::move(d));
  return out;
}

// ---------------------------------------------------------------------------
// Slowloris: OPEN, then a GET of `tensor` on every stream the server allows;
// the engine never returns credit, so the server can send only the first
// window of each.

struct hostile_load::slow_client final : q::connection_handler {
  slow_client(std::uint16_t port, std::string resource, std::string tensor)
      : resource_(std::move(resource)), tensor_(std::move(tensor)) {
    q::client_config cfg;
    cfg.host = "127.0.0.1";
    cfg.port = port;
    cfg.verify_peer = false;
    cfg.limits.stream_window = 16 * 1024;
    cfg.limits.connection_window = 256 * 1024;
    cfg.testing_never_return_credit = true;
    endpoint = std::make_unique<q::client_endpoint>(cfg, *this);
  }
  slow_client(const slow_client&) = delete;
  slow_client& operator=(const slow_client&) = delete;
  ~slow_client() override { endpoint.reset(); }

  void on_handshake_completed(q::connection& c) override {
    connected = true;
    if (auto id = c.open_bidi_stream()) {
      ms::open_payload open;
      open.resource = resource_;
      out_[*id] = {ms::encode(open), 0, false};
      c.want_write();
    }
  }
  void on_stream_opened(q::connection&, std::int64_t) override {}
  void on_stream_data(q::connection& c, std::int64_t id, std::span<const std::byte>, bool) override {
    if (id == 0 && !requested_) {
      // The header has started to arrive: the server accepts GETs once it
      // is sent, and this client is in no hurry.
      requested_ = true;
      open_more(c);
    }
  }
  void on_stream_reset(q::connection&, std::int64_t, std::uint64_t) override {}
  void on_stop_sending(q::connection&, std::int64_t, std::uint64_t) override {}
  void on_stream_closed(q::connection& c, std::int64_t, std::uint64_t) override { open_more(c); }
  void on_stream_credit(q::connection& c) override { open_more(c); }
  std::optional<q::outgoing> next_outgoing(q::connection&) override {
    for (auto& [id, s] : out_) {
      if (s.fin_sent || s.blocked) continue;
      return q::outgoing{id, std::span<const std::byte>(s.bytes).subspan(s.sent), id != 0};
    }
    return std::nullopt;
  }
  void on_sent(q::connection&, std::int64_t id, std::size_t n, bool fin) override {
    auto& s = out_[id];
    s.sent += n;
    if (id == 0 && s.sent == s.bytes.size()) s.fin_sent = true;  // the control stream stays open
    if (fin) {
      s.fin_sent = true;
      ++gets;
    }
  }
  void on_stream_blocked(q::connection&, std::int64_t id) override { out_[id].blocked = true; }
  void on_stream_unblocked(q::connection& c, std::int64_t id) override {
    out_[id].blocked = false;
    c.want_write();
  }
  void on_closed(q::connection&, std::uint64_t, const std::string&, bool) override { closed = true; }

  void open_more(q::connection& c) {
    if (!requested_) return;
    while (auto id = c.open_bidi_stream()) {
      ms::get_payload get;
      get.tensor = tensor_;
      out_[*id] = {ms::encode(get), 0, false};
    }
    c.want_write();
  }

  struct pending {
    std::vector<std::byte> bytes;
    std::size_t sent = 0;
    bool fin_sent = false;
    bool blocked = false;
  };
  std::string resource_;
  std::string tensor_;
  bool requested_ = false;
  std::map<std::int64_t, pending> out_;  // loop thread only
  std::atomic<bool> connected{false};
  std::atomic<bool> closed{false};
  std::atomic<std::uint64_t> gets{0};
  std::unique_ptr<q::client_endpoint> endpoint;  // last
};

hostile_load::hostile_load(attack_config cfg) : cfg_(std::move(cfg)) {
  if (cfg_.initials_per_second > 0) initials_ = capture_initials(cfg_.distinct_initials);
  for (std::size_t i = 0; i < cfg_.slowloris; ++i) {
    slow_.push_back(std::make_unique<slow_client>(cfg_.port, cfg_.resource, cfg_.tensor));
  }
  flood_thread_ = std::thread([this] { flood(); });
}

hostile_load::~hostile_load() {
  stop_ = true;
  if (flood_thread_.joinable()) flood_thread_.join();
  slow_.clear();
}

std::uint64_t hostile_load::slow_gets() const noexcept {
  std::uint64_t n = 0;
  for (const auto& s : slow_) n += s->gets.load();
  return n;
}

std::size_t hostile_load::slow_connected() const noexcept {
  std::size_t n = 0;
  for (const auto& s : slow_) n += s->connected.load() ? 1 : 0;
  return n;
}

void hostile_load::flood() noexcept {
  try {
    // Many sources: 8 addresses × 8 ports for the Initials.
    std::vector<unique_fd> sources;
    // What the server sends them (Retry, handshake flights) is never read:
    // small receive buffers, and the kernel drops the rest, as a remote
    // attacker's would (reading it would only burn this machine's cores).
    for (std::uint8_t a = 2; a <= 9; ++a) {
      for (int p = 0; p < 8; ++p) {
        sources.push_back(udp_socket_on(a));
        const int small = 4096;
        (void)::setsockopt(sources.back().get(), SOL_SOCKET, SO_RCVBUF, &small, sizeof(small));
      }
    }
    const unique_fd probe = udp_socket_on(10);
    const sockaddr_in server = loopback(1, cfg_.port);
    const auto* to = reinterpret_cast<const sockaddr*>(&server);
    std::mt19937_64 rng(28);
    std::vector<std::uint8_t> packet(64);
    std::vector<std::uint8_t> reply(65536);
    const auto start = std::chrono::steady_clock::now();
    std::uint64_t initials = 0;
    std::uint64_t probes = 0;
    while (!stop_.load()) {
      const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      // Paced: what the rates allow by now.
      const auto initial_goal =
          static_cast<std::uint64_t>(elapsed * static_cast<double>(cfg_.initials_per_second));
      const auto probe_goal =
          static_cast<std::uint64_t>(elapsed * static_cast<double>(cfg_.probes_per_second));
      for (; !initials_.empty() && initials < initial_goal; ++initials) {
        const auto& d = initials_[initials % initials_.size()];
        const int fd = sources[initials % sources.size()].get();
        (void)::sendto(fd, d.data(), d.size(), MSG_DONTWAIT, to, sizeof(server));
        initials_sent_.fetch_add(1);
      }
      for (; probes < probe_goal; ++probes) {
        // Short header (0b01xxxxxx), an 18-byte DCID nobody issued, junk.
        for (auto& b : packet) b = static_cast<std::uint8_t>(rng());
        packet[0] = static_cast<std::uint8_t>(0x40 | (packet[0] & 0x3f));
        (void)::sendto(probe.get(), packet.data(), packet.size(), MSG_DONTWAIT, to, sizeof(server));
        probes_sent_.fetch_add(1);
      }
      for (;;) {
        const auto n = ::recv(probe.get(), reply.data(), reply.size(), MSG_DONTWAIT);
        if (n <= 0) break;
        if (n >= 21 && static_cast<std::size_t>(n) < packet.size() && (reply[0] & 0xc0) == 0x40) {
          resets_received_.fetch_add(1);
        }
      }
      std::this_thread::sleep_for(1ms);
    }
  } catch (...) {
    // A setup failure leaves the counters at zero, which the tests check.
  }
}

namespace {
rss_kib rss_from_status(const std::string& path) {
  std::ifstream in(path);
  rss_kib r;
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream s(line);
    std::string key;
    std::uint64_t value = 0;
    s >> key >> value;
    if (key == "VmRSS:") r.total = value;
    if (key == "RssAnon:") r.anon = value;
  }
  return r;
}
}  // namespace

rss_kib current_rss() {
  return rss_from_status("/proc/self/status");
}

rss_kib process_rss(int pid) {
  return rss_from_status("/proc/" + std::to_string(pid) + "/status");
}

}  // namespace tgtest
