// tensogram/core/memory.hpp: the huge-page advice reaches the kernel. A
// large table reserved with `reserve_advised` is backed by transparent huge
// pages once filled, where the system offers them; the same table without
// the advice is not (in Linux's default "madvise" mode), so the check tells
// the two apart. Contents are unaffected.
#include <gtest/gtest.h>

#include <sys/resource.h>

#include <atomic>
#include <cctype>
#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

#include "tensogram/core/memory.hpp"

namespace {

// The system's THP mode: "always", "madvise", "never", or "" when unknown.
std::string thp_mode() {
  std::ifstream in("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string line;
  std::getline(in, line);
  const auto open = line.find('[');
  const auto close = line.find(']');
  if (open == std::string::npos || close == std::string::npos || close < open) return "";
  return line.substr(open + 1, close - open - 1);
}

// "AnonHugePages" (KiB) of the mapping that holds `p`, from
// /proc/self/smaps; -1 when it cannot be read.
long huge_kib_at(const void* p) {
  std::ifstream in("/proc/self/smaps");
  const auto at = reinterpret_cast<std::uintptr_t>(p);
  std::string line;
  bool inside = false;
  while (std::getline(in, line)) {
    // A mapping starts with "begin-end perms ...", both in hex.
    const auto dash = line.find('-');
    if (!line.empty() && std::isxdigit(static_cast<unsigned char>(line[0])) != 0 &&
        dash != std::string::npos && line.find(' ') > dash) {
      const std::uintptr_t begin = std::stoull(line.substr(0, dash), nullptr, 16);
      const std::uintptr_t end = std::stoull(line.substr(dash + 1), nullptr, 16);
      inside = at >= begin && at < end;
      continue;
    }
    if (inside && line.rfind("AnonHugePages:", 0) == 0) return std::stol(line.substr(14));
  }
  return -1;
}

// Minor page faults of this process so far.
long minor_faults() {
  rusage r{};
  getrusage(RUSAGE_SELF, &r);
  return r.ru_minflt;
}

bool has_thp() {
  const std::string mode = thp_mode();
  return mode == "always" || mode == "madvise";
}

// Under AddressSanitizer the allocator is the sanitizer's: it neither
// places blocks as glibc does (whole huge pages from a boundary) nor
// touches only the block (its shadow memory faults too), so fault counts
// say nothing there.
#if defined(__SANITIZE_ADDRESS__)
constexpr bool sanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool sanitized = true;
#else
constexpr bool sanitized = false;
#endif
#else
constexpr bool sanitized = false;
#endif

constexpr std::size_t rows = std::size_t{8} << 20;  // 64 MiB of 8-byte rows

void fill(std::vector<std::uint64_t>& table) {
  for (std::size_t i = 0; i < rows; ++i) table.push_back(i * 3 + 1);
}

}  // namespace

TEST(MemoryAdvice, AdvisedTableIsBackedByHugePages) {
  const std::string mode = thp_mode();
  if (mode != "always" && mode != "madvise")
    GTEST_SKIP() << "no transparent huge pages here ('" << mode << "')";
  std::vector<std::uint64_t> table;
  tensogram::reserve_advised(table, rows);
  ASSERT_GE(table.capacity(), rows);
  const void* const storage = table.data();
  fill(table);
  ASSERT_EQ(table.data(), storage);  // filled in place: the advised block
  for (std::size_t i = 0; i < rows; i += 4099) ASSERT_EQ(table[i], i * 3 + 1);
  const long advised = huge_kib_at(table.data() + rows / 2);
  ASSERT_GE(advised, 0) << "/proc/self/smaps unreadable";
  // 32 huge pages' worth; the kernel may fall back to small pages for a
  // few when memory is fragmented, not for most of them.
  EXPECT_GE(advised, 16 * 2048);

  if (mode != "madvise") return;
  std::vector<std::uint64_t> plain;
  plain.reserve(rows);
  fill(plain);
  EXPECT_EQ(huge_kib_at(plain.data() + rows / 2), 0) << "without the advice, small pages";
}

TEST(MemoryAdvice, SmallOrSufficientReservationsAreLeftAlone) {
  std::vector<std::uint64_t> small;
  tensogram::reserve_advised(small, 16);
  EXPECT_GE(small.capacity(), 16U);
  small.assign(16, 7);
  const auto* const data = small.data();
  tensogram::reserve_advised(small, 8);  // room already: no new block
  EXPECT_EQ(small.data(), data);
  EXPECT_EQ(small, std::vector<std::uint64_t>(16, 7));
}

// From its first byte to its last: 5 MiB reserved with reserve_advised is
// three whole huge pages (huge_page_capacity), filled with a few faults.
// Without the advice of the last, partly used 2 MiB (or of the first,
// where the allocator's header lies) that page alone would fault ~500
// times; without any advice, ~1,300.
TEST(MemoryAdvice, AdvisedBufferIsHugePagesEndToEnd) {
  if (!has_thp()) GTEST_SKIP() << "no transparent huge pages here";
  if (sanitized) GTEST_SKIP() << "the sanitizer's allocator places and touches memory its own way";
  constexpr std::size_t size = std::size_t{5} << 20;
  std::vector<std::byte> buffer;
  tensogram::reserve_advised(buffer, size);
  const long before = minor_faults();
  buffer.resize(size, std::byte{1});
  const long faults = minor_faults() - before;
  EXPECT_EQ(buffer[size - 1], std::byte{1});
  EXPECT_LT(faults, 64) << "the buffer's first or last 2 MiB is in small pages";
}

// A table built at its full size by a vector with advised_allocator, of
// elements that cannot move: value-initialised on huge pages, few faults.
TEST(MemoryAdvice, AdvisedAllocatorBuildsTablesOnHugePages) {
  if (!has_thp()) GTEST_SKIP() << "no transparent huge pages here";
  if (sanitized) GTEST_SKIP() << "the sanitizer's allocator places and touches memory its own way";
  struct row {
    std::uint64_t a = 7;
    std::atomic<bool> flag{false};
  };
  constexpr std::size_t n = std::size_t{1} << 20;  // 16 MiB
  const long before = minor_faults();
  const std::vector<row, tensogram::advised_allocator<row>> table(n);
  const long faults = minor_faults() - before;
  EXPECT_EQ(table[n - 1].a, 7U);
  EXPECT_FALSE(table[n / 2].flag.load());
  EXPECT_LT(faults, 64) << "without the advice: ~4,100 small pages";
}
