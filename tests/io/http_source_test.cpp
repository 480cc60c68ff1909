// The HTTP(S) byte source against a real server (nginx on loopback): sizes
// by HEAD, range reads byte-exact, request/round-trip accounting, thread
// safety, and every failure mode ending in a `remote_error` instead of wrong
// bytes or a hang (spec 04 Part E.3).
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <fstream>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "io_test_support.hpp"
#include "nginx_server.hpp"
#include "tensogram/core/error.hpp"
#include "tensogram/io/byte_source.hpp"

namespace {

namespace io = tensogram::io;
using bytes = std::vector<std::byte>;

bytes random_bytes(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  bytes out(n);
  for (auto& b : out) b = static_cast<std::byte>(rng() & 0xFF);
  return out;
}

void write_file(const std::filesystem::path& p, const bytes& data) {
  std::ofstream f(p, std::ios::binary | std::ios::trunc);
  f.write(reinterpret_cast<const char*>(data.data()), static_cast<std::streamsize>(data.size()));
  if (!f) throw std::runtime_error("cannot write " + p.string());
}

bytes slice(const bytes& b, io::byte_range r) {
  return {b.begin() + static_cast<std::ptrdiff_t>(r.offset),
          b.begin() + static_cast<std::ptrdiff_t>(r.offset + r.length)};
}

bytes to_bytes(const tensogram::buffer& b) {
  return {b.bytes().begin(), b.bytes().end()};
}

// Runs `f`, expecting a remote_error; returns its message.
template <typename F>
std::string remote_error_of(F&& f) {
  try {
    f();
  } catch (const tensogram::remote_error& e) {
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "expected remote_error, got: " << e.what();
    return {};
  }
  ADD_FAILURE() << "expected remote_error, nothing was thrown";
  return {};
}

constexpr std::size_t data_size = (1u << 20) + 123;  // not a multiple of any buffer size

class HttpSource : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (tgtest::nginx_unavailable()) return;
    dir_ = std::make_unique<tgtest::temp_dir>();
    data_ = random_bytes(data_size, 42);
    write_file(dir_->path() / "data.bin", data_);
    write_file(dir_->path() / "empty.bin", {});
    const std::string root = dir_->path().string() + "/";
    // Extra locations: a server that ignores Range (max_ranges 0 makes
    // nginx answer 200 with the whole file), one that refuses HEAD, a
    // redirect, and one that demands a header.
    const std::string extra =
        "    location /norange/ { alias \"" + root + "\"; max_ranges 0; }\n" +
        "    location /nohead/ { alias \"" + root + "\"; if ($request_method = HEAD) { return 405; } }\n" +
        "    location /nohead-norange/ { alias \"" + root +
        "\"; max_ranges 0; if ($request_method = HEAD) { return 405; } }\n" +
        "    location = /redirect.bin { return 302 /data.bin; }\n" + "    location /guarded/ { alias \"" +
        root + "\"; if ($http_x_token != \"secret\") { return 403; } }\n";
    try {
      server_ = std::make_unique<tgtest::nginx_server>(dir_->path(), extra);
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
    server_->clear_access_log();
  }

  static tgtest::nginx_server& server() { return *server_; }
  static std::string url(std::string_view path = "data.bin") { return server_->url(path); }

  static inline std::unique_ptr<tgtest::temp_dir> dir_;
  static inline std::unique_ptr<tgtest::nginx_server> server_;
  static inline std::string start_failure_;
  static inline bytes data_;
};

TEST(RemoteOptions, SetFromText) {
  io::remote_options o;
  io::set_remote_option(o, "timeout_ms", "1500");
  io::set_remote_option(o, "connect_timeout_ms", "250");
  io::set_remote_option(o, "verify_tls", "false");
  io::set_remote_option(o, "header", "Authorization: Bearer x");
  io::set_remote_option(o, "header.X-Trace", "42");
  EXPECT_EQ(o.timeout_ms, 1500);
  EXPECT_EQ(o.connect_timeout_ms, 250);
  EXPECT_FALSE(o.verify_tls);
  EXPECT_EQ(o.headers, (std::vector<std::string>{"Authorization: Bearer x", "X-Trace: 42"}));
  io::set_remote_option(o, "verify_tls", "1");
  EXPECT_TRUE(o.verify_tls);
  EXPECT_THROW(io::set_remote_option(o, "timeout_ms", "12x"), tensogram::invalid_arg_error);
  EXPECT_THROW(io::set_remote_option(o, "timeout_ms", "-1"), tensogram::invalid_arg_error);
  EXPECT_THROW(io::set_remote_option(o, "verify_tls", "maybe"), tensogram::invalid_arg_error);
  EXPECT_THROW(io::set_remote_option(o, "header", "no colon"), tensogram::invalid_arg_error);
  EXPECT_THROW(io::set_remote_option(o, "aws_access_key_id", "k"), tensogram::invalid_arg_error);
}

// The reference's object-store client keys (spec 08 §3.2, §3.3).
TEST(RemoteOptions, ObjectStoreClientKeys) {
  io::remote_options o;
  const std::pair<const char*, const char*> settings[] = {
      {"TIMEOUT", "1h 30m"},
      {"connect_timeout", "500ms"},
      {"allow_invalid_certificates", "YES"},
      {"user_agent", "tgm/1"},
      {"allow_http", "off"},
      {"pool_max_idle_per_host", "4"},
      {"proxy_url", "http://proxy:3128"},
  };
  for (const auto& [key, value] : settings) io::set_remote_option(o, key, value);
  EXPECT_EQ(o.timeout_ms, 5400000);
  EXPECT_EQ(o.connect_timeout_ms, 500);
  EXPECT_FALSE(o.verify_tls);
  EXPECT_EQ(o.headers, (std::vector<std::string>{"User-Agent: tgm/1"}));
  const auto message_of = [&o](std::string_view key, std::string_view value) {
    try {
      io::set_remote_option(o, key, value);
    } catch (const tensogram::invalid_arg_error& e) {
      return std::string(e.detail());
    }
    return std::string("no error");
  };
  EXPECT_EQ(message_of("timeout", "30"), "Generic Config error: failed to parse \"30\" as Duration");
  EXPECT_EQ(message_of("timeout", "2 fortnights"),
            "Generic Config error: failed to parse \"2 fortnights\" as Duration");
  EXPECT_EQ(message_of("allow_http", "maybe"), "Generic Config error: failed to parse \"maybe\" as boolean");
  EXPECT_EQ(message_of("pool_max_idle_per_host", "-1"),
            "Generic Config error: failed to parse \"-1\" as usize");
  EXPECT_EQ(message_of("http2_max_frame_size", "4294967296"),
            "Generic Config error: failed to parse \"4294967296\" as u32");
  EXPECT_EQ(message_of("user_agent", "a\nb"),
            "Generic Config error: failed to parse \"a\nb\" as HeaderValue");
}

TEST(HttpSourceUrl, IsRemoteUrl) {
  EXPECT_TRUE(io::is_remote_url("http://example.com/a.tgm"));
  EXPECT_TRUE(io::is_remote_url("https://example.com/a.tgm"));
  EXPECT_TRUE(io::is_remote_url("HTTP://EXAMPLE.COM/A.TGM"));
  EXPECT_TRUE(io::is_remote_url("HtTpS://x"));
  EXPECT_TRUE(io::is_remote_url("http://"));
  EXPECT_FALSE(io::is_remote_url(""));
  EXPECT_FALSE(io::is_remote_url("http"));
  EXPECT_FALSE(io::is_remote_url("http:/x"));
  EXPECT_FALSE(io::is_remote_url("https:x"));
  EXPECT_FALSE(io::is_remote_url("ftp://example.com/a.tgm"));
  EXPECT_FALSE(io::is_remote_url("file:///tmp/a.tgm"));
  EXPECT_FALSE(io::is_remote_url("/tmp/http://a.tgm"));
  EXPECT_FALSE(io::is_remote_url(" http://x"));
  EXPECT_FALSE(io::is_remote_url("data/http.tgm"));
}

TEST(HttpSourceUrl, NonHttpUrlIsRejected) {
  EXPECT_THROW((void)io::open_http_source("/tmp/a.tgm"), tensogram::invalid_arg_error);
  EXPECT_THROW((void)io::open_http_source("ftp://host/a.tgm"), tensogram::invalid_arg_error);
}

TEST(HttpSourceUrl, ConstructionDoesNoIo) {
  // Nothing listens on port 1; construction must not notice.
  auto src = io::open_http_source("http://127.0.0.1:1/a.tgm");
  EXPECT_TRUE(src->is_remote());
  EXPECT_EQ(src->describe(), "http://127.0.0.1:1/a.tgm");
  const auto st = src->stats();
  EXPECT_EQ(st.requests, 0u);
  EXPECT_EQ(st.round_trips, 0u);
}

TEST(HttpSourceUrl, CredentialsAreNotShown) {
  auto src = io::open_http_source("http://alice:s3cret@127.0.0.1:1/a.tgm");
  EXPECT_EQ(src->describe().find("s3cret"), std::string::npos) << src->describe();
  io::remote_options opt;
  opt.connect_timeout_ms = 2000;
  auto src2 = io::open_http_source("http://alice:s3cret@127.0.0.1:1/a.tgm", opt);
  const auto msg = remote_error_of([&] { (void)src2->size(); });
  EXPECT_EQ(msg.find("s3cret"), std::string::npos) << msg;
  EXPECT_NE(msg.find("127.0.0.1:1/a.tgm"), std::string::npos) << msg;
}

TEST_F(HttpSource, SizeIsOneHeadDoneOnce) {
  auto src = io::open_http_source(url());
  EXPECT_EQ(src->stats().requests, 0u);
  EXPECT_EQ(src->size(), data_size);
  EXPECT_EQ(src->size(), data_size);
  std::vector<std::thread> threads;
  std::atomic<int> wrong{0};
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&] {
      try {
        if (src->size() != data_size) ++wrong;
      } catch (const std::exception&) {
        ++wrong;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(wrong.load(), 0);
  const auto st = src->stats();
  EXPECT_EQ(st.requests, 1u);
  EXPECT_EQ(st.round_trips, 1u);
  EXPECT_EQ(st.bytes, 0u);
  const auto log = server().requests(1);
  ASSERT_EQ(log.size(), 1u);
  EXPECT_EQ(log[0].method, "HEAD");
  EXPECT_EQ(log[0].uri, "/data.bin");
}

TEST_F(HttpSource, ConcurrentFirstSizeCallsSendOneHead) {
  auto src = io::open_http_source(url());
  std::vector<std::thread> threads;
  std::atomic<int> wrong{0};
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&] {
      try {
        if (src->size() != data_size) ++wrong;
      } catch (const std::exception&) {
        ++wrong;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(src->stats().requests, 1u);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(server().requests(1).size(), 1u);
}

TEST_F(HttpSource, EmptyObjectHasSizeZero) {
  auto src = io::open_http_source(url("empty.bin"));
  EXPECT_EQ(src->size(), 0u);
  const io::byte_range none[1] = {{0, 0}};
  const auto got = src->read(none);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_TRUE(got[0].empty());
}

TEST_F(HttpSource, SingleRangesMatchTheFile) {
  auto src = io::open_http_source(url());
  const std::vector<io::byte_range> cases = {
      {0, 1},         {data_size - 1, 1}, {0, data_size}, {0, 24}, {data_size - 16, 16},
      {12345, 67890}, {1, data_size - 2},
  };
  std::uint64_t bytes_expected = 0;
  for (const auto& r : cases) {
    const auto got = src->read_one(r);
    EXPECT_EQ(got.size(), r.length);
    EXPECT_TRUE(to_bytes(got) == slice(data_, r)) << "range " << r.offset << "+" << r.length;
    bytes_expected += r.length;
  }
  const auto st = src->stats();
  EXPECT_EQ(st.requests, cases.size());
  EXPECT_EQ(st.round_trips, cases.size());
  EXPECT_EQ(st.bytes, bytes_expected);
  // What reached the server: one GET per range with the inclusive Range
  // header, each answered 206 with exactly the bytes asked for.
  const auto log = server().requests(cases.size());
  ASSERT_EQ(log.size(), cases.size());
  for (std::size_t i = 0; i < cases.size(); ++i) {
    EXPECT_EQ(log[i].method, "GET");
    EXPECT_EQ(log[i].status, 206);
    EXPECT_EQ(log[i].range, "bytes=" + std::to_string(cases[i].offset) + "-" +
                                std::to_string(cases[i].offset + cases[i].length - 1));
    EXPECT_EQ(log[i].bytes, cases[i].length);
  }
}

TEST_F(HttpSource, SequentialReadsReuseOneConnection) {
  auto src = io::open_http_source(url());
  (void)src->size();
  for (int i = 0; i < 20; ++i) (void)src->read_one({static_cast<std::uint64_t>(i) * 100, 10});
  const auto log = server().requests(21);
  ASSERT_EQ(log.size(), 21u);
  std::set<std::uint64_t> connections;
  for (const auto& e : log) connections.insert(e.connection);
  EXPECT_EQ(connections.size(), 1u) << "every request of one thread should reuse the kept-alive connection";
}

TEST_F(HttpSource, BatchedRandomRangesMatchTheFile) {
  auto src = io::open_http_source(url());
  std::mt19937_64 rng(7);
  std::uint64_t requests = 0, round_trips = 0, bytes_read = 0;
  for (int batch = 0; batch < 60; ++batch) {
    const std::size_t n = 1 + rng() % 24;  // beyond the 16 parallel transfers at times
    std::vector<io::byte_range> ranges;
    for (std::size_t k = 0; k < n; ++k) {
      const std::uint64_t off = rng() % (data_size + 1);
      std::uint64_t len = 0;
      switch (rng() % 5) {
        case 0: len = 0; break;                // zero-length
        case 1: len = data_size - off; break;  // to the end
        default: len = std::min<std::uint64_t>(data_size - off, rng() % 5000); break;
      }
      ranges.push_back({off, len});
    }
    if (batch == 0) ranges.push_back({0, 1});
    if (batch == 1) ranges.push_back({data_size - 1, 1});
    const auto got = src->read(ranges);
    ASSERT_EQ(got.size(), ranges.size());
    bool any = false;
    for (std::size_t k = 0; k < ranges.size(); ++k) {
      ASSERT_EQ(got[k].size(), ranges[k].length);
      ASSERT_TRUE(to_bytes(got[k]) == slice(data_, ranges[k]))
          << "batch " << batch << " range " << ranges[k].offset << "+" << ranges[k].length;
      if (ranges[k].length > 0) {
        ++requests;
        bytes_read += ranges[k].length;
        any = true;
      }
    }
    if (any) ++round_trips;
  }
  const auto st = src->stats();
  EXPECT_EQ(st.requests, requests);
  EXPECT_EQ(st.round_trips, round_trips);
  EXPECT_EQ(st.bytes, bytes_read);
  EXPECT_EQ(server().requests(requests).size(), requests);
}

TEST_F(HttpSource, ZeroLengthRangesSendNothing) {
  auto src = io::open_http_source(url());
  const std::vector<io::byte_range> ranges = {{0, 0}, {500, 0}, {data_size, 0}};
  const auto got = src->read(ranges);
  ASSERT_EQ(got.size(), 3u);
  for (const auto& b : got) EXPECT_TRUE(b.empty());
  const auto st = src->stats();
  EXPECT_EQ(st.requests, 0u);
  EXPECT_EQ(st.round_trips, 0u);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_TRUE(server().access_log().empty());
}

TEST_F(HttpSource, BatchOfTwoIsOneRoundTrip) {
  // The scan's round: a forward preamble probe and a backward postamble
  // probe in one call (spec 01 §16.4).
  auto src = io::open_http_source(url());
  const std::vector<io::byte_range> ranges = {{0, 24}, {data_size - 24, 24}};
  for (int round = 0; round < 5; ++round) {
    const auto got = src->read(ranges);
    EXPECT_TRUE(to_bytes(got[0]) == slice(data_, ranges[0]));
    EXPECT_TRUE(to_bytes(got[1]) == slice(data_, ranges[1]));
  }
  const auto st = src->stats();
  EXPECT_EQ(st.requests, 10u);
  EXPECT_EQ(st.round_trips, 5u);
  // Served concurrently over (at most) two kept-alive connections.
  std::set<std::uint64_t> connections;
  for (const auto& e : server().requests(10)) connections.insert(e.connection);
  EXPECT_LE(connections.size(), 2u);
}

TEST_F(HttpSource, EightThreadsReadConcurrently) {
  auto src = io::open_http_source(url());
  std::atomic<int> mismatches{0};
  std::atomic<std::uint64_t> nonempty{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937_64 rng(1000 + static_cast<std::uint64_t>(t));
      for (int i = 0; i < 60; ++i) {
        std::vector<io::byte_range> ranges(1 + rng() % 3);
        for (auto& r : ranges) {
          r.offset = rng() % data_size;
          r.length = 1 + rng() % std::min<std::uint64_t>(data_size - r.offset, 20000);
        }
        try {
          const auto got = src->read(ranges);
          for (std::size_t k = 0; k < ranges.size(); ++k) {
            if (to_bytes(got[k]) != slice(data_, ranges[k])) ++mismatches;
          }
          nonempty += ranges.size();
        } catch (const std::exception&) {
          ++mismatches;
        }
        if (i % 20 == 0 && src->size() != data_size) ++mismatches;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(mismatches.load(), 0);
  const auto st = src->stats();
  EXPECT_EQ(st.requests, nonempty.load() + 1);  // + the one HEAD
  EXPECT_EQ(st.round_trips, 8u * 60u + 1u);
}

TEST_F(HttpSource, NotFoundIsARemoteError) {
  auto src = io::open_http_source(url("missing.tgm"));
  auto msg = remote_error_of([&] { (void)src->size(); });
  EXPECT_NE(msg.find("remote error: "), std::string::npos) << msg;
  EXPECT_NE(msg.find(url("missing.tgm")), std::string::npos) << msg;
  EXPECT_NE(msg.find("404"), std::string::npos) << msg;
  auto src2 = io::open_http_source(url("missing.tgm"));
  msg = remote_error_of([&] { (void)src2->read_one({10, 20}); });
  EXPECT_NE(msg.find(url("missing.tgm")), std::string::npos) << msg;
  EXPECT_NE(msg.find("404"), std::string::npos) << msg;
  EXPECT_NE(msg.find("bytes [10, 30)"), std::string::npos) << msg;
  // A failed size probe is not cached: asking again asks the server again.
  (void)remote_error_of([&] { (void)src->size(); });
  EXPECT_EQ(src->stats().requests, 2u);
}

TEST_F(HttpSource, RangeBeyondKnownSizeFailsWithoutRequest) {
  auto src = io::open_http_source(url());
  (void)src->size();
  const auto before = src->stats().requests;
  const auto msg = remote_error_of([&] { (void)src->read_one({data_size - 10, 11}); });
  EXPECT_NE(msg.find(url()), std::string::npos) << msg;
  EXPECT_NE(msg.find("beyond the end"), std::string::npos) << msg;
  EXPECT_NE(msg.find("bytes [" + std::to_string(data_size - 10) + ", " + std::to_string(data_size + 1) + ")"),
            std::string::npos)
      << msg;
  EXPECT_EQ(src->stats().requests, before);
  (void)remote_error_of([&] { (void)src->read_one({data_size + 100, 1}); });
  (void)remote_error_of([&] {
    (void)src->read_one({~std::uint64_t{0} - 3, 10});
  });  // offset + length overflows
}

TEST_F(HttpSource, RangeBeyondEndDetectedFromTheReply) {
  // Size not asked for: the server's reply must reveal the problem.
  {
    auto src = io::open_http_source(url());
    const auto msg = remote_error_of([&] { (void)src->read_one({data_size - 10, 20}); });  // short 206
    EXPECT_NE(msg.find("beyond the end"), std::string::npos) << msg;
    EXPECT_NE(msg.find(std::to_string(data_size)), std::string::npos) << msg;
  }
  {
    auto src = io::open_http_source(url());
    const auto msg = remote_error_of([&] { (void)src->read_one({data_size + 10, 5}); });  // 416
    EXPECT_NE(msg.find("beyond the end"), std::string::npos) << msg;
    EXPECT_NE(msg.find("416"), std::string::npos) << msg;
  }
  {
    // One bad range fails the whole batch.
    auto src = io::open_http_source(url());
    const std::vector<io::byte_range> ranges = {{0, 10}, {data_size, 1}, {20, 10}};
    (void)remote_error_of([&] { (void)src->read(ranges); });
    // The source still works afterwards.
    EXPECT_TRUE(to_bytes(src->read_one({5, 5})) == slice(data_, {5, 5}));
  }
}

TEST_F(HttpSource, ServerIgnoringRangesStillGivesTheRightBytes) {
  auto src = io::open_http_source(url("norange/data.bin"));
  EXPECT_EQ(src->size(), data_size);
  const std::vector<io::byte_range> ranges = {{0, 24}, {data_size - 24, 24}, {4096, 10000}};
  const auto got = src->read(ranges);
  for (std::size_t k = 0; k < ranges.size(); ++k)
    EXPECT_TRUE(to_bytes(got[k]) == slice(data_, ranges[k])) << k;
  // The server really did answer 200 with the whole body.
  bool saw_200 = false;
  for (const auto& e : server().requests(4)) saw_200 = saw_200 || (e.method == "GET" && e.status == 200);
  EXPECT_TRUE(saw_200);
  auto fresh = io::open_http_source(url("norange/data.bin"));
  const auto msg = remote_error_of([&] { (void)fresh->read_one({data_size - 5, 10}); });
  EXPECT_NE(msg.find("beyond the end"), std::string::npos) << msg;
}

TEST_F(HttpSource, SizeFallsBackToARangeGetWhenHeadIsRefused) {
  auto src = io::open_http_source(url("nohead/data.bin"));
  EXPECT_EQ(src->size(), data_size);
  EXPECT_EQ(src->stats().requests, 2u);
  EXPECT_TRUE(to_bytes(src->read_one({100, 50})) == slice(data_, {100, 50}));
}

TEST_F(HttpSource, SizeProbeStopsAFullBodyReply) {
  // Neither HEAD nor Range: the probe's 200 reply gives the size from its
  // Content-Length, and the download is cut short (not the whole object).
  auto src = io::open_http_source(url("nohead-norange/data.bin"));
  EXPECT_EQ(src->size(), data_size);
  EXPECT_EQ(src->stats().requests, 2u);
  const auto log = server().requests(2);
  ASSERT_EQ(log.size(), 2u);
  EXPECT_EQ(log[1].status, 200);
  EXPECT_TRUE(to_bytes(src->read_one({data_size - 7, 7})) == slice(data_, {data_size - 7, 7}));
}

TEST_F(HttpSource, RedirectsAreFollowed) {
  auto src = io::open_http_source(url("redirect.bin"));
  EXPECT_EQ(src->size(), data_size);
  EXPECT_TRUE(to_bytes(src->read_one({777, 333})) == slice(data_, {777, 333}));
}

TEST_F(HttpSource, ExtraHeadersAreSent) {
  auto denied = io::open_http_source(url("guarded/data.bin"));
  const auto msg = remote_error_of([&] { (void)denied->size(); });
  EXPECT_NE(msg.find("403"), std::string::npos) << msg;
  io::remote_options opt;
  opt.headers = {"X-Token: secret"};
  auto allowed = io::open_http_source(url("guarded/data.bin"), opt);
  EXPECT_EQ(allowed->size(), data_size);
  EXPECT_TRUE(to_bytes(allowed->read_one({1, 2})) == slice(data_, {1, 2}));
}

TEST_F(HttpSource, TlsToAPlainServerIsARemoteError) {
  io::remote_options opt;
  opt.timeout_ms = 5000;
  opt.verify_tls = false;
  auto src = io::open_http_source("https://127.0.0.1:" + std::to_string(server().port()) + "/data.bin", opt);
  const auto msg = remote_error_of([&] { (void)src->size(); });
  EXPECT_NE(msg.find("https://127.0.0.1"), std::string::npos) << msg;
}

// Own servers: these tests kill or freeze theirs.
TEST(HttpSourceFailures, ServerKilledMidTestIsARemoteError) {
  TGTEST_SKIP_WITHOUT_NGINX();
  tgtest::temp_dir dir;
  const auto data = random_bytes(10000, 3);
  write_file(dir.path() / "d.bin", data);
  tgtest::nginx_server srv(dir.path());
  io::remote_options opt;
  opt.timeout_ms = 5000;
  opt.connect_timeout_ms = 2000;
  auto src = io::open_http_source(srv.url("d.bin"), opt);
  EXPECT_EQ(src->size(), data.size());
  EXPECT_TRUE(to_bytes(src->read_one({0, 100})) == slice(data, {0, 100}));
  srv.stop();
  const auto t0 = std::chrono::steady_clock::now();
  const std::vector<io::byte_range> ranges = {{0, 24}, {9000, 24}};
  const auto msg = remote_error_of([&] { (void)src->read(ranges); });
  const auto elapsed = std::chrono::steady_clock::now() - t0;
  EXPECT_LT(elapsed, std::chrono::seconds(10));
  EXPECT_NE(msg.find(srv.url("d.bin")), std::string::npos) << msg;
  EXPECT_NE(msg.find("bytes ["), std::string::npos) << msg;
  // A fresh source of a dead server fails its size probe the same way.
  auto fresh = io::open_http_source(srv.url("d.bin"), opt);
  (void)remote_error_of([&] { (void)fresh->size(); });
}

TEST(HttpSourceFailures, UnresponsiveServerTimesOut) {
  TGTEST_SKIP_WITHOUT_NGINX();
  tgtest::temp_dir dir;
  const auto data = random_bytes(10000, 4);
  write_file(dir.path() / "d.bin", data);
  tgtest::nginx_server srv(dir.path());
  io::remote_options opt;
  opt.timeout_ms = 700;
  opt.connect_timeout_ms = 700;
  auto src = io::open_http_source(srv.url("d.bin"), opt);
  EXPECT_EQ(src->size(), data.size());
  srv.pause();  // the kernel still accepts; nginx never answers
  const auto t0 = std::chrono::steady_clock::now();
  const auto msg = remote_error_of([&] { (void)src->read_one({0, 100}); });
  const auto elapsed = std::chrono::steady_clock::now() - t0;
  srv.resume();
  EXPECT_LT(elapsed, std::chrono::seconds(5));
  EXPECT_GE(elapsed, std::chrono::milliseconds(500));
  EXPECT_NE(msg.find("imeout"), std::string::npos) << msg;  // "Timeout was reached"
  // Once the server answers again the same source recovers.
  EXPECT_TRUE(to_bytes(src->read_one({0, 100})) == slice(data, {0, 100}));
}

}  // namespace
