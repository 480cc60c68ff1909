// tensogram::file over HTTP range requests (spec 04 Part E.3) against nginx
// on loopback: every fixture reads the same as the local file, and the
// request counts stay within what the format allows: opening costs nothing,
// listing N messages costs about N/2 round trips (spec 01 §16.4), and one
// object costs its message's layout once plus its own frame.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <iomanip>
#include <iostream>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "io_test_support.hpp"
#include "nginx_server.hpp"
#include "tensogram/io/file.hpp"
#include "tensogram/message/streaming_encoder.hpp"

namespace {

using tensogram::file;
using tensogram::scan_mode;
using tgtest::bytes;

// Bytes a layout load may read from one end of a message (spec 04 E.3:
// "up to 256 KiB of its header region").
constexpr std::uint64_t layout_region = 256 * 1024;

// Big messages: objects larger than the layout region, so that reading one
// object really is a separate request from reading the layout.
constexpr std::size_t big_messages = 3;
constexpr std::size_t big_objects = 3;
constexpr std::size_t big_elements = 100000;  // 400 kB per float32 object

bytes big_footer_message(std::uint64_t seed, const std::filesystem::path& scratch) {
  // The streaming encoder writes the index in the footer (spec 01 §18).
  tensogram::global_metadata meta;
  meta.extra.set("step", tensogram::cbor::value(seed));
  tensogram::encode_options o;
  o.fixed_provenance = tgtest::test_provenance();
  {
    tensogram::streaming_encoder enc(scratch, meta, o);
    for (std::size_t k = 0; k < big_objects; ++k) {
      std::vector<float> v(big_elements);
      for (std::size_t e = 0; e < big_elements; ++e) v[e] = tgtest::expected_value(seed, k, e);
      enc.write_object(
          tensogram::data_object_descriptor::contiguous(tensogram::dtype::float32, {big_elements}),
          std::as_bytes(std::span<const float>(v)));
    }
    (void)enc.finish();
  }
  return tgtest::read_bytes(scratch);
}

void append(bytes& to, const bytes& b) {
  to.insert(to.end(), b.begin(), b.end());
}

std::uint64_t ceil_half(std::uint64_t n) {
  return (n + 1) / 2;
}

class RemoteFile : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (tgtest::nginx_unavailable()) return;
    try {
      dir_ = std::make_unique<tgtest::temp_dir>();
      for (const std::string& name : tgtest::all_fixtures()) {
        tgtest::write_bytes(dir_->path() / name, tgtest::read_fixture(name));
      }
      // Truncated copies: cut in the middle of the last message.
      for (const char* name : {"ten-msg.tgm", "ten-msg-footer.tgm", "hundred-msg-footer.tgm"}) {
        bytes b = tgtest::read_fixture(name);
        const auto last = tensogram::scan(b).back();
        b.resize(last.offset + last.length / 2);
        tgtest::write_bytes(dir_->path() / (std::string("truncated-") + name), b);
      }
      bytes big, big_footer;
      for (std::uint64_t m = 0; m < big_messages; ++m) {
        append(big, tgtest::make_message(m + 1, big_objects, big_elements));
        append(big_footer, big_footer_message(m + 1, dir_->path() / "scratch.tgm"));
      }
      tgtest::write_bytes(dir_->path() / "big.tgm", big);
      tgtest::write_bytes(dir_->path() / "big-footer.tgm", big_footer);
      std::filesystem::remove(dir_->path() / "scratch.tgm");
      server_ = std::make_unique<tgtest::nginx_server>(dir_->path());
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

  static std::string url(const std::string& name) { return server_->url(name); }
  static std::filesystem::path local(const std::string& name) { return dir_->path() / name; }
  static file remote(const std::string& name, scan_mode mode = scan_mode::bidirectional) {
    return file::open_remote(url(name), {}, mode);
  }

  static inline std::unique_ptr<tgtest::temp_dir> dir_;
  static inline std::unique_ptr<tgtest::nginx_server> server_;
  static inline std::string start_failure_;
};

void expect_same_buffers(const std::vector<tensogram::buffer>& a, const std::vector<tensogram::buffer>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t r = 0; r < a.size(); ++r) {
    ASSERT_EQ(a[r].size(), b[r].size()) << "part " << r;
    EXPECT_EQ(0, a[r].empty() ? 0 : std::memcmp(a[r].data(), b[r].data(), a[r].size())) << "part " << r;
  }
}

// Every read of `name` through HTTP equals the same read of the local file.
// Files of many messages are sampled (every message is listed and compared
// by extent; a spread of them is decoded) to keep the test fast.
void expect_remote_equals_local(file& r, file& l) {
  ASSERT_EQ(r.message_count(), l.message_count());
  EXPECT_EQ(r.message_extents(), l.message_extents());
  const std::size_t count = l.message_count();
  const std::size_t stride = count > 20 ? count / 10 + 1 : 1;
  std::vector<std::size_t> sample;
  for (std::size_t i = 0; i < count; i += stride) sample.push_back(i);
  if (count > 0 && sample.back() != count - 1) sample.push_back(count - 1);
  for (const std::size_t i : sample) {
    SCOPED_TRACE("message " + std::to_string(i));
    EXPECT_EQ(r.message_extent(i), l.message_extent(i));
    EXPECT_EQ(r.read_message(i), l.read_message(i));
    const tensogram::message full = l.decode_message(i);
    tgtest::expect_same_message(r.decode_message(i), full);
    EXPECT_EQ(r.decode_metadata(i).global(), l.decode_metadata(i).global());
    const auto [rmeta, rdesc] = r.decode_descriptors(i);
    const auto [lmeta, ldesc] = l.decode_descriptors(i);
    EXPECT_EQ(rmeta.global(), lmeta.global());
    EXPECT_EQ(rdesc, ldesc);
    for (std::size_t k = 0; k < full.num_objects(); ++k) {
      SCOPED_TRACE("object " + std::to_string(k));
      tgtest::expect_same_message(r.decode_object(i, k), l.decode_object(i, k));
      const std::uint64_t n = full.object(k).descriptor().element_count();
      const std::vector<std::pair<std::uint64_t, std::uint64_t>> ranges = {
          {0, n}, {n / 3, n - n / 3}, {n - 1, 1}};
      expect_same_buffers(r.decode_range(i, k, ranges), l.decode_range(i, k, ranges));
    }
    EXPECT_THROW((void)r.decode_object(i, full.num_objects()), tensogram::object_error);
  }
  EXPECT_THROW((void)r.message_bytes(l.message_count()), tensogram::framing_error);
}

TEST_F(RemoteFile, EveryFixtureReadsAsTheLocalFile) {
  for (const std::string& name : tgtest::all_fixtures()) {
    for (const scan_mode mode : {scan_mode::bidirectional, scan_mode::forward}) {
      SCOPED_TRACE(name + (mode == scan_mode::forward ? " (forward)" : " (bidirectional)"));
      file r = remote(name, mode);
      file l = file::open(local(name), mode);
      EXPECT_TRUE(r.is_remote());
      EXPECT_EQ(r.source_name(), url(name));
      EXPECT_TRUE(r.path().empty());
      expect_remote_equals_local(r, l);
    }
  }
}

TEST_F(RemoteFile, BigMessagesReadAsTheLocalFile) {
  for (const char* name : {"big.tgm", "big-footer.tgm"}) {
    SCOPED_TRACE(name);
    file r = remote(name);
    file l = file::open(local(name));
    ASSERT_EQ(l.message_count(), big_messages);
    expect_remote_equals_local(r, l);
  }
}

TEST_F(RemoteFile, OpenSourceDetectsUrls) {
  file r = file::open_source(url("ten-msg.tgm"));
  EXPECT_TRUE(r.is_remote());
  EXPECT_EQ(r.message_count(), 10u);
  file l = file::open_source(local("ten-msg.tgm").string());
  EXPECT_FALSE(l.is_remote());
}

TEST_F(RemoteFile, OpenDoesNoIo) {
  server_->clear_access_log();
  file r = file::open_remote(url("thousand-msg.tgm"));
  file missing = file::open_remote(url("no-such-file.tgm"));
  EXPECT_EQ(r.source().stats().requests, 0u);
  EXPECT_EQ(r.source().stats().round_trips, 0u);
  EXPECT_EQ(missing.source().stats().requests, 0u);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_TRUE(server_->access_log().empty());
}

TEST_F(RemoteFile, MissingFileIsARemoteError) {
  file missing = file::open_remote(url("no-such-file.tgm"));
  try {
    (void)missing.message_count();
    ADD_FAILURE() << "expected remote_error";
  } catch (const tensogram::remote_error& e) {
    EXPECT_NE(std::string(e.what()).find(url("no-such-file.tgm")), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("404"), std::string::npos) << e.what();
  }
}

// Listing cost (spec 01 §16.4, spec 04 E.3): the bidirectional scan confirms
// one message from each end per round, one batched read (round trip) each.
TEST_F(RemoteFile, ListingCostsAboutHalfARoundTripPerMessage) {
  struct row {
    std::string name;
    std::uint64_t n, bi_requests, bi_round_trips, fwd_requests, fwd_round_trips;
  };
  std::vector<row> table;
  for (const char* name :
       {"single-msg.tgm", "ten-msg.tgm", "hundred-msg.tgm", "thousand-msg.tgm", "single-msg-footer.tgm",
        "ten-msg-footer.tgm", "hundred-msg-footer.tgm", "thousand-msg-footer.tgm"}) {
    SCOPED_TRACE(name);
    const std::uint64_t n = tensogram::scan(tgtest::read_fixture(name)).size();
    server_->clear_access_log();
    file bi = remote(name);
    ASSERT_EQ(bi.message_count(), n);
    const auto sb = bi.source().stats();
    // 1 HEAD + ceil(N/2) rounds + 2 (the pipelined first and last probes).
    EXPECT_LE(sb.round_trips, 1 + ceil_half(n) + 2);
    EXPECT_LE(sb.requests, 1 + 2 * (ceil_half(n) + 2));
    // Probes only: preambles and postamble tails, never whole messages.
    EXPECT_LE(sb.bytes, sb.requests * 40);
    // The server saw exactly what the source counted.
    EXPECT_EQ(server_->requests_for("/" + std::string(name), sb.requests).size(), sb.requests);

    server_->clear_access_log();
    file fw = remote(name, scan_mode::forward);
    ASSERT_EQ(fw.message_count(), n);
    const auto sf = fw.source().stats();
    EXPECT_GE(sf.round_trips, 1 + n);
    EXPECT_LE(sf.round_trips, 1 + n + 1);
    EXPECT_EQ(sf.requests, sf.round_trips);
    EXPECT_EQ(server_->requests_for("/" + std::string(name), sf.requests).size(), sf.requests);
    // Listing again costs nothing: the list is kept.
    EXPECT_EQ(bi.message_extents().size(), n);
    EXPECT_EQ(bi.source().stats().requests, sb.requests);
    table.push_back({name, n, sb.requests, sb.round_trips, sf.requests, sf.round_trips});
  }
  // For the benchmark notes.
  std::cout << "listing cost over HTTP (requests / round trips, HEAD included):\n";
  for (const auto& r : table) {
    std::cout << "  " << std::left << std::setw(26) << r.name << " N=" << std::setw(5) << r.n
              << " bidirectional " << r.bi_requests << " / " << r.bi_round_trips << "   forward "
              << r.fwd_requests << " / " << r.fwd_round_trips << "\n";
  }
}

// Random access to small messages: the layout read (up to 256 KiB) takes the
// whole message, so the first object costs one request and every other
// object of that message one more (its frame).
TEST_F(RemoteFile, DecodeObjectCostOnSmallMessages) {
  for (const char* name : {"multi_object.tgm", "hundred-msg.tgm", "hundred-msg-footer.tgm"}) {
    SCOPED_TRACE(name);
    file r = remote(name);
    file l = file::open(local(name));
    const std::size_t n = r.message_count();
    for (const std::size_t i : {std::size_t{0}, n / 2, n - 1}) {
      SCOPED_TRACE("message " + std::to_string(i));
      const std::size_t objects = l.decode_message(i).num_objects();
      const auto before = r.source().stats();
      tgtest::expect_same_message(r.decode_object(i, objects - 1), l.decode_object(i, objects - 1));
      const auto first = r.source().stats();
      EXPECT_LE(first.requests - before.requests, 2u);
      EXPECT_LE(first.bytes - before.bytes, r.message_extent(i).length);
      for (std::size_t k = 0; k < objects; ++k) {
        tgtest::expect_same_message(r.decode_object(i, k), l.decode_object(i, k));
      }
      EXPECT_EQ(r.source().stats().requests - first.requests, objects);
    }
  }
}

// Random access to big messages: the layout region once, then only the
// object's own frame (spec 04 E.3 "decode_object then fetches only that
// object's frame").
TEST_F(RemoteFile, DecodeObjectAndRangeFetchOnlyTheFrame) {
  for (const char* name : {"big.tgm", "big-footer.tgm"}) {
    SCOPED_TRACE(name);
    const bool footer = std::string(name) == "big-footer.tgm";
    file r = remote(name);
    file l = file::open(local(name));
    ASSERT_EQ(r.message_count(), big_messages);
    const auto msg = tensogram::buffer::owned(tgtest::read_bytes(local(name)));
    for (std::size_t i = 0; i < big_messages; ++i) {
      SCOPED_TRACE("message " + std::to_string(i));
      const auto e = l.message_extent(i);
      const auto layout = tensogram::read_message_layout(msg.bytes().subspan(e.offset, e.length));
      ASSERT_EQ(layout.objects.size(), big_objects);

      // First access: the layout region(s), then the frame.
      const std::size_t j = (i + 1) % big_objects;
      const auto s0 = r.source().stats();
      tgtest::expect_same_message(r.decode_object(i, j), l.decode_object(i, j));
      const auto s1 = r.source().stats();
      if (i == 0) {
        std::cout << name << ": first decode_object of a message: " << s1.requests - s0.requests
                  << " requests, " << s1.bytes - s0.bytes << " bytes (frame " << layout.objects[j].length
                  << ")\n";
      }
      // Header index: header region + frame. Footer index: the message start
      // (preamble and header metadata) + the footer region + the frame.
      EXPECT_LE(s1.requests - s0.requests, footer ? 3u : 2u);
      EXPECT_LE(s1.bytes - s0.bytes, layout.objects[j].length + (footer ? 2 : 1) * layout_region);

      // Another object of the same message: exactly its frame.
      const std::size_t k = (j + 1) % big_objects;
      tgtest::expect_same_message(r.decode_object(i, k), l.decode_object(i, k));
      const auto s2 = r.source().stats();
      EXPECT_EQ(s2.requests - s1.requests, 1u);
      EXPECT_EQ(s2.bytes - s1.bytes, layout.objects[k].length);

      // A range decode: the frame again, nothing else.
      const std::vector<std::pair<std::uint64_t, std::uint64_t>> ranges = {{10, 5}, {big_elements - 3, 3}};
      expect_same_buffers(r.decode_range(i, k, ranges), l.decode_range(i, k, ranges));
      const auto s3 = r.source().stats();
      EXPECT_EQ(s3.requests - s2.requests, 1u);
      EXPECT_EQ(s3.bytes - s2.bytes, layout.objects[k].length);

      // A range decode of a message whose layout is not cached yet: at most
      // the layout region(s) plus the frame.
      file fresh = remote(name);
      (void)fresh.message_count();
      const auto f0 = fresh.source().stats();
      expect_same_buffers(fresh.decode_range(i, j, ranges), l.decode_range(i, j, ranges));
      const auto f1 = fresh.source().stats();
      EXPECT_LE(f1.bytes - f0.bytes, layout.objects[j].length + (footer ? 2 : 1) * layout_region);
      EXPECT_LE(f1.requests - f0.requests, footer ? 3u : 2u);

      // Metadata only: no object frame.
      const auto m0 = fresh.source().stats();
      EXPECT_EQ(fresh.decode_metadata(i).global(), l.decode_metadata(i).global());
      EXPECT_EQ(fresh.source().stats().requests, m0.requests);  // layout cached by decode_range
    }
  }
}

TEST_F(RemoteFile, DecodeMessageDownloadsTheMessageOnce) {
  file r = remote("big.tgm");
  (void)r.message_count();
  const auto s0 = r.source().stats();
  (void)r.decode_message(1);
  const auto s1 = r.source().stats();
  EXPECT_EQ(s1.requests - s0.requests, 1u);
  EXPECT_EQ(s1.bytes - s0.bytes, r.message_extent(1).length);
}

TEST_F(RemoteFile, TruncatedFileListsTheCompleteMessages) {
  for (const char* name : {"ten-msg.tgm", "ten-msg-footer.tgm", "hundred-msg-footer.tgm"}) {
    for (const scan_mode mode : {scan_mode::bidirectional, scan_mode::forward}) {
      SCOPED_TRACE(std::string(name) + (mode == scan_mode::forward ? " (forward)" : " (bidirectional)"));
      const auto whole = tensogram::scan(tgtest::read_fixture(name));
      file r = remote(std::string("truncated-") + name, mode);
      ASSERT_EQ(r.message_count(), whole.size() - 1);
      const auto got = r.message_extents();
      EXPECT_TRUE(std::equal(got.begin(), got.end(), whole.begin()));
      file l = file::open(local(std::string("truncated-") + name), mode);
      expect_remote_equals_local(r, l);
    }
  }
}

TEST_F(RemoteFile, EightThreadsDecodeObjectsConcurrently) {
  for (const char* name : {"thousand-msg.tgm", "big.tgm"}) {
    SCOPED_TRACE(name);
    file r = remote(name);
    file l = file::open(local(name));
    const std::size_t n = l.message_count();
    std::vector<std::size_t> objects(n);
    for (std::size_t i = 0; i < n; ++i) objects[i] = l.decode_message(i).num_objects();
    std::atomic<int> failures{0};
    std::vector<std::string> errors(8);
    std::vector<std::thread> threads;
    for (int t = 0; t < 8; ++t) {
      threads.emplace_back([&, t] {
        std::mt19937_64 rng(99 + static_cast<std::uint64_t>(t));
        for (int it = 0; it < 40; ++it) {
          const std::size_t i = rng() % n;
          const std::size_t k = rng() % objects[i];
          try {
            const tensogram::message got = r.decode_object(i, k);
            const tensogram::message want = l.decode_object(i, k);
            const auto& a = got.object(0);
            const auto& b = want.object(0);
            if (a.data_size() != b.data_size() || std::memcmp(a.data(), b.data(), a.data_size()) != 0 ||
                got.global() != want.global()) {
              ++failures;
              errors[static_cast<std::size_t>(t)] = "wrong bytes for message " + std::to_string(i);
            }
          } catch (const std::exception& ex) {
            ++failures;
            errors[static_cast<std::size_t>(t)] = ex.what();
          }
        }
      });
    }
    for (auto& th : threads) th.join();
    EXPECT_EQ(failures.load(), 0);
    for (const auto& e : errors) EXPECT_TRUE(e.empty()) << e;
  }
}

}  // namespace
