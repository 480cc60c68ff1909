// Serving a directory of metatensor / safetensors files over QUIC (spec 06
// §10): one file per connection, the header on the control stream, one
// tensor per client stream, sent in the order of the §10.5 scheduler.
//
// Every byte of a connection comes from the file as it was when the
// connection opened it (§10.2): the server maps the file once per
// connection, so a file replaced by rename (as every writer of this project
// does) keeps being served from its old contents to the connections that
// opened it.  Rewriting a file in place is not detected.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace metatensor::streaming {

struct server_options {
  std::string host = "127.0.0.1";  ///< address to bind ("::" or "0.0.0.0": all)
  std::uint16_t port = 4433;       ///< 0: an ephemeral port (see `server::port`)
  /// Certificate and key (PEM).  Both empty: a self-signed pair is made in
  /// `tls_dir` on first run and reused afterwards.
  std::filesystem::path cert_pem;
  std::filesystem::path key_pem;
  /// Where the self-signed pair lives (created 0700); default
  /// `$XDG_CONFIG_HOME/metatensor/tls` or `~/.config/metatensor/tls`.
  std::filesystem::path tls_dir;
  /// One line per connection event (open, served file, errors); may be empty.
  std::function<void(const std::string&)> log;
  /// Rate-limited lines about refused clients and packets (Retry sent, limits
  /// reached, stateless resets, handshake timeouts); empty: `log`.
  std::function<void(const std::string&)> refusal_log;

  // Protection against hostile or broken clients (all per server).
  /// Connections (handshake included) over all clients; more are refused.
  std::size_t max_connections = 256;
  /// Connections per client address: an IPv4 address, or the /64 prefix of
  /// an IPv6 address (what one host or line is usually given).
  std::size_t max_connections_per_address = 16;
  /// Handshakes in progress from which new clients must first prove their
  /// address with a Retry round trip (QUIC address validation); 0: always.
  std::size_t retry_threshold = 16;
  /// Concurrent streams a client may open per connection (control stream
  /// included; §10.8 suggests at least 100).
  std::uint64_t max_streams = 128;
  /// Response bytes accepted for sending but not yet handed to QUIC, per
  /// connection: GETs beyond it wait until the client has taken earlier
  /// answers, then go most urgent first (one answer is always admitted,
  /// however large, and so is a GET more urgent than every queued answer).  Payloads are
  /// sent from the file mapping, not copied, so this bounds the work queued
  /// for a client that never reads rather than a copy of the file.
  std::uint64_t max_queued_bytes = 32u << 20;
  /// A connection with no packet for this long is closed.
  std::chrono::milliseconds idle_timeout{30000};
  /// A handshake not complete after this long is dropped.
  std::chrono::milliseconds handshake_timeout{10000};
  /// Stateless resets answered per second at most (packets for unknown
  /// connections beyond it are dropped).
  std::uint32_t stateless_resets_per_second = 100;
  /// The file holding the secret that stateless reset tokens derive from
  /// (32 bytes, RFC 9000 §10.3.2): a server restarted with the same secret
  /// answers its predecessor's clients with stateless resets, so they fail
  /// at once instead of waiting for their idle timeout. Made (mode 0600,
  /// random) when missing; any other size is an error. Empty: the file
  /// `reset.key` in the TLS directory when the server uses its self-signed
  /// pair, else a new random secret at each start.
  std::filesystem::path reset_secret_file;
  /// Test only: the secret itself (32 bytes), ahead of `reset_secret_file`.
  std::vector<std::uint8_t> testing_reset_secret;
  /// Test only: answer every new client with Retry.
  bool testing_always_retry = false;
  /// Test only: DATA frames announce the full length but stop this many
  /// bytes short before FIN (the §13 "short DATA frame" case).  0 in use.
  std::uint64_t testing_short_data = 0;
};

/// What a server has done so far (a snapshot, for logs and tests).
struct server_stats {
  std::uint64_t connections = 0;          ///< open now (handshake included)
  std::uint64_t handshaking = 0;          ///< of which still in handshake
  std::uint64_t accepted = 0;             ///< connections created since start
  std::uint64_t retries_sent = 0;         ///< Retry packets (address validation)
  std::uint64_t invalid_tokens = 0;       ///< Initials with a bad or expired token
  std::uint64_t refused_global = 0;       ///< refused: max_connections
  std::uint64_t refused_per_address = 0;  ///< refused: max_connections_per_address
  std::uint64_t resets_sent = 0;          ///< stateless resets sent
  std::uint64_t resets_rate_limited = 0;  ///< unknown-connection packets left unanswered
  std::uint64_t handshake_timeouts = 0;   ///< connections dropped in handshake
  std::uint64_t idle_timeouts = 0;        ///< connections closed idle
  std::uint64_t dropped_packets = 0;      ///< undecodable or unexpected datagrams
  std::uint64_t queued_bytes = 0;         ///< response bytes queued now, all connections
  std::uint64_t queued_bytes_peak = 0;    ///< the most ever queued by one connection
  std::uint64_t gets_deferred = 0;        ///< GETs that waited for max_queued_bytes
};

class server {
 public:
  /// Checks `root` is a directory, loads or makes the certificate, binds.
  /// Throws `tensogram::io_error`.
  server(std::filesystem::path root, server_options options = {});
  ~server();  // stops
  server(const server&) = delete;
  server& operator=(const server&) = delete;

  /// The bound UDP port.
  [[nodiscard]] std::uint16_t port() const noexcept;
  /// The certificate in use (PEM path): clients pass it as `ca_file`.
  [[nodiscard]] const std::filesystem::path& certificate() const noexcept;
  /// Serves on a background thread.
  void start();
  /// Serves on the calling thread until `stop` (from another thread or a
  /// signal handler through `stop`).
  void run();
  /// Closes every connection and stops serving; thread-safe.
  void stop();
  /// The counters so far; thread-safe.
  [[nodiscard]] server_stats stats() const;

  struct impl;

 private:
  std::unique_ptr<impl> impl_;
};

}  // namespace metatensor::streaming
