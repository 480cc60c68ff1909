// Spec 02 §1.5, §1.6 and spec 01 §19.1: decoding leniency and limits, the
// canonical checks.
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "tensogram/cbor/codec.hpp"
#include "tensogram/cbor/value.hpp"
#include "tensogram/core/error.hpp"
#include "tensogram/core/utf8.hpp"
#include "test_support.hpp"

namespace {

namespace cbor = tensogram::cbor;
using tgtest::B;
using tgtest::bytes;
using tgtest::from_hex;

cbor::value dec(std::string_view hex) {
  return cbor::decode(from_hex(hex));
}

void expect_metadata_error(const bytes& b, std::string_view fragment = {}) {
  try {
    (void)cbor::decode(b);
    ADD_FAILURE() << "decoded " << tgtest::to_hex(b);
  } catch (const tensogram::metadata_error& e) {
    if (!fragment.empty()) {
      EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
    }
  } catch (const std::exception& e) {
    ADD_FAILURE() << "wrong exception type for " << tgtest::to_hex(b) << ": " << e.what();
  }
}

TEST(CborUtf8, FirstInvalidOffset) {
  EXPECT_EQ(tensogram::first_invalid_utf8(""), std::string_view::npos);
  EXPECT_EQ(tensogram::first_invalid_utf8("plain ascii"), std::string_view::npos);
  EXPECT_EQ(tensogram::first_invalid_utf8("\xC3\xA9t\xC3\xA9 \xF0\x9F\x98\x80"),
            std::string_view::npos);                                 // été 😀
  EXPECT_EQ(tensogram::first_invalid_utf8("ab\xFF"), 2u);            // never a lead byte
  EXPECT_EQ(tensogram::first_invalid_utf8("a\xC3"), 1u);             // truncated
  EXPECT_EQ(tensogram::first_invalid_utf8("\xC0\x80"), 0u);          // overlong NUL
  EXPECT_EQ(tensogram::first_invalid_utf8("x\xED\xA0\x80"), 1u);     // surrogate
  EXPECT_EQ(tensogram::first_invalid_utf8("\xF4\x90\x80\x80"), 0u);  // above U+10FFFF
  EXPECT_EQ(tensogram::first_invalid_utf8("\xC3("), 0u);             // bad continuation
}

TEST(CborDecode, AnyIntegerWidthAccepted) {
  EXPECT_EQ(dec("01").as_uint64(), 1u);
  EXPECT_EQ(dec("1801").as_uint64(), 1u);
  EXPECT_EQ(dec("190001").as_uint64(), 1u);
  EXPECT_EQ(dec("1a00000001").as_uint64(), 1u);
  EXPECT_EQ(dec("1b0000000000000001").as_uint64(), 1u);
  EXPECT_EQ(dec("3b0000000000000004").as_int64(), -5);
  EXPECT_EQ(dec("3bffffffffffffffff"), cbor::value(cbor::integer{true, ~std::uint64_t{0}}));
  // Over-long lengths too.
  EXPECT_EQ(*dec("7800").as_text(), "");
  EXPECT_EQ(dec("9a000000020102").size(), 2u);
  EXPECT_EQ(dec("b90001616101").find("a")->as_uint64(), 1u);
}

TEST(CborDecode, IndefiniteLengthsAccepted) {
  const cbor::value a = dec("9f0102ff");
  ASSERT_TRUE(a.is_array());
  EXPECT_EQ(a, cbor::value(cbor::array{cbor::value(1), cbor::value(2)}));
  const cbor::value m = dec("bf 6161 01 6162 9f03ff ff");
  ASSERT_TRUE(m.is_map());
  EXPECT_EQ(m.find("a")->as_uint64(), 1u);
  EXPECT_EQ(*m.find("b"), cbor::value(cbor::array{cbor::value(3)}));
  EXPECT_EQ(*dec("7f616161626163ff").as_text(), "abc");
  EXPECT_EQ(*dec("7fff").as_text(), "");
  EXPECT_EQ(*dec("5f4101420203ff").as_bytes(), (cbor::byte_string{std::byte{1}, std::byte{2}, std::byte{3}}));
  EXPECT_EQ(dec("9fff").size(), 0u);
  EXPECT_EQ(dec("bfff").size(), 0u);
  // Nested indefinite inside definite.
  EXPECT_EQ(dec("819f9fffff").size(), 1u);
}

TEST(CborDecode, IndefiniteStringChunksMustMatchMajorType) {
  expect_metadata_error(from_hex("7f4161ff"), "indefinite");      // byte chunk inside text
  expect_metadata_error(from_hex("7f7f6161ffff"), "indefinite");  // nested indefinite chunk
  expect_metadata_error(from_hex("5f01ff"));
}

TEST(CborDecode, AnyKeyOrderAcceptedAndTrailingBytesIgnored) {
  const cbor::value m = dec("a2616201616102");
  EXPECT_EQ(m.find("a")->as_uint64(), 2u);
  EXPECT_EQ(m.find("b")->as_uint64(), 1u);
  const auto d = cbor::decode_prefix(from_hex("0102030405"));
  EXPECT_EQ(d.item.as_uint64(), 1u);
  EXPECT_EQ(d.consumed, 1u);
  const auto e = cbor::decode_prefix(from_hex("a1616182010200ff"));
  EXPECT_EQ(e.consumed, 6u);
}

TEST(CborDecode, DuplicateKeysKeptLastFindWins) {
  const cbor::value m = dec("a2616101616102");
  EXPECT_EQ(m.size(), 2u);
  EXPECT_EQ(m.find("a")->as_uint64(), 2u);
}

TEST(CborDecode, FloatsAndSimpleValues) {
  EXPECT_EQ(dec("f5").as_bool(), true);
  EXPECT_EQ(dec("f4").as_bool(), false);
  EXPECT_TRUE(dec("f6").is_null());
  EXPECT_EQ(*dec("f93800").as_float(), 0.5);
  EXPECT_EQ(*dec("fa47c35000").as_float(), 100000.0);
  const cbor::value t = dec("c1a0");
  ASSERT_TRUE(t.is_tag());
  EXPECT_EQ(t.as_tag()->number(), 1u);
}

bytes nested(unsigned head, std::size_t depth, std::initializer_list<unsigned> leaf) {
  bytes b(depth, static_cast<std::byte>(head));
  for (unsigned x : leaf) b.push_back(static_cast<std::byte>(x));
  return b;
}

TEST(CborDecode, DepthLimit256) {
  // 256 nested arrays: 255 × [x] around an empty array.
  EXPECT_NO_THROW((void)cbor::decode(nested(0x81, 255, {0x80})));
  expect_metadata_error(nested(0x81, 256, {0x80}), "nesting");
  // Maps: {0: {0: ... {}}}
  bytes maps;
  for (int i = 0; i < 255; ++i) {
    maps.push_back(std::byte{0xA1});
    maps.push_back(std::byte{0x00});
  }
  maps.push_back(std::byte{0xA0});
  EXPECT_NO_THROW((void)cbor::decode(maps));
  maps.insert(maps.begin(), {std::byte{0xA1}, std::byte{0x00}});
  expect_metadata_error(maps, "nesting");
  // Tags count as nesting levels too.
  EXPECT_NO_THROW((void)cbor::decode(nested(0xC1, 256, {0x00})));
  expect_metadata_error(nested(0xC1, 257, {0x00}), "nesting");
  // Indefinite arrays.
  bytes ind(255, std::byte{0x9F});
  ind.push_back(std::byte{0x80});
  ind.insert(ind.end(), 255, std::byte{0xFF});
  EXPECT_NO_THROW((void)cbor::decode(ind));
  ind.insert(ind.begin(), std::byte{0x9F});
  ind.push_back(std::byte{0xFF});
  expect_metadata_error(ind, "nesting");
  // A deep scalar leaf: 256 arrays around an integer exceed nothing.
  EXPECT_NO_THROW((void)cbor::decode(nested(0x81, 256, {0x01})));
  expect_metadata_error(nested(0x81, 257, {0x01}), "nesting");
}

TEST(CborDecode, VeryDeepInputFailsCleanly) {
  // Far beyond the limit: must be a metadata_error, not a stack overflow.
  expect_metadata_error(nested(0x81, 100000, {0x80}), "nesting");
  expect_metadata_error(nested(0x9F, 100000, {}), "nesting");
}

TEST(CborDecode, TruncationAtEveryPrefix) {
  // Rich canonical item: metadata_parity.tgm's metadata body, and an
  // indefinite-length composite.
  const auto file = tgtest::read_fixture("metadata_parity.tgm");
  const std::size_t body_len = static_cast<std::size_t>(tgtest::be64(file, 24 + 8)) - 28;
  const bytes body = tgtest::slice(file, 40, body_len);
  ASSERT_NO_THROW((void)cbor::decode(body));
  const bytes indefinite =
      from_hex("bf6161 9f 01 3b0000000000000004 fb3fb999999999999a 7f6161ff 5f4101ff ff 6162 c1f5 ff");
  ASSERT_NO_THROW((void)cbor::decode(indefinite));
  for (const bytes* item : {&body, &indefinite}) {
    for (std::size_t n = 0; n < item->size(); ++n) {
      const bytes prefix(item->begin(), item->begin() + static_cast<std::ptrdiff_t>(n));
      SCOPED_TRACE(n);
      expect_metadata_error(prefix);
    }
  }
}

TEST(CborDecode, TruncationNamesTheOffset) {
  try {
    (void)cbor::decode(from_hex("82 01 19 01"));
    FAIL();
  } catch (const tensogram::metadata_error& e) {
    EXPECT_NE(std::string(e.what()).find("truncated argument at byte 2"), std::string::npos) << e.what();
  }
}

TEST(CborDecode, InvalidUtf8Rejected) {
  for (const char* hex : {"61ff", "6180", "62c328", "62c080", "63eda080", "64f4908080", "61c3", "63e28241",
                          "65f88888888888", "62c1bf", "63e08080"}) {
    SCOPED_TRACE(hex);
    expect_metadata_error(from_hex(hex), "UTF-8");
  }
  // Valid multi-byte text.
  EXPECT_EQ(*dec("62c3a9").as_text(), "\xc3\xa9");
  EXPECT_EQ(*dec("64f09f9880").as_text(), "\xf0\x9f\x98\x80");
  EXPECT_EQ(*dec("63efbfbf").as_text(), "\xef\xbf\xbf");
  EXPECT_EQ(*dec("64f48fbfbf").as_text(), "\xf4\x8f\xbf\xbf");  // U+10FFFF
  // Byte strings are not UTF-8 checked.
  EXPECT_EQ(dec("41ff").as_bytes()->size(), 1u);
  // Invalid UTF-8 inside a map key, deep inside a structure.
  expect_metadata_error(from_hex("a1 81 61ff 00"), "UTF-8");
  expect_metadata_error(from_hex("81 a1 61ff 00"), "UTF-8");
}

TEST(CborDecode, ReservedAdditionalInformationRejected) {
  for (unsigned major = 0; major < 8; ++major) {
    for (unsigned ai : {28u, 29u, 30u}) {
      const bytes b = B({(major << 5) | ai, 0, 0, 0, 0, 0, 0, 0, 0});
      SCOPED_TRACE(testing::Message() << "major " << major << " ai " << ai);
      expect_metadata_error(b);
    }
  }
  expect_metadata_error(B({0x1C}), "additional information 28");
  // Indefinite length is meaningless for integers and tags; a lone break is invalid.
  expect_metadata_error(B({0x1F}));
  expect_metadata_error(B({0x3F}));
  expect_metadata_error(B({0xDF, 0x00}));
  expect_metadata_error(B({0xFF}), "break");
}

TEST(CborDecode, UnsupportedSimpleValuesRejected) {
  expect_metadata_error(B({0xF7}));        // undefined
  expect_metadata_error(B({0xE0}));        // simple(0)
  expect_metadata_error(B({0xF8, 0x20}));  // simple(32)
}

TEST(CborDecode, LengthsBeyondTheInputRejectedWithoutAllocating) {
  // Each header claims far more than the input holds; a decoder that
  // reserved first would throw std::bad_alloc / std::length_error instead.
  expect_metadata_error(from_hex("9b8000000000000000"), "exceeds remaining input");     // array of 2^63
  expect_metadata_error(from_hex("9b0000010000000000 01"), "exceeds remaining input");  // array of 2^40
  expect_metadata_error(from_hex("9bffffffffffffffff"), "exceeds remaining input");
  expect_metadata_error(from_hex("bb8000000000000000"), "exceeds remaining input");  // map of 2^63
  expect_metadata_error(from_hex("bb4000000000000000 0101"), "exceeds remaining input");
  expect_metadata_error(from_hex("7b8000000000000000 61"), "exceeds remaining input");  // text of 2^63
  expect_metadata_error(from_hex("5bffffffffffffffff 00"), "exceeds remaining input");  // bytes of 2^64-1
  expect_metadata_error(from_hex("7f7b8000000000000000ff"), "exceeds remaining input");
  // Plausible-looking but still too long by one.
  expect_metadata_error(from_hex("83 01 02"));
  expect_metadata_error(from_hex("a2 01 02 03"));
  expect_metadata_error(from_hex("63 61 62"));
  // Nested: inner array claims 2^40 inside a small outer structure.
  expect_metadata_error(from_hex("a1 6161 9b0000010000000000"), "exceeds remaining input");
}

TEST(CborCanonical, KeyOrderPositive) {
  EXPECT_TRUE(cbor::has_canonical_key_order(dec("a0")));
  EXPECT_TRUE(cbor::has_canonical_key_order(dec("a2616101616202")));
  EXPECT_TRUE(cbor::has_canonical_key_order(dec("a2616201626161 02")));  // "b" < "aa": length first
  EXPECT_TRUE(cbor::has_canonical_key_order(dec("01")));
  EXPECT_TRUE(cbor::has_canonical_key_order(dec("82a1616101a1616202")));
  // Non-canonical integer widths are invisible to the key-order check (§1.6).
  EXPECT_TRUE(cbor::has_canonical_key_order(dec("a1616118 01")));
}

TEST(CborCanonical, KeyOrderNegative) {
  EXPECT_FALSE(cbor::has_canonical_key_order(dec("a2616202616101")));        // unsorted
  EXPECT_FALSE(cbor::has_canonical_key_order(dec("a2626161 02 6162 01")));   // longer key first
  EXPECT_FALSE(cbor::has_canonical_key_order(dec("a2616101616102")));        // duplicate
  EXPECT_FALSE(cbor::has_canonical_key_order(dec("81a2616202616101")));      // inside array
  EXPECT_FALSE(cbor::has_canonical_key_order(dec("c1a2616202616101")));      // inside tag
  EXPECT_FALSE(cbor::has_canonical_key_order(dec("a16178a2616202616101")));  // inside map value
  EXPECT_FALSE(cbor::has_canonical_key_order(dec("a1a2616202616101 00")));   // inside map key
  EXPECT_FALSE(cbor::has_canonical_key_order(dec("a2 6161 01 01 02")));      // text before int key
}

TEST(CborCanonical, EncodingPositive) {
  for (const char* hex : {"00", "1818", "a0", "a2616101616202", "f93800", "fa477fe100", "fb3fb999999999999a",
                          "8301820203820405",
                          "7824 646361366663 36362d326461662d343734322d626135662d646236396363623639656163"}) {
    EXPECT_TRUE(cbor::is_canonical_encoding(from_hex(hex))) << hex;
  }
}

TEST(CborCanonical, EncodingNegative) {
  for (const char* hex : {
           "",                    // nothing
           "1801",                // over-long integer
           "190001",              // over-long integer
           "3800",                // over-long negative
           "780161",              // over-long text length
           "9f01ff",              // indefinite array
           "bf616101ff",          // indefinite map
           "7f6161ff",            // indefinite text
           "fb3ff0000000000000",  // 1.0 as a double
           "fa3f800000",          // 1.0 as a single
           "a2616202616101",      // unsorted keys
           "a2616101616102",      // duplicate keys
           "81a2616101616102",    // nested duplicate keys
           "0101",                // trailing bytes
           "82",                  // truncated
           "1c",                  // reserved additional information
       }) {
    EXPECT_FALSE(cbor::is_canonical_encoding(from_hex(hex))) << hex;
  }
}

}  // namespace
