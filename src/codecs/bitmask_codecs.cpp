#include "tensogram/codecs/bitmask_codecs.hpp"

#include <algorithm>
#include <array>
#include <string>

#include "tensogram/core/error.hpp"

namespace tensogram::codecs {

namespace {

bool bit_at(std::span<const std::byte> packed, std::uint64_t i) noexcept {
  return ((static_cast<unsigned>(packed[static_cast<std::size_t>(i / 8)]) >> (7 - i % 8)) & 1U) != 0;
}

void set_bit(std::vector<std::byte>& packed, std::uint64_t i) noexcept {
  packed[static_cast<std::size_t>(i / 8)] |= static_cast<std::byte>(0x80U >> (i % 8));
}

std::size_t packed_size(std::uint64_t n) {
  return static_cast<std::size_t>(n / 8 + (n % 8 != 0 ? 1 : 0));
}

void check_bits(std::span<const std::byte> packed, std::uint64_t n, const char* what) {
  if (packed.size() < packed_size(n)) {
    throw encoding_error(std::string(what) + ": " + std::to_string(n) + " bits need " +
                         std::to_string(packed_size(n)) + " bytes, got " + std::to_string(packed.size()));
  }
}

void put_uleb(std::vector<std::byte>& out, std::uint64_t v) {
  do {
    unsigned b = static_cast<unsigned>(v & 0x7F);
    v >>= 7;
    if (v != 0) b |= 0x80;
    out.push_back(static_cast<std::byte>(b));
  } while (v != 0);
}

[[noreturn]] void rle_fail(const std::string& what) {
  throw encoding_error("bitmask decode (rle): " + what);
}
[[noreturn]] void roaring_fail(const std::string& what) {
  throw encoding_error("bitmask decode (roaring): " + what);
}

void put_u16(std::vector<std::byte>& out, unsigned v) {
  out.push_back(static_cast<std::byte>(v & 0xFF));
  out.push_back(static_cast<std::byte>((v >> 8) & 0xFF));
}
void put_u32(std::vector<std::byte>& out, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<std::byte>((v >> (8 * i)) & 0xFF));
}

struct container {
  std::uint16_t key = 0;
  std::vector<std::uint16_t> values;  // sorted low 16 bits
};

enum class container_kind { array, bitmap, run };

// Maximal runs of consecutive values.
std::vector<std::pair<std::uint16_t, std::uint16_t>> runs_of(const std::vector<std::uint16_t>& v) {
  std::vector<std::pair<std::uint16_t, std::uint16_t>> runs;  // start, length-1
  for (std::size_t i = 0; i < v.size();) {
    std::size_t j = i;
    while (j + 1 < v.size() && v[j + 1] == v[j] + 1) ++j;
    runs.emplace_back(v[i], static_cast<std::uint16_t>(j - i));
    i = j + 1;
  }
  return runs;
}

// Bounded little-endian reader for the Roaring parser.
class le_reader {
 public:
  explicit le_reader(std::span<const std::byte> b) noexcept : b_(b) {}
  [[nodiscard]] std::uint32_t u16_at(std::size_t pos) const {
    need(pos, 2);
    return static_cast<std::uint32_t>(b_[pos]) | (static_cast<std::uint32_t>(b_[pos + 1]) << 8);
  }
  [[nodiscard]] std::uint32_t u32_at(std::size_t pos) const { return u16_at(pos) | (u16_at(pos + 2) << 16); }
  [[nodiscard]] std::uint64_t u64_at(std::size_t pos) const {
    return static_cast<std::uint64_t>(u32_at(pos)) | (static_cast<std::uint64_t>(u32_at(pos + 4)) << 32);
  }
  [[nodiscard]] unsigned byte_at(std::size_t pos) const {
    need(pos, 1);
    return static_cast<unsigned>(b_[pos]);
  }
  void need(std::size_t pos, std::size_t len) const {
    if (pos > b_.size() || len > b_.size() - pos)
      roaring_fail("truncated blob at byte " + std::to_string(pos));
  }

 private:
  std::span<const std::byte> b_;
};

std::vector<std::byte> with_count_prefix(std::uint64_t n, std::vector<std::byte> blob) {
  std::vector<std::byte> out;
  out.reserve(4 + blob.size());
  for (int i = 3; i >= 0; --i) out.push_back(static_cast<std::byte>((n >> (8 * i)) & 0xFF));
  out.insert(out.end(), blob.begin(), blob.end());
  return out;
}

std::uint64_t read_count_prefix(std::span<const std::byte> payload, const char* codec) {
  if (payload.size() < 4) {
    throw encoding_error(std::string("compression error: ") + codec +
                         ": payload shorter than its 4-byte count");
  }
  std::uint64_t n = 0;
  for (int i = 0; i < 4; ++i) n = (n << 8) | static_cast<unsigned>(payload[static_cast<std::size_t>(i)]);
  return n;
}

}  // namespace

std::vector<std::byte> rle_encode_bits(std::span<const std::byte> packed, std::uint64_t n) {
  check_bits(packed, n, "rle");
  std::vector<std::byte> out;
  if (n == 0) return out;
  bool cur = bit_at(packed, 0);
  out.push_back(static_cast<std::byte>(cur ? 1 : 0));
  std::uint64_t run = 0;
  for (std::uint64_t i = 0; i < n; ++i) {
    const bool b = bit_at(packed, i);
    if (b == cur) {
      ++run;
    } else {
      put_uleb(out, run);
      cur = b;
      run = 1;
    }
  }
  put_uleb(out, run);
  return out;
}

std::vector<std::byte> rle_decode_bits(std::span<const std::byte> blob, std::uint64_t n) {
  if (n == 0) {
    if (!blob.empty()) rle_fail("non-empty blob for zero bits");
    return {};
  }
  if (blob.empty()) rle_fail("empty blob for " + std::to_string(n) + " bits");
  const unsigned start = static_cast<unsigned>(blob[0]);
  if (start > 1) rle_fail("bad start value " + std::to_string(start));
  std::vector<std::byte> packed(packed_size(n), std::byte{0});
  bool value = start == 1;
  std::uint64_t pos = 0;
  std::size_t i = 1;
  while (i < blob.size()) {
    std::uint64_t run = 0;
    unsigned shift = 0;
    for (std::size_t k = 0;; ++k) {
      if (k == 10) rle_fail("run length longer than 10 bytes at byte " + std::to_string(i));
      if (i >= blob.size()) rle_fail("truncated run length");
      const unsigned b = static_cast<unsigned>(blob[i++]);
      if (shift == 63 && (b & 0x7E) != 0) rle_fail("run length overflows u64");
      run |= static_cast<std::uint64_t>(b & 0x7F) << shift;
      shift += 7;
      if ((b & 0x80) == 0) break;
    }
    if (run == 0) rle_fail("zero-length run");
    if (run > n - pos) rle_fail("runs exceed " + std::to_string(n) + " bits");
    if (value) {
      for (std::uint64_t k = 0; k < run; ++k) set_bit(packed, pos + k);
    }
    pos += run;
    value = !value;
  }
  if (pos != n) rle_fail("runs sum to " + std::to_string(pos) + ", expected " + std::to_string(n));
  return packed;
}

std::vector<std::byte> roaring_encode_bits(std::span<const std::byte> packed, std::uint64_t n) {
  check_bits(packed, n, "roaring");
  if (n > 0xFFFFFFFFULL) throw encoding_error("roaring: " + std::to_string(n) + " bits exceed 2^32 - 1");
  std::vector<container> cs;
  for (std::uint64_t i = 0; i < n; ++i) {
    if (!bit_at(packed, i)) continue;
    const auto key = static_cast<std::uint16_t>(i >> 16);
    if (cs.empty() || cs.back().key != key) cs.push_back(container{key, {}});
    cs.back().values.push_back(static_cast<std::uint16_t>(i & 0xFFFF));
  }
  // Container choice of roaring-rs 0.11 with optimize() (§11.3.3).
  std::vector<container_kind> kinds;
  std::vector<std::vector<std::pair<std::uint16_t, std::uint16_t>>> runs;
  bool any_run = false;
  for (const container& c : cs) {
    const std::size_t card = c.values.size();
    runs.push_back(runs_of(c.values));
    const std::size_t r = runs.back().size();
    container_kind k = card <= 4096 ? container_kind::array : container_kind::bitmap;
    if (k == container_kind::bitmap ? (2 + 4 * r < 8192) : (2 + 4 * r < 2 * card)) k = container_kind::run;
    any_run = any_run || k == container_kind::run;
    kinds.push_back(k);
  }
  std::vector<std::byte> out;
  const auto count = static_cast<std::uint32_t>(cs.size());
  if (!any_run) {
    put_u32(out, 12346);
    put_u32(out, count);
  } else {
    put_u32(out, 12347U | ((count - 1) << 16));
    std::vector<std::byte> flags((cs.size() + 7) / 8, std::byte{0});
    for (std::size_t i = 0; i < cs.size(); ++i) {
      if (kinds[i] == container_kind::run) flags[i / 8] |= static_cast<std::byte>(1U << (i % 8));
    }
    out.insert(out.end(), flags.begin(), flags.end());
  }
  for (const container& c : cs) {
    put_u16(out, c.key);
    put_u16(out, static_cast<unsigned>(c.values.size() - 1));
  }
  const bool with_offsets = !any_run || cs.size() >= 4;
  std::size_t offsets_at = out.size();
  if (with_offsets) out.resize(out.size() + 4 * cs.size());
  for (std::size_t i = 0; i < cs.size(); ++i) {
    if (with_offsets) {
      const auto off = static_cast<std::uint32_t>(out.size());
      for (int k = 0; k < 4; ++k)
        out[offsets_at + 4 * i + static_cast<std::size_t>(k)] =
            static_cast<std::byte>((off >> (8 * k)) & 0xFF);
    }
    switch (kinds[i]) {
      case container_kind::array:
        for (std::uint16_t v : cs[i].values) put_u16(out, v);
        break;
      case container_kind::bitmap: {
        std::array<std::uint64_t, 1024> words{};
        for (std::uint16_t v : cs[i].values) words[v / 64] |= std::uint64_t{1} << (v % 64);
        for (std::uint64_t w : words) {
          put_u32(out, static_cast<std::uint32_t>(w & 0xFFFFFFFF));
          put_u32(out, static_cast<std::uint32_t>(w >> 32));
        }
        break;
      }
      case container_kind::run:
        put_u16(out, static_cast<unsigned>(runs[i].size()));
        for (const auto& [start, len_minus_1] : runs[i]) {
          put_u16(out, start);
          put_u16(out, len_minus_1);
        }
        break;
    }
  }
  return out;
}

std::vector<std::byte> roaring_decode_bits(std::span<const std::byte> blob, std::uint64_t n) {
  const le_reader r(blob);
  const std::uint32_t cookie = r.u32_at(0);
  std::size_t pos = 4;
  std::uint32_t count = 0;
  bool has_runs = false;
  std::vector<bool> is_run;
  if (cookie == 12346) {
    count = r.u32_at(4);
    pos = 8;
    // Each container needs at least 4 descriptive + 4 offset bytes.
    if (count > blob.size() / 8)
      roaring_fail("container count " + std::to_string(count) + " exceeds blob size");
    is_run.assign(count, false);
  } else if ((cookie & 0xFFFF) == 12347) {
    has_runs = true;
    count = (cookie >> 16) + 1;
    const std::size_t flag_bytes = (count + 7) / 8;
    r.need(pos, flag_bytes);
    is_run.resize(count);
    for (std::uint32_t i = 0; i < count; ++i) is_run[i] = ((r.byte_at(pos + i / 8) >> (i % 8)) & 1U) != 0;
    pos += flag_bytes;
  } else {
    roaring_fail("bad cookie " + std::to_string(cookie));
  }
  r.need(pos, 4 * static_cast<std::size_t>(count));
  const std::size_t desc = pos;
  pos += 4 * static_cast<std::size_t>(count);
  if (!has_runs || count >= 4)
    pos += 4 * static_cast<std::size_t>(count);  // offsets: sequential layout assumed
  std::vector<std::byte> packed(packed_size(n), std::byte{0});
  auto put = [&](std::uint64_t v) {
    if (v >= n) roaring_fail("position " + std::to_string(v) + " outside " + std::to_string(n) + " bits");
    set_bit(packed, v);
  };
  std::int64_t prev_key = -1;
  for (std::uint32_t i = 0; i < count; ++i) {
    const std::uint32_t key = r.u16_at(desc + 4 * i);
    const std::uint32_t card = r.u16_at(desc + 4 * i + 2) + 1;
    if (static_cast<std::int64_t>(key) <= prev_key) roaring_fail("container keys not increasing");
    prev_key = key;
    const std::uint64_t base = static_cast<std::uint64_t>(key) << 16;
    if (is_run[i]) {
      const std::uint32_t nruns = r.u16_at(pos);
      pos += 2;
      r.need(pos, 4 * static_cast<std::size_t>(nruns));
      for (std::uint32_t k = 0; k < nruns; ++k) {
        const std::uint32_t start = r.u16_at(pos);
        const std::uint32_t len = r.u16_at(pos + 2) + 1;
        pos += 4;
        if (start + len > 65536) roaring_fail("run past container end");
        for (std::uint32_t v = 0; v < len; ++v) put(base + start + v);
      }
    } else if (card <= 4096) {
      r.need(pos, 2 * static_cast<std::size_t>(card));
      for (std::uint32_t k = 0; k < card; ++k) put(base + r.u16_at(pos + 2 * k));
      pos += 2 * static_cast<std::size_t>(card);
    } else {
      r.need(pos, 8192);
      for (std::uint32_t w = 0; w < 1024; ++w) {
        std::uint64_t word = r.u64_at(pos + 8 * w);
        while (word != 0) {
          const int b = __builtin_ctzll(word);
          put(base + 64 * w + static_cast<std::uint32_t>(b));
          word &= word - 1;
        }
      }
      pos += 8192;
    }
  }
  return packed;
}

std::vector<std::byte> rle_compress(std::span<const std::byte> packed) {
  const std::uint64_t n = 8 * static_cast<std::uint64_t>(packed.size());
  if (n > 0xFFFFFFFFULL) throw encoding_error("rle: " + std::to_string(n) + " bits exceed the u32 count");
  return with_count_prefix(n, rle_encode_bits(packed, n));
}

std::vector<std::byte> rle_decompress(std::span<const std::byte> payload, std::size_t expected) {
  const std::uint64_t n = read_count_prefix(payload, "rle");
  if (packed_size(n) != expected) {
    throw encoding_error("compression error: rle: " + std::to_string(n) + " bits do not make " +
                         std::to_string(expected) + " bytes");
  }
  return rle_decode_bits(payload.subspan(4), n);
}

std::vector<std::byte> roaring_compress(std::span<const std::byte> packed) {
  const std::uint64_t n = 8 * static_cast<std::uint64_t>(packed.size());
  if (n > 0xFFFFFFFFULL) throw encoding_error("roaring: " + std::to_string(n) + " bits exceed the u32 count");
  return with_count_prefix(n, roaring_encode_bits(packed, n));
}

std::vector<std::byte> roaring_decompress(std::span<const std::byte> payload, std::size_t expected) {
  const std::uint64_t n = read_count_prefix(payload, "roaring");
  if (packed_size(n) != expected) {
    throw encoding_error("compression error: roaring: " + std::to_string(n) + " bits do not make " +
                         std::to_string(expected) + " bytes");
  }
  return roaring_decode_bits(payload.subspan(4), n);
}

}  // namespace tensogram::codecs
