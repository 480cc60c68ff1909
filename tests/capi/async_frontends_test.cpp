// The reference's C++ async front ends (spec 07 D2.3–D2.5):
// tensogram::async_callback, tensogram::stdfuture and tensogram::coro over
// the C ABI's runtime.
#include <atomic>
#include <chrono>
#include <future>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "capi_test_support.hpp"
#include "tensogram/async/callback.hpp"
#include "tensogram/async/coro.hpp"
#include "tensogram/async/std_future.hpp"
#include "tensogram/core/error.hpp"

namespace {

using namespace capi_test;
namespace tac = tensogram::async_callback;
namespace sf = tensogram::stdfuture;
namespace co = tensogram::coro;
namespace fs = std::filesystem;

/// A file of `n` standard messages.
fs::path sample_file(const std::string& name, int n) {
  const fs::path path = scratch_dir(name) / "f.tgm";
  write_file(path, n);
  return path;
}

template <class T>
tac::result<T> wait_for(const std::function<void(std::function<void(tac::result<T>)>)>& launch) {
  std::promise<tac::result<T>> p;
  auto f = p.get_future();
  launch([&p](tac::result<T> r) { p.set_value(std::move(r)); });
  return f.get();
}

TEST(AsyncCallback, OpenCountDecodeRead) {
  const fs::path path = sample_file("cb", 3);
  tac::result<tac::async_file> opened =
      wait_for<tac::async_file>([&](auto cb) { tac::async_file::open(path.string(), std::move(cb)); });
  ASSERT_TRUE(opened.ok()) << opened.message();
  const tac::async_file file = opened.take();
  const auto count = wait_for<std::size_t>([&](auto cb) { file.message_count(std::move(cb)); });
  ASSERT_TRUE(count.ok());
  EXPECT_EQ(count.value(), 3U);
  auto msg = wait_for<tensogram::message>([&](auto cb) { file.decode_message(1, std::move(cb)); });
  ASSERT_TRUE(msg.ok()) << msg.message();
  EXPECT_EQ(msg.value().num_objects(), 2U);
  EXPECT_EQ(msg.value().object(0).data_as<float>()[4], 5.25f);
  auto md = wait_for<tensogram::metadata>([&](auto cb) { file.decode_metadata(2, std::move(cb)); });
  ASSERT_TRUE(md.ok());
  EXPECT_EQ(md.value().get_string("mars.param"), "2t");
  auto raw = wait_for<std::vector<std::uint8_t>>([&](auto cb) { file.read_message(0, std::move(cb)); });
  ASSERT_TRUE(raw.ok());
  EXPECT_EQ(raw.value().size(), encode_two().size());  // same message, its own uuid
  // An out-of-range index fails in the task, with the C text.
  auto bad = wait_for<tensogram::message>([&](auto cb) { file.decode_message(7, std::move(cb)); });
  EXPECT_FALSE(bad.ok());
  EXPECT_EQ(bad.code(), TGM_ERROR_FRAMING);
  EXPECT_NE(bad.message().find("out of range"), std::string::npos) << bad.message();
}

TEST(AsyncCallback, FailedLaunchCallsBackInline) {
  const fs::path dir = scratch_dir("inline");
  bool called = false;
  tac::async_streaming_encoder::create((dir / "e.tgm").string(), "not json",
                                       [&](tac::result<tac::async_streaming_encoder> r) {
                                         called = true;
                                         EXPECT_FALSE(r.ok());
                                         EXPECT_EQ(r.code(), TGM_ERROR_METADATA);
                                         EXPECT_FALSE(r.message().empty());
                                       });
  EXPECT_TRUE(called);  // before create returned
  const tac::result<int> none;
  EXPECT_FALSE(none.ok());
  EXPECT_EQ(none.code(), TGM_ERROR_OK);
}

TEST(AsyncCallback, CancelledTokenAndTimeout) {
  const fs::path path = sample_file("cancel", 2);
  tac::cancellation_token token;
  EXPECT_FALSE(token.cancelled());
  token.cancel();
  EXPECT_TRUE(token.cancelled());
  auto r = wait_for<tac::async_file>(
      [&](auto cb) { tac::async_file::open(path.string(), std::move(cb), &token); });
  EXPECT_EQ(r.code(), TGM_ERROR_CANCELLED);
  auto missing = wait_for<tac::async_file>(
      [&](auto cb) { tac::async_file::open((path.string() + ".no"), std::move(cb)); });
  EXPECT_EQ(missing.code(), TGM_ERROR_IO);
}

TEST(StdFuture, FileAndTypedErrors) {
  const fs::path path = sample_file("sf", 4);
  sf::async_file file = sf::async_file::open(path.string()).get();
  EXPECT_EQ(file.message_count().get(), 4U);
  EXPECT_EQ(file.decode_message(3).get().object(1).data_as<int16_t>()[3], 1000);
  EXPECT_EQ(file.decode_metadata(0).get().get_int("mars.step"), 12);
  EXPECT_EQ(file.read_message(2).get().size(), encode_two().size());
  EXPECT_THROW((void)sf::async_file::open(path.string() + ".no").get(), tensogram::io_error);
  EXPECT_THROW((void)file.decode_message(9).get(), tensogram::framing_error);
  tac::cancellation_token token;
  token.cancel();
  EXPECT_THROW((void)file.message_count(&token).get(), tensogram::cancelled_error);
  EXPECT_THROW((void)sf::async_file::open_remote("s3://bucket/x.tgm", {}, true).get(),
               tensogram::remote_error);
}

TEST(StdFuture, ManyConcurrentRequests) {
  const fs::path path = sample_file("many", 20);
  const sf::async_file file = sf::async_file::open(path.string()).get();
  std::vector<std::future<tensogram::message>> futures;
  for (int round = 0; round < 10; ++round)
    for (std::size_t i = 0; i < 20; ++i) futures.push_back(file.decode_message(i));
  for (auto& f : futures) EXPECT_EQ(f.get().object(0).data_as<float>()[0], 1.5f);
}

TEST(StdFuture, StreamingEncoder) {
  const fs::path path = scratch_dir("sf_enc") / "e.tgm";
  sf::async_streaming_encoder enc =
      sf::async_streaming_encoder::create(path.string(), R"({"source":"sf"})").get();
  std::vector<std::future<void>> writes;
  for (int i = 0; i < 5; ++i) {
    const int16_t v[4] = {static_cast<int16_t>(i), 1, 2, 3};
    writes.push_back(
        enc.write_object(int16_descriptor_json(), reinterpret_cast<const uint8_t*>(v), sizeof v));
  }
  for (auto& w : writes) w.get();
  EXPECT_EQ(enc.object_count(), 5U);
  EXPECT_EQ(enc.try_object_count().status, sf::async_streaming_encoder::object_count_status::ok);
  enc.finish().get();
  EXPECT_THROW(enc.finish().get(), tensogram::framing_error);  // already finished
  const message_ptr msg = decode_file_message(path);
  ASSERT_EQ(tgm_message_num_objects(msg.get()), 5U);
  for (size_t k = 0; k < 5; ++k)
    EXPECT_EQ(reinterpret_cast<const int16_t*>(tgm_object_data(msg.get(), k, nullptr))[0],
              static_cast<int16_t>(k));
  EXPECT_THROW((void)sf::async_streaming_encoder::create(path.string(), "[").get(),
               tensogram::metadata_error);
}

co::task<std::size_t> count_and_sum(const std::string& path, std::vector<float>& firsts) {
  co::async_file file = co_await co::async_file::open(path);
  const std::size_t n = co_await file.message_count();
  for (std::size_t i = 0; i < n; ++i) {
    const tensogram::message m = co_await file.decode_message(i);
    firsts.push_back(m.object(0).data_as<float>()[i % 6]);
  }
  co_return n;
}

co::task<void> write_three(const std::string& path) {
  co::async_streaming_encoder enc = co_await co::async_streaming_encoder::create(path, "{}");
  for (int i = 0; i < 3; ++i) {
    const int16_t v[4] = {static_cast<int16_t>(10 * i), 0, 0, 0};
    co_await enc.write_object(int16_descriptor_json(), reinterpret_cast<const uint8_t*>(v), sizeof v);
  }
  co_await enc.finish();
}

co::task<int> fails(const std::string& path) {
  co::async_file file = co_await co::async_file::open(path);
  (void)co_await file.decode_message(99);
  co_return 0;
}

TEST(Coro, TasksAwaitersAndForEach) {
  const fs::path path = sample_file("coro", 6);
  std::vector<float> firsts;
  EXPECT_EQ(co::block_on(count_and_sum(path.string(), firsts)), 6U);
  EXPECT_EQ(firsts, f32_values);
  EXPECT_THROW((void)co::block_on(fails(path.string())), tensogram::framing_error);

  const fs::path out = scratch_dir("coro_enc") / "e.tgm";
  co::block_on(write_three(out.string()));
  const message_ptr msg = decode_file_message(out);
  ASSERT_EQ(tgm_message_num_objects(msg.get()), 3U);
  EXPECT_EQ(reinterpret_cast<const int16_t*>(tgm_object_data(msg.get(), 2, nullptr))[0], 20);

  auto visit = [&](std::size_t stop_after, std::size_t& seen) -> co::task<void> {
    co::async_file file = co_await co::async_file::open(path.string());
    co_await co::async_for_each(file, [&](tensogram::message m) {
      EXPECT_EQ(m.num_objects(), 2U);
      return ++seen < stop_after;
    });
  };
  std::size_t all = 0;
  co::block_on(visit(100, all));
  EXPECT_EQ(all, 6U);
  std::size_t two = 0;
  co::block_on(visit(2, two));
  EXPECT_EQ(two, 2U);
}

// Process-wide runtime: configure, shut down with work in flight.
TEST(AsyncFrontends, RuntimeConfigureAndShutdownInFlight) {
  run_isolated([] {
    tac::runtime_configure(2, 1);
    EXPECT_THROW(tac::runtime_configure(2, 1), tensogram::invalid_arg_error);
    const fs::path path = sample_file("shutdown", 50);
    sf::async_file file = sf::async_file::open(path.string()).get();
    std::vector<std::future<tensogram::message>> futures;
    for (std::size_t i = 0; i < 50; ++i) futures.push_back(file.decode_message(i));
    (void)tac::runtime_shutdown_blocking(std::chrono::milliseconds(2000));
    EXPECT_EQ(tac::runtime_shutdown_blocking(std::chrono::milliseconds(0)), 0U);
    // Every future settles: decoded, or cancelled by the shutdown.
    for (auto& f : futures) {
      try {
        (void)f.get();
      } catch (const tensogram::cancelled_error&) {
      }
    }
    EXPECT_THROW((void)file.message_count().get(), tensogram::io_error);  // runtime has been shut down
  });
}

}  // namespace
