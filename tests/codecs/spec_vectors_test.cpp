// Spec vectors of spec 03: simple_packing (§4.9), powi (§4.2), shuffle (§5),
// lz4 (§8.2), zstd frame headers (§8.1), rle (§8.8), roaring (§8.9,
// §11.3.3) and zfp (§8.6).
#include <bit>
#include <cmath>
#include <limits>
#include <optional>

#include "codec_support.hpp"

namespace {

using namespace codectest;
using tgtest::from_hex;
using tgtest::to_hex;

struct sp_row {
  std::vector<double> values;
  std::uint32_t bits;
  std::int32_t decimal;
  std::uint64_t reference_bits;
  std::int32_t binary;
  const char* packed;
  std::vector<double> decoded;  // empty = same as values
};

std::uint64_t bits_of(double d) {
  return std::bit_cast<std::uint64_t>(d);
}

TEST(SimplePackingVectors, EveryRowOfTheSpecTable) {
  const std::vector<sp_row> rows = {
      {{250.0, 251.3, 252.7},
       16,
       0,
       0x406F400000000000,
       -14,
       "00005333accd",
       {250.0, 251.29998779296875, 252.70001220703125}},
      {{250.0, 251.3, 252.7},
       12,
       0,
       bits_of(250.0),
       -10,
       "000533acd0",
       {250.0, 251.2998046875, 252.7001953125}},
      {{250.0, 251.3, 252.7}, 16, 2, bits_of(250.0), -7, "000041008700", {250.0, 251.3, 252.7}},
      {{5.5, 5.5, 5.5}, 16, 0, bits_of(5.5), 0, "000000000000", {}},
      {{3.0, 4.0}, 0, 0, bits_of(3.0), 0, "", {3.0, 3.0}},
      {{-1.5, 0.0, 2.25, 7.0}, 8, 0, 0xBFF8000000000000, -4, "00183c88", {}},
      {{0, 1, 0, 1, 1}, 1, 0, bits_of(0.0), 0, "58", {}},
      {{1, 2, 3}, 64, 0, bits_of(1.0), -63, "0000000000000000 8000000000000000 ffffffffffffffff", {}},
      {{100, 100.1, 100.2, 1000},
       24,
       0,
       bits_of(100.0),
       -14,
       "000000000666000ccde10000",
       {100, 100.0999755859375, 100.20001220703125, 1000}},
      {{12345, 12355, 12400}, 8, -1, bits_of(12345.0), -5, "0020b0", {}},
      {{}, 16, 0, bits_of(0.0), 0, "", {}},
  };
  const tg::byte_order host = tg::native_byte_order();
  for (const sp_row& r : rows) {
    SCOPED_TRACE(testing::Message() << "B=" << r.bits << " D=" << r.decimal << " n=" << r.values.size());
    const tg::simple_packing_params p = tg::simple_packing_compute_params(r.values, r.bits, r.decimal);
    EXPECT_EQ(bits_of(p.reference_value), r.reference_bits);
    EXPECT_EQ(p.binary_scale_factor, r.binary);
    EXPECT_EQ(p.decimal_scale_factor, r.decimal);
    EXPECT_EQ(p.bits_per_value, r.bits);
    const bytes expected_packed = from_hex(r.packed);
    const std::uint64_t n = r.values.size();
    ASSERT_EQ(tg::codecs::simple_packing_size(n, r.bits), expected_packed.size());
    for (tg::byte_order order : {tg::byte_order::big, tg::byte_order::little}) {
      const bytes in = f64_bytes(r.values, order);
      bytes packed(expected_packed.size());
      tg::codecs::simple_packing_encode(in, order, p, packed);
      EXPECT_EQ(to_hex(packed), to_hex(expected_packed));
      bytes out(n * 8);
      tg::codecs::simple_packing_decode(packed, n, p, order, out);
      const std::vector<double> got = f64_values(out, order);
      const std::vector<double>& want = r.decoded.empty() ? r.values : r.decoded;
      ASSERT_EQ(got.size(), want.size());
      for (std::size_t i = 0; i < got.size(); ++i) EXPECT_EQ(bits_of(got[i]), bits_of(want[i])) << "i=" << i;
    }
    (void)host;
  }
}

TEST(SimplePackingVectors, NanAndInfAreErrorsNamingTheIndex) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  expect_error<tg::encoding_error>(
      [&] {
        (void)tg::simple_packing_compute_params({{1.0, nan}}, 16, 0);
      },
      "NaN value encountered at index 1");
  expect_error<tg::encoding_error>(
      [&] {
        (void)tg::simple_packing_compute_params({{1.0, inf}}, 16, 0);
      },
      "infinite value encountered at index 1");
  expect_error<tg::encoding_error>(
      [&] {
        (void)tg::simple_packing_compute_params({{1.0, -inf}}, 16, 0);
      },
      "infinite value encountered at index 1");
  // Encoding with explicit parameters rejects them as well.
  const tg::simple_packing_params p{1.0, 0, 0, 16};
  const bytes in = f64_bytes({1.0, nan}, tg::byte_order::little);
  bytes packed(4);
  EXPECT_THROW(tg::codecs::simple_packing_encode(in, tg::byte_order::little, p, packed), tg::encoding_error);
}

TEST(SimplePackingVectors, RangeExample) {
  const std::vector<double> v = {250, 251.3, 252.7, 253.9, 254.1};
  const tg::simple_packing_params p = tg::simple_packing_compute_params(v, 12, 0);
  bytes packed(tg::codecs::simple_packing_size(v.size(), 12));
  tg::codecs::simple_packing_encode(f64_bytes(v, tg::byte_order::big), tg::byte_order::big, p, packed);
  EXPECT_EQ(to_hex(packed), to_hex(from_hex("00029a5667cd8330")));
  for (tg::byte_order order : {tg::byte_order::big, tg::byte_order::little}) {
    bytes out(3 * 8);
    tg::codecs::simple_packing_decode_range(packed, 1, 3, p, order, out);
    const std::vector<double> got = f64_values(out, order);
    EXPECT_EQ(got, (std::vector<double>{251.30078125, 252.69921875, 253.900390625}));
    // The same elements via decode_bits from byte 1, bit 4.
    bytes out2(3 * 8);
    tg::codecs::simple_packing_decode_bits(std::span<const std::byte>(packed).subspan(1), 4, 3, p, order,
                                           out2);
    EXPECT_EQ(out2, out);
  }
}

TEST(PowiVector, RepeatedSquaringNotStdPow) {
  // Spec 03 §4.2: exact repeated squaring.  For k in [-40, 40] it differs
  // from the correctly rounded power of ten at exactly these exponents.
  EXPECT_EQ(tg::powi(10.0, 0), 1.0);
  EXPECT_EQ(tg::powi(2.0, -3), 0.125);
  EXPECT_EQ(tg::powi(10.0, 2), 100.0);
  EXPECT_EQ(tg::powi(10.0, -1), 1.0 / 10.0);
  EXPECT_EQ(bits_of(tg::powi(10.0, 33)), 0x46C8A6E32246C99Du);  // 1e33 is ...C99C
  EXPECT_EQ(bits_of(tg::powi(10.0, -23)), bits_of(1.0 / 1e23));
  for (int k = 0; k <= 22; ++k) EXPECT_EQ(tg::powi(10.0, k), std::pow(10.0, k)) << k;  // exact
}

// Spec 03 §4.2 states powi(10, 23) = 0x44B52D02C7E14AF7.  The spec's own
// pseudocode cannot produce that value: 10^23 = 10^7 · 10^16 with both
// factors exact, and the exact product lies exactly halfway between
// ...AF6 and ...AF7, so IEEE round-half-even gives ...AF6 (as does every
// other association of exact factors).  Disabled until the discrepancy is
// settled against the reference; see the test report.
TEST(PowiVector, DISABLED_SpecClaimTenToThe23) {
  EXPECT_EQ(bits_of(tg::powi(10.0, 23)), 0x44B52D02C7E14AF7u);
}

TEST(ShuffleVector, SpecExample) {
  bytes in;
  for (unsigned i = 0; i < 16; ++i) in.push_back(static_cast<std::byte>(i));
  bytes out(16);
  tg::codecs::shuffle(in, 4, out);
  EXPECT_EQ(to_hex(out), to_hex(from_hex("00 04 08 0C 01 05 09 0D 02 06 0A 0E 03 07 0B 0F")));
  bytes back(16);
  tg::codecs::unshuffle(out, 4, back);
  EXPECT_EQ(back, in);
  // Element size 1 is the identity; a misaligned length is an error.
  tg::codecs::shuffle(in, 1, out);
  EXPECT_EQ(out, in);
  bytes odd(15);
  bytes odd_out(15);
  EXPECT_THROW(tg::codecs::shuffle(odd, 4, odd_out), tg::error);
  EXPECT_THROW(tg::codecs::shuffle(in, 0, out), tg::error);
}

TEST(Lz4Vectors, SpecExamples) {
  struct lz4_case {
    bytes in;
    const char* out;
  };
  std::string abcd5;
  for (int i = 0; i < 5; ++i) abcd5 += "abcd";
  const std::vector<lz4_case> cases = {
      {text_bytes("hello"), "05000000 50 68656c6c6f"},
      {text_bytes(abcd5), "14000000 46 61626364 0400 60 636461626364"},
      {bytes(64), "40000000 1f 00 0100 26 60 000000000000"},
      {bytes(), "00000000 00"},
  };
  for (const lz4_case& c : cases) {
    SCOPED_TRACE(c.out);
    const bytes compressed = tg::codecs::lz4_compress(c.in);
    EXPECT_EQ(to_hex(compressed), to_hex(from_hex(c.out)));
    EXPECT_EQ(tg::codecs::lz4_decompress(compressed, c.in.size()), c.in);
  }
}

TEST(ZstdVectors, FrameHeaderPerLevel) {
  bytes in;
  for (unsigned i = 0; i < 5000; ++i) in.push_back(static_cast<std::byte>((i * 7) % 13));
  struct level_case {
    int level;
    unsigned window;
  };
  for (const level_case c : {level_case{1, 0x48}, level_case{3, 0x58}, level_case{9, 0x60}}) {
    SCOPED_TRACE(c.level);
    const bytes z = tg::codecs::zstd_compress(in, c.level);
    ASSERT_GE(z.size(), 6u);
    EXPECT_EQ(to_hex(tgtest::slice(z, 0, 6)), to_hex(tgtest::B({0x28, 0xB5, 0x2F, 0xFD, 0x00, c.window})));
    EXPECT_EQ(tg::codecs::zstd_decompress(z, in.size()), in);
  }
  EXPECT_EQ(tg::codecs::zstd_default_level, 3);
}

TEST(RleVectors, SpecExample) {
  // bits 0 0 1 1 1 0 packed MSB-first: 0011 1000.
  const bytes packed = tgtest::B({0x38});
  const bytes blob = tg::codecs::rle_encode_bits(packed, 6);
  EXPECT_EQ(to_hex(blob), to_hex(from_hex("00 02 03 01")));
  EXPECT_EQ(tg::codecs::rle_decode_bits(blob, 6), packed);
  EXPECT_EQ(tg::encode_mask_blob(packed, 6, "rle"), blob);
  EXPECT_EQ(tg::decode_mask_blob(blob, 6, "rle"), packed);
  // The tensor codec prefixes u32 BE n = 8·len and covers the padding bits.
  const bytes codec = tg::codecs::rle_compress(packed);
  EXPECT_EQ(to_hex(codec), to_hex(from_hex("00000008 00 02 03 03")));
  EXPECT_EQ(tg::codecs::rle_decompress(codec, 1), packed);
  // Empty n → empty blob.
  EXPECT_TRUE(tg::codecs::rle_encode_bits({}, 0).empty());
}

TEST(RoaringVectors, SpecExamples) {
  // {3} of 16 bits.
  const bytes one = tgtest::B({0x10, 0x00});
  const bytes b1 = tg::codecs::roaring_encode_bits(one, 16);
  EXPECT_EQ(to_hex(b1), to_hex(from_hex("3A300000 01000000 0000 0000 10000000 0300")));
  EXPECT_EQ(tg::codecs::roaring_decode_bits(b1, 16), one);
  // {0..99} of 100 bits → a run container.
  bytes hundred(13, std::byte{0xFF});
  hundred[12] = std::byte{0xF0};
  const bytes b2 = tg::codecs::roaring_encode_bits(hundred, 100);
  EXPECT_EQ(to_hex(b2), to_hex(from_hex("3B300000 01 0000 6300 0100 0000 6300")));
  EXPECT_EQ(tg::codecs::roaring_decode_bits(b2, 100), hundred);
  // Tie case {0,1,2,4,5}: roaring-rs keeps the array container.
  const bytes tie = tgtest::B({0xEC});
  const bytes b3 = tg::codecs::roaring_encode_bits(tie, 8);
  EXPECT_EQ(to_hex(b3), to_hex(from_hex("3A300000 01000000 0000 0400 10000000 0000 0100 0200 0400 0500")));
  EXPECT_EQ(tg::codecs::roaring_decode_bits(b3, 8), tie);
  // CRoaring's run-optimised serialisation of the tie case decodes too.
  EXPECT_EQ(tg::codecs::roaring_decode_bits(from_hex("3B300000 01 0000 0400 0200 0000 0200 0400 0100"), 8),
            tie);
  // Mask method = the same blob.
  EXPECT_EQ(tg::encode_mask_blob(one, 16, "roaring"), b1);
}

TEST(RoaringVectors, AllZeroCodecOutput) {
  const bytes zeros(4);
  const bytes c = tg::codecs::roaring_compress(zeros);
  EXPECT_EQ(to_hex(c), to_hex(from_hex("00000020 3A300000 00000000")));
  EXPECT_EQ(tg::codecs::roaring_decompress(c, 4), zeros);
  // Codec framing: u32 BE n then the blob of the set positions.
  const bytes some = tgtest::B({0x10, 0x00});
  const bytes c2 = tg::codecs::roaring_compress(some);
  EXPECT_EQ(to_hex(c2), to_hex(from_hex("00000010 3A300000 01000000 0000 0000 10000000 0300")));
  EXPECT_EQ(tg::codecs::roaring_decompress(c2, 2), some);
}

TEST(ZfpVectors, SpecExampleRate16) {
  const bytes in = f64_bytes({1, 2, 3, 4}, tg::native_byte_order());
  tg::codecs::zfp_params p;
  p.mode = tg::codecs::zfp_mode::fixed_rate;
  p.rate = 16;
  const bytes z = tg::codecs::zfp_compress(in, p);
  EXPECT_EQ(to_hex(z), to_hex(from_hex("05 88 59 00 00 00 00 00")));
  const bytes out = tg::codecs::zfp_decompress(z, 4, p);
  ASSERT_EQ(out.size(), 32u);
  const std::vector<double> v = f64_values(out, tg::native_byte_order());
  for (std::size_t i = 0; i < 4; ++i) EXPECT_NEAR(v[i], static_cast<double>(i + 1), 0.01);
  // Into caller memory: the same values; a buffer of another size is refused.
  bytes into(32);
  tg::codecs::zfp_decompress_into(z, 4, p, into);
  EXPECT_EQ(into, out);
  bytes short_buffer(24);
  EXPECT_THROW(tg::codecs::zfp_decompress_into(z, 4, p, short_buffer), tg::encoding_error);
  // Empty input → empty payload.
  EXPECT_TRUE(tg::codecs::zfp_compress({}, p).empty());
}

}  // namespace
