// The byte-transposition filter `shuffle` (spec 03 §5) with SIMD kernels
// chosen at run time (Highway: this file is compiled once per target by
// foreach_target, HWY_DYNAMIC_DISPATCH picks the best one for the CPU).
//
// Element sizes 2, 3 and 4 use Highway's (de)interleaving loads and stores
// over whole vectors; 8 and every size >= 5 transpose 16-element groups in
// 128-bit registers with rounds of byte interleaves; what is left (the
// ragged end of a range) goes through the scalar transpose. Every kernel
// writes out[b·M + e] = in[e·S + b] for the elements of its range and nothing
// else, so ranges can run on different threads with identical output.

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "src/codecs/shuffle.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

HWY_BEFORE_NAMESPACE();
namespace tensogram::codecs::shuffle_simd {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Transposes elements [e_begin, e_end) of an S×M byte matrix in tiles so
// reads and writes stay mostly sequential: the reference for every kernel.
template <bool Forward>
void transpose_scalar(const std::uint8_t* HWY_RESTRICT in, std::size_t s, std::size_t m,
                      std::uint8_t* HWY_RESTRICT out, std::size_t e_begin, std::size_t e_end) {
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

#if HWY_TARGET != HWY_SCALAR

using D16 = hn::Full128<std::uint8_t>;
using V16 = hn::Vec<D16>;

// One round of byte interleaves over K registers: register 2j + h takes the
// lower (h = 0) or upper (h = 1) halves of registers j and j + K/2, byte by
// byte. Reading the K·16 bytes as one index (register bits above byte bits),
// a round rotates that index left by one bit; log2(16) = 4 rounds move the
// four byte-index bits above the register bits (a transpose of 16-byte
// rows), log2(K) rounds do the inverse.
template <std::size_t K>
HWY_INLINE void zip_round(V16 (&v)[K]) {
  const D16 d;
  V16 t[K];
  for (std::size_t j = 0; j < K / 2; ++j) {
    t[2 * j] = hn::InterleaveLower(d, v[j], v[j + K / 2]);
    t[2 * j + 1] = hn::InterleaveUpper(d, v[j], v[j + K / 2]);
  }
  for (std::size_t j = 0; j < K; ++j) v[j] = t[j];
}

template <std::size_t Rounds, std::size_t K>
HWY_INLINE void zip_rounds(V16 (&v)[K]) {
  for (std::size_t r = 0; r < Rounds; ++r) zip_round(v);
}

// S = 2, 3, 4: one vector of every byte plane per step.
template <std::size_t S>
std::size_t shuffle_small(const std::uint8_t* HWY_RESTRICT in, std::size_t m, std::uint8_t* HWY_RESTRICT out,
                          std::size_t e, std::size_t e_end) {
  const hn::ScalableTag<std::uint8_t> d;
  const std::size_t n = hn::Lanes(d);
  for (; e + n <= e_end; e += n) {
    if constexpr (S == 2) {
      hn::Vec<decltype(d)> v0, v1;
      hn::LoadInterleaved2(d, in + e * 2, v0, v1);
      hn::StoreU(v0, d, out + e);
      hn::StoreU(v1, d, out + m + e);
    } else if constexpr (S == 3) {
      hn::Vec<decltype(d)> v0, v1, v2;
      hn::LoadInterleaved3(d, in + e * 3, v0, v1, v2);
      hn::StoreU(v0, d, out + e);
      hn::StoreU(v1, d, out + m + e);
      hn::StoreU(v2, d, out + 2 * m + e);
    } else {
      hn::Vec<decltype(d)> v0, v1, v2, v3;
      hn::LoadInterleaved4(d, in + e * 4, v0, v1, v2, v3);
      hn::StoreU(v0, d, out + e);
      hn::StoreU(v1, d, out + m + e);
      hn::StoreU(v2, d, out + 2 * m + e);
      hn::StoreU(v3, d, out + 3 * m + e);
    }
  }
  return e;
}

template <std::size_t S>
std::size_t unshuffle_small(const std::uint8_t* HWY_RESTRICT in, std::size_t m,
                            std::uint8_t* HWY_RESTRICT out, std::size_t e, std::size_t e_end) {
  const hn::ScalableTag<std::uint8_t> d;
  const std::size_t n = hn::Lanes(d);
  for (; e + n <= e_end; e += n) {
    const auto v0 = hn::LoadU(d, in + e);
    const auto v1 = hn::LoadU(d, in + m + e);
    if constexpr (S == 2) {
      hn::StoreInterleaved2(v0, v1, d, out + e * 2);
    } else if constexpr (S == 3) {
      hn::StoreInterleaved3(v0, v1, hn::LoadU(d, in + 2 * m + e), d, out + e * 3);
    } else {
      hn::StoreInterleaved4(v0, v1, hn::LoadU(d, in + 2 * m + e), hn::LoadU(d, in + 3 * m + e), d,
                            out + e * 4);
    }
  }
  return e;
}

// S = 8: 16 elements (128 bytes) per step, four rounds forward, three back.
std::size_t shuffle8(const std::uint8_t* HWY_RESTRICT in, std::size_t m, std::uint8_t* HWY_RESTRICT out,
                     std::size_t e, std::size_t e_end) {
  const D16 d;
  for (; e + 16 <= e_end; e += 16) {
    V16 v[8];
    for (std::size_t i = 0; i < 8; ++i) v[i] = hn::LoadU(d, in + e * 8 + 16 * i);
    zip_rounds<4>(v);
    for (std::size_t b = 0; b < 8; ++b) hn::StoreU(v[b], d, out + b * m + e);
  }
  return e;
}

std::size_t unshuffle8(const std::uint8_t* HWY_RESTRICT in, std::size_t m, std::uint8_t* HWY_RESTRICT out,
                       std::size_t e, std::size_t e_end) {
  const D16 d;
  for (; e + 16 <= e_end; e += 16) {
    V16 v[8];
    for (std::size_t b = 0; b < 8; ++b) v[b] = hn::LoadU(d, in + b * m + e);
    zip_rounds<3>(v);
    for (std::size_t i = 0; i < 8; ++i) hn::StoreU(v[i], d, out + e * 8 + 16 * i);
  }
  return e;
}

// Any S >= 5: 16 elements per step, in slabs of 16 byte positions. Register
// e holds bytes [16c, 16c + 16) of element e (a 16-byte load that may run
// into the next element, or past this range into input another task only
// reads); four rounds turn it into 16 bytes of each of those planes.
std::size_t shuffle_any(const std::uint8_t* HWY_RESTRICT in, std::size_t s, std::size_t m,
                        std::uint8_t* HWY_RESTRICT out, std::size_t e, std::size_t e_end) {
  const D16 d;
  const std::size_t len = s * m;
  for (; e + 16 <= e_end && (e + 16) * s + 16 <= len; e += 16) {
    for (std::size_t c = 0; c * 16 < s; ++c) {
      V16 v[16];
      for (std::size_t i = 0; i < 16; ++i) v[i] = hn::LoadU(d, in + (e + i) * s + 16 * c);
      zip_rounds<4>(v);
      const std::size_t planes = s - 16 * c < 16 ? s - 16 * c : 16;
      for (std::size_t t = 0; t < planes; ++t) hn::StoreU(v[t], d, out + (16 * c + t) * m + e);
    }
  }
  return e;
}

// The inverse. A slab narrower than 16 bytes (the last one) is stored first
// with full 16-byte stores in increasing element order, each spilling into
// bytes of later elements of this range that later stores (of this step, the
// next steps or the scalar tail) rewrite; a store that would spill past the
// range, into another task's output, goes through a small buffer instead.
std::size_t unshuffle_any(const std::uint8_t* HWY_RESTRICT in, std::size_t s, std::size_t m,
                          std::uint8_t* HWY_RESTRICT out, std::size_t e, std::size_t e_end) {
  const D16 d;
  const std::size_t slabs = (s + 15) / 16;
  for (; e + 16 <= e_end; e += 16) {
    std::uint8_t* HWY_RESTRICT dst = out + e * s;
    const std::size_t range_bytes = (e_end - e) * s;  // from dst to the end of the range
    for (std::size_t k = 0; k < slabs; ++k) {
      const std::size_t c = (k + slabs - 1) % slabs;  // last (possibly narrow) slab first
      const std::size_t planes = s - 16 * c < 16 ? s - 16 * c : 16;
      V16 v[16];
      for (std::size_t t = 0; t < 16; ++t) {
        v[t] = t < planes ? hn::LoadU(d, in + (16 * c + t) * m + e) : hn::Zero(d);
      }
      zip_rounds<4>(v);
      for (std::size_t i = 0; i < 16; ++i) {
        const std::size_t at = i * s + 16 * c;
        if (planes == 16 || at + 16 <= range_bytes) {
          hn::StoreU(v[i], d, dst + at);
        } else {
          alignas(16) std::uint8_t tmp[16];
          hn::Store(v[i], d, tmp);
          std::memcpy(dst + at, tmp, planes);
        }
      }
    }
  }
  return e;
}

#endif  // HWY_TARGET != HWY_SCALAR

// Shuffles elements [e_begin, e_end) of `in` (M elements of S bytes).
void ShuffleRange(const std::uint8_t* HWY_RESTRICT in, std::size_t s, std::size_t m,
                  std::uint8_t* HWY_RESTRICT out, std::size_t e_begin, std::size_t e_end) {
  std::size_t e = e_begin;
#if HWY_TARGET != HWY_SCALAR
  switch (s) {
    case 2: e = shuffle_small<2>(in, m, out, e, e_end); break;
    case 3: e = shuffle_small<3>(in, m, out, e, e_end); break;
    case 4: e = shuffle_small<4>(in, m, out, e, e_end); break;
    case 8: e = shuffle8(in, m, out, e, e_end); break;
    default: e = shuffle_any(in, s, m, out, e, e_end); break;
  }
#endif
  transpose_scalar<true>(in, s, m, out, e, e_end);
}

void UnshuffleRange(const std::uint8_t* HWY_RESTRICT in, std::size_t s, std::size_t m,
                    std::uint8_t* HWY_RESTRICT out, std::size_t e_begin, std::size_t e_end) {
  std::size_t e = e_begin;
#if HWY_TARGET != HWY_SCALAR
  switch (s) {
    case 2: e = unshuffle_small<2>(in, m, out, e, e_end); break;
    case 3: e = unshuffle_small<3>(in, m, out, e, e_end); break;
    case 4: e = unshuffle_small<4>(in, m, out, e, e_end); break;
    case 8: e = unshuffle8(in, m, out, e, e_end); break;
    default: e = unshuffle_any(in, s, m, out, e, e_end); break;
  }
#endif
  transpose_scalar<false>(in, s, m, out, e, e_end);
}

}  // namespace HWY_NAMESPACE
}  // namespace tensogram::codecs::shuffle_simd
HWY_AFTER_NAMESPACE();

#if HWY_ONCE

#include <algorithm>
#include <string>

#include "tensogram/codecs/shuffle.hpp"
#include "tensogram/core/error.hpp"
#include "tensogram/core/parallel.hpp"

namespace tensogram::codecs {

namespace shuffle_simd {
HWY_EXPORT(ShuffleRange);
HWY_EXPORT(UnshuffleRange);
// Calls go through these forwarders, which name the function from its own
// namespace: with a single compiled target (the WebAssembly build,
// docs/wasm.md) HWY_DYNAMIC_DISPATCH(F) is the static N_<TARGET>::F.
template <typename... Args>
void shuffle_range(Args... args) {
  HWY_DYNAMIC_DISPATCH(ShuffleRange)(args...);
}
template <typename... Args>
void unshuffle_range(Args... args) {
  HWY_DYNAMIC_DISPATCH(UnshuffleRange)(args...);
}
}  // namespace shuffle_simd

namespace {

void check(std::size_t len, std::size_t s, std::size_t out_len) {
  if (s == 0) throw encoding_error("shuffle error: invalid element size 0");
  if (len % s != 0) {
    throw encoding_error("shuffle error: data length " + std::to_string(len) +
                         " is not a multiple of element size " + std::to_string(s));
  }
  if (out_len != len) throw encoding_error("shuffle error: output size differs from input size");
}

// Splits the M elements into fixed chunks (a multiple of the 16-element
// SIMD step, independent of the thread count) and runs them in parallel.
template <bool Forward>
void transpose_all(const std::byte* in, std::size_t s, std::size_t m, std::byte* out, std::uint32_t threads) {
  constexpr std::size_t chunk = 1 << 16;  // elements per task
  const std::size_t chunks = (m + chunk - 1) / chunk;
  const auto* src = reinterpret_cast<const std::uint8_t*>(in);
  auto* dst = reinterpret_cast<std::uint8_t*>(out);
  parallel_for(chunks, threads, [&](std::size_t c) {
    const std::size_t e0 = c * chunk;
    const std::size_t e1 = std::min(m, e0 + chunk);
    if constexpr (Forward) {
      shuffle_simd::shuffle_range(src, s, m, dst, e0, e1);
    } else {
      shuffle_simd::unshuffle_range(src, s, m, dst, e0, e1);
    }
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

#endif  // HWY_ONCE
