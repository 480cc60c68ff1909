// What a file must survive: a hundred thousand messages, many readers at
// once, appends killed or refused half way, truncation and garbage.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <random>
#include <thread>

#include "io_test_support.hpp"

namespace {

using tgtest::bytes;

// AddressSanitizer keeps freed blocks in quarantine and maps shadow memory,
// so the resident set says nothing about the scanner there; the bytes-read
// bound still holds.
constexpr bool k_sanitized = tgtest::k_address_sanitized;

// Resident set size of this process, in bytes (from /proc/self/statm).
std::uint64_t resident_bytes() {
  std::ifstream f("/proc/self/statm");
  std::uint64_t pages = 0;
  std::uint64_t resident = 0;
  f >> pages >> resident;
  return resident * static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
}

TEST(FileRobustness, HundredThousandMessagesScanWithBoundedMemory) {
  tgtest::temp_dir dir;
  const auto p = dir / "many.tgm";
  constexpr std::size_t count = 100000;
  const bytes one = tgtest::make_message(7, 1, 64);  // ~700 bytes
  {
    std::ofstream out(p, std::ios::binary);
    for (std::size_t i = 0; i < count; ++i)
      out.write(reinterpret_cast<const char*>(one.data()), static_cast<std::streamsize>(one.size()));
  }
  const std::uint64_t file_size = std::filesystem::file_size(p);
  ASSERT_EQ(file_size, count * one.size());
  for (tensogram::scan_mode mode : {tensogram::scan_mode::bidirectional, tensogram::scan_mode::forward}) {
    const std::uint64_t before = resident_bytes();
    tensogram::file f = tensogram::file::open(p, mode);
    ASSERT_EQ(f.message_count(), count);
    const std::uint64_t grown = resident_bytes() - std::min(before, resident_bytes());
    const tensogram::io::source_stats s = f.source().stats();
    // Probes only: about 32 bytes per message, never the payloads.
    EXPECT_LE(s.bytes, count * 40 + 64);
    // The message list (16 bytes per message) is all that stays; the file
    // itself (~70 MB) never enters memory.
    if (!k_sanitized) {
      EXPECT_LT(grown, 16U * 1024 * 1024) << "resident set grew by " << grown << " bytes";
    }
    EXPECT_EQ(f.message_extent(count - 1).offset, (count - 1) * one.size());
    EXPECT_EQ(f.decode_object(count / 2, 0).object(0).data_as<float>()[63], tgtest::expected_value(7, 0, 63));
  }
}

TEST(FileRobustness, EightThreadsRandomAccessOnOneFile) {
  tgtest::temp_dir dir;
  const auto p = dir / "shared.tgm";
  constexpr std::size_t messages = 40;
  {
    tensogram::file w = tensogram::file::create(p);
    // Mixed sizes: some above the 256 KiB layout region.
    for (std::size_t i = 0; i < messages; ++i)
      w.append_raw(tgtest::make_message(i, 3, i % 8 == 0 ? 30000 : 50));
  }
  for (bool mapped : {false, true}) {
    SCOPED_TRACE(mapped ? "mmap" : "pread");
    tensogram::file f = mapped ? tensogram::file::open_mmap(p) : tensogram::file::open(p);
    std::atomic<int> failures{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 8; ++t) {
      threads.emplace_back([&, t] {
        std::mt19937_64 rng(static_cast<std::uint64_t>(t));
        for (int k = 0; k < 150; ++k) {
          const std::size_t i = rng() % messages;
          const std::size_t obj = rng() % 3;
          const std::size_t n = i % 8 == 0 ? 30000 : 50;
          try {
            if (rng() % 4 == 0) {
              const tensogram::message m = f.decode_message(i);
              if (m.object(obj).data_as<float>()[n - 1] != tgtest::expected_value(i, obj, n - 1)) ++failures;
            } else {
              const tensogram::message m = f.decode_object(i, obj);
              const std::size_t e = rng() % n;
              if (m.object(0).data_as<float>()[e] != tgtest::expected_value(i, obj, e)) ++failures;
              if (m.global().extra.find("step")->as_uint64() != i) ++failures;
            }
          } catch (const std::exception&) {
            ++failures;
          }
        }
      });
    }
    for (std::thread& th : threads) th.join();
    EXPECT_EQ(failures.load(), 0);
    EXPECT_EQ(f.message_count(), messages);
  }
}

// The first `keep` messages of the file at `p` are byte-identical to
// `prefix`, and every message found decodes with verified hashes.
void expect_earlier_messages_intact(const std::filesystem::path& p, const bytes& prefix, std::size_t keep) {
  const bytes now = tgtest::read_bytes(p);
  ASSERT_GE(now.size(), prefix.size());
  EXPECT_EQ(0, std::memcmp(now.data(), prefix.data(), prefix.size()));
  tensogram::file f = tensogram::file::open(p);
  ASSERT_GE(f.message_count(), keep);
  tensogram::decode_options verify;
  verify.verify_hash = true;
  for (std::size_t i = 0; i < f.message_count(); ++i) EXPECT_NO_THROW((void)f.decode_message(i, verify)) << i;
}

TEST(FileRobustness, AppendKilledMidWayLosesNothing) {
  tgtest::temp_dir dir;
  const auto p = dir / "killed.tgm";
  {
    tensogram::file w = tensogram::file::create(p);
    for (std::size_t i = 0; i < 5; ++i) w.append_raw(tgtest::make_message(i));
  }
  const bytes prefix = tgtest::read_bytes(p);
  const bytes big = tgtest::make_message(9, 4, 2'000'000);  // 32 MB per append
  int partial_tails = 0;
  for (int round = 0; round < 3; ++round) {
    const bytes before = tgtest::read_bytes(p);
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      tensogram::file w = tensogram::file::open(p);
      for (;;) w.append_raw(big);
    }
    // Kill once the child is writing (the file has grown), at a varying
    // moment of its write.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (std::filesystem::file_size(p) == before.size() && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(round * 7));
    ::kill(child, SIGKILL);
    int status = 0;
    ::waitpid(child, &status, 0);
    EXPECT_TRUE(WIFSIGNALED(status));
    expect_earlier_messages_intact(p, before, 5);
    tensogram::file f = tensogram::file::open(p);
    const tensogram::scan_entry last = f.message_extent(f.message_count() - 1);
    const std::uint64_t tail = std::filesystem::file_size(p) - (last.offset + last.length);
    partial_tails += tail > 0 ? 1 : 0;
    std::printf("round %d: %zu messages, %llu-byte partial tail\n", round, f.message_count(),
                static_cast<unsigned long long>(tail));
  }
  // Informative: how many kills landed inside a write.
  RecordProperty("partial_tails", partial_tails);
  expect_earlier_messages_intact(p, prefix, 5);
}

TEST(FileRobustness, AppendOverTheFileSizeLimitLeavesTheFileAsItWas) {
  tgtest::temp_dir dir;
  const auto p = dir / "limited.tgm";
  {
    tensogram::file w = tensogram::file::create(p);
    for (std::size_t i = 0; i < 3; ++i) w.append_raw(tgtest::make_message(i));
  }
  const bytes before = tgtest::read_bytes(p);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // The write past the limit fails with EFBIG instead of killing us.
    ::signal(SIGXFSZ, SIG_IGN);
    const rlimit lim{before.size() + 1000, before.size() + 1000};
    if (::setrlimit(RLIMIT_FSIZE, &lim) != 0) ::_exit(3);
    try {
      tensogram::file w = tensogram::file::open(p);
      w.append_raw(tgtest::make_message(5, 1, 10000));
    } catch (const tensogram::io_error&) {
      ::_exit(0);  // the expected outcome
    } catch (...) {
      ::_exit(2);
    }
    ::_exit(1);
  }
  int status = 0;
  ::waitpid(child, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_EQ(tgtest::read_bytes(p), before);  // cut back to its old length
  expect_earlier_messages_intact(p, before, 3);
}

TEST(FileRobustness, AppendOnAFullFilesystemLeavesTheFileAsItWas) {
  tgtest::temp_dir dir;
  const auto mnt = dir / "small";
  std::filesystem::create_directory(mnt);
  if (::mount("tensogram-test", mnt.c_str(), "tmpfs", 0, "size=256k") != 0) {
    GTEST_SKIP() << "cannot mount a small tmpfs here (" << std::strerror(errno)
                 << "); RLIMIT_FSIZE covers the same path";
  }
  struct unmount {
    std::filesystem::path p;
    ~unmount() { ::umount2(p.c_str(), MNT_DETACH); }
  } guard{mnt};
  const auto p = mnt / "full.tgm";
  tensogram::file w = tensogram::file::create(p);
  for (std::size_t i = 0; i < 3; ++i) w.append_raw(tgtest::make_message(i));
  const bytes before = tgtest::read_bytes(p);
  EXPECT_THROW(w.append_raw(tgtest::make_message(5, 1, 100000)), tensogram::io_error);
  EXPECT_EQ(tgtest::read_bytes(p), before);
  EXPECT_EQ(w.message_count(), 3U);
  expect_earlier_messages_intact(p, before, 3);
}

TEST(FileRobustness, TruncatedAtEveryOffsetOfTheLastMessage) {
  const bytes whole = tgtest::read_fixture("ten-msg-footer.tgm");
  const auto all = tensogram::scan(whole);
  ASSERT_EQ(all.size(), 10U);
  tgtest::temp_dir dir;
  const auto p = dir / "cut.tgm";
  for (std::size_t cut = all.back().offset; cut < whole.size(); ++cut) {
    tgtest::write_bytes(p, std::span<const std::byte>(whole).first(cut));
    for (tensogram::scan_mode mode : {tensogram::scan_mode::bidirectional, tensogram::scan_mode::forward}) {
      tensogram::file f = tensogram::file::open(p, mode);
      ASSERT_EQ(f.message_count(), 9U) << "cut at " << cut;
      EXPECT_EQ(f.message_extents(), std::vector<tensogram::scan_entry>(all.begin(), all.end() - 1));
    }
  }
}

TEST(FileRobustness, GarbageBetweenMessagesIsSkipped) {
  const bytes a = tgtest::make_message(1);
  const bytes b = tgtest::make_message(2);
  bytes file(100, std::byte{0x55});
  file.insert(file.end(), a.begin(), a.end());
  file.insert(file.end(), 37, std::byte{0});
  file.insert(file.end(), b.begin(), b.begin() + 30);  // a cut message
  file.insert(file.end(), b.begin(), b.end());
  file.insert(file.end(), 5, std::byte{1});
  tgtest::temp_dir dir;
  const auto p = dir / "junk.tgm";
  tgtest::write_bytes(p, file);
  for (tensogram::scan_mode mode : {tensogram::scan_mode::bidirectional, tensogram::scan_mode::forward}) {
    tensogram::file f = tensogram::file::open(p, mode);
    ASSERT_EQ(f.message_count(), 2U);
    EXPECT_EQ(f.message_extent(0).offset, 100U);
    EXPECT_EQ(f.decode_message(1).object(0).data_as<float>()[0], tgtest::expected_value(2, 0, 0));
  }
}

}  // namespace
