#include "tensogram/codecs/shuffle.hpp"

#include <algorithm>
#include <cstring>
#include <string>

#include "tensogram/core/error.hpp"
#include "tensogram/core/parallel.hpp"

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

// Transposes elements [e_begin, e_end) of an S×M byte matrix (rows of S
// bytes) in cache-sized tiles so reads and writes stay mostly sequential.
// Disjoint element ranges write disjoint bytes, so ranges can run on
// different threads with identical output.
template <bool Forward>
void transpose(const std::byte* in, std::size_t s, std::size_t m, std::byte* out, std::size_t e_begin,
               std::size_t e_end) noexcept {
  constexpr std::size_t tile = 1024;
  for (std::size_t e0 = e_begin; e0 < e_end; e0 += tile) {
    const std::size_t e1 = e0 + tile < e_end ? e0 + tile : e_end;
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

template <bool Forward>
void transpose_all(const std::byte* in, std::size_t s, std::size_t m, std::byte* out, std::uint32_t threads) {
  constexpr std::size_t chunk = 1 << 16;  // elements per task
  const std::size_t chunks = (m + chunk - 1) / chunk;
  parallel_for(chunks, threads, [&](std::size_t c) {
    transpose<Forward>(in, s, m, out, c * chunk, std::min(m, (c + 1) * chunk));
  });
}

}  // namespace

void shuffle(std::span<const std::byte> in, std::size_t element_size, std::span<std::byte> out,
             std::uint32_t threads) {
  check(in.size(), element_size, out.size());
  if (element_size == 1 || in.empty()) {
    if (!in.empty()) std::memcpy(out.data(), in.data(), in.size());
    return;
  }
  transpose_all<true>(in.data(), element_size, in.size() / element_size, out.data(), threads);
}

void unshuffle(std::span<const std::byte> in, std::size_t element_size, std::span<std::byte> out,
               std::uint32_t threads) {
  check(in.size(), element_size, out.size());
  if (element_size == 1 || in.empty()) {
    if (!in.empty()) std::memcpy(out.data(), in.data(), in.size());
    return;
  }
  transpose_all<false>(in.data(), element_size, in.size() / element_size, out.data(), threads);
}

}  // namespace tensogram::codecs
