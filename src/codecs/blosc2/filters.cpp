#include "filters.hpp"

#include <cstring>

#include "tensogram/codecs/blosc2.hpp"
#include "tensogram/codecs/shuffle.hpp"

namespace tensogram::codecs::blosc2_detail {

namespace {

// Byte shuffle: byte j of element e goes to j·m + e (m = n / ts elements);
// the n mod ts trailing bytes are copied unchanged. The transposition is
// the `shuffle` filter's (codecs/shuffle.hpp, SIMD); blocks already run in
// parallel, so it runs on one thread here.
void byte_shuffle(const std::byte* in, std::byte* out, std::size_t n, std::size_t ts, bool forward) {
  const std::size_t m = ts == 0 ? 0 : n / ts;
  const std::size_t body = m * ts;
  if (ts <= 1 || m == 0) {
    std::memcpy(out, in, n);
    return;
  }
  if (forward) {
    shuffle({in, body}, ts, {out, body});
  } else {
    unshuffle({in, body}, ts, {out, body});
  }
  std::memcpy(out + body, in + body, n - body);
}

// Transposes an 8×8 bit matrix: bit b of byte i moves to bit i of byte b
// (bytes little-endian in the word).
std::uint64_t transpose8(std::uint64_t x) noexcept {
  std::uint64_t t = (x ^ (x >> 7)) & 0x00AA00AA00AA00AAULL;
  x = x ^ t ^ (t << 7);
  t = (x ^ (x >> 14)) & 0x0000CCCC0000CCCCULL;
  x = x ^ t ^ (t << 14);
  t = (x ^ (x >> 28)) & 0x00000000F0F0F0F0ULL;
  x = x ^ t ^ (t << 28);
  return x;
}

// Bit shuffle (the bitshuffle library's layout as c-blosc2 uses it): over
// the first m = floor(n / ts / 8) · 8 elements, row r = 8·j + b (byte j of
// the element, bit b) holds m / 8 bytes whose bit i of byte g is bit b of
// byte j of element 8g + i. Trailing bytes are copied unchanged.
void bit_shuffle(const std::byte* in, std::byte* out, std::size_t n, std::size_t ts, bool forward) noexcept {
  const std::size_t m = n / ts / 8 * 8;
  const std::size_t row = m / 8;
  for (std::size_t j = 0; j < ts; ++j) {
    for (std::size_t g = 0; g < row; ++g) {
      std::uint64_t x = 0;
      for (std::size_t i = 0; i < 8; ++i) {
        const std::byte v = forward ? in[(8 * g + i) * ts + j] : in[(8 * j + i) * row + g];
        x |= static_cast<std::uint64_t>(v) << (8 * i);
      }
      x = transpose8(x);
      for (std::size_t b = 0; b < 8; ++b) {
        const auto v = static_cast<std::byte>((x >> (8 * b)) & 0xFF);
        if (forward) {
          out[(8 * j + b) * row + g] = v;
        } else {
          out[(8 * g + b) * ts + j] = v;
        }
      }
    }
  }
  std::memcpy(out + m * ts, in + m * ts, n - m * ts);
}

}  // namespace

void run_filter(std::uint8_t code, const std::byte* in, std::byte* out, std::size_t n, std::size_t ts,
                bool forward) {
  if (code == static_cast<std::uint8_t>(blosc2_filter::shuffle)) {
    byte_shuffle(in, out, n, ts, forward);
  } else {
    bit_shuffle(in, out, n, ts, forward);
  }
}

std::string filter_name(std::uint8_t code) {
  switch (code) {
    case 3: return "delta (3)";
    case 4: return "trunc_prec (4)";
    default: return std::to_string(code);
  }
}
}  // namespace tensogram::codecs::blosc2_detail
