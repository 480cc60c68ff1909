// HTTP(S) byte source over libcurl range requests (spec 04 Part E.3: remote
// access needs only HEAD for the size and Range GETs for the bytes; spec 01
// §16 scans with one forward and one backward probe per round, which this
// source serves as one concurrent batch).
//
// Threading: a source may be used from many threads at once. libcurl handles
// must not be used by two threads at the same time, so each `read` checks a
// `session` (one multi handle and its easy handles) out of a small pool and
// returns it afterwards. A session keeps its connections alive between calls
// (the connection cache lives in the multi handle), so a scan's later rounds
// reuse the TCP/TLS connections of its first: one round trip per round, not
// a handshake each time.
#include <curl/curl.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "client_options.hpp"
#include "http_support.hpp"
#include "tensogram/core/buffer.hpp"
#include "tensogram/core/error.hpp"
#include "tensogram/io/byte_source.hpp"

namespace tensogram::io {

namespace {

// libcurl set-up, handle owners and header parsing shared with metatensor
// streaming's HTTP transport (http_support.hpp).
using detail::easy_ptr;
using detail::ensure_curl_initialised;
using detail::iequals_prefix;
using detail::multi_ptr;
using detail::parse_content_range;
using detail::redact_url;
using detail::slist_ptr;
using detail::trim;

// At most this many transfers of one `read` run at once: a batch of
// thousands of ranges must not open thousands of connections. Scans and
// layout reads use 1–2 ranges per call, far below it.
constexpr std::size_t max_parallel_transfers = 16;
// Idle sessions kept for reuse (about the number of threads that read one
// source at the same time); extra sessions are closed when returned.
constexpr std::size_t max_idle_sessions = 16;

// "[offset, offset + length)" for messages.
std::string range_text(const byte_range& r) {
  return "bytes [" + std::to_string(r.offset) + ", " + std::to_string(r.offset + r.length) + ")";
}

// The state of one transfer; lives in a session slot while its easy handle is
// attached to the multi handle, so libcurl's callbacks can point at it.
struct transfer {
  CURL* easy = nullptr;
  bool attached = false;
  bool head = false;
  bool range_probe = false;  // GET bytes=0-0 standing in for HEAD
  std::size_t index = 0;     // position in the caller's range list
  byte_range range;
  buffer out;
  std::byte* dst = nullptr;
  long status = 0;
  std::uint64_t body_bytes = 0;  // bytes of the response body seen
  std::uint64_t copied = 0;      // bytes of the requested range stored
  bool overflow = false;         // a 206 body longer than requested
  bool slice_complete = false;   // a 200 body cut off once we had what we need
  std::string content_range_value;
  std::array<char, CURL_ERROR_SIZE> errbuf{};

  void reset() {
    head = false;
    range_probe = false;
    index = 0;
    range = {};
    out = buffer();
    dst = nullptr;
    status = 0;
    body_bytes = 0;
    copied = 0;
    overflow = false;
    slice_complete = false;
    content_range_value.clear();
    errbuf.fill('\0');
  }
};

std::size_t write_callback(char* ptr, std::size_t size, std::size_t nmemb, void* user) noexcept {
  auto& t = *static_cast<transfer*>(user);
  const std::size_t n = size * nmemb;
  if (t.status == 0) curl_easy_getinfo(t.easy, CURLINFO_RESPONSE_CODE, &t.status);
  if (t.range_probe && t.status == 200) {
    // A size probe answered with the whole object: its Content-Length is
    // all we need, so stop the download here.
    t.slice_complete = true;
    return 0;
  }
  if (t.head || t.range_probe) {
    t.body_bytes += n;
    return n;
  }
  if (t.status == 206) {
    if (t.body_bytes + n > t.range.length) {
      t.overflow = true;
      return 0;  // aborts the transfer; reported as a server fault
    }
    std::memcpy(t.dst + t.body_bytes, ptr, n);
    t.body_bytes += n;
    t.copied = t.body_bytes;
    return n;
  }
  if (t.status == 200) {
    // The server ignored the Range header and sends the whole object: keep
    // the requested slice of it and stop downloading as soon as it is
    // complete (a correct but slow fallback; never the wrong bytes).
    const std::uint64_t chunk_begin = t.body_bytes;
    const std::uint64_t chunk_end = chunk_begin + n;
    const std::uint64_t want_begin = t.range.offset;
    const std::uint64_t want_end = t.range.offset + t.range.length;
    const std::uint64_t from = std::max(chunk_begin, want_begin);
    const std::uint64_t to = std::min(chunk_end, want_end);
    if (from < to) {
      std::memcpy(t.dst + (from - want_begin), ptr + (from - chunk_begin),
                  static_cast<std::size_t>(to - from));
      t.copied += to - from;
    }
    t.body_bytes = chunk_end;
    if (t.copied == t.range.length) {
      t.slice_complete = true;
      return 0;
    }
    return n;
  }
  // An error page: discard it (reading it keeps the connection reusable).
  t.body_bytes += n;
  return n;
}

std::size_t header_callback(char* ptr, std::size_t size, std::size_t nmemb, void* user) noexcept {
  auto& t = *static_cast<transfer*>(user);
  const std::size_t n = size * nmemb;
  const std::string_view line(ptr, n);
  // A new status line starts a new response (redirects, 100 Continue):
  // forget the headers of the previous one.
  if (iequals_prefix(line, "HTTP/")) {
    t.content_range_value.clear();
  } else if (iequals_prefix(line, "content-range:")) {
    try {
      t.content_range_value = std::string(trim(line.substr(14)));
    } catch (...) {
      return 0;  // out of memory: abort the transfer
    }
  }
  return n;
}

// One multi handle with its easy handles; used by one thread at a time.
struct session {
  multi_ptr multi;
  std::vector<easy_ptr> easies;
  std::vector<transfer> slots;  // parallel to `easies`; never resized while attached

  // Detaches every transfer still running (after an error): removing an easy
  // handle aborts its transfer (libcurl closes that connection).
  void detach_all() noexcept {
    for (auto& t : slots) {
      if (t.attached) {
        curl_multi_remove_handle(multi.get(), t.easy);
        t.attached = false;
      }
    }
  }
};

class http_source final : public byte_source {
 public:
  http_source(std::string url, remote_options options)
      : url_(std::move(url)), shown_url_(redact_url(url_)), options_(std::move(options)) {
    ensure_curl_initialised();
    for (const auto& h : options_.headers) {
      curl_slist* next = curl_slist_append(headers_.get(), h.c_str());
      if (next == nullptr) throw remote_error(shown_url_ + ": cannot build the request headers");
      if (!headers_) headers_.reset(next);  // curl_slist_append returns the list head
    }
  }

  ~http_source() override = default;

  std::uint64_t size() override {
    if (size_known_.load(std::memory_order_acquire)) return size_;
    const std::lock_guard lock(size_mutex_);
    if (size_known_.load(std::memory_order_relaxed)) return size_;
    size_ = probe_size();
    size_known_.store(true, std::memory_order_release);
    return size_;
  }

  std::vector<buffer> read(std::span<const byte_range> ranges) override {
    std::vector<buffer> out(ranges.size());
    std::vector<std::size_t> pending;
    pending.reserve(ranges.size());
    for (std::size_t i = 0; i < ranges.size(); ++i) {
      const auto& r = ranges[i];
      if (r.length > std::numeric_limits<std::uint64_t>::max() - r.offset ||
          r.length > std::numeric_limits<std::size_t>::max()) {
        throw remote_error(shown_url_ + ": the range at offset " + std::to_string(r.offset) + " of length " +
                           std::to_string(r.length) + " is not a valid range");
      }
      // Ranges past a known end fail without a request; before the size is
      // known the server's 416 or short reply says the same.
      if (size_known_.load(std::memory_order_acquire) && r.offset + r.length > size_) {
        throw remote_error(shown_url_ + ": " + range_text(r) + " lies beyond the end of the object (size " +
                           std::to_string(size_) + ")");
      }
      // A zero-length range is served without a request: HTTP cannot even
      // express it (bytes=a-b is inclusive).
      if (r.length != 0) pending.push_back(i);
    }
    if (pending.empty()) return out;

    auto s = checkout();
    std::uint64_t bytes = 0;
    try {
      run(*s, ranges, pending, out);
    } catch (...) {
      // The batch counts as sent (some of it was). The session may hold
      // half-read connections, so it is closed rather than reused.
      count(pending.size(), 1, 0);
      throw;
    }
    for (const auto i : pending) bytes += ranges[i].length;
    count(pending.size(), 1, bytes);
    checkin(std::move(s));
    return out;
  }

  std::string describe() const override { return shown_url_; }

  bool is_remote() const noexcept override { return true; }

 private:
  // One HEAD request (spec 04 E.3: "Needs HEAD (size) and Range GETs").
  // Servers that refuse HEAD for the object (405, 501; some pre-signed URLs
  // are signed for GET only) are asked for its first byte instead and the
  // size is read from the Content-Range reply.
  std::uint64_t probe_size() {
    auto s = checkout();
    std::uint64_t size = 0;
    try {
      size = run_probe(*s, false);
    } catch (const head_refused&) {
      count(1, 1, 0);
      try {
        size = run_probe(*s, true);
      } catch (...) {
        count(1, 1, 0);
        throw;
      }
    } catch (...) {
      count(1, 1, 0);
      throw;
    }
    count(1, 1, 0);
    checkin(std::move(s));
    return size;
  }

  struct head_refused {};

  std::uint64_t run_probe(session& s, bool use_range_get) {
    ensure_slots(s, 1);
    auto& t = s.slots[0];
    t.reset();
    t.head = !use_range_get;
    t.range_probe = use_range_get;
    t.range = {0, 1};
    start(s, t);
    wait_all(s, [&](transfer& done, CURLcode rc) { check_curl(done, rc); });
    const char* method = use_range_get ? "GET bytes=0-0" : "HEAD";
    if (!use_range_get) {
      if (t.status == 405 || t.status == 501) throw head_refused{};
      if (t.status < 200 || t.status > 299) {
        throw remote_error(shown_url_ + ": " + method + " failed: HTTP " + std::to_string(t.status));
      }
      curl_off_t length = -1;
      curl_easy_getinfo(t.easy, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &length);
      if (length < 0) {
        throw remote_error(shown_url_ + ": HEAD reply has no Content-Length: cannot size the object");
      }
      return static_cast<std::uint64_t>(length);
    }
    const auto cr = parse_content_range(t.content_range_value);
    if (t.status == 416 && cr.total) return *cr.total;  // an empty object
    if (t.status == 206 && cr.total) return *cr.total;
    if (t.status == 200) {
      curl_off_t length = -1;
      curl_easy_getinfo(t.easy, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &length);
      if (length >= 0) return static_cast<std::uint64_t>(length);
    }
    throw remote_error(shown_url_ + ": " + method + " failed to give the object size: HTTP " +
                       std::to_string(t.status));
  }

  // Serves `ranges[pending[k]]` into `out`, at most max_parallel_transfers at
  // a time, refilling slots as transfers finish.
  void run(session& s, std::span<const byte_range> ranges, std::span<const std::size_t> pending,
           std::vector<buffer>& out) {
    ensure_slots(s, std::min(pending.size(), max_parallel_transfers));
    std::size_t next = 0;
    auto launch = [&](transfer& t) {
      const std::size_t i = pending[next++];
      t.reset();
      t.index = i;
      t.range = ranges[i];
      t.out = buffer::allocate(static_cast<std::size_t>(t.range.length));
      t.dst = t.out.mutable_data();
      start(s, t);
    };
    for (std::size_t k = 0; k < s.slots.size() && next < pending.size(); ++k) launch(s.slots[k]);
    wait_all(s, [&](transfer& t, CURLcode rc) {
      finish_range(t, rc);
      out[t.index] = std::move(t.out);
      t.out = buffer();
      if (next < pending.size()) launch(t);
    });
  }

  // Runs the attached transfers until none is left, calling `done(t, rc)`
  // for each as it completes (which may attach new ones). Any exception
  // detaches the rest (aborting them) before it propagates.
  template <typename F>
  void wait_all(session& s, F&& done) {
    struct detach_guard {
      session& s;
      ~detach_guard() { s.detach_all(); }
    } guard{s};
    for (;;) {
      int running = 0;
      CURLMcode mc = curl_multi_perform(s.multi.get(), &running);
      if (mc != CURLM_OK) throw remote_error(shown_url_ + ": curl_multi_perform: " + curl_multi_strerror(mc));
      int queued = 0;
      while (CURLMsg* msg = curl_multi_info_read(s.multi.get(), &queued)) {
        if (msg->msg != CURLMSG_DONE) continue;
        CURL* easy = msg->easy_handle;
        const CURLcode rc = msg->data.result;
        transfer* t = nullptr;
        curl_easy_getinfo(easy, CURLINFO_PRIVATE, &t);
        // The final status (a HEAD or an empty body never reaches the write
        // callback, which otherwise records it first).
        curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &t->status);
        curl_multi_remove_handle(s.multi.get(), easy);
        t->attached = false;
        done(*t, rc);
      }
      const bool any_attached =
          std::any_of(s.slots.begin(), s.slots.end(), [](const transfer& t) { return t.attached; });
      if (!any_attached) return;
      // Timeouts are enforced per transfer by libcurl (CURLOPT_TIMEOUT_MS,
      // CURLOPT_CONNECTTIMEOUT_MS), so this loop always ends; the poll
      // timeout only bounds how long one wait may sleep.
      mc = curl_multi_poll(s.multi.get(), nullptr, 0, 1000, nullptr);
      if (mc != CURLM_OK) throw remote_error(shown_url_ + ": curl_multi_poll: " + curl_multi_strerror(mc));
    }
  }

  void start(session& s, transfer& t) {
    CURL* e = t.easy;
    curl_easy_setopt(e, CURLOPT_PRIVATE, static_cast<void*>(&t));
    curl_easy_setopt(e, CURLOPT_WRITEDATA, static_cast<void*>(&t));
    curl_easy_setopt(e, CURLOPT_HEADERDATA, static_cast<void*>(&t));
    curl_easy_setopt(e, CURLOPT_ERRORBUFFER, t.errbuf.data());
    if (t.head) {
      curl_easy_setopt(e, CURLOPT_NOBODY, 1L);
      curl_easy_setopt(e, CURLOPT_RANGE, static_cast<const char*>(nullptr));
    } else {
      // HTTPGET also clears NOBODY left over from a HEAD on this handle.
      curl_easy_setopt(e, CURLOPT_HTTPGET, 1L);
      // Range is inclusive on both ends (RFC 9110 §14.1.2); libcurl copies
      // the string.
      const std::string spec =
          std::to_string(t.range.offset) + "-" + std::to_string(t.range.offset + t.range.length - 1);
      curl_easy_setopt(e, CURLOPT_RANGE, spec.c_str());
    }
    const CURLMcode mc = curl_multi_add_handle(s.multi.get(), e);
    if (mc != CURLM_OK) {
      throw remote_error(shown_url_ + ": cannot start a request: " + curl_multi_strerror(mc));
    }
    t.attached = true;
  }

  // Fails with the transfer's libcurl error, if any.
  void check_curl(const transfer& t, CURLcode rc) const {
    if (rc == CURLE_OK) return;
    if (rc == CURLE_WRITE_ERROR && t.slice_complete) return;  // we cut a 200 body short
    std::string what = t.head ? std::string("HEAD") : "GET " + range_text(t.range);
    if (t.overflow) {
      throw remote_error(shown_url_ + ": " + what + ": the server sent more bytes than requested (HTTP " +
                         std::to_string(t.status) + ")");
    }
    std::string msg = shown_url_ + ": " + what + ": " + curl_easy_strerror(rc);
    if (t.errbuf[0] != '\0') msg += std::string(" (") + t.errbuf.data() + ")";
    throw remote_error(msg);
  }

  // Checks that a range reply carries exactly the requested bytes.
  void finish_range(transfer& t, CURLcode rc) {
    check_curl(t, rc);
    const long status = t.status;
    const std::string where = shown_url_ + ": GET " + range_text(t.range);
    const auto cr = parse_content_range(t.content_range_value);
    const auto size_note = [&]() -> std::string {
      return cr.total ? " (size " + std::to_string(*cr.total) + ")" : std::string();
    };
    if (status == 206) {
      if (cr.first && *cr.first != t.range.offset) {
        throw remote_error(where + ": the server replied with a different range (Content-Range: " +
                           t.content_range_value + ")");
      }
      if (t.copied != t.range.length) {
        // Servers shorten a range that runs past the end (RFC 9110 §14.1.2).
        throw remote_error(where + " lies beyond the end of the object" + size_note() + ": got " +
                           std::to_string(t.copied) + " of " + std::to_string(t.range.length) + " bytes");
      }
      return;
    }
    if (status == 200) {
      if (t.copied != t.range.length) {
        throw remote_error(where + " lies beyond the end of the object (size " +
                           std::to_string(t.body_bytes) + ", server ignored the Range header)");
      }
      return;
    }
    if (status == 416) {
      throw remote_error(where + " lies beyond the end of the object" + size_note() + ": HTTP 416");
    }
    throw remote_error(where + ": HTTP " + std::to_string(status));
  }

  // Makes sure the session has at least `n` easy handles (and slots).
  void ensure_slots(session& s, std::size_t n) {
    if (s.easies.size() >= n) return;
    // Slots are only grown while no transfer is attached (between calls),
    // so resizing the vector never moves a transfer libcurl points at.
    s.slots.resize(n);
    while (s.easies.size() < n) s.easies.push_back(make_easy());
    for (std::size_t k = 0; k < n; ++k) s.slots[k].easy = s.easies[k].get();
  }

  // An easy handle configured with everything that does not change per
  // request.
  easy_ptr make_easy() {
    easy_ptr e(curl_easy_init());
    if (!e) throw remote_error(shown_url_ + ": cannot create a libcurl handle");
    CURL* h = e.get();
    bool ok = true;
    const auto set = [&](CURLcode rc) { ok = ok && rc == CURLE_OK; };
    set(curl_easy_setopt(h, CURLOPT_URL, url_.c_str()));
    ok = detail::set_range_request_options(h, "tensogram-cpp") && ok;
    set(curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, &write_callback));
    set(curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, &header_callback));
    set(curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, options_.timeout_ms));
    set(curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, options_.connect_timeout_ms));
    if (!options_.verify_tls) {
      set(curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 0L));
      set(curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 0L));
    }
    if (headers_) set(curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers_.get()));
    if (!ok) throw remote_error(shown_url_ + ": this libcurl does not support a required option");
    return e;
  }

  std::unique_ptr<session> checkout() {
    {
      const std::lock_guard lock(pool_mutex_);
      if (!idle_.empty()) {
        auto s = std::move(idle_.back());
        idle_.pop_back();
        return s;
      }
    }
    auto s = std::make_unique<session>();
    s->multi.reset(curl_multi_init());
    if (!s->multi) throw remote_error(shown_url_ + ": cannot create a libcurl multi handle");
    return s;
  }

  void checkin(std::unique_ptr<session> s) noexcept {
    const std::lock_guard lock(pool_mutex_);
    if (idle_.size() < max_idle_sessions) {
      try {
        idle_.push_back(std::move(s));
      } catch (...) {
        // Out of memory: the session is simply closed.
      }
    }
  }

  const std::string url_;
  const std::string shown_url_;
  const remote_options options_;
  slist_ptr headers_;  // shared read-only by every easy handle

  std::mutex size_mutex_;
  std::atomic<bool> size_known_{false};
  std::uint64_t size_ = 0;  // written once under size_mutex_, then read-only

  std::mutex pool_mutex_;
  std::vector<std::unique_ptr<session>> idle_;
};

}  // namespace

bool is_remote_url(std::string_view source) noexcept {
  return iequals_prefix(source, "http://") || iequals_prefix(source, "https://");
}

void set_remote_option(remote_options& options, std::string_view key, std::string_view value) {
  const std::string k(key);
  const auto integer = [&]() -> long {
    long v = 0;
    const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
    if (ec != std::errc() || end != value.data() + value.size() || v < 0) {
      throw invalid_arg_error("storage option '" + k + "' must be a non-negative integer, not '" +
                              std::string(value) + "'");
    }
    return v;
  };
  if (key == "timeout_ms") {
    options.timeout_ms = integer();
  } else if (key == "connect_timeout_ms") {
    options.connect_timeout_ms = integer();
  } else if (key == "verify_tls") {
    if (value == "true" || value == "1") {
      options.verify_tls = true;
    } else if (value == "false" || value == "0") {
      options.verify_tls = false;
    } else {
      throw invalid_arg_error("storage option 'verify_tls' must be true, false, 1 or 0, not '" +
                              std::string(value) + "'");
    }
  } else if (key == "header") {
    if (value.find(':') == std::string_view::npos) {
      throw invalid_arg_error("storage option 'header' must be \"Name: value\"");
    }
    options.headers.emplace_back(value);
  } else if (key.starts_with("header.") && key.size() > 7) {
    options.headers.push_back(std::string(key.substr(7)) + ": " + std::string(value));
  } else if (!detail::set_client_option(options, key, value)) {
    throw invalid_arg_error("unsupported storage option '" + k +
                            "' (this build reads http(s) sources; options: timeout_ms, connect_timeout_ms, "
                            "verify_tls, header, header.<Name>)");
  }
}

std::unique_ptr<byte_source> open_http_source(std::string url, remote_options options) {
  if (!is_remote_url(url)) {
    throw invalid_arg_error("not an http(s) URL: " + redact_url(url));
  }
  return std::make_unique<http_source>(std::move(url), std::move(options));
}

}  // namespace tensogram::io
