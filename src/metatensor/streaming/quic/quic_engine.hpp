// The QUIC transport of metatensor streaming (spec 06 §10.2, §10.8): UDP
// sockets, ngtcp2 connections and GnuTLS sessions, driven by one event-loop
// thread per endpoint.  It knows nothing of metatensor frames: the
// application (the server's and the client's protocol code) sees streams and
// bytes through `connection_handler`, and decides what to send next through
// `next_outgoing`, which is how the §10.5 scheduler gets to choose.
//
// Threading: every `connection_handler` call and every `connection` method
// runs on the endpoint's loop thread.  Other threads reach it with `post`.
//
// Stream data the application hands out in `outgoing` is not copied: ngtcp2
// may retransmit it until it is acknowledged, so the bytes must stay valid
// until `on_stream_closed` for that stream (or `on_closed` for the
// connection).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace metatensor::streaming::quic {

/// The ALPN protocol identifier of §10.2.
inline constexpr std::string_view alpn = "metatensor/1";

/// Writes a new self-signed certificate (ECDSA P-256, valid one year, SANs
/// `names`, which may be DNS names or IP addresses) and its private key, both
/// PEM, each written to a temporary file and renamed into place; the key file
/// gets mode 0600.  Throws `tensogram::io_error`.
void generate_self_signed(const std::filesystem::path& cert_pem, const std::filesystem::path& key_pem,
                          const std::vector<std::string>& names);

/// Flow-control and limits of §10.8 (defaults at or above its suggestions).
struct transport_limits {
  std::uint64_t stream_window = 4 * 1024 * 1024;       // per-stream initial window
  std::uint64_t connection_window = 64 * 1024 * 1024;  // connection window
  std::uint64_t max_bidi_streams = 128;                // concurrent client bidi streams
  std::chrono::milliseconds idle_timeout{30000};
  std::chrono::milliseconds handshake_timeout{10000};
};

/// One piece of stream data the application wants sent.
struct outgoing {
  std::int64_t stream_id = -1;
  std::span<const std::byte> data;  // may be empty when only `fin` is to be sent
  bool fin = false;                 // end the stream after `data`
};

class connection;

/// The application side of one connection.  Callbacks run on the loop thread
/// and may call `connection` methods; they must not block.
class connection_handler {
 public:
  virtual ~connection_handler() = default;
  /// The TLS handshake finished (client: the connection is usable; server:
  /// informational).
  virtual void on_handshake_completed(connection& c) = 0;
  /// The peer opened `stream_id` (its first data or reset arrived).
  virtual void on_stream_opened(connection& c, std::int64_t stream_id) = 0;
  /// Bytes of `stream_id` in order; `fin` when the peer ended its side after
  /// them.  The engine returns the credit for these bytes after the call.
  virtual void on_stream_data(connection& c, std::int64_t stream_id, std::span<const std::byte> data,
                              bool fin) = 0;
  /// The peer reset its sending side of `stream_id` (RESET_STREAM).
  virtual void on_stream_reset(connection& c, std::int64_t stream_id, std::uint64_t app_error) = 0;
  /// The peer asked us to stop sending on `stream_id` (STOP_SENDING).
  /// ngtcp2 0.12 answers by itself with RESET_STREAM carrying the same code
  /// (RFC 9000 §3.5) and reports the code only when the stream closes, so
  /// this comes just before `on_stream_closed` (meanwhile the stream is
  /// reported blocked); a `reset_stream` from the handler is then harmless.
  virtual void on_stop_sending(connection& c, std::int64_t stream_id, std::uint64_t app_error) = 0;
  /// Both sides of `stream_id` are done (or it was reset); its outgoing
  /// bytes are no longer referenced.
  virtual void on_stream_closed(connection& c, std::int64_t stream_id, std::uint64_t app_error) = 0;
  /// The engine can put stream data into packets: the next piece to send, or
  /// nullopt when there is nothing (or nothing unblocked).  Called repeatedly
  /// while packets have room; return the same stream again until `on_sent`
  /// has consumed its bytes.
  virtual std::optional<outgoing> next_outgoing(connection& c) = 0;
  /// `bytes` of the last `outgoing` for `stream_id` went into a packet
  /// (`fin_sent` when its fin did too).
  virtual void on_sent(connection& c, std::int64_t stream_id, std::size_t bytes, bool fin_sent) = 0;
  /// `stream_id` has no stream-level flow-control credit: do not offer it
  /// again until `on_stream_unblocked`.
  virtual void on_stream_blocked(connection& c, std::int64_t stream_id) = 0;
  /// The peer raised `stream_id`'s flow-control limit.
  virtual void on_stream_unblocked(connection& c, std::int64_t stream_id) = 0;
  /// The peer allowed more bidirectional streams (MAX_STREAMS): an
  /// `open_bidi_stream` that returned nullopt may succeed now.
  virtual void on_stream_credit(connection& c) { (void)c; }
  /// The connection ended (closed by either side, idle timeout, handshake or
  /// TLS failure).  `app_error` is the application error code when the close
  /// carried one (else 0); `reason` says what happened in words (for a TLS
  /// verification failure, why the certificate was refused).
  virtual void on_closed(connection& c, std::uint64_t app_error, const std::string& reason, bool by_peer) = 0;
};

/// One QUIC connection (server or client side).  Owned by its endpoint; use
/// only on the loop thread.
class connection {
 public:
  virtual ~connection() = default;
  /// Opens the next client-initiated bidirectional stream; nullopt when the
  /// peer's stream limit is reached (retry after a stream closes).
  virtual std::optional<std::int64_t> open_bidi_stream() = 0;
  /// The application has something new to send: schedule a write pass.
  virtual void want_write() = 0;
  /// STOP_SENDING on `stream_id` with `app_error` (and stop delivering its data).
  virtual void stop_sending(std::int64_t stream_id, std::uint64_t app_error) = 0;
  /// RESET_STREAM on `stream_id` with `app_error`.
  virtual void reset_stream(std::int64_t stream_id, std::uint64_t app_error) = 0;
  /// Closes the connection with an application error code (CONNECTION_CLOSE
  /// of type 0x1d) and a reason phrase; `on_closed` follows.
  virtual void close(std::uint64_t app_error, std::string_view reason) = 0;
  [[nodiscard]] virtual bool is_server() const noexcept = 0;
  /// The peer's address as text ("127.0.0.1:50123"), for logs.
  [[nodiscard]] virtual std::string peer() const = 0;
};

/// Length of the secrets of `server_config` (bytes).
inline constexpr std::size_t server_secret_length = 32;

struct server_config {
  std::string host = "127.0.0.1";  // address to bind ("::" or "0.0.0.0" for all)
  std::uint16_t port = 0;          // 0: an ephemeral port, see server_endpoint::port()
  std::filesystem::path cert_pem;
  std::filesystem::path key_pem;
  /// On the server every window is a receive window: what clients may send
  /// (OPEN, GET), which is little; what the server sends is governed by the
  /// client's windows.
  transport_limits limits;
  /// Connections open or in handshake, over all clients; an Initial beyond
  /// it is refused with CONNECTION_REFUSED (RFC 9000 §5.2.2).
  std::size_t max_connections = 256;
  /// The same, per client IP address (ports ignored).  A client over it is
  /// sent a Retry first and refused only once its address is validated,
  /// counting only connections whose address is proven (Retry token or
  /// completed handshake), so packets forged with a victim's address cannot
  /// lock the victim out.
  std::size_t max_connections_per_address = 16;
  /// Address validation (RFC 9000 §8.1.2): once this many handshakes are in
  /// progress, a new client must first echo a Retry token bound to its
  /// address.  0: always send Retry (tests); SIZE_MAX: never.
  std::size_t retry_threshold = 16;
  /// How long a Retry token is accepted.
  std::chrono::milliseconds retry_token_lifetime{10000};
  /// Stateless resets (RFC 9000 §10.3) sent per second at most, in answer to
  /// short-header packets for connection IDs the server does not know.
  std::uint32_t stateless_resets_per_second = 100;
  /// Secret the stateless reset tokens are derived from (with the CID).  A
  /// server restarted with the same secret can reset the connections of its
  /// previous run; empty: random at start.  Retry tokens always use a key
  /// made at start (they live seconds).
  std::vector<std::uint8_t> stateless_reset_secret;
  /// Rate-limited lines about refused packets and connections (at most one
  /// per refusal class per second, with counts); may be empty.
  std::function<void(const std::string&)> log;
};

/// What a server endpoint has done, for logs and tests (a snapshot).
struct server_stats {
  std::uint64_t connections = 0;          // open now (handshake included)
  std::uint64_t handshaking = 0;          // of which the handshake is not complete
  std::uint64_t accepted = 0;             // connections created since start
  std::uint64_t retries_sent = 0;         // Retry packets (address validation)
  std::uint64_t invalid_tokens = 0;       // Initials with a bad or expired token
  std::uint64_t refused_global = 0;       // CONNECTION_REFUSED: max_connections
  std::uint64_t refused_per_address = 0;  // CONNECTION_REFUSED: max_connections_per_address
  std::uint64_t resets_sent = 0;          // stateless resets
  std::uint64_t resets_rate_limited = 0;  // unknown-CID packets left unanswered
  std::uint64_t handshake_timeouts = 0;   // connections dropped in handshake
  std::uint64_t idle_timeouts = 0;        // connections closed by the idle timer
  std::uint64_t dropped_packets = 0;      // undecodable, or not an Initial for an unknown CID
};

/// A listening QUIC endpoint.  Each accepted connection gets a handler from
/// `factory`; the handler lives until after its `on_closed`.
class server_endpoint {
 public:
  using handler_factory = std::function<std::unique_ptr<connection_handler>(connection&)>;
  /// Binds the socket and loads the certificate; throws `tensogram::io_error`
  /// (bind failure, unreadable or invalid certificate/key).
  server_endpoint(server_config config, handler_factory factory);
  ~server_endpoint();  // stop() and join
  server_endpoint(const server_endpoint&) = delete;
  server_endpoint& operator=(const server_endpoint&) = delete;

  [[nodiscard]] std::uint16_t port() const noexcept;
  /// Runs the loop on a new thread.
  void start();
  /// Runs the loop on the calling thread until `stop()`.
  void run();
  /// Closes every connection (MT_NO_ERROR) and ends the loop; thread-safe.
  void stop();
  /// Runs `task` on the loop thread; thread-safe.
  void post(std::function<void()> task);
  /// The counters so far; thread-safe.
  [[nodiscard]] server_stats stats() const;

  struct impl;

 private:
  std::unique_ptr<impl> impl_;
};

struct client_config {
  std::string host;  // name or address to connect to
  std::uint16_t port = 0;
  std::string server_name;        // SNI and the name verified; defaults to `host`
  bool verify_peer = true;        // false: accept any certificate (`--insecure`)
  std::filesystem::path ca_file;  // extra trusted CA/certificate (PEM); system CAs always trusted
  transport_limits limits;
  /// Test only: never return flow-control credit (a client that never
  /// reads, as a hostile peer would).  False in use.
  bool testing_never_return_credit = false;
};

/// One client connection on its own loop thread.  Connecting starts in the
/// constructor; the handler hears `on_handshake_completed` or `on_closed`.
class client_endpoint {
 public:
  /// Resolves `host` and starts the handshake; throws `tensogram::io_error`
  /// when the name does not resolve or the socket cannot be made.
  client_endpoint(client_config config, connection_handler& handler);
  ~client_endpoint();  // closes (MT_NO_ERROR) if still open, joins
  client_endpoint(const client_endpoint&) = delete;
  client_endpoint& operator=(const client_endpoint&) = delete;

  /// Runs `task` with the connection on the loop thread; thread-safe.  Tasks
  /// posted after the connection closed still run (the connection's methods
  /// then do nothing).
  void post(std::function<void(connection&)> task);

  struct impl;

 private:
  std::unique_ptr<impl> impl_;
};

}  // namespace metatensor::streaming::quic
