// The QUIC engine of metatensor streaming (spec 06 §10.2, §10.8): one UDP
// socket and one event-loop thread per endpoint, ngtcp2 connections with
// GnuTLS sessions, and the `connection_handler` upcalls of quic_engine.hpp.
//
// The loop (endpoint_base::run_loop) waits in ppoll(2) on the socket and an
// eventfd (posted tasks, stop), with a timeout from the earliest
// ngtcp2_conn_get_expiry of its connections (loss detection, ACK delay,
// idle and handshake timers, pacing), CLOCK_MONOTONIC in nanoseconds.  Each
// iteration runs the posted tasks, reads datagrams in batches (recvmmsg),
// fires expired timers and then runs a write pass on every connection,
// where the handler's `next_outgoing` is packed into packets with
// ngtcp2_conn_writev_stream and sent in batches (sendmmsg).
#include "quic_engine.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <gnutls/crypto.h>
#include <gnutls/gnutls.h>
#include <netdb.h>
#include <netinet/in.h>
#include <ngtcp2/ngtcp2.h>
#include <ngtcp2/ngtcp2_crypto.h>
#include <ngtcp2/ngtcp2_crypto_gnutls.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <utility>

#include "src/core/unique_fd.hpp"
#include "tensogram/core/error.hpp"
#include "tls_credentials.hpp"

namespace metatensor::streaming::quic {

namespace {

// Length of the connection IDs we issue.  Fixed, so that short-header
// packets (which do not carry the length, RFC 9000 §17.3) can be routed.
constexpr std::size_t cid_length = 18;
// Receive buffers hold any UDP payload (RFC 9000 §18.2 max_udp_payload_size
// default 65527); a truncated datagram is dropped.
constexpr std::size_t rx_buffer_size = 65536;
constexpr std::size_t rx_batch = 32;
// Datagrams per sendmmsg.
constexpr std::size_t tx_batch = 32;
// Datagrams read before the loop services timers and writes again, so a
// flood of incoming packets cannot starve ACKs and sends.
constexpr std::size_t rx_batches_per_turn = 8;
// UDP payload on real networks: the largest that Path MTU Discovery
// (RFC 9000 §14.3) probes for; starts at 1200 (§14.1).
constexpr std::size_t network_payload = NGTCP2_MAX_PMTUD_UDP_PAYLOAD_SIZE;
// UDP payload towards a loopback peer: the loopback MTU is 64 KiB, so large
// datagrams cost no fragmentation and cut the per-packet overhead (system
// calls, headers, ACKs, crypto calls) that bounds throughput: a 1 GiB
// stream moves at ~200 MB/s with 1452-byte datagrams, ~1 GB/s with 32 KiB.
constexpr std::size_t loopback_payload = 32768;
constexpr int socket_buffer_bytes = 8 * 1024 * 1024;
// §10.6 MT_INTERNAL_ERROR, for a handler that threw.
constexpr std::uint64_t mt_internal_error = 0x2;

ngtcp2_tstamp now_ns() noexcept {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<ngtcp2_tstamp>(ts.tv_sec) * NGTCP2_SECONDS + static_cast<ngtcp2_tstamp>(ts.tv_nsec);
}

ngtcp2_duration to_ns(std::chrono::milliseconds ms) noexcept {
  return ms.count() <= 0 ? 0 : static_cast<ngtcp2_duration>(ms.count()) * NGTCP2_MILLISECONDS;
}

std::string errno_text(int err) {
  return std::strerror(err);
}

using tensogram::detail::unique_fd;

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

std::string to_string(const sockaddr* sa, socklen_t len) {
  std::array<char, NI_MAXHOST> host{};
  std::array<char, NI_MAXSERV> serv{};
  if (len == 0 || ::getnameinfo(sa, len, host.data(), host.size(), serv.data(), serv.size(),
                                NI_NUMERICHOST | NI_NUMERICSERV) != 0) {
    return "?";
  }
  if (sa->sa_family == AF_INET6) return "[" + std::string(host.data()) + "]:" + serv.data();
  return std::string(host.data()) + ":" + serv.data();
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

// A connection ID as a hash-map key.
struct cid_key {
  std::array<std::uint8_t, NGTCP2_MAX_CIDLEN> data{};
  std::size_t len = 0;

  cid_key() = default;
  cid_key(const std::uint8_t* d, std::size_t n) noexcept : len(std::min<std::size_t>(n, NGTCP2_MAX_CIDLEN)) {
    std::memcpy(data.data(), d, len);
  }
  explicit cid_key(const ngtcp2_cid& c) noexcept : cid_key(c.data, c.datalen) {}
  bool operator==(const cid_key& o) const noexcept {
    return len == o.len && std::memcmp(data.data(), o.data.data(), len) == 0;
  }
};

struct cid_hash {
  std::size_t operator()(const cid_key& k) const noexcept {
    // FNV-1a: CIDs are random (we issue them), so this only spreads bits.
    std::uint64_t h = 1469598103934665603ULL;
    for (std::size_t i = 0; i < k.len; ++i) h = (h ^ k.data[i]) * 1099511628211ULL;
    return static_cast<std::size_t>(h);
  }
};

void random_bytes(std::uint8_t* dest, std::size_t n) noexcept {
  // GNUTLS_RND_NONCE: unpredictable, not key material (CIDs, tokens).
  if (gnutls_rnd(GNUTLS_RND_NONCE, dest, n) != 0) {
    // Practically unreachable; CIDs then merely lose unpredictability.
    for (std::size_t i = 0; i < n; ++i) dest[i] = static_cast<std::uint8_t>(now_ns() >> (i % 8));
  }
}

ngtcp2_cid random_cid() noexcept {
  ngtcp2_cid cid{};
  cid.datalen = cid_length;
  random_bytes(cid.data, cid_length);
  return cid;
}

void tune_socket(int fd) {
  // Larger kernel buffers absorb the bursts a high-bandwidth flow produces
  // on loopback (the kernel caps them at net.core.[rw]mem_max).
  int size = socket_buffer_bytes;
  (void)::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof(size));
  (void)::setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &size, sizeof(size));
}

// ---------------------------------------------------------------------------
// The thread hand-off: posted tasks and the stop request, with an eventfd to
// wake the loop.

class wakeup_queue {
 public:
  wakeup_queue() : fd_(::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) {
    if (!fd_) throw tensogram::io_error("eventfd: " + errno_text(errno));
  }
  void post(std::function<void()> task) {
    {
      std::lock_guard lock(mutex_);
      tasks_.push_back(std::move(task));
    }
    wake();
  }
  void request_stop() noexcept {
    stop_.store(true);
    wake();
  }
  [[nodiscard]] bool stop_requested() const noexcept { return stop_.load(); }
  [[nodiscard]] int fd() const noexcept { return fd_.get(); }
  void drain() noexcept {
    std::uint64_t v = 0;
    while (::read(fd_.get(), &v, sizeof(v)) > 0) {
    }
  }
  std::vector<std::function<void()>> take() {
    std::lock_guard lock(mutex_);
    return std::exchange(tasks_, {});
  }

 private:
  void wake() noexcept {
    const std::uint64_t one = 1;
    // EAGAIN only when the counter is saturated, i.e. already signalled.
    (void)!::write(fd_.get(), &one, sizeof(one));
  }
  unique_fd fd_;
  std::mutex mutex_;
  std::vector<std::function<void()>> tasks_;
  std::atomic<bool> stop_{false};
};

// ---------------------------------------------------------------------------
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

class conn_impl;

// What a connection needs from its endpoint.
class endpoint_base {
 public:
  endpoint_base(const endpoint_base&) = delete;
  endpoint_base& operator=(const endpoint_base&) = delete;
  virtual ~endpoint_base() = default;

  udp_io& io() noexcept { return *io_; }
  [[nodiscard]] bool connected_socket() const noexcept { return connected_; }
  virtual void add_cid(const ngtcp2_cid& /*cid*/, conn_impl& /*c*/) {}
  virtual void remove_cid(const ngtcp2_cid& /*cid*/) {}

 protected:
  endpoint_base() = default;

  /// The loop: returns after `queue_.request_stop()`, having called
  /// on_stop() and run the tasks posted until then.
  void run_loop();
  /// Incoming datagram.
  virtual void dispatch(const std::uint8_t* data, std::size_t len, const sockaddr* from, socklen_t from_len,
                        ngtcp2_tstamp ts) = 0;
  /// Timers and write passes of every connection; returns the earliest
  /// deadline (UINT64_MAX: none).
  virtual ngtcp2_tstamp service(ngtcp2_tstamp ts) = 0;
  virtual void on_stop() = 0;
  /// The socket reported ICMP port unreachable (client sockets are connected).
  virtual void on_refused() {}
  /// Opens the endpoint's socket on the first address of host:port where
  /// `prepare(fd, ai)` succeeds (binds or connects; false with errno set
  /// tries the next address), then tunes it and sets up local_ and io_.
  /// Throws io_error "<failure> host:port: <last error>" when none works.
  void open_socket(const std::string& host, std::uint16_t port, bool passive, std::string_view failure,
                   const std::function<bool(int fd, const addrinfo& ai)>& prepare);

  unique_fd socket_;
  address local_;
  std::unique_ptr<udp_io> io_;
  wakeup_queue queue_;
  bool connected_ = false;
};

// ---------------------------------------------------------------------------
// One connection.

struct transport_setup {
  bool server = false;
  transport_limits limits;
  address local;
  address remote;
  ngtcp2_cid dcid{};
  ngtcp2_cid scid{};
  ngtcp2_cid original_dcid{};  // server: the client's first DCID (RFC 9000 §7.3)
  std::uint32_t version = NGTCP2_PROTO_VER_V1;
};

class conn_impl final : public connection {
 public:
  enum class state { open, closing, draining, dead };

  conn_impl(endpoint_base& ep, detail::session_ptr session, const transport_setup& setup)
      : ep_(ep),
        session_(std::move(session)),
        local_(setup.local),
        remote_(setup.remote),
        server_(setup.server) {
    payload_ = is_loopback(setup.remote.sa()) ? loopback_payload : network_payload;

    ngtcp2_callbacks cb{};
    if (server_) {
      cb.recv_client_initial = ngtcp2_crypto_recv_client_initial_cb;
    } else {
      cb.client_initial = ngtcp2_crypto_client_initial_cb;
      cb.recv_retry = ngtcp2_crypto_recv_retry_cb;
    }
    cb.recv_crypto_data = ngtcp2_crypto_recv_crypto_data_cb;
    cb.encrypt = ngtcp2_crypto_encrypt_cb;
    cb.decrypt = ngtcp2_crypto_decrypt_cb;
    cb.hp_mask = ngtcp2_crypto_hp_mask_cb;
    cb.update_key = ngtcp2_crypto_update_key_cb;
    cb.delete_crypto_aead_ctx = ngtcp2_crypto_delete_crypto_aead_ctx_cb;
    cb.delete_crypto_cipher_ctx = ngtcp2_crypto_delete_crypto_cipher_ctx_cb;
    cb.get_path_challenge_data = ngtcp2_crypto_get_path_challenge_data_cb;
    cb.version_negotiation = ngtcp2_crypto_version_negotiation_cb;
    cb.handshake_completed = &conn_impl::cb_handshake_completed;
    cb.recv_stream_data = &conn_impl::cb_recv_stream_data;
    cb.stream_open = &conn_impl::cb_stream_open;
    cb.stream_close = &conn_impl::cb_stream_close;
    cb.stream_reset = &conn_impl::cb_stream_reset;
    cb.extend_max_stream_data = &conn_impl::cb_extend_max_stream_data;
    cb.extend_max_local_streams_bidi = &conn_impl::cb_extend_max_local_streams_bidi;
    cb.rand = &conn_impl::cb_rand;
    cb.get_new_connection_id = &conn_impl::cb_get_new_connection_id;
    cb.remove_connection_id = &conn_impl::cb_remove_connection_id;

    const ngtcp2_tstamp ts = now_ns();
    ngtcp2_settings settings;
    ngtcp2_settings_default(&settings);
    settings.initial_ts = ts;
    settings.cc_algo = NGTCP2_CC_ALGO_CUBIC;
    settings.max_tx_udp_payload_size = payload_;
    if (payload_ == loopback_payload) {
      // Loopback: no path MTU to discover; send the large datagrams from
      // the start (bounded by the peer's max_udp_payload_size).  BBR keeps
      // the pipe full where CUBIC backs off on the occasional overflow of
      // a socket buffer (measured 1.3 GB/s against 1 GB/s).
      settings.no_tx_udp_payload_size_shaping = 1;
      settings.no_pmtud = 1;
      settings.cc_algo = NGTCP2_CC_ALGO_BBR;
    }
    const auto hs = to_ns(setup.limits.handshake_timeout);
    settings.handshake_timeout = hs == 0 ? UINT64_MAX : hs;

    ngtcp2_transport_params params;
    ngtcp2_transport_params_default(&params);
    // §10.8 windows; §10.2: only client-initiated bidirectional streams, so
    // the client grants none to the server and nobody grants uni streams
    // (a peer exceeding them gets STREAM_LIMIT_ERROR, RFC 9000 §4.6).
    params.initial_max_stream_data_bidi_local = setup.limits.stream_window;
    params.initial_max_stream_data_bidi_remote = setup.limits.stream_window;
    params.initial_max_stream_data_uni = 0;
    params.initial_max_data = setup.limits.connection_window;
    params.initial_max_streams_bidi = server_ ? setup.limits.max_bidi_streams : 0;
    params.initial_max_streams_uni = 0;
    params.max_idle_timeout = to_ns(setup.limits.idle_timeout);
    if (server_) params.original_dcid = setup.original_dcid;

    ngtcp2_path path{{const_cast<sockaddr*>(local_.sa()), local_.len},
                     {const_cast<sockaddr*>(remote_.sa()), remote_.len},
                     nullptr};
    ngtcp2_conn* raw = nullptr;
    const int rv = server_ ? ngtcp2_conn_server_new(&raw, &setup.dcid, &setup.scid, &path, setup.version, &cb,
                                                    &settings, &params, nullptr, this)
                           : ngtcp2_conn_client_new(&raw, &setup.dcid, &setup.scid, &path, setup.version, &cb,
                                                    &settings, &params, nullptr, this);
    if (rv != 0)
      throw tensogram::io_error(std::string("cannot create a QUIC connection: ") + ngtcp2_strerror(rv));
    conn_.reset(raw);

    conn_ref_.get_conn = [](ngtcp2_crypto_conn_ref* ref) -> ngtcp2_conn* {
      return static_cast<conn_impl*>(ref->user_data)->conn_.get();
    };
    conn_ref_.user_data = this;
    const int crv = server_ ? ngtcp2_crypto_gnutls_configure_server_session(session_.get())
                            : ngtcp2_crypto_gnutls_configure_client_session(session_.get());
    if (crv != 0) throw tensogram::io_error("cannot configure the TLS session for QUIC");
    gnutls_session_set_ptr(session_.get(), &conn_ref_);
    ngtcp2_conn_set_tls_native_handle(conn_.get(), session_.get());
  }

  conn_impl(const conn_impl&) = delete;
  conn_impl& operator=(const conn_impl&) = delete;
  ~conn_impl() override {
    // The session refers to conn_ref_ and the connection to the session's
    // keys; both go together, the connection first (its deleters of crypto
    // contexts do not touch the session).
    conn_.reset();
    session_.reset();
  }

  void set_handler(connection_handler* h) noexcept { handler_ = h; }
  void own_handler(std::unique_ptr<connection_handler> h) noexcept {
    owned_handler_ = std::move(h);
    handler_ = owned_handler_.get();
  }
  void set_close_hint(std::string hint) { timeout_hint_ = std::move(hint); }
  [[nodiscard]] state current_state() const noexcept { return state_; }
  [[nodiscard]] const std::vector<cid_key>& cids() const noexcept { return cids_; }
  void remember_cid(const ngtcp2_cid& cid) { cids_.emplace_back(cid); }

  // --- connection ---------------------------------------------------------

  std::optional<std::int64_t> open_bidi_stream() override {
    if (state_ != state::open) return std::nullopt;
    std::int64_t id = -1;
    if (ngtcp2_conn_open_bidi_stream(conn_.get(), &id, nullptr) != 0) return std::nullopt;
    streams_.try_emplace(id);
    return id;
  }

  void want_write() override { write_wanted_ = true; }

  void stop_sending(std::int64_t stream_id, std::uint64_t app_error) override {
    if (state_ != state::open) return;
    deferred_.push_back({op::stop_sending, stream_id, app_error, {}});
    if (busy_ == 0) apply_deferred();
  }

  void reset_stream(std::int64_t stream_id, std::uint64_t app_error) override {
    if (state_ != state::open) return;
    deferred_.push_back({op::reset, stream_id, app_error, {}});
    if (busy_ == 0) apply_deferred();
  }

  void close(std::uint64_t app_error, std::string_view reason) override {
    if (state_ != state::open) return;
    deferred_.push_back({op::close, -1, app_error, std::string(reason)});
    if (busy_ == 0) apply_deferred();
  }

  [[nodiscard]] bool is_server() const noexcept override { return server_; }
  [[nodiscard]] std::string peer() const override { return to_string(remote_.sa(), remote_.len); }

  // --- engine side --------------------------------------------------------

  void receive(const std::uint8_t* data, std::size_t len, const sockaddr* from, socklen_t from_len,
               ngtcp2_tstamp ts) {
    if (state_ == state::closing) {
      // RFC 9000 §10.2.1: answer packets in the closing state with the
      // CONNECTION_CLOSE again, at a decreasing rate.
      ++packets_while_closing_;
      if ((packets_while_closing_ & (packets_while_closing_ - 1)) == 0 && !close_packet_.empty()) {
        ep_.io().send_one(close_packet_.data(), close_packet_.size(), ep_.connected_socket() ? nullptr : from,
                          from_len);
      }
      return;
    }
    if (state_ != state::open) return;
    address remote;
    remote.assign(from, from_len);
    ngtcp2_path path{{const_cast<sockaddr*>(local_.sa()), local_.len}, {remote.sa(), remote.len}, nullptr};
    ngtcp2_pkt_info pi{};
    int rv = 0;
    {
      busy_scope busy(*this);
      rv = ngtcp2_conn_read_pkt(conn_.get(), &path, &pi, data, len, ts);
    }
    if (rv != 0) {
      on_ngtcp2_error(rv, ts);
      return;
    }
    apply_deferred();
  }

  [[nodiscard]] ngtcp2_tstamp deadline() const noexcept {
    switch (state_) {
      case state::open: return write_wanted_ ? 0 : ngtcp2_conn_get_expiry(conn_.get());
      case state::closing:
      case state::draining: return close_deadline_;
      case state::dead: break;
    }
    return UINT64_MAX;
  }

  void on_timer(ngtcp2_tstamp ts) {
    if (state_ == state::closing || state_ == state::draining) {
      if (ts >= close_deadline_) state_ = state::dead;
      return;
    }
    if (state_ != state::open || ts < ngtcp2_conn_get_expiry(conn_.get())) return;
    int rv = 0;
    {
      busy_scope busy(*this);
      rv = ngtcp2_conn_handle_expiry(conn_.get(), ts);
    }
    if (rv != 0) {
      on_ngtcp2_error(rv, ts);
      return;
    }
    apply_deferred();
  }

  /// The write pass (see the file comment).
  void write(ngtcp2_tstamp ts) {
    write_wanted_ = false;
    if (state_ != state::open) return;
    apply_deferred();
    if (state_ != state::open) return;

    std::array<std::size_t, tx_batch> sizes{};
    std::size_t count = 0;
    ngtcp2_path_storage ps;
    ngtcp2_path_storage_zero(&ps);
    ngtcp2_pkt_info pi{};
    const std::size_t max_udp = std::min(payload_, ngtcp2_conn_get_max_tx_udp_payload_size(conn_.get()));
    // Send at most a "send quantum" (the burst the congestion controller's
    // pacer allows) per pass; the pacer's next send time is part of
    // ngtcp2_conn_get_expiry, which brings the loop back.
    const std::size_t quantum = ngtcp2_conn_get_send_quantum(conn_.get());
    const std::size_t max_packets =
        std::clamp<std::size_t>(quantum / std::max<std::size_t>(max_udp, 1), 1, 64);
    std::size_t packets = 0;
    // A handler that keeps offering a stream the engine has just refused
    // would spin this loop; after this many refusals the pass stops asking.
    int refusals = 0;
    bool offer_data = true;
    bool failed = false;
    int fatal = 0;

    // The batch goes to one address; ngtcp2 names the path of every packet
    // (a probe during path validation, RFC 9000 §9, may go elsewhere).
    address batch_to;
    auto flush = [&] {
      if (count == 0) return;
      ep_.io().send(sizes.data(), count, ep_.connected_socket() ? nullptr : batch_to.sa(), batch_to.len);
      count = 0;
    };

    {
      busy_scope busy(*this);
      for (;;) {
        std::optional<outgoing> out;
        if (offer_data && handshake_done_) {
          if (!call_handler([&] { out = handler_->next_outgoing(*this); })) {
            failed = true;
            break;
          }
          if (out && out->stream_id < 0) out.reset();
        }
        ngtcp2_vec vec{};
        std::uint32_t flags = NGTCP2_WRITE_STREAM_FLAG_NONE;
        std::int64_t sid = -1;
        if (out) {
          vec.base = reinterpret_cast<std::uint8_t*>(const_cast<std::byte*>(out->data.data()));
          vec.len = out->data.size();
          flags = NGTCP2_WRITE_STREAM_FLAG_MORE;
          if (out->fin) flags |= NGTCP2_WRITE_STREAM_FLAG_FIN;
          sid = out->stream_id;
        }
        ngtcp2_ssize consumed = -1;
        const ngtcp2_ssize n =
            ngtcp2_conn_writev_stream(conn_.get(), &ps.path, &pi, ep_.io().slot(count), max_udp, &consumed,
                                      flags, sid, out ? &vec : nullptr, out ? 1 : 0, ts);
        if (n < 0) {
          if (n == NGTCP2_ERR_WRITE_MORE) {
            // The packet has room left: the data went in, ask for more.
            if (out && !report_sent(*out, consumed)) {
              failed = true;
              break;
            }
            continue;
          }
          if (n == NGTCP2_ERR_STREAM_DATA_BLOCKED || n == NGTCP2_ERR_STREAM_SHUT_WR ||
              n == NGTCP2_ERR_STREAM_NOT_FOUND) {
            if (!refuse_stream(sid, static_cast<int>(n))) {
              failed = true;
              break;
            }
            if (++refusals > 64) offer_data = false;
            continue;
          }
          fatal = static_cast<int>(n);
          break;
        }
        if (out && consumed >= 0 && !report_sent(*out, consumed)) {
          failed = true;
          break;
        }
        if (n == 0) break;  // nothing to send, or congestion/flow-control limited
        // A packet without any of the offered data: either the peer's
        // connection-level window is used up (RFC 9000 §4.1; its MAX_DATA
        // brings the loop back) or the packet was full of other frames, and
        // then another pass follows at once.
        if (out && consumed < 0) {
          offer_data = false;
          if (ngtcp2_conn_get_max_data_left(conn_.get()) > 0) write_wanted_ = true;
        }
        const bool same_path =
            count == 0 || (batch_to.len == ps.path.remote.addrlen &&
                           std::memcmp(batch_to.sa(), ps.path.remote.addr, batch_to.len) == 0);
        if (!same_path) {
          const std::size_t pending = count;
          flush();
          std::memmove(ep_.io().slot(0), ep_.io().slot(pending), static_cast<std::size_t>(n));
        }
        if (count == 0) batch_to.assign(ps.path.remote.addr, ps.path.remote.addrlen);
        sizes[count++] = static_cast<std::size_t>(n);
        if (count == tx_batch) flush();
        if (++packets >= max_packets) {
          write_wanted_ = true;
          break;
        }
      }
      flush();
      ngtcp2_conn_update_pkt_tx_time(conn_.get(), ts);
    }
    if (failed) {
      close_with_app_error(mt_internal_error, "internal error: " + handler_error_, ts);
      return;
    }
    if (fatal != 0) {
      on_ngtcp2_error(fatal, ts);
      return;
    }
    apply_deferred();
  }

  /// Nothing listens at the peer's address (ICMP port unreachable).  RFC 9000
  /// §14.2.1 lets endpoints ignore ICMP, which is right once packets have
  /// been exchanged; before the handshake completes it is the only answer a
  /// client will get, so it ends the attempt at once instead of after the
  /// handshake timeout.
  void refused_before_handshake(const std::string& reason) {
    if (state_ != state::open || ngtcp2_conn_get_handshake_completed(conn_.get()) != 0) return;
    state_ = state::dead;
    report_closed(0, reason, false);
  }

  /// The endpoint is stopping: close with MT_NO_ERROR (§10.6).
  void shutdown(const std::string& reason) {
    if (state_ == state::open) close_with_app_error(0, reason, now_ns());
    state_ = state::dead;
  }

 private:
  enum class op { stop_sending, reset, close };
  struct deferred_op {
    op kind;
    std::int64_t stream_id;
    std::uint64_t code;
    std::string reason;
  };
  struct stream_info {
    bool local_stop = false;
    bool local_reset = false;
    bool peer_reset = false;
    bool blocked = false;
    bool write_refused = false;  // the engine refused writes (peer STOP_SENDING)
  };

  // Marks a region where ngtcp2 may call back (or, during a write pass,
  // where only ngtcp2_conn_writev_stream may be called): connection methods
  // called meanwhile are deferred until the region ends.
  struct busy_scope {
    explicit busy_scope(conn_impl& c) noexcept : c_(c) { ++c_.busy_; }
    ~busy_scope() { --c_.busy_; }
    busy_scope(const busy_scope&) = delete;
    busy_scope& operator=(const busy_scope&) = delete;
    conn_impl& c_;
  };

  struct ngtcp2_conn_deleter {
    void operator()(ngtcp2_conn* c) const noexcept { ngtcp2_conn_del(c); }
  };

  static conn_impl& self(void* user_data) noexcept { return *static_cast<conn_impl*>(user_data); }

  template <class F>
  bool call_handler(F&& f) noexcept {
    try {
      f();
      return true;
    } catch (const std::exception& e) {
      handler_error_ = e.what();
    } catch (...) {
      handler_error_ = "unknown exception";
    }
    return false;
  }

  [[nodiscard]] bool live() const noexcept {
    return state_ == state::open && !reported_ && handler_ != nullptr;
  }

  bool report_sent(const outgoing& out, ngtcp2_ssize consumed) {
    const auto bytes = static_cast<std::size_t>(consumed);
    const bool fin_sent = out.fin && bytes == out.data.size();
    if (bytes == 0 && !fin_sent) return true;
    return call_handler([&] { handler_->on_sent(*this, out.stream_id, bytes, fin_sent); });
  }

  // ngtcp2 will not take data for `sid` now.
  bool refuse_stream(std::int64_t sid, int why) {
    auto& st = streams_[sid];
    if (why == NGTCP2_ERR_STREAM_DATA_BLOCKED) {
      // Stream-level flow control (RFC 9000 §4.1); extend_max_stream_data
      // unblocks it.
      if (st.blocked) return true;
      st.blocked = true;
      return call_handler([&] { handler_->on_stream_blocked(*this, sid); });
    }
    if (st.write_refused || st.local_reset) return true;
    // The write side is shut without our reset: the peer sent STOP_SENDING,
    // which ngtcp2 has already answered with RESET_STREAM (RFC 9000 §3.5).
    // The handler hears on_stop_sending, with the code, when the stream
    // closes; until then it is told the stream is blocked so that it stops
    // offering it.
    st.write_refused = true;
    if (st.blocked) return true;
    st.blocked = true;
    return call_handler([&] { handler_->on_stream_blocked(*this, sid); });
  }

  void apply_deferred() {
    if (busy_ != 0) return;
    while (!deferred_.empty() && state_ == state::open) {
      auto d = std::move(deferred_.front());
      deferred_.erase(deferred_.begin());
      switch (d.kind) {
        case op::stop_sending:
          streams_[d.stream_id].local_stop = true;
          (void)ngtcp2_conn_shutdown_stream_read(conn_.get(), d.stream_id, d.code);
          write_wanted_ = true;
          break;
        case op::reset:
          streams_[d.stream_id].local_reset = true;
          (void)ngtcp2_conn_shutdown_stream_write(conn_.get(), d.stream_id, d.code);
          write_wanted_ = true;
          break;
        case op::close: close_with_app_error(d.code, d.reason, now_ns()); break;
      }
    }
    if (state_ != state::open) deferred_.clear();
  }

  void report_closed(std::uint64_t app_error, const std::string& reason, bool by_peer) noexcept {
    if (reported_) return;
    reported_ = true;
    if (handler_ == nullptr) return;
    try {
      handler_->on_closed(*this, app_error, reason, by_peer);
    } catch (...) {
      // Nothing left to tell: the connection is over.
    }
  }

  [[nodiscard]] ngtcp2_tstamp closing_period_end(ngtcp2_tstamp ts) const noexcept {
    // RFC 9000 §10.2: the closing and draining states last three PTOs.
    return ts + 3 * ngtcp2_conn_get_pto(conn_.get());
  }

  // Sends CONNECTION_CLOSE (RFC 9000 §10.2) and enters the closing state.
  void send_close(const ngtcp2_connection_close_error& ccerr, ngtcp2_tstamp ts) {
    close_packet_.resize(std::max<std::size_t>(payload_, NGTCP2_MAX_UDP_PAYLOAD_SIZE));
    ngtcp2_path_storage ps;
    ngtcp2_path_storage_zero(&ps);
    ngtcp2_pkt_info pi{};
    const auto n = ngtcp2_conn_write_connection_close(conn_.get(), &ps.path, &pi, close_packet_.data(),
                                                      close_packet_.size(), &ccerr, ts);
    if (n <= 0) {
      close_packet_.clear();
      state_ = state::dead;
      return;
    }
    close_packet_.resize(static_cast<std::size_t>(n));
    ep_.io().send_one(close_packet_.data(), close_packet_.size(),
                      ep_.connected_socket() ? nullptr : ps.path.remote.addr, ps.path.remote.addrlen);
    state_ = state::closing;
    close_deadline_ = closing_period_end(ts);
  }

  void close_with_app_error(std::uint64_t code, const std::string& reason, ngtcp2_tstamp ts) {
    if (state_ != state::open) return;
    ngtcp2_connection_close_error ccerr;
    ngtcp2_connection_close_error_default(&ccerr);
    ngtcp2_connection_close_error_set_application_error(
        &ccerr, code, reinterpret_cast<const std::uint8_t*>(reason.data()), reason.size());
    send_close(ccerr, ts);
    report_closed(code, reason.empty() ? "closed by the application" : reason, false);
  }

  static std::string describe_transport_error(std::uint64_t code) {
    if (code >= 0x100 && code <= 0x1ff) {
      const char* alert = gnutls_alert_get_name(static_cast<gnutls_alert_description_t>(code - 0x100));
      return std::string("TLS alert: ") + (alert ? alert : std::to_string(code - 0x100).c_str());
    }
    switch (code) {
      case 0x0: return "no error";
      case 0x1: return "internal error";
      case 0x2: return "connection refused";
      case 0x3: return "flow control error";
      case 0x4: return "stream limit error";
      case 0x5: return "stream state error";
      case 0x6: return "final size error";
      case 0x7: return "frame encoding error";
      case 0x8: return "transport parameter error";
      case 0x9: return "connection ID limit error";
      case 0xa: return "protocol violation";
      case 0xb: return "invalid token";
      case 0xc: return "application error";
      case 0xd: return "crypto buffer exceeded";
      case 0xe: return "key update error";
      case 0xf: return "AEAD limit reached";
      case 0x10: return "no viable path";
      default:
        return "transport error 0x" + [&] {
          std::array<char, 24> b{};
          std::snprintf(b.data(), b.size(), "%llx", static_cast<unsigned long long>(code));
          return std::string(b.data());
        }();
    }
  }

  // ngtcp2 returned an error from read_pkt, handle_expiry or writev_stream.
  void on_ngtcp2_error(int rv, ngtcp2_tstamp ts) {
    deferred_.clear();
    switch (rv) {
      case NGTCP2_ERR_DRAINING: {
        // The peer closed (RFC 9000 §10.2.2): report its code and reason.
        ngtcp2_connection_close_error ccerr;
        ngtcp2_conn_get_connection_close_error(conn_.get(), &ccerr);
        std::string reason(reinterpret_cast<const char*>(ccerr.reason), ccerr.reason ? ccerr.reasonlen : 0);
        std::uint64_t code = 0;
        if (ccerr.type == NGTCP2_CONNECTION_CLOSE_ERROR_CODE_TYPE_APPLICATION) {
          code = ccerr.error_code;
          if (reason.empty()) reason = "closed by the peer";
        } else {
          const auto what = describe_transport_error(ccerr.error_code);
          reason = "closed by the peer (" + what + ")" + (reason.empty() ? "" : ": " + reason);
        }
        state_ = state::draining;
        close_deadline_ = closing_period_end(ts);
        report_closed(code, reason, true);
        return;
      }
      case NGTCP2_ERR_CLOSING: return;
      case NGTCP2_ERR_DROP_CONN:
      case NGTCP2_ERR_RETRY:
        state_ = state::dead;
        report_closed(0, "connection dropped", false);
        return;
      case NGTCP2_ERR_IDLE_CLOSE:
        // RFC 9000 §10.1: silently closed.
        state_ = state::dead;
        report_closed(0, "idle timeout", false);
        return;
      case NGTCP2_ERR_HANDSHAKE_TIMEOUT:
        state_ = state::dead;
        report_closed(0, "QUIC handshake timed out" + timeout_hint_, false);
        return;
      case NGTCP2_ERR_CRYPTO: {
        const std::uint8_t alert = ngtcp2_conn_get_tls_alert(conn_.get());
        std::string reason = server_ ? std::string() : detail::certificate_failure(session_.get());
        if (reason.empty()) {
          const char* name = gnutls_alert_get_name(static_cast<gnutls_alert_description_t>(alert));
          reason = std::string("TLS handshake failed") +
                   (alert != 0 && name ? std::string(" (") + name + ")" : "");
        }
        ngtcp2_connection_close_error ccerr;
        ngtcp2_connection_close_error_default(&ccerr);
        ngtcp2_connection_close_error_set_transport_error_tls_alert(&ccerr, alert, nullptr, 0);
        send_close(ccerr, ts);
        report_closed(0, reason, false);
        return;
      }
      case NGTCP2_ERR_CALLBACK_FAILURE:
        if (!handler_error_.empty()) {
          close_with_app_error(mt_internal_error, "internal error: " + handler_error_, ts);
          state_ = state_ == state::open ? state::dead : state_;
          return;
        }
        [[fallthrough]];
      default: {
        const std::string reason = std::string("QUIC error: ") + ngtcp2_strerror(rv);
        ngtcp2_connection_close_error ccerr;
        ngtcp2_connection_close_error_default(&ccerr);
        ngtcp2_connection_close_error_set_transport_error_liberr(&ccerr, rv, nullptr, 0);
        send_close(ccerr, ts);
        if (state_ == state::open) state_ = state::dead;
        report_closed(0, reason, false);
        return;
      }
    }
  }

  void note_remote_stream(std::int64_t id) {
    if (ngtcp2_conn_is_local_stream(conn_.get(), id) != 0) return;
    auto [it, inserted] = streams_.try_emplace(id);
    if (inserted && live()) {
      if (!call_handler([&] { handler_->on_stream_opened(*this, id); })) callback_failed_ = true;
    }
  }

  // --- ngtcp2 callbacks ---------------------------------------------------

  static int cb_handshake_completed(ngtcp2_conn* /*conn*/, void* user_data) {
    auto& c = self(user_data);
    c.handshake_done_ = true;
    c.write_wanted_ = true;
    if (!c.live()) return 0;
    return c.call_handler([&] { c.handler_->on_handshake_completed(c); }) ? 0 : NGTCP2_ERR_CALLBACK_FAILURE;
  }

  static int cb_stream_open(ngtcp2_conn* /*conn*/, std::int64_t stream_id, void* user_data) {
    auto& c = self(user_data);
    c.note_remote_stream(stream_id);
    return std::exchange(c.callback_failed_, false) ? NGTCP2_ERR_CALLBACK_FAILURE : 0;
  }

  static int cb_recv_stream_data(ngtcp2_conn* conn, std::uint32_t flags, std::int64_t stream_id,
                                 std::uint64_t /*offset*/, const std::uint8_t* data, std::size_t datalen,
                                 void* user_data, void* /*stream_user_data*/) {
    auto& c = self(user_data);
    c.note_remote_stream(stream_id);
    if (std::exchange(c.callback_failed_, false)) return NGTCP2_ERR_CALLBACK_FAILURE;
    auto& st = c.streams_[stream_id];
    const bool fin = (flags & NGTCP2_STREAM_DATA_FLAG_FIN) != 0;
    if (c.live() && !st.local_stop) {
      const std::span<const std::byte> bytes(reinterpret_cast<const std::byte*>(data), datalen);
      if (!c.call_handler([&] { c.handler_->on_stream_data(c, stream_id, bytes, fin); })) {
        return NGTCP2_ERR_CALLBACK_FAILURE;
      }
    }
    // The application has consumed the bytes: return their credit (RFC 9000
    // §4.1), which keeps the windows of §10.8 sliding.
    if (datalen > 0) {
      (void)ngtcp2_conn_extend_max_stream_offset(conn, stream_id, datalen);
      ngtcp2_conn_extend_max_offset(conn, datalen);
    }
    return 0;
  }

  static int cb_stream_reset(ngtcp2_conn* /*conn*/, std::int64_t stream_id, std::uint64_t /*final_size*/,
                             std::uint64_t app_error_code, void* user_data, void* /*stream_user_data*/) {
    auto& c = self(user_data);
    c.note_remote_stream(stream_id);
    if (std::exchange(c.callback_failed_, false)) return NGTCP2_ERR_CALLBACK_FAILURE;
    c.streams_[stream_id].peer_reset = true;
    // Bytes up to the final size that were never delivered still count
    // against the connection window (RFC 9000 §4.5); ngtcp2 returns their
    // credit itself (as for data arriving after our STOP_SENDING), which
    // the CancellationsReturnConnectionCredit test checks.
    if (!c.live()) return 0;
    return c.call_handler([&] { c.handler_->on_stream_reset(c, stream_id, app_error_code); })
               ? 0
               : NGTCP2_ERR_CALLBACK_FAILURE;
  }

  static int cb_stream_close(ngtcp2_conn* conn, std::uint32_t flags, std::int64_t stream_id,
                             std::uint64_t app_error_code, void* user_data, void* /*stream_user_data*/) {
    auto& c = self(user_data);
    const bool has_code = (flags & NGTCP2_STREAM_CLOSE_FLAG_APP_ERROR_CODE_SET) != 0;
    const std::uint64_t code = has_code ? app_error_code : 0;
    stream_info st;
    if (auto it = c.streams_.find(stream_id); it != c.streams_.end()) {
      st = it->second;
      c.streams_.erase(it);
    }
    // A peer may open another stream in its place (RFC 9000 §4.6).
    if (ngtcp2_conn_is_local_stream(conn, stream_id) == 0 && (stream_id & 0x2) == 0) {
      ngtcp2_conn_extend_max_streams_bidi(conn, 1);
    }
    if (!c.live()) return 0;
    // A code nobody on this side chose and no RESET_STREAM from the peer:
    // it came with the peer's STOP_SENDING.
    if (has_code && !st.local_stop && !st.local_reset && !st.peer_reset &&
        !c.call_handler([&] { c.handler_->on_stop_sending(c, stream_id, code); })) {
      return NGTCP2_ERR_CALLBACK_FAILURE;
    }
    return c.call_handler([&] { c.handler_->on_stream_closed(c, stream_id, code); })
               ? 0
               : NGTCP2_ERR_CALLBACK_FAILURE;
  }

  static int cb_extend_max_stream_data(ngtcp2_conn* /*conn*/, std::int64_t stream_id,
                                       std::uint64_t /*max_data*/, void* user_data,
                                       void* /*stream_user_data*/) {
    auto& c = self(user_data);
    auto it = c.streams_.find(stream_id);
    if (it == c.streams_.end() || !it->second.blocked || it->second.write_refused) return 0;
    it->second.blocked = false;
    c.write_wanted_ = true;
    if (!c.live()) return 0;
    return c.call_handler([&] { c.handler_->on_stream_unblocked(c, stream_id); })
               ? 0
               : NGTCP2_ERR_CALLBACK_FAILURE;
  }

  static int cb_extend_max_local_streams_bidi(ngtcp2_conn* /*conn*/, std::uint64_t /*max_streams*/,
                                              void* user_data) {
    auto& c = self(user_data);
    c.write_wanted_ = true;
    if (!c.live()) return 0;
    return c.call_handler([&] { c.handler_->on_stream_credit(c); }) ? 0 : NGTCP2_ERR_CALLBACK_FAILURE;
  }

  static void cb_rand(std::uint8_t* dest, std::size_t destlen, const ngtcp2_rand_ctx* /*ctx*/) {
    random_bytes(dest, destlen);
  }

  static int cb_get_new_connection_id(ngtcp2_conn* /*conn*/, ngtcp2_cid* cid, std::uint8_t* token,
                                      std::size_t cidlen, void* user_data) {
    auto& c = self(user_data);
    cid->datalen = std::min<std::size_t>(cidlen, NGTCP2_MAX_CIDLEN);
    random_bytes(cid->data, cid->datalen);
    // No stateless reset is sent by this engine, so the token only has to
    // be unguessable (RFC 9000 §10.3).
    random_bytes(token, NGTCP2_STATELESS_RESET_TOKENLEN);
    try {
      c.ep_.add_cid(*cid, c);
      c.cids_.emplace_back(*cid);
    } catch (...) {
      return NGTCP2_ERR_CALLBACK_FAILURE;
    }
    return 0;
  }

  static int cb_remove_connection_id(ngtcp2_conn* /*conn*/, const ngtcp2_cid* cid, void* user_data) {
    auto& c = self(user_data);
    c.ep_.remove_cid(*cid);
    const cid_key key(*cid);
    std::erase(c.cids_, key);
    return 0;
  }

  endpoint_base& ep_;
  detail::session_ptr session_;
  std::unique_ptr<ngtcp2_conn, ngtcp2_conn_deleter> conn_;
  ngtcp2_crypto_conn_ref conn_ref_{};
  address local_;
  address remote_;
  bool server_;
  std::size_t payload_ = network_payload;
  connection_handler* handler_ = nullptr;
  std::unique_ptr<connection_handler> owned_handler_;

  state state_ = state::open;
  bool reported_ = false;
  bool handshake_done_ = false;
  bool write_wanted_ = true;
  bool callback_failed_ = false;
  int busy_ = 0;
  std::vector<deferred_op> deferred_;
  std::unordered_map<std::int64_t, stream_info> streams_;
  std::vector<cid_key> cids_;
  std::vector<std::uint8_t> close_packet_;
  std::uint64_t packets_while_closing_ = 0;
  ngtcp2_tstamp close_deadline_ = UINT64_MAX;
  std::string handler_error_;
  std::string timeout_hint_;
};

// ---------------------------------------------------------------------------

void endpoint_base::run_loop() {
  for (;;) {
    for (auto& task : queue_.take()) {
      try {
        task();
      } catch (...) {
        // A posted task has nobody to report to; it must not end the loop.
      }
    }
    if (queue_.stop_requested()) {
      on_stop();
      for (auto& task : queue_.take()) {
        try {
          task();
        } catch (...) {
        }
      }
      return;
    }
    const ngtcp2_tstamp next = service(now_ns());

    std::array<pollfd, 2> fds{{{socket_.get(), POLLIN, 0}, {queue_.fd(), POLLIN, 0}}};
    timespec timeout{};
    timespec* tp = nullptr;
    if (next != UINT64_MAX) {
      const ngtcp2_tstamp now = now_ns();
      const ngtcp2_tstamp wait = next > now ? next - now : 0;
      timeout.tv_sec = static_cast<time_t>(wait / NGTCP2_SECONDS);
      timeout.tv_nsec = static_cast<long>(wait % NGTCP2_SECONDS);
      tp = &timeout;
    }
    const int rv = ::ppoll(fds.data(), fds.size(), tp, nullptr);
    if (rv < 0) continue;  // EINTR
    if ((fds[1].revents & POLLIN) != 0) queue_.drain();
    if ((fds[0].revents & (POLLIN | POLLERR)) != 0) {
      for (std::size_t i = 0; i < rx_batches_per_turn; ++i) {
        const ngtcp2_tstamp ts = now_ns();
        const bool more = io_->receive([&](const std::uint8_t* data, std::size_t len, const sockaddr* from,
                                           socklen_t from_len) { dispatch(data, len, from, from_len, ts); });
        if (!more) break;
      }
      if (io_->take_refused()) on_refused();
    }
  }
}

addrinfo* resolve(const std::string& host, std::uint16_t port, bool passive) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_DGRAM;
  hints.ai_protocol = IPPROTO_UDP;
  if (passive) hints.ai_flags = AI_PASSIVE;
  addrinfo* res = nullptr;
  const std::string service = std::to_string(port);
  const int rv = ::getaddrinfo(host.empty() ? nullptr : host.c_str(), service.c_str(), &hints, &res);
  if (rv != 0) throw tensogram::io_error("cannot resolve '" + host + "': " + ::gai_strerror(rv));
  return res;
}

struct addrinfo_deleter {
  void operator()(addrinfo* a) const noexcept { ::freeaddrinfo(a); }
};

void endpoint_base::open_socket(const std::string& host, std::uint16_t port, bool passive,
                                std::string_view failure,
                                const std::function<bool(int fd, const addrinfo& ai)>& prepare) {
  std::unique_ptr<addrinfo, addrinfo_deleter> res(resolve(host, port, passive));
  std::string last_error = "no address";
  for (addrinfo* ai = res.get(); ai != nullptr; ai = ai->ai_next) {
    unique_fd fd(::socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, ai->ai_protocol));
    if (!fd || !prepare(fd.get(), *ai)) {
      last_error = errno_text(errno);
      continue;
    }
    socket_ = std::move(fd);
    break;
  }
  if (!socket_) {
    throw tensogram::io_error(std::string(failure) + " " + host + ":" + std::to_string(port) + ": " +
                              last_error);
  }
  tune_socket(socket_.get());
  local_.len = sizeof(local_.storage);
  if (::getsockname(socket_.get(), local_.sa(), &local_.len) != 0) {
    throw tensogram::io_error("getsockname: " + errno_text(errno));
  }
  io_ = std::make_unique<udp_io>(socket_.get());
}

}  // namespace

// ===========================================================================
// Server.

struct server_endpoint::impl final : endpoint_base {
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

// ===========================================================================
// Client.

struct client_endpoint::impl final : endpoint_base {
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
