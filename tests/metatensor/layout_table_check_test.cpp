// The fast paths of §8.2 step 4 (src/metatensor/view/layout_table_check.hpp)
// against the JSON comparison they stand for: the canonical text matcher
// accepts exactly what this library's writer renders (nlohmann's `dump()`
// of `layout_table_json`) and nothing else; the simdjson comparison accepts
// any spelling of an equal table. Neither accepts an unequal one.
#include <gtest/gtest.h>

#include <metatensor.hpp>
#include <random>
#include <string>
#include <vector>

#include "src/metatensor/strict_json.hpp"
#include "src/metatensor/view/layout_table_check.hpp"

namespace mt = metatensor;
using json = nlohmann::json;
using named_layout = mt::detail::layout_table_dom::named_layout;

namespace {

// Flat tensors whose names exercise what `dump()` writes verbatim ('/',
// '~', non-ASCII) and what it escapes (quote, backslash, control).
const std::string schema_text = R"({"type":"object","properties":{
  "a/b~c":{"type":"array","items":{"type":"number","TypeDef:Float32":true}},
  "plain":{"type":"array","minItems":2,"items":{"type":"array","items":{"type":"integer","TypeDef:Int64":true}}},
  "scalar":{"type":"boolean","TypeDef:Bool":true},
  "z\u00e9ta":{"type":"array","items":{"type":"number","TypeDef:Float16":true}},
  "q\"uote":{"type":"array","items":{"type":"number","TypeDef:Float64":true}},
  "back\\slash":{"type":"array","items":{"type":"number","TypeDef:Float64":true}},
  "tab\tname":{"type":"array","items":{"type":"number","TypeDef:Float64":true}}}})";

std::vector<named_layout> layouts_of(const mt::compiled_schema& s, const std::vector<std::string>& names) {
  std::vector<named_layout> out;
  for (const auto& n : names) out.emplace_back(s.find(n)->name, s.find(n));
  return out;
}

bool dom_equals(const std::string& text, std::span<const named_layout> present, std::uint64_t a) {
  const auto dom = mt::detail::layout_table_dom::read(text);
  return dom != nullptr && dom->equals(present, a);
}

bool tokens_equal(const std::string& text, std::span<const named_layout> present, std::uint64_t a) {
  return mt::detail::flat_layout_tokens_equal(text, 0, present, a);
}

// True when `text` is strict JSON (the reference parse) equal to `table`.
bool strictly_equal(const std::string& text, const json& table) {
  try {
    return mt::parse_strict_json_reference(text, {mt::errc::mt_layout_json, mt::errc::mt_layout_json, "t"}) ==
           table;
  } catch (const mt::error&) {
    return false;
  }
}

}  // namespace

TEST(CanonicalLayoutText, AcceptsWhatTheWriterRenders) {
  const auto schema = mt::compile_schema_text(schema_text);
  // Names dump() writes verbatim, in table (byte) order.
  const std::vector<std::string> names{"a/b~c", "plain", "scalar", "z\xc3\xa9ta"};
  const auto present = layouts_of(schema, names);
  for (const std::uint64_t a : {16U, 64U, 65536U}) {
    const std::string text = mt::layout_table_json(schema, names, a).dump();
    EXPECT_TRUE(mt::detail::canonical_layout_text_equals(text, present, a)) << text;
    EXPECT_TRUE(dom_equals(text, present, a)) << text;
    EXPECT_TRUE(tokens_equal(text, present, a)) << text;
    EXPECT_FALSE(tokens_equal(text, present, a == 16 ? 32 : 16)) << text;
    // Another alignment renders another table.
    EXPECT_FALSE(mt::detail::canonical_layout_text_equals(text, present, a == 16 ? 32 : 16));
  }
  EXPECT_TRUE(mt::detail::canonical_layout_text_equals(R"({"tensors":{}})", {}, 16));
  EXPECT_FALSE(mt::detail::canonical_layout_text_equals(R"({"tensors":{}} )", {}, 16));
  EXPECT_FALSE(mt::detail::canonical_layout_text_equals(R"({ "tensors":{}})", {}, 16));
}

TEST(CanonicalLayoutText, OtherSpellingsOfAnEqualTableGoToTheParse) {
  const auto schema = mt::compile_schema_text(schema_text);
  const std::vector<std::string> names{"a/b~c", "plain"};
  const auto present = layouts_of(schema, names);
  const json table = mt::layout_table_json(schema, names, 16);
  const std::string canonical = table.dump();
  ASSERT_TRUE(mt::detail::canonical_layout_text_equals(canonical, present, 16));
  // Equal as JSON, spelled otherwise: the matcher declines, the parse
  // accepts.
  std::vector<std::string> spellings{
      table.dump(1),  // whitespace
      R"({"tensors":{"a/b~c":{"kind":"flat","data":"a/b~c","rank":1,"align":16,"dtype":"F32"},)"
      R"("plain":{"kind":"flat","data":"plain","rank":2,"align":16,"dtype":"I64"}}})",  // member order
      R"({"tensors":{"a\/b~c":{"align":16,"data":"a/b~c","dtype":"F32","kind":"flat","rank":1},)"
      R"("plain":{"align":16,"data":"plain","dtype":"I64","kind":"flat","rank":2}}})",  // an escape
  };
  for (const auto& text : spellings) {
    ASSERT_EQ(json::parse(text), table) << text;
    EXPECT_FALSE(mt::detail::canonical_layout_text_equals(text, present, 16)) << text;
    EXPECT_TRUE(dom_equals(text, present, 16)) << text;
    EXPECT_TRUE(tokens_equal(text, present, 16)) << text;
  }
  // Names that dump() escapes are left to the parse; the token walk undoes
  // the escapes.
  for (const std::string name : {"q\"uote", "back\\slash", "tab\tname"}) {
    const std::vector<std::string> one{name};
    const auto p = layouts_of(schema, one);
    const std::string text = mt::layout_table_json(schema, one, 16).dump();
    EXPECT_FALSE(mt::detail::canonical_layout_text_equals(text, p, 16)) << text;
    EXPECT_TRUE(dom_equals(text, p, 16)) << text;
    EXPECT_TRUE(tokens_equal(text, p, 16)) << text;
  }
  // Spellings of equal integers other than §2 rule 7's go to the parse.
  const std::string float_rank =
      R"({"tensors":{"a/b~c":{"align":16,"data":"a/b~c","dtype":"F32","kind":"flat","rank":1.0},)"
      R"("plain":{"align":16,"data":"plain","dtype":"I64","kind":"flat","rank":2}}})";
  EXPECT_FALSE(tokens_equal(float_rank, present, 16));
  EXPECT_TRUE(dom_equals(float_rank, present, 16));
}

TEST(CanonicalLayoutText, NeverAcceptsAnUnequalTable) {
  const auto schema = mt::compile_schema_text(schema_text);
  const std::vector<std::string> names{"a/b~c", "plain", "scalar"};
  const auto present = layouts_of(schema, names);
  const std::string canonical = mt::layout_table_json(schema, names, 16).dump();
  // A tensor fewer or more than the table has.
  EXPECT_FALSE(mt::detail::canonical_layout_text_equals(canonical,
                                                        std::span<const named_layout>(present).first(2), 16));
  auto more = present;
  more.emplace_back(schema.find("z\xc3\xa9ta")->name, schema.find("z\xc3\xa9ta"));
  EXPECT_FALSE(mt::detail::canonical_layout_text_equals(canonical, more, 16));
  // Every one-byte change, every truncation and every insertion: whatever
  // the matcher accepts must be the canonical text itself.
  std::mt19937 rng(20261130);
  std::uniform_int_distribution<int> byte(0, 255);
  for (std::size_t i = 0; i <= canonical.size(); ++i) {
    if (i < canonical.size()) {
      std::string changed = canonical;
      changed[i] = static_cast<char>(changed[i] == 'x' ? 'y' : changed[i] + 1);
      EXPECT_FALSE(mt::detail::canonical_layout_text_equals(changed, present, 16)) << changed;
      EXPECT_FALSE(mt::detail::canonical_layout_text_equals(canonical.substr(0, i), present, 16));
    }
    std::string inserted = canonical;
    inserted.insert(i, 1, static_cast<char>(byte(rng)));
    EXPECT_FALSE(mt::detail::canonical_layout_text_equals(inserted, present, 16)) << inserted;
  }
}

// The token walk over tables of flat tensors: whatever it accepts is strict
// JSON equal to the recomputed table, however it is spelled.
TEST(FlatLayoutTokens, NeverAcceptsAnUnequalTable) {
  const auto schema = mt::compile_schema_text(schema_text);
  const std::vector<std::string> names{"a/b~c", "plain", "scalar"};
  const auto present = layouts_of(schema, names);
  const json table = mt::layout_table_json(schema, names, 16);
  const std::string spaced = table.dump(1);
  ASSERT_TRUE(tokens_equal(spaced, present, 16));
  EXPECT_FALSE(tokens_equal(spaced, std::span<const named_layout>(present).first(2), 16));
  const std::vector<std::string> declined{
      spaced + " x",
      spaced + "{}",
      R"({"tensors":{"a/b~c":{"align":16,"data":"a/b~c","dtype":"F32","kind":"flat","rank":1,"rank":1}}})",
      R"({"tensors":{"a/b~c":{"align":16,"data":"a/b~c","dtype":"F32","kind":"flat"}}})",
      R"({"tensors":{"a/b~c":{"align":16,"data":"a/b~c","dtype":"F32","kind":"flat","rank":1,"heap":"x"}}})",
      R"({"tensors":{"a/b~c":{"align":16,"data":"a/b~c","dtype":"F32","kind":"flat","rank":01}}})",
      R"({"tensors":{"a/b~c":{"align":16,"data":"a/b~c","dtype":"F32","kind":"flat","rank":"1"}}})",
      R"({"tensors":{"a/b~c":{"align":16,"data":"a/b~c","dtype":"F32","kind":"flat","rank":1}},"x":1})",
      R"({"tensors":{"a/b~c":{"align":16,"data":"a/b~c","dtype":"F32","kind":"flat","rank":1},}})",
      R"({"tensors":{"a/b~c":{"align":16,"data":"a/b\c","dtype":"F32","kind":"flat","rank":1}}})",
  };
  const auto one = std::span<const named_layout>(present).first(1);
  for (const auto& text : declined) EXPECT_FALSE(tokens_equal(text, one, 16)) << text;
  // Every one-byte change, truncation and insertion of a spaced rendering.
  std::mt19937 rng(20261203);
  std::uniform_int_distribution<int> byte(0, 255);
  const std::string alphabet = " \t\n{}[]:,\"\\0123456789.e-u";
  for (std::size_t i = 0; i <= spaced.size(); ++i) {
    std::vector<std::string> variants;
    if (i < spaced.size()) {
      std::string changed = spaced;
      changed[i] = alphabet[static_cast<std::size_t>(byte(rng)) % alphabet.size()];
      variants.push_back(changed);
      variants.push_back(spaced.substr(0, i));
    }
    std::string inserted = spaced;
    inserted.insert(i, 1, alphabet[static_cast<std::size_t>(byte(rng)) % alphabet.size()]);
    variants.push_back(inserted);
    for (const auto& v : variants) {
      if (tokens_equal(v, present, 16)) {
        EXPECT_TRUE(strictly_equal(v, table)) << v;
      }
    }
  }
}

TEST(CanonicalLayoutText, RecordsAndBlobsGoToTheParse) {
  const auto schema = mt::compile_schema_text(R"({"type":"object","properties":{
    "labels":{"type":"array","items":{"type":"string","TypeDef:String":true}},
    "points":{"type":"array","items":{"type":"object","TypeDef:Struct":true,"required":["x"],
      "properties":{"x":{"type":"number","TypeDef:Float32":true}}}}}})");
  for (const std::string name : {"labels", "points"}) {
    const std::vector<std::string> one{name};
    const auto p = layouts_of(schema, one);
    const std::string text = mt::layout_table_json(schema, one, 16).dump();
    EXPECT_FALSE(mt::detail::canonical_layout_text_equals(text, p, 16)) << text;
    EXPECT_FALSE(tokens_equal(text, p, 16)) << text;
    EXPECT_TRUE(dom_equals(text, p, 16)) << text;
  }
}
