// Direct tests of the tool's helpers: serde-compatible JSON text, key
// lookup, where-clauses (spec 04 §A.2–§A.4), --meta parsing, BOOL values.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "global_options.hpp"
#include "json_text.hpp"
#include "key_lookup.hpp"
#include "meta_option.hpp"
#include "tool_error.hpp"
#include "where_clause.hpp"

namespace tensogram::cli::test {
namespace {

TEST(JsonNumber, RyuLayout) {
  EXPECT_EQ(json_number(1.0), "1.0");
  EXPECT_EQ(json_number(-2.0), "-2.0");
  EXPECT_EQ(json_number(0.0), "0.0");
  EXPECT_EQ(json_number(-0.0), "-0.0");
  EXPECT_EQ(json_number(0.5), "0.5");
  EXPECT_EQ(json_number(0.1), "0.1");
  EXPECT_EQ(json_number(3.5), "3.5");
  EXPECT_EQ(json_number(100.0), "100.0");
  EXPECT_EQ(json_number(123456.789), "123456.789");
  EXPECT_EQ(json_number(1e15), "1000000000000000.0");
  EXPECT_EQ(json_number(1e16), "1e16");
  EXPECT_EQ(json_number(1.5e16), "1.5e16");
  EXPECT_EQ(json_number(1.2345678901234567e15), "1234567890123456.8");
  EXPECT_EQ(json_number(0.0001), "0.0001");
  EXPECT_EQ(json_number(0.00001), "0.00001");
  EXPECT_EQ(json_number(1.5e-5), "0.000015");
  EXPECT_EQ(json_number(1e-6), "1e-6");
  EXPECT_EQ(json_number(1.25e-7), "1.25e-7");
  EXPECT_EQ(json_number(1e300), "1e300");
  EXPECT_EQ(json_number(-1.7976931348623157e308), "-1.7976931348623157e308");
  EXPECT_EQ(json_number(5e-324), "5e-324");
  EXPECT_EQ(json_number(std::numeric_limits<double>::quiet_NaN()), "null");
  EXPECT_EQ(json_number(-std::numeric_limits<double>::infinity()), "null");
}

TEST(JsonText, CompactAndPretty) {
  const nlohmann::json j =
      nlohmann::json::parse(R"({"b":[1,2.5,{"x":null}],"a":"q\"\\\n\u0001é","c":{},"d":[],"e":true,"f":-3})");
  EXPECT_EQ(json_compact(j),
            R"({"a":"q\"\\\n\u0001é","b":[1,2.5,{"x":null}],"c":{},"d":[],"e":true,"f":-3})");
  EXPECT_EQ(json_pretty(j),
            "{\n"
            "  \"a\": \"q\\\"\\\\\\n\\u0001é\",\n"
            "  \"b\": [\n"
            "    1,\n"
            "    2.5,\n"
            "    {\n"
            "      \"x\": null\n"
            "    }\n"
            "  ],\n"
            "  \"c\": {},\n"
            "  \"d\": [],\n"
            "  \"e\": true,\n"
            "  \"f\": -3\n"
            "}");
  EXPECT_EQ(json_pretty(nlohmann::json::object()), "{}");
  EXPECT_EQ(json_compact(nlohmann::json(std::uint64_t{18446744073709551615ULL})), "18446744073709551615");
  EXPECT_EQ(json_compact(nlohmann::json("\b\f\r\t\x1f\x7f")), "\"\\b\\f\\r\\t\\u001f\x7f\"");
}

global_metadata sample_metadata() {
  global_metadata g;
  cbor::value b0 = cbor::value::make_map();
  b0.set("mars", cbor::value::make_map({{"param", "2t"}, {"step", 6}}));
  b0.set("ratio", 2.0);
  b0.set("shared", "from_base");
  b0.set("_reserved_", cbor::value::make_map({{"tensor", "internal"}}));
  cbor::value b1 = cbor::value::make_map();
  b1.set("mars", cbor::value::make_map({{"param", "msl"}, {"levelist", 500}}));
  g.base = {b0, b1};
  g.extra.set("shared", "from_extra");
  g.extra.set("source", "test");
  g.extra.set("version", 7);
  return g;
}

TEST(KeyLookup, Rules) {
  const global_metadata g = sample_metadata();
  EXPECT_EQ(lookup_key(g, "version"), "3");
  EXPECT_EQ(lookup_key(g, "_extra_.version"), "7");
  EXPECT_EQ(lookup_key(g, "mars.param"), "2t");      // first match
  EXPECT_EQ(lookup_key(g, "mars.levelist"), "500");  // base[0] lacks it
  EXPECT_EQ(lookup_key(g, "mars.step"), "6");
  EXPECT_EQ(lookup_key(g, "ratio"), "2");           // integral float without ".0"
  EXPECT_EQ(lookup_key(g, "shared"), "from_base");  // base wins over extra
  EXPECT_EQ(lookup_key(g, "extra.shared"), "from_extra");
  EXPECT_EQ(lookup_key(g, "source"), "test");  // extra fallback
  EXPECT_EQ(lookup_key(g, "_reserved_.tensor"), std::nullopt);
  EXPECT_EQ(lookup_key(g, "extra"), std::nullopt);
  EXPECT_EQ(lookup_key(g, ""), std::nullopt);
  EXPECT_EQ(lookup_key(g, "."), std::nullopt);
  EXPECT_EQ(lookup_key(g, "mars.param.x"), std::nullopt);
}

TEST(KeyList, SplitAndTrim) {
  EXPECT_EQ(parse_key_list("a"), (std::vector<std::string>{"a"}));
  EXPECT_EQ(parse_key_list(" a , b.c ,\tc "), (std::vector<std::string>{"a", "b.c", "c"}));
  EXPECT_EQ(parse_key_list("a,,b,"), (std::vector<std::string>{"a", "", "b", ""}));
}

TEST(Where, Parse) {
  where_clause c = parse_where("mars.param=2t/10u");
  EXPECT_EQ(c.key, "mars.param");
  EXPECT_EQ(c.operation, where_clause::op::equal);
  EXPECT_EQ(c.values, (std::vector<std::string>{"2t", "10u"}));
  c = parse_where("class!=od/rd");
  EXPECT_EQ(c.key, "class");
  EXPECT_EQ(c.operation, where_clause::op::not_equal);
  EXPECT_EQ(c.values, (std::vector<std::string>{"od", "rd"}));
  // `!=` takes precedence even after an `=`; no trimming.
  c = parse_where("a=b!=c");
  EXPECT_EQ(c.key, "a=b");
  EXPECT_EQ(c.operation, where_clause::op::not_equal);
  EXPECT_EQ(c.values, (std::vector<std::string>{"c"}));
  c = parse_where(" k = v ");
  EXPECT_EQ(c.key, " k ");
  EXPECT_EQ(c.values, (std::vector<std::string>{" v "}));
  c = parse_where("k=");
  EXPECT_EQ(c.values, (std::vector<std::string>{""}));
  c = parse_where("k=a//b=c");
  EXPECT_EQ(c.values, (std::vector<std::string>{"a", "", "b=c"}));
  try {
    (void)parse_where("no_operator");
    FAIL();
  } catch (const tool_error& e) {
    EXPECT_EQ(std::string(e.what()),
              "invalid where clause: invalid where-clause: no_operator (expected key=value or key!=value)");
  }
}

TEST(Where, Matches) {
  const global_metadata g = sample_metadata();
  EXPECT_TRUE(matches(g, parse_where("mars.param=2t")));
  EXPECT_FALSE(matches(g, parse_where("mars.param=msl")));  // first match is 2t
  EXPECT_TRUE(matches(g, parse_where("mars.param=msl/2t")));
  EXPECT_FALSE(matches(g, parse_where("mars.param!=msl/2t")));
  EXPECT_TRUE(matches(g, parse_where("mars.param!=msl")));
  EXPECT_TRUE(matches(g, parse_where("mars.step=6")));
  EXPECT_FALSE(matches(g, parse_where("mars.step=06")));
  EXPECT_TRUE(matches(g, parse_where("ratio=2")));
  EXPECT_FALSE(matches(g, parse_where("ratio=2.0")));
  EXPECT_FALSE(matches(g, parse_where("nothing=x")));
  EXPECT_TRUE(matches(g, parse_where("nothing!=x")));
  EXPECT_TRUE(matches(g, parse_where("version=3")));
  EXPECT_FALSE(matches(g, parse_where("version!=3")));
}

TEST(MetaOption, Values) {
  EXPECT_EQ(parse_meta_value("6"), cbor::value(6));
  EXPECT_EQ(parse_meta_value("-6"), cbor::value(-6));
  EXPECT_EQ(parse_meta_value("0"), cbor::value(0));
  EXPECT_EQ(parse_meta_value("-9223372036854775808"), cbor::value(INT64_MIN));
  EXPECT_EQ(parse_meta_value("18446744073709551615"), cbor::value(UINT64_MAX));
  EXPECT_EQ(parse_meta_value("18446744073709551616"), cbor::value(18446744073709551616.0));
  EXPECT_EQ(parse_meta_value("-9223372036854775809"), cbor::value(-9223372036854775809.0));
  EXPECT_EQ(parse_meta_value("0.5"), cbor::value(0.5));
  EXPECT_EQ(parse_meta_value("-1.5e3"), cbor::value(-1500.0));
  EXPECT_EQ(parse_meta_value("2E-2"), cbor::value(0.02));
  EXPECT_EQ(parse_meta_value("1.0"), cbor::value(1.0));
  for (const char* text : {"", "2t", "06", "+5", ".5", "5.", "1e", "1e400", "-", "nan", "inf", "true", "0x10",
                           " 5", "5 ", "1_000", "--1"}) {
    EXPECT_EQ(parse_meta_value(text), cbor::value(text)) << text;
  }
}

TEST(MetaOption, Maps) {
  const std::vector<std::string> a = {
      "mars.param=2t", "mars.levtype=sfc", "step=6", "a.b.c=x", "mars.param=10u", "x=1", "x=y=z"};
  const cbor::value m = build_meta_map(a);
  cbor::value want = cbor::value::make_map();
  want.set("mars", cbor::value::make_map({{"param", "10u"}, {"levtype", "sfc"}}));
  want.set("step", 6);
  want.set("a", cbor::value::make_map({{"b", cbor::value::make_map({{"c", "x"}})}}));
  want.set("x", "y=z");
  EXPECT_EQ(m, want);
  // Replacing a map by a scalar is allowed (last assignment wins).
  const std::vector<std::string> b = {"mars.param=2t", "mars=none"};
  EXPECT_EQ(*build_meta_map(b).find("mars"), cbor::value("none"));
  EXPECT_EQ(build_meta_map({}), cbor::value::make_map());
  for (const std::vector<std::string>& bad : {std::vector<std::string>{"x"},
                                              {"=1"},
                                              {"a.=1"},
                                              {".a=1"},
                                              {"_reserved_=1"},
                                              {"_reserved_.t=1"},
                                              {"a=1", "a.b=2"}}) {
    EXPECT_THROW((void)build_meta_map(bad), tool_error) << bad.back();
  }
  // `_reserved_` deeper down is an ordinary key.
  const std::vector<std::string> deep = {"a._reserved_=1"};
  EXPECT_NO_THROW((void)build_meta_map(deep));
}

TEST(GlobalOptions, Boolish) {
  for (const char* t : {"y", "yes", "t", "true", "on", "1", "YES", "True", "ON"})
    EXPECT_EQ(parse_boolish(t), true) << t;
  for (const char* f : {"n", "no", "f", "false", "off", "0", "NO", "False"})
    EXPECT_EQ(parse_boolish(f), false) << f;
  for (const char* x : {"", "2", "enable", "+", "truee", " yes"})
    EXPECT_EQ(parse_boolish(x), std::nullopt) << x;
}

TEST(GlobalOptions, ToEncodeOptions) {
  global_options g;
  g.threads = 3;
  g.allow_nan = "yes";
  g.allow_inf = "off";
  g.nan_mask_method = "rle";
  g.small_mask_threshold = 0;
  const encode_options o = g.to_encode_options();
  EXPECT_EQ(o.threads, 3u);
  EXPECT_TRUE(o.allow_nan);
  EXPECT_FALSE(o.allow_inf);
  EXPECT_EQ(o.nan_mask_method, "rle");
  EXPECT_EQ(o.pos_inf_mask_method, "roaring");
  EXPECT_EQ(o.small_mask_threshold_bytes, 0);
  g.allow_inf = "perhaps";
  EXPECT_THROW((void)g.to_encode_options(), usage_error);
  EXPECT_THROW(validate_global_options(g), usage_error);
}

}  // namespace
}  // namespace tensogram::cli::test
