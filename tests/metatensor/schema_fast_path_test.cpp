// The fast path of compiling a file's schema (src/metatensor/schema/
// schema_fast_path.hpp) against `compile_schema` (the reference): whenever
// the fast path accepts a text, the reference accepts it too and compiles
// the same layouts, required set, document and property schemas; and the
// fast path does accept the flat schemas it is built for.
#include <gtest/gtest.h>

#include <cstdint>
#include <metatensor.hpp>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "src/metatensor/schema/schema_fast_path.hpp"

namespace mt = metatensor;
using json = nlohmann::json;

namespace {

void expect_same_layout(const mt::tensor_layout& a, const mt::tensor_layout& b) {
  EXPECT_EQ(a.name, b.name);
  EXPECT_EQ(a.kind, b.kind) << a.name;
  EXPECT_EQ(a.flat_dtype, b.flat_dtype) << a.name;
  EXPECT_EQ(a.has_heap, b.has_heap) << a.name;
  EXPECT_EQ(a.root_align, b.root_align) << a.name;
  EXPECT_EQ(a.required, b.required) << a.name;
  EXPECT_EQ(a.node_pointers, b.node_pointers) << a.name;  // both implicit
  EXPECT_EQ(a.record, nullptr) << a.name;
  EXPECT_EQ(b.record, nullptr) << b.name;
  ASSERT_EQ(a.rank(), b.rank()) << a.name;
  for (std::size_t i = 0; i < a.rank(); ++i) {
    EXPECT_EQ(a.dims[i].min, b.dims[i].min) << a.name << " dim " << i;
    EXPECT_EQ(a.dims[i].max, b.dims[i].max) << a.name << " dim " << i;
  }
  for (std::size_t level = 0; level <= a.rank(); ++level) {
    EXPECT_EQ(a.node_pointer(level), b.node_pointer(level)) << a.name << " level " << level;
  }
}

// True when the fast path accepted `text`; then the reference must agree.
bool check(const std::string& text) {
  const auto fast = mt::detail::schema_fast_path::compile_embedded(text);
  if (!fast) return false;
  std::optional<mt::compiled_schema> ref;
  try {
    ref = mt::compile_schema_text(text, mt::schema_source::embedded);
  } catch (const mt::error& e) {
    ADD_FAILURE() << "fast path accepted what the reference refuses (" << e.what() << "): " << text;
    return true;
  }
  // The same table in the same (name) order.
  if (fast->tensors().size() != ref->tensors().size()) {
    ADD_FAILURE() << fast->tensors().size() << " tensors, the reference has " << ref->tensors().size()
                  << " in " << text;
    return true;
  }
  for (std::size_t i = 0; i < ref->tensors().size(); ++i) {
    const auto& layout = ref->tensors()[i];
    const auto& mine = fast->tensors()[i];
    if (mine.name != layout.name) {
      ADD_FAILURE() << "tensor " << i << " is " << mine.name << ", the reference has " << layout.name
                    << " in " << text;
      continue;
    }
    EXPECT_EQ(fast->find(layout.name), &mine) << text;
    expect_same_layout(mine, layout);
  }
  // The deferred document is the reference's, and so is everything built on it.
  EXPECT_EQ(fast->document(), ref->document()) << text;
  for (const auto& t : ref->tensors()) {
    EXPECT_EQ(fast->property_schema(t.name), ref->property_schema(t.name)) << text;
  }
  EXPECT_EQ(fast->document_table()->size(), ref->document_table()->size()) << text;
  return true;
}

const std::string flat_schema = R"({"$schema":"https://json-schema.org/draft/2020-12/schema",)"
                                R"("title":"weights","type":"object","additionalProperties":false,)"
                                R"("required":["a/b","w"],"properties":{)"
                                R"("a/b":{"type":"array","minItems":2,"maxItems":9,"items":)"
                                R"({"items":{"type":"integer","TypeDef:Int16":true},"maxItems":4}},)"
                                R"("flag":{"type":"boolean","TypeDef:Bool":true,"description":"rank 0"},)"
                                R"("h~1":{"type":"array","items":{"TypeDef:Float8E4M3":true}},)"
                                R"("q":{"type":"array","items":{"type":"number","TypeDef:Float4E2M1":true}},)"
                                R"("w":{"type":"array","items":{"type":"number","TypeDef:Float32":true}},)"
                                R"("z":{"type":"array","items":{"type":"array","TypeDef:Complex64":true}}}})";

TEST(SchemaFastPath, CompilesFlatSchemasAsTheReference) {
  std::vector<std::string> accepted = {
      flat_schema,
      R"({"type":"object","properties":{}})",
      R"({"properties":{"x":{"TypeDef:Uint64":true}},"type":"object","required":[]})",
      R"({"type":"object","properties":{"x":{"type":"array","items":{"type":"array","items":{"type":"array",)"
      R"("items":{"type":"array","items":{"TypeDef:Float64":true}}}}}}})",
  };
  // A 200-tensor schema with names out of order.
  std::string many = R"({"type":"object","properties":{)";
  for (int i = 199; i >= 0; --i) {
    many += "\"t" + std::to_string(i) + R"(":{"type":"array","items":{"TypeDef:BFloat16":true}})";
    many += i == 0 ? "}}" : ",";
  }
  accepted.push_back(many);
  for (const auto& text : accepted) EXPECT_TRUE(check(text)) << text;
}

// A file's schema compiled by the fast path shares its text with the file's
// `__metadata__` (no copy at open) and builds its document from it later,
// after the file is gone.
TEST(SchemaFastPath, AFileSchemaOutlivesItsFile) {
  const std::string schema =
      R"({"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object",)"
      R"("properties":{"w":{"type":"array","items":{"type":"number","TypeDef:Float32":true}}}})";
  mt::file_builder b(mt::compile_schema_text(schema));
  const float w[3] = {1.0f, 2.0f, 3.0f};
  b.set_flat("w", std::vector<std::uint64_t>{3}, std::span<const float>(w));
  const auto bytes = b.serialize();
  std::optional<mt::compiled_schema> kept;
  {
    const auto f = mt::file::from_buffer(tensogram::buffer::owned(bytes));
    const auto text = f.base().metadata_value("metatensor.schema");
    ASSERT_NE(text, nullptr);
    // The fast path's schema holds the file's string: one more owner.
    EXPECT_GE(text.use_count(), 3) << "the compiled schema copied the text";
    kept = f.schema();
  }
  EXPECT_EQ(kept->document(), nlohmann::json::parse(schema));
  ASSERT_NE(kept->find("w"), nullptr);
}

TEST(SchemaFastPath, LeavesEverythingElseToTheReference) {
  const char* declined[] = {
      // refused by the reference
      R"({"type":"object","properties":{"__x":{"TypeDef:Float32":true}}})",
      R"({"type":"object","properties":{"a#b":{"TypeDef:Float32":true}}})",
      R"({"type":"object","properties":{"":{"TypeDef:Float32":true}}})",
      R"({"type":"object","properties":{"x":{"TypeDef:Float32":false}}})",
      R"({"type":"object","properties":{"x":{"TypeDef:Float33":true}}})",
      R"({"type":"object","properties":{"x":{"TypeDef:Float32":true,"TypeDef:Int8":true}}})",
      R"({"type":"object","properties":{"x":{"type":"string","TypeDef:Float32":true}}})",
      R"({"type":"object","properties":{"x":{"type":"array","items":[{"TypeDef:Float32":true}]}}})",
      R"({"type":"object","properties":{"x":{"type":"object","items":{"TypeDef:Float32":true}}}})",
      R"({"type":"object","properties":{"x":{"items":{"TypeDef:Float32":true},"TypeDef:Float32":true}}})",
      R"({"type":"object","properties":{"x":{"type":"array","minItems":-1,"items":{"TypeDef:U8":true}}}})",
      R"({"type":"object","properties":{"x":{"TypeDef:Float32":true}},"additionalProperties":true})",
      R"({"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{}})",
      R"({"type":"object","properties":{},"required":["x"]})",
      R"({"type":"object","properties":{"x":{"TypeDef:Float32":true}},"required":[1]})",
      R"({"type":"object","properties":{"x":{"TypeDef:Float32":true},"x":{"TypeDef:Float32":true}}})",
      R"({"type":"object","properties":{"x":{"type":"array","maxItems":9007199254740992,"items":{}}}})",
      R"({"type":"array","properties":{}})",
      R"({"properties":{}})",
      R"({"type":"object"})",
      R"([])",
      // accepted by the reference, outside the fast grammar
      R"({"type":"object","properties":{"x":{"type":"array","minItems":1.0,"items":{"TypeDef:Int8":true}}}})",
      R"({"type":"object","properties":{"x":{"TypeDef:Float32":true,"TypeDef:Align":64}}})",
      R"({"type":"object","properties":{"x":{"$ref":"#/$defs/f"}},"$defs":{"f":{"TypeDef:Float32":true}}})",
      R"({"type":"object","properties":{"x":{"type":"array","items":{"TypeDef:Float32":true,"minimum":0}}}})",
      R"({"type":"object","properties":{"x":{"type":["array"],"items":{"TypeDef:Float32":true}}}})",
      R"({"type":"object","properties":{"s":{"type":"string","TypeDef:String":true}}})",
  };
  for (const char* text : declined) EXPECT_FALSE(check(text)) << text;
  // Rank 9 and above is the reference's to judge (its limit is 32, §8.4).
  std::string deep = R"({"TypeDef:Float32":true})";
  for (int i = 0; i < 9; ++i) deep = R"({"type":"array","items":)" + deep + "}";
  EXPECT_FALSE(check(R"({"type":"object","properties":{"x":)" + deep + "}}"));
}

// The fast path reads the text's tokens (simdjson's stage 1), not a parse:
// JSON's grammar, escapes, duplicate keys and trailing bytes are its own
// walk's to check. What it accepts, the reference compiles the same.
TEST(SchemaFastPath, ReadsTokensAsStrictJson) {
  const std::string leaf = R"({"TypeDef:Float32":true})";
  const auto with_x = [](const std::string& node) {
    return R"({"type":"object","properties":{"x":)" + node + "}}";
  };
  const std::vector<std::string> accepted = {
      // JSON whitespace between any two tokens
      " {\n\t\"type\" : \"object\" ,\r\n \"properties\" : { \"x\" : { \"items\" : { \"TypeDef:Float32\" : "
      "true } , \"type\" : \"array\" , \"minItems\" : 2 } } , \"required\" : [ \"x\" ] } \n",
      // `required` before `properties`; members in any order, bounds after `items`
      R"({"required":["x"],"properties":{"x":{"items":)" + leaf +
          R"(,"maxItems":3,"type":"array","minItems":0}},"type":"object"})",
      // escaped keys, names and values, undone before they are compared
      R"({"type":"object","properties":{"caf\u00e9":{"\u0074ype":"\u0061rray","items":)" + leaf +
          R"(}},"required":["caf\u00e9"]})",
      // annotations with every kind of escape, a surrogate pair among them
      R"({"title":"a \"b\" \\ \/ \b\f\n\r\t \ud83d\ude00","type":"object","properties":{"x":{"description":"\u00e9","items":)" +
          leaf + "}}}",
      with_x(R"({"type":"array","minItems":9007199254740991,"items":)" + leaf + "}"),
  };
  for (const auto& text : accepted) EXPECT_TRUE(check(text)) << text;
  // A text whose capacity leaves simdjson's padding after it is read in place.
  std::string padded = accepted[1];
  padded.reserve(padded.size() + 256);
  ASSERT_TRUE(mt::detail::schema_fast_path::compile_embedded(padded, padded.capacity()));

  const std::vector<std::string> declined = {
      // duplicate keys in a node and at the root
      with_x(R"({"type":"array","type":"array","items":)" + leaf + "}"),
      with_x(R"({"items":)" + leaf + R"(,"items":)" + leaf + "}"),
      with_x(R"({"minItems":1,"minItems":2,"items":)" + leaf + "}"),
      with_x(R"({"maxItems":1,"items":)" + leaf + R"(,"maxItems":2})"),
      with_x(R"({"title":"a","title":"b","TypeDef:Float32":true})"),
      with_x(R"({"TypeDef:Float32":true,"TypeDef:Float32":true})"),
      R"({"type":"object","type":"object","properties":{}})",
      R"({"type":"object","properties":{},"properties":{}})",
      R"({"type":"object","properties":{"x":)" + leaf + R"(,"\u0078":)" + leaf + "}}",
      // invalid escapes and names that are refused once undone
      R"({"title":"\x","type":"object","properties":{}})",
      R"({"title":"\ud800","type":"object","properties":{}})",
      R"({"type":"object","properties":{"\u005f_x":)" + leaf + "}}",
      // the grammar of JSON
      R"({"type" "object","properties":{}})",
      R"({"type":"object" "properties":{}})",
      R"({"type":"object","properties":{},})",
      R"({"type":"object","properties":{"x":)" + leaf + ",}}",
      with_x(R"({"TypeDef:Float32":tru})"),
      with_x(R"({"TypeDef:Float32":truex})"),
      with_x(R"({"TypeDef:Float32":True})"),
      with_x(R"({"TypeDef:Float32":"true"})"),
      with_x("{}"),
      with_x(R"({"type":"array","items":[)" + leaf + "]}"),
      R"({"type":"object","properties":{}})" + std::string(" x"),
      R"({"type":"object","properties":{}}{})",
      R"({"type":"object","properties":{}})" + std::string(1, '\0'),
      "\xEF\xBB\xBF" + std::string(R"({"type":"object","properties":{}})"),
      R"({"type":"object","properties":{"x")",
      R"({"type":"object","properties":{"x":{"TypeDef:Float32":true}})",
      // integers beyond §2 rule 7's, and numbers the reference reads as floats
      with_x(R"({"type":"array","minItems":01,"items":)" + leaf + "}"),
      with_x(R"({"type":"array","minItems":-0,"items":)" + leaf + "}"),
      with_x(R"({"type":"array","minItems":1e2,"items":)" + leaf + "}"),
      with_x(R"({"type":"array","minItems":+1,"items":)" + leaf + "}"),
      with_x(R"({"type":"array","minItems":9007199254740992,"items":)" + leaf + "}"),
      with_x(R"({"type":"array","minItems":"1","items":)" + leaf + "}"),
      // control characters in strings, invalid UTF-8 in a name
      R"({"title":")" + std::string(1, '\0') + R"(","type":"object","properties":{}})",
      R"({"type":"object","properties":{"a)" + std::string(1, '\x01') + R"(":)" + leaf + "}}",
      R"({"type":"object","properties":{")" + std::string("\xC3\x28") + R"(":)" + leaf + "}}",
  };
  for (const auto& text : declined) EXPECT_FALSE(check(text)) << text;
}

// Random edits of a valid schema: whatever the fast path accepts, the
// reference accepts with the same layouts.
TEST(SchemaFastPath, MutationsAgreeWithReference) {
  std::mt19937 rng(27);
  const std::string alphabet = "{}[],:\"\\-.0123456789e_#~/ aAtrufalsnbjcyiTFI";
  const std::vector<std::string> tokens = {R"("TypeDef:Float32":true,)",
                                           R"("type":"array",)",
                                           R"("items":{},)",
                                           R"("minItems":3,)",
                                           R"("title":"t",)",
                                           R"("$ref":"#",)",
                                           R"("TypeDef:Struct":true,)",
                                           R"("__pad__0":{},)",
                                           R"("required":["w"],)",
                                           R"("x":{"TypeDef:Bool":true},)"};
  int accepted = 0;
  for (int iter = 0; iter < 50000; ++iter) {
    std::string t = flat_schema;
    const int edits = 1 + static_cast<int>(rng() % 3);
    for (int e = 0; e < edits && !t.empty(); ++e) {
      const std::size_t pos = rng() % t.size();
      switch (rng() % 4) {
        case 0: t[pos] = alphabet[rng() % alphabet.size()]; break;
        case 1: t.erase(pos, 1 + rng() % 8); break;
        case 2: t.insert(pos, 1, alphabet[rng() % alphabet.size()]); break;
        default: {
          // After an opening brace, a whole member.
          const std::size_t brace = t.find('{', pos);
          if (brace != std::string::npos) t.insert(brace + 1, tokens[rng() % tokens.size()]);
        }
      }
    }
    accepted += check(t) ? 1 : 0;
  }
  // Many mutants stay in the grammar, so both sides are exercised.
  EXPECT_GT(accepted, 100);
}

}  // namespace
