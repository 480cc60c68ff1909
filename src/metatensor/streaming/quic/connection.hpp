// One QUIC connection of the engine (spec 06 §10.2, §10.8): an ngtcp2
// connection with its GnuTLS session, the `connection` of quic_engine.hpp
// that the application's `connection_handler` drives, and the write pass
// that packs the handler's stream data into packets. Not a public header.
#pragma once

#include <ngtcp2/ngtcp2.h>
#include <ngtcp2/ngtcp2_crypto.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <exception>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "endpoint.hpp"
#include "quic_engine.hpp"
#include "tls_credentials.hpp"
#include "udp_io.hpp"

namespace metatensor::streaming::quic::detail {

// Length of the connection IDs we issue.  Fixed, so that short-header
// packets (which do not carry the length, RFC 9000 §17.3) can be routed.
inline constexpr std::size_t cid_length = 18;
// §10.6 MT_INTERNAL_ERROR, for a handler that threw.
inline constexpr std::uint64_t mt_internal_error = 0x2;

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

/// Unpredictable bytes (not key material): connection IDs, tokens.
void random_bytes(std::uint8_t* dest, std::size_t n) noexcept;
/// A new connection ID of `cid_length` bytes.
[[nodiscard]] ngtcp2_cid random_cid() noexcept;

struct transport_setup {
  bool server = false;
  transport_limits limits;
  address local;
  address remote;
  ngtcp2_cid dcid{};
  ngtcp2_cid scid{};
  ngtcp2_cid original_dcid{};  // server: the client's first DCID (RFC 9000 §7.3)
  std::uint32_t version = NGTCP2_PROTO_VER_V1;
  // Server, after a validated Retry token (RFC 9000 §7.3, §8.1.2): the
  // Retry's SCID (the DCID of the client's second Initial) and the token.
  std::optional<ngtcp2_cid> retry_scid;
  std::span<const std::uint8_t> token;
  // Server: the secret its stateless reset tokens derive from (RFC 9000
  // §10.3.2), with every CID it issues; empty: random tokens.
  std::span<const std::uint8_t> reset_secret;
  // Client, tests only: never return flow-control credit.
  bool hold_credit = false;
};

/// The stateless reset token of `cid` under `secret` (RFC 9000 §10.3.2:
/// a keyed function of the CID, so a server that lost the connection can
/// still compute it).  False when the derivation fails.
bool reset_token_for(std::span<const std::uint8_t> secret, const ngtcp2_cid& cid,
                     std::uint8_t (&token)[NGTCP2_STATELESS_RESET_TOKENLEN]) noexcept;

/// One connection (server or client side), owned by its endpoint; used only
/// on the endpoint's loop thread.
class conn_impl final : public connection {
 public:
  enum class state { open, closing, draining, dead };

  conn_impl(endpoint_base& ep, session_ptr session, const transport_setup& setup);

  conn_impl(const conn_impl&) = delete;
  conn_impl& operator=(const conn_impl&) = delete;
  ~conn_impl() override;

  void set_handler(connection_handler* h) noexcept { handler_ = h; }
  void own_handler(std::unique_ptr<connection_handler> h) noexcept;
  void set_close_hint(std::string hint) { timeout_hint_ = std::move(hint); }
  [[nodiscard]] state current_state() const noexcept { return state_; }
  /// The handshake completed (server: the client proved its keys).
  [[nodiscard]] bool handshake_completed() const noexcept { return handshake_done_; }
  /// The server validated the client's address with a Retry token.
  void mark_address_validated() noexcept { address_validated_ = true; }
  [[nodiscard]] bool address_validated() const noexcept { return address_validated_; }
  /// The ngtcp2 error that ended the connection (0: closed otherwise).
  [[nodiscard]] int end_cause() const noexcept { return end_cause_; }
  /// The peer's address (the latest path).
  [[nodiscard]] const address& remote() const noexcept { return remote_; }
  [[nodiscard]] const std::vector<cid_key>& cids() const noexcept { return cids_; }
  void remember_cid(const ngtcp2_cid& cid) { cids_.emplace_back(cid); }

  // --- connection ---------------------------------------------------------
  std::optional<std::int64_t> open_bidi_stream() override;

  void want_write() override { write_wanted_ = true; }
  void stop_sending(std::int64_t stream_id, std::uint64_t app_error) override;

  void reset_stream(std::int64_t stream_id, std::uint64_t app_error) override;
  void close(std::uint64_t app_error, std::string_view reason) override;

  [[nodiscard]] bool is_server() const noexcept override { return server_; }
  [[nodiscard]] std::string peer() const override { return to_string(remote_.sa(), remote_.len); }

  // --- engine side --------------------------------------------------------

  void receive(const std::uint8_t* data, std::size_t len, const sockaddr* from, socklen_t from_len,
               ngtcp2_tstamp ts);
  [[nodiscard]] ngtcp2_tstamp deadline() const noexcept;

  void on_timer(ngtcp2_tstamp ts);

  /// The write pass (see the file comment).
  void write(ngtcp2_tstamp ts);

  /// Nothing listens at the peer's address (ICMP port unreachable).  RFC 9000
  /// §14.2.1 lets endpoints ignore ICMP, which is right once packets have
  /// been exchanged; before the handshake completes it is the only answer a
  /// client will get, so it ends the attempt at once instead of after the
  /// handshake timeout.
  void refused_before_handshake(const std::string& reason);

  /// The endpoint is stopping: close with MT_NO_ERROR (§10.6).
  void shutdown(const std::string& reason);

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
  bool report_sent(const outgoing& out, ngtcp2_ssize consumed);

  // ngtcp2 will not take data for `sid` now.
  bool refuse_stream(std::int64_t sid, int why);
  void apply_deferred();

  void report_closed(std::uint64_t app_error, const std::string& reason, bool by_peer) noexcept;
  [[nodiscard]] ngtcp2_tstamp closing_period_end(ngtcp2_tstamp ts) const noexcept;

  // Sends CONNECTION_CLOSE (RFC 9000 §10.2) and enters the closing state.
  void send_close(const ngtcp2_connection_close_error& ccerr, ngtcp2_tstamp ts);
  void close_with_app_error(std::uint64_t code, const std::string& reason, ngtcp2_tstamp ts);

  static std::string describe_transport_error(std::uint64_t code);

  // ngtcp2 returned an error from read_pkt, handle_expiry or writev_stream.
  void on_ngtcp2_error(int rv, ngtcp2_tstamp ts);
  void note_remote_stream(std::int64_t id);

  // --- ngtcp2 callbacks ---------------------------------------------------
  static int cb_handshake_completed(ngtcp2_conn* /*conn*/, void* user_data);
  static int cb_handshake_confirmed(ngtcp2_conn* /*conn*/, void* user_data);

  static int cb_stream_open(ngtcp2_conn* /*conn*/, std::int64_t stream_id, void* user_data);

  static int cb_recv_stream_data(ngtcp2_conn* conn, std::uint32_t flags, std::int64_t stream_id,
                                 std::uint64_t /*offset*/, const std::uint8_t* data, std::size_t datalen,
                                 void* user_data, void* /*stream_user_data*/);

  static int cb_stream_reset(ngtcp2_conn* /*conn*/, std::int64_t stream_id, std::uint64_t /*final_size*/,
                             std::uint64_t app_error_code, void* user_data, void* /*stream_user_data*/);

  static int cb_stream_close(ngtcp2_conn* conn, std::uint32_t flags, std::int64_t stream_id,
                             std::uint64_t app_error_code, void* user_data, void* /*stream_user_data*/);

  static int cb_extend_max_stream_data(ngtcp2_conn* /*conn*/, std::int64_t stream_id,
                                       std::uint64_t /*max_data*/, void* user_data,
                                       void* /*stream_user_data*/);

  static int cb_extend_max_local_streams_bidi(ngtcp2_conn* /*conn*/, std::uint64_t /*max_streams*/,
                                              void* user_data);
  static void cb_rand(std::uint8_t* dest, std::size_t destlen, const ngtcp2_rand_ctx* /*ctx*/);

  static int cb_get_new_connection_id(ngtcp2_conn* /*conn*/, ngtcp2_cid* cid, std::uint8_t* token,
                                      std::size_t cidlen, void* user_data);
  static int cb_remove_connection_id(ngtcp2_conn* /*conn*/, const ngtcp2_cid* cid, void* user_data);
  static int cb_recv_stateless_reset(ngtcp2_conn* /*conn*/, const ngtcp2_pkt_stateless_reset* /*sr*/,
                                     void* user_data);

  endpoint_base& ep_;
  session_ptr session_;
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
  bool handshake_confirmed_ = false;  // RFC 9001 §4.1.2
  bool write_wanted_ = true;
  bool callback_failed_ = false;
  bool hold_credit_ = false;
  bool address_validated_ = false;
  bool stateless_reset_ = false;  // the peer's stateless reset ended the connection
  int end_cause_ = 0;
  std::vector<std::uint8_t> reset_secret_;
  int busy_ = 0;
  std::vector<deferred_op> deferred_;
  std::unordered_map<std::int64_t, stream_info> streams_;
  std::vector<cid_key> cids_;
  std::vector<std::uint8_t> close_packet_;
  std::uint64_t packets_while_closing_ = 0;
  ngtcp2_tstamp close_deadline_ = UINT64_MAX;
  ngtcp2_tstamp handshake_deadline_ = UINT64_MAX;
  std::string handler_error_;
  std::string timeout_hint_;
};

}  // namespace metatensor::streaming::quic::detail
