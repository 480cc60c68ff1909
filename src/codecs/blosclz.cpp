#include "tensogram/codecs/blosclz.hpp"

#include <algorithm>
#include <bit>
#include <cstring>

#include "tensogram/core/endian.hpp"

namespace tensogram::codecs {

namespace {

// Format limits (spec 03 §8.4.3; see the header).
constexpr std::size_t k_max_literal_run = 32;      // control byte 0..31 = run of 1..32
constexpr std::size_t k_max_near_distance = 8191;  // 13-bit distance − 1, all-ones is the far escape
constexpr std::size_t k_far_base = 8192;
constexpr std::size_t k_max_far_distance = k_far_base + 65535;
constexpr std::size_t k_min_match = 4;      // what the hash finds; the format allows 3
constexpr std::size_t k_min_far_match = 5;  // a far match costs 4 bytes
constexpr unsigned k_len_code_ext = 7;      // length code with extension bytes

// Match words are read little-endian (load_le, core/endian.hpp), as c-blosc2
// reads them on the little-endian hosts its frames come from.
// Number of equal bytes at a and b, at most `limit`.
std::size_t match_length(const std::byte* a, const std::byte* b, std::size_t limit) noexcept {
  std::size_t n = 0;
  while (n + 8 <= limit) {
    const std::uint64_t x = load_le<std::uint64_t>(a + n) ^ load_le<std::uint64_t>(b + n);
    if (x != 0) {
      // Little-endian loads: the first differing byte is the lowest set one.
      return n + static_cast<std::size_t>(std::countr_zero(x) / 8);
    }
    n += 8;
  }
  while (n < limit && a[n] == b[n]) ++n;
  return n;
}

class stream_writer {
 public:
  explicit stream_writer(std::span<std::byte> out) noexcept : out_(out) {}

  [[nodiscard]] bool literals(const std::byte* p, std::size_t n) noexcept {
    while (n > 0) {
      const std::size_t run = std::min(n, k_max_literal_run);
      if (out_.size() - pos_ < run + 1) return false;
      out_[pos_++] = static_cast<std::byte>(run - 1);
      std::memcpy(out_.data() + pos_, p, run);
      pos_ += run;
      p += run;
      n -= run;
    }
    return true;
  }

  // `len` ≥ 3, 1 ≤ `distance` ≤ k_max_far_distance.
  [[nodiscard]] bool match(std::size_t len, std::size_t distance) noexcept {
    const bool far = distance > k_max_near_distance;
    const std::size_t d = far ? 31 * 256 + 255 : distance - 1;
    const std::size_t ext = len >= k_len_code_ext + 2 ? (len - (k_len_code_ext + 2)) / 255 + 1 : 0;
    if (out_.size() - pos_ < 2 + ext + (far ? 2 : 0)) return false;
    const std::size_t code = len >= k_len_code_ext + 2 ? k_len_code_ext : len - 2;
    out_[pos_++] = static_cast<std::byte>((code << 5) | (d >> 8));
    if (code == k_len_code_ext) {
      std::size_t rest = len - (k_len_code_ext + 2);
      while (rest >= 255) {
        out_[pos_++] = std::byte{255};
        rest -= 255;
      }
      out_[pos_++] = static_cast<std::byte>(rest);
    }
    out_[pos_++] = static_cast<std::byte>(d & 0xFF);
    if (far) {
      const std::size_t f = distance - k_far_base;
      out_[pos_++] = static_cast<std::byte>(f >> 8);
      out_[pos_++] = static_cast<std::byte>(f & 0xFF);
    }
    return true;
  }

  [[nodiscard]] std::size_t size() const noexcept { return pos_; }

 private:
  std::span<std::byte> out_;
  std::size_t pos_ = 0;
};

}  // namespace

blosclz_encoder::blosclz_encoder(int clevel) : clevel_(std::clamp(clevel, 1, 9)) {}

std::size_t blosclz_encoder::compress(std::span<const std::byte> in, std::span<std::byte> out) {
  const std::size_t n = in.size();
  const std::byte* src = in.data();
  stream_writer w(out);
  // Matches must end before the last byte so the stream ends with literals,
  // and the 4-byte probe must stay inside the input.
  if (n < k_min_match + 2) return w.literals(src, n) ? w.size() : 0;
  const std::size_t last_probe = n - (k_min_match + 1);
  // Table size: larger for higher levels, but no larger than the input
  // warrants (it is cleared on every call).
  const int level_bits = clevel_ <= 3 ? 12 : clevel_ <= 6 ? 14 : 16;
  const int hash_bits = std::clamp(static_cast<int>(std::bit_width(n)) - 1, 8, level_bits);
  table_.assign(std::size_t{1} << hash_bits, 0);
  const int shift = 32 - hash_bits;
  // Probe farther apart the longer nothing matches (lz4's schedule: the
  // step grows by one every 2^skip_shift misses; lower levels sooner).
  const int skip_shift = clevel_ <= 3 ? 5 : clevel_ <= 6 ? 6 : clevel_ <= 8 ? 8 : 12;
  std::size_t misses = 0;
  auto hash = [&](std::size_t pos) noexcept {
    return static_cast<std::size_t>((load_le<std::uint32_t>(src + pos) * 2654435761U) >> shift);
  };

  std::size_t anchor = 0;
  std::size_t ip = 1;
  table_[hash(0)] = 0;
  while (ip <= last_probe) {
    const std::size_t h = hash(ip);
    std::size_t cand = table_[h];
    table_[h] = static_cast<std::uint32_t>(ip);
    const std::size_t distance = ip - cand;
    if (distance == 0 || distance > k_max_far_distance ||
        load_le<std::uint32_t>(src + cand) != load_le<std::uint32_t>(src + ip)) {
      ip += 1 + (misses++ >> skip_shift);
      continue;
    }
    std::size_t len = k_min_match + match_length(src + cand + k_min_match, src + ip + k_min_match,
                                                 n - 1 - (ip + k_min_match));
    if (distance > k_max_near_distance && len < k_min_far_match) {
      ++ip;
      continue;
    }
    // Extend backwards over literals that also match.
    std::size_t start = ip;
    while (start > anchor && cand > 0 && src[start - 1] == src[cand - 1]) {
      --start;
      --cand;
      ++len;
    }
    if (!w.literals(src + anchor, start - anchor) || !w.match(len, distance)) return 0;
    misses = 0;
    ip = start + len;
    anchor = ip;
    if (ip <= last_probe) {
      table_[hash(ip - 2)] = static_cast<std::uint32_t>(ip - 2);
      table_[hash(ip - 1)] = static_cast<std::uint32_t>(ip - 1);
    }
  }
  if (!w.literals(src + anchor, n - anchor)) return 0;
  return w.size();
}

std::size_t blosclz_decompress(std::span<const std::byte> in, std::span<std::byte> out) noexcept {
  const std::size_t n = in.size();
  const std::size_t cap = out.size();
  if (n == 0) return blosclz_error;
  const auto* ip = reinterpret_cast<const std::uint8_t*>(in.data());
  std::byte* dst = out.data();
  std::size_t i = 0;
  std::size_t op = 0;
  unsigned ctrl = ip[i++] & 31U;
  for (;;) {
    if (ctrl >= 32) {
      std::size_t len = (ctrl >> 5) - 1;
      std::size_t distance = static_cast<std::size_t>(ctrl & 31U) << 8;
      if (len == k_len_code_ext - 1) {
        unsigned code = 255;
        while (code == 255) {
          if (i >= n) return blosclz_error;
          code = ip[i++];
          len += code;
        }
      }
      if (i >= n) return blosclz_error;
      const unsigned code = ip[i++];
      len += 3;
      if (code == 255 && distance == (31U << 8)) {
        if (n - i < 2) return blosclz_error;
        distance = k_far_base + ((static_cast<std::size_t>(ip[i]) << 8) | ip[i + 1]);
        i += 2;
      } else {
        distance += code + 1;
      }
      // A match that ends the input is not copied (see the header).
      if (i >= n) break;
      if (distance > op || len > cap - op) return blosclz_error;
      std::byte* o = dst + op;
      const std::byte* r = o - distance;
      if (distance >= len) {
        std::memcpy(o, r, len);
      } else if (distance == 1) {
        std::memset(o, static_cast<int>(*r), len);
      } else {
        for (std::size_t k = 0; k < len; ++k) o[k] = r[k];
      }
      op += len;
    } else {
      const std::size_t run = ctrl + 1;
      if (run > n - i || run > cap - op) return blosclz_error;
      std::memcpy(dst + op, ip + i, run);
      i += run;
      op += run;
      if (i >= n) break;
    }
    ctrl = ip[i++];
  }
  return op;
}

}  // namespace tensogram::codecs
