// Opening a remote metatensor or safetensors file and fetching its tensors
// (spec 06 §10): the header first, then each physical tensor on its own QUIC
// stream with its own priority, landing at its absolute offset in a sparse
// file image so the views of §9 work unchanged (§10.7).
//
//   auto f = metatensor::streaming::remote_file::open("metatensor://host:4433/model.safetensors");
//   auto w = f.get("layer0.weight", {.urgency = 0});   // one stream
//   auto all = f.get_all();                              // the rest, in parallel
//   w.wait();                                            // compute can start here
//   auto v = f.flat("layer0.weight").as<float>();
//
// URLs: `metatensor://host[:port]/resource` speaks the QUIC protocol of
// §10.2–§10.6 (port 4433 by default); `http://` and `https://` use the byte
// range mapping of §10.9 through libcurl against any HTTP server, behind the
// same API (no priorities there: HTTP/1.1 has none).
//
// Threading: a `remote_file` and its `tensor_request`s may be used from any
// thread.  Transfers run on a background thread; `on_complete` callbacks run
// there too, so they should hand long work to another thread.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "metatensor/file.hpp"
#include "metatensor/safetensors.hpp"
#include "metatensor/stream_types.hpp"

namespace metatensor::streaming {

struct client_options {
  /// Verify the server's certificate against the system's trusted CAs (and
  /// `ca_file`) and the URL's host name.  `false` is `--insecure`: for tests
  /// against self-signed certificates only.
  bool verify_peer = true;
  /// An extra trusted certificate or CA bundle (PEM), e.g. a server's
  /// self-signed certificate.
  std::filesystem::path ca_file;
  /// Name checked against the certificate (and sent as SNI); default: the
  /// URL's host.
  std::string server_name;
  /// Limit for connecting and receiving the header.
  std::chrono::milliseconds open_timeout{30000};
  /// Where the file image lives.  Unset: the library allocates it (pages the
  /// tensors never touch are never committed).  Set: called once with the
  /// file size, returns writable memory of exactly that size that outlives
  /// the `remote_file` (for example a memory-mapped output file).
  std::function<std::span<std::byte>(std::uint64_t file_size)> image_provider;
  /// With `image_provider` returning a shared mapping (MAP_SHARED) of a
  /// file: that file's descriptor, open for writing.  Tensor bytes bound
  /// for the image are then written to it with pwrite(2) at their file
  /// offsets instead of through the mapping, which sees them all the same
  /// (one page cache) at a fraction of the cost of faulting in every page
  /// of the mapping.  -1 (default): bytes are copied into the image.
  int image_fd = -1;
  /// HTTP fallback only: how many transfers run at once (parallel
  /// connections replace streams, §10.9).
  std::size_t http_parallel = 8;
};

enum class request_status { pending, complete, failed, cancelled };

class tensor_request;

struct request_options {
  /// Bytes [b, e) of the tensor, relative to its first byte; default: all.
  /// A partial range never yields a view (§10.7).
  std::optional<byte_range> range;
  std::uint8_t urgency = 3;  ///< 0 (highest) .. 7 (lowest), §10.3
  bool incremental = false;
  /// Land the bytes here instead of the file image (exactly e − b bytes;
  /// the caller keeps it alive until the request ends).  No view then.
  std::span<std::byte> into;
  /// Fires once, on the transfer thread, when the request ends (complete,
  /// failed or cancelled), before `wait` returns.  Must not block.
  std::function<void(const tensor_request&)> on_complete;
};

namespace detail {
struct request_block;
struct remote_core;
}  // namespace detail

/// A handle on one tensor stream's request.  Cheap to copy (shared).
class tensor_request {
 public:
  tensor_request() = default;
  [[nodiscard]] const std::string& tensor() const;
  /// The requested range, relative to the tensor's first byte.
  [[nodiscard]] byte_range range() const;
  /// e − b.
  [[nodiscard]] std::uint64_t size() const;
  /// Bytes received so far (for progress bars).
  [[nodiscard]] std::uint64_t received() const;
  [[nodiscard]] request_status status() const;
  /// Blocks until the request ends; rethrows its failure
  /// (`protocol_error` carrying the §10.6 code, `tensogram::remote_error`,
  /// `tensogram::timeout_error`) or `tensogram::cancelled_error`.
  void wait() const;
  /// As `wait`, but gives up after `timeout`; true when the request ended.
  [[nodiscard]] bool wait_for(std::chrono::milliseconds timeout) const;
  /// The failure of a failed or cancelled request (null otherwise).
  [[nodiscard]] std::exception_ptr error() const;
  /// STOP_SENDING with MT_CANCELLED (§10.4); no effect once ended.
  void cancel() const;
  /// PRIORITY_UPDATE (§10.5); no effect once ended (ignored over HTTP).
  void set_priority(std::uint8_t urgency, bool incremental = false) const;

 private:
  friend struct detail::remote_core;
  explicit tensor_request(std::shared_ptr<detail::request_block> b) : block_(std::move(b)) {}
  std::shared_ptr<detail::request_block> block_;
};

/// A remote file, opened: its header received and validated.
class remote_file {
 public:
  /// Connects, sends OPEN, receives OPENED and HEADER and validates the
  /// header (§10.4 step 3: base layer, and for metatensor files the whole
  /// structural validation except the BlobRef checks).  Throws
  /// `tensogram::invalid_arg_error` (bad URL), `tensogram::remote_error`
  /// (connection, TLS), `tensogram::timeout_error`, `protocol_error` (an
  /// ERROR from the server, e.g. MT_NOT_FOUND) or `metatensor::error` (an
  /// invalid header; the connection is closed with MT_INVALID_FILE).
  [[nodiscard]] static remote_file open(std::string_view url, client_options options = {});
  ~remote_file();
  remote_file(remote_file&&) noexcept;
  remote_file& operator=(remote_file&&) noexcept;

  [[nodiscard]] std::uint64_t file_size() const noexcept;
  /// Bytes [0, 8 + N) of the file.
  [[nodiscard]] std::span<const std::byte> header() const noexcept;
  [[nodiscard]] const std::optional<std::string>& etag() const noexcept;
  /// The safetensors view of the header (offsets, dtypes, shapes).
  [[nodiscard]] const safetensors::file& base() const noexcept;
  /// True when the header carries metatensor keys (else a plain safetensors file).
  [[nodiscard]] bool is_metatensor() const noexcept;
  /// Physical tensors in offset order (what `get` accepts).
  [[nodiscard]] std::vector<std::string> physical_names() const;

  /// Requests one physical tensor (or a range of it) on a new stream.
  /// Throws `tensogram::invalid_arg_error` for an urgency above 7 or an
  /// `into` of the wrong size; an unknown name or bad range is sent anyway
  /// and fails with the server's MT_NOT_FOUND / MT_BAD_RANGE.
  tensor_request get(std::string_view physical_name, request_options options = {});
  /// Every physical tensor not requested yet, in parallel, each with
  /// `urgency`; `on_complete` fires per tensor.
  std::vector<tensor_request> get_all(std::uint8_t urgency = 3,
                                      std::function<void(const tensor_request&)> on_complete = {});
  /// A logical tensor (metatensor files): its primary and, when it has one,
  /// its heap, the heap no more urgent than the primary (§10.5).
  std::vector<tensor_request> get_logical(std::string_view logical_name, std::uint8_t urgency = 3,
                                          std::function<void(const tensor_request&)> on_complete = {});

  /// True when every byte of the physical tensor is in the image.
  [[nodiscard]] bool has(std::string_view physical_name) const;
  /// Views once complete (§10.7); `tensogram::invalid_arg_error` while a
  /// needed physical tensor is missing.  For tensors with a heap the BlobRef
  /// checks run on first use (`metatensor::error` MT_BLOB_* on failure).
  [[nodiscard]] safetensors::tensor_view tensor(std::string_view physical_name) const;
  [[nodiscard]] flat_view flat(std::string_view logical_name) const;
  [[nodiscard]] record_view records(std::string_view logical_name) const;
  [[nodiscard]] blob_view blobs(std::string_view logical_name) const;
  /// The metatensor view of the image (views through it are only safe for
  /// tensors `has` reports); throws for a plain safetensors file.
  [[nodiscard]] const metatensor::file& image_file() const;
  /// The whole image (bytes of tensors not received are unspecified).
  [[nodiscard]] std::span<const std::byte> image() const noexcept;

  /// Ends the connection (MT_NO_ERROR); pending requests fail as cancelled.
  void close();

 private:
  explicit remote_file(std::shared_ptr<detail::remote_core> core) : core_(std::move(core)) {}
  std::shared_ptr<detail::remote_core> core_;
};

}  // namespace metatensor::streaming
