// GlobalMetadata decode rules (spec 02 §3.2), dotted-path lookup (§12) and
// compute_common (§11) on constructed values.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <string>
#include <vector>

#include <tensogram.hpp>
#include "test_support.hpp"

namespace {

namespace tg = tensogram;
namespace cbor = tensogram::cbor;
using cbor::value;

template <typename F>
void expect_metadata_error(F&& f, const std::string& fragment) {
  try {
    f();
    ADD_FAILURE() << "no error; expected " << fragment;
  } catch (const tg::metadata_error& e) {
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

TEST(LegacyText, TheLegacyGettersRendering) {
  EXPECT_EQ(tg::legacy_text(nullptr), std::nullopt);
  const value text("2t");
  EXPECT_EQ(tg::legacy_text(&text), "2t");
  const value empty("");
  EXPECT_EQ(tg::legacy_text(&empty), "");
  const value nul(std::string("a\0b", 3));
  EXPECT_EQ(tg::legacy_text(&nul), std::nullopt);
  const value i(std::int64_t{-12});
  EXPECT_EQ(tg::legacy_text(&i), "-12");
  const value f(0.5);
  EXPECT_EQ(tg::legacy_text(&f), "0.5");
  const value b(true);
  EXPECT_EQ(tg::legacy_text(&b), "true");
  const value null;
  EXPECT_EQ(tg::legacy_text(&null), std::nullopt);
  const value map = value::make_map({{"a", 1}});
  EXPECT_EQ(tg::legacy_text(&map), std::nullopt);
  const value bytes(cbor::byte_string{std::byte{1}});
  EXPECT_EQ(tg::legacy_text(&bytes), std::nullopt);
  // The C++ getter keeps returning "" for all of these.
  tg::global_metadata g;
  g.base.push_back(value::make_map({{"nul", nul}, {"x", f}}));
  const tg::metadata m(g);
  EXPECT_EQ(m.get_string("nul"), "");
  EXPECT_EQ(m.get_string("x"), "0.5");
}

TEST(GlobalMetadata, UnknownTopLevelKeysMoveToExtra) {
  const value v = value::make_map({{"version", 3},
                                   {"reserved", value::make_map()},
                                   {"common", 1},
                                   {"payload", 2},
                                   {"_extra_", value::make_map({{"a", 1}})}});
  const tg::global_metadata g = tg::global_metadata::from_cbor(v);
  EXPECT_EQ(g.extra.size(), 5u);
  EXPECT_EQ(g.extra.find("version")->as_int64(), 3);
  EXPECT_TRUE(g.extra.contains("reserved"));
  EXPECT_TRUE(g.base.empty());
  EXPECT_EQ(g.reserved.size(), 0u);
}

TEST(GlobalMetadata, DecodeErrors) {
  expect_metadata_error([] { (void)tg::global_metadata::from_cbor(value(1)); },
                        "global metadata CBOR is not a map");
  cbor::map m;
  m.push_back({value(1), value(2)});
  expect_metadata_error([&] { (void)tg::global_metadata::from_cbor(value(m)); },
                        "global metadata CBOR has non-text top-level key");
  expect_metadata_error(
      [] {
        (void)tg::global_metadata::from_cbor(value::make_map({{"base", 1}}));
      },
      "failed to deserialize base");
  expect_metadata_error(
      [] {
        (void)tg::global_metadata::from_cbor(value::make_map({{"base", value(cbor::array{value(1)})}}));
      },
      "failed to deserialize base");
  expect_metadata_error(
      [] {
        (void)tg::global_metadata::from_cbor(value::make_map({{"_reserved_", "x"}}));
      },
      "failed to deserialize _reserved_");
  expect_metadata_error(
      [] {
        (void)tg::global_metadata::from_cbor(value::make_map({{"_extra_", value(cbor::array{})}}));
      },
      "failed to deserialize _extra_");
  cbor::map nontext;
  nontext.push_back({value(5), value(1)});
  expect_metadata_error(
      [&] {
        (void)tg::global_metadata::from_cbor(value::make_map({{"base", value(cbor::array{value(nontext)})}}));
      },
      "failed to deserialize base");
  expect_metadata_error(
      [] {
        (void)tg::global_metadata::from_cbor(
            value::make_map({{"x", 1}, {"_extra_", value::make_map({{"x", 2}})}}));
      },
      "ambiguous metadata: key 'x' appears both at the top level and inside _extra_");
  expect_metadata_error(
      [] {
        (void)tg::global_metadata::from_cbor_bytes(tgtest::B({0x82, 0x01}));
      },
      "failed to parse CBOR");
}

TEST(GlobalMetadata, EmptyMapIsValidAndSectionsOmittedOnEncode) {
  const tg::global_metadata g = tg::global_metadata::from_cbor_bytes(tgtest::B({0xA0}));
  EXPECT_TRUE(g.base.empty());
  EXPECT_EQ(tgtest::to_hex(g.to_cbor_bytes()), "a0");
}

TEST(GlobalMetadata, DuplicateKeysLaterWins) {
  cbor::map entry;
  entry.push_back({value("k"), value(1)});
  entry.push_back({value("k"), value(2)});
  const tg::global_metadata g =
      tg::global_metadata::from_cbor(value::make_map({{"base", value(cbor::array{value(entry)})}}));
  EXPECT_EQ(g.base[0].size(), 1u);
  EXPECT_EQ(g.base[0].find("k")->as_int64(), 2);
}

TEST(MetadataLookup, PathRules) {
  tg::global_metadata g;
  g.base.push_back(
      value::make_map({{"a", value::make_map({{"b", 1}})}, {"_reserved_", value::make_map({{"t", 1}})}}));
  g.base.push_back(value::make_map({{"a", value::make_map({{"c", 2}})}, {"only1", 3}}));
  g.extra = value::make_map({{"a", value::make_map({{"d", 4}})}, {"_reserved_", 5}, {"e", 6}});
  EXPECT_EQ(g.get("a.b")->as_int64(), 1);
  // First hit wins: base[0] has "a" but not "a.c", so base[1] answers.
  EXPECT_EQ(g.get("a.c")->as_int64(), 2);
  EXPECT_EQ(g.get("a.d")->as_int64(), 4);  // falls through to _extra_
  EXPECT_EQ(g.get("only1")->as_int64(), 3);
  EXPECT_EQ(g.get("e")->as_int64(), 6);
  // `_reserved_` never matches in base, but _extra_ is not filtered.
  EXPECT_EQ(g.get("_reserved_")->as_int64(), 5);
  EXPECT_EQ(g.get("_reserved_.t"), nullptr);
  EXPECT_EQ(g.get_at(0, "_reserved_.t"), nullptr);
  EXPECT_EQ(g.get("extra.e")->as_int64(), 6);
  EXPECT_EQ(g.get("_extra_.a.d")->as_int64(), 4);
  EXPECT_EQ(g.get("_extra_.a.b"), nullptr);
  EXPECT_EQ(g.get_at(1, "a.c")->as_int64(), 2);
  EXPECT_EQ(g.get_at(0, "a.c"), nullptr);
  EXPECT_EQ(g.get_at(0, "e"), nullptr);
  EXPECT_EQ(g.get_at(9, "a"), nullptr);
  EXPECT_EQ(g.get(""), nullptr);
  EXPECT_EQ(g.get_at(0, ""), nullptr);
}

TEST(ComputeCommon, Rules) {
  EXPECT_TRUE(tg::compute_common({}).remaining.empty());
  EXPECT_EQ(tg::compute_common({}).common.size(), 0u);
  const double nan = std::bit_cast<double>(0x7FF8000000000001ULL);
  std::vector<value> base = {
      value::make_map({{"same", 1},
                       {"nan", nan},
                       {"zero", 0.0},
                       {"ord", value::make_map({{"a", 1}, {"b", 2}})},
                       {"arr", value(cbor::array{value(1), value(2)})},
                       {"tag", value(cbor::tagged(1, value(5)))},
                       {"int_vs_float", 1},
                       {"_reserved_", 1}}),
      value::make_map({{"same", 1},
                       {"nan", nan},
                       {"zero", -0.0},
                       {"ord", value::make_map({{"b", 2}, {"a", 1}})},
                       {"arr", value(cbor::array{value(1), value(2)})},
                       {"tag", value(cbor::tagged(1, value(5)))},
                       {"int_vs_float", 1.0},
                       {"extra_key", 1},
                       {"_reserved_", 1}}),
  };
  const tg::common_split s = tg::compute_common(base);
  EXPECT_TRUE(s.common.contains("same"));
  EXPECT_TRUE(s.common.contains("nan"));    // identical bit patterns
  EXPECT_FALSE(s.common.contains("zero"));  // 0.0 vs -0.0
  EXPECT_FALSE(s.common.contains("ord"));   // maps compare in stored order
  EXPECT_TRUE(s.common.contains("arr"));
  EXPECT_TRUE(s.common.contains("tag"));
  EXPECT_FALSE(s.common.contains("int_vs_float"));
  EXPECT_FALSE(s.common.contains("_reserved_"));
  EXPECT_FALSE(s.common.contains("extra_key"));  // absent from base[0]
  ASSERT_EQ(s.remaining.size(), 2u);
  EXPECT_EQ(s.remaining[0].size(), 3u);  // zero, ord, int_vs_float
  EXPECT_EQ(s.remaining[1].size(), 4u);  // + extra_key
  EXPECT_FALSE(s.remaining[1].contains("_reserved_"));
  // A single entry: everything but _reserved_ is common.
  const tg::common_split one = tg::compute_common(std::span(base).first(1));
  EXPECT_EQ(one.common.size(), 7u);
  EXPECT_EQ(one.remaining[0].size(), 0u);
}

TEST(MetadataView, DisplayText) {
  EXPECT_EQ(tg::display_text(value("x")), "x");
  EXPECT_EQ(tg::display_text(value(-5)), "-5");
  EXPECT_EQ(tg::display_text(value(0.5)), "0.5");
  EXPECT_EQ(tg::display_text(value(2.0)), "2");
  EXPECT_EQ(tg::display_text(value(true)), "true");
  EXPECT_EQ(tg::display_text(value(nullptr)), "null");
  EXPECT_EQ(tg::display_text(value(cbor::integer{true, ~std::uint64_t{0}})), "-18446744073709551616");
  EXPECT_EQ(tg::display_text(value(cbor::array{value(1), value("a")})), R"([1,"a"])");
}

TEST(MetadataView, DefaultMetadataIsEmpty) {
  const tg::metadata md;
  EXPECT_EQ(md.num_objects(), 0u);
  EXPECT_EQ(md.to_json(), "{}");
  EXPECT_FALSE(md.get("x").has_value());
  EXPECT_FALSE(tg::meta_value().valid());
  EXPECT_EQ(tg::meta_value().size(), 0u);
  EXPECT_TRUE(tg::meta_value().is_null());
}

// Spec 07 D2.2: get/at/value_at give std::optional<meta_value>, key_at
// std::optional<std::string_view>; empty for a miss, never an exception.
TEST(MetaValue, LookupsAreOptional) {
  cbor::map entries;
  entries.push_back({value("a"), value(1)});
  entries.push_back({value(7), value("int key")});
  const value map(entries);
  const value arr(cbor::array{value(10), value(20)});
  const tg::meta_value m(&map);
  const tg::meta_value a(&arr);

  EXPECT_EQ(m.key_at(0), std::optional<std::string_view>("a"));
  EXPECT_FALSE(m.key_at(1).has_value());  // a non-text key
  EXPECT_FALSE(m.key_at(2).has_value());
  ASSERT_TRUE(m.value_at(1).has_value());
  EXPECT_EQ(m.value_at(1)->as_string(), "int key");
  EXPECT_FALSE(m.value_at(2).has_value());
  EXPECT_EQ(m.get("a")->as_int(), 1);
  EXPECT_FALSE(m.get("b").has_value());
  EXPECT_FALSE(m.at(0).has_value());

  EXPECT_EQ(a.at(1)->as_int(), 20);
  EXPECT_FALSE(a.at(2).has_value());
  EXPECT_FALSE(a[2].valid());
  EXPECT_FALSE(a.get("a").has_value());
  EXPECT_FALSE(a.key_at(0).has_value());
  EXPECT_FALSE(a.value_at(0).has_value());

  const tg::meta_value invalid;
  EXPECT_FALSE(invalid.get("a").has_value());
  EXPECT_FALSE(invalid.at(0).has_value());
  EXPECT_FALSE(invalid.key_at(0).has_value());
  EXPECT_FALSE(invalid.value_at(0).has_value());
}

// Spec 07 D2.2: as_bytes() is an owned std::vector<std::uint8_t> (it
// outlives the metadata); bytes_view() borrows the same bytes.
TEST(MetaValue, BytesAreAnOwnedCopy) {
  std::vector<std::uint8_t> copy;
  {
    const value b(cbor::byte_string{std::byte{0x00}, std::byte{0xff}, std::byte{0x7f}});
    const tg::meta_value v(&b);
    ASSERT_TRUE(v.bytes_view().has_value());
    EXPECT_EQ(v.bytes_view()->data(), b.as_bytes()->data());
    copy = v.as_bytes().value();
    EXPECT_NE(static_cast<const void*>(copy.data()), static_cast<const void*>(b.as_bytes()->data()));
  }
  EXPECT_EQ(copy, (std::vector<std::uint8_t>{0x00, 0xff, 0x7f}));
  const value text("not bytes");
  EXPECT_FALSE(tg::meta_value(&text).as_bytes().has_value());
  EXPECT_FALSE(tg::meta_value(&text).bytes_view().has_value());
  EXPECT_FALSE(tg::meta_value().as_bytes().has_value());
}

}  // namespace
