#include <gtest/gtest.h>

#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <vector>

#include "tensogram/core/buffer.hpp"
#include "tensogram/core/error.hpp"

namespace {

using tensogram::buffer;

std::vector<std::byte> some_bytes(std::size_t n) {
  std::vector<std::byte> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<std::byte>(i * 7 + 3);
  return v;
}

std::vector<std::byte> to_vec(std::span<const std::byte> s) {
  return {s.begin(), s.end()};
}

// A temporary file removed at scope exit.
class temp_file {
 public:
  explicit temp_file(const std::vector<std::byte>& content) {
    path_ = std::filesystem::temp_directory_path() /
            ("tensogram_buffer_test_" + std::to_string(::getpid()) + "_" + std::to_string(counter_++));
    std::ofstream f(path_, std::ios::binary);
    f.write(reinterpret_cast<const char*>(content.data()), static_cast<std::streamsize>(content.size()));
  }
  temp_file(const temp_file&) = delete;
  temp_file& operator=(const temp_file&) = delete;
  ~temp_file() {
    std::error_code ec;
    std::filesystem::remove(path_, ec);
  }
  [[nodiscard]] const std::filesystem::path& path() const { return path_; }

 private:
  static inline int counter_ = 0;
  std::filesystem::path path_;
};

TEST(Buffer, DefaultIsEmptyOwned) {
  const buffer b;
  EXPECT_TRUE(b.empty());
  EXPECT_EQ(b.size(), 0u);
  EXPECT_EQ(b.kind(), buffer::ownership::owned);
}

TEST(Buffer, OwnedTakesTheBytes) {
  auto v = some_bytes(100);
  const std::byte* original = v.data();
  buffer b = buffer::owned(std::move(v));
  EXPECT_EQ(b.kind(), buffer::ownership::owned);
  EXPECT_EQ(b.size(), 100u);
  EXPECT_EQ(b.data(), original);  // moved, not copied
  ASSERT_NE(b.mutable_data(), nullptr);
  b.mutable_data()[5] = std::byte{0x42};
  EXPECT_EQ(b.bytes()[5], std::byte{0x42});
}

TEST(Buffer, AllocateIsOwnedAndWritable) {
  buffer b = buffer::allocate(64);
  EXPECT_EQ(b.kind(), buffer::ownership::owned);
  EXPECT_EQ(b.size(), 64u);
  ASSERT_NE(b.mutable_data(), nullptr);
  std::memset(b.mutable_data(), 0x5A, 64);
  for (std::byte x : b.bytes()) EXPECT_EQ(x, std::byte{0x5A});
  EXPECT_EQ(buffer::allocate(0).size(), 0u);
}

TEST(Buffer, BorrowedDoesNotOwnAndIsReadOnly) {
  const auto v = some_bytes(32);
  buffer b = buffer::borrowed(v);
  EXPECT_EQ(b.kind(), buffer::ownership::borrowed);
  EXPECT_EQ(b.data(), v.data());
  EXPECT_EQ(b.size(), 32u);
  EXPECT_EQ(b.mutable_data(), nullptr);
}

TEST(Buffer, SliceSharesAndBoundsChecks) {
  buffer b = buffer::owned(some_bytes(50));
  buffer s = b.slice(10, 20);
  EXPECT_EQ(s.kind(), buffer::ownership::owned);
  EXPECT_EQ(s.data(), b.data() + 10);
  EXPECT_EQ(s.size(), 20u);
  EXPECT_EQ(s.mutable_data(), nullptr);  // slices are read-only
  EXPECT_TRUE(b.contains(s.bytes()));
  EXPECT_FALSE(s.contains(b.bytes()));
  EXPECT_EQ(b.slice(50, 0).size(), 0u);
  EXPECT_EQ(b.slice(0, 50).size(), 50u);
  EXPECT_THROW((void)b.slice(51, 0), tensogram::invalid_arg_error);
  EXPECT_THROW((void)b.slice(40, 11), tensogram::invalid_arg_error);
  EXPECT_THROW((void)b.slice(1, SIZE_MAX), tensogram::invalid_arg_error);  // offset + length overflows
  EXPECT_THROW((void)b.slice(SIZE_MAX, 2), tensogram::invalid_arg_error);
  try {
    (void)b.slice(45, 10);
    FAIL();
  } catch (const tensogram::invalid_arg_error& e) {
    EXPECT_NE(std::string(e.what()).find("invalid argument: "), std::string::npos);
    EXPECT_EQ(e.code(), TGM_ERROR_INVALID_ARG);
  }
}

TEST(Buffer, ContainsEdges) {
  buffer b = buffer::owned(some_bytes(16));
  EXPECT_TRUE(b.contains(b.bytes()));
  EXPECT_TRUE(b.contains(b.bytes().subspan(15, 1)));
  EXPECT_TRUE(b.contains({}));
  const auto other = some_bytes(16);
  EXPECT_FALSE(b.contains(other));
}

TEST(Buffer, SliceOfOwnedOutlivesParent) {
  const auto expected = some_bytes(4096);
  std::optional<buffer> s;
  {
    buffer parent = buffer::owned(expected);
    s = parent.slice(100, 1000);
  }
  // The parent is gone; the slice still owns the storage (ASan would flag a
  // use after free here).
  EXPECT_EQ(to_vec(s->bytes()), std::vector<std::byte>(expected.begin() + 100, expected.begin() + 1100));
  const buffer s2 = s->slice(10, 10);
  s.reset();
  EXPECT_EQ(to_vec(s2.bytes()), std::vector<std::byte>(expected.begin() + 110, expected.begin() + 120));
}

TEST(Buffer, SliceOfAllocatedOutlivesParent) {
  std::optional<buffer> s;
  {
    buffer parent = buffer::allocate(256);
    for (std::size_t i = 0; i < 256; ++i) parent.mutable_data()[i] = static_cast<std::byte>(i);
    s = parent.slice(200, 56);
  }
  for (std::size_t i = 0; i < 56; ++i) EXPECT_EQ(s->bytes()[i], static_cast<std::byte>(200 + i));
}

TEST(Buffer, MapFileReadsTheFileAndSliceKeepsMappingAlive) {
  const auto content = some_bytes(10000);
  temp_file f(content);
  std::optional<buffer> s;
  {
    buffer m = buffer::map_file(f.path());
    EXPECT_EQ(m.kind(), buffer::ownership::mapped);
    EXPECT_EQ(m.size(), content.size());
    EXPECT_EQ(to_vec(m.bytes()), content);
    EXPECT_EQ(m.mutable_data(), nullptr);
    s = m.slice(5000, 4000);
  }
  EXPECT_EQ(s->kind(), buffer::ownership::mapped);
  EXPECT_EQ(to_vec(s->bytes()), std::vector<std::byte>(content.begin() + 5000, content.begin() + 9000));
}

TEST(Buffer, MapFixtureMatchesStreamRead) {
  const std::string path = std::string(TENSOGRAM_FIXTURES) + "/tgm/simple_f32.tgm";
  std::ifstream in(path, std::ios::binary);
  const std::vector<char> c((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const buffer m = buffer::map_file(path);
  ASSERT_EQ(m.size(), 592u);
  ASSERT_EQ(c.size(), 592u);
  EXPECT_EQ(std::memcmp(m.data(), c.data(), c.size()), 0);
}

TEST(Buffer, MapEmptyFile) {
  temp_file f({});
  const buffer m = buffer::map_file(f.path());
  EXPECT_EQ(m.kind(), buffer::ownership::mapped);
  EXPECT_TRUE(m.empty());
}

TEST(Buffer, MapMissingFileIsIoErrorNamingThePath) {
  const std::string path = "/nonexistent/dir/tensogram_missing_file.tgm";
  try {
    (void)buffer::map_file(path);
    FAIL() << "expected io_error";
  } catch (const tensogram::io_error& e) {
    EXPECT_EQ(std::string(e.what()), "io error: file not found: " + path);
    EXPECT_EQ(e.code(), TGM_ERROR_IO);
  }
}

TEST(Buffer, MapDirectoryIsIoError) {
  const auto dir = std::filesystem::temp_directory_path();
  try {
    (void)buffer::map_file(dir);
    FAIL() << "expected io_error";
  } catch (const tensogram::io_error& e) {
    EXPECT_NE(std::string(e.what()).find(dir.string()), std::string::npos) << e.what();
  }
}

}  // namespace
