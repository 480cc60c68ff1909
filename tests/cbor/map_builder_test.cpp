// cbor::text_map_builder must build exactly the map repeated value::set
// calls would (spec 02 §1.5: a later duplicate replaces the earlier value in
// place), both while it searches small maps linearly and once it has
// switched to its hash index; and the moving overloads of the metadata and
// descriptor parsers must give what the copying ones give.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "tensogram/cbor/codec.hpp"
#include "tensogram/cbor/value.hpp"
#include "tensogram/message/descriptor.hpp"
#include "tensogram/message/metadata.hpp"

namespace {

namespace cbor = tensogram::cbor;

// The model: value::set, quadratic but obviously right.
cbor::value model_build(const cbor::map& start, const std::vector<std::pair<std::string, int>>& sets) {
  cbor::value m{cbor::map(start)};
  for (const auto& [k, v] : sets) m.set(k, cbor::value(cbor::integer{false, static_cast<std::uint64_t>(v)}));
  return m;
}

cbor::value builder_build(const cbor::map& start, const std::vector<std::pair<std::string, int>>& sets,
                          std::vector<bool>* contains_before = nullptr) {
  cbor::text_map_builder b{cbor::map(start)};
  for (const auto& [k, v] : sets) {
    if (contains_before != nullptr) contains_before->push_back(b.contains(k));
    b.set(k, cbor::value(cbor::integer{false, static_cast<std::uint64_t>(v)}));
  }
  return b.take();
}

TEST(TextMapBuilder, MatchesRepeatedSetAcrossTheIndexThreshold) {
  std::mt19937 rng(7);
  // Up to 64 distinct keys: the builder crosses from linear search to its
  // index (above 16 entries) part-way through many of these runs.
  for (int run = 0; run < 400; ++run) {
    const int distinct = 1 + static_cast<int>(rng() % 64);
    const int count = static_cast<int>(rng() % 120);
    cbor::map start;
    const int start_len = static_cast<int>(rng() % 24);
    for (int i = 0; i < start_len; ++i) {
      // Starting maps may repeat a key and hold non-text keys, as a decoded
      // map can; value::find (and the builder) then use the last text match.
      cbor::value key = (rng() % 7 == 0) ? cbor::value(cbor::integer{false, rng() % 5})
                                         : cbor::value("k" + std::to_string(rng() % distinct));
      start.push_back(cbor::map_entry{std::move(key), cbor::value(cbor::integer{true, 0})});
    }
    std::vector<std::pair<std::string, int>> sets;
    for (int i = 0; i < count; ++i) sets.emplace_back("k" + std::to_string(rng() % distinct), i);

    const cbor::value want = model_build(start, sets);
    std::vector<bool> contains_before;
    const cbor::value got = builder_build(start, sets, &contains_before);
    ASSERT_EQ(got, want) << "run " << run;

    // contains() agrees with the model's find() before each set.
    cbor::value model{cbor::map(start)};
    for (std::size_t i = 0; i < sets.size(); ++i) {
      ASSERT_EQ(contains_before[i], model.find(sets[i].first) != nullptr) << "run " << run << " set " << i;
      model.set(sets[i].first, cbor::value(cbor::integer{false, static_cast<std::uint64_t>(sets[i].second)}));
    }
  }
}

TEST(TextMapBuilder, TakeLeavesAnEmptyReusableBuilder) {
  cbor::text_map_builder b;
  for (int i = 0; i < 40; ++i) b.set("key" + std::to_string(i), cbor::value(true));
  EXPECT_EQ(b.take().size(), 40U);
  EXPECT_FALSE(b.contains("key3"));
  b.set("key3", cbor::value(false));
  b.set("key3", cbor::value(true));
  const cbor::value again = b.take();
  ASSERT_EQ(again.size(), 1U);
  EXPECT_EQ(*again.find("key3"), cbor::value(true));
}

// A metadata map with every section, duplicates inside sections and free
// top-level keys; moving and copying parses must agree.
TEST(MetadataParse, MovingAndCopyingParsesAgree) {
  for (int keys : {1, 5, 16, 17, 40}) {
    cbor::map base_entry;
    for (int i = 0; i < keys; ++i) {
      base_entry.push_back(
          {cbor::value("p" + std::to_string(i % (keys / 2 + 1))), cbor::value("v" + std::to_string(i))});
    }
    cbor::value top = cbor::value::make_map();
    top.set("base", cbor::value(cbor::array{cbor::value(base_entry), cbor::value(base_entry)}));
    top.set("_extra_", cbor::value(cbor::map(base_entry)));
    top.set("free", cbor::value(3.5));
    top.set("_reserved_", cbor::value(cbor::map{{cbor::value("encoder"), cbor::value("x")}}));
    const std::vector<std::byte> bytes = cbor::encode(top);

    const tensogram::global_metadata copied = tensogram::global_metadata::from_cbor(top);
    const tensogram::global_metadata moved = tensogram::global_metadata::from_cbor(cbor::value(top));
    const tensogram::global_metadata from_bytes = tensogram::global_metadata::from_cbor_bytes(bytes);
    EXPECT_EQ(copied.to_cbor(), moved.to_cbor()) << keys;
    EXPECT_EQ(copied.to_cbor(), from_bytes.to_cbor()) << keys;
    // Duplicates collapsed to their last value.
    ASSERT_EQ(copied.base.size(), 2U);
    EXPECT_EQ(copied.base[0].size(), static_cast<std::size_t>(keys / 2 + 1)) << keys;
    const cbor::value* last_p0 = nullptr;
    for (const cbor::map_entry& e : base_entry) {
      if (*e.key.as_text() == "p0") last_p0 = &e.val;
    }
    ASSERT_NE(last_p0, nullptr);
    EXPECT_EQ(*copied.base[0].find("p0"), *last_p0) << keys;
    EXPECT_NE(copied.extra.find("free"), nullptr);
  }
}

TEST(DescriptorParse, MovingAndCopyingParsesAgree) {
  cbor::value d = cbor::value::make_map();
  d.set("type", cbor::value("ntensor"));
  d.set("ndim", cbor::value(cbor::integer{false, 1}));
  d.set("shape", cbor::value(cbor::array{cbor::value(cbor::integer{false, 4})}));
  d.set("strides", cbor::value(cbor::array{cbor::value(cbor::integer{false, 1})}));
  d.set("dtype", cbor::value("float32"));
  d.set("encoding", cbor::value("none"));
  d.set("filter", cbor::value("none"));
  d.set("compression", cbor::value("none"));
  for (int i = 0; i < 20; ++i)
    d.set("param" + std::to_string(i), cbor::value(cbor::integer{false, static_cast<std::uint64_t>(i)}));
  const tensogram::data_object_descriptor copied = tensogram::data_object_descriptor::from_cbor(d);
  const tensogram::data_object_descriptor moved =
      tensogram::data_object_descriptor::from_cbor(cbor::value(d));
  EXPECT_EQ(copied, moved);
  EXPECT_EQ(copied.params.size(), 20U);
  EXPECT_EQ(*copied.params.find("param19"), cbor::value(cbor::integer{false, 19}));
}

}  // namespace
