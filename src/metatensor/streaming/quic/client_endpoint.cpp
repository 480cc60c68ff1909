// A client endpoint of the QUIC engine (spec 06 §10.2): one connection on
// a connected UDP socket and its own loop thread.
#include <thread>
#include <utility>

#include "connection.hpp"
#include "endpoint.hpp"
#include "quic_engine.hpp"
#include "tls_credentials.hpp"

namespace metatensor::streaming::quic {

namespace {

using detail::address;
using detail::conn_impl;
using detail::now_ns;
using detail::random_cid;
using detail::to_string;
using detail::transport_setup;

}  // namespace

struct client_endpoint::impl final : detail::endpoint_base {
  impl(client_config cfg, connection_handler& h) : config(std::move(cfg)), handler(h) {
    if (config.server_name.empty()) config.server_name = config.host;
    credentials = detail::load_client_credentials(config.verify_peer, config.ca_file);
    // A connected socket: the kernel filters other senders and picks the
    // source address.
    open_socket(config.host, config.port, false, "cannot reach", [this](int fd, const addrinfo& ai) {
      if (::connect(fd, ai.ai_addr, ai.ai_addrlen) != 0) return false;
      remote.assign(ai.ai_addr, ai.ai_addrlen);
      return true;
    });
    connected_ = true;

    transport_setup setup;
    setup.server = false;
    setup.limits = config.limits;
    setup.local = local_;
    setup.remote = remote;
    // RFC 9000 §7.2: the first DCID is random and at least 8 bytes.
    setup.dcid = random_cid();
    setup.scid = random_cid();
    setup.hold_credit = config.testing_never_return_credit;
    auto session = detail::make_client_session(credentials.get(), config.server_name, config.verify_peer);
    conn = std::make_unique<conn_impl>(*this, std::move(session), setup);
    conn->set_handler(&handler);
    conn->set_close_hint(" (no answer from " + to_string(remote.sa(), remote.len) + ")");
    thread = std::thread([this] { run_loop(); });
  }

  impl(const impl&) = delete;
  impl& operator=(const impl&) = delete;
  ~impl() override {
    queue_.request_stop();
    if (thread.joinable()) thread.join();
  }

  void dispatch(const std::uint8_t* data, std::size_t len, const sockaddr* from, socklen_t from_len,
                ngtcp2_tstamp ts) override {
    conn->receive(data, len, from, from_len, ts);
  }

  ngtcp2_tstamp service(ngtcp2_tstamp ts) override {
    if (conn->deadline() <= ts) conn->on_timer(ts);
    conn->write(now_ns());
    return conn->deadline();
  }

  void on_stop() override { conn->shutdown("connection closed by the client"); }
  void on_refused() override {
    conn->refused_before_handshake("connection refused: nothing answers on UDP " +
                                   to_string(remote.sa(), remote.len));
  }

  void post(std::function<void(connection&)> task) {
    queue_.post([this, t = std::move(task)] { t(*conn); });
  }

  client_config config;
  connection_handler& handler;
  detail::credentials_ptr credentials;
  address remote;
  std::unique_ptr<conn_impl> conn;
  std::thread thread;  // last: started when everything else exists
};

client_endpoint::client_endpoint(client_config config, connection_handler& handler)
    : impl_(std::make_unique<impl>(std::move(config), handler)) {}

client_endpoint::~client_endpoint() = default;

void client_endpoint::post(std::function<void(connection&)> task) {
  impl_->post(std::move(task));
}

}  // namespace metatensor::streaming::quic
