// The listening endpoint of the QUIC engine (spec 06 §10.2): routes
// datagrams to connections by connection ID, accepts a client's first
// Initial, answers version negotiation and refuses connections beyond the
// limit.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <ngtcp2/ngtcp2_crypto.h>

#include <algorithm>
#include <array>
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

}  // namespace

struct server_endpoint::impl final : detail::endpoint_base {
  impl(server_config cfg, handler_factory fac) : config(std::move(cfg)), factory(std::move(fac)) {
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
    if (rv != 0 || vc.dcidlen > NGTCP2_MAX_CIDLEN) return;
    if (auto it = by_cid.find(cid_key(vc.dcid, vc.dcidlen)); it != by_cid.end()) {
      it->second->receive(data, len, from, from_len, ts);
      return;
    }
    // Unknown connection: only a client's first Initial may create one
    // (RFC 9000 §5.2.2); anything else is dropped (no stateless reset).
    ngtcp2_pkt_hd hd{};
    if ((data[0] & 0x80) == 0 || ngtcp2_accept(&hd, data, len) != 0) return;
    if (live_connections() >= config.max_connections) {
      refuse(hd, from, from_len);
      return;
    }
    accept(hd, data, len, from, from_len, ts);
  }

  ngtcp2_tstamp service(ngtcp2_tstamp ts) override {
    ngtcp2_tstamp next = UINT64_MAX;
    for (auto& c : conns) {
      if (c->deadline() <= ts) c->on_timer(ts);
      c->write(now_ns());
    }
    sweep();
    for (auto& c : conns) next = std::min(next, c->deadline());
    return next;
  }

  void on_stop() override {
    for (auto& c : conns) c->shutdown("server stopping");
    sweep();
  }

  [[nodiscard]] std::size_t live_connections() const noexcept {
    return static_cast<std::size_t>(std::count_if(conns.begin(), conns.end(), [](const auto& c) {
      return c->current_state() == conn_impl::state::open;
    }));
  }

  void sweep() {
    auto dead = std::stable_partition(conns.begin(), conns.end(), [](const auto& c) {
      return c->current_state() != conn_impl::state::dead;
    });
    for (auto it = dead; it != conns.end(); ++it) {
      for (const auto& k : (*it)->cids()) {
        if (auto f = by_cid.find(k); f != by_cid.end() && f->second == it->get()) by_cid.erase(f);
      }
    }
    conns.erase(dead, conns.end());
  }

  void accept(const ngtcp2_pkt_hd& hd, const std::uint8_t* data, std::size_t len, const sockaddr* from,
              socklen_t from_len, ngtcp2_tstamp ts) {
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
    // The client's chosen DCID routes its Initials until it learns ours.
    for (const auto& cid : {setup.scid, hd.dcid}) {
      by_cid[cid_key(cid)] = raw;
      raw->remember_cid(cid);
    }
    conns.push_back(std::move(c));
    raw->receive(data, len, from, from_len, ts);
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

  // Over max_connections: CONNECTION_CLOSE with CONNECTION_REFUSED in an
  // Initial packet (RFC 9000 §5.2.2, §20.1), without keeping any state.
  void refuse(const ngtcp2_pkt_hd& hd, const sockaddr* to, socklen_t to_len) {
    std::array<std::uint8_t, NGTCP2_MAX_UDP_PAYLOAD_SIZE> buf{};
    const auto n = ngtcp2_crypto_write_connection_close(buf.data(), buf.size(), hd.version, &hd.scid,
                                                        &hd.dcid, NGTCP2_CONNECTION_REFUSED, nullptr, 0);
    if (n > 0) io_->send_one(buf.data(), static_cast<std::size_t>(n), to, to_len);
  }

  server_config config;
  handler_factory factory;
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

}  // namespace metatensor::streaming::quic
