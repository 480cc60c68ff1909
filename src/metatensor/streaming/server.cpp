// The metatensor streaming server (spec 06 §10): the protocol of one
// connection on top of the QUIC engine, and the directory it serves.
//
// Per connection: stream 0 is the control stream (OPEN → OPENED, HEADER;
// later PRIORITY_UPDATE), every other client bidirectional stream carries one
// GET and gets RESPONSE, DATA, FIN — or ERROR, FIN (§10.4).  What to put in
// the next packet is the §10.5 decision: control bytes first, then the
// `send_scheduler`'s pick among the tensor streams.
//
// The file is mapped once, when OPEN names it, and every tensor stream of the
// connection is served from that mapping (§10.2 "the same version of the
// file"); HEADER and DATA payloads go to the engine straight from the
// mapping, so what a connection costs does not grow with what it asks for.
// Answers accepted but not yet handed to QUIC are counted per connection
// and bounded (`max_queued_bytes`): GETs beyond the bound wait.
#include "metatensor/stream_server.hpp"

#include <sys/random.h>
#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "metatensor/safetensors.hpp"
#include "src/metatensor/streaming/protocol/stream_protocol.hpp"
#include "src/metatensor/streaming/protocol/stream_scheduler.hpp"
#include "src/metatensor/streaming/quic/quic_engine.hpp"
#include "src/metatensor/streaming/quic/send_queue.hpp"
#include "tensogram/core/atomic_file.hpp"
#include "tensogram/core/buffer.hpp"
#include "tensogram/core/error.hpp"
#include "tensogram/core/hex.hpp"

namespace metatensor::streaming {

namespace {

namespace fs = std::filesystem;

constexpr std::int64_t control_stream_id = 0;

using detail::send_queue;

// A GET is a tensor name and a few numbers: a larger frame is an attempt to
// make the server buffer (§10.3 bounds control JSON at 1 MiB; this is our
// implementation limit for tensor streams).
constexpr std::uint64_t max_get_frame = 64 * 1024;
// What clients may send the server (OPEN, GET, PRIORITY_UPDATE): the
// server's receive windows stay small, which bounds what a client can make
// the QUIC stack buffer (out-of-order data) per connection.
constexpr std::uint64_t server_stream_window = 256 * 1024;
constexpr std::uint64_t server_connection_window = 1024 * 1024;

// Counters shared by the connections of one server (written on the loop
// thread, read by server::stats).
struct app_counters {
  std::atomic<std::uint64_t> queued_bytes{0};
  std::atomic<std::uint64_t> queued_bytes_peak{0};
  std::atomic<std::uint64_t> gets_deferred{0};
};

// Client-initiated bidirectional streams have ids ≡ 0 (mod 4) (RFC 9000 §2.1).
bool is_client_bidi(std::int64_t id) noexcept {
  return id >= 0 && id % 4 == 0;
}

// The file named by OPEN's `resource`, if it lies inside `root` and is a
// regular file.  Anything else (absolute paths, "..", symbolic links leading
// out of the root, directories) is "not found": the server does not say which
// files exist outside what it serves.
std::optional<fs::path> resolve_resource(const fs::path& root, const std::string& resource) {
  if (resource.empty() || resource.find('\0') != std::string::npos) return std::nullopt;
  const fs::path rel(resource);
  if (rel.is_absolute() || rel.has_root_name()) return std::nullopt;
  for (const auto& part : rel) {
    if (part == "..") return std::nullopt;
  }
  std::error_code ec;
  const fs::path full = fs::weakly_canonical(root / rel, ec);
  if (ec) return std::nullopt;
  // `root` is canonical (server constructor): compare component-wise.
  auto r = root.begin();
  auto f = full.begin();
  for (; r != root.end(); ++r, ++f) {
    if (f == full.end() || *r != *f) return std::nullopt;
  }
  if (!fs::is_regular_file(full, ec) || ec) return std::nullopt;
  return full;
}

// A weak validator of the file version (§10.3 `etag`): inode, size and
// modification time, which change when a writer replaces the file.
std::string etag_of(const fs::path& p) {
  struct stat st {};
  if (::stat(p.c_str(), &st) != 0) return {};
  std::string tag = "\"";
  for (const std::uint64_t part :
       {static_cast<std::uint64_t>(st.st_ino), static_cast<std::uint64_t>(st.st_size),
        static_cast<std::uint64_t>(st.st_mtim.tv_sec), static_cast<std::uint64_t>(st.st_mtim.tv_nsec)}) {
    if (tag.size() > 1) tag += '-';
    tag += tensogram::hex_digits(part);
  }
  tag += '"';
  return tag;
}

struct served_file {
  tensogram::buffer image;  // the mapping every stream of the connection reads
  safetensors::file base;
  std::string etag;
};

struct tensor_stream {
  frame_reader reader{max_get_frame};
  bool got_get = false;
  bool stopped = false;  // STOP_SENDING or reset: nothing more is sent
  send_queue out;
  bool blocked = false;
  std::uint64_t queued = 0;  // bytes of `out` counted in the connection's queue
  std::uint8_t urgency = 7;  // the GET's (§10.3)
  get_payload pending_get;   // the GET, while deferred
};

class server_connection final : public quic::connection_handler {
 public:
  server_connection(const fs::path& root, const server_options& options, app_counters& counters)
      : root_(root), options_(options), counters_(counters) {}
  ~server_connection() override { counters_.queued_bytes.fetch_sub(queued_, std::memory_order_relaxed); }
  server_connection(const server_connection&) = delete;
  server_connection& operator=(const server_connection&) = delete;

  void on_handshake_completed(quic::connection& c) override { log(c, "connected"); }

  void on_stream_opened(quic::connection& c, std::int64_t id) override {
    // §10.2: only client bidirectional streams; the engine's transport
    // parameters already refuse unidirectional ones.
    if (!is_client_bidi(id)) return fail_connection(c, stream_errc::protocol_error, "unexpected stream kind");
    if (id != control_stream_id) streams_.try_emplace(id);
  }

  void on_stream_data(quic::connection& c, std::int64_t id, std::span<const std::byte> data,
                      bool fin) override {
    try {
      if (id == control_stream_id) {
        on_control(c, data, fin);
      } else {
        on_tensor_stream(c, id, data, fin);
      }
    } catch (const protocol_error& e) {
      fail_connection(c, e.code(), e.what());
    }
  }

  void on_stream_reset(quic::connection& c, std::int64_t id, std::uint64_t app_error) override {
    if (id == control_stream_id) {
      return fail_connection(c, stream_errc::protocol_error, "control stream reset by the client");
    }
    // The client gave up on a request before its GET was complete: answer
    // in kind (§10.4 cancellation).
    if (auto it = streams_.find(id); it != streams_.end() && !it->second.stopped)
      stop(c, id, it->second, app_error);
  }

  void on_stop_sending(quic::connection& c, std::int64_t id, std::uint64_t app_error) override {
    if (id == control_stream_id) {
      return fail_connection(c, stream_errc::protocol_error, "STOP_SENDING on the control stream");
    }
    // §10.4: "the server answers with RESET_STREAM with the same code".
    if (auto it = streams_.find(id); it != streams_.end() && !it->second.stopped) {
      log(c,
          "stream " + std::to_string(id) + " cancelled by the client (" + stream_errc_name(app_error) + ")");
      stop(c, id, it->second, app_error);
    }
  }

  void on_stream_closed(quic::connection& c, std::int64_t id, std::uint64_t) override {
    if (id == control_stream_id) return;
    if (auto it = streams_.find(id); it != streams_.end()) {
      recount(it->second, true);
      std::erase(deferred_, id);
    }
    streams_.erase(id);
    admit_deferred(c);
    fin_pending_.erase(id);
    scheduler_.finish(static_cast<std::uint64_t>(id));
  }

  std::optional<quic::outgoing> next_outgoing(quic::connection&) override {
    // §10.5 rule 1: control-stream frames first.
    if (!control_.done() && control_.remaining() > 0 && !control_blocked_) {
      return control_.next(control_stream_id, control_.remaining());
    }
    // A stream whose bytes all went out without its FIN (the engine may
    // split the two): the FIN alone, outside the scheduler's byte counts.
    while (!fin_pending_.empty()) {
      const std::int64_t id = *fin_pending_.begin();
      if (auto it = streams_.find(id);
          it != streams_.end() && !it->second.stopped && !it->second.out.fin_sent) {
        return quic::outgoing{id, {}, true};
      }
      fin_pending_.erase(fin_pending_.begin());
    }
    if (const auto pick = scheduler_.next()) {
      const auto id = static_cast<std::int64_t>(pick->stream_id);
      auto it = streams_.find(id);
      if (it == streams_.end()) {
        scheduler_.finish(pick->stream_id);
        return std::nullopt;
      }
      return it->second.out.next(id, pick->max_bytes);
    }
    return std::nullopt;
  }

  void on_sent(quic::connection& c, std::int64_t id, std::size_t bytes, bool fin_sent) override {
    if (id == control_stream_id) {
      control_.consume(bytes, fin_sent);
      if (fin_sent && closing_after_error_) c.close(closing_code_, closing_reason_);
      return;
    }
    auto it = streams_.find(id);
    if (it == streams_.end()) return;
    tensor_stream& s = it->second;
    s.out.consume(bytes, fin_sent);
    recount(s, false);
    admit_deferred(c);
    const auto sid = static_cast<std::uint64_t>(id);
    if (fin_sent) fin_pending_.erase(id);
    if (s.out.done()) {
      scheduler_.finish(sid);
    } else if (s.out.remaining() == 0) {
      scheduler_.finish(sid);
      fin_pending_.insert(id);
    } else {
      scheduler_.sent(sid, bytes);
      if (scheduler_.is_open(sid) && !s.blocked) scheduler_.set_ready(sid, s.out.remaining());
    }
  }

  void on_stream_blocked(quic::connection&, std::int64_t id) override {
    if (id == control_stream_id) {
      control_blocked_ = true;
      return;
    }
    if (auto it = streams_.find(id); it != streams_.end()) {
      it->second.blocked = true;
      scheduler_.set_ready(static_cast<std::uint64_t>(id), 0);
    }
  }

  void on_stream_unblocked(quic::connection& c, std::int64_t id) override {
    if (id == control_stream_id) {
      control_blocked_ = false;
    } else if (auto it = streams_.find(id); it != streams_.end()) {
      it->second.blocked = false;
      scheduler_.set_ready(static_cast<std::uint64_t>(id), it->second.out.remaining());
    }
    c.want_write();
  }

  void on_closed(quic::connection& c, std::uint64_t app_error, const std::string& reason,
                 bool by_peer) override {
    log(c, std::string("closed") + (by_peer ? " by the client" : "") + ": " + stream_errc_name(app_error) +
               (reason.empty() ? "" : " " + reason));
  }

 private:
  void log(quic::connection& c, const std::string& what) const {
    if (options_.log) options_.log(c.peer() + ": " + what);
  }

  // Brings the connection's queue count up to date with `s` (`gone`: the
  // stream is closing).
  void recount(tensor_stream& s, bool gone) {
    const std::uint64_t now = gone || s.stopped ? 0 : s.out.remaining();
    if (now >= s.queued) {
      counters_.queued_bytes.fetch_add(now - s.queued, std::memory_order_relaxed);
      queued_ += now - s.queued;
    } else {
      counters_.queued_bytes.fetch_sub(s.queued - now, std::memory_order_relaxed);
      queued_ -= s.queued - now;
    }
    s.queued = now;
    std::uint64_t peak = counters_.queued_bytes_peak.load(std::memory_order_relaxed);
    while (queued_ > peak &&
           !counters_.queued_bytes_peak.compare_exchange_weak(peak, queued_, std::memory_order_relaxed)) {
    }
  }

  // The bytes an answer to `get` queues (0 for an ERROR answer).
  [[nodiscard]] std::uint64_t answer_size(const get_payload& get) const {
    const safetensors::tensor_view* t = file_->base.find(get.tensor);
    if (t == nullptr) return 0;
    const std::uint64_t size = t->end() - t->begin();
    const byte_range range = get.range.value_or(byte_range{0, size});
    return range.begin <= range.end && range.end <= size ? range.end - range.begin : 0;
  }

  // Whether an answer to `get` may be queued now: when it fits under
  // max_queued_bytes, when nothing is queued (one answer always goes), or
  // when it is more urgent than every queued answer, so that the cap never
  // makes an urgent request wait behind less urgent ones (§10.5).  The queue
  // is thus bounded by max(max_queued_bytes, one answer) plus one answer per
  // urgency level.
  [[nodiscard]] bool admissible(const get_payload& get) const {
    if (queued_ == 0 || queued_ + answer_size(get) <= options_.max_queued_bytes) return true;
    for (const auto& [id, s] : streams_) {
      if (s.queued > 0 && s.urgency <= get.urgency) return false;
    }
    return true;
  }

  // Answers the waiting GETs that may be queued now, most urgent first and
  // then in arrival order.
  void admit_deferred(quic::connection& c) {
    for (;;) {
      std::erase_if(deferred_, [&](std::int64_t id) {
        auto it = streams_.find(id);
        return it == streams_.end() || it->second.stopped;
      });
      if (deferred_.empty()) return;
      auto best = std::min_element(deferred_.begin(), deferred_.end(), [&](std::int64_t a, std::int64_t b) {
        return streams_.at(a).pending_get.urgency < streams_.at(b).pending_get.urgency;
      });
      auto& s = streams_.at(*best);
      if (!admissible(s.pending_get)) return;
      const std::int64_t id = *best;
      deferred_.erase(best);
      answer_get(c, id, s, s.pending_get);
    }
  }

  // A connection error (§10.3): ERROR on the control stream when it is
  // still usable, then CONNECTION_CLOSE with the code.
  void fail_connection(quic::connection& c, stream_errc code, std::string_view message) {
    log(c, "error " + stream_errc_name(static_cast<std::uint64_t>(code)) + ": " + std::string(message));
    c.close(static_cast<std::uint64_t>(code), message.substr(0, 1000));
  }

  void queue_control(quic::connection& c, std::vector<std::byte> bytes, bool fin = false) {
    control_.owned.push_back(std::move(bytes));
    if (fin) control_.fin_queued = true;
    c.want_write();
  }

  // §10.4 control step 2, failure branch: ERROR then close the connection
  // once the frame is out (the CONNECTION_CLOSE carries the same code, so a
  // client sees it either way).
  void refuse_open(quic::connection& c, stream_errc code, const std::string& message) {
    log(c, "refused: " + message);
    closing_after_error_ = true;
    closing_code_ = static_cast<std::uint64_t>(code);
    closing_reason_ = message.substr(0, 1000);
    queue_control(c, encode(error_payload{static_cast<std::uint64_t>(code), message}), true);
  }

  void on_control(quic::connection& c, std::span<const std::byte> data, bool fin) {
    control_reader_.feed(data);
    while (auto f = control_reader_.next()) {
      if (!opened_) {
        if (f->type != frame_type::open) {
          throw protocol_error(stream_errc::protocol_error,
                               std::string(frame_type_name(f->type)) + " before OPEN on the control stream");
        }
        opened_ = true;
        handle_open(c, parse_open(f->payload));
        if (closing_after_error_) return;
        continue;
      }
      switch (f->type) {
        case frame_type::priority_update: {
          const auto p = parse_priority_update(f->payload);
          if (p.stream > static_cast<std::uint64_t>(INT64_MAX) ||
              !is_client_bidi(static_cast<std::int64_t>(p.stream)) || p.stream == 0) {
            throw protocol_error(
                stream_errc::protocol_error,
                "PRIORITY_UPDATE for stream " + std::to_string(p.stream) + ", not a tensor stream");
          }
          scheduler_.update(p.stream, stream_priority{p.urgency, p.incremental});
          c.want_write();
          break;
        }
        case frame_type::error: {
          const auto e = parse_error(f->payload);
          log(c, "client error " + stream_errc_name(e.code) + ": " + e.message);
          break;
        }
        default:
          throw protocol_error(stream_errc::protocol_error, std::string(frame_type_name(f->type)) +
                                                                " from the client on the control stream");
      }
    }
    // §10.4: "closing [the control stream] ends the connection".
    if (fin) c.close(static_cast<std::uint64_t>(stream_errc::no_error), "control stream closed");
  }

  void handle_open(quic::connection& c, const open_payload& open) {
    if (std::find(open.versions.begin(), open.versions.end(), "1") == open.versions.end()) {
      return refuse_open(c, stream_errc::version_mismatch, "this server speaks version 1 only");
    }
    const auto path = resolve_resource(root_, open.resource);
    if (!path) return refuse_open(c, stream_errc::not_found, "no file \"" + open.resource + "\"");
    try {
      tensogram::buffer image = tensogram::buffer::map_file(*path);
      safetensors::file base = safetensors::file::from_buffer(image);
      file_.emplace(served_file{std::move(image), std::move(base), etag_of(*path)});
    } catch (const std::exception& e) {
      return refuse_open(c, stream_errc::invalid_file,
                         "\"" + open.resource + "\" cannot be served: " + e.what());
    }
    log(c, "serving \"" + open.resource + "\"");
    opened_payload opened;
    opened.file_size = file_->base.image().size();
    opened.header_size = file_->base.data_offset();
    if (!file_->etag.empty()) opened.etag = file_->etag;
    queue_control(c, encode(opened));
    // HEADER: its frame head, then the header bytes straight from the
    // mapping (nothing follows on the control stream but a closing ERROR,
    // which fail_connection sends with CONNECTION_CLOSE instead).
    std::vector<std::byte> head;
    append_varint(head, static_cast<std::uint64_t>(frame_type::header));
    append_varint(head, opened.header_size);
    queue_control(c, std::move(head));
    control_.payload = file_->base.image().first(static_cast<std::size_t>(opened.header_size));
    header_sent_ = true;
  }

  void on_tensor_stream(quic::connection& c, std::int64_t id, std::span<const std::byte> data, bool fin) {
    auto it = streams_.try_emplace(id).first;
    tensor_stream& s = it->second;
    if (s.stopped) return;
    if (!header_sent_) {
      throw protocol_error(stream_errc::protocol_error,
                           "tensor stream " + std::to_string(id) + " opened before the header was sent");
    }
    s.reader.feed(data);
    if (auto f = s.reader.next()) {
      if (s.got_get || f->type != frame_type::get) {
        throw protocol_error(stream_errc::protocol_error, std::string(frame_type_name(f->type)) +
                                                              " on tensor stream " + std::to_string(id) +
                                                              (s.got_get ? " after GET" : ""));
      }
      s.got_get = true;
      s.pending_get = parse_get(f->payload);
      deferred_.push_back(id);
      admit_deferred(c);
      if (std::find(deferred_.begin(), deferred_.end(), id) != deferred_.end()) {
        counters_.gets_deferred.fetch_add(1, std::memory_order_relaxed);
      }
    }
    if (s.got_get && s.reader.pending() > 0) {
      throw protocol_error(stream_errc::protocol_error,
                           "bytes after GET on tensor stream " + std::to_string(id));
    }
    if (fin && !s.got_get) {
      throw protocol_error(stream_errc::protocol_error,
                           "tensor stream " + std::to_string(id) + " ended without a GET");
    }
  }

  void answer_get(quic::connection& c, std::int64_t id, tensor_stream& s, const get_payload& get) {
    const auto sid = static_cast<std::uint64_t>(id);
    const safetensors::tensor_view* t = file_->base.find(get.tensor);
    stream_priority priority{get.urgency, get.incremental};
    s.urgency = get.urgency;
    auto answer_error = [&](stream_errc code, const std::string& message) {
      // §10.4 tensor stream step 2: ERROR then FIN; sent like data so the
      // scheduler keeps its rules for it.
      s.out.owned.push_back(encode(error_payload{static_cast<std::uint64_t>(code), message}));
      s.out.fin_queued = true;
      scheduler_.open(sid, priority);
      scheduler_.set_ready(sid, s.out.remaining());
      c.want_write();
    };
    if (t == nullptr) return answer_error(stream_errc::not_found, "no tensor \"" + get.tensor + "\"");
    const std::uint64_t size = t->end() - t->begin();
    const byte_range range = get.range.value_or(byte_range{0, size});
    if (range.begin > range.end || range.end > size) {
      return answer_error(stream_errc::bad_range, "range [" + std::to_string(range.begin) + ", " +
                                                      std::to_string(range.end) + ") of \"" + get.tensor +
                                                      "\" is not within its " + std::to_string(size) +
                                                      " bytes");
    }
    const std::uint64_t abs = file_->base.data_offset() + t->begin() + range.begin;
    std::vector<std::byte> head = encode(response_payload{get.tensor, range, abs});
    const std::uint64_t length = range.end - range.begin;
    append_varint(head, static_cast<std::uint64_t>(frame_type::data));
    append_varint(head, length);
    s.out.owned.push_back(std::move(head));
    std::uint64_t payload = length;
    if (options_.testing_short_data > 0) payload -= std::min(payload, options_.testing_short_data);
    s.out.payload =
        file_->base.image().subspan(static_cast<std::size_t>(abs), static_cast<std::size_t>(payload));
    s.out.fin_queued = true;
    recount(s, false);
    scheduler_.open(sid, priority);
    scheduler_.set_ready(sid, s.out.remaining());
    c.want_write();
  }

  void stop(quic::connection& c, std::int64_t id, tensor_stream& s, std::uint64_t code) {
    s.stopped = true;
    recount(s, false);
    scheduler_.finish(static_cast<std::uint64_t>(id));
    c.reset_stream(id, code);
  }

  const fs::path& root_;
  const server_options& options_;
  app_counters& counters_;
  std::uint64_t queued_ = 0;           // response bytes accepted, not yet handed to QUIC
  std::deque<std::int64_t> deferred_;  // streams whose GET waits for room
  frame_reader control_reader_{max_control_json};
  send_queue control_;
  bool control_blocked_ = false;
  bool opened_ = false;
  bool header_sent_ = false;
  bool closing_after_error_ = false;
  std::uint64_t closing_code_ = 0;
  std::string closing_reason_;
  std::optional<served_file> file_;
  send_scheduler scheduler_;
  std::map<std::int64_t, tensor_stream> streams_;
  std::set<std::int64_t> fin_pending_;
};

fs::path default_tls_dir() {
  if (const char* xdg = std::getenv("XDG_CONFIG_HOME"); xdg != nullptr && *xdg == '/') {
    return fs::path(xdg) / "metatensor" / "tls";
  }
  if (const char* home = std::getenv("HOME"); home != nullptr && *home == '/') {
    return fs::path(home) / ".config" / "metatensor" / "tls";
  }
  throw tensogram::io_error(
      "no certificate given and neither XDG_CONFIG_HOME nor HOME is set: pass --cert/--key");
}

bool self_signed(const server_options& o) {
  return o.cert_pem.empty() && o.key_pem.empty();
}

// The TLS directory of a server with a self-signed pair, created (0700).
fs::path private_tls_dir(const server_options& o) {
  const fs::path dir = o.tls_dir.empty() ? default_tls_dir() : o.tls_dir;
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw tensogram::io_error(dir.string() + ": cannot create: " + ec.message());
  fs::permissions(dir, fs::perms::owner_all, fs::perm_options::replace, ec);
  return dir;
}

// The certificate pair to use: the given one, or the self-signed pair in the
// TLS directory, made on first use (§10.8: loopback tests can use a
// self-signed certificate; clients must trust it explicitly).
std::pair<fs::path, fs::path> certificate_pair(const server_options& o) {
  if (!self_signed(o)) {
    if (o.cert_pem.empty() || o.key_pem.empty()) {
      throw tensogram::invalid_arg_error("a certificate needs both --cert and --key");
    }
    return {o.cert_pem, o.key_pem};
  }
  const fs::path dir = private_tls_dir(o);
  const fs::path cert = dir / "cert.pem";
  const fs::path key = dir / "key.pem";
  if (!fs::exists(cert) || !fs::exists(key)) {
    std::vector<std::string> names{"localhost", "127.0.0.1", "::1"};
    if (o.host != "127.0.0.1" && o.host != "::1" && o.host != "localhost" && o.host != "0.0.0.0" &&
        o.host != "::") {
      names.push_back(o.host);
    }
    quic::generate_self_signed(cert, key, names);
  }
  return {cert, key};
}

// The stateless reset secret (server_options::reset_secret_file): read from
// its file, or made and stored there first. Empty: the engine draws one.
std::vector<std::uint8_t> reset_secret(const server_options& o) {
  if (!o.testing_reset_secret.empty()) return o.testing_reset_secret;
  fs::path file = o.reset_secret_file;
  if (file.empty() && self_signed(o)) file = private_tls_dir(o) / "reset.key";
  if (file.empty()) return {};
  const auto read = [&file]() -> std::optional<std::vector<std::uint8_t>> {
    std::error_code ec;
    const auto size = fs::file_size(file, ec);
    if (ec == std::errc::no_such_file_or_directory) return std::nullopt;
    if (ec)
      throw tensogram::io_error(file.string() + ": cannot read the stateless reset secret: " + ec.message());
    if (size != quic::server_secret_length) {
      throw tensogram::io_error(file.string() + ": a stateless reset secret must be " +
                                std::to_string(quic::server_secret_length) + " bytes, this file has " +
                                std::to_string(size));
    }
    std::vector<std::uint8_t> key(quic::server_secret_length);
    std::ifstream in(file, std::ios::binary);
    if (!in.read(reinterpret_cast<char*>(key.data()), static_cast<std::streamsize>(key.size()))) {
      throw tensogram::io_error(file.string() + ": cannot read the stateless reset secret");
    }
    return key;
  };
  if (auto existing = read()) return *existing;
  std::vector<std::byte> fresh(quic::server_secret_length);
  if (::getrandom(fresh.data(), fresh.size(), 0) != static_cast<ssize_t>(fresh.size())) {
    throw tensogram::io_error("cannot draw a stateless reset secret: " + std::string(std::strerror(errno)));
  }
  {
    // Private before the first byte is written; atomic, so a server starting
    // at the same time never reads half a secret.
    tensogram::atomic_file_writer w(file);
    if (w.fd() >= 0) (void)::fchmod(w.fd(), S_IRUSR | S_IWUSR);
    w.write(fresh);
    w.commit();
  }
  // What is in the file now: another server's secret if it won a race.
  return read().value();
}

}  // namespace

struct server::impl {
  fs::path root;
  server_options options;
  fs::path cert;
  app_counters counters;  // before the endpoint, whose connections use it
  std::unique_ptr<quic::server_endpoint> endpoint;
};

server::server(fs::path root, server_options options) : impl_(std::make_unique<impl>()) {
  std::error_code ec;
  if (!fs::is_directory(root, ec)) throw tensogram::io_error(root.string() + ": not a directory");
  impl_->root = fs::canonical(root, ec);
  if (ec) throw tensogram::io_error(root.string() + ": " + ec.message());
  impl_->options = std::move(options);
  auto [cert, key] = certificate_pair(impl_->options);
  impl_->cert = cert;
  quic::server_config config;
  config.host = impl_->options.host;
  config.port = impl_->options.port;
  config.cert_pem = cert;
  config.key_pem = key;
  const server_options& o = impl_->options;
  config.limits.stream_window = server_stream_window;
  config.limits.connection_window = server_connection_window;
  config.limits.max_bidi_streams = std::max<std::uint64_t>(o.max_streams, 2);
  config.limits.idle_timeout = o.idle_timeout;
  config.limits.handshake_timeout = o.handshake_timeout;
  config.max_connections = o.max_connections;
  config.max_connections_per_address = o.max_connections_per_address;
  config.retry_threshold = o.testing_always_retry ? 0 : o.retry_threshold;
  config.stateless_resets_per_second = o.stateless_resets_per_second;
  config.stateless_reset_secret = reset_secret(o);
  config.log = o.refusal_log ? o.refusal_log : o.log;
  impl* self = impl_.get();
  impl_->endpoint = std::make_unique<quic::server_endpoint>(
      std::move(config), [self](quic::connection&) -> std::unique_ptr<quic::connection_handler> {
        return std::make_unique<server_connection>(self->root, self->options, self->counters);
      });
}

server::~server() {
  if (impl_ && impl_->endpoint) impl_->endpoint->stop();
}

std::uint16_t server::port() const noexcept {
  return impl_->endpoint->port();
}
const fs::path& server::certificate() const noexcept {
  return impl_->cert;
}
void server::start() {
  impl_->endpoint->start();
}
void server::run() {
  impl_->endpoint->run();
}
void server::stop() {
  impl_->endpoint->stop();
}
server_stats server::stats() const {
  const quic::server_stats e = impl_->endpoint->stats();
  server_stats s;
  s.connections = e.connections;
  s.handshaking = e.handshaking;
  s.accepted = e.accepted;
  s.retries_sent = e.retries_sent;
  s.invalid_tokens = e.invalid_tokens;
  s.refused_global = e.refused_global;
  s.refused_per_address = e.refused_per_address;
  s.resets_sent = e.resets_sent;
  s.resets_rate_limited = e.resets_rate_limited;
  s.handshake_timeouts = e.handshake_timeouts;
  s.idle_timeouts = e.idle_timeouts;
  s.dropped_packets = e.dropped_packets;
  s.queued_bytes = impl_->counters.queued_bytes.load(std::memory_order_relaxed);
  s.queued_bytes_peak = impl_->counters.queued_bytes_peak.load(std::memory_order_relaxed);
  s.gets_deferred = impl_->counters.gets_deferred.load(std::memory_order_relaxed);
  return s;
}

}  // namespace metatensor::streaming
