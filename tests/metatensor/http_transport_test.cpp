// The HTTP range transport of the metatensor client (spec 06 §10.9) against
// a throwaway nginx on loopback: the header in two ranged GETs, tensors as
// ranged GETs written straight into caller memory, parallel transfers,
// cancellation and If-Range pinning of the file version.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <metatensor/safetensors.hpp>
#include <metatensor/writer.hpp>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <tensogram/core/error.hpp>
#include <thread>
#include <vector>

#include "../io/nginx_server.hpp"
#include "src/metatensor/streaming/protocol/stream_protocol.hpp"
#include "src/metatensor/streaming/transport.hpp"

namespace ms = metatensor::streaming;
namespace msd = metatensor::streaming::detail;
namespace mt = metatensor;
using namespace std::chrono_literals;

namespace {

constexpr std::string_view schema_text = R"({
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "type": "object",
  "additionalProperties": false,
  "properties": {
    "labels": {"type": "array", "items": {"type": "string", "TypeDef:String": true}},
    "positions": {"type": "array", "items": {"type": "array", "minItems": 3, "maxItems": 3,
                                             "items": {"type": "number", "TypeDef:Float32": true}}},
    "ids": {"type": "array", "items": {"type": "integer", "TypeDef:Uint64": true}}
  }
})";

// A metatensor file of about 1.3 MB: "positions" is large enough for
// rate-limited transfers to be caught mid-way.
std::vector<std::byte> make_file(std::uint64_t rows, std::uint64_t seed) {
  mt::file_builder b(mt::compile_schema_text(schema_text));
  std::vector<float> pos(rows * 3);
  for (std::size_t i = 0; i < pos.size(); ++i) pos[i] = static_cast<float>(i * 7 + seed);
  b.set_flat<float>("positions", {rows, 3}, pos);
  std::vector<std::uint64_t> ids(1000);
  for (std::size_t i = 0; i < ids.size(); ++i) ids[i] = i * 1000003 + seed;
  b.set_flat<std::uint64_t>("ids", {ids.size()}, ids);
  const std::vector<std::string> labels{"red", "green", "blue", "a much longer label than the others"};
  b.set_strings("labels", {labels.size()}, labels);
  return b.serialize();
}

void write_file(const std::filesystem::path& p, const std::vector<std::byte>& bytes) {
  // Replace atomically (nginx may be reading the old file).
  const auto tmp = p.string() + ".tmp";
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    f.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    if (!f) throw std::runtime_error("cannot write " + tmp);
  }
  std::filesystem::rename(tmp, p);
}

// Records every listener call; tests wait on it.
class test_listener final : public msd::transport_listener {
 public:
  enum class state { pending, complete, failed, cancelled };
  struct outcome {
    state s = state::pending;
    std::exception_ptr error;
    std::uint64_t progress = 0;
    int final_calls = 0;
  };

  void on_progress(std::uint64_t id, std::uint64_t received) override {
    const std::lock_guard lock(m_);
    auto& o = results_[id];
    EXPECT_GE(received, o.progress) << "progress went backwards for request " << id;
    EXPECT_EQ(o.final_calls, 0) << "progress after the final call for request " << id;
    o.progress = received;
    cv_.notify_all();
  }
  void on_complete(std::uint64_t id) override { finish(id, state::complete, nullptr); }
  void on_failed(std::uint64_t id, std::exception_ptr error) override { finish(id, state::failed, error); }
  void on_cancelled(std::uint64_t id) override { finish(id, state::cancelled, nullptr); }
  void on_connection_lost(std::exception_ptr error) override {
    const std::lock_guard lock(m_);
    lost_ = error;
    cv_.notify_all();
  }

  /// Waits until request `id` ended (bounded); its outcome.
  outcome wait(std::uint64_t id, std::chrono::milliseconds limit = 20s) {
    std::unique_lock lock(m_);
    cv_.wait_for(lock, limit, [&] { return results_[id].s != state::pending; });
    return results_[id];
  }
  /// Waits until request `id` reported at least `bytes` bytes.
  bool wait_progress(std::uint64_t id, std::uint64_t bytes, std::chrono::milliseconds limit = 20s) {
    std::unique_lock lock(m_);
    return cv_.wait_for(lock, limit, [&] { return results_[id].progress >= bytes; });
  }
  outcome get(std::uint64_t id) {
    const std::lock_guard lock(m_);
    return results_[id];
  }
  std::size_t calls() {
    const std::lock_guard lock(m_);
    return calls_;
  }

 private:
  void finish(std::uint64_t id, state s, std::exception_ptr error) {
    const std::lock_guard lock(m_);
    auto& o = results_[id];
    if (o.final_calls == 0) {
      o.s = s;
      o.error = error;
    }
    ++o.final_calls;
    ++calls_;
    cv_.notify_all();
  }

  std::mutex m_;
  std::condition_variable cv_;
  std::map<std::uint64_t, outcome> results_;
  std::exception_ptr lost_;
  std::size_t calls_ = 0;
};

std::string what(const std::exception_ptr& e) {
  if (!e) return "(no error)";
  try {
    std::rethrow_exception(e);
  } catch (const std::exception& x) {
    return x.what();
  }
  return "(unknown)";
}

// Runs `check` on the exception `e` holds, which must be an E.
template <class E, class Check>
void expect_exception(const std::exception_ptr& e, Check&& check) {
  if (!e) {
    ADD_FAILURE() << "no error";
    return;
  }
  try {
    std::rethrow_exception(e);
  } catch (const E& x) {
    check(x);
  } catch (const std::exception& x) {
    ADD_FAILURE() << "unexpected exception type: " << x.what();
  }
}

// `e` is an E whose message contains `fragment`.
template <class E>
void expect_error(const std::exception_ptr& e, std::string_view fragment) {
  expect_exception<E>(
      e, [&](const E& x) { EXPECT_NE(std::string(x.what()).find(fragment), std::string::npos) << x.what(); });
}

// What `open` of a transport for `u` throws (null when it succeeds).
std::exception_ptr open_error(const msd::remote_url& u, const ms::client_options& o = {}) {
  test_listener l;
  auto t = msd::make_http_transport(u, o, l);
  try {
    (void)t->open();
  } catch (...) {
    return std::current_exception();
  }
  return nullptr;
}

// What remote_file hands the transport for physical tensor `name`, range
// [b, e) relative to the tensor (the whole tensor by default).
struct request_buffer {
  msd::transport_request request;
  std::vector<std::byte> bytes;
};

request_buffer make_request(const mt::safetensors::file& f, std::uint64_t id, const std::string& name,
                            std::optional<ms::byte_range> range = std::nullopt, std::uint8_t urgency = 3) {
  const auto& t = f.at(name);
  const ms::byte_range r = range.value_or(ms::byte_range{0, t.end() - t.begin()});
  request_buffer out;
  out.bytes.assign(static_cast<std::size_t>(r.end - r.begin), std::byte{0xEE});
  out.request.id = id;
  out.request.get.tensor = name;
  out.request.get.range = r;
  out.request.get.urgency = urgency;
  out.request.tensor_offset = f.data_offset() + t.begin();
  out.request.tensor_size = t.end() - t.begin();
  out.request.destination = out.bytes;
  return out;
}

std::vector<std::byte> slice(const std::vector<std::byte>& v, std::uint64_t begin, std::uint64_t size) {
  return {v.begin() + static_cast<std::ptrdiff_t>(begin),
          v.begin() + static_cast<std::ptrdiff_t>(begin + size)};
}

// A one-thread HTTP/1.1 server on loopback answering each request with
// whatever `respond` builds from the request's Range (first, last) — for
// replies nginx never sends: short or long bodies, wrong ranges, no size.
// One request per connection (Connection: close).
class scripted_server {
 public:
  using responder = std::function<std::string(std::uint64_t first, std::uint64_t last)>;

  explicit scripted_server(responder respond) : respond_(std::move(respond)) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    if (fd_ < 0) throw std::runtime_error("socket");
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    if (::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(fd_, 16) != 0 ||
        ::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
      ::close(fd_);
      throw std::runtime_error("bind/listen on 127.0.0.1");
    }
    port_ = ntohs(addr.sin_port);
    thread_ = std::thread([this] { serve(); });
  }
  scripted_server(const scripted_server&) = delete;
  scripted_server& operator=(const scripted_server&) = delete;
  ~scripted_server() {
    stop_ = true;
    thread_.join();
    ::close(fd_);
  }
  [[nodiscard]] std::string url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/f"; }

 private:
  void serve() {
    while (!stop_) {
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, 20) <= 0) continue;
      const int c = ::accept(fd_, nullptr, nullptr);
      if (c < 0) continue;
      std::string request;
      char buf[4096];
      while (request.find("\r\n\r\n") == std::string::npos) {
        const ssize_t n = ::recv(c, buf, sizeof buf, 0);
        if (n <= 0) break;
        request.append(buf, static_cast<std::size_t>(n));
      }
      std::uint64_t first = 0, last = 0;
      if (const auto at = request.find("Range: bytes="); at != std::string::npos) {
        first = std::stoull(request.substr(at + 13));
        last = std::stoull(request.substr(request.find('-', at + 13) + 1));
      }
      const std::string reply = respond_(first, last);
      std::size_t sent = 0;
      while (sent < reply.size()) {
        const ssize_t n = ::send(c, reply.data() + sent, reply.size() - sent, MSG_NOSIGNAL);
        if (n <= 0) break;
        sent += static_cast<std::size_t>(n);
      }
      ::shutdown(c, SHUT_WR);
      ::close(c);
    }
  }

  responder respond_;
  int fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

// A 206 reply for [first, last] of `file`, body `body` (the exact bytes
// unless a test changes them).
std::string partial(const std::vector<std::byte>& file, std::uint64_t first, std::uint64_t last,
                    std::string_view total = {}, std::optional<std::string> body = std::nullopt,
                    std::uint64_t range_shift = 0) {
  if (!body) body = std::string(reinterpret_cast<const char*>(file.data()) + first, last - first + 1);
  return "HTTP/1.1 206 Partial Content\r\nContent-Range: bytes " + std::to_string(first + range_shift) + "-" +
         std::to_string(last + range_shift) + "/" +
         (total.empty() ? std::to_string(file.size()) : std::string(total)) +
         "\r\nContent-Length: " + std::to_string(body->size()) + "\r\nConnection: close\r\n\r\n" + *body;
}

msd::remote_url url_of(const scripted_server& s) {
  msd::remote_url u;
  u.kind = msd::remote_url::scheme::http;
  u.host = "127.0.0.1";
  u.resource = "f";
  u.text = s.url();
  return u;
}

class HttpTransport : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (tgtest::nginx_unavailable()) return;
    try {
      dir_ = std::make_unique<tgtest::nginx_dir>("metatensor-http");
      file_ = make_file(100'000, 1);
      write_file(dir_->path() / "model.safetensors", file_);
      write_file(dir_->path() / "replaced.safetensors", file_);
      // /slow/ serves the same files at 64 KiB/s (cancellation mid-transfer);
      // /norange/ ignores Range headers (max_ranges 0: whole-file 200s).
      const std::string root = dir_->path().string();
      server_ = std::make_unique<tgtest::nginx_server>(
          dir_->path(), "    location /slow/ { alias \"" + root + "/\"; limit_rate 64k; }\n" +
                            "    location /norange/ { alias \"" + root + "/\"; max_ranges 0; }\n");
    } catch (const std::exception& e) {
      start_failure_ = e.what();
    }
  }
  static void TearDownTestSuite() {
    server_.reset();
    dir_.reset();
  }
  void SetUp() override {
    TGTEST_SKIP_WITHOUT_NGINX();
    ASSERT_TRUE(server_) << start_failure_;
  }

  static msd::remote_url url(const std::string& path) {
    msd::remote_url u;
    u.kind = msd::remote_url::scheme::http;
    u.host = "127.0.0.1";
    u.port = static_cast<std::uint16_t>(server_->port());
    u.resource = path;
    u.text = server_->url(path);
    return u;
  }

  static mt::safetensors::file local() {
    return mt::safetensors::file::from_buffer(tensogram::buffer::owned(file_));
  }

  static inline std::unique_ptr<tgtest::nginx_dir> dir_;
  static inline std::unique_ptr<tgtest::nginx_server> server_;
  static inline std::vector<std::byte> file_;
  static inline std::string start_failure_;
};

TEST_F(HttpTransport, OpenReadsHeaderSizeAndEtag) {
  test_listener l;
  server_->clear_access_log();
  auto t = msd::make_http_transport(url("model.safetensors"), {}, l);
  const auto opened = t->open();
  const auto f = local();
  EXPECT_EQ(opened.info.file_size, file_.size());
  EXPECT_EQ(opened.info.header_size, f.data_offset());
  ASSERT_EQ(opened.header.size(), f.data_offset());
  EXPECT_EQ(opened.header, slice(file_, 0, f.data_offset()));
  ASSERT_TRUE(opened.info.etag.has_value());
  EXPECT_EQ(opened.info.etag->front(), '"') << *opened.info.etag;  // nginx: strong "mtime-size"
  // §10.9: bytes 0–7, then [8, 8 + N).
  const auto log = server_->requests_for("/model.safetensors", 2);
  ASSERT_GE(log.size(), 2u);
  EXPECT_EQ(log[log.size() - 2].range, "bytes=0-7");
  EXPECT_EQ(log.back().range, "bytes=8-" + std::to_string(f.data_offset() - 1));
  t->close(ms::stream_errc::no_error, "done");
  EXPECT_EQ(l.calls(), 0u);
}

TEST_F(HttpTransport, ParallelRequestsLandExactBytes) {
  test_listener l;
  ms::client_options o;
  o.http_parallel = 2;
  server_->clear_access_log();
  auto t = msd::make_http_transport(url("model.safetensors"), o, l);
  (void)t->open();
  const auto f = local();
  std::vector<request_buffer> reqs;
  std::uint64_t id = 1;
  for (const auto& tv : f.tensors()) {
    if (tv.end() == tv.begin()) continue;
    reqs.push_back(make_request(f, id++, std::string(tv.name())));
  }
  reqs.push_back(make_request(f, id++, "positions", ms::byte_range{100, 200'000}));
  reqs.push_back(make_request(f, id++, "positions", ms::byte_range{5, 6}));  // a single byte
  reqs.push_back(make_request(f, id++, "ids", ms::byte_range{8, 8 * 999}, 0));
  ASSERT_GE(reqs.size(), 6u);
  for (auto& r : reqs) t->start(r.request);
  for (const auto& r : reqs) {
    const auto o2 = l.wait(r.request.id);
    ASSERT_EQ(o2.s, test_listener::state::complete) << r.request.get.tensor << ": " << what(o2.error);
    EXPECT_EQ(o2.final_calls, 1);
    EXPECT_EQ(o2.progress, r.bytes.size());
    const auto& range = *r.request.get.range;
    EXPECT_EQ(r.bytes, slice(file_, r.request.tensor_offset + range.begin, range.end - range.begin))
        << r.request.get.tensor << " [" << range.begin << ", " << range.end << ")";
  }
  // Exactly one ranged GET per request, each for its bytes, over at most
  // http_parallel connections (kept alive: the header's connection too).
  const auto log = server_->requests_for("/model.safetensors", reqs.size() + 2);
  ASSERT_EQ(log.size(), reqs.size() + 2);
  std::multiset<std::string> want, got;
  std::set<std::uint64_t> connections;
  for (const auto& r : reqs) {
    const std::uint64_t b = r.request.tensor_offset + r.request.get.range->begin;
    const std::uint64_t e = r.request.tensor_offset + r.request.get.range->end;
    want.insert("bytes=" + std::to_string(b) + "-" + std::to_string(e - 1));
  }
  for (std::size_t i = 2; i < log.size(); ++i) {
    got.insert(log[i].range);
    EXPECT_EQ(log[i].status, 206);
  }
  for (const auto& e : log) connections.insert(e.connection);
  EXPECT_EQ(got, want);
  EXPECT_LE(connections.size(), 2u);
  t->close(ms::stream_errc::no_error, "done");
}

TEST_F(HttpTransport, EmptyRangeCompletesWithoutRequest) {
  test_listener l;
  auto t = msd::make_http_transport(url("model.safetensors"), {}, l);
  (void)t->open();
  const auto f = local();
  server_->clear_access_log();
  auto empty = make_request(f, 7, "positions", ms::byte_range{40, 40});
  t->start(empty.request);
  const auto o = l.wait(7);
  EXPECT_EQ(o.s, test_listener::state::complete) << what(o.error);
  // A real request afterwards is the only one nginx sees.
  auto one = make_request(f, 8, "ids", ms::byte_range{0, 16});
  t->start(one.request);
  EXPECT_EQ(l.wait(8).s, test_listener::state::complete);
  EXPECT_EQ(one.bytes, slice(file_, one.request.tensor_offset, 16));
  const auto log = server_->requests_for("/model.safetensors", 1);
  ASSERT_EQ(log.size(), 1u);
  EXPECT_EQ(log[0].range, "bytes=" + std::to_string(one.request.tensor_offset) + "-" +
                              std::to_string(one.request.tensor_offset + 15));
}

TEST_F(HttpTransport, BadRangeFailsLikeQuic) {
  test_listener l;
  auto t = msd::make_http_transport(url("model.safetensors"), {}, l);
  (void)t->open();
  const auto f = local();
  auto r = make_request(f, 3, "ids");
  r.request.get.range = ms::byte_range{0, r.request.tensor_size + 1};
  r.bytes.resize(static_cast<std::size_t>(r.request.tensor_size + 1));
  r.request.destination = r.bytes;
  t->start(r.request);
  const auto o = l.wait(3);
  ASSERT_EQ(o.s, test_listener::state::failed);
  expect_exception<ms::protocol_error>(o.error, [](const ms::protocol_error& e) {
    EXPECT_EQ(e.code(), ms::stream_errc::bad_range) << e.what();
  });
}

TEST_F(HttpTransport, MissingFileFailsOpen) {
  const auto e = open_error(url("missing.safetensors"));
  expect_exception<ms::protocol_error>(
      e, [](const ms::protocol_error& x) { EXPECT_EQ(x.code(), ms::stream_errc::not_found) << x.what(); });
  expect_error<ms::protocol_error>(e, "HTTP 404");
  expect_error<ms::protocol_error>(e, "/missing.safetensors");
}

TEST_F(HttpTransport, ServerIgnoringRangeFailsOpenCleanly) {
  expect_error<tensogram::remote_error>(open_error(url("norange/model.safetensors")),
                                        "ignored the Range header");
}

TEST_F(HttpTransport, UnreachableServerFailsOpen) {
  test_listener l;
  auto u = url("model.safetensors");
  u.text = "http://127.0.0.1:1/model.safetensors";  // nothing listens on port 1
  auto t = msd::make_http_transport(u, {}, l);
  EXPECT_THROW((void)t->open(), tensogram::remote_error);
}

TEST_F(HttpTransport, CancelActiveAndQueuedRequests) {
  test_listener l;
  ms::client_options o;
  o.http_parallel = 1;
  auto t = msd::make_http_transport(url("slow/model.safetensors"), o, l);
  (void)t->open();
  const auto f = local();
  auto big = make_request(f, 1, "positions");  // ~1.2 MB at 64 KiB/s
  auto queued = make_request(f, 2, "ids");     // waits for the only slot
  t->start(big.request);
  t->start(queued.request);
  ASSERT_TRUE(l.wait_progress(1, 1)) << "no byte of the slow transfer arrived";
  t->cancel(2);
  EXPECT_EQ(l.wait(2).s, test_listener::state::cancelled);
  t->cancel(1);
  const auto o1 = l.wait(1);
  EXPECT_EQ(o1.s, test_listener::state::cancelled) << what(o1.error);
  EXPECT_LT(o1.progress, big.bytes.size());
  // Cancelling an ended request has no effect.
  t->cancel(1);
  // The transport still works after cancellations.
  auto small = make_request(f, 3, "labels");
  t->start(small.request);
  const auto o3 = l.wait(3);
  EXPECT_EQ(o3.s, test_listener::state::complete) << what(o3.error);
  EXPECT_EQ(small.bytes, slice(file_, small.request.tensor_offset, small.bytes.size()));
  t->close(ms::stream_errc::no_error, "done");
  EXPECT_EQ(l.get(1).final_calls, 1);
  EXPECT_EQ(l.get(2).final_calls, 1);
}

TEST_F(HttpTransport, UrgencyOrdersQueuedRequests) {
  test_listener l;
  ms::client_options o;
  o.http_parallel = 1;
  auto t = msd::make_http_transport(url("slow/model.safetensors"), o, l);
  (void)t->open();
  const auto f = local();
  // A slow transfer holds the only slot while three more queue up.
  auto blocker = make_request(f, 1, "positions");
  t->start(blocker.request);
  ASSERT_TRUE(l.wait_progress(1, 1));
  server_->clear_access_log();
  std::vector<request_buffer> reqs;
  reqs.push_back(make_request(f, 2, "ids", ms::byte_range{0, 8}, 7));
  reqs.push_back(make_request(f, 3, "ids", ms::byte_range{8, 16}, 5));
  reqs.push_back(make_request(f, 4, "ids", ms::byte_range{16, 24}, 0));
  for (auto& r : reqs) t->start(r.request);
  t->update_priority(2, ms::stream_priority{.urgency = 1, .incremental = false});  // 7 -> 1
  t->update_priority(99, {});                                                      // unknown: ignored
  t->cancel(1);                                                                    // frees the slot
  EXPECT_EQ(l.wait(1).s, test_listener::state::cancelled);
  for (const auto& r : reqs) {
    const auto out = l.wait(r.request.id);
    EXPECT_EQ(out.s, test_listener::state::complete) << what(out.error);
    EXPECT_EQ(r.bytes, slice(file_, r.request.tensor_offset + r.request.get.range->begin, 8));
  }
  const auto off = reqs[0].request.tensor_offset;
  const auto range_of = [&](std::uint64_t b) {
    return "bytes=" + std::to_string(off + b) + "-" + std::to_string(off + b + 7);
  };
  // The cancelled blocker is logged too, whenever nginx notices: wait for
  // the three queued requests' lines themselves, not for any three lines.
  const std::string blocker_range =
      "bytes=" + std::to_string(blocker.request.tensor_offset) + "-" +
      std::to_string(blocker.request.tensor_offset + blocker.request.tensor_size - 1);
  std::vector<std::string> order;
  for (int attempt = 0; attempt < 500 && order.size() < reqs.size(); ++attempt) {
    if (attempt > 0) std::this_thread::sleep_for(10ms);
    order.clear();
    for (const auto& e : server_->requests_for("/slow/model.safetensors")) {
      if (e.range != blocker_range) order.push_back(e.range);
    }
  }
  // Most urgent first: 0 (id 4), then 1 (id 2, raised), then 5 (id 3).
  EXPECT_EQ(order, (std::vector<std::string>{range_of(16), range_of(0), range_of(8)}));
  t->close(ms::stream_errc::no_error, "done");
}

TEST_F(HttpTransport, FileReplacedAfterOpenFails) {
  test_listener l;
  write_file(dir_->path() / "replaced.safetensors", file_);
  auto t = msd::make_http_transport(url("replaced.safetensors"), {}, l);
  const auto opened = t->open();
  ASSERT_TRUE(opened.info.etag.has_value());
  // A new version (another size, hence another nginx ETag).
  write_file(dir_->path() / "replaced.safetensors", make_file(90'000, 2));
  const auto f = local();
  auto r = make_request(f, 5, "ids");
  t->start(r.request);
  const auto o = l.wait(5);
  ASSERT_EQ(o.s, test_listener::state::failed);
  expect_error<tensogram::remote_error>(o.error, "changed");
}

TEST_F(HttpTransport, CloseStopsListenerCalls) {
  test_listener l;
  auto t = msd::make_http_transport(url("slow/model.safetensors"), {}, l);
  (void)t->open();
  const auto f = local();
  auto big = make_request(f, 1, "positions");
  t->start(big.request);
  ASSERT_TRUE(l.wait_progress(1, 1));
  t->close(ms::stream_errc::no_error, "bye");
  t->close(ms::stream_errc::no_error, "again");  // idempotent
  const auto calls = l.calls();
  auto after = make_request(f, 2, "ids");
  t->start(after.request);  // ignored after close
  t->cancel(1);
  std::this_thread::sleep_for(100ms);
  EXPECT_EQ(l.calls(), calls);
  EXPECT_EQ(l.get(1).final_calls, 0);
  EXPECT_EQ(l.get(2).final_calls, 0);
}

TEST_F(HttpTransport, CloseFromListenerCallbackDoesNotDeadlock) {
  // remote_file may close from a callback (on the transport thread).
  struct closing_listener final : msd::transport_listener {
    msd::transport* t = nullptr;
    std::mutex m;
    std::condition_variable cv;
    bool done = false;
    void on_progress(std::uint64_t, std::uint64_t) override {}
    void on_complete(std::uint64_t) override {
      t->close(ms::stream_errc::no_error, "from a callback");
      const std::lock_guard lock(m);
      done = true;
      cv.notify_all();
    }
    void on_failed(std::uint64_t, std::exception_ptr) override {}
    void on_cancelled(std::uint64_t) override {}
    void on_connection_lost(std::exception_ptr) override {}
  } l;
  auto t = msd::make_http_transport(url("model.safetensors"), {}, l);
  l.t = t.get();
  (void)t->open();
  const auto f = local();
  auto r = make_request(f, 1, "ids");
  t->start(r.request);
  std::unique_lock lock(l.m);
  ASSERT_TRUE(l.cv.wait_for(lock, 20s, [&] { return l.done; }));
  lock.unlock();
  t.reset();  // joins the (stopping) thread from here
}

TEST_F(HttpTransport, RejectsNonHttpUrl) {
  test_listener l;
  auto u = url("model.safetensors");
  u.kind = msd::remote_url::scheme::quic;
  EXPECT_THROW((void)msd::make_http_transport(u, {}, l), tensogram::invalid_arg_error);
}

// ---- replies nginx never sends (scripted server) ----------------------------

class HttpTransportFaults : public ::testing::Test {
 protected:
  void SetUp() override {
    file_ = make_file(1000, 3);
    f_.emplace(mt::safetensors::file::from_buffer(tensogram::buffer::owned(file_)));
  }
  // Header requests answered correctly; tensor requests by `tensor_reply`.
  scripted_server::responder with_tensor_reply(
      std::function<std::string(std::uint64_t, std::uint64_t)> tensor_reply) {
    return [this, tensor_reply](std::uint64_t first, std::uint64_t last) {
      if (first < f_->data_offset()) return partial(file_, first, last);
      return tensor_reply(first, last);
    };
  }
  // Opens through `server`, fetches all of "ids", returns the failure text.
  std::exception_ptr fetch_ids(const scripted_server& server) {
    test_listener l;
    auto t = msd::make_http_transport(url_of(server), {}, l);
    const auto opened = t->open();
    EXPECT_EQ(opened.header, slice(file_, 0, f_->data_offset()));
    EXPECT_FALSE(opened.info.etag.has_value());
    auto r = make_request(*f_, 1, "ids");
    t->start(r.request);
    const auto o = l.wait(1);
    EXPECT_EQ(o.s, test_listener::state::failed);
    t->close(ms::stream_errc::no_error, {});
    return o.error;
  }

  std::vector<std::byte> file_;
  std::optional<mt::safetensors::file> f_;
};

TEST_F(HttpTransportFaults, ShortBodyIsProtocolError) {
  scripted_server s(with_tensor_reply([&](std::uint64_t first, std::uint64_t last) {
    // Content-Length promises the range, the connection ends half-way.
    std::string reply = partial(file_, first, last);
    reply.resize(reply.size() - (last - first + 1) / 2);
    return reply;
  }));
  const auto e = fetch_ids(s);
  expect_error<ms::protocol_error>(e, "tensor \"ids\"");
  expect_error<ms::protocol_error>(e, " of 8000 bytes");
}

TEST_F(HttpTransportFaults, LongerBodyNeverOverflowsDestination) {
  scripted_server s(with_tensor_reply([&](std::uint64_t first, std::uint64_t last) {
    std::string body(reinterpret_cast<const char*>(file_.data()) + first, last - first + 1);
    body += "0123456789";  // ten bytes more than asked
    return partial(file_, first, last, {}, body);
  }));
  expect_error<ms::protocol_error>(fetch_ids(s), "more than the 8000 bytes");
}

TEST_F(HttpTransportFaults, OtherRangeIsProtocolError) {
  scripted_server s(with_tensor_reply([&](std::uint64_t first, std::uint64_t last) {
    return partial(file_, first, last, {}, std::nullopt, 8);
  }));
  expect_error<ms::protocol_error>(fetch_ids(s), "other bytes");
}

TEST_F(HttpTransportFaults, ServerErrorNamesStatusAndUrl) {
  scripted_server s(with_tensor_reply([](std::uint64_t, std::uint64_t) {
    return std::string("HTTP/1.1 500 Oops\r\nContent-Length: 4\r\nConnection: close\r\n\r\noops");
  }));
  const auto e = fetch_ids(s);
  expect_error<tensogram::remote_error>(e, "HTTP 500");
  expect_error<tensogram::remote_error>(e, s.url());
}

TEST_F(HttpTransportFaults, FullReplyWithoutEtagIsRefused) {
  scripted_server s(with_tensor_reply([&](std::uint64_t, std::uint64_t) {
    const std::string body(reinterpret_cast<const char*>(file_.data()), file_.size());
    return "HTTP/1.1 200 OK\r\nContent-Length: " + std::to_string(body.size()) +
           "\r\nConnection: close\r\n\r\n" + body;
  }));
  expect_error<tensogram::remote_error>(fetch_ids(s), "ignored the Range header");
}

TEST_F(HttpTransportFaults, SizeChangeIsDetectedWithoutEtag) {
  scripted_server s(with_tensor_reply(
      [&](std::uint64_t first, std::uint64_t last) { return partial(file_, first, last, "99999999"); }));
  expect_error<tensogram::remote_error>(fetch_ids(s), "file changed on the server");
}

TEST_F(HttpTransportFaults, OpenNeedsTheFileSize) {
  scripted_server s(
      [&](std::uint64_t first, std::uint64_t last) { return partial(file_, first, last, "*"); });
  expect_error<tensogram::remote_error>(open_error(url_of(s)), "no file size");
}

TEST_F(HttpTransportFaults, OversizedHeaderLengthIsRefused) {
  auto bytes = file_;
  const std::uint64_t n = 200'000'000;
  std::memcpy(bytes.data(), &n, 8);
  scripted_server s([&](std::uint64_t first, std::uint64_t last) { return partial(bytes, first, last); });
  const auto e = open_error(url_of(s));
  expect_exception<ms::protocol_error>(e, [](const ms::protocol_error& x) {
    EXPECT_EQ(x.code(), ms::stream_errc::limit_exceeded) << x.what();
  });
  expect_error<ms::protocol_error>(e, "200000000");
}

TEST_F(HttpTransportFaults, TinyFileIsTooSmall) {
  const std::vector<std::byte> tiny(5, std::byte{1});
  scripted_server s(
      [&](std::uint64_t first, std::uint64_t) { return partial(tiny, first, tiny.size() - 1); });
  expect_exception<mt::error>(open_error(url_of(s)), [](const mt::error& e) {
    EXPECT_EQ(e.kind(), mt::errc::st_header_too_small) << e.what();
  });
}

TEST_F(HttpTransportFaults, OpenTimeout) {
  // A server that accepts and never answers.
  scripted_server s([](std::uint64_t, std::uint64_t) {
    std::this_thread::sleep_for(1000ms);
    return std::string();
  });
  test_listener l;
  ms::client_options o;
  o.open_timeout = 300ms;
  auto t = msd::make_http_transport(url_of(s), o, l);
  const auto start = std::chrono::steady_clock::now();
  EXPECT_THROW((void)t->open(), tensogram::timeout_error);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 1200ms);
}

}  // namespace
