// Asynchronous access to Tensogram files through std::future: our own typed
// async API (namespace `tensogram::io`), with the operations of the C API's
// async file functions (spec 04 Part C.4) and per-call thread pools, tokens
// and deadlines. The reference's front ends with its names
// (`tensogram::stdfuture`, `async_callback`, `coro`, spec 07 D2) are in
// <tensogram/async/*.hpp>, over the C ABI's runtime, which runs on this.
//
// Every operation runs a synchronous `tensogram::file` call on a thread pool
// and returns a `std::future`. Cancellation and timeouts settle that future
// at once, even while the worker is still blocked inside a slow read; the
// worker's eventual result is then discarded. See docs/async.md.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <future>
#include <memory>
#include <optional>
#include <stop_token>
#include <string>
#include <utility>
#include <vector>

#include "tensogram/core/buffer.hpp"
#include "tensogram/core/thread_pool.hpp"
#include "tensogram/io/byte_source.hpp"
#include "tensogram/io/file.hpp"
#include "tensogram/message/decode.hpp"
#include "tensogram/message/descriptor.hpp"
#include "tensogram/message/metadata_view.hpp"
#include "tensogram/message/options.hpp"

namespace tensogram::io {

/// A cancellation flag shared by every copy of the token. Cancelling settles
/// each pending operation launched with the token with `cancelled_error`
/// (on the cancelling thread, before `cancel()` returns); operations launched
/// with an already cancelled token fail at once and never start.
class cancellation_token {
 public:
  /// A fresh, uncancelled token.
  cancellation_token() = default;

  /// Requests cancellation; idempotent and safe from any thread.
  void cancel() noexcept { source_.request_stop(); }
  [[nodiscard]] bool is_cancelled() const noexcept { return source_.stop_requested(); }
  /// The standard view of the same flag, for cooperative code and
  /// `std::stop_callback`.
  [[nodiscard]] std::stop_token stop_token() const noexcept { return source_.get_token(); }

 private:
  std::stop_source source_;
};

/// Per-call controls of an asynchronous operation.
struct async_options {
  /// Deadline measured from the call, covering the wait in the queue and the
  /// run; the future then fails with `timeout_error`. A zero or negative
  /// timeout expires at once. No deadline when empty.
  std::optional<std::chrono::milliseconds> timeout;
  /// Cancels the operation (see `cancellation_token`).
  cancellation_token token;
  /// Called once, right after the future became ready (with a value, an
  /// exception, a cancellation or a timeout), on the thread that settled it:
  /// a pool worker, the thread calling `cancel()`, the deadline watcher, or
  /// the launching thread when the operation fails at once. Lets callers
  /// react to completion without blocking a thread on the future (the C
  /// API's completion callbacks, spec 07 C2.5). Must not throw; keep it
  /// short, it delays whoever settled the operation.
  std::function<void()> on_settled;
};

/// A `tensogram::file` used through futures. The handle is cheap to copy;
/// copies share the file, the thread pool and the deadline watcher. Each
/// pending operation shares them too, so destroying every handle while
/// operations are pending neither blocks nor invalidates their futures.
class async_file {
 public:
  /// Opens a local file (positional reads) on `pool` (a new pool of
  /// `thread_pool::default_threads()` workers when null) and checks that it
  /// exists by reading its size; the message scan stays lazy.
  [[nodiscard]] static std::future<async_file> open(const std::filesystem::path& path,
                                                    std::shared_ptr<thread_pool> pool = nullptr,
                                                    async_options options = {},
                                                    scan_mode mode = scan_mode::bidirectional);
  /// As `open`, reading through a memory mapping.
  [[nodiscard]] static std::future<async_file> open_mmap(const std::filesystem::path& path,
                                                         std::shared_ptr<thread_pool> pool = nullptr,
                                                         async_options options = {},
                                                         scan_mode mode = scan_mode::bidirectional);
  /// An HTTP(S) object read with range requests; the object's size is
  /// probed (one HEAD request) before the future is ready.
  [[nodiscard]] static std::future<async_file> open_remote(const std::string& url,
                                                           io::remote_options remote = {},
                                                           std::shared_ptr<thread_pool> pool = nullptr,
                                                           async_options options = {},
                                                           scan_mode mode = scan_mode::bidirectional);

  /// Wraps a file already open (any byte source, e.g. `file::from_source`).
  explicit async_file(tensogram::file f, std::shared_ptr<thread_pool> pool = nullptr);
  explicit async_file(std::shared_ptr<tensogram::file> f, std::shared_ptr<thread_pool> pool = nullptr);

  /// Number of messages (the first call scans the file).
  [[nodiscard]] std::future<std::size_t> message_count_async(async_options options = {}) const;
  /// Position and length of every message.
  [[nodiscard]] std::future<std::vector<scan_entry>> message_extents_async(async_options options = {}) const;
  /// The raw bytes of message `i` (a slice of the mapping in mmap mode).
  [[nodiscard]] std::future<buffer> message_bytes_async(std::size_t i, async_options options = {}) const;
  /// The raw bytes of message `i`, copied (reference API).
  [[nodiscard]] std::future<std::vector<std::uint8_t>> read_message_async(std::size_t i,
                                                                          async_options options = {}) const;
  /// Decodes every object of message `i`.
  [[nodiscard]] std::future<message> decode_message_async(std::size_t i, decode_options decode = {},
                                                          async_options options = {}) const;
  /// Metadata of message `i` only.
  [[nodiscard]] std::future<metadata> decode_metadata_async(std::size_t i, async_options options = {}) const;
  /// Metadata and descriptors of message `i`, without payloads.
  [[nodiscard]] std::future<std::pair<metadata, std::vector<data_object_descriptor>>>
  decode_descriptors_async(std::size_t i, async_options options = {}) const;
  /// Object `object_index` of message `i` (held at index 0 of the result).
  [[nodiscard]] std::future<message> decode_object_async(std::size_t i, std::size_t object_index,
                                                         decode_options decode = {},
                                                         async_options options = {}) const;
  /// Element ranges `(offset, count)` of one object, one buffer per range.
  [[nodiscard]] std::future<std::vector<buffer>> decode_range_async(
      std::size_t i, std::size_t object_index, std::vector<std::pair<std::uint64_t, std::uint64_t>> ranges,
      decode_options decode = {}, async_options options = {}) const;

  /// The synchronous file (thread-safe; usable alongside the futures).
  [[nodiscard]] tensogram::file& sync() const noexcept { return *file_; }
  [[nodiscard]] const std::shared_ptr<tensogram::file>& shared_file() const noexcept { return file_; }
  /// The pool the operations run on.
  [[nodiscard]] const std::shared_ptr<thread_pool>& pool() const noexcept;
  /// The local path (empty for remote files).
  [[nodiscard]] const std::filesystem::path& path() const noexcept { return file_->path(); }
  /// The path or URL the file reads.
  [[nodiscard]] std::string source_name() const { return file_->source_name(); }
  [[nodiscard]] bool is_remote() const noexcept { return file_->is_remote(); }

  /// The pool and deadline watcher, shared by the handles and every pending
  /// operation (defined in async.cpp).
  struct runtime;

 private:
  async_file(std::shared_ptr<runtime> rt, std::shared_ptr<tensogram::file> f) noexcept;

  std::shared_ptr<runtime> runtime_;
  std::shared_ptr<tensogram::file> file_;
};

/// Runs arbitrary work on a thread pool as operations with the rules of the
/// `async_file` operations (settled once by the work, the token or the
/// deadline; `on_settled` called after). Copies share the pool and the
/// deadline watcher. What the C API's async streaming encoder runs on.
class async_executor {
 public:
  /// On `pool` (a new pool of `thread_pool::default_threads()` workers when
  /// null).
  explicit async_executor(std::shared_ptr<thread_pool> pool = nullptr);

  /// Queues `fn` as one operation; `what` names it in cancellation and
  /// timeout messages. `fn` runs at most once, and not at all when the
  /// operation was cancelled or expired while queued; an exception it throws
  /// becomes the future's.
  [[nodiscard]] std::future<void> run(std::string what, std::function<void()> fn,
                                      async_options options = {}) const;

  [[nodiscard]] const std::shared_ptr<thread_pool>& pool() const noexcept;

 private:
  std::shared_ptr<async_file::runtime> runtime_;
};

// The names of the reference's async entry points, as free functions.

/// `async_file::open`.
[[nodiscard]] std::future<async_file> open_async(const std::filesystem::path& path,
                                                 std::shared_ptr<thread_pool> pool = nullptr,
                                                 async_options options = {});
/// `async_file::open_remote`.
[[nodiscard]] std::future<async_file> open_remote_async(const std::string& url,
                                                        io::remote_options remote = {},
                                                        std::shared_ptr<thread_pool> pool = nullptr,
                                                        async_options options = {});
[[nodiscard]] std::future<std::size_t> message_count_async(const async_file& f, async_options options = {});
[[nodiscard]] std::future<std::vector<std::uint8_t>> read_message_async(const async_file& f, std::size_t i,
                                                                        async_options options = {});
[[nodiscard]] std::future<message> decode_message_async(const async_file& f, std::size_t i,
                                                        decode_options decode = {},
                                                        async_options options = {});
[[nodiscard]] std::future<metadata> decode_metadata_async(const async_file& f, std::size_t i,
                                                          async_options options = {});
[[nodiscard]] std::future<message> decode_object_async(const async_file& f, std::size_t i,
                                                       std::size_t object_index, decode_options decode = {},
                                                       async_options options = {});
[[nodiscard]] std::future<std::vector<buffer>> decode_range_async(
    const async_file& f, std::size_t i, std::size_t object_index,
    std::vector<std::pair<std::uint64_t, std::uint64_t>> ranges, decode_options decode = {},
    async_options options = {});

}  // namespace tensogram::io
