// Random-access byte sources behind `tensogram::file`: a local file read with
// positional reads, a memory mapping, or an HTTP(S) object read with range
// requests (spec 04 Part E.3). The scanner and the message-layout reader are
// written once against this interface, so every path finds the same messages.
#pragma once

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tensogram/core/buffer.hpp"

namespace tensogram::io {

/// A half-open byte range `[offset, offset + length)` of a source.
struct byte_range {
  std::uint64_t offset = 0;
  std::uint64_t length = 0;
  friend bool operator==(const byte_range&, const byte_range&) = default;
};

/// What a source has done so far, for tests and benchmarks that bound the
/// I/O an operation needs. `round_trips` counts calls of `read` (a batch is
/// served concurrently by remote sources, so it costs one round trip);
/// `requests` counts the ranges read plus any size probe (HEAD).
struct source_stats {
  std::uint64_t requests = 0;
  std::uint64_t round_trips = 0;
  std::uint64_t bytes = 0;
};

/// Random-access bytes of one file or object. Every member is safe to call
/// from many threads at once.
class byte_source {
 public:
  virtual ~byte_source() = default;
  byte_source() = default;
  byte_source(const byte_source&) = delete;
  byte_source& operator=(const byte_source&) = delete;

  /// Size in bytes; may do I/O the first time (a HEAD request, an fstat).
  [[nodiscard]] virtual std::uint64_t size() = 0;

  /// Reads every range, in order; all must lie within `size()` (else an
  /// `io_error`/`remote_error` naming the range). A source may serve the
  /// ranges of one call concurrently: the batch is one round trip.
  [[nodiscard]] virtual std::vector<buffer> read(std::span<const byte_range> ranges) = 0;

  /// The whole source as one mapped buffer, when it is a memory mapping
  /// (zero-copy decode); null otherwise.
  [[nodiscard]] virtual const buffer* mapping() noexcept { return nullptr; }

  /// Where the bytes come from (path or URL), for error messages.
  [[nodiscard]] virtual std::string describe() const = 0;

  /// True for sources whose reads are network round trips.
  [[nodiscard]] virtual bool is_remote() const noexcept { return false; }

  /// A snapshot of the I/O done so far.
  [[nodiscard]] source_stats stats() const noexcept {
    return {requests_.load(), round_trips_.load(), bytes_.load()};
  }

  /// Reads one range (one round trip).
  [[nodiscard]] buffer read_one(byte_range r) {
    const byte_range one[1] = {r};
    return std::move(read(one).front());
  }

 protected:
  /// Implementations call this once per `read` call (and per size probe).
  void count(std::uint64_t requests, std::uint64_t round_trips, std::uint64_t bytes) noexcept {
    requests_ += requests;
    round_trips_ += round_trips;
    bytes_ += bytes;
  }

 private:
  std::atomic<std::uint64_t> requests_{0};
  std::atomic<std::uint64_t> round_trips_{0};
  std::atomic<std::uint64_t> bytes_{0};
};

/// A local file read with `pread`, opened now: `io_error` "file not found:
/// <path>" (or the OS's reason) when it cannot be.
[[nodiscard]] std::unique_ptr<byte_source> open_local_source(std::filesystem::path path);

/// A local file mapped read-only into memory on first use; the path must
/// exist now (`io_error` "file not found: <path>").
[[nodiscard]] std::unique_ptr<byte_source> open_mapped_source(std::filesystem::path path);

/// A byte buffer already in memory (tests, in-memory files).
[[nodiscard]] std::unique_ptr<byte_source> open_memory_source(buffer bytes, std::string name = "<memory>");

/// Options of remote sources (spec 04 E.3).
struct remote_options {
  /// Whole-transfer timeout per request, in milliseconds (0 = none).
  long timeout_ms = 60000;
  /// Connection timeout, in milliseconds.
  long connect_timeout_ms = 10000;
  /// Extra request headers, each "Name: value" (credentials, tokens).
  std::vector<std::string> headers;
  /// Verify TLS peers (https).
  bool verify_tls = true;
};

/// Sets one option given as text, as the C API's storage options come
/// (spec 07 C2.4 `tgm_async_file_open_remote`): `timeout_ms` and
/// `connect_timeout_ms` (decimal), `verify_tls` (`true`/`false`/`1`/`0`),
/// `header` ("Name: value", repeatable) or `header.<Name>` (the value), and
/// the reference's object-store client keys, case-insensitive (spec 08
/// §3.3: `timeout` / `connect_timeout` as durations such as `30s`,
/// `allow_invalid_certificates`, `user_agent`, ...; keys without an
/// equivalent here are checked and have no effect).
/// Throws `invalid_arg_error` for any other key or a malformed value.
void set_remote_option(remote_options& options, std::string_view key, std::string_view value);

/// True if `source` names a remote object (http:// or https://).
[[nodiscard]] bool is_remote_url(std::string_view source) noexcept;

/// An HTTP(S) object read with range requests over libcurl. Construction
/// does no I/O; the first `size()` sends one HEAD request.
[[nodiscard]] std::unique_ptr<byte_source> open_http_source(std::string url, remote_options options = {});

}  // namespace tensogram::io
