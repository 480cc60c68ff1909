#include "tensogram/codecs/shuffle.hpp"

#include <cstring>
#include <string>

#include "tensogram/core/error.hpp"

namespace tensogram::codecs {

namespace {

void check(std::size_t len, std::size_t s, std::size_t out_len) {
  if (s == 0) throw encoding_error("shuffle error: invalid element size 0");
  if (len % s != 0) {
    throw encoding_error("shuffle error: data length " + std::to_string(len) +
                         " is not a multiple of element size " + std::to_string(s));
  }
  if (out_len != len) throw encoding_error("shuffle error: output size differs from input size");
}

// Transposes an S×M byte matrix (rows of S bytes) in cache-sized tiles so
// both the reads and the writes stay mostly sequential.
template <bool Forward>
void transpose(const std::byte* in, std::size_t s, std::size_t m, std::byte* out) noexcept {
  constexpr std::size_t tile = 1024;
  for (std::size_t e0 = 0; e0 < m; e0 += tile) {
    const std::size_t e1 = e0 + tile < m ? e0 + tile : m;
    for (std::size_t b = 0; b < s; ++b) {
      for (std::size_t e = e0; e < e1; ++e) {
        if constexpr (Forward) {
          out[b * m + e] = in[e * s + b];
        } else {
          out[e * s + b] = in[b * m + e];
        }
      }
    }
  }
}

}  // namespace

void shuffle(std::span<const std::byte> in, std::size_t element_size, std::span<std::byte> out) {
  check(in.size(), element_size, out.size());
  if (element_size == 1 || in.empty()) {
    if (!in.empty()) std::memcpy(out.data(), in.data(), in.size());
    return;
  }
  transpose<true>(in.data(), element_size, in.size() / element_size, out.data());
}

void unshuffle(std::span<const std::byte> in, std::size_t element_size, std::span<std::byte> out) {
  check(in.size(), element_size, out.size());
  if (element_size == 1 || in.empty()) {
    if (!in.empty()) std::memcpy(out.data(), in.data(), in.size());
    return;
  }
  transpose<false>(in.data(), element_size, in.size() / element_size, out.data());
}

}  // namespace tensogram::codecs
