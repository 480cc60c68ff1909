// Spec 02 §1.2 (shortest arguments) and §1.4 (map key order).
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "tensogram/cbor/codec.hpp"
#include "tensogram/cbor/value.hpp"
#include "tensogram/message/descriptor.hpp"
#include "tensogram/message/metadata.hpp"
#include "test_support.hpp"

namespace {

namespace cbor = tensogram::cbor;
using tgtest::to_hex;

std::string hex_of(const cbor::value& v) {
  return to_hex(cbor::encode(v));
}

cbor::value neg(std::uint64_t magnitude) {
  return cbor::value(cbor::integer{true, magnitude});
}

TEST(CborEncode, UnsignedWidths) {
  EXPECT_EQ(hex_of(0), "00");
  EXPECT_EQ(hex_of(1), "01");
  EXPECT_EQ(hex_of(23), "17");
  EXPECT_EQ(hex_of(24), "1818");
  EXPECT_EQ(hex_of(162), "18a2");
  EXPECT_EQ(hex_of(255), "18ff");
  EXPECT_EQ(hex_of(256), "190100");
  EXPECT_EQ(hex_of(400), "190190");
  EXPECT_EQ(hex_of(65535), "19ffff");
  EXPECT_EQ(hex_of(65536), "1a00010000");
  EXPECT_EQ(hex_of(2147483648u), "1a80000000");
  EXPECT_EQ(hex_of(4294967295u), "1affffffff");
  EXPECT_EQ(hex_of(std::uint64_t{4294967296}), "1b0000000100000000");
  EXPECT_EQ(hex_of(std::numeric_limits<std::uint64_t>::max()), "1bffffffffffffffff");
}

TEST(CborEncode, NegativeWidths) {
  EXPECT_EQ(hex_of(-1), "20");
  EXPECT_EQ(hex_of(-5), "24");
  EXPECT_EQ(hex_of(-24), "37");
  EXPECT_EQ(hex_of(-25), "3818");
  EXPECT_EQ(hex_of(-256), "38ff");
  EXPECT_EQ(hex_of(-257), "390100");
  EXPECT_EQ(hex_of(-65537), "3a00010000");
  EXPECT_EQ(hex_of(std::numeric_limits<std::int64_t>::min()), "3b7fffffffffffffff");
  EXPECT_EQ(hex_of(neg(std::numeric_limits<std::uint64_t>::max())), "3bffffffffffffffff");  // -2^64
  EXPECT_EQ(hex_of(neg(std::uint64_t{1} << 63)), "3b8000000000000000");                     // -2^63-1
}

TEST(CborEncode, IntegerBoundaryRoundTrips) {
  const std::uint64_t max = std::numeric_limits<std::uint64_t>::max();
  for (const cbor::integer i :
       {cbor::integer{false, 0}, cbor::integer{false, max}, cbor::integer{true, 0}, cbor::integer{true, max},
        cbor::integer{true, std::uint64_t{1} << 63}, cbor::integer{false, std::uint64_t{1} << 63}}) {
    const cbor::value back = cbor::decode(cbor::encode(cbor::value(i)));
    ASSERT_TRUE(back.is_integer());
    EXPECT_EQ(*back.as_integer(), i);
  }
  EXPECT_EQ(cbor::integer({true, max}).to_string(), "-18446744073709551616");
  EXPECT_EQ(cbor::integer({false, max}).to_string(), "18446744073709551615");
  EXPECT_EQ(cbor::integer({true, std::uint64_t{1} << 63}).to_string(), "-9223372036854775809");
  EXPECT_EQ(cbor::integer({true, 4}).to_string(), "-5");
  EXPECT_EQ(cbor::integer({true, (std::uint64_t{1} << 63) - 1}).to_int64(),
            std::numeric_limits<std::int64_t>::min());
  EXPECT_FALSE(cbor::integer({true, std::uint64_t{1} << 63}).to_int64().has_value());
  EXPECT_FALSE(cbor::integer({false, std::uint64_t{1} << 63}).to_int64().has_value());
  EXPECT_FALSE(cbor::integer({true, 0}).to_uint64().has_value());
}

TEST(CborEncode, LengthsAndSimpleValues) {
  EXPECT_EQ(hex_of(""), "60");
  EXPECT_EQ(hex_of(std::string(23, 'a')).substr(0, 2), "77");
  EXPECT_EQ(hex_of(std::string(24, 'a')).substr(0, 4), "7818");
  EXPECT_EQ(hex_of(std::string("dca6fc66-2daf-4742-ba5f-db69ccb69eac")).substr(0, 4), "7824");
  EXPECT_EQ(hex_of(std::string(256, 'a')).substr(0, 6), "790100");
  EXPECT_EQ(hex_of(cbor::byte_string(3, std::byte{7})), "43070707");
  EXPECT_EQ(hex_of(cbor::value::make_array()), "80");
  EXPECT_EQ(hex_of(cbor::value(cbor::array(24, cbor::value(0)))).substr(0, 4), "9818");
  EXPECT_EQ(hex_of(cbor::value::make_map()), "a0");
  EXPECT_EQ(hex_of(true), "f5");
  EXPECT_EQ(hex_of(false), "f4");
  EXPECT_EQ(hex_of(nullptr), "f6");
  EXPECT_EQ(hex_of(cbor::tagged(1, cbor::value(0))), "c100");
  EXPECT_EQ(hex_of(cbor::tagged(24, cbor::value(0))), "d81800");
  EXPECT_EQ(hex_of(cbor::tagged(std::uint64_t{1} << 32, cbor::value(0))), "db000000010000000000");
}

// Keys of a map value, as text, in stored order.
std::vector<std::string> keys_of(const cbor::value& v) {
  std::vector<std::string> out;
  for (const auto& e : *v.as_map())
    out.push_back(e.key.is_text() ? *e.key.as_text() : "<" + hex_of(e.key) + ">");
  return out;
}

// Keys in the order they are written on the wire.
std::vector<std::string> wire_keys(const cbor::value& v) {
  return keys_of(cbor::decode(cbor::encode(v)));
}

using S = std::vector<std::string>;

TEST(CborKeyOrder, Descriptor) {
  tensogram::data_object_descriptor d = tensogram::data_object_descriptor::contiguous(
      tensogram::dtype::float32, {4}, tensogram::byte_order::big);
  EXPECT_EQ(wire_keys(d.to_cbor()), (S{"ndim", "type", "dtype", "shape", "filter", "strides", "encoding",
                                       "byte_order", "compression"}));
  d.masks = cbor::value::make_map(
      {{"nan", cbor::value::make_map({{"offset", 16}, {"method", "none"}, {"length", 1}})}});
  d.params.set("zstd_level", 3);
  EXPECT_EQ(wire_keys(d.to_cbor()), (S{"ndim", "type", "dtype", "masks", "shape", "filter", "strides",
                                       "encoding", "byte_order", "zstd_level", "compression"}));
}

TEST(CborKeyOrder, MetadataSections) {
  tensogram::global_metadata g;
  g.base.push_back(cbor::value::make_map({{"x", 1}}));
  g.extra.set("source", "s");
  g.reserved.set("encoder", cbor::value::make_map({{"version", "0.24.0"}, {"name", "tensogram"}}));
  g.reserved.set("uuid", "u");
  g.reserved.set("time", "t");
  g.reserved.set("tensor", cbor::value::make_map({{"strides", cbor::value::make_array()},
                                                  {"shape", cbor::value::make_array()},
                                                  {"dtype", "float32"},
                                                  {"ndim", 0}}));
  const cbor::value wire = cbor::decode(g.to_cbor_bytes());
  EXPECT_EQ(keys_of(wire), (S{"base", "_extra_", "_reserved_"}));
  const cbor::value& r = *wire.find("_reserved_");
  EXPECT_EQ(keys_of(r), (S{"time", "uuid", "tensor", "encoder"}));
  EXPECT_EQ(keys_of(*r.find("encoder")), (S{"name", "version"}));
  EXPECT_EQ(keys_of(*r.find("tensor")), (S{"ndim", "dtype", "shape", "strides"}));
}

TEST(CborKeyOrder, MasksAndMaskEntries) {
  const cbor::value masks = cbor::value::make_map(
      {{"inf-", 1},
       {"inf+", 2},
       {"nan", cbor::value::make_map(
                   {{"params", cbor::value::make_map()}, {"offset", 0}, {"method", "rle"}, {"length", 3}})}});
  const cbor::value wire = cbor::decode(cbor::encode(masks));
  EXPECT_EQ(keys_of(wire), (S{"nan", "inf+", "inf-"}));
  EXPECT_EQ(keys_of(*wire.find("nan")), (S{"length", "method", "offset", "params"}));
}

TEST(CborKeyOrder, IndexAndHashBodies) {
  EXPECT_EQ(wire_keys(cbor::value::make_map(
                {{"offsets", cbor::value::make_array()}, {"lengths", cbor::value::make_array()}})),
            (S{"lengths", "offsets"}));
  EXPECT_EQ(wire_keys(cbor::value::make_map({{"algorithm", "xxh3"}, {"hashes", cbor::value::make_array()}})),
            (S{"hashes", "algorithm"}));
}

TEST(CborKeyOrder, NestedInsideArraysTagsAndMaps) {
  const cbor::value unsorted = cbor::value::make_map({{"bb", 1}, {"a", 2}});
  cbor::array arr;
  arr.push_back(unsorted);
  arr.push_back(cbor::value(cbor::tagged(40, unsorted)));
  const cbor::value outer = cbor::value::make_map({{"zz", cbor::value(arr)}, {"m", unsorted}});
  const std::string h = hex_of(outer);
  // {"m": {"a": 2, "bb": 1}, "zz": [{"a": 2, "bb": 1}, 40({"a": 2, "bb": 1})]}
  EXPECT_EQ(h,
            "a2616da261610262626201627a7a82a261610262626201d828a2616102626262"
            "01");
}

TEST(CborKeyOrder, BytewiseOnEncodedKeysIncludingNonText) {
  cbor::map m;
  m.push_back({cbor::value("a"), 1});                  // 61 61
  m.push_back({cbor::value(-1), 2});                   // 20
  m.push_back({cbor::value(1), 3});                    // 01
  m.push_back({cbor::value(100), 4});                  // 18 64
  m.push_back({cbor::value(cbor::byte_string{}), 5});  // 40
  m.push_back({cbor::value("B"), 6});                  // 61 42
  const cbor::value wire = cbor::decode(cbor::encode(cbor::value(m)));
  std::vector<std::string> keys;
  for (const auto& e : *wire.as_map()) keys.push_back(hex_of(e.key));
  EXPECT_EQ(keys, (S{"01", "1864", "20", "40", "6142", "6161"}));
}

TEST(CborKeyOrder, StableWithDuplicates) {
  cbor::map m;
  m.push_back({cbor::value("b"), 1});
  m.push_back({cbor::value("a"), 1});
  m.push_back({cbor::value("b"), 2});
  EXPECT_EQ(hex_of(cbor::value(m)), "a3616101616201616202");
}

TEST(CborKeyOrder, FixtureMetadataIsReproduced) {
  // The metadata body of simple_f32.tgm (spec 01 §20.2) re-encodes to itself.
  const auto file = tgtest::read_fixture("simple_f32.tgm");
  const auto body = tgtest::slice(file, 40, 217);
  const cbor::value v = cbor::decode(body);
  EXPECT_EQ(cbor::encode(v), body);
  EXPECT_TRUE(cbor::is_canonical_encoding(body));
  EXPECT_EQ(keys_of(v), (S{"base", "_reserved_"}));
  EXPECT_EQ(keys_of((*v.find("base")->as_array())[0]), (S{"product", "parameter", "_reserved_"}));
}

}  // namespace
