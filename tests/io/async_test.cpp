// The std::future file API (tensogram::io) and the thread pool under
// it: results equal the synchronous file's, cancellation and timeouts settle
// futures promptly even while a read is blocked, cancelled work never
// starts, errors keep their type, and handles can go away mid-flight.
//
// Blocking is done with a gate in a custom byte source, never with sleeps:
// "prompt" is asserted as "ready within 5 s while the read is still blocked",
// which holds on a loaded machine and fails outright if the future waited
// for the read.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <typeinfo>
#include <vector>

#include "io_test_support.hpp"
#include "nginx_server.hpp"
#include "tensogram/core/thread_pool.hpp"
#include "tensogram/io/async.hpp"
#include "tensogram/io/file.hpp"
#include "test_support.hpp"

namespace {

namespace tg = tensogram;
namespace af = tensogram::io;
using namespace std::chrono_literals;

constexpr auto generous = 5s;    // "promptly", on a loaded 2-core machine
constexpr auto very_long = 60s;  // waits that only end early on success

// ---- a byte source whose reads can be held at a gate ---------------------------

// Every size() and read() passes the gate; while it is closed they block
// until it opens. Counts calls so tests can prove an operation never ran.
class gate {
 public:
  void close() {
    const std::lock_guard lock(mutex_);
    open_ = false;
  }
  void open() {
    {
      const std::lock_guard lock(mutex_);
      open_ = true;
    }
    changed_.notify_all();
  }
  // Reads throw io_error while set (an I/O failure deep in the file layer).
  void fail_reads(bool on) { fail_ = on; }

  void pass() {
    std::unique_lock lock(mutex_);
    ++calls_;
    if (!open_) {
      ++blocked_;
      changed_.notify_all();
      changed_.wait(lock, [&] { return open_; });
      --blocked_;
    }
    if (fail_) throw tg::io_error("gated source: injected read failure");
  }

  // True once `n` calls are blocked at the gate.
  bool wait_blocked(int n) {
    std::unique_lock lock(mutex_);
    return changed_.wait_for(lock, very_long, [&] { return blocked_ >= n; });
  }
  int calls() const {
    const std::lock_guard lock(mutex_);
    return calls_;
  }
  int blocked() const {
    const std::lock_guard lock(mutex_);
    return blocked_;
  }

 private:
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  bool open_ = true;
  std::atomic<bool> fail_{false};
  int calls_ = 0;
  int blocked_ = 0;
};

// Opens the gate when the test leaves its scope, whatever happened, so no
// worker stays blocked past the test (declare it after the objects that
// might wait for the worker).
struct gate_opener {
  std::shared_ptr<gate> g;
  ~gate_opener() { g->open(); }
};

class gated_source final : public tg::io::byte_source {
 public:
  gated_source(std::unique_ptr<tg::io::byte_source> inner, std::shared_ptr<gate> g)
      : inner_(std::move(inner)), gate_(std::move(g)) {}
  std::uint64_t size() override {
    gate_->pass();
    return inner_->size();
  }
  std::vector<tg::buffer> read(std::span<const tg::io::byte_range> ranges) override {
    gate_->pass();
    return inner_->read(ranges);
  }
  std::string describe() const override { return "gated " + inner_->describe(); }

 private:
  std::unique_ptr<tg::io::byte_source> inner_;
  std::shared_ptr<gate> gate_;
};

tg::file gated_file(const tgtest::bytes& contents, const std::shared_ptr<gate>& g) {
  return tg::file::from_source(
      std::make_unique<gated_source>(tg::io::open_memory_source(tg::buffer::owned(contents), "memory"), g));
}

// ---- comparing outcomes --------------------------------------------------------

template <typename T>
struct outcome {
  std::optional<T> value;
  std::string error_type;  // dynamic type of the exception, empty on success
  std::string error_text;
};

template <typename F>
auto capture(F&& f) -> outcome<std::decay_t<std::invoke_result_t<F&>>> {
  try {
    return {f(), {}, {}};
  } catch (const std::exception& e) {
    return {std::nullopt, typeid(e).name(), e.what()};
  }
}

std::vector<std::byte> copy(std::span<const std::byte> s) {
  return {s.begin(), s.end()};
}

void expect_equal(const tg::message& a, const tg::message& b, const std::string& where) {
  EXPECT_EQ(a.global(), b.global()) << where;
  ASSERT_EQ(a.num_objects(), b.num_objects()) << where;
  for (std::size_t i = 0; i < a.num_objects(); ++i) {
    EXPECT_EQ(a.object(i).descriptor(), b.object(i).descriptor()) << where << " object " << i;
    EXPECT_EQ(a.object(i).data_byte_order(), b.object(i).data_byte_order()) << where << " object " << i;
    EXPECT_EQ(copy(a.object(i).bytes()), copy(b.object(i).bytes())) << where << " object " << i;
  }
}
void expect_equal(const tg::metadata& a, const tg::metadata& b, const std::string& where) {
  EXPECT_EQ(a.global(), b.global()) << where;
}
void expect_equal(const std::pair<tg::metadata, std::vector<tg::data_object_descriptor>>& a,
                  const std::pair<tg::metadata, std::vector<tg::data_object_descriptor>>& b,
                  const std::string& where) {
  expect_equal(a.first, b.first, where);
  EXPECT_EQ(a.second, b.second) << where;
}
void expect_equal(const tg::buffer& a, const tg::buffer& b, const std::string& where) {
  EXPECT_EQ(copy(a.bytes()), copy(b.bytes())) << where;
}
void expect_equal(const std::vector<tg::buffer>& a, const std::vector<tg::buffer>& b,
                  const std::string& where) {
  ASSERT_EQ(a.size(), b.size()) << where;
  for (std::size_t i = 0; i < a.size(); ++i) expect_equal(a[i], b[i], where + " range " + std::to_string(i));
}
template <typename T>
void expect_equal(const T& a, const T& b, const std::string& where) {
  EXPECT_EQ(a, b) << where;
}

// The future's outcome equals the synchronous call's: the same value, or
// an exception of the same type with the same message.
template <typename T, typename Sync>
void expect_same(Sync&& sync, std::future<T> fut, const std::string& where) {
  const auto expected = capture(sync);
  ASSERT_EQ(fut.wait_for(very_long), std::future_status::ready) << where;
  const auto actual = capture([&] { return fut.get(); });
  EXPECT_EQ(actual.error_type, expected.error_type) << where << ": " << actual.error_text;
  EXPECT_EQ(actual.error_text, expected.error_text) << where;
  if (expected.value && actual.value) expect_equal(*expected.value, *actual.value, where);
}

// Ready within `generous` and failing with exactly `E`; returns the message.
template <typename E, typename T>
std::string expect_fails_with(std::future<T>& fut, const std::string& where) {
  if (fut.wait_for(generous) != std::future_status::ready) {
    ADD_FAILURE() << where << ": future not ready within 5 s";
    return {};
  }
  try {
    (void)fut.get();
    ADD_FAILURE() << where << ": expected " << typeid(E).name() << ", got a value";
  } catch (const E& e) {
    EXPECT_EQ(typeid(e), typeid(E)) << where << ": " << e.what();
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << where << ": expected " << typeid(E).name() << ", got " << typeid(e).name() << ": "
                  << e.what();
  }
  return {};
}

// Waits for every task queued on `pool` before now (a one-worker pool runs
// them in order).
void drain(tg::thread_pool& pool) {
  auto done = pool.submit([] {});
  ASSERT_EQ(done.wait_for(very_long), std::future_status::ready);
}

// ---- a generated file with compressed objects ----------------------------------------

std::uint64_t elements(const tg::data_object_descriptor& d) {
  return d.element_count();
}

// `messages` messages of four objects each: raw float32, zstd int16, lz4
// uint8 and big-endian float64 (swapped on decode).
tgtest::bytes generated_file(std::size_t messages) {
  std::mt19937_64 rng(42);
  tgtest::bytes out;
  for (std::size_t m = 0; m < messages; ++m) {
    std::vector<tg::data_object_descriptor> ds;
    ds.push_back(tg::data_object_descriptor::contiguous(tg::dtype::float32, {16, 8 + m}));
    ds.push_back(tg::data_object_descriptor::contiguous(tg::dtype::int16, {100 + 3 * m}));
    ds.back().compression = "zstd";
    ds.push_back(tg::data_object_descriptor::contiguous(tg::dtype::uint8, {3, 5, 7}));
    ds.back().compression = "lz4";
    ds.push_back(tg::data_object_descriptor::contiguous(tg::dtype::float64, {50}, tg::byte_order::big));
    std::vector<tgtest::random_sample> samples;
    std::vector<tg::object_input> inputs;
    tg::global_metadata meta;
    for (const auto& d : ds) {
      samples.push_back(tgtest::make_random_sample(d.dtype, elements(d), rng, true));
      meta.base.push_back(tg::cbor::value::make_map({{"message", tg::cbor::value(std::uint64_t{m})}}));
    }
    for (std::size_t i = 0; i < ds.size(); ++i)
      inputs.push_back({ds[i], samples[i].in(ds[i].effective_byte_order())});
    tg::encode_options options;
    options.fixed_provenance = tgtest::test_provenance();
    const auto msg = tg::encode(meta, inputs, options);
    out.insert(out.end(), msg.begin(), msg.end());
  }
  return out;
}

// A file on disk, removed with its directory at the end of the test.
class temp_file {
 public:
  explicit temp_file(const tgtest::bytes& contents) : path_(dir_ / "generated.tgm") {
    tgtest::write_bytes(path_, contents);
  }
  [[nodiscard]] const std::filesystem::path& path() const noexcept { return path_; }

 private:
  tgtest::temp_dir dir_;
  std::filesystem::path path_;
};

// Ranges touching the start, middle and end of an object of `n` elements.
std::vector<std::pair<std::uint64_t, std::uint64_t>> probe_ranges(std::uint64_t n) {
  if (n == 0) return {{0, 0}};
  return {{0, 1}, {n / 2, std::max<std::uint64_t>(1, n / 4)}, {n - 1, 1}};
}

// Every operation of `a` against the same call on `s` (the same file opened
// synchronously), message by message and object by object.
void compare_all(const af::async_file& a, tg::file& s, const std::string& name) {
  expect_same([&] { return s.message_count(); }, a.message_count_async(), name + " count");
  expect_same([&] { return s.message_extents(); }, a.message_extents_async(), name + " extents");
  // Every message of small files; the first, middle and last few of big ones
  // (thousand-msg has a thousand identical-looking messages).
  const std::size_t count = s.message_count();
  std::vector<std::size_t> indices;
  for (std::size_t i = 0; i < count; ++i)
    if (count <= 12 || i < 4 || i + 4 >= count || i == count / 2) indices.push_back(i);
  for (const std::size_t i : indices) {
    const std::string at = name + " message " + std::to_string(i);
    expect_same([&] { return s.read_message(i); }, a.read_message_async(i), at + " read_message");
    expect_same([&] { return s.message_bytes(i); }, a.message_bytes_async(i), at + " message_bytes");
    expect_same([&] { return s.decode_message(i); }, a.decode_message_async(i), at + " decode_message");
    tg::decode_options declared;
    declared.native_byte_order = false;
    expect_same([&] { return s.decode_message(i, declared); }, a.decode_message_async(i, declared),
                at + " decode_message declared order");
    expect_same([&] { return s.decode_metadata(i); }, a.decode_metadata_async(i), at + " decode_metadata");
    expect_same([&] { return s.decode_descriptors(i); }, a.decode_descriptors_async(i),
                at + " decode_descriptors");
    const auto descriptors = s.decode_descriptors(i).second;
    for (std::size_t j = 0; j < descriptors.size(); ++j) {
      const std::string obj = at + " object " + std::to_string(j);
      expect_same([&] { return s.decode_object(i, j); }, a.decode_object_async(i, j), obj + " decode_object");
      const auto ranges = probe_ranges(descriptors[j].element_count());
      expect_same([&] { return s.decode_range(i, j, ranges); }, a.decode_range_async(i, j, ranges),
                  obj + " decode_range");
    }
    // One past the last object: the same error both ways.
    expect_same([&] { return s.decode_object(i, descriptors.size()); },
                a.decode_object_async(i, descriptors.size()), at + " object out of range");
  }
}

// ---- async_executor and on_settled ----------------------------------------------------

TEST(AsyncExecutor, RunsWorkAndCallsTheHookAfterTheFutureIsReady) {
  const af::async_executor exec(std::make_shared<tg::thread_pool>(2));
  EXPECT_EQ(exec.pool()->size(), 2u);
  std::atomic<int> ran{0};
  std::promise<bool> hook_saw_ready;
  std::shared_future<void> shared;
  std::mutex mu;
  af::async_options options;
  options.on_settled = [&] {
    const std::lock_guard lock(mu);
    hook_saw_ready.set_value(shared.valid() ? shared.wait_for(0s) == std::future_status::ready : true);
  };
  {
    const std::lock_guard lock(mu);  // the hook waits until `shared` is set
    shared = exec.run(
                     "work", [&] { ran.fetch_add(1); }, options)
                 .share();
  }
  EXPECT_TRUE(hook_saw_ready.get_future().get());
  shared.get();
  EXPECT_EQ(ran.load(), 1);
  auto failing = exec.run("failing", [] { throw tg::io_error("disk gone"); });
  EXPECT_THROW(failing.get(), tg::io_error);
  EXPECT_THROW((void)exec.run("empty", nullptr), tg::invalid_arg_error);
}

TEST(AsyncExecutor, CancelAndTimeoutSettleOnceAndCallTheHookOnce) {
  const af::async_executor exec(std::make_shared<tg::thread_pool>(1));
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  auto blocker = exec.run("blocker", [released] { released.wait(); });
  std::atomic<int> hooks{0};
  std::atomic<bool> second_ran{false};
  af::async_options cancelled;
  cancelled.on_settled = [&] { hooks.fetch_add(1); };
  auto queued = exec.run(
      "queued", [&] { second_ran = true; }, cancelled);
  cancelled.token.cancel();
  EXPECT_EQ(hooks.load(), 1);  // on the cancelling thread, before cancel() returned
  EXPECT_THROW(queued.get(), tg::cancelled_error);
  af::async_options timed;
  timed.timeout = 20ms;
  // The hook runs after the future is ready, on the thread that timed it out:
  // `expiring.get()` can return before it has run, so wait for it explicitly.
  std::promise<void> timed_hook_ran;
  std::atomic<int> timed_hooks{0};
  timed.on_settled = [&] {
    hooks.fetch_add(1);
    if (timed_hooks.fetch_add(1) == 0) timed_hook_ran.set_value();
  };
  auto expiring = exec.run(
      "expiring", [] {}, timed);
  EXPECT_THROW(expiring.get(), tg::timeout_error);
  ASSERT_EQ(timed_hook_ran.get_future().wait_for(very_long), std::future_status::ready);
  release.set_value();
  blocker.get();
  // Both were skipped: settled while queued.
  auto after = exec.run("after", [] {});
  after.get();
  EXPECT_FALSE(second_ran.load());
  EXPECT_EQ(hooks.load(), 2);  // once each
}

TEST(AsyncFile, OnSettledIsCalledForFileOperations) {
  const auto path = tgtest::fixture_path("multi_message.tgm");
  const af::async_file f = af::async_file::open(path).get();
  std::promise<void> called;
  af::async_options options;
  options.on_settled = [&] { called.set_value(); };
  auto count = f.message_count_async(options);
  called.get_future().get();
  EXPECT_EQ(count.wait_for(0s), std::future_status::ready);
  EXPECT_EQ(count.get(), 2u);
}

// ---- thread pool ------------------------------------------------------------------------

TEST(AsyncThreadPool, SizesAndDefault) {
  EXPECT_GE(tg::thread_pool::default_threads(), 1u);
  EXPECT_EQ(tg::thread_pool(3).size(), 3u);
  EXPECT_EQ(tg::thread_pool().size(), tg::thread_pool::default_threads());
}

TEST(AsyncThreadPool, SubmitReturnsResultsAndExceptions) {
  tg::thread_pool pool(2);
  std::vector<std::future<std::uint64_t>> futures;
  for (std::uint64_t i = 0; i < 200; ++i) futures.push_back(pool.submit([i] { return i * i; }));
  for (std::uint64_t i = 0; i < 200; ++i) EXPECT_EQ(futures[i].get(), i * i);
  auto failing = pool.submit([]() -> int { throw tg::object_error("task 7 failed"); });
  EXPECT_THROW((void)failing.get(), tg::object_error);
}

TEST(AsyncThreadPool, RunsTasksConcurrently) {
  // Two tasks that each wait for the other can only finish on two workers.
  tg::thread_pool pool(2);
  std::promise<void> a;
  std::promise<void> b;
  auto fa = pool.submit([&, wait = b.get_future()] {
    a.set_value();
    return wait.wait_for(very_long) == std::future_status::ready;
  });
  auto fb = pool.submit([&, wait = a.get_future()] {
    b.set_value();
    return wait.wait_for(very_long) == std::future_status::ready;
  });
  EXPECT_TRUE(fa.get());
  EXPECT_TRUE(fb.get());
}

TEST(AsyncThreadPool, DestructorDrainsQueuedTasks) {
  auto pool = std::make_unique<tg::thread_pool>(1);
  std::promise<void> release;
  std::atomic<int> ran{0};
  pool->post([wait = release.get_future().share()] { wait.wait(); });
  for (int i = 0; i < 50; ++i) pool->post([&ran] { ++ran; });
  // The destructor starts while the 50 tasks are still queued behind the
  // blocked one; it must run them, not drop them.
  std::thread destroyer([&] { pool.reset(); });
  std::this_thread::sleep_for(50ms);  // (only makes the interleaving likely)
  release.set_value();
  destroyer.join();
  EXPECT_EQ(ran.load(), 50);
}

TEST(AsyncThreadPool, LastReferenceReleasedByItsOwnTask) {
  // The pool is destroyed on one of its own workers: that worker must not
  // join itself (std::system_error / deadlock) and must finish cleanly.
  for (int round = 0; round < 20; ++round) {
    auto pool = std::make_shared<tg::thread_pool>(2);
    const std::weak_ptr<tg::thread_pool> watch = pool;
    std::promise<void> ran;
    auto ran_future = ran.get_future();
    pool->post([keep = pool, &ran] { ran.set_value(); });
    pool.reset();
    ASSERT_EQ(ran_future.wait_for(very_long), std::future_status::ready);
    const auto deadline = std::chrono::steady_clock::now() + very_long;
    while (!watch.expired() && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(1ms);
    EXPECT_TRUE(watch.expired());
  }
}

// ---- results equal the synchronous file's --------------------------------------------

TEST(AsyncFile, EveryOperationMatchesSyncOnFixtures) {
  auto pool = std::make_shared<tg::thread_pool>(2);
  for (const auto& name : tgtest::all_fixtures()) {
    const auto path = tgtest::fixture_path(name);
    {
      auto opened = af::async_file::open(path, pool);
      ASSERT_EQ(opened.wait_for(very_long), std::future_status::ready) << name;
      const af::async_file a = opened.get();
      EXPECT_EQ(a.pool(), pool);
      EXPECT_EQ(a.path(), std::filesystem::path(path));
      EXPECT_FALSE(a.is_remote());
      tg::file s = tg::file::open(path);
      compare_all(a, s, name);
    }
    {
      const af::async_file a = af::async_file::open_mmap(path, pool).get();
      tg::file s = tg::file::open_mmap(path);
      compare_all(a, s, name + " (mmap)");
    }
  }
}

TEST(AsyncFile, GeneratedCompressedFileMatchesSync) {
  const temp_file tmp(generated_file(5));
  const af::async_file a = af::async_file::open(tmp.path()).get();
  tg::file s = tg::file::open(tmp.path());
  ASSERT_EQ(s.message_count(), 5u);
  compare_all(a, s, "generated");
}

TEST(AsyncFile, FreeFunctionsMatchSync) {
  const temp_file tmp(generated_file(3));
  tg::file s = tg::file::open(tmp.path());
  const af::async_file a = af::open_async(tmp.path()).get();
  expect_same([&] { return s.message_count(); }, af::message_count_async(a), "message_count_async");
  expect_same([&] { return s.read_message(2); }, af::read_message_async(a, 2), "read_message_async");
  expect_same([&] { return s.decode_message(1); }, af::decode_message_async(a, 1), "decode_message_async");
  expect_same([&] { return s.decode_metadata(0); }, af::decode_metadata_async(a, 0), "decode_metadata_async");
  expect_same([&] { return s.decode_object(2, 1); }, af::decode_object_async(a, 2, 1), "decode_object_async");
  const std::vector<std::pair<std::uint64_t, std::uint64_t>> ranges = {{3, 4}, {0, 2}};
  expect_same([&] { return s.decode_range(1, 3, ranges); }, af::decode_range_async(a, 1, 3, ranges),
              "decode_range_async");
}

TEST(AsyncFile, WrapsAFileFromAnySource) {
  const auto bytes = tgtest::read_fixture("multi_object.tgm");
  const auto g = std::make_shared<gate>();
  const af::async_file a(gated_file(bytes, g));
  tg::file s = tg::file::from_source(tg::io::open_memory_source(tg::buffer::owned(bytes), "memory"));
  compare_all(a, s, "multi_object.tgm from a custom source");
  EXPECT_GT(g->calls(), 0);
}

TEST(AsyncFile, ManyConcurrentFuturesAreCorrect) {
  const std::size_t messages = 6;
  const temp_file tmp(generated_file(messages));
  tg::file s = tg::file::open(tmp.path());
  std::vector<std::vector<tg::message>> expected(messages);
  for (std::size_t i = 0; i < messages; ++i)
    for (std::size_t j = 0; j < 4; ++j) expected[i].push_back(s.decode_object(i, j));

  const af::async_file a = af::async_file::open(tmp.path(), std::make_shared<tg::thread_pool>(4)).get();
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937 rng(static_cast<unsigned>(t));
      std::vector<std::pair<std::pair<std::size_t, std::size_t>, std::future<tg::message>>> pending;
      for (int k = 0; k < 100; ++k) {
        const std::size_t i = rng() % messages;
        const std::size_t j = rng() % 4;
        pending.emplace_back(std::pair{i, j}, a.decode_object_async(i, j));
      }
      for (auto& [at, fut] : pending) {
        const tg::message m = fut.get();
        const tg::message& e = expected[at.first][at.second];
        const bool same = m.num_objects() == 1 && m.global() == e.global() &&
                          m.object(0).descriptor() == e.object(0).descriptor() &&
                          std::ranges::equal(m.object(0).bytes(), e.object(0).bytes());
        if (!same) ++wrong;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(wrong.load(), 0);
}

// ---- cancellation ---------------------------------------------------------------------------

TEST(AsyncFile, TokenCancelledBeforeTheCallNeverStarts) {
  const auto g = std::make_shared<gate>();
  auto pool = std::make_shared<tg::thread_pool>(1);
  const af::async_file a(gated_file(tgtest::read_fixture("two-msg.tgm"), g), pool);
  const int before = g->calls();
  af::async_options opts;
  opts.token.cancel();
  EXPECT_TRUE(opts.token.is_cancelled());
  auto fut = a.decode_message_async(0, {}, opts);
  // Settled by the call itself.
  EXPECT_EQ(fut.wait_for(0s), std::future_status::ready);
  const std::string what = expect_fails_with<tg::cancelled_error>(fut, "pre-cancelled");
  EXPECT_NE(what.find("decode_message_async(message 0)"), std::string::npos) << what;
  drain(*pool);
  EXPECT_EQ(g->calls(), before);
}

TEST(AsyncFile, CancelWhileQueuedSkipsTheIo) {
  // One worker, held by a blocked operation on file A; an operation on
  // file B waits behind it and is cancelled there.
  auto pool = std::make_shared<tg::thread_pool>(1);
  const auto bytes = tgtest::read_fixture("multi_object.tgm");
  const auto ga = std::make_shared<gate>();
  const auto gb = std::make_shared<gate>();
  const af::async_file a(gated_file(bytes, ga), pool);
  const af::async_file b(gated_file(bytes, gb), pool);
  const int b_before = gb->calls();
  const gate_opener opener{ga};
  ga->close();
  auto blocker = a.message_count_async();
  ASSERT_TRUE(ga->wait_blocked(1));

  af::async_options opts;
  auto queued = b.decode_object_async(0, 1, {}, opts);
  EXPECT_EQ(queued.wait_for(0s), std::future_status::timeout);
  opts.token.cancel();  // the copy in `opts` shares the flag with the one passed
  expect_fails_with<tg::cancelled_error>(queued, "cancelled while queued");
  EXPECT_EQ(ga->blocked(), 1);  // the worker is still held: nothing ran meanwhile

  ga->open();
  EXPECT_EQ(blocker.get(),
            tg::file::from_source(tg::io::open_memory_source(tg::buffer::owned(bytes))).message_count());
  drain(*pool);
  EXPECT_EQ(gb->calls(), b_before);  // the cancelled operation never touched file B
}

TEST(AsyncFile, CancelWhileBlockedIsPrompt) {
  const auto g = std::make_shared<gate>();
  const auto bytes = tgtest::read_fixture("multi_object.tgm");
  const af::async_file a(gated_file(bytes, g));
  const gate_opener opener{g};
  g->close();
  af::async_options opts;
  auto fut = a.decode_object_async(0, 1, {}, opts);
  ASSERT_TRUE(g->wait_blocked(1));
  opts.token.cancel();
  const std::string what = expect_fails_with<tg::cancelled_error>(fut, "cancel while blocked");
  EXPECT_NE(what.find("decode_object_async(message 0, object 1)"), std::string::npos) << what;
  EXPECT_NE(what.find("gated memory"), std::string::npos) << what;
  EXPECT_EQ(g->blocked(), 1);  // settled while the read is still stuck
  g->open();
  // The file stays usable; the abandoned read's result went nowhere.
  tg::file s = tg::file::from_source(tg::io::open_memory_source(tg::buffer::owned(bytes)));
  expect_same([&] { return s.decode_object(0, 1); }, a.decode_object_async(0, 1), "after cancel");
}

TEST(AsyncFile, OneTokenCancelsEveryOperationItWasGiven) {
  const auto g = std::make_shared<gate>();
  const af::async_file a(gated_file(tgtest::read_fixture("ten-msg.tgm"), g),
                         std::make_shared<tg::thread_pool>(2));
  const gate_opener opener{g};
  g->close();
  af::async_options opts;
  std::vector<std::future<std::vector<std::uint8_t>>> futures;
  for (std::size_t i = 0; i < 6; ++i) futures.push_back(a.read_message_async(i, opts));
  ASSERT_TRUE(g->wait_blocked(1));
  opts.token.cancel();
  for (auto& f : futures) expect_fails_with<tg::cancelled_error>(f, "shared token");
}

// ---- timeouts --------------------------------------------------------------------------------

TEST(AsyncFile, TimeoutWhileBlockedIsPrompt) {
  const auto g = std::make_shared<gate>();
  const af::async_file a(gated_file(tgtest::read_fixture("hundred-msg.tgm"), g));
  const gate_opener opener{g};
  g->close();
  af::async_options opts;
  opts.timeout = 20ms;
  auto fut = a.decode_message_async(42, {}, opts);
  ASSERT_TRUE(g->wait_blocked(1));
  const std::string what = expect_fails_with<tg::timeout_error>(fut, "timeout while blocked");
  EXPECT_NE(what.find("within 20 ms"), std::string::npos) << what;
  EXPECT_EQ(g->blocked(), 1);
}

TEST(AsyncFile, TimeoutWhileQueuedSkipsTheIo) {
  auto pool = std::make_shared<tg::thread_pool>(1);
  const auto bytes = tgtest::read_fixture("two-msg.tgm");
  const auto ga = std::make_shared<gate>();
  const auto gb = std::make_shared<gate>();
  const af::async_file a(gated_file(bytes, ga), pool);
  const af::async_file b(gated_file(bytes, gb), pool);
  const int b_before = gb->calls();
  const gate_opener opener{ga};
  ga->close();
  auto blocker = a.message_count_async();
  ASSERT_TRUE(ga->wait_blocked(1));
  af::async_options opts;
  opts.timeout = 10ms;
  auto queued = b.read_message_async(1, opts);
  expect_fails_with<tg::timeout_error>(queued, "timeout while queued");
  ga->open();
  EXPECT_EQ(blocker.get(), 2u);
  drain(*pool);
  EXPECT_EQ(gb->calls(), b_before);
}

TEST(AsyncFile, ZeroTimeoutExpiresAtOnce) {
  const auto g = std::make_shared<gate>();
  auto pool = std::make_shared<tg::thread_pool>(1);
  const af::async_file a(gated_file(tgtest::read_fixture("two-msg.tgm"), g), pool);
  const int before = g->calls();
  af::async_options opts;
  opts.timeout = 0ms;
  auto fut = a.message_count_async(opts);
  EXPECT_EQ(fut.wait_for(0s), std::future_status::ready);
  expect_fails_with<tg::timeout_error>(fut, "zero timeout");
  drain(*pool);
  EXPECT_EQ(g->calls(), before);
}

TEST(AsyncFile, DeadlineNotReachedGivesTheResult) {
  const temp_file tmp(generated_file(2));
  tg::file s = tg::file::open(tmp.path());
  af::async_options opts;
  opts.timeout = std::chrono::hours(1);
  const af::async_file a = af::async_file::open(tmp.path(), nullptr, opts).get();
  for (std::size_t i = 0; i < 2; ++i)
    for (std::size_t j = 0; j < 4; ++j)
      expect_same([&] { return s.decode_object(i, j); }, a.decode_object_async(i, j, {}, opts),
                  "with deadline");
}

// ---- errors ----------------------------------------------------------------------------------

TEST(AsyncFile, MissingFileFailsWithIoError) {
  const auto missing = std::filesystem::temp_directory_path() / "tensogram_async_no_such_file.tgm";
  std::filesystem::remove(missing);
  auto opened = af::async_file::open(missing);
  const std::string what = expect_fails_with<tg::io_error>(opened, "missing file");
  EXPECT_NE(what.find(missing.string()), std::string::npos) << what;
  auto mapped = af::async_file::open_mmap(missing);
  expect_fails_with<tg::io_error>(mapped, "missing file (mmap)");
}

TEST(AsyncFile, MessageIndexOutOfRangeIsAFramingError) {
  const auto path = tgtest::fixture_path("ten-msg.tgm");
  const af::async_file a = af::async_file::open(path).get();
  tg::file s = tg::file::open(path);
  auto decoded = a.decode_message_async(10);
  expect_fails_with<tg::framing_error>(decoded, "decode_message_async(10)");
  auto read = a.read_message_async(1000);
  expect_fails_with<tg::framing_error>(read, "read_message_async(1000)");
  expect_same([&] { return s.decode_metadata(10); }, a.decode_metadata_async(10), "decode_metadata(10)");
  expect_same([&] { return s.decode_range(10, 0, probe_ranges(4)); },
              a.decode_range_async(10, 0, probe_ranges(4)), "decode_range(10)");
}

TEST(AsyncFile, SourceFailuresKeepTheirType) {
  const auto bytes = tgtest::read_fixture("two-msg.tgm");
  const auto g = std::make_shared<gate>();
  const af::async_file a(gated_file(bytes, g));
  const auto gs = std::make_shared<gate>();
  tg::file s = gated_file(bytes, gs);
  g->fail_reads(true);
  gs->fail_reads(true);
  expect_same([&] { return s.message_count(); }, a.message_count_async(), "failing source");
  auto fut = a.read_message_async(0);
  expect_fails_with<tg::io_error>(fut, "failing source");
}

// ---- lifetimes -------------------------------------------------------------------------------

TEST(AsyncFile, DroppingHandlesWithFuturesInFlightIsSafe) {
  const auto bytes = tgtest::read_fixture("multi_object.tgm");
  tg::file s = tg::file::from_source(tg::io::open_memory_source(tg::buffer::owned(bytes)));
  const auto g = std::make_shared<gate>();
  const gate_opener opener{g};
  g->close();
  std::future<std::size_t> count;
  std::future<tg::message> object;
  std::future<std::vector<std::uint8_t>> raw;
  std::future<tg::metadata> meta;
  // Its own default pool and deadline watcher: both must outlive this
  // handle for as long as operations are pending.
  auto a = std::make_unique<af::async_file>(gated_file(bytes, g));
  count = a->message_count_async();
  object = a->decode_object_async(0, 1);
  raw = a->read_message_async(0);
  af::async_options opts;
  opts.timeout = 20ms;
  meta = a->decode_metadata_async(0, opts);
  ASSERT_TRUE(g->wait_blocked(1));
  // Dropping the handle must not wait for the blocked read. It is dropped on
  // another thread so that a destructor that does wait fails the test
  // instead of hanging it.
  std::promise<void> dropped;
  auto dropped_future = dropped.get_future();
  std::thread dropper([&] {
    a.reset();
    dropped.set_value();
  });
  const bool prompt = dropped_future.wait_for(generous) == std::future_status::ready;
  EXPECT_TRUE(prompt) << "destroying the async_file waited for the pending read";
  if (!prompt) g->open();
  dropper.join();
  expect_fails_with<tg::timeout_error>(meta, "deadline after the handle is gone");
  g->open();
  expect_same([&] { return s.message_count(); }, std::move(count), "count after the handle is gone");
  expect_same([&] { return s.decode_object(0, 1); }, std::move(object), "object after the handle is gone");
  expect_same([&] { return s.read_message(0); }, std::move(raw), "read after the handle is gone");
}

TEST(AsyncFile, UncollectedResultsAreSafe) {
  // Futures dropped unread, including an open whose async_file nobody takes:
  // the last owner of the pool is then a worker or the deadline watcher.
  const auto path = tgtest::fixture_path("hundred-msg.tgm");
  for (int round = 0; round < 10; ++round) {
    af::async_options opts;
    opts.timeout = std::chrono::milliseconds(round % 3);
    (void)af::async_file::open(path, nullptr, opts);
    (void)af::async_file::open(path);
    const af::async_file a = af::async_file::open(path).get();
    for (std::size_t i = 0; i < 5; ++i) (void)a.decode_message_async(i * 7, {}, opts);
  }
  // Reaching here without a crash, hang or sanitizer report is the test;
  // a last check that a fresh file still works after all that churn.
  EXPECT_EQ(af::async_file::open(path).get().message_count_async().get(), 100u);
}

TEST(AsyncFile, FilesCanShareOnePool) {
  auto pool = std::make_shared<tg::thread_pool>(1);
  const af::async_file a = af::async_file::open(tgtest::fixture_path("ten-msg.tgm"), pool).get();
  const af::async_file b = af::async_file::open(tgtest::fixture_path("two-msg.tgm"), pool).get();
  auto ca = a.message_count_async();
  auto cb = b.message_count_async();
  EXPECT_EQ(ca.get(), 10u);
  EXPECT_EQ(cb.get(), 2u);
  EXPECT_EQ(a.pool(), b.pool());
  const af::async_file copy = a;  // handles are cheap copies sharing everything
  EXPECT_EQ(copy.shared_file(), a.shared_file());
  EXPECT_EQ(copy.read_message_async(3).get(), a.sync().read_message(3));
}

// ---- remote files (nginx on loopback; skipped without nginx) ----------------------

class AsyncRemote : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (tgtest::nginx_unavailable()) return;
    try {
      dir_ = std::make_unique<tgtest::temp_dir>();
      for (const char* name : {"ten-msg.tgm", "multi_object.tgm", "hundred-msg-footer.tgm"})
        tgtest::write_bytes(*dir_ / name, tgtest::read_fixture(name));
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

  // Freezes the server for one test: requests are accepted by the kernel
  // but never answered, like a stalled object store.
  struct paused {
    paused() { server_->pause(); }
    paused(const paused&) = delete;
    paused& operator=(const paused&) = delete;
    ~paused() { server_->resume(); }
  };

  static inline std::unique_ptr<tgtest::temp_dir> dir_;
  static inline std::unique_ptr<tgtest::nginx_server> server_;
  static inline std::string start_failure_;
};

TEST_F(AsyncRemote, OperationsMatchSync) {
  for (const char* name : {"ten-msg.tgm", "multi_object.tgm", "hundred-msg-footer.tgm"}) {
    const std::string url = server_->url(name);
    auto opened = af::async_file::open_remote(url);
    ASSERT_EQ(opened.wait_for(very_long), std::future_status::ready) << name;
    const af::async_file a = opened.get();
    EXPECT_TRUE(a.is_remote());
    EXPECT_EQ(a.source_name(), url);
    tg::file s = tg::file::open_remote(url);
    compare_all(a, s, std::string(name) + " (remote)");
  }
  // The free-function spelling.
  EXPECT_EQ(af::open_remote_async(server_->url("ten-msg.tgm")).get().message_count_async().get(), 10u);
}

TEST_F(AsyncRemote, CancelDuringAStalledRequestIsPrompt) {
  const af::async_file a = af::async_file::open_remote(server_->url("hundred-msg-footer.tgm")).get();
  af::async_options opts;
  std::future<tg::message> fut;
  {
    const paused stall;
    fut = a.decode_message_async(7, {}, opts);
    // (only makes it likely that the worker is inside the request by now)
    std::this_thread::sleep_for(100ms);
    opts.token.cancel();
    expect_fails_with<tg::cancelled_error>(fut, "cancel during a stalled request");
  }  // the server resumes and the abandoned request completes in the background
  tg::file s = tg::file::open_remote(server_->url("hundred-msg-footer.tgm"));
  expect_same([&] { return s.decode_message(7); }, a.decode_message_async(7), "after the stall");
}

TEST_F(AsyncRemote, TimeoutDuringAStalledRequestIsPrompt) {
  const paused stall;
  af::async_options opts;
  opts.timeout = 100ms;
  auto opened = af::async_file::open_remote(server_->url("ten-msg.tgm"), {}, nullptr, opts);
  const std::string what = expect_fails_with<tg::timeout_error>(opened, "open during a stall");
  EXPECT_NE(what.find("open_remote_async on " + server_->url("ten-msg.tgm")), std::string::npos) << what;
}

TEST_F(AsyncRemote, UnreachableServerFailsOpenWithRemoteError) {
  tgtest::nginx_server gone(dir_->path());
  const std::string url = gone.url("ten-msg.tgm");
  gone.stop();  // connections are now refused
  auto opened = af::async_file::open_remote(url);
  expect_fails_with<tg::remote_error>(opened, "unreachable server");
}

}  // namespace
