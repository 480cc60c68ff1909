// What the tests of our own szip coder (szip_encoder_test.cpp,
// szip_decoder_test.cpp) share: the libaec flags by name, the kinds of data
// they feed it, libaec 1.0.6 itself as the peer (aec_buffer_encode), and a
// one-line description of a case for failure messages. Each test keeps its
// own data generator: they exercise different corners (the decoder's raw
// zero blocks, the encoder's split-option search over every k).
#pragma once

#include <gtest/gtest.h>
#include <libaec.h>

#include <cstdint>
#include <string>
#include <vector>

#include "src/codecs/szip_libaec.hpp"
#include "tensogram/codecs/szip.hpp"

namespace szip_test {

namespace codecs = tensogram::codecs;
using bytes = std::vector<std::byte>;

inline constexpr std::uint32_t k_dp = codecs::szip_flags::data_preprocess;
inline constexpr std::uint32_t k_signed = codecs::szip_flags::data_signed;
inline constexpr std::uint32_t k_msb = codecs::szip_flags::data_msb;
inline constexpr std::uint32_t k_3byte = codecs::szip_flags::data_3byte;
inline constexpr std::uint32_t k_pad = codecs::szip_flags::pad_rsi;
inline constexpr std::uint32_t k_restricted = codecs::szip_flags::restricted;
inline constexpr std::uint32_t k_not_enforce = codecs::szip_flags::not_enforce;

enum class kind { random, smooth, constant, sparse, extreme };
inline constexpr kind k_kinds[] = {kind::random, kind::smooth, kind::constant, kind::sparse, kind::extreme};

inline const char* name_of(kind k) {
  switch (k) {
    case kind::random: return "random";
    case kind::smooth: return "smooth";
    case kind::constant: return "constant";
    case kind::sparse: return "sparse";
    case kind::extreme: return "extreme";
  }
  return "?";
}

inline aec_stream stream_of(const codecs::szip_params& p) {
  return codecs::szip_libaec::make_stream(p);
}

/// libaec's stream of `in` (the reference both of our coders are held to).
inline bytes libaec_encode(const bytes& in, const codecs::szip_params& p) {
  aec_stream s = stream_of(p);
  // Room for twice the input and two padded blocks: libaec must never run
  // low (src/codecs/szip_libaec.cpp, takes_pieces).
  bytes out(in.size() * 2 + 1024 + 2 * (std::size_t{p.block_size} * 4 + 2));
  s.next_in = reinterpret_cast<const unsigned char*>(in.data());
  s.avail_in = in.size();
  s.next_out = reinterpret_cast<unsigned char*>(out.data());
  s.avail_out = out.size();
  const int rc = aec_buffer_encode(&s);
  EXPECT_EQ(rc, AEC_OK);
  out.resize(s.total_out);
  return out;
}

inline std::string describe(const codecs::szip_params& p, std::size_t n, kind k) {
  return "bits " + std::to_string(p.bits_per_sample) + " block " + std::to_string(p.block_size) + " rsi " +
         std::to_string(p.rsi) + " flags " + std::to_string(p.flags) + " samples " + std::to_string(n) + " " +
         name_of(k);
}

}  // namespace szip_test
