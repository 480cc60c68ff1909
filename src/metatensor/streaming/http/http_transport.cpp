// The HTTP range mapping of spec 06 §10.9 behind the `transport` interface:
// bytes 0–7, then [8, 8 + N), then one ranged GET per tensor request,
// `Range: bytes=abs(t)+b-(abs(t)+e-1)`, pinned to the file version of the
// header with `If-Range: <ETag>`. HTTP/1.1 has no streams: parallel
// connections replace them (at most `client_options::http_parallel`
// transfers at once) and there is no priority on the wire, so urgency only
// orders the requests not started yet (the `Priority` header of RFC 9218 is
// sent too, for HTTP/2 and HTTP/3 servers that read it).
//
// Threading: `open` runs the two header requests on the caller's thread;
// afterwards one background thread owns the libcurl multi handle (which
// keeps the connections alive between requests). `start`, `cancel`,
// `update_priority` and `close` queue a command under a mutex and wake the
// thread with curl_multi_wakeup, the one multi-handle call libcurl allows
// from another thread. Listener calls are made on the background thread
// with no lock held. Response bytes are written straight into the request's
// destination from libcurl's write callback, never beyond its end.
#include <curl/curl.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <variant>
#include <vector>

#include "metatensor/error.hpp"
#include "metatensor/safetensors.hpp"
#include "src/io/http_support.hpp"
#include "src/metatensor/streaming/transport.hpp"
#include "tensogram/core/endian.hpp"
#include "tensogram/core/error.hpp"

namespace metatensor::streaming::detail {

namespace {

// libcurl set-up, handle owners and header parsing shared with tensogram's
// http_source (src/io/http_support.hpp).
using tensogram::io::detail::easy_ptr;
using tensogram::io::detail::ensure_curl_initialised;
using tensogram::io::detail::iequals_prefix;
using tensogram::io::detail::multi_ptr;
using tensogram::io::detail::parse_content_range;
using tensogram::io::detail::redact_url;
using tensogram::io::detail::slist_ptr;
using tensogram::io::detail::trim;

// Error pages are read (so the connection stays reusable) up to this size,
// then the transfer is aborted.
constexpr std::uint64_t max_error_body = 64 * 1024;

std::string num(std::uint64_t v) {
  return std::to_string(v);
}

// If-Range needs a strong validator (RFC 9110 §13.1.5): a weak ETag there
// makes every reply a full 200.
bool is_strong_etag(std::string_view etag) noexcept {
  return !etag.empty() && !iequals_prefix(etag, "W/");
}

// One ranged GET: bytes [begin, begin + size) of the file into `destination`.
// Lives (behind a unique_ptr, so libcurl's callbacks can point at it) from
// start to its final listener call.
struct transfer {
  std::uint64_t id = 0;
  std::string what;  // "tensor \"w\"" or "the header", for messages
  std::uint64_t begin = 0;
  std::uint64_t size = 0;
  std::uint64_t file_size = 0;  // expected Content-Range total, 0 when unknown yet
  std::span<std::byte> destination;
  file_target file;  // pwrite(2) there instead (client_options::image_fd)
  std::uint8_t urgency = 3;
  bool incremental = false;
  std::uint64_t sequence = 0;  // start order, ties within one urgency
  bool if_range = false;       // If-Range sent

  easy_ptr easy;
  slist_ptr headers;
  std::array<char, CURL_ERROR_SIZE> errbuf{};

  // Response state (written by the callbacks).
  long status = 0;
  bool body_started = false;
  std::uint64_t written = 0;     // bytes stored in `destination`
  std::uint64_t reported = 0;    // bytes announced with on_progress
  std::uint64_t error_body = 0;  // bytes of an error page read
  std::string content_range_value;
  std::string etag;
  // Why the write callback aborted the transfer, when it did.
  enum class abort_reason { none, overflow, full_reply, bad_range, size_changed, error_body, write_failed };
  abort_reason aborted = abort_reason::none;
  std::string write_error;  // what store_bytes threw (write_failed)
};

std::size_t header_callback(char* ptr, std::size_t size, std::size_t nmemb, void* user) noexcept {
  auto& t = *static_cast<transfer*>(user);
  const std::size_t n = size * nmemb;
  const std::string_view line(ptr, n);
  try {
    // A new status line starts a new response (redirects, 100 Continue).
    if (iequals_prefix(line, "HTTP/")) {
      t.content_range_value.clear();
      t.etag.clear();
    } else if (iequals_prefix(line, "content-range:")) {
      t.content_range_value = std::string(trim(line.substr(14)));
    } else if (iequals_prefix(line, "etag:")) {
      t.etag = std::string(trim(line.substr(5)));
    }
  } catch (...) {
    return 0;  // out of memory: abort the transfer
  }
  return n;
}

// Checks the 206 reply's Content-Range once, before the first body byte is
// stored: the bytes must be the ones asked for, of the file version opened.
bool range_acceptable(transfer& t) noexcept {
  const auto cr = parse_content_range(t.content_range_value);
  if (!cr.first || !cr.last || *cr.first != t.begin || *cr.last < *cr.first) {
    t.aborted = transfer::abort_reason::bad_range;
    return false;
  }
  if (t.file_size != 0 && cr.total && *cr.total != t.file_size) {
    t.aborted = transfer::abort_reason::size_changed;
    return false;
  }
  return true;
}

std::size_t write_callback(char* ptr, std::size_t size, std::size_t nmemb, void* user) noexcept {
  auto& t = *static_cast<transfer*>(user);
  const std::size_t n = size * nmemb;
  if (!t.body_started) {
    t.body_started = true;
    curl_easy_getinfo(t.easy.get(), CURLINFO_RESPONSE_CODE, &t.status);
    if (t.status == 206 && !range_acceptable(t)) return 0;
  }
  if (t.status == 206) {
    if (n > t.size - t.written) {
      // More bytes than asked: never write past the destination.
      t.aborted = transfer::abort_reason::overflow;
      return 0;
    }
    try {
      store_bytes(t.destination, t.file, t.written, {reinterpret_cast<const std::byte*>(ptr), n});
    } catch (const std::exception& e) {
      t.aborted = transfer::abort_reason::write_failed;
      t.write_error = e.what();
      return 0;
    }
    t.written += n;
    return n;
  }
  if (t.status == 200) {
    // The whole file instead of the range (If-Range not matched, or a server
    // without range support): stop before downloading it.
    t.aborted = transfer::abort_reason::full_reply;
    return 0;
  }
  t.error_body += n;
  if (t.error_body > max_error_body) {
    t.aborted = transfer::abort_reason::error_body;
    return 0;
  }
  return n;
}

// "GET bytes=a-b of <url>" for messages.
std::string request_text(const transfer& t, const std::string& url) {
  if (t.size == 0) return "GET " + url;
  return "GET bytes=" + num(t.begin) + "-" + num(t.begin + t.size - 1) + " of " + url;
}

// The failure of a finished transfer, or null when it delivered exactly its
// bytes. `rc` is libcurl's result.
std::exception_ptr outcome(const transfer& t, CURLcode rc, const std::string& url, std::string_view etag) {
  using reason = transfer::abort_reason;
  const std::string where = t.what + ": " + request_text(t, url);
  switch (t.aborted) {
    case reason::overflow:
      return std::make_exception_ptr(
          protocol_error(stream_errc::protocol_error,
                         where + ": the server sent more than the " + num(t.size) + " bytes asked for"));
    case reason::bad_range:
      return std::make_exception_ptr(protocol_error(
          stream_errc::protocol_error,
          where + ": the server replied with other bytes (Content-Range: " + t.content_range_value + ")"));
    case reason::size_changed:
      return std::make_exception_ptr(tensogram::remote_error(
          where + ": file changed on the server (Content-Range: " + t.content_range_value +
          ", the file opened had " + num(t.file_size) + " bytes)"));
    case reason::write_failed:
      return std::make_exception_ptr(tensogram::io_error(TGM_ERROR_IO, where + ": " + t.write_error));
    case reason::full_reply:
    case reason::error_body:
    case reason::none: break;
  }
  if (t.status == 200 || t.aborted == reason::full_reply) {
    if (t.if_range) {
      return std::make_exception_ptr(
          tensogram::remote_error(where + ": file changed on the server (HTTP 200 instead of 206: If-Range " +
                                  std::string(etag) + " no longer matches)"));
    }
    return std::make_exception_ptr(
        tensogram::remote_error(where + ": the server ignored the Range header (HTTP 200): byte ranges are "
                                        "required (metatensor-format §10.9)"));
  }
  if (t.status != 0 && t.status != 206) {
    return std::make_exception_ptr(tensogram::remote_error(where + ": HTTP " + std::to_string(t.status)));
  }
  if (rc == CURLE_OPERATION_TIMEDOUT) {
    return std::make_exception_ptr(tensogram::timeout_error(where + ": " + curl_easy_strerror(rc)));
  }
  if (rc != CURLE_OK && rc != CURLE_PARTIAL_FILE) {
    std::string msg = where + ": " + curl_easy_strerror(rc);
    if (t.errbuf[0] != '\0') msg += std::string(" (") + t.errbuf.data() + ")";
    return std::make_exception_ptr(tensogram::remote_error(msg));
  }
  if (t.written != t.size) {
    // A short body (the connection ended early, or Content-Range promised
    // fewer bytes): the DATA length check of §10.4 step 3.
    return std::make_exception_ptr(protocol_error(
        stream_errc::protocol_error, where + ": got " + num(t.written) + " of " + num(t.size) + " bytes"));
  }
  return nullptr;
}

class http_transport final : public transport {
 public:
  http_transport(const remote_url& url, const client_options& options, transport_listener& listener)
      : url_(url.text),
        shown_url_(redact_url(url.text)),
        options_(options),
        listener_(listener),
        parallel_(std::max<std::size_t>(options.http_parallel, 1)) {
    ensure_curl_initialised();
    multi_.reset(curl_multi_init());
    if (!multi_) throw tensogram::remote_error(shown_url_ + ": cannot create a libcurl multi handle");
    // Connections stay in the multi handle's cache between requests; keep
    // one per parallel transfer (HTTP/1.1 keep-alive, §10.9).
    curl_multi_setopt(multi_.get(), CURLMOPT_MAXCONNECTS, static_cast<long>(parallel_ + 2));
    curl_multi_setopt(multi_.get(), CURLMOPT_MAX_HOST_CONNECTIONS, static_cast<long>(parallel_));
  }

  http_transport(const http_transport&) = delete;
  http_transport& operator=(const http_transport&) = delete;

  ~http_transport() override { close(stream_errc::no_error, {}); }

  opened_file open() override {
    {
      const std::lock_guard lock(mutex_);
      if (opened_ || closing_)
        throw tensogram::invalid_arg_error(shown_url_ + ": open called twice or after close");
      opened_ = true;
    }
    const auto deadline = std::chrono::steady_clock::now() + options_.open_timeout;
    opened_file out;
    // §10.9: bytes 0–7 give N; their Content-Range gives the file size.
    std::array<std::byte, 8> length_bytes{};
    auto first = make_transfer("the header length", 0, 8, length_bytes, 0);
    const CURLcode first_rc = run_blocking(*first, deadline);
    const auto cr = parse_content_range(first->content_range_value);
    if (first->status == 404 || first->status == 410) {
      // The server's "no such file": what MT_NOT_FOUND says over QUIC (§10.4).
      throw protocol_error(stream_errc::not_found, shown_url_ + ": HTTP " + std::to_string(first->status));
    }
    // A file shorter than 8 bytes: 416 when empty, else fewer bytes than
    // asked. The same verdict as a local open (§2 rule 1).
    if ((first->status == 416 || first->status == 206) && cr.total && *cr.total < 8) {
      throw error(errc::st_header_too_small,
                  shown_url_ + ": file is " + num(*cr.total) + " bytes, less than 8");
    }
    if (auto failure = outcome(*first, first_rc, shown_url_, {})) std::rethrow_exception(failure);
    if (!cr.total) {
      throw tensogram::remote_error(
          shown_url_ +
          ": the reply to bytes=0-7 has no file size (Content-Range: " + first->content_range_value + ")");
    }
    const std::uint64_t file_size = *cr.total;
    const auto n = tensogram::load_le<std::uint64_t>(length_bytes.data());
    if (n > safetensors::max_header_length) {
      // Refused before allocating it (§2 rule 2, §8.4).
      throw protocol_error(stream_errc::limit_exceeded, shown_url_ + ": header length " + num(n) +
                                                            " exceeds " +
                                                            num(safetensors::max_header_length) + " bytes");
    }
    if (n > file_size - 8) {
      throw error(errc::st_header_length, shown_url_ + ": header length " + num(n) + " exceeds the " +
                                              num(file_size - 8) + " bytes after it");
    }
    if (!first->etag.empty()) etag_ = first->etag;

    out.header.resize(static_cast<std::size_t>(8 + n));
    std::memcpy(out.header.data(), length_bytes.data(), 8);
    if (n != 0) {
      auto second = make_transfer("the header", 8, n, std::span(out.header).subspan(8), file_size);
      const CURLcode rc = run_blocking(*second, deadline);
      if (auto failure = outcome(*second, rc, shown_url_, etag_)) std::rethrow_exception(failure);
    }
    out.info.file_size = file_size;
    out.info.header_size = 8 + n;
    if (!etag_.empty()) out.info.etag = etag_;
    file_size_ = file_size;

    // From here on the background thread owns the multi handle (the
    // thread's creation orders everything above before it). Started under
    // the lock so that a concurrent close either sees the thread or
    // prevents it.
    {
      const std::lock_guard lock(mutex_);
      if (closing_) throw tensogram::cancelled_error(shown_url_ + ": closed while opening");
      thread_ = std::thread([this] { run(); });
      worker_id_ = thread_.get_id();
    }
    return out;
  }

  void start(transport_request request) override { push(std::move(request)); }

  void update_priority(std::uint64_t id, stream_priority priority) override {
    push(priority_command{id, priority});
  }

  void cancel(std::uint64_t id) override { push(cancel_command{id}); }

  void close(stream_errc /*code*/, std::string_view /*reason*/) override {
    // HTTP has no connection error code to send (§10.9): closing drops the
    // connections.
    bool on_worker = false;
    {
      const std::lock_guard lock(mutex_);
      closing_ = true;
      on_worker = worker_id_ == std::this_thread::get_id();
    }
    if (multi_) curl_multi_wakeup(multi_.get());
    // A listener callback closing its own transport cannot wait for the
    // thread it runs on: the thread stops once the callback returns (the
    // transport must then be destroyed from another thread).
    if (on_worker) return;
    // thread_ was written under mutex_ before closing_ was set (open), so it
    // is stable here; join_mutex_ makes concurrent closes join once.
    const std::lock_guard join_lock(join_mutex_);
    if (thread_.joinable()) thread_.join();
  }

 private:
  struct priority_command {
    std::uint64_t id;
    stream_priority priority;
  };
  struct cancel_command {
    std::uint64_t id;
  };
  using command = std::variant<transport_request, priority_command, cancel_command>;

  void push(command c) {
    {
      const std::lock_guard lock(mutex_);
      if (closing_) return;  // no listener call after close
      commands_.push_back(std::move(c));
    }
    curl_multi_wakeup(multi_.get());
  }

  // A transfer with its easy handle configured; not attached yet.
  std::unique_ptr<transfer> make_transfer(std::string what, std::uint64_t begin, std::uint64_t size,
                                          std::span<std::byte> destination, std::uint64_t file_size) {
    auto t = std::make_unique<transfer>();
    t->what = std::move(what);
    t->begin = begin;
    t->size = size;
    t->destination = destination;
    t->file_size = file_size;
    t->easy.reset(curl_easy_init());
    if (!t->easy) throw tensogram::remote_error(shown_url_ + ": cannot create a libcurl handle");
    CURL* h = t->easy.get();
    bool ok = true;
    const auto set = [&](CURLcode rc) { ok = ok && rc == CURLE_OK; };
    set(curl_easy_setopt(h, CURLOPT_URL, url_.c_str()));
    set(curl_easy_setopt(h, CURLOPT_PRIVATE, static_cast<void*>(t.get())));
    ok = tensogram::io::detail::set_range_request_options(h, "metatensor-cpp") && ok;
    set(curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, &write_callback));
    set(curl_easy_setopt(h, CURLOPT_WRITEDATA, static_cast<void*>(t.get())));
    set(curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, &header_callback));
    set(curl_easy_setopt(h, CURLOPT_HEADERDATA, static_cast<void*>(t.get())));
    set(curl_easy_setopt(h, CURLOPT_ERRORBUFFER, t->errbuf.data()));
    const auto open_ms = static_cast<long>(std::max<std::int64_t>(options_.open_timeout.count(), 1));
    set(curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, open_ms));
    // A transfer that receives nothing for open_timeout (at least 1 s) has
    // stalled: fail it (timeout_error) rather than wait forever, as a QUIC
    // idle timeout would. Transfers have no total time limit.
    set(curl_easy_setopt(h, CURLOPT_LOW_SPEED_LIMIT, 1L));
    set(curl_easy_setopt(h, CURLOPT_LOW_SPEED_TIME, std::max(open_ms / 1000, 1L)));
    if (!options_.verify_peer) {
      set(curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 0L));
      set(curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 0L));
    }
    if (!options_.ca_file.empty()) set(curl_easy_setopt(h, CURLOPT_CAINFO, options_.ca_file.c_str()));
    // Range is inclusive on both ends (RFC 9110 §14.1.2); libcurl copies it.
    const std::string range = num(begin) + "-" + num(begin + size - 1);
    set(curl_easy_setopt(h, CURLOPT_RANGE, range.c_str()));
    if (!ok) throw tensogram::remote_error(shown_url_ + ": this libcurl does not support a required option");
    return t;
  }

  // Adds the per-request headers (If-Range, Priority) to a tensor transfer.
  void add_request_headers(transfer& t) {
    std::vector<std::string> lines;
    // §10.9: pin the file version of the header. A weak ETag cannot be used
    // (RFC 9110 §13.1.5); the Content-Range total is checked instead.
    if (is_strong_etag(etag_)) {
      lines.push_back("If-Range: " + etag_);
      t.if_range = true;
    }
    lines.push_back("Priority: u=" + std::to_string(t.urgency) + (t.incremental ? ", i" : ""));
    for (const auto& line : lines) {
      curl_slist* next = curl_slist_append(t.headers.get(), line.c_str());
      if (next == nullptr) throw tensogram::remote_error(shown_url_ + ": cannot build the request headers");
      if (!t.headers) t.headers.reset(next);  // curl_slist_append returns the list head
    }
    if (curl_easy_setopt(t.easy.get(), CURLOPT_HTTPHEADER, t.headers.get()) != CURLE_OK) {
      throw tensogram::remote_error(shown_url_ + ": cannot set the request headers");
    }
  }

  // Runs one header request on the caller's thread (open), bounded by the
  // open deadline, which libcurl enforces (CURLOPT_TIMEOUT_MS); returns
  // libcurl's result.
  CURLcode run_blocking(transfer& t, std::chrono::steady_clock::time_point deadline) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0)
      throw tensogram::timeout_error(shown_url_ + ": opening took longer than open_timeout");
    curl_easy_setopt(t.easy.get(), CURLOPT_TIMEOUT_MS, static_cast<long>(left.count()));
    if (t.begin != 0) add_request_headers(t);  // pins the header's version
    if (const CURLMcode mc = curl_multi_add_handle(multi_.get(), t.easy.get()); mc != CURLM_OK) {
      throw tensogram::remote_error(shown_url_ + ": cannot start a request: " + curl_multi_strerror(mc));
    }
    struct detach {
      CURLM* m;
      CURL* e;
      ~detach() { curl_multi_remove_handle(m, e); }
    } guard{multi_.get(), t.easy.get()};
    for (;;) {
      int running = 0;
      CURLMcode mc = curl_multi_perform(multi_.get(), &running);
      if (mc != CURLM_OK) throw tensogram::remote_error(shown_url_ + ": " + curl_multi_strerror(mc));
      int queued = 0;
      while (CURLMsg* msg = curl_multi_info_read(multi_.get(), &queued)) {
        if (msg->msg != CURLMSG_DONE || msg->easy_handle != t.easy.get()) continue;
        curl_easy_getinfo(t.easy.get(), CURLINFO_RESPONSE_CODE, &t.status);
        return msg->data.result;
      }
      {
        const std::lock_guard lock(mutex_);
        if (closing_) throw tensogram::cancelled_error(shown_url_ + ": closed while opening");
      }
      mc = curl_multi_poll(multi_.get(), nullptr, 0, 1000, nullptr);
      if (mc != CURLM_OK) throw tensogram::remote_error(shown_url_ + ": " + curl_multi_strerror(mc));
    }
  }

  // ---- the background thread ------------------------------------------------

  void run() noexcept {
    for (;;) {
      std::vector<command> batch;
      {
        const std::lock_guard lock(mutex_);
        if (closing_) break;
        batch.swap(commands_);
      }
      try {
        for (auto& c : batch) apply(std::move(c));
        launch();
        step();
      } catch (...) {
        lose_connection(std::current_exception());
      }
      if (curl_multi_poll(multi_.get(), nullptr, 0, 1000, nullptr) != CURLM_OK) {
        lose_connection(
            std::make_exception_ptr(tensogram::remote_error(shown_url_ + ": curl_multi_poll failed")));
      }
    }
    // Closing: abort every transfer, no more listener calls (the caller of
    // close fails what is pending itself).
    for (auto& t : active_) curl_multi_remove_handle(multi_.get(), t->easy.get());
    active_.clear();
    waiting_.clear();
  }

  void apply(command c) {
    if (auto* r = std::get_if<transport_request>(&c)) {
      begin_request(std::move(*r));
    } else if (auto* p = std::get_if<priority_command>(&c)) {
      // HTTP/1.1 has no priorities on the wire (§10.9); a request that has
      // not started yet is reordered.
      for (auto& t : waiting_) {
        if (t->id == p->id) {
          t->urgency = p->priority.urgency;
          t->incremental = p->priority.incremental;
        }
      }
    } else if (auto* x = std::get_if<cancel_command>(&c)) {
      cancel_request(x->id);
    }
  }

  void begin_request(transport_request r) {
    const std::uint64_t id = r.id;
    if (dead_) {
      listener_.on_failed(id, dead_);
      return;
    }
    const std::string what = "tensor \"" + r.get.tensor + "\"";
    const byte_range range = r.get.range.value_or(byte_range{0, r.tensor_size});
    if (range.begin > range.end || range.end > r.tensor_size || r.tensor_offset > file_size_ ||
        r.tensor_size > file_size_ - r.tensor_offset) {
      // What a QUIC server answers with MT_BAD_RANGE (§10.3).
      listener_.on_failed(
          id, std::make_exception_ptr(protocol_error(
                  stream_errc::bad_range, what + ": range [" + num(range.begin) + ", " + num(range.end) +
                                              ") of a tensor of " + num(r.tensor_size) + " bytes")));
      return;
    }
    const std::uint64_t size = range.end - range.begin;
    if (r.destination.size() != size) {
      listener_.on_failed(id, std::make_exception_ptr(tensogram::invalid_arg_error(
                                  what + ": destination of " + num(r.destination.size()) + " bytes for " +
                                  num(size) + " requested")));
      return;
    }
    if (size == 0) {
      // bytes=a-b cannot express an empty range: nothing to fetch.
      listener_.on_complete(id);
      return;
    }
    std::exception_ptr failure;
    try {
      auto t = make_transfer(what, r.tensor_offset + range.begin, size, r.destination, file_size_);
      t->file = r.file;
      t->id = id;
      t->urgency = r.get.urgency;
      t->incremental = r.get.incremental;
      t->sequence = next_sequence_++;
      add_request_headers(*t);
      waiting_.push_back(std::move(t));
    } catch (...) {
      failure = std::current_exception();  // this request only (no handle, no memory)
    }
    if (failure) listener_.on_failed(id, failure);
  }

  void cancel_request(std::uint64_t id) {
    const auto matches = [id](const std::unique_ptr<transfer>& t) { return t->id == id; };
    if (auto it = std::find_if(waiting_.begin(), waiting_.end(), matches); it != waiting_.end()) {
      waiting_.erase(it);
      listener_.on_cancelled(id);
      return;
    }
    if (auto it = std::find_if(active_.begin(), active_.end(), matches); it != active_.end()) {
      // Removing the easy handle aborts its transfer (libcurl closes that
      // connection; the others stay alive).
      curl_multi_remove_handle(multi_.get(), (*it)->easy.get());
      active_.erase(it);
      listener_.on_cancelled(id);
    }
    // Otherwise it already ended: nothing follows (transport.hpp).
  }

  // Starts waiting transfers, most urgent first (then in start order), up
  // to `http_parallel` at once.
  void launch() {
    while (active_.size() < parallel_ && !waiting_.empty()) {
      const auto next = std::min_element(waiting_.begin(), waiting_.end(), [](const auto& a, const auto& b) {
        return a->urgency != b->urgency ? a->urgency < b->urgency : a->sequence < b->sequence;
      });
      auto t = std::move(*next);
      waiting_.erase(next);
      if (const CURLMcode mc = curl_multi_add_handle(multi_.get(), t->easy.get()); mc != CURLM_OK) {
        listener_.on_failed(t->id, std::make_exception_ptr(tensogram::remote_error(
                                       shown_url_ + ": cannot start a request: " + curl_multi_strerror(mc))));
        continue;
      }
      active_.push_back(std::move(t));
    }
  }

  // Runs libcurl once, reports progress, then every finished transfer.
  void step() {
    int running = 0;
    if (const CURLMcode mc = curl_multi_perform(multi_.get(), &running); mc != CURLM_OK) {
      throw tensogram::remote_error(shown_url_ + ": curl_multi_perform: " + curl_multi_strerror(mc));
    }
    for (auto& t : active_) {
      if (t->written > t->reported) {
        t->reported = t->written;
        listener_.on_progress(t->id, t->written);
      }
    }
    int queued = 0;
    while (CURLMsg* msg = curl_multi_info_read(multi_.get(), &queued)) {
      if (msg->msg != CURLMSG_DONE) continue;
      CURL* easy = msg->easy_handle;
      const CURLcode rc = msg->data.result;
      const auto it =
          std::find_if(active_.begin(), active_.end(),
                       [easy](const std::unique_ptr<transfer>& t) { return t->easy.get() == easy; });
      if (it == active_.end()) continue;
      auto t = std::move(*it);
      active_.erase(it);
      curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &t->status);
      curl_multi_remove_handle(multi_.get(), easy);
      if (auto failure = outcome(*t, rc, shown_url_, etag_)) {
        listener_.on_failed(t->id, failure);
      } else {
        listener_.on_complete(t->id);
      }
      launch();  // refill the freed slot at once
    }
  }

  // The multi handle failed: every request not yet finished fails with
  // `error` (on_connection_lost), later ones too.
  void lose_connection(std::exception_ptr error) noexcept {
    for (auto& t : active_) curl_multi_remove_handle(multi_.get(), t->easy.get());
    active_.clear();
    waiting_.clear();
    const bool first = !dead_;
    dead_ = error;
    if (first) {
      try {
        listener_.on_connection_lost(error);
      } catch (...) {
        // The listener must not throw; nothing left to tell.
      }
    }
  }

  const std::string url_;
  const std::string shown_url_;
  const client_options options_;
  transport_listener& listener_;
  const std::size_t parallel_;

  multi_ptr multi_;  // declared before the transfers: cleaned up after them
  std::thread thread_;

  // Set by open (before the thread starts), then read-only.
  std::string etag_;
  std::uint64_t file_size_ = 0;

  // Owned by the background thread.
  std::vector<std::unique_ptr<transfer>> waiting_;
  std::vector<std::unique_ptr<transfer>> active_;
  std::uint64_t next_sequence_ = 0;
  std::exception_ptr dead_;

  std::mutex join_mutex_;  // one close joins the thread
  std::mutex mutex_;       // guards the members below
  std::thread::id worker_id_;
  std::vector<command> commands_;
  bool opened_ = false;
  bool closing_ = false;
};

}  // namespace

std::unique_ptr<transport> make_http_transport(const remote_url& url, const client_options& options,
                                               transport_listener& listener) {
  if (url.kind != remote_url::scheme::http && url.kind != remote_url::scheme::https) {
    throw tensogram::invalid_arg_error("not an http(s) URL: " + redact_url(url.text));
  }
  return std::make_unique<http_transport>(url, options, listener);
}

}  // namespace metatensor::streaming::detail
