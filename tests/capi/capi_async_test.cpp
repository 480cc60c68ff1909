// The C ABI's async API on the default runtime (spec 07 C2.4–C2.5): async
// files, joins, completion callbacks, cancellation, many concurrent
// requests and the async streaming encoder. Runtime configuration and
// shutdown run in isolated processes (capi_runtime_test.cpp).
#include <atomic>
#include <condition_variable>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "capi_test_support.hpp"

namespace {

using namespace capi_test;
namespace fs = std::filesystem;

async_file_ptr open_async(const fs::path& path) {
  tgm_async_task_t* t = nullptr;
  EXPECT_TGM_OK(tgm_async_file_open(path.c_str(), nullptr, 0, &t));
  const task_ptr task(t);
  tgm_async_file_t* f = nullptr;
  EXPECT_TGM_OK(tgm_async_task_join_async_file(task.get(), &f));
  return async_file_ptr(f);
}

// A completion flag a callback sets from a dispatcher thread.
struct completion {
  std::mutex mu;
  std::condition_variable cv;
  int calls = 0;
  std::thread::id thread;
  tgm_async_task_t* task = nullptr;
  tgm_error joined = TGM_ERROR_OK;
  uint64_t size = 0;

  static void on_done(void* self) {
    auto* c = static_cast<completion*>(self);
    uint64_t n = 0;
    const tgm_error e = c->task != nullptr ? tgm_async_task_join_size(c->task, &n) : TGM_ERROR_OK;
    const std::lock_guard lock(c->mu);
    ++c->calls;
    c->thread = std::this_thread::get_id();
    c->joined = e;
    c->size = n;
    c->cv.notify_all();
  }
  bool wait(int calls_wanted = 1) {
    std::unique_lock lock(mu);
    return cv.wait_for(lock, std::chrono::seconds(30), [&] { return calls >= calls_wanted; });
  }
};

class CapiAsync : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = scratch_dir("async") / "five.tgm";
    write_file(path_, 5);
  }
  fs::path path_;
};

TEST_F(CapiAsync, EveryFileOperation) {
  const async_file_ptr f = open_async(path_);
  ASSERT_NE(f, nullptr);
  EXPECT_STREQ(tgm_async_file_path(f.get()), path_.c_str());
  tgm_async_task_t* t = nullptr;

  ASSERT_TGM_OK(tgm_async_file_message_count(f.get(), nullptr, 0, &t));
  task_ptr task(t);
  uint64_t count = 0;
  ASSERT_TGM_OK(tgm_async_task_join_size(task.get(), &count));
  EXPECT_EQ(count, 5U);
  EXPECT_TRUE(tgm_async_task_is_ready(task.get()));  // consumed counts as ready

  ASSERT_TGM_OK(tgm_async_file_read_message(f.get(), 4, nullptr, 10000, &t));
  task.reset(t);
  bytes raw;
  ASSERT_TGM_OK(tgm_async_task_join_bytes(task.get(), raw.out()));
  tgm_file_t* sync = nullptr;
  ASSERT_TGM_OK(tgm_file_open(path_.c_str(), &sync));
  bytes expected;
  ASSERT_TGM_OK(tgm_file_read_message(sync, 4, expected.out()));
  tgm_file_close(sync);
  EXPECT_EQ(raw.vec(), expected.vec());

  ASSERT_TGM_OK(tgm_async_file_decode_message(f.get(), 1, true, 2, true, true, nullptr, 0, &t));
  task.reset(t);
  tgm_message_t* m = nullptr;
  ASSERT_TGM_OK(tgm_async_task_join_message(task.get(), &m));
  message_ptr msg(m);
  EXPECT_EQ(tgm_message_num_objects(msg.get()), 2U);
  EXPECT_NE(tgm_object_hash_value(msg.get(), 1), nullptr);  // the reference: always empty here
  const std::string hash1 = tgm_object_hash_value(msg.get(), 1);

  ASSERT_TGM_OK(tgm_async_file_decode_object(f.get(), 2, 1, true, 0, true, true, nullptr, 0, &t));
  task.reset(t);
  ASSERT_TGM_OK(tgm_async_task_join_message(task.get(), &m));
  msg.reset(m);
  EXPECT_EQ(tgm_message_num_objects(msg.get()), 1U);
  EXPECT_STREQ(tgm_object_dtype(msg.get(), 0), "int16");
  EXPECT_EQ(tgm_object_hash_value(msg.get(), 0), hash1);

  ASSERT_TGM_OK(tgm_async_file_decode_metadata(f.get(), 3, nullptr, 0, &t));
  task.reset(t);
  tgm_metadata_t* md = nullptr;
  ASSERT_TGM_OK(tgm_async_task_join_metadata(task.get(), &md));
  const metadata_ptr meta(md);
  EXPECT_STREQ(tgm_metadata_get_string(meta.get(), "mars.param"), "2t");

  const uint64_t offsets[2] = {1, 0};
  const uint64_t counts[2] = {2, 1};
  ASSERT_TGM_OK(tgm_async_file_decode_range(f.get(), 0, 0, offsets, counts, 2, true, 0, nullptr, 0, &t));
  task.reset(t);
  tgm_bytes_t* parts = nullptr;
  size_t n = 0;
  ASSERT_TGM_OK(tgm_async_task_join_multi_bytes(task.get(), &parts, &n));
  ASSERT_EQ(n, 2U);
  EXPECT_EQ(parts[0].len, 8U);
  EXPECT_EQ(std::memcmp(parts[0].data, &f32_values[1], 8), 0);
  EXPECT_EQ(std::memcmp(parts[1].data, &f32_values[0], 4), 0);
  tgm_multi_bytes_free(parts, n);
  tgm_multi_bytes_free(parts, n);  // twice: refused, not a crash
  EXPECT_NE(last_error().find("tgm_multi_bytes_free"), std::string::npos);

  ASSERT_TGM_OK(tgm_async_file_decode_range(f.get(), 0, 0, offsets, counts, 0, true, 0, nullptr, 0, &t));
  task.reset(t);
  ASSERT_TGM_OK(tgm_async_task_join_multi_bytes(task.get(), &parts, &n));
  EXPECT_EQ(n, 0U);
  tgm_multi_bytes_free(parts, n);
}

TEST_F(CapiAsync, ErrorsArriveThroughTheJoin) {
  tgm_async_task_t* t = nullptr;
  ASSERT_TGM_OK(tgm_async_file_open((path_.string() + ".missing").c_str(), nullptr, 0, &t));
  task_ptr task(t);
  tgm_async_file_t* f = nullptr;
  EXPECT_EQ(tgm_async_task_join_async_file(task.get(), &f), TGM_ERROR_IO);
  EXPECT_NE(last_error().find(".missing"), std::string::npos) << last_error();

  const async_file_ptr file = open_async(path_);
  ASSERT_TGM_OK(tgm_async_file_decode_message(file.get(), 5, true, 0, true, false, nullptr, 0, &t));
  task.reset(t);
  tgm_message_t* m = nullptr;
  EXPECT_EQ(tgm_async_task_join_message(task.get(), &m), TGM_ERROR_FRAMING);
  EXPECT_NE(last_error().find("message index 5 out of range (count=5)"), std::string::npos) << last_error();
  ASSERT_TGM_OK(tgm_async_file_decode_object(file.get(), 0, 9, true, 0, true, false, nullptr, 0, &t));
  task.reset(t);
  EXPECT_EQ(tgm_async_task_join_message(task.get(), &m), TGM_ERROR_OBJECT);

  // Synchronous argument errors: no task.
  t = reinterpret_cast<tgm_async_task_t*>(0x1);
  EXPECT_EQ(tgm_async_file_open(nullptr, nullptr, 0, &t), TGM_ERROR_INVALID_ARG);
  EXPECT_EQ(t, reinterpret_cast<tgm_async_task_t*>(0x1));  // outputs are written on success only
  EXPECT_EQ(tgm_async_file_open(path_.c_str(), nullptr, 0, nullptr), TGM_ERROR_INVALID_ARG);
  EXPECT_EQ(tgm_async_file_message_count(nullptr, nullptr, 0, &t), TGM_ERROR_INVALID_ARG);
  EXPECT_EQ(tgm_async_file_read_message(nullptr, 0, nullptr, 0, &t), TGM_ERROR_INVALID_ARG);
  EXPECT_EQ(tgm_async_file_decode_metadata(nullptr, 0, nullptr, 0, &t), TGM_ERROR_INVALID_ARG);
  const uint64_t one = 1;
  EXPECT_EQ(tgm_async_file_decode_range(file.get(), 0, 0, nullptr, &one, 0, true, 0, nullptr, 0, &t),
            TGM_ERROR_INVALID_ARG);  // required even for zero ranges
  EXPECT_EQ(tgm_async_file_path(nullptr), nullptr);
  tgm_async_file_close(nullptr);
}

TEST_F(CapiAsync, OpenRemoteSchemesAndOptions) {
  tgm_async_task_t* t = nullptr;
  EXPECT_EQ(tgm_async_file_open_remote("s3://bucket/key.tgm", nullptr, nullptr, 0, true, nullptr, 0, &t),
            TGM_ERROR_REMOTE);
  EXPECT_NE(last_error().find("http(s)"), std::string::npos) << last_error();
  EXPECT_EQ(tgm_async_file_open_remote("/not/a/url.tgm", nullptr, nullptr, 0, true, nullptr, 0, &t),
            TGM_ERROR_REMOTE);
  const char* keys[2] = {"timeout_ms", "bogus"};
  const char* values[2] = {"1000", "x"};
  EXPECT_EQ(tgm_async_file_open_remote("http://127.0.0.1:9/x.tgm", keys, values, 2, false, nullptr, 0, &t),
            TGM_ERROR_INVALID_ARG);
  EXPECT_NE(last_error().find("unsupported storage option 'bogus'"), std::string::npos) << last_error();
  const char* null_value[1] = {nullptr};
  EXPECT_EQ(
      tgm_async_file_open_remote("http://127.0.0.1:9/x.tgm", keys, null_value, 1, false, nullptr, 0, &t),
      TGM_ERROR_INVALID_ARG);
  EXPECT_NE(last_error().find("storage_values[0]"), std::string::npos) << last_error();
  EXPECT_EQ(
      tgm_async_file_open_remote("http://127.0.0.1:9/x.tgm", nullptr, nullptr, 1, false, nullptr, 0, &t),
      TGM_ERROR_INVALID_ARG);

  // file:// URLs open local files; the name is kept as given.
  const std::string url = "file://" + path_.string();
  const char* k[3] = {"verify_tls", "header", "header.X-Test"};
  const char* v[3] = {"false", "Authorization: Bearer t", "1"};
  ASSERT_TGM_OK(tgm_async_file_open_remote(url.c_str(), k, v, 3, true, nullptr, 0, &t));
  task_ptr task(t);
  tgm_async_file_t* f = nullptr;
  ASSERT_TGM_OK(tgm_async_task_join_async_file(task.get(), &f));
  const async_file_ptr file(f);
  EXPECT_EQ(std::string(tgm_async_file_path(file.get())), url);
  // Nothing listens on port 9 of the loopback: the open fails as remote.
  const char* tk[2] = {"connect_timeout_ms", "timeout_ms"};
  const char* tv[2] = {"2000", "2000"};
  ASSERT_TGM_OK(tgm_async_file_open_remote("http://127.0.0.1:9/x.tgm", tk, tv, 2, false, nullptr, 0, &t));
  task.reset(t);
  EXPECT_EQ(tgm_async_task_join_async_file(task.get(), &f), TGM_ERROR_REMOTE);
}

TEST_F(CapiAsync, JoinRules) {
  const async_file_ptr f = open_async(path_);
  tgm_async_task_t* t = nullptr;
  ASSERT_TGM_OK(tgm_async_file_message_count(f.get(), nullptr, 0, &t));
  const task_ptr task(t);
  // A NULL out is rejected before waiting and does not consume.
  EXPECT_EQ(tgm_async_task_join_size(task.get(), nullptr), TGM_ERROR_INVALID_ARG);
  uint64_t n = 0;
  ASSERT_TGM_OK(tgm_async_task_join_size(task.get(), &n));
  EXPECT_EQ(tgm_async_task_join_size(task.get(), &n), TGM_ERROR_INVALID_ARG);
  EXPECT_NE(last_error().find("task result already consumed"), std::string::npos) << last_error();

  ASSERT_TGM_OK(tgm_async_file_message_count(f.get(), nullptr, 0, &t));
  const task_ptr wrong(t);
  tgm_metadata_t* md = nullptr;
  EXPECT_EQ(tgm_async_task_join_metadata(wrong.get(), &md), TGM_ERROR_INVALID_ARG);
  EXPECT_NE(last_error().find("task result type mismatch (expected metadata"), std::string::npos)
      << last_error();
  EXPECT_EQ(tgm_async_task_join_size(wrong.get(), &n), TGM_ERROR_INVALID_ARG);  // discarded
  tgm_bytes_t b{nullptr, 0};
  tgm_message_t* m = nullptr;
  tgm_async_file_t* af = nullptr;
  tgm_async_streaming_encoder_t* enc = nullptr;
  tgm_bytes_t* arr = nullptr;
  EXPECT_EQ(tgm_async_task_join_void(nullptr), TGM_ERROR_INVALID_ARG);
  EXPECT_EQ(tgm_async_task_join_bytes(nullptr, &b), TGM_ERROR_INVALID_ARG);
  EXPECT_EQ(tgm_async_task_join_message(nullptr, &m), TGM_ERROR_INVALID_ARG);
  EXPECT_EQ(tgm_async_task_join_async_file(nullptr, &af), TGM_ERROR_INVALID_ARG);
  EXPECT_EQ(tgm_async_task_join_async_streaming_encoder(nullptr, &enc), TGM_ERROR_INVALID_ARG);
  EXPECT_EQ(tgm_async_task_join_multi_bytes(nullptr, &arr, &n), TGM_ERROR_INVALID_ARG);
  EXPECT_FALSE(tgm_async_task_is_ready(nullptr));
  tgm_async_task_cancel(nullptr);
  tgm_async_task_free(nullptr);
}

TEST_F(CapiAsync, CompletionCallbacks) {
  const async_file_ptr f = open_async(path_);
  tgm_async_task_t* t = nullptr;
  completion c;
  ASSERT_TGM_OK(tgm_async_file_message_count(f.get(), nullptr, 0, &t));
  c.task = t;
  ASSERT_TGM_OK(tgm_async_task_set_completion(t, &completion::on_done, &c));
  EXPECT_EQ(tgm_async_task_set_completion(t, &completion::on_done, &c), TGM_ERROR_INVALID_ARG);
  EXPECT_NE(last_error().find("completion callback already registered"), std::string::npos);
  ASSERT_TRUE(c.wait());
  EXPECT_EQ(c.joined, TGM_ERROR_OK);
  EXPECT_EQ(c.size, 5U);
  EXPECT_NE(c.thread, std::this_thread::get_id());  // a dispatcher thread
  EXPECT_EQ(tgm_async_task_set_completion(t, &completion::on_done, &c), TGM_ERROR_INVALID_ARG);  // still once
  tgm_async_task_free(t);

  // Registered after the task resolved: dispatched at once.
  ASSERT_TGM_OK(tgm_async_file_message_count(f.get(), nullptr, 0, &t));
  task_ptr task(t);
  while (!tgm_async_task_is_ready(task.get())) std::this_thread::yield();
  completion late;
  ASSERT_TGM_OK(tgm_async_task_set_completion(task.get(), &completion::on_done, &late));
  ASSERT_TRUE(late.wait());
  uint64_t n = 0;
  ASSERT_TGM_OK(tgm_async_task_join_size(task.get(), &n));
  EXPECT_EQ(tgm_async_task_set_completion(task.get(), nullptr, nullptr), TGM_ERROR_INVALID_ARG);

  // Joined without a callback: too late to register one.
  ASSERT_TGM_OK(tgm_async_file_message_count(f.get(), nullptr, 0, &t));
  task.reset(t);
  ASSERT_TGM_OK(tgm_async_task_join_size(task.get(), &n));
  completion never;
  EXPECT_EQ(tgm_async_task_set_completion(task.get(), &completion::on_done, &never), TGM_ERROR_INVALID_ARG);
  EXPECT_NE(last_error().find("task result already consumed"), std::string::npos) << last_error();

  // Freeing the handle early neither cancels the work nor drops the callback.
  ASSERT_TGM_OK(tgm_async_file_message_count(f.get(), nullptr, 0, &t));
  completion freed;
  ASSERT_TGM_OK(tgm_async_task_set_completion(t, &completion::on_done, &freed));
  tgm_async_task_free(t);
  EXPECT_TRUE(freed.wait());
}

TEST_F(CapiAsync, Cancellation) {
  const async_file_ptr f = open_async(path_);
  const token_ptr tok(tgm_cancellation_token_create());
  ASSERT_NE(tok, nullptr);
  EXPECT_FALSE(tgm_cancellation_token_is_cancelled(tok.get()));
  tgm_async_task_t* t = nullptr;
  ASSERT_TGM_OK(tgm_async_file_message_count(f.get(), tok.get(), 0, &t));
  task_ptr before(t);
  uint64_t n = 0;
  ASSERT_TGM_OK(tgm_async_task_join_size(before.get(), &n));  // not cancelled yet

  tgm_cancellation_token_cancel(tok.get());
  tgm_cancellation_token_cancel(tok.get());  // idempotent
  EXPECT_TRUE(tgm_cancellation_token_is_cancelled(tok.get()));
  std::vector<task_ptr> tasks;
  for (int i = 0; i < 10; ++i) {
    ASSERT_TGM_OK(tgm_async_file_decode_message(f.get(), 0, true, 0, true, false, tok.get(), 0, &t));
    tasks.emplace_back(t);
  }
  for (auto& task : tasks) {
    EXPECT_TRUE(tgm_async_task_is_ready(task.get()));  // settled at launch
    tgm_message_t* m = nullptr;
    EXPECT_EQ(tgm_async_task_join_message(task.get(), &m), TGM_ERROR_CANCELLED);
    EXPECT_EQ(last_error().rfind("async task cancelled: ", 0), 0U) << last_error();
  }
  // Cancelling a resolved task changes nothing.
  ASSERT_TGM_OK(tgm_async_file_message_count(f.get(), nullptr, 0, &t));
  const task_ptr done(t);
  while (!tgm_async_task_is_ready(done.get())) std::this_thread::yield();
  tgm_async_task_cancel(done.get());
  ASSERT_TGM_OK(tgm_async_task_join_size(done.get(), &n));
  EXPECT_EQ(n, 5U);
  // A token freed while its tasks run.
  tgm_cancellation_token_t* temp = tgm_cancellation_token_create();
  ASSERT_TGM_OK(tgm_async_file_message_count(f.get(), temp, 0, &t));
  tgm_cancellation_token_free(temp);
  const task_ptr orphan(t);
  ASSERT_TGM_OK(tgm_async_task_join_size(orphan.get(), &n));
  EXPECT_FALSE(tgm_cancellation_token_is_cancelled(nullptr));
  tgm_cancellation_token_cancel(nullptr);
  tgm_cancellation_token_free(nullptr);
  // A freed token is refused by launchers.
  tgm_cancellation_token_t* gone = tgm_cancellation_token_create();
  tgm_cancellation_token_free(gone);
  EXPECT_EQ(tgm_async_file_message_count(f.get(), gone, 0, &t), TGM_ERROR_INVALID_ARG);
}

TEST_F(CapiAsync, ManyConcurrentRequests) {
  const async_file_ptr f = open_async(path_);
  constexpr int threads = 4;
  constexpr int per_thread = 60;
  std::atomic<int> good{0};
  std::atomic<int> callbacks{0};
  std::vector<std::thread> pool;
  for (int th = 0; th < threads; ++th) {
    pool.emplace_back([&, th] {
      std::vector<tgm_async_task_t*> tasks;
      for (int i = 0; i < per_thread; ++i) {
        tgm_async_task_t* t = nullptr;
        const auto msg = static_cast<size_t>((th + i) % 5);
        if (tgm_async_file_decode_object(f.get(), msg, static_cast<size_t>(i % 2), true, 0, true, true,
                                         nullptr, 30000, &t) != TGM_ERROR_OK) {
          continue;
        }
        if (i % 3 == 0) {
          (void)tgm_async_task_set_completion(
              t, [](void* counter) { static_cast<std::atomic<int>*>(counter)->fetch_add(1); }, &callbacks);
        }
        tasks.push_back(t);
      }
      for (size_t i = 0; i < tasks.size(); ++i) {
        tgm_message_t* m = nullptr;
        if (tgm_async_task_join_message(tasks[i], &m) == TGM_ERROR_OK) {
          const char* dtype = tgm_object_dtype(m, 0);
          if (dtype != nullptr && std::string(dtype) == (i % 2 == 0 ? "float32" : "int16")) good.fetch_add(1);
          tgm_message_free(m);
        }
        tgm_async_task_free(tasks[i]);
      }
    });
  }
  for (auto& t : pool) t.join();
  EXPECT_EQ(good.load(), threads * per_thread);
  for (int i = 0; i < 3000 && callbacks.load() < threads * (per_thread / 3); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  EXPECT_EQ(callbacks.load(), threads * (per_thread / 3));
}

TEST_F(CapiAsync, CloseWithTasksInFlight) {
  tgm_async_file_t* f = open_async(path_).release();
  std::vector<task_ptr> tasks;
  for (int i = 0; i < 20; ++i) {
    tgm_async_task_t* t = nullptr;
    ASSERT_TGM_OK(
        tgm_async_file_decode_message(f, static_cast<size_t>(i % 5), true, 0, true, false, nullptr, 0, &t));
    tasks.emplace_back(t);
  }
  tgm_async_file_close(f);  // the tasks keep the file alive
  for (auto& t : tasks) {
    tgm_message_t* m = nullptr;
    ASSERT_TGM_OK(tgm_async_task_join_message(t.get(), &m));
    tgm_message_free(m);
  }
  uint64_t n = 0;
  EXPECT_EQ(tgm_async_file_message_count(f, nullptr, 0, nullptr), TGM_ERROR_INVALID_ARG);
  tgm_async_task_t* t = nullptr;
  EXPECT_EQ(tgm_async_file_message_count(f, nullptr, 0, &t), TGM_ERROR_INVALID_ARG);  // closed
  (void)n;
}

TEST(CapiAsyncEncoder, WritesInLaunchOrder) {
  const fs::path path = scratch_dir("aenc") / "a.tgm";
  tgm_async_task_t* t = nullptr;
  EXPECT_EQ(tgm_async_streaming_encoder_create(path.c_str(), "not json", nullptr, 0, nullptr, 0, &t),
            TGM_ERROR_METADATA);  // synchronous
  EXPECT_EQ(tgm_async_streaming_encoder_create(path.c_str(), "{}", "sha", 0, nullptr, 0, &t),
            TGM_ERROR_INVALID_ARG);
  ASSERT_TGM_OK(tgm_async_streaming_encoder_create(path.c_str(), R"({"experiment":"async"})", "xxh3", 0,
                                                   nullptr, 0, &t));
  task_ptr create(t);
  tgm_async_streaming_encoder_t* e = nullptr;
  ASSERT_TGM_OK(tgm_async_task_join_async_streaming_encoder(create.get(), &e));
  const async_encoder_ptr enc(e);
  EXPECT_STREQ(tgm_async_streaming_encoder_path(enc.get()), path.c_str());
  size_t count = 99;
  EXPECT_EQ(tgm_async_streaming_encoder_try_object_count(enc.get(), &count), TGM_OBJECT_COUNT_STATUS_OK);
  EXPECT_EQ(count, 0U);

  // Launch every write before joining any: they run in launch order.
  constexpr int objects = 12;
  std::vector<std::vector<int16_t>> data;
  std::vector<task_ptr> writes;
  for (int i = 0; i < objects; ++i) {
    data.push_back({static_cast<int16_t>(i), 1, 2, 3});
    if (i == 3) {
      ASSERT_TGM_OK(tgm_async_streaming_encoder_write_preceder(enc.get(), R"({"mars":{"param":"p3"}})",
                                                               nullptr, 0, &t));
      writes.emplace_back(t);
    }
    const auto* bytes = reinterpret_cast<const uint8_t*>(data.back().data());
    if (i % 2 == 0) {
      ASSERT_TGM_OK(tgm_async_streaming_encoder_write_object(enc.get(), int16_descriptor_json(), bytes, 8,
                                                             nullptr, 0, &t));
    } else {
      ASSERT_TGM_OK(tgm_async_streaming_encoder_write_pre_encoded(enc.get(), int16_descriptor_json(), bytes,
                                                                  8, nullptr, 0, &t));
    }
    writes.emplace_back(t);
    data.back().assign(4, -1);  // the launch copied the data
  }
  const TgmObjectCountStatus st = tgm_async_streaming_encoder_try_object_count(enc.get(), &count);
  EXPECT_TRUE(st == TGM_OBJECT_COUNT_STATUS_OK || st == TGM_OBJECT_COUNT_STATUS_BUSY);
  ASSERT_TGM_OK(tgm_async_streaming_encoder_finish(enc.get(), true, nullptr, 0, &t));
  writes.emplace_back(t);
  for (auto& w : writes) ASSERT_TGM_OK(tgm_async_task_join_void(w.get()));
  EXPECT_EQ(tgm_async_streaming_encoder_try_object_count(enc.get(), &count),
            TGM_OBJECT_COUNT_STATUS_FINISHED);
  EXPECT_EQ(tgm_async_streaming_encoder_object_count(enc.get()), SIZE_MAX);
  EXPECT_EQ(tgm_async_streaming_encoder_try_object_count(enc.get(), nullptr),
            TGM_OBJECT_COUNT_STATUS_NULL_HANDLE);
  EXPECT_EQ(tgm_async_streaming_encoder_try_object_count(nullptr, &count),
            TGM_OBJECT_COUNT_STATUS_NULL_HANDLE);

  // Later operations resolve to a framing error.
  const int16_t more[4] = {0, 0, 0, 0};
  ASSERT_TGM_OK(tgm_async_streaming_encoder_write_object(
      enc.get(), int16_descriptor_json(), reinterpret_cast<const uint8_t*>(more), 8, nullptr, 0, &t));
  task_ptr late(t);
  EXPECT_EQ(tgm_async_task_join_void(late.get()), TGM_ERROR_FRAMING);
  EXPECT_NE(last_error().find("encoder already finished"), std::string::npos) << last_error();
  ASSERT_TGM_OK(tgm_async_streaming_encoder_finish(enc.get(), false, nullptr, 0, &t));
  late.reset(t);
  EXPECT_EQ(tgm_async_task_join_void(late.get()), TGM_ERROR_FRAMING);

  const message_ptr msg = decode_file_message(path);
  ASSERT_EQ(tgm_message_num_objects(msg.get()), static_cast<size_t>(objects));
  for (int i = 0; i < objects; ++i) {
    EXPECT_EQ(
        reinterpret_cast<const int16_t*>(tgm_object_data(msg.get(), static_cast<size_t>(i), nullptr))[0], i);
  }
  tgm_metadata_t* md = nullptr;
  ASSERT_TGM_OK(tgm_message_metadata(msg.get(), &md));
  const metadata_ptr meta(md);
  EXPECT_STREQ(tgm_metadata_get_string_at(meta.get(), 3, "mars.param"), "p3");
  EXPECT_STREQ(tgm_metadata_get_string(meta.get(), "experiment"), "async");
}

TEST(CapiAsyncEncoder, ArgumentErrorsAreSynchronous) {
  const fs::path path = scratch_dir("aenc_args") / "a.tgm";
  tgm_async_task_t* t = nullptr;
  tgm_async_streaming_encoder_t* enc = create_async_encoder(path).release();
  ASSERT_NE(enc, nullptr);
  EXPECT_EQ(tgm_async_streaming_encoder_write_preceder(enc, "[1,2]", nullptr, 0, &t), TGM_ERROR_METADATA);
  EXPECT_EQ(tgm_async_streaming_encoder_write_object(enc, "{}", reinterpret_cast<const uint8_t*>("ab"), 2,
                                                     nullptr, 0, &t),
            TGM_ERROR_METADATA);
  EXPECT_EQ(
      tgm_async_streaming_encoder_write_object(enc, int16_descriptor_json(), nullptr, 8, nullptr, 0, &t),
      TGM_ERROR_INVALID_ARG);
  EXPECT_EQ(tgm_async_streaming_encoder_write_pre_encoded(nullptr, int16_descriptor_json(), nullptr, 8,
                                                          nullptr, 0, &t),
            TGM_ERROR_INVALID_ARG);
  EXPECT_EQ(tgm_async_streaming_encoder_finish(nullptr, true, nullptr, 0, &t), TGM_ERROR_INVALID_ARG);
  EXPECT_EQ(tgm_async_streaming_encoder_path(nullptr), nullptr);
  EXPECT_EQ(tgm_async_streaming_encoder_object_count(nullptr), SIZE_MAX);
  // Freed with a write in flight: the write completes, the file is never
  // completed (the destination does not appear).
  const int16_t v[4] = {1, 2, 3, 4};
  ASSERT_TGM_OK(tgm_async_streaming_encoder_write_object(
      enc, int16_descriptor_json(), reinterpret_cast<const uint8_t*>(v), 8, nullptr, 0, &t));
  task_ptr write(t);
  tgm_async_streaming_encoder_free(enc);
  ASSERT_TGM_OK(tgm_async_task_join_void(write.get()));
  write.reset();
  EXPECT_FALSE(fs::exists(path));
  tgm_async_streaming_encoder_free(nullptr);
}

}  // namespace
