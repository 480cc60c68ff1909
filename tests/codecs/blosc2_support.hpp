// Helpers shared by the blosc2 tests (blosc2_test.cpp,
// blosc2_pipeline_test.cpp; spec 03 §8.4, §8.5): the c-blosc2 fixture
// frames with the README's table of how each was written, little- and
// big-endian writers for hand-assembled frames, parameters and data kinds.
#pragma once

#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "codec_support.hpp"
#include "tensogram/codecs/blosc2.hpp"

namespace tgtest::blosc2 {

using namespace codectest;
namespace cx = tensogram::codecs;
using cx::blosc2_codec;
using cx::blosc2_filter;

// ---------------------------------------------------------------------------
// Fixtures.

// The README's table: how c-blosc2 wrote each frame.
struct fixture_row {
  const char* name;
  std::size_t input_bytes;
  blosc2_codec codec;
  int clevel;
  std::uint32_t typesize;
  blosc2_filter filter;
  std::uint32_t chunk_bytes;
  std::size_t frame_bytes;
};

inline constexpr std::uint32_t k_one_chunk = 268435456;
using C = blosc2_codec;
using F = blosc2_filter;
inline const std::vector<fixture_row> k_rows = {
    {"f64_blosclz_shuffle_ts8", 320000, C::blosclz, 5, 8, F::shuffle, k_one_chunk, 225476},
    {"f32_blosclz_shuffle_ts4", 160000, C::blosclz, 5, 4, F::shuffle, k_one_chunk, 81898},
    {"u16_blosclz_bitshuffle_ts2", 80000, C::blosclz, 5, 2, F::bitshuffle, k_one_chunk, 47891},
    {"text_blosclz_noshuffle_ts1", 50000, C::blosclz, 9, 1, F::none, k_one_chunk, 440},
    {"f64_lz4_shuffle_ts8", 320000, C::lz4, 5, 8, F::shuffle, k_one_chunk, 220371},
    {"f32_lz4_shuffle_ts4", 160000, C::lz4, 5, 4, F::shuffle, k_one_chunk, 68886},
    {"u16_lz4_bitshuffle_ts2", 80000, C::lz4, 5, 2, F::bitshuffle, k_one_chunk, 42332},
    {"text_lz4_noshuffle_ts1", 50000, C::lz4, 9, 1, F::none, k_one_chunk, 443},
    {"f64_lz4hc_shuffle_ts8", 320000, C::lz4hc, 5, 8, F::shuffle, k_one_chunk, 213958},
    {"f32_lz4hc_shuffle_ts4", 160000, C::lz4hc, 5, 4, F::shuffle, k_one_chunk, 61912},
    {"u16_lz4hc_bitshuffle_ts2", 80000, C::lz4hc, 5, 2, F::bitshuffle, k_one_chunk, 34846},
    {"text_lz4hc_noshuffle_ts1", 50000, C::lz4hc, 9, 1, F::none, k_one_chunk, 443},
    {"f64_zlib_shuffle_ts8", 320000, C::zlib, 5, 8, F::shuffle, k_one_chunk, 210930},
    {"f32_zlib_shuffle_ts4", 160000, C::zlib, 5, 4, F::shuffle, k_one_chunk, 59357},
    {"u16_zlib_bitshuffle_ts2", 80000, C::zlib, 5, 2, F::bitshuffle, k_one_chunk, 28218},
    {"text_zlib_noshuffle_ts1", 50000, C::zlib, 9, 1, F::none, k_one_chunk, 384},
    {"f64_zstd_shuffle_ts8", 320000, C::zstd, 5, 8, F::shuffle, k_one_chunk, 207308},
    {"f32_zstd_shuffle_ts4", 160000, C::zstd, 5, 4, F::shuffle, k_one_chunk, 58244},
    {"u16_zstd_bitshuffle_ts2", 80000, C::zstd, 5, 2, F::bitshuffle, k_one_chunk, 28767},
    {"text_zstd_noshuffle_ts1", 50000, C::zstd, 9, 1, F::none, k_one_chunk, 255},
    {"noise_lz4_ts1", 100000, C::lz4, 5, 1, F::shuffle, k_one_chunk, 100204},
    {"zeros_lz4_ts8", 100000, C::lz4, 5, 8, F::shuffle, k_one_chunk, 172},
    {"tiny_lz4_ts1", 8, C::lz4, 5, 1, F::shuffle, k_one_chunk, 212},
    {"f64_lz4_clevel0_ts8", 320000, C::lz4, 0, 8, F::shuffle, k_one_chunk, 320204},
    {"f64_zstd_clevel9_ts8", 320000, C::zstd, 9, 8, F::shuffle, k_one_chunk, 204585},
    {"f64_lz4_multichunk_ts8", 320000, C::lz4, 5, 8, F::shuffle, 65536, 223925},
    {"f64_zstd_multichunk_ts8", 320000, C::zstd, 5, 8, F::shuffle, 80000, 212655},
    {"f64_lz4_threads2_ts8", 320000, C::lz4, 5, 8, F::shuffle, k_one_chunk, 220371},
};

struct fixture {
  fixture_row row;
  bytes frame;
  bytes raw;
};

inline const std::vector<fixture>& fixtures() {
  static const std::vector<fixture> all = [] {
    const std::string dir = std::string(TENSOGRAM_FIXTURES) + "/blosc2/";
    std::vector<fixture> v;
    for (const fixture_row& r : k_rows) {
      v.push_back(
          {r, tgtest::read_bytes(dir + r.name + ".b2frame"), tgtest::read_bytes(dir + r.name + ".raw")});
    }
    return v;
  }();
  return all;
}

inline const fixture& fixture_named(std::string_view name) {
  for (const fixture& f : fixtures()) {
    if (f.row.name == name) return f;
  }
  throw std::runtime_error("no fixture " + std::string(name));
}

inline void wr_be(bytes& b, std::size_t at, std::uint64_t v, int n) {
  for (int i = 0; i < n; ++i)
    b[at + static_cast<std::size_t>(i)] = static_cast<std::byte>(v >> (8 * (n - 1 - i)));
}
inline void wr_le(bytes& b, std::size_t at, std::uint64_t v, int n) {
  for (int i = 0; i < n; ++i) b[at + static_cast<std::size_t>(i)] = static_cast<std::byte>(v >> (8 * i));
}
inline void append_le(bytes& b, std::uint64_t v, int n) {
  b.resize(b.size() + static_cast<std::size_t>(n));
  wr_le(b, b.size() - static_cast<std::size_t>(n), v, n);
}

// Runs f; passes if it returns or throws a tensogram::error (anything else,
// a crash or a sanitizer report fails).
template <typename F>
inline std::optional<bytes> error_or_value(F&& f) {
  try {
    return f();
  } catch (const tg::error&) {
    return std::nullopt;
  }
}

// ---------------------------------------------------------------------------
// Our frames.

inline cx::blosc2_params params(blosc2_codec codec, int clevel, std::size_t typesize,
                                blosc2_filter filter = blosc2_filter::shuffle) {
  cx::blosc2_params p;
  p.codec = codec;
  p.clevel = clevel;
  p.typesize = typesize;
  p.filters = {F::none, F::none, F::none, F::none, F::none, filter};
  return p;
}

enum class kind { smooth, noise, constant, zeros };

inline bytes make_data(kind k, std::size_t n, std::size_t ts, std::mt19937_64& rng) {
  bytes b(n);
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t e = i / ts;
    const std::size_t j = i % ts;
    switch (k) {
      case kind::smooth: {
        const std::uint64_t v = 100000 + 37 * e + (rng() % 4);
        b[i] = static_cast<std::byte>(j < 8 ? (v >> (8 * j)) & 0xFF : 0);
        break;
      }
      case kind::noise: b[i] = static_cast<std::byte>(rng() & 0xFF); break;
      case kind::constant: b[i] = static_cast<std::byte>(0x5A + j); break;
      case kind::zeros: break;
    }
  }
  return b;
}

}  // namespace tgtest::blosc2
