// Spec 02 §2: CBOR ⇄ JSON.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

#include "tensogram/cbor/codec.hpp"
#include "tensogram/cbor/json.hpp"
#include "tensogram/core/error.hpp"
#include "test_support.hpp"

namespace {

namespace cbor = tensogram::cbor;
using nlohmann::json;

std::string js(const cbor::value& v) {
  return cbor::to_json_text(v);
}

TEST(CborToJson, Integers) {
  const std::uint64_t max = std::numeric_limits<std::uint64_t>::max();
  EXPECT_EQ(js(cbor::value(0)), "0");
  EXPECT_EQ(js(cbor::value(-5)), "-5");
  EXPECT_EQ(js(cbor::value(max)), "18446744073709551615");  // fits u64: a number
  EXPECT_EQ(js(cbor::value(std::numeric_limits<std::int64_t>::min())), "-9223372036854775808");
  // Outside both i64 and u64: decimal strings.
  EXPECT_EQ(js(cbor::value(cbor::integer{true, std::uint64_t{1} << 63})), "\"-9223372036854775809\"");
  EXPECT_EQ(js(cbor::value(cbor::integer{true, max})), "\"-18446744073709551616\"");
  EXPECT_TRUE(cbor::to_json(cbor::value(max)).is_number_unsigned());
  EXPECT_TRUE(cbor::to_json(cbor::value(-1)).is_number_integer());
}

TEST(CborToJson, FloatsAndNonFinite) {
  EXPECT_EQ(js(cbor::value(0.5)), "0.5");
  EXPECT_EQ(js(cbor::value(230.5)), "230.5");
  EXPECT_TRUE(cbor::to_json(cbor::value(1.0)).is_number_float());
  EXPECT_EQ(js(cbor::value(std::nan(""))), "null");
  EXPECT_EQ(js(cbor::value(std::numeric_limits<double>::infinity())), "null");
  EXPECT_EQ(js(cbor::value(-std::numeric_limits<double>::infinity())), "null");
}

TEST(CborToJson, BytesTextBoolsNull) {
  EXPECT_EQ(js(cbor::value(cbor::byte_string{std::byte{0x00}, std::byte{0xff}, std::byte{0x1a}})),
            "\"00ff1a\"");
  EXPECT_EQ(js(cbor::value(cbor::byte_string{})), "\"\"");
  EXPECT_EQ(js(cbor::value("x\"y")), "\"x\\\"y\"");
  EXPECT_EQ(js(cbor::value(true)), "true");
  EXPECT_EQ(js(cbor::value(nullptr)), "null");
}

TEST(CborToJson, ObjectsSortedByName) {
  const cbor::value m =
      cbor::value::make_map({{"base", 1}, {"_reserved_", 2}, {"b", 3}, {"_extra_", 4}, {"B", 5}});
  EXPECT_EQ(js(m), R"({"B":5,"_extra_":4,"_reserved_":2,"b":3,"base":1})");
}

TEST(CborToJson, TagsUnwrappedOrNull) {
  const cbor::value t(cbor::tagged(1, cbor::value(1700000000)));
  EXPECT_EQ(js(t), "1700000000");
  cbor::json_options c_api;
  c_api.unwrap_tags = false;
  EXPECT_EQ(cbor::to_json_text(t, -1, c_api), "null");
  const cbor::value nested(
      cbor::array{cbor::value(cbor::tagged(2, cbor::value(cbor::tagged(3, cbor::value("x")))))});
  EXPECT_EQ(js(nested), R"(["x"])");
}

TEST(CborToJson, NonTextKeysNamedByTheirJson) {
  cbor::map m;
  m.push_back({cbor::value(1), cbor::value("one")});
  m.push_back({cbor::value("k"), cbor::value(2)});
  const json j = cbor::to_json(cbor::value(m));
  EXPECT_EQ(j.at("1"), "one");
  EXPECT_EQ(j.at("k"), 2);
}

TEST(CborToJson, FixtureMetadata) {
  const auto file = tgtest::read_fixture("metadata_parity.tgm");
  const std::size_t len = static_cast<std::size_t>(tgtest::be64(file, 32)) - 28;
  const cbor::value v = cbor::decode(tgtest::slice(file, 40, len));
  const json j = cbor::to_json(v);
  EXPECT_EQ(j["base"][0]["ratio"], 0.5);
  EXPECT_EQ(j["base"][0]["big"], 2147483648u);
  EXPECT_EQ(j["base"][0]["count"], -5);
  EXPECT_EQ(j["base"][0]["levels"], json::parse("[1000, 850, 500]"));
  EXPECT_EQ(j["_extra_"]["source"], "parity-fixture");
  // Member order in the text is by name, not the CBOR order.
  const std::string text = cbor::to_json_text(v);
  EXPECT_LT(text.find("\"_extra_\""), text.find("\"_reserved_\""));
  EXPECT_LT(text.find("\"_reserved_\""), text.find("\"base\""));
}

TEST(JsonToCbor, Numbers) {
  EXPECT_EQ(cbor::from_json(json::parse("9223372036854775807")),
            cbor::value(std::numeric_limits<std::int64_t>::max()));
  EXPECT_EQ(cbor::from_json(json::parse("-9223372036854775808")),
            cbor::value(std::numeric_limits<std::int64_t>::min()));
  EXPECT_EQ(cbor::from_json(json::parse("-1")), cbor::value(-1));
  EXPECT_EQ(cbor::from_json(json::parse("0")), cbor::value(0));
  // Above i64: floats.
  const cbor::value big = cbor::from_json(json::parse("9223372036854775808"));
  ASSERT_TRUE(big.is_float());
  EXPECT_EQ(*big.as_float(), 9223372036854775808.0);
  const cbor::value umax = cbor::from_json(json::parse("18446744073709551615"));
  ASSERT_TRUE(umax.is_float());
  EXPECT_EQ(*umax.as_float(), 18446744073709551616.0);
  const cbor::value huge = cbor::from_json(json::parse("1e300"));
  ASSERT_TRUE(huge.is_float());
  const cbor::value half = cbor::from_json(json::parse("0.5"));
  ASSERT_TRUE(half.is_float());
  EXPECT_EQ(tgtest::to_hex(cbor::encode(half)), "f93800");
}

TEST(JsonToCbor, StructuresAndRoundTrip) {
  const json j = json::parse(R"({"z": [1, "two", null, true, false, {"b": 1, "a": [2.5]}], "a": {}})");
  const cbor::value v = cbor::from_json(j);
  ASSERT_TRUE(v.is_map());
  EXPECT_EQ(v.size(), 2u);
  const cbor::value& z = *v.find("z");
  ASSERT_TRUE(z.is_array());
  EXPECT_EQ(z.size(), 6u);
  EXPECT_EQ(*(*z.as_array())[1].as_text(), "two");
  EXPECT_TRUE((*z.as_array())[2].is_null());
  EXPECT_EQ((*z.as_array())[3].as_bool(), true);
  EXPECT_EQ(cbor::to_json(v), j);
  // Object members become text keys in name order.
  EXPECT_EQ(*(*v.as_map())[0].key.as_text(), "a");
}

TEST(JsonToCbor, MalformedTextIsMetadataError) {
  try {
    (void)cbor::from_json_text("{\"a\": [1, 2}");
    FAIL();
  } catch (const tensogram::metadata_error& e) {
    EXPECT_NE(std::string(e.what()).find("invalid JSON"), std::string::npos) << e.what();
  }
  EXPECT_THROW((void)cbor::from_json_text(""), tensogram::metadata_error);
  EXPECT_EQ(cbor::from_json_text("[1]"), cbor::value(cbor::array{cbor::value(1)}));
}

}  // namespace

// Regression (found by fuzz_decode_metadata): map keys that are themselves
// maps are named by their JSON text, escaped again at every level; deep
// nesting must end in a typed error, not exponential memory.
TEST(CborJsonRegression, DeeplyNestedNonTextKeysRejected) {
  tensogram::cbor::value v = tensogram::cbor::value(1);
  for (int depth = 0; depth < 40; ++depth) {
    tensogram::cbor::map m;
    m.push_back(tensogram::cbor::map_entry{v, tensogram::cbor::value("x")});
    v = tensogram::cbor::value(std::move(m));
  }
  EXPECT_THROW((void)tensogram::cbor::to_json(v), tensogram::metadata_error);
}

// Regression (found in review): building a metadata map of many keys must
// stay linear; 40,000 keys parse well within the test timeout.
TEST(CborJsonRegression, ManyKeysParseAndRoundTrip) {
  tensogram::cbor::map m;
  for (int i = 0; i < 40'000; ++i) {
    m.push_back(tensogram::cbor::map_entry{tensogram::cbor::value("k" + std::to_string(i)),
                                           tensogram::cbor::value(i)});
  }
  tensogram::cbor::value base(std::move(m));
  tensogram::cbor::value top = tensogram::cbor::value::make_map({{"_extra_", base}});
  const std::vector<std::byte> bytes = tensogram::cbor::encode(top);
  const tensogram::global_metadata g = tensogram::global_metadata::from_cbor_bytes(bytes);
  EXPECT_EQ(g.extra.size(), 40'000U);
  EXPECT_EQ(*g.extra.find("k39999")->as_int64(), 39'999);
}
