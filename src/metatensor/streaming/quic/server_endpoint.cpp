// The listening endpoint of the QUIC engine (spec 06 §10.2): routes
// datagrams to connections by connection ID, accepts a client's first
// Initial, answers version negotiation, and defends itself:
//
// * address validation (RFC 9000 §8.1.2): once `retry_threshold` handshakes
//   are in progress, an Initial without a valid token gets a Retry whose
//   token binds the client's address, the time and its first DCID under a
//   key made at start; no state is kept until the client echoes it, so a
//   flood of Initials from spoofed or many source ports costs a datagram
//   each, not a connection;
// * connection limits, global and per client IP address, enforced with
//   CONNECTION_REFUSED without keeping state (RFC 9000 §5.2.2);
// * stateless resets (RFC 9000 §10.3) for short-header packets to unknown
//   connection IDs, with tokens derived from a secret and the CID, rate
//   limited by a token bucket and always smaller than the packet answered
//   (so two endpoints cannot loop);
// * counters of all of it (`stats()`) and rate-limited log lines.
//
// Handshake and idle timeouts are ngtcp2's timers (connection.cpp).
#include <arpa/inet.h>
#include <gnutls/crypto.h>
#include <gnutls/gnutls.h>
#include <netinet/in.h>
#include <ngtcp2/ngtcp2_crypto.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <map>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "connection.hpp"
#include "endpoint.hpp"
#include "quic_engine.hpp"
#include "tls_credentials.hpp"

namespace metatensor::streaming::quic {

namespace {

using detail::cid_hash;
using detail::cid_key;
using detail::cid_length;
using detail::conn_impl;
using detail::now_ns;
using detail::random_bytes;
using detail::random_cid;
using detail::transport_setup;

// Key material: GNUTLS_RND_KEY (RFC 9000 §8.1.4, §10.3.2 want the token
// keys unpredictable).
std::vector<std::uint8_t> new_secret() {
  std::vector<std::uint8_t> key(server_secret_length);
  if (gnutls_rnd(GNUTLS_RND_KEY, key.data(), key.size()) != 0) {
    throw tensogram::io_error("cannot generate the server's token keys");
  }
  return key;
}

// The server's counters: written on the loop thread, read by `stats()`.
struct counters {
  std::atomic<std::uint64_t> connections{0}, handshaking{0}, accepted{0}, retries_sent{0}, invalid_tokens{0},
      refused_global{0}, refused_per_address{0}, resets_sent{0}, resets_rate_limited{0},
      handshake_timeouts{0}, idle_timeouts{0}, dropped_packets{0};
};

// One log line per refusal class per second at most, with the count of
// events since the previous line, so a flood cannot flood the log.
class refusal_log {
 public:
  explicit refusal_log(std::function<void(const std::string&)> sink) : sink_(std::move(sink)) {}
  void note(const char* what, const std::string& detail, ngtcp2_tstamp ts) {
    if (!sink_) return;
    auto& e = classes_[what];
    ++e.pending;
    if (e.logged && ts < e.last + NGTCP2_SECONDS) return;
    std::string line = std::string("refused: ") + what + (detail.empty() ? "" : " (" + detail + ")");
    if (e.pending > 1) line += "; " + std::to_string(e.pending) + " times since the last such line";
    e.pending = 0;
    e.last = ts;
    e.logged = true;
    try {
      sink_(line);
    } catch (...) {
      // A log sink that fails must not take the server down.
    }
  }

 private:
  struct entry {
    ngtcp2_tstamp last = 0;
    std::uint64_t pending = 0;
    bool logged = false;
  };
  std::function<void(const std::string&)> sink_;
  std::map<std::string, entry, std::less<>> classes_;
};

}  // namespace

struct server_endpoint::impl final : detail::endpoint_base {
  impl(server_config cfg, handler_factory fac)
      : config(std::move(cfg)), factory(std::move(fac)), refusals(config.log) {
    retry_key = new_secret();
    reset_secret = config.stateless_reset_secret.empty() ? new_secret() : config.stateless_reset_secret;
    reset_tokens = static_cast<double>(config.stateless_resets_per_second);
    credentials = detail::load_server_credentials(config.cert_pem, config.key_pem);
    open_socket(config.host, config.port, true, "cannot bind UDP", [](int fd, const addrinfo& ai) {
      if (ai.ai_family == AF_INET6) {
        // "::" serves IPv4 clients too.
        int off = 0;
        (void)::setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &off, sizeof(off));
      }
      return ::bind(fd, ai.ai_addr, ai.ai_addrlen) == 0;
    });
  }

  impl(const impl&) = delete;
  impl& operator=(const impl&) = delete;
  ~impl() override = default;

  void add_cid(const ngtcp2_cid& cid, conn_impl& c) override { by_cid[cid_key(cid)] = &c; }
  void remove_cid(const ngtcp2_cid& cid) override { by_cid.erase(cid_key(cid)); }

  void dispatch(const std::uint8_t* data, std::size_t len, const sockaddr* from, socklen_t from_len,
                ngtcp2_tstamp ts) override {
    ngtcp2_version_cid vc{};
    const int rv = ngtcp2_pkt_decode_version_cid(&vc, data, len, cid_length);
    if (rv == NGTCP2_ERR_VERSION_NEGOTIATION) {
      send_version_negotiation(vc, len, from, from_len);
      return;
    }
    if (rv != 0 || vc.dcidlen > NGTCP2_MAX_CIDLEN) {
      stats.dropped_packets.fetch_add(1, std::memory_order_relaxed);
      return;
    }
    if (auto it = by_cid.find(cid_key(vc.dcid, vc.dcidlen)); it != by_cid.end()) {
      it->second->receive(data, len, from, from_len, ts);
      return;
    }
    if ((data[0] & 0x80) == 0) {
      send_stateless_reset(vc, len, from, from_len, ts);
      return;
    }
    // Unknown connection: only a client's first Initial may create one
    // (RFC 9000 §5.2.2); anything else is dropped.
    ngtcp2_pkt_hd hd{};
    if (ngtcp2_accept(&hd, data, len) != 0) {
      stats.dropped_packets.fetch_add(1, std::memory_order_relaxed);
      return;
    }
    // Address validation first: the limits below then count addresses
    // that answered, not forged ones.
    ngtcp2_cid odcid{};
    bool validated = false;
    if (hd.token.len > 0 && hd.token.base[0] == NGTCP2_CRYPTO_TOKEN_MAGIC_RETRY) {
      if (ngtcp2_crypto_verify_retry_token(&odcid, hd.token.base, hd.token.len, retry_key.data(),
                                           retry_key.size(), hd.version, from, from_len, &hd.dcid,
                                           detail::to_ns(config.retry_token_lifetime), ts) != 0) {
        // RFC 9000 §8.1.3: close with INVALID_TOKEN, keeping no state.
        stats.invalid_tokens.fetch_add(1, std::memory_order_relaxed);
        refusals.note("invalid or expired Retry token", detail::to_string(from, from_len), ts);
        send_initial_close(hd, NGTCP2_INVALID_TOKEN, from, from_len);
        return;
      }
      validated = true;
    }
    // (A NEW_TOKEN token is never issued by this server: one is ignored.)
    const auto [n_open, n_handshaking] = connection_counts();
    if (!validated && (config.retry_threshold == 0 || n_handshaking >= config.retry_threshold)) {
      send_retry(hd, from, from_len, ts);
      return;
    }
    if (n_open >= config.max_connections) {
      stats.refused_global.fetch_add(1, std::memory_order_relaxed);
      refusals.note("server full", "max connections " + std::to_string(config.max_connections), ts);
      send_initial_close(hd, NGTCP2_CONNECTION_REFUSED, from, from_len);
      return;
    }
    // Per address: an unvalidated client over the limit is sent a Retry
    // first (its address might be forged to lock a victim out); once
    // validated, only connections whose address is proven count.
    if (!validated && connections_from(from, false) >= config.max_connections_per_address) {
      send_retry(hd, from, from_len, ts);
      return;
    }
    if (validated && connections_from(from, true) >= config.max_connections_per_address) {
      stats.refused_per_address.fetch_add(1, std::memory_order_relaxed);
      refusals.note(
          "too many connections from one address",
          detail::to_string(from, from_len) + ", max " + std::to_string(config.max_connections_per_address),
          ts);
      send_initial_close(hd, NGTCP2_CONNECTION_REFUSED, from, from_len);
      return;
    }
    accept(hd, data, len, from, from_len, ts, validated ? &odcid : nullptr);
  }

  ngtcp2_tstamp service(ngtcp2_tstamp ts) override {
    ngtcp2_tstamp next = UINT64_MAX;
    for (auto& c : conns) {
      if (c->deadline() <= ts) c->on_timer(ts);
      c->write(now_ns());
    }
    sweep();
    for (auto& c : conns) next = std::min(next, c->deadline());
    const auto [n_open, n_handshaking] = connection_counts();
    stats.connections.store(n_open, std::memory_order_relaxed);
    stats.handshaking.store(n_handshaking, std::memory_order_relaxed);
    return next;
  }

  void on_stop() override {
    for (auto& c : conns) c->shutdown("server stopping");
    sweep();
  }

  // Open connections, and those of them still in handshake.  Linear, but
  // bounded by max_connections.
  [[nodiscard]] std::pair<std::size_t, std::size_t> connection_counts() const noexcept {
    std::size_t open = 0;
    std::size_t handshaking = 0;
    for (const auto& c : conns) {
      if (c->current_state() != conn_impl::state::open) continue;
      ++open;
      if (!c->handshake_completed()) ++handshaking;
    }
    return {open, handshaking};
  }

  // Open connections from the IP address of `from`; `proven`: only those
  // whose address was validated (Retry token, or handshake completed).
  [[nodiscard]] std::size_t connections_from(const sockaddr* from, bool proven) const {
    const std::string client = detail::client_key(from);
    return static_cast<std::size_t>(std::count_if(conns.begin(), conns.end(), [&](const auto& c) {
      return c->current_state() == conn_impl::state::open && detail::client_key(c->remote().sa()) == client &&
             (!proven || c->address_validated() || c->handshake_completed());
    }));
  }

  void sweep() {
    auto dead = std::stable_partition(conns.begin(), conns.end(), [](const auto& c) {
      return c->current_state() != conn_impl::state::dead;
    });
    for (auto it = dead; it != conns.end(); ++it) {
      if ((*it)->end_cause() == NGTCP2_ERR_HANDSHAKE_TIMEOUT) {
        stats.handshake_timeouts.fetch_add(1, std::memory_order_relaxed);
        refusals.note("handshake timed out", (*it)->peer(), now_ns());
      } else if ((*it)->end_cause() == NGTCP2_ERR_IDLE_CLOSE) {
        stats.idle_timeouts.fetch_add(1, std::memory_order_relaxed);
      }
      for (const auto& k : (*it)->cids()) {
        if (auto f = by_cid.find(k); f != by_cid.end() && f->second == it->get()) by_cid.erase(f);
      }
    }
    conns.erase(dead, conns.end());
  }

  void accept(const ngtcp2_pkt_hd& hd, const std::uint8_t* data, std::size_t len, const sockaddr* from,
              socklen_t from_len, ngtcp2_tstamp ts, const ngtcp2_cid* retry_odcid) {
    auto session = detail::make_server_session(credentials.get());
    if (!session) return;
    transport_setup setup;
    setup.server = true;
    setup.limits = config.limits;
    setup.local = local_;
    setup.remote.assign(from, from_len);
    setup.dcid = hd.scid;
    setup.scid = random_cid();
    setup.original_dcid = hd.dcid;
    setup.version = hd.version;
    setup.reset_secret = reset_secret;
    if (retry_odcid != nullptr) {
      // RFC 9000 §7.3: after a Retry the original DCID comes from the
      // token and the Initial's DCID is the Retry's SCID.
      setup.original_dcid = *retry_odcid;
      setup.retry_scid = hd.dcid;
      setup.token = std::span<const std::uint8_t>(hd.token.base, hd.token.len);
    }
    std::unique_ptr<conn_impl> c;
    try {
      c = std::make_unique<conn_impl>(*this, std::move(session), setup);
      auto handler = factory(*c);
      if (!handler) return;
      c->own_handler(std::move(handler));
    } catch (...) {
      // Out of memory or a factory that refused: the client times out.
      return;
    }
    conn_impl* raw = c.get();
    if (retry_odcid != nullptr) raw->mark_address_validated();
    // The client's chosen DCID routes its Initials until it learns ours.
    for (const auto& cid : {setup.scid, hd.dcid}) {
      by_cid[cid_key(cid)] = raw;
      raw->remember_cid(cid);
    }
    conns.push_back(std::move(c));
    stats.accepted.fetch_add(1, std::memory_order_relaxed);
    raw->receive(data, len, from, from_len, ts);
  }

  // RFC 9000 §8.1.2, §17.2.5: a Retry, with a token only this server can
  // make and check, binding the client's address, the time and its DCID.
  void send_retry(const ngtcp2_pkt_hd& hd, const sockaddr* to, socklen_t to_len, ngtcp2_tstamp ts) {
    std::array<std::uint8_t, NGTCP2_CRYPTO_MAX_RETRY_TOKENLEN> token{};
    const ngtcp2_cid retry_scid = random_cid();
    const auto tokenlen = ngtcp2_crypto_generate_retry_token(
        token.data(), retry_key.data(), retry_key.size(), hd.version, to, to_len, &retry_scid, &hd.dcid, ts);
    if (tokenlen < 0) return;
    std::array<std::uint8_t, NGTCP2_MAX_UDP_PAYLOAD_SIZE> buf{};
    const auto n = ngtcp2_crypto_write_retry(buf.data(), buf.size(), hd.version, &hd.scid, &retry_scid,
                                             &hd.dcid, token.data(), static_cast<std::size_t>(tokenlen));
    if (n <= 0) return;
    stats.retries_sent.fetch_add(1, std::memory_order_relaxed);  // before it leaves, as resets_sent
    io_->send_one(buf.data(), static_cast<std::size_t>(n), to, to_len);
    refusals.note("Initial without a token answered with Retry", "address validation", ts);
  }

  // RFC 9000 §10.3: a short-header packet for a CID we do not know.  The
  // token is the one this server issued (or would have) for that CID, so
  // a client whose connection the server lost learns it at once.
  void send_stateless_reset(const ngtcp2_version_cid& vc, std::size_t len, const sockaddr* to,
                            socklen_t to_len, ngtcp2_tstamp ts) {
    // The reset must be smaller than what triggered it (§10.3.3: no loops)
    // and at least 21 bytes (§10.3); 41 bytes look like a short packet.
    constexpr std::size_t min_reset = NGTCP2_MIN_STATELESS_RESET_RANDLEN + NGTCP2_STATELESS_RESET_TOKENLEN;
    if (len <= min_reset + 1 || vc.dcidlen != cid_length) {
      stats.dropped_packets.fetch_add(1, std::memory_order_relaxed);
      return;
    }
    // Token bucket: stateless_resets_per_second, as many in a burst.
    const double rate = static_cast<double>(config.stateless_resets_per_second);
    reset_tokens = std::min(rate, reset_tokens + rate * static_cast<double>(ts - reset_refill) /
                                                     static_cast<double>(NGTCP2_SECONDS));
    reset_refill = ts;
    if (reset_tokens < 1.0) {
      stats.resets_rate_limited.fetch_add(1, std::memory_order_relaxed);
      refusals.note("stateless resets rate-limited",
                    std::to_string(config.stateless_resets_per_second) + " per second", ts);
      return;
    }
    reset_tokens -= 1.0;
    ngtcp2_cid cid{};
    cid.datalen = vc.dcidlen;
    std::memcpy(cid.data, vc.dcid, vc.dcidlen);
    std::uint8_t token[NGTCP2_STATELESS_RESET_TOKENLEN];
    if (!detail::reset_token_for(reset_secret, cid, token)) return;
    const std::size_t total = std::min<std::size_t>(len - 1, 41);
    std::array<std::uint8_t, 64> rand{};
    random_bytes(rand.data(), rand.size());
    std::array<std::uint8_t, 64> buf{};
    const auto n =
        ngtcp2_pkt_write_stateless_reset(buf.data(), total, token, rand.data(), total - sizeof(token));
    if (n <= 0) return;
    // Counted before it leaves: a peer that has acted on the reset must find
    // it in the statistics (a test saw the client fail before the count).
    stats.resets_sent.fetch_add(1, std::memory_order_relaxed);
    io_->send_one(buf.data(), static_cast<std::size_t>(n), to, to_len);
  }

  // RFC 9000 §6: a Version Negotiation packet, only in answer to datagrams
  // large enough to be a client's first (§14.1), so it cannot amplify.
  void send_version_negotiation(const ngtcp2_version_cid& vc, std::size_t len, const sockaddr* to,
                                socklen_t to_len) {
    if (len < NGTCP2_MAX_UDP_PAYLOAD_SIZE) return;
    std::array<std::uint8_t, NGTCP2_MAX_UDP_PAYLOAD_SIZE> buf{};
    const std::array<std::uint32_t, 1> versions{NGTCP2_PROTO_VER_V1};
    std::uint8_t unused = 0;
    random_bytes(&unused, 1);
    const auto n =
        ngtcp2_pkt_write_version_negotiation(buf.data(), buf.size(), unused, vc.scid, vc.scidlen, vc.dcid,
                                             vc.dcidlen, versions.data(), versions.size());
    if (n > 0) io_->send_one(buf.data(), static_cast<std::size_t>(n), to, to_len);
  }

  // Over a limit (CONNECTION_REFUSED) or with a bad token (INVALID_TOKEN):
  // CONNECTION_CLOSE in an Initial packet (RFC 9000 §5.2.2, §8.1.3, §20.1),
  // without keeping any state.
  void send_initial_close(const ngtcp2_pkt_hd& hd, std::uint64_t code, const sockaddr* to, socklen_t to_len) {
    std::array<std::uint8_t, NGTCP2_MAX_UDP_PAYLOAD_SIZE> buf{};
    const auto n = ngtcp2_crypto_write_connection_close(buf.data(), buf.size(), hd.version, &hd.scid,
                                                        &hd.dcid, code, nullptr, 0);
    if (n > 0) io_->send_one(buf.data(), static_cast<std::size_t>(n), to, to_len);
  }

  server_config config;
  handler_factory factory;
  refusal_log refusals;
  counters stats;
  std::vector<std::uint8_t> retry_key;     // made at start: Retry tokens
  std::vector<std::uint8_t> reset_secret;  // stateless reset tokens
  double reset_tokens = 0;                 // the reset token bucket
  ngtcp2_tstamp reset_refill = 0;
  detail::credentials_ptr credentials;
  std::vector<std::unique_ptr<conn_impl>> conns;
  std::unordered_map<cid_key, conn_impl*, cid_hash> by_cid;
  std::thread thread;
  std::mutex run_mutex;  // one run() at a time

  void run() {
    std::lock_guard lock(run_mutex);
    run_loop();
    conns.clear();  // handlers are destroyed on the loop thread
    by_cid.clear();
  }
  void request_stop() noexcept { queue_.request_stop(); }
  void post(std::function<void()> task) { queue_.post(std::move(task)); }
  [[nodiscard]] std::uint16_t port() const noexcept {
    if (local_.sa()->sa_family == AF_INET6) {
      return ntohs(reinterpret_cast<const sockaddr_in6*>(local_.sa())->sin6_port);
    }
    return ntohs(reinterpret_cast<const sockaddr_in*>(local_.sa())->sin_port);
  }
};

server_endpoint::server_endpoint(server_config config, handler_factory factory)
    : impl_(std::make_unique<impl>(std::move(config), std::move(factory))) {}

server_endpoint::~server_endpoint() {
  stop();
  if (impl_->thread.joinable()) impl_->thread.join();
}

std::uint16_t server_endpoint::port() const noexcept {
  return impl_->port();
}

void server_endpoint::start() {
  if (impl_->thread.joinable()) return;
  impl_->thread = std::thread([p = impl_.get()] { p->run(); });
}

void server_endpoint::run() {
  impl_->run();
}

void server_endpoint::stop() {
  impl_->request_stop();
}

void server_endpoint::post(std::function<void()> task) {
  impl_->post(std::move(task));
}

server_stats server_endpoint::stats() const {
  const auto& c = impl_->stats;
  auto get = [](const std::atomic<std::uint64_t>& a) { return a.load(std::memory_order_relaxed); };
  server_stats s;
  s.connections = get(c.connections);
  s.handshaking = get(c.handshaking);
  s.accepted = get(c.accepted);
  s.retries_sent = get(c.retries_sent);
  s.invalid_tokens = get(c.invalid_tokens);
  s.refused_global = get(c.refused_global);
  s.refused_per_address = get(c.refused_per_address);
  s.resets_sent = get(c.resets_sent);
  s.resets_rate_limited = get(c.resets_rate_limited);
  s.handshake_timeouts = get(c.handshake_timeouts);
  s.idle_timeouts = get(c.idle_timeouts);
  s.dropped_packets = get(c.dropped_packets);
  return s;
}

}  // namespace metatensor::streaming::quic
