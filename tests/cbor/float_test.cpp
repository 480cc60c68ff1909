// Spec 02 §1.3: floats are written in the shortest lossless IEEE width.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <unordered_set>

#include "tensogram/cbor/codec.hpp"
#include "tensogram/cbor/value.hpp"
#include "test_support.hpp"

namespace {

namespace cbor = tensogram::cbor;
using tgtest::from_hex;
using tgtest::to_hex;

std::string encode_hex(double d) {
  return to_hex(cbor::encode(cbor::value(d)));
}

double from_bits(std::uint64_t b) {
  return std::bit_cast<double>(b);
}

TEST(CborFloat, SpecVectors) {
  EXPECT_EQ(encode_hex(0.0), "f90000");
  EXPECT_EQ(encode_hex(-0.0), "f98000");
  EXPECT_EQ(encode_hex(1.0), "f93c00");
  EXPECT_EQ(encode_hex(0.5), "f93800");
  EXPECT_EQ(encode_hex(230.5), "f95b34");
  EXPECT_EQ(encode_hex(std::numeric_limits<double>::infinity()), "f97c00");
  EXPECT_EQ(encode_hex(-std::numeric_limits<double>::infinity()), "f9fc00");
  EXPECT_EQ(encode_hex(from_bits(0x7FF8000000000000ULL)), "f97e00");
  EXPECT_EQ(encode_hex(65504.0), "f97bff");
  EXPECT_EQ(encode_hex(65505.0), "fa477fe100");
  EXPECT_EQ(encode_hex(1e10), "fa501502f9");
  EXPECT_EQ(encode_hex(0.1), "fb3fb999999999999a");
  EXPECT_EQ(encode_hex(1.5e-5), "fb3eef75104d551d69");
}

TEST(CborFloat, MoreVectors) {
  EXPECT_EQ(encode_hex(from_bits(0xFFF8000000000000ULL)), "f9fe00");  // negative quiet NaN
  EXPECT_EQ(encode_hex(from_bits(0x7FF8000000000001ULL)),
            "fb7ff8000000000001");                              // payload lost in half/single
  EXPECT_EQ(encode_hex(5.960464477539063e-08), "f90001");       // smallest half subnormal
  EXPECT_EQ(encode_hex(6.103515625e-05), "f90400");             // smallest half normal
  EXPECT_EQ(encode_hex(2.9802322387695312e-08), "fa33000000");  // half subnormal / 2
  EXPECT_EQ(encode_hex(-2.0), "f9c000");
  EXPECT_EQ(encode_hex(100000.0), "fa47c35000");
  EXPECT_EQ(encode_hex(3.4028234663852886e+38), "fa7f7fffff");  // FLT_MAX
  EXPECT_EQ(encode_hex(1e300), "fb7e37e43c8800759c");
  EXPECT_EQ(encode_hex(static_cast<double>(1.0f / 3.0f)), "fa3eaaaaab");
  EXPECT_EQ(encode_hex(1.0 / 3.0), "fb3fd5555555555555");
  EXPECT_EQ(encode_hex(std::numeric_limits<double>::denorm_min()), "fb0000000000000001");
}

TEST(CborFloat, WidthHelperAgreesWithVectors) {
  EXPECT_EQ(cbor::shortest_float_width(0.5), 2u);
  EXPECT_EQ(cbor::shortest_float_width(65505.0), 4u);
  EXPECT_EQ(cbor::shortest_float_width(0.1), 8u);
  EXPECT_EQ(cbor::shortest_float_width(std::nan("")), 2u);
}

// Independent binary16 → binary64 widening.
std::uint64_t reference_widen(std::uint16_t h) {
  const std::uint64_t sign = static_cast<std::uint64_t>(h >> 15) << 63;
  const int exp = (h >> 10) & 0x1F;
  std::uint64_t mant = h & 0x3FF;
  if (exp == 0x1F) return sign | (0x7FFULL << 52) | (mant << 42);
  if (exp == 0) {
    if (mant == 0) return sign;
    // Subnormal: normalise.
    int e = -14;
    while ((mant & 0x400) == 0) {
      mant <<= 1;
      --e;
    }
    mant &= 0x3FF;
    return sign | (static_cast<std::uint64_t>(e + 1023) << 52) | (mant << 42);
  }
  return sign | (static_cast<std::uint64_t>(exp - 15 + 1023) << 52) | (mant << 42);
}

bool is_half_nan(std::uint16_t h) {
  return ((h >> 10) & 0x1F) == 0x1F && (h & 0x3FF) != 0;
}

// Reference width per spec 02 §1.3, using the set of exactly representable
// halves instead of a conversion routine.
std::size_t reference_width(double d, const std::unordered_set<std::uint64_t>& half_values) {
  const auto bits = std::bit_cast<std::uint64_t>(d);
  if (std::isnan(d)) {
    // to_half(NaN) = sign | 0x7C00 | 0x0200 | top 10 mantissa bits.
    const auto h = static_cast<std::uint16_t>(((bits >> 63) << 15) | 0x7E00 | ((bits >> 42) & 0x3FF));
    if (reference_widen(h) == bits) return 2;
  } else if (half_values.count(bits) != 0) {
    return 2;
  }
  const auto f = static_cast<float>(d);
  if (std::bit_cast<std::uint64_t>(static_cast<double>(f)) == bits) return 4;
  return 8;
}

TEST(CborFloat, AllHalfPatternsBruteForce) {
  std::unordered_set<std::uint64_t> half_values;
  for (std::uint32_t h = 0; h < 65536; ++h) {
    if (!is_half_nan(static_cast<std::uint16_t>(h)))
      half_values.insert(reference_widen(static_cast<std::uint16_t>(h)));
  }
  std::size_t mismatches = 0;
  for (std::uint32_t hh = 0; hh < 65536; ++hh) {
    const auto h = static_cast<std::uint16_t>(hh);
    const std::uint64_t wide = reference_widen(h);
    const double d = std::bit_cast<double>(wide);
    // half_to_double agrees with the reference widening, bit for bit.
    if (std::bit_cast<std::uint64_t>(cbor::half_to_double(h)) != wide) {
      ADD_FAILURE() << "half_to_double(0x" << std::hex << h << ")";
      if (++mismatches > 10) return;
    }
    const std::size_t expected = reference_width(d, half_values);
    // Every non-NaN half, and every quiet-NaN half, is written as a half.
    if (!is_half_nan(h) || (h & 0x200) != 0) {
      EXPECT_EQ(expected, 2u) << std::hex << h;
    }
    if (cbor::shortest_float_width(d) != expected) {
      ADD_FAILURE() << "width of half 0x" << std::hex << h << ": got " << cbor::shortest_float_width(d)
                    << " expected " << expected;
      if (++mismatches > 10) return;
    }
    // Neighbouring doubles are never halves (unless they are the next half).
    if (std::isfinite(d)) {
      for (double n : {std::nextafter(d, 1e300), std::nextafter(d, -1e300)}) {
        if (cbor::shortest_float_width(n) != reference_width(n, half_values)) {
          ADD_FAILURE() << "width of neighbour of half 0x" << std::hex << h;
          if (++mismatches > 10) return;
        }
      }
    }
    // Encoding writes exactly f9 + the half bits for each non-NaN half and
    // decodes back to the same double.
    if (expected == 2 && !std::isnan(d)) {
      const auto enc = cbor::encode(cbor::value(d));
      ASSERT_EQ(enc.size(), 3u);
      EXPECT_EQ(enc[0], std::byte{0xF9});
      const auto got =
          static_cast<std::uint16_t>((static_cast<unsigned>(enc[1]) << 8) | static_cast<unsigned>(enc[2]));
      EXPECT_EQ(got, h);
      const cbor::value back = cbor::decode(enc);
      ASSERT_TRUE(back.is_float());
      EXPECT_EQ(std::bit_cast<std::uint64_t>(*back.as_float()), wide);
    }
  }
}

TEST(CborFloat, SinglesAndDoublesRoundTrip) {
  // Every float written and read back keeps its 64-bit pattern.
  std::uint64_t state = 0x9E3779B97F4A7C15ULL;
  for (int i = 0; i < 20000; ++i) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    double d = std::bit_cast<double>(state);
    if (i % 2 == 0) d = static_cast<double>(static_cast<float>(d));
    if (std::isnan(d)) continue;
    const auto enc = cbor::encode(cbor::value(d));
    const std::size_t w = cbor::shortest_float_width(d);
    EXPECT_EQ(enc.size(), 1 + w);
    const cbor::value back = cbor::decode(enc);
    ASSERT_TRUE(back.is_float());
    EXPECT_EQ(std::bit_cast<std::uint64_t>(*back.as_float()), std::bit_cast<std::uint64_t>(d));
  }
}

TEST(CborFloat, DecoderAcceptsAnyWidth) {
  EXPECT_EQ(*cbor::decode(from_hex("f93c00")).as_float(), 1.0);
  EXPECT_EQ(*cbor::decode(from_hex("fa3f800000")).as_float(), 1.0);
  EXPECT_EQ(*cbor::decode(from_hex("fb3ff0000000000000")).as_float(), 1.0);
  EXPECT_TRUE(std::isnan(*cbor::decode(from_hex("f97e00")).as_float()));
  EXPECT_TRUE(std::isinf(*cbor::decode(from_hex("fa7f800000")).as_float()));
}

}  // namespace
