// The process-wide async runtime (spec 07 C2.5): configuration, timeouts and
// cancellation of blocked or queued work, shutdown while work is in flight.
// Each test runs in a fresh process (run_isolated): configuration must come
// before the first async call and shutdown is permanent. A FIFO holds the
// single worker deterministically (opening it blocks until a writer comes).
#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "capi_test_support.hpp"

namespace {

using namespace capi_test;
namespace fs = std::filesystem;
using clock_type = std::chrono::steady_clock;

// Whether a thread of this process sleeps in open() of a FIFO waiting for a
// writer (its kernel wait channel is wait_for_partner), polled up to 30 s.
// Where the kernel hides wait channels (every thread reads "0" for a
// second), that second's pause stands in for the check.
bool a_thread_waits_on_a_fifo() {
  const auto start = clock_type::now();
  bool informative = false;
  while (clock_type::now() - start < std::chrono::seconds(30)) {
    std::error_code ec;
    for (fs::directory_iterator it("/proc/self/task", ec), end; !ec && it != end; it.increment(ec)) {
      std::ifstream wchan(it->path() / "wchan");
      std::string where;
      if (!(wchan >> where)) continue;
      if (where == "wait_for_partner") return true;
      informative = informative || where != "0";
    }
    if (!informative && clock_type::now() - start > std::chrono::seconds(1)) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return false;
}

// Occupies the runtime's only worker until `release()`. The constructor
// returns once the worker sleeps in the FIFO's open(): on a loaded machine
// the worker may not have taken the task yet, and a task cancelled while
// still queued never opens the FIFO, so the tests' release() found no
// reader (a failure seen once, beside a CI run).
struct blocked_worker {
  explicit blocked_worker(const fs::path& dir) : pipe(dir / "block.fifo") {
    EXPECT_TGM_OK(tgm_async_file_open(pipe.path().c_str(), nullptr, 0, &raw));
    task.reset(raw);
    EXPECT_TRUE(a_thread_waits_on_a_fifo()) << "the runtime's worker never blocked on " << pipe.path();
  }
  fifo pipe;
  tgm_async_task_t* raw = nullptr;
  task_ptr task;
};

void count_callback(void* counter) {
  static_cast<std::atomic<int>*>(counter)->fetch_add(1);
}

TEST(CapiRuntime, ConfigureOnceBeforeUse) {
  run_isolated([] {
    ASSERT_TGM_OK(tgm_runtime_configure(1, 1, 16 << 20));
    EXPECT_EQ(tgm_runtime_configure(2, 2, 0), TGM_ERROR_INVALID_ARG);
    EXPECT_NE(last_error().find("runtime already configured or built"), std::string::npos) << last_error();
  });
  run_isolated([] {
    const fs::path path = scratch_dir("cfg") / "f.tgm";
    write_file(path, 1);
    tgm_async_task_t* t = nullptr;
    ASSERT_TGM_OK(tgm_async_file_open(path.c_str(), nullptr, 0, &t));  // builds the runtime
    tgm_async_file_t* f = nullptr;
    ASSERT_TGM_OK(tgm_async_task_join_async_file(t, &f));
    tgm_async_task_free(t);
    tgm_async_file_close(f);
    EXPECT_EQ(tgm_runtime_configure(0, 0, 0), TGM_ERROR_INVALID_ARG);  // already built
  });
}

TEST(CapiRuntime, TimeoutWhileQueuedAndCancelWhileBlocked) {
  run_isolated([] {
    ASSERT_TGM_OK(tgm_runtime_configure(1, 1, 0));
    const fs::path dir = scratch_dir("timeout");
    write_file(dir / "f.tgm", 1);
    blocked_worker block(dir);
    // Queued behind the blocked worker: expires at its deadline.
    tgm_async_task_t* t = nullptr;
    const auto start = clock_type::now();
    ASSERT_TGM_OK(tgm_async_file_open((dir / "f.tgm").c_str(), nullptr, 50, &t));
    const task_ptr queued(t);
    tgm_async_file_t* f = nullptr;
    EXPECT_EQ(tgm_async_task_join_async_file(queued.get(), &f), TGM_ERROR_TIMEOUT);
    EXPECT_EQ(last_error().rfind("async task timed out: tgm_async_file_open() on ", 0), 0U) << last_error();
    EXPECT_LT(clock_type::now() - start, std::chrono::seconds(20));
    // The blocked one is cancelled at once, though its worker is stuck.
    EXPECT_FALSE(tgm_async_task_is_ready(block.task.get()));
    tgm_async_task_cancel(block.task.get());
    EXPECT_TRUE(tgm_async_task_is_ready(block.task.get()));
    EXPECT_EQ(tgm_async_task_join_async_file(block.task.get(), &f), TGM_ERROR_CANCELLED);
    EXPECT_NE(last_error().find("block.fifo"), std::string::npos) << last_error();
    ASSERT_TRUE(block.pipe.release());
    // The worker is free again.
    ASSERT_TGM_OK(tgm_async_file_open((dir / "f.tgm").c_str(), nullptr, 10000, &t));
    const task_ptr after(t);
    ASSERT_TGM_OK(tgm_async_task_join_async_file(after.get(), &f));
    tgm_async_file_close(f);
  });
}

TEST(CapiRuntime, ShutdownWhileWorkIsInFlight) {
  run_isolated([] {
    ASSERT_TGM_OK(tgm_runtime_configure(1, 2, 0));
    const fs::path dir = scratch_dir("shutdown");
    write_file(dir / "f.tgm", 1);
    blocked_worker block(dir);
    std::atomic<int> callbacks{0};
    std::vector<task_ptr> queued;
    for (int i = 0; i < 10; ++i) {
      tgm_async_task_t* t = nullptr;
      ASSERT_TGM_OK(tgm_async_file_open((dir / "f.tgm").c_str(), nullptr, 0, &t));
      ASSERT_TGM_OK(tgm_async_task_set_completion(t, &count_callback, &callbacks));
      queued.emplace_back(t);
    }
    const auto start = clock_type::now();
    EXPECT_EQ(tgm_runtime_shutdown_blocking(100), 11U);              // the blocked one and the ten behind it
    EXPECT_LT(clock_type::now() - start, std::chrono::seconds(10));  // does not wait for the stuck read
    EXPECT_EQ(callbacks.load(), 10);                                 // every registered callback ran
    for (auto& t : queued) {
      tgm_async_file_t* f = nullptr;
      EXPECT_EQ(tgm_async_task_join_async_file(t.get(), &f), TGM_ERROR_CANCELLED);
    }
    tgm_async_file_t* f = nullptr;
    EXPECT_EQ(tgm_async_task_join_async_file(block.task.get(), &f), TGM_ERROR_CANCELLED);
    EXPECT_EQ(tgm_runtime_shutdown_blocking(100), 0U);  // idempotent
    tgm_async_task_t* t = nullptr;
    EXPECT_EQ(tgm_async_file_open((dir / "f.tgm").c_str(), nullptr, 0, &t), TGM_ERROR_IO);
    EXPECT_NE(last_error().find("runtime has been shut down"), std::string::npos) << last_error();
    EXPECT_EQ(tgm_runtime_configure(1, 1, 0), TGM_ERROR_INVALID_ARG);
    ASSERT_TRUE(block.pipe.release());  // lets the stuck worker finish and go
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  });
}

TEST(CapiRuntime, ShutdownWaitsForQuickWork) {
  run_isolated([] {
    const fs::path path = scratch_dir("drain") / "f.tgm";
    write_file(path, 3);
    tgm_async_task_t* t = nullptr;
    ASSERT_TGM_OK(tgm_async_file_open(path.c_str(), nullptr, 0, &t));
    tgm_async_file_t* f = nullptr;
    ASSERT_TGM_OK(tgm_async_task_join_async_file(t, &f));
    tgm_async_task_free(t);
    std::vector<task_ptr> tasks;
    for (int i = 0; i < 50; ++i) {
      ASSERT_TGM_OK(
          tgm_async_file_decode_message(f, static_cast<size_t>(i % 3), true, 0, true, true, nullptr, 0, &t));
      tasks.emplace_back(t);
    }
    EXPECT_EQ(tgm_runtime_shutdown_blocking(60000), 0U);
    for (auto& task : tasks) {
      tgm_message_t* m = nullptr;
      ASSERT_TGM_OK(tgm_async_task_join_message(task.get(), &m));
      tgm_message_free(m);
    }
    tgm_async_file_close(f);
  });
}

TEST(CapiRuntime, ShutdownBeforeAnyUse) {
  run_isolated([] {
    EXPECT_EQ(tgm_runtime_shutdown_blocking(0), 0U);
    EXPECT_EQ(tgm_runtime_shutdown_blocking(0), 0U);
    tgm_async_task_t* t = nullptr;
    EXPECT_EQ(tgm_async_streaming_encoder_create("x.tgm", "{}", nullptr, 0, nullptr, 0, &t), TGM_ERROR_IO);
    EXPECT_EQ(tgm_runtime_configure(1, 1, 0), TGM_ERROR_INVALID_ARG);
  });
}

TEST(CapiRuntime, LateCallbackAfterShutdownRunsInline) {
  run_isolated([] {
    const fs::path path = scratch_dir("late") / "f.tgm";
    write_file(path, 1);
    tgm_async_task_t* t = nullptr;
    ASSERT_TGM_OK(tgm_async_file_open(path.c_str(), nullptr, 0, &t));
    const task_ptr task(t);
    while (!tgm_async_task_is_ready(task.get())) std::this_thread::yield();
    EXPECT_EQ(tgm_runtime_shutdown_blocking(1000), 0U);
    struct on_this_thread {
      std::thread::id id;
      static void cb(void* self) { static_cast<on_this_thread*>(self)->id = std::this_thread::get_id(); }
    } seen;
    ASSERT_TGM_OK(tgm_async_task_set_completion(task.get(), &on_this_thread::cb, &seen));
    EXPECT_EQ(seen.id, std::this_thread::get_id());
    tgm_async_file_t* f = nullptr;
    ASSERT_TGM_OK(tgm_async_task_join_async_file(task.get(), &f));
    tgm_async_file_close(f);
  });
}

TEST(CapiRuntime, EncoderWritesCancelledWhileQueuedGiveTheirTurnUp) {
  run_isolated([] {
    ASSERT_TGM_OK(tgm_runtime_configure(1, 1, 0));
    const fs::path dir = scratch_dir("enc_cancel");
    const fs::path path = dir / "e.tgm";
    tgm_async_task_t* t = nullptr;
    const async_encoder_ptr enc = create_async_encoder(path, "xxh3");
    ASSERT_NE(enc, nullptr);

    blocked_worker block(dir);
    const int16_t a[4] = {1, 1, 1, 1};
    const int16_t b[4] = {2, 2, 2, 2};
    const int16_t c[4] = {3, 3, 3, 3};
    ASSERT_TGM_OK(tgm_async_streaming_encoder_write_object(
        enc.get(), int16_descriptor_json(), reinterpret_cast<const uint8_t*>(a), 8, nullptr, 0, &t));
    const task_ptr wa(t);
    ASSERT_TGM_OK(tgm_async_streaming_encoder_write_object(
        enc.get(), int16_descriptor_json(), reinterpret_cast<const uint8_t*>(b), 8, nullptr, 20, &t));
    const task_ptr wb(t);  // will time out while queued
    ASSERT_TGM_OK(tgm_async_streaming_encoder_write_object(
        enc.get(), int16_descriptor_json(), reinterpret_cast<const uint8_t*>(c), 8, nullptr, 0, &t));
    const task_ptr wc(t);
    ASSERT_TGM_OK(tgm_async_streaming_encoder_finish(enc.get(), true, nullptr, 0, &t));
    const task_ptr fin(t);
    tgm_async_task_cancel(wa.get());
    EXPECT_EQ(tgm_async_task_join_void(wa.get()), TGM_ERROR_CANCELLED);
    EXPECT_EQ(tgm_async_task_join_void(wb.get()), TGM_ERROR_TIMEOUT);
    tgm_async_task_cancel(block.task.get());
    ASSERT_TRUE(block.pipe.release());
    ASSERT_TGM_OK(tgm_async_task_join_void(wc.get()));
    ASSERT_TGM_OK(tgm_async_task_join_void(fin.get()));

    const message_ptr msg = decode_file_message(path);
    ASSERT_EQ(tgm_message_num_objects(msg.get()), 1U);  // only c was written
    EXPECT_EQ(reinterpret_cast<const int16_t*>(tgm_object_data(msg.get(), 0, nullptr))[0], 3);
  });
}

TEST(CapiRuntime, EncoderWritesFromManyThreadsOnOneWorker) {
  run_isolated([] {
    ASSERT_TGM_OK(tgm_runtime_configure(1, 1, 0));
    const fs::path path = scratch_dir("enc_threads") / "e.tgm";
    const async_encoder_ptr enc = create_async_encoder(path, "xxh3");
    ASSERT_NE(enc, nullptr);
    constexpr int threads = 4;
    constexpr int per_thread = 25;
    std::vector<std::thread> writers;
    for (int th = 0; th < threads; ++th) {
      writers.emplace_back([&, th] {
        std::vector<task_ptr> tasks;
        for (int i = 0; i < per_thread; ++i) {
          const int16_t v[4] = {static_cast<int16_t>(th), static_cast<int16_t>(i), 0, 0};
          tgm_async_task_t* t = nullptr;
          EXPECT_TGM_OK(tgm_async_streaming_encoder_write_object(
              enc.get(), int16_descriptor_json(), reinterpret_cast<const uint8_t*>(v), 8, nullptr, 0, &t));
          tasks.emplace_back(t);
        }
        for (auto& t : tasks) EXPECT_TGM_OK(tgm_async_task_join_void(t.get()));
      });
    }
    for (auto& w : writers) w.join();
    EXPECT_EQ(tgm_async_streaming_encoder_object_count(enc.get()), static_cast<size_t>(threads * per_thread));
    tgm_async_task_t* t = nullptr;
    ASSERT_TGM_OK(tgm_async_streaming_encoder_finish(enc.get(), true, nullptr, 0, &t));
    const task_ptr fin(t);
    ASSERT_TGM_OK(tgm_async_task_join_void(fin.get()));
    const message_ptr msg = decode_file_message(path);
    ASSERT_EQ(tgm_message_num_objects(msg.get()), static_cast<size_t>(threads * per_thread));
    // Each thread's writes appear in the order that thread launched them.
    std::vector<int> next(threads, 0);
    for (size_t k = 0; k < tgm_message_num_objects(msg.get()); ++k) {
      const auto* v = reinterpret_cast<const int16_t*>(tgm_object_data(msg.get(), k, nullptr));
      ASSERT_GE(v[0], 0);
      ASSERT_LT(v[0], threads);
      EXPECT_EQ(v[1], next[static_cast<size_t>(v[0])]++);
    }
  });
}

}  // namespace
