// Helpers of the C ABI GoogleTest suite: RAII owners for the C handles, a
// two-object test message, scratch directories and isolated runs.
#pragma once

#include <fcntl.h>
#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "tensogram.h"

namespace capi_test {

/// Expects TGM_ERROR_OK and shows the last error otherwise.
#define EXPECT_TGM_OK(call)                                                   \
  do {                                                                        \
    const tgm_error expect_tgm_ok_e = (call);                                 \
    EXPECT_EQ(expect_tgm_ok_e, TGM_ERROR_OK)                                  \
        << #call << ": " << (tgm_last_error() ? tgm_last_error() : "(none)"); \
  } while (0)
#define ASSERT_TGM_OK(call)                                                   \
  do {                                                                        \
    const tgm_error assert_tgm_ok_e = (call);                                 \
    ASSERT_EQ(assert_tgm_ok_e, TGM_ERROR_OK)                                  \
        << #call << ": " << (tgm_last_error() ? tgm_last_error() : "(none)"); \
  } while (0)

/// The last error as a std::string ("" when none).
inline std::string last_error() {
  const char* e = tgm_last_error();
  return e != nullptr ? e : "";
}

template <typename T, void (*Free)(T*)>
struct handle_deleter {
  void operator()(T* p) const noexcept { Free(p); }
};
using message_ptr = std::unique_ptr<tgm_message_t, handle_deleter<tgm_message_t, tgm_message_free>>;
using metadata_ptr = std::unique_ptr<tgm_metadata_t, handle_deleter<tgm_metadata_t, tgm_metadata_free>>;
using file_ptr = std::unique_ptr<tgm_file_t, handle_deleter<tgm_file_t, tgm_file_close>>;
using task_ptr = std::unique_ptr<tgm_async_task_t, handle_deleter<tgm_async_task_t, tgm_async_task_free>>;
using async_file_ptr =
    std::unique_ptr<tgm_async_file_t, handle_deleter<tgm_async_file_t, tgm_async_file_close>>;
using token_ptr = std::unique_ptr<tgm_cancellation_token_t,
                                  handle_deleter<tgm_cancellation_token_t, tgm_cancellation_token_free>>;
using async_encoder_ptr =
    std::unique_ptr<tgm_async_streaming_encoder_t,
                    handle_deleter<tgm_async_streaming_encoder_t, tgm_async_streaming_encoder_free>>;

/// Owns a tgm_bytes_t.
class bytes {
 public:
  bytes() = default;
  explicit bytes(tgm_bytes_t b) : b_(b) {}
  bytes(const bytes&) = delete;
  bytes& operator=(const bytes&) = delete;
  ~bytes() { tgm_bytes_free(b_); }
  tgm_bytes_t* out() {
    tgm_bytes_free(b_);
    b_ = {nullptr, 0};
    return &b_;
  }
  [[nodiscard]] const uint8_t* data() const { return b_.data; }
  [[nodiscard]] size_t size() const { return b_.len; }
  [[nodiscard]] std::string text() const {
    return std::string(reinterpret_cast<const char*>(b_.data), b_.len);
  }
  [[nodiscard]] std::vector<uint8_t> vec() const { return std::vector<uint8_t>(b_.data, b_.data + b_.len); }

 private:
  tgm_bytes_t b_{nullptr, 0};
};

/// Objects of the standard test message: float32 [2,3] (no codec) and
/// int16 [4] (zstd), native byte order.
inline const std::vector<float> f32_values{1.5f, 2.5f, -3.0f, 4.0f, 5.25f, 6.0f};
inline const std::vector<int16_t> i16_values{-7, 8, 9, 1000};

inline const char* two_objects_json() {
  return R"({"descriptors": [
      {"type":"ntensor","ndim":2,"shape":[2,3],"strides":[3,1],"dtype":"float32",
       "encoding":"none","filter":"none","compression":"none"},
      {"type":"ntensor","ndim":1,"shape":[4],"strides":[1],"dtype":"int16",
       "encoding":"none","filter":"none","compression":"zstd","zstd_level":3}],
    "base": [{"mars":{"param":"2t","step":12,"class":"od"},"ratio":0.5,"flag":true,"note":""},
             {"mars":{"param":"msl"},"levels":[1000,850]}],
    "experiment": "exp01"})";
}

inline const char* int16_descriptor_json() {
  return R"({"type":"ntensor","ndim":1,"shape":[4],"strides":[1],"dtype":"int16",
             "encoding":"none","filter":"none","compression":"none"})";
}

/// The standard message, encoded with xxh3 hashes.
inline std::vector<uint8_t> encode_two(const char* hash = "xxh3") {
  const uint8_t* ptrs[2] = {reinterpret_cast<const uint8_t*>(f32_values.data()),
                            reinterpret_cast<const uint8_t*>(i16_values.data())};
  const size_t lens[2] = {f32_values.size() * sizeof(float), i16_values.size() * sizeof(int16_t)};
  bytes out;
  EXPECT_TGM_OK(tgm_encode(two_objects_json(), ptrs, lens, 2, hash, 0, out.out()));
  return out.vec();
}

/// A fresh directory under the test's working directory.
inline std::filesystem::path scratch_dir(const std::string& name) {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::filesystem::path dir = std::filesystem::current_path() / "capi_scratch" /
                              (std::string(info->test_suite_name()) + "." + info->name() + "." + name + "." +
                               std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

/// Writes `n` copies of the standard message to `path`.
inline void write_file(const std::filesystem::path& path, int n) {
  tgm_file_t* f = nullptr;
  ASSERT_TGM_OK(tgm_file_create(path.c_str(), &f));
  const std::vector<uint8_t> msg = encode_two();
  for (int i = 0; i < n; ++i) EXPECT_TGM_OK(tgm_file_append_raw(f, msg.data(), msg.size()));
  tgm_file_close(f);
}

/// Message `index` of the file at `path`, decoded with hash verification.
inline message_ptr decode_file_message(const std::filesystem::path& path, size_t index = 0) {
  tgm_file_t* f = nullptr;
  EXPECT_TGM_OK(tgm_file_open(path.c_str(), &f));
  const file_ptr file(f);
  tgm_message_t* m = nullptr;
  EXPECT_TGM_OK(tgm_file_decode_message(file.get(), index, 1, 0, 1, &m));
  return message_ptr(m);
}

/// An async streaming encoder writing `path` (created and joined).
inline async_encoder_ptr create_async_encoder(const std::filesystem::path& path, const char* hash = nullptr) {
  tgm_async_task_t* t = nullptr;
  EXPECT_TGM_OK(tgm_async_streaming_encoder_create(path.c_str(), "{}", hash, 0, nullptr, 0, &t));
  const task_ptr create(t);
  tgm_async_streaming_encoder_t* e = nullptr;
  EXPECT_TGM_OK(tgm_async_task_join_async_streaming_encoder(create.get(), &e));
  return async_encoder_ptr(e);
}

/// For debugging one test: CAPI_TEST_IN_PROCESS=1 runs the body in the test
/// process itself, with the usual failure output.
inline void run_isolated(const std::function<void()>& body) {
  if (std::getenv("CAPI_TEST_IN_PROCESS") != nullptr) {
    body();
    return;
  }
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        // A death-test child reports no test results: collect the failures
        // (from every thread) and print them on stderr, which the parent shows.
        ::testing::TestPartResultArray failures;
        {
          const ::testing::ScopedFakeTestPartResultReporter reporter(
              ::testing::ScopedFakeTestPartResultReporter::INTERCEPT_ALL_THREADS, &failures);
          body();
        }
        for (int i = 0; i < failures.size(); ++i) {
          const ::testing::TestPartResult& part = failures.GetTestPartResult(i);
          std::fprintf(stderr, "%s:%d: %s\n", part.file_name() != nullptr ? part.file_name() : "?",
                       part.line_number(), part.message());
        }
        std::exit(failures.size() == 0 ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "");
}

/// A FIFO: opening it for reading blocks until a writer opens it, which is
/// how the tests hold a worker deterministically (tgm_async_file_open
/// reads the size at open).
class fifo {
 public:
  explicit fifo(std::filesystem::path p) : path_(std::move(p)) {
    std::filesystem::remove(path_);
    EXPECT_EQ(::mkfifo(path_.c_str(), 0600), 0);
  }
  fifo(const fifo&) = delete;
  fifo& operator=(const fifo&) = delete;
  ~fifo() { std::filesystem::remove(path_); }
  [[nodiscard]] const std::filesystem::path& path() const { return path_; }
  /// Unblocks one reader waiting in open() (waiting up to 10 s for it to
  /// get there). False when no reader came.
  bool release() const {
    for (int i = 0; i < 10000; ++i) {
      const int fd = ::open(path_.c_str(), O_WRONLY | O_NONBLOCK);
      if (fd >= 0) {
        ::close(fd);
        return true;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return false;
  }

 private:
  std::filesystem::path path_;
};

}  // namespace capi_test
