// What `remote_file` needs from a way of reaching a remote file: the header,
// then byte ranges of tensors written straight into caller memory.  Two
// implementations: the QUIC protocol of spec 06 §10 (quic_transport.cpp) and
// the HTTP range mapping of §10.9 over libcurl (http_transport.cpp).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "metatensor/stream_client.hpp"
#include "src/metatensor/streaming/protocol/stream_protocol.hpp"
#include "src/metatensor/streaming/protocol/stream_scheduler.hpp"

namespace metatensor::streaming::detail {

/// A parsed URL: `metatensor://host[:port]/resource` or `http(s)://...`.
struct remote_url {
  enum class scheme { quic, http, https };
  scheme kind = scheme::quic;
  std::string host;        // without brackets for IPv6 literals
  std::uint16_t port = 0;  // 4433 / 80 / 443 when the URL has none
  std::string resource;    // path without the leading '/', percent-decoded (QUIC); as given (HTTP)
  std::string text;        // the URL as given
};
/// Throws `tensogram::invalid_arg_error` naming what is wrong.
[[nodiscard]] remote_url parse_remote_url(std::string_view url);

/// One tensor request as the transport sees it (already resolved against
/// the header by remote_file).
struct transport_request {
  std::uint64_t id = 0;              // remote_file's request id (not a stream id)
  get_payload get;                   // what goes into GET (range always set)
  std::uint64_t tensor_offset = 0;   // abs(t)
  std::uint64_t tensor_size = 0;     // bytes(t)
  std::span<std::byte> destination;  // exactly e − b bytes
  file_target file;                  // pwrite(2) there instead (client_options::image_fd)
};

/// How a transport reports back.  Called on the transport's thread, never
/// with a transport lock held, at most one final call per request id.
class transport_listener {
 public:
  virtual ~transport_listener() = default;
  /// `received` bytes of the request have been written to its destination.
  virtual void on_progress(std::uint64_t id, std::uint64_t received) = 0;
  virtual void on_complete(std::uint64_t id) = 0;
  /// The request failed (a `protocol_error` with the server's or our code,
  /// `tensogram::remote_error`, ...).
  virtual void on_failed(std::uint64_t id, std::exception_ptr error) = 0;
  /// The request was cancelled (our cancel, acknowledged or not).
  virtual void on_cancelled(std::uint64_t id) = 0;
  /// The connection ended: every request not yet finished fails with `error`.
  virtual void on_connection_lost(std::exception_ptr error) = 0;
};

/// The header as received (§10.4 steps 1–2).
struct opened_file {
  opened_payload info;
  std::vector<std::byte> header;  // [0, 8 + N)
};

class transport {
 public:
  virtual ~transport() = default;
  /// Connects and receives OPENED and HEADER (blocking, bounded by
  /// `client_options::open_timeout`).  Throws as `remote_file::open`.
  virtual opened_file open() = 0;
  /// Starts a request (thread-safe; returns at once).
  virtual void start(transport_request request) = 0;
  /// PRIORITY_UPDATE for a started request (thread-safe).
  virtual void update_priority(std::uint64_t id, stream_priority priority) = 0;
  /// Cancels a started request (thread-safe); `on_cancelled` follows unless
  /// it already ended.
  virtual void cancel(std::uint64_t id) = 0;
  /// Ends the connection with `code` (thread-safe, idempotent, blocks until
  /// the transport thread stopped; no listener call after it returns).
  virtual void close(stream_errc code, std::string_view reason) = 0;
};

[[nodiscard]] std::unique_ptr<transport> make_quic_transport(const remote_url& url,
                                                             const client_options& options,
                                                             transport_listener& listener);
[[nodiscard]] std::unique_ptr<transport> make_http_transport(const remote_url& url,
                                                             const client_options& options,
                                                             transport_listener& listener);

}  // namespace metatensor::streaming::detail
