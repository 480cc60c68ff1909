#include "tensogram/codecs/lz4.hpp"

#include <lz4.h>

#include <array>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>

#include "tensogram/core/endian.hpp"
#include "tensogram/core/error.hpp"
#include "tensogram/core/memory.hpp"

namespace tensogram::codecs {

namespace {

// Constants of the lz4_flex block compressor (spec 03 Appendix A).
constexpr std::size_t k_min_match = 4;
constexpr std::size_t k_mf_limit = 12;
constexpr std::size_t k_end_offset = 6;
constexpr std::size_t k_min_length = 13;
constexpr std::size_t k_max_distance = 65535;
constexpr std::size_t k_table_size = 4096;

// Match words are read little-endian (load_le, core/endian.hpp), as liblz4
// reads them on the little-endian hosts the reference's output comes from:
// the hash, and so the compressed bytes, are the same on any host.
class block_writer {
 public:
  explicit block_writer(std::vector<std::byte>& out) noexcept : out_(out) {}
  void byte(unsigned b) { out_.push_back(static_cast<std::byte>(b)); }
  void length(std::size_t x) {
    while (x >= 255) {
      byte(255);
      x -= 255;
    }
    byte(static_cast<unsigned>(x));
  }
  void bytes(const std::byte* p, std::size_t n) { out_.insert(out_.end(), p, p + n); }

 private:
  std::vector<std::byte>& out_;
};

}  // namespace

std::vector<std::byte> lz4_compress(std::span<const std::byte> in) {
  const std::size_t n = in.size();
  if (n > std::numeric_limits<std::uint32_t>::max()) {
    throw encoding_error("lz4 error: input of " + std::to_string(n) +
                         " bytes exceeds the 4 GiB prefix limit");
  }
  std::vector<std::byte> out;
  // The worst case, plus room for the message around it.
  reserve_advised(out, 4 + n + n / 255 + 16 + message_headroom);
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<std::byte>((n >> (8 * i)) & 0xFF));
  block_writer w(out);
  const std::byte* src = in.data();
  auto last_literals = [&](std::size_t start) {
    const std::size_t len = n - start;
    w.byte(static_cast<unsigned>((len < 15 ? len : 15) << 4));
    if (len >= 15) w.length(len - 15);
    w.bytes(src + start, len);
  };
  if (n < k_min_length) {
    last_literals(0);
    return out;
  }
  const bool small = n < k_max_distance;
  std::array<std::uint32_t, k_table_size> table{};  // u16 semantics when small (values < 65535)
  auto hash = [&](std::size_t pos) -> std::size_t {
    if (small) return ((load_le<std::uint32_t>(src + pos) * 2654435761U) >> 16) >> 4;
    return static_cast<std::size_t>(((load_le<std::uint64_t>(src + pos) << 24) * 889523592379ULL) >> 48) >> 4;
  };
  const std::size_t end_check = n - k_mf_limit;
  std::size_t lit = 0;
  table[hash(0)] = 0;
  std::size_t cur = 1;
  for (;;) {
    std::size_t misses = 32;
    std::size_t next = cur;
    std::size_t cand = 0;
    for (;;) {  // find a match
      const std::size_t step = misses >> 5;
      ++misses;
      cur = next;
      next += step;
      if (cur > end_check) {
        last_literals(lit);
        return out;
      }
      const std::size_t h = hash(cur);
      cand = table[h];
      table[h] = static_cast<std::uint32_t>(cur);
      if (cur - cand > k_max_distance) continue;
      if (load_le<std::uint32_t>(src + cand) == load_le<std::uint32_t>(src + cur)) break;
    }
    const std::size_t off = cur - cand;
    while (cand > 0 && cur > lit && src[cur - 1] == src[cand - 1]) {
      --cur;
      --cand;
    }
    const std::size_t litlen = cur - lit;
    cur += k_min_match;
    cand += k_min_match;
    std::size_t m = 0;
    while (cur + m < n - k_end_offset && src[cur + m] == src[cand + m]) ++m;
    cur += m;
    table[hash(cur - 2)] = static_cast<std::uint32_t>(cur - 2);
    w.byte(static_cast<unsigned>(((litlen < 15 ? litlen : 15) << 4) | (m < 15 ? m : 15)));
    if (litlen >= 15) w.length(litlen - 15);
    w.bytes(src + lit, litlen);
    w.byte(static_cast<unsigned>(off & 0xFF));
    w.byte(static_cast<unsigned>((off >> 8) & 0xFF));
    if (m >= 15) w.length(m - 15);
    lit = cur;
  }
}

namespace {

// The prefixed length, checked against `max_size` before any allocation.
std::uint32_t lz4_prefix(std::span<const std::byte> in, std::size_t max_size) {
  if (in.size() < 4) throw encoding_error("lz4 error: payload shorter than its 4-byte size prefix");
  std::uint32_t size = 0;
  for (int i = 3; i >= 0; --i)
    size = (size << 8) | static_cast<std::uint32_t>(in[static_cast<std::size_t>(i)]);
  if (size > max_size) {
    throw encoding_error("lz4 error: prefix claims " + std::to_string(size) +
                         " decompressed bytes, more than the " + std::to_string(max_size) + " expected");
  }
  if (in.size() - 4 > static_cast<std::size_t>(std::numeric_limits<int>::max()) ||
      size > static_cast<std::uint32_t>(std::numeric_limits<int>::max())) {
    throw encoding_error("lz4 error: block too large for liblz4");
  }
  return size;
}

void lz4_block_into(std::span<const std::byte> block, std::span<std::byte> out) {
  const int got =
      LZ4_decompress_safe(reinterpret_cast<const char*>(block.data()), reinterpret_cast<char*>(out.data()),
                          static_cast<int>(block.size()), static_cast<int>(out.size()));
  if (got < 0 || static_cast<std::size_t>(got) != out.size()) {
    throw encoding_error("lz4 error: corrupt block (decoded " + std::to_string(got) + " of " +
                         std::to_string(out.size()) + " bytes)");
  }
}

}  // namespace

std::vector<std::byte> lz4_decompress(std::span<const std::byte> in, std::size_t max_size) {
  const std::uint32_t size = lz4_prefix(in, max_size);
  std::vector<std::byte> out = make_advised_bytes(size);
  lz4_block_into(in.subspan(4), out);
  return out;
}

void lz4_decompress_into(std::span<const std::byte> in, std::span<std::byte> out) {
  const std::uint32_t size = lz4_prefix(in, out.size());
  if (size != out.size()) {
    // A corrupt block is reported before a length mismatch, as by the
    // vector form followed by the caller's size check.
    const std::vector<std::byte> shorter = lz4_decompress(in, out.size());
    throw encoding_error("compression error: lz4 error: decompressed " + std::to_string(shorter.size()) +
                         " bytes, expected " + std::to_string(out.size()));
  }
  lz4_block_into(in.subspan(4), out);
}

}  // namespace tensogram::codecs
