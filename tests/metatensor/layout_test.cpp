// The schema dialect compiler and the layout table (spec 06 §4, §5, §6.1–§6.5, §7, §8.4).
#include <gtest/gtest.h>

#include <memory>
#include <metatensor/layout.hpp>
#include <optional>
#include <set>
#include <string>
#include <tensogram/core/error.hpp>
#include <vector>

#include "spec_files.hpp"
#include "src/metatensor/schema/layout_table.hpp"

namespace mt = metatensor;
using json = nlohmann::json;
using mt::dtype;
using mt::errc;

namespace {

// "<prefix><i>" built by appending: GCC 12 -O3 reports a false -Wrestrict for
// "literal" + std::string (GCC bug 105329).
template <class Int>
std::string numbered(const char* prefix, Int i) {
  std::string out = prefix;
  out += std::to_string(i);
  return out;
}

// A root schema around `properties` (and optional `$defs`) JSON text.
std::string root(const std::string& properties, const std::string& defs = "") {
  std::string s = R"({"type":"object","properties":{)" + properties + "}";
  if (!defs.empty()) s += R"(,"$defs":{)" + defs + "}";
  return s + "}";
}

// A struct node with fields `names[i]` of schema `types[i]`, required in that order.
std::string struct_of(const std::vector<std::pair<std::string, std::string>>& fields,
                      const std::string& extra = "") {
  std::string props;
  std::string req;
  for (const auto& [n, t] : fields) {
    if (!props.empty()) props += ',';
    if (!req.empty()) req += ',';
    props += '"' + n + "\":" + t;
    req += '"' + n + '"';
  }
  return R"({"type":"object","TypeDef:Struct":)" + (extra.empty() ? std::string("true") : extra) +
         R"(,"properties":{)" + props + R"(},"required":[)" + req + "]}";
}

std::string scalar(const std::string& kw, const std::string& type = "number") {
  return R"({"type":")" + type + R"(","TypeDef:)" + kw + R"(":true})";
}

std::string array_of(const std::string& items) {
  return R"({"type":"array","items":)" + items + "}";
}

std::string fixed(std::uint64_t n, const std::string& items) {
  return R"({"type":"array","minItems":)" + std::to_string(n) + R"(,"maxItems":)" + std::to_string(n) +
         R"(,"items":)" + items + "}";
}

const std::string u8 = scalar("Uint8", "integer");
const std::string u32 = scalar("Uint32", "integer");
const std::string f32 = scalar("Float32");
const std::string f64 = scalar("Float64");
const std::string str = R"({"type":"string","TypeDef:String":true})";

std::string list_of(const std::string& items) {
  return R"({"type":"array","TypeDef:List":true,"items":)" + items + "}";
}

// Expects compilation of `text` to fail with `code`, and the message to name `where` if given.
// The dialect as a file's embedded schema must follow it (§4, no builder
// forms rewritten: typebox_dialect_test.cpp covers those).
void expect_error(const std::string& text, errc code, const std::string& where = "") {
  try {
    (void)mt::compile_schema_text(text, mt::schema_source::embedded);
    ADD_FAILURE() << "accepted: " << text;
  } catch (const mt::error& e) {
    EXPECT_EQ(e.kind(), code) << e.what() << "\n  schema: " << text;
    if (!where.empty()) {
      EXPECT_NE(std::string(e.what()).find('"' + where + '"'), std::string::npos) << e.what();
    }
  }
}

// The record of the single tensor `x` of a rank-0 struct property.
std::shared_ptr<const mt::record_layout> record_of(const std::string& struct_schema) {
  const auto s = mt::compile_schema_text(root(R"("x":)" + struct_schema));
  const auto* t = s.find("x");
  EXPECT_NE(t, nullptr);
  EXPECT_EQ(t->kind, mt::tensor_kind::record);
  return t->record;
}

// The names marked required, in table order.
std::vector<std::string> required_names(const mt::compiled_schema& s) {
  std::vector<std::string> out;
  for (const auto& t : s.tensors()) {
    if (t.required) out.push_back(t.name);
  }
  return out;
}

const std::string worked_example = R"({
 "$schema":"https://json-schema.org/draft/2020-12/schema","type":"object",
 "required":["labels","particles","positions"],"additionalProperties":false,
 "$defs":{"Particle":{"type":"object","TypeDef:Struct":true,
   "required":["id","mass","vel","name"],
   "properties":{"name":{"type":"string","TypeDef:String":true},
     "vel":{"type":"array","minItems":3,"maxItems":3,"items":{"type":"number","TypeDef:Float32":true}},
     "mass":{"type":"number","TypeDef:Float64":true,"minimum":0},
     "id":{"type":"integer","TypeDef:Uint32":true}}}},
 "properties":{
   "labels":{"type":"array","items":{"type":"string","TypeDef:String":true}},
   "particles":{"type":"array","items":{"$ref":"#/$defs/Particle"}},
   "positions":{"type":"array","items":{"type":"array","minItems":3,"maxItems":3,
                "items":{"type":"number","TypeDef:Float32":true}}}}})";

}  // namespace

// §6.7 worked example.
TEST(LayoutWorkedExample, ParticleRecord) {
  const auto s = mt::compile_schema_text(worked_example);
  ASSERT_EQ(s.tensors().size(), 3U);
  EXPECT_EQ(required_names(s), (std::vector<std::string>{"labels", "particles", "positions"}));

  const auto* p = s.find("particles");
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->kind, mt::tensor_kind::record);
  EXPECT_EQ(mt::kind_name(p->kind), "struct");
  ASSERT_TRUE(p->record);
  const auto& r = *p->record;
  EXPECT_EQ(r.size, 48U);
  EXPECT_EQ(r.align, 8U);
  EXPECT_FALSE(r.tuple);
  ASSERT_EQ(r.fields.size(), 4U);
  EXPECT_EQ(r.fields[0].name, "id");
  EXPECT_EQ(r.fields[0].offset, 0U);
  EXPECT_EQ(r.fields[0].type.scalar, dtype::u32);
  EXPECT_EQ(r.fields[1].name, "mass");
  EXPECT_EQ(r.fields[1].offset, 8U);
  EXPECT_EQ(r.fields[1].type.scalar, dtype::f64);
  EXPECT_EQ(r.fields[2].name, "vel");
  EXPECT_EQ(r.fields[2].offset, 16U);
  EXPECT_EQ(r.fields[2].type.shape, (std::vector<std::uint64_t>{3}));
  EXPECT_EQ(r.fields[2].type.size, 12U);
  EXPECT_EQ(r.fields[2].type.align, 4U);
  EXPECT_EQ(r.fields[2].type.element_size(), 4U);
  EXPECT_EQ(r.fields[3].name, "name");
  EXPECT_EQ(r.fields[3].offset, 32U);
  EXPECT_EQ(r.fields[3].type.type, mt::value_type::string);
  EXPECT_EQ(r.fields[3].type.size, 16U);
  EXPECT_EQ(r.fields[3].type.align, 8U);
  EXPECT_EQ(r.find("vel"), &r.fields[2]);
  EXPECT_EQ(r.find("nope"), nullptr);
  EXPECT_TRUE(r.has_blobs());
  EXPECT_TRUE(p->has_heap);
  EXPECT_EQ(p->heap_name(), "particles#heap");
  EXPECT_EQ(p->rank(), 1U);
  EXPECT_EQ(p->primary_dtype(), dtype::u8);
  EXPECT_EQ(p->trailing_dim(), std::optional<std::uint64_t>(48));
  EXPECT_EQ(p->primary_element_align(), 8U);
  EXPECT_EQ(p->heap_element_align(), 1U);
  EXPECT_EQ(p->primary_placement(64), 64U);
  EXPECT_EQ(p->heap_placement(64), 64U);
  EXPECT_EQ(p->primary_placement(1), 8U);

  const auto* l = s.find("labels");
  ASSERT_NE(l, nullptr);
  EXPECT_EQ(l->kind, mt::tensor_kind::blob);
  EXPECT_EQ(l->item.type, mt::value_type::string);
  EXPECT_TRUE(l->has_heap);
  EXPECT_EQ(l->trailing_dim(), std::optional<std::uint64_t>(16));
  EXPECT_EQ(l->primary_element_align(), 8U);
  EXPECT_EQ(l->primary_placement(64), 64U);
  EXPECT_EQ(l->heap_placement(64), 64U);

  const auto* pos = s.find("positions");
  ASSERT_NE(pos, nullptr);
  EXPECT_EQ(pos->kind, mt::tensor_kind::flat);
  EXPECT_EQ(pos->flat_dtype, dtype::f32);
  EXPECT_EQ(pos->primary_dtype(), dtype::f32);
  EXPECT_FALSE(pos->has_heap);
  EXPECT_EQ(pos->trailing_dim(), std::nullopt);
  ASSERT_EQ(pos->rank(), 2U);
  EXPECT_EQ(pos->dims[0].min, 0U);
  EXPECT_EQ(pos->dims[0].max, std::nullopt);
  EXPECT_EQ(pos->dims[1].min, 3U);
  EXPECT_EQ(pos->dims[1].max, std::optional<std::uint64_t>(3));
  EXPECT_EQ(pos->primary_placement(64), 64U);
  EXPECT_EQ(pos->primary_placement(1), 4U);
  EXPECT_EQ(s.find("missing"), nullptr);
}

TEST(LayoutWorkedExample, LayoutTableEqualsSection7) {
  const auto s = mt::compile_schema_text(worked_example);
  const json expected = json::parse(metatensor_test::example_layout_text);  // §7, verbatim
  const std::vector<std::string> present{"labels", "particles", "positions"};
  EXPECT_EQ(mt::layout_table_json(s, present, 64), expected);

  // Only the tensors present are listed (§7).
  const std::vector<std::string> some{"positions"};
  EXPECT_EQ(mt::layout_table_json(s, some, 64), json::parse(R"({"tensors":{"positions":
      {"kind":"flat","data":"positions","rank":2,"align":64,"dtype":"F32"}}})"));
  const std::vector<std::string> unknown{"nope"};
  EXPECT_THROW((void)mt::layout_table_json(s, unknown, 64), tensogram::invalid_arg_error);
}

// The entry comparison a reader runs instead of rendering the whole
// recomputed table (issue 27) agrees with JSON equality on every kind and on
// mutations of each member: removed, retyped, renamed, numbers written as
// floats (equal by value in nlohmann), and an extra member.
TEST(LayoutWorkedExample, EntryComparisonAgreesWithJsonEquality) {
  const auto s = mt::compile_schema_text(worked_example);
  std::size_t mutations = 0;
  for (const std::uint64_t a : {16U, 64U}) {
    for (const auto& t : s.tensors()) {
      const std::string& name = t.name;
      const json entry = mt::detail::layout_entry_json(t, a);
      EXPECT_TRUE(mt::detail::layout_entry_equals(entry, t, a)) << name;
      std::vector<json> variants;
      for (const auto& [key, value] : entry.items()) {
        json removed = entry;
        removed.erase(key);
        variants.push_back(removed);
        json other = entry;
        other[key] = value.is_string() ? json(value.get<std::string>() + "x") : json("x");
        variants.push_back(other);
        if (value.is_number_unsigned()) {
          json as_float = entry;
          as_float[key] = static_cast<double>(value.get<std::uint64_t>());
          variants.push_back(as_float);
          json plus_one = entry;
          plus_one[key] = value.get<std::uint64_t>() + 1;
          variants.push_back(plus_one);
        }
      }
      json extra = entry;
      extra["note"] = "x";
      variants.push_back(extra);
      variants.push_back(json::array());
      for (const auto& v : variants) {
        EXPECT_EQ(mt::detail::layout_entry_equals(v, t, a), v == entry) << name << ": " << v.dump();
        ++mutations;
      }
    }
  }
  EXPECT_GT(mutations, 30U);
}

TEST(LayoutWorkedExample, PropertySchemaFollowsRef) {
  const auto s = mt::compile_schema_text(worked_example);
  EXPECT_EQ(s.property_schema("particles"), s.document()["properties"]["particles"]);
  const auto with_ref =
      mt::compile_schema_text(root(R"("p":{"$ref":"#/$defs/A"})", R"("A":)" + array_of(u8)));
  EXPECT_EQ(with_ref.property_schema("p"), json::parse(array_of(u8)));
  EXPECT_THROW((void)with_ref.property_schema("q"), tensogram::invalid_arg_error);
}

// Appendix A.
TEST(LayoutAppendixA, Table) {
  const auto s = mt::compile_schema_text(
      R"({"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object",
          "required":["w"],"additionalProperties":false,
          "properties":{"w":{"type":"array","items":{"type":"number","TypeDef:Float32":true}}}})");
  const std::vector<std::string> present{"w"};
  EXPECT_EQ(mt::layout_table_json(s, present, 16),
            json::parse(R"({"tensors":{"w":{"kind":"flat","data":"w","rank":1,"align":16,"dtype":"F32"}}})"));
}

// §4.3, table-driven: every rejected keyword, on a root property and deep in $defs.
TEST(SchemaDialect, RejectedKeywords) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"$anchor", R"("a")"},          {"$dynamicRef", R"("#a")"},
      {"$dynamicAnchor", R"("a")"},   {"$recursiveRef", R"("#")"},
      {"$recursiveAnchor", "true"},   {"$vocabulary", "{}"},
      {"definitions", "{}"},          {"additionalItems", "false"},
      {"unevaluatedItems", "false"},  {"unevaluatedProperties", "false"},
      {"patternProperties", "{}"},    {"propertyNames", "{}"},
      {"dependentRequired", "{}"},    {"dependentSchemas", "{}"},
      {"dependencies", "{}"},         {"minProperties", "1"},
      {"maxProperties", "1"},         {"additionalProperties", "true"},
      {"additionalProperties", "{}"}, {"items", "[" + f32 + "]"},
  };
  for (const auto& [kw, value] : cases) {
    SCOPED_TRACE(kw);
    const std::string node = R"({"type":"array","items":)" + f32 + ",\"" + kw + "\":" + value + "}";
    if (kw != "items") expect_error(root(R"("x":)" + node), errc::mt_schema_dialect, "/properties/x");
    // Also in an unused definition: the whole document obeys the dialect.
    const std::string leaf = R"({"type":"number","TypeDef:Float32":true,")" + kw + "\":" + value + "}";
    expect_error(root(R"("x":)" + array_of(f32), R"("D":{"type":"object","properties":{"y":)" + leaf + "}}"),
                 errc::mt_schema_dialect, "/$defs/D/properties/y");
  }
  // additionalProperties: false is allowed.
  EXPECT_NO_THROW((void)mt::compile_schema_text(
      root(R"("x":)" + struct_of({{"a", u8}}).insert(1, R"("additionalProperties":false,)"))));
}

TEST(SchemaDialect, ItemsArray) {
  expect_error(root(R"("x":{"type":"array","items":[)" + f32 + "," + f32 + "]}"), errc::mt_schema_dialect,
               "/properties/x");
}

TEST(SchemaDialect, UnknownTypeDef) {
  expect_error(root(R"("x":{"type":"number","TypeDef:Float128":true})"), errc::mt_unknown_typedef,
               "/properties/x");
  expect_error(root(R"("x":)" + array_of(f32), R"("U":{"TypeDef:Whatever":1})"), errc::mt_unknown_typedef,
               "/$defs/U");
  // Unknown keywords without the prefix are annotations.
  EXPECT_NO_THROW((void)mt::compile_schema_text(
      root(R"("x":{"type":"array","x-note":{"TypeDef:Nope":1},"items":)" + f32 + "}")));
}

TEST(SchemaDialect, SchemaKeyword) {
  expect_error(R"({"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{}})",
               errc::mt_schema_dialect);
  expect_error(
      R"({"$schema":"https://json-schema.org/draft/2020-12/schema#","type":"object","properties":{}})",
      errc::mt_schema_dialect);
  const auto s = mt::compile_schema_text(
      R"({"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","properties":{}})");
  EXPECT_TRUE(s.tensors().empty());
}

TEST(SchemaDialect, StrictJson) {
  expect_error(R"({"type":"object","type":"object","properties":{}})", errc::mt_schema_json);
  expect_error(
      R"({"type":"object","properties":{"x":{"type":"array","items":{"TypeDef:Uint8":true},"maxItems":9007199254740992}}})",
      errc::mt_schema_json);
  expect_error(R"({"type":"object",)", errc::mt_schema_json);
}

TEST(SchemaDialect, Combinators) {
  // The anyOf of consts that builders emit for enumerations.
  EXPECT_NO_THROW((void)mt::compile_schema_text(root(
      R"("x":{"type":"array","items":{"type":"integer","TypeDef:Uint8":true,"anyOf":[{"const":1},{"type":"integer","const":2,"description":"two"}]}})")));
  expect_error(root(R"("x":{"type":"array","items":{"TypeDef:Uint8":true,"anyOf":[{"properties":{}}]}})"),
               errc::mt_schema_dialect, "/properties/x/items/anyOf/0");
  expect_error(
      root(R"("x":{"type":"array","items":{"TypeDef:Uint8":true,"allOf":[{"TypeDef:Uint8":true}]}})"),
      errc::mt_schema_dialect, "/properties/x/items/allOf/0");
  expect_error(root(R"("x":{"type":"array","items":{"TypeDef:Uint8":true,"not":{"$ref":"#"}}})"),
               errc::mt_schema_dialect, "/properties/x/items/not");
  expect_error(
      root(R"("x":{"type":"array","items":{"TypeDef:Uint8":true,"oneOf":[{"not":{"minItems":1}}]}})"),
      errc::mt_schema_dialect, "/properties/x/items/oneOf/0/not");
}

TEST(SchemaDialect, RefSiblings) {
  const std::string defs = R"("A":)" + struct_of({{"a", u8}});
  // Annotations, value keywords and TypeDef:Align may sit next to $ref.
  const auto s = mt::compile_schema_text(
      root(R"("x":)" +
               struct_of({{"p", u8}, {"q", R"({"$ref":"#/$defs/A","description":"d","TypeDef:Align":4})"}}),
           defs));
  EXPECT_EQ(s.find("x")->record->fields[1].offset, 4U);
  expect_error(root(R"("x":{"$ref":"#/$defs/A","type":"object"})", defs), errc::mt_schema_dialect,
               "/properties/x");
  expect_error(root(R"("x":{"$ref":"#/$defs/A","TypeDef:Struct":true})", defs), errc::mt_schema_dialect,
               "/properties/x");
}

TEST(SchemaRef, PointerForms) {
  const auto s = mt::compile_schema_text(root(
      R"("a":{"type":"array","items":{"$ref":"#/$defs/x~1y"}},"b":{"$ref":"#/$defs/p%25q"},"c":{"$ref":"#/$defs/t~0u"})",
      R"("x/y":)" + f64 + R"(,"p%q":)" + array_of(u8) + R"(,"t~u":)" + u32));
  EXPECT_EQ(s.find("a")->flat_dtype, dtype::f64);
  EXPECT_EQ(s.find("b")->flat_dtype, dtype::u8);
  EXPECT_EQ(s.find("b")->rank(), 1U);
  EXPECT_EQ(s.find("c")->flat_dtype, dtype::u32);
  EXPECT_EQ(s.find("c")->rank(), 0U);
  // Unresolvable, malformed, external.
  expect_error(root(R"("a":{"$ref":"#/$defs/none"})"), errc::mt_schema_dialect, "/properties/a");
  expect_error(root(R"("a":{"$ref":"#/$defs/x~2"})", R"("x":)" + u8), errc::mt_schema_dialect,
               "/properties/a");
  expect_error(root(R"("a":{"$ref":"#/$defs/x%2"})", R"("x":)" + u8), errc::mt_schema_dialect,
               "/properties/a");
  expect_error(root(R"("a":{"$ref":"https://example.com/s.json"})"), errc::mt_schema_dialect,
               "/properties/a");
  expect_error(root(R"("a":{"$ref":"#/$defs"})", R"("x":)" + u8), errc::mt_schema_dialect, "/properties/a");
  expect_error(root(R"("a":{"$ref":7})"), errc::mt_schema_dialect, "/properties/a");
}

TEST(SchemaRef, ById) {
  const std::string particle = struct_of({{"id", u32}}).insert(1, R"("$id":"Particle",)");
  const auto s = mt::compile_schema_text(
      root(R"("p":{"type":"array","items":{"$ref":"Particle"}})", R"("Particle":)" + particle));
  EXPECT_EQ(s.find("p")->kind, mt::tensor_kind::record);
  EXPECT_EQ(s.find("p")->record->size, 4U);
  expect_error(root(R"("p":{"$ref":"Particl"})", R"("Particle":)" + particle), errc::mt_schema_dialect);
}

TEST(SchemaRef, Cycles) {
  expect_error(root(R"("x":{"$ref":"#/$defs/A"})", R"("A":{"$ref":"#/$defs/B"},"B":{"$ref":"#/$defs/A"})"),
               errc::mt_schema_dialect);
  // Unused definitions are checked too.
  expect_error(root(R"("x":)" + array_of(u8), R"("A":{"$ref":"#/$defs/A"})"), errc::mt_schema_dialect,
               "/$defs/A");
  // A recursive tree type is a reference cycle.
  expect_error(root(R"("x":{"$ref":"#/$defs/Node"})",
                    R"("Node":)" + struct_of({{"v", u8}, {"kids", list_of(R"({"$ref":"#/$defs/Node"})")}})),
               errc::mt_schema_dialect);
  expect_error(root(R"("x":{"type":"array","items":{"$ref":"#"}})"), errc::mt_schema_dialect);
}

// §4.4 TypeDef:Struct rules.
TEST(SchemaStruct, RequiredRules) {
  const std::string missing = R"({"type":"object","TypeDef:Struct":true,"properties":{"a":)" + u8 +
                              ",\"b\":" + u8 + R"(},"required":["a"]})";
  expect_error(root(R"("x":)" + missing), errc::mt_schema_type, "/properties/x");
  const std::string extra =
      R"({"TypeDef:Struct":true,"properties":{"a":)" + u8 + R"(},"required":["a","c"]})";
  expect_error(root(R"("x":)" + extra), errc::mt_schema_type, "/properties/x");
  const std::string twice =
      R"({"TypeDef:Struct":true,"properties":{"a":)" + u8 + R"(},"required":["a","a"]})";
  expect_error(root(R"("x":)" + twice), errc::mt_schema_type);
  const std::string none = R"({"TypeDef:Struct":true,"properties":{"a":)" + u8 + "}}";
  expect_error(root(R"("x":)" + none), errc::mt_schema_type);
  expect_error(root(R"("x":{"TypeDef:Struct":true,"properties":{},"required":[]})"), errc::mt_schema_type);
  expect_error(root(R"("x":)" + struct_of({{"a", u8}}, "false")), errc::mt_schema_type);
  expect_error(root(R"("x":)" + struct_of({{"a", u8}}, R"({"align":3})")), errc::mt_schema_type);
  expect_error(root(R"("x":)" + struct_of({{"a", u8}}, R"({"align":8192})")), errc::mt_schema_type);
  expect_error(
      root(R"("x":{"type":"array","TypeDef:Struct":true,"properties":{"a":)" + u8 + R"(},"required":["a"]})"),
      errc::mt_schema_type);
}

TEST(SchemaStruct, RequiredOrderIsFieldOrder) {
  const std::string s =
      R"({"TypeDef:Struct":true,"properties":{"a":)" + u32 + ",\"b\":" + u8 + R"(},"required":["b","a"]})";
  const auto r = record_of(s);
  ASSERT_EQ(r->fields.size(), 2U);
  EXPECT_EQ(r->fields[0].name, "b");
  EXPECT_EQ(r->fields[0].offset, 0U);
  EXPECT_EQ(r->fields[1].name, "a");
  EXPECT_EQ(r->fields[1].offset, 4U);
  EXPECT_EQ(r->size, 8U);
  EXPECT_EQ(r->align, 4U);
}

TEST(SchemaStruct, RaisedAlignment) {
  const auto r =
      record_of(struct_of({{"a", u8}, {"b", R"({"TypeDef:Uint8":true,"TypeDef:Align":16})"}, {"c", u8}}));
  EXPECT_EQ(r->fields[1].offset, 16U);
  EXPECT_EQ(r->fields[1].type.align, 1U);  // the type's own alignment is unchanged
  EXPECT_EQ(r->fields[2].offset, 17U);
  EXPECT_EQ(r->align, 16U);
  EXPECT_EQ(r->size, 32U);

  const auto s = record_of(struct_of({{"a", u32}, {"b", u8}}, R"({"align":64})"));
  EXPECT_EQ(s->fields[1].offset, 4U);
  EXPECT_EQ(s->align, 64U);
  EXPECT_EQ(s->size, 64U);

  // A smaller TypeDef:Align than the natural alignment changes nothing.
  const auto t = record_of(struct_of({{"a", u8}, {"b", R"({"TypeDef:Float64":true,"TypeDef:Align":2})"}}));
  EXPECT_EQ(t->fields[1].offset, 8U);

  expect_error(root(R"("x":)" + struct_of({{"a", R"({"TypeDef:Uint8":true,"TypeDef:Align":3})"}})),
               errc::mt_schema_type, "/properties/x/properties/a");
  expect_error(root(R"("x":)" + struct_of({{"a", R"({"TypeDef:Uint8":true,"TypeDef:Align":131072})"}})),
               errc::mt_schema_type);
  // Not on a fixed-array element, a List element or a dimension's items.
  expect_error(root(R"("x":)" + struct_of({{"a", fixed(2, R"({"TypeDef:Uint8":true,"TypeDef:Align":4})")}})),
               errc::mt_schema_type, "/properties/x/properties/a/items");
  expect_error(root(R"("x":)" + list_of(R"({"TypeDef:Uint8":true,"TypeDef:Align":4})")),
               errc::mt_schema_type);
  expect_error(root(R"("x":)" + array_of(R"({"TypeDef:Uint8":true,"TypeDef:Align":4})")),
               errc::mt_schema_type, "/properties/x/items");
}

TEST(SchemaStruct, RootAlign) {
  const auto s = mt::compile_schema_text(root(R"("x":{"type":"array","TypeDef:Align":128,"items":)" + f32 +
                                                  R"(},"y":{"TypeDef:Align":4,"$ref":"#/$defs/S"})",
                                              R"("S":)" + struct_of({{"l", list_of(f64)}})));
  const auto* x = s.find("x");
  EXPECT_EQ(x->root_align, 128U);
  EXPECT_EQ(x->primary_placement(64), 128U);
  EXPECT_EQ(x->primary_placement(256), 256U);
  const auto* y = s.find("y");
  EXPECT_EQ(y->root_align, 4U);
  EXPECT_EQ(y->rank(), 0U);
  EXPECT_TRUE(y->has_heap);
  EXPECT_EQ(y->heap_element_align(), 8U);
  EXPECT_EQ(y->heap_placement(1), 8U);
  EXPECT_EQ(y->heap_placement(16), 16U);
}

TEST(SchemaStruct, Nested) {
  const std::string inner = struct_of({{"a", scalar("Uint16", "integer")}, {"b", f64}});
  const auto r = record_of(struct_of({{"x", u8}, {"inner", inner}, {"y", u8}}));
  ASSERT_EQ(r->fields.size(), 3U);
  EXPECT_EQ(r->fields[1].offset, 8U);
  ASSERT_EQ(r->fields[1].type.type, mt::value_type::record);
  EXPECT_EQ(r->fields[1].type.record->size, 16U);
  EXPECT_EQ(r->fields[1].type.record->fields[1].offset, 8U);
  EXPECT_EQ(r->fields[2].offset, 24U);
  EXPECT_EQ(r->size, 32U);
  EXPECT_EQ(r->align, 8U);
  EXPECT_FALSE(r->has_blobs());
  EXPECT_EQ(mt::record_json(*r), json::parse(R"({"size":32,"align":8,"fields":[
      {"name":"x","offset":0,"type":"U8","shape":[]},
      {"name":"inner","offset":8,"type":"struct","shape":[],"record":{"size":16,"align":8,"fields":[
         {"name":"a","offset":0,"type":"U16","shape":[]},{"name":"b","offset":8,"type":"F64","shape":[]}]}},
      {"name":"y","offset":24,"type":"U8","shape":[]}]})"));
}

TEST(SchemaTuple, Layout) {
  const std::string tuple = R"({"type":"array","prefixItems":[)" + u8 + "," + f32 + "," +
                            scalar("Uint16", "integer") + R"(],"items":false,"minItems":3})";
  const auto s = mt::compile_schema_text(root(R"("t":{"type":"array","items":)" + tuple + "}"));
  const auto* t = s.find("t");
  ASSERT_EQ(t->kind, mt::tensor_kind::record);
  EXPECT_EQ(t->rank(), 1U);
  const auto& r = *t->record;
  EXPECT_TRUE(r.tuple);
  ASSERT_EQ(r.fields.size(), 3U);
  EXPECT_EQ(r.fields[0].name, "0");
  EXPECT_EQ(r.fields[1].name, "1");
  EXPECT_EQ(r.fields[1].offset, 4U);
  EXPECT_EQ(r.fields[2].name, "2");
  EXPECT_EQ(r.fields[2].offset, 8U);
  EXPECT_EQ(r.size, 12U);
  EXPECT_EQ(r.align, 4U);
  // A tuple field, with TypeDef:Align on an element.
  const std::string t2 = R"({"type":"array","prefixItems":[)" + u8 +
                         R"(,{"TypeDef:Uint8":true,"TypeDef:Align":8}],"items":false})";
  const auto r2 = record_of(struct_of({{"a", u8}, {"t", t2}}));
  EXPECT_EQ(r2->fields[1].offset, 8U);
  EXPECT_EQ(r2->fields[1].type.record->fields[1].offset, 8U);
  EXPECT_EQ(r2->size, 24U);
  EXPECT_EQ(mt::type_json(r2->fields[1].type)["record"]["fields"][1]["name"], "1");

  expect_error(root(R"("t":{"type":"array","prefixItems":[)" + u8 + "]}"), errc::mt_schema_type);
  expect_error(root(R"("t":{"type":"array","prefixItems":[)" + u8 + R"(],"items":false,"maxItems":2})"),
               errc::mt_schema_type);
  expect_error(root(R"("t":{"type":"array","prefixItems":[],"items":false})"), errc::mt_schema_type);
}

TEST(SchemaFixedArray, MultiDimensional) {
  const auto r = record_of(struct_of({{"k", u8}, {"m", fixed(4, fixed(2, f64))}}));
  const auto& m = r->fields[1];
  EXPECT_EQ(m.offset, 8U);
  EXPECT_EQ(m.type.shape, (std::vector<std::uint64_t>{4, 2}));
  EXPECT_EQ(m.type.size, 64U);
  EXPECT_EQ(m.type.align, 8U);
  EXPECT_EQ(m.type.element_size(), 8U);
  EXPECT_EQ(r->size, 72U);
  EXPECT_EQ(mt::type_json(m.type), json::parse(R"({"type":"F64","shape":[4,2]})"));
  // Fixed array of records and of strings.
  const auto r2 =
      record_of(struct_of({{"p", fixed(3, struct_of({{"a", u8}, {"b", u32}}))}, {"s", fixed(2, str)}}));
  EXPECT_EQ(r2->fields[0].type.size, 24U);
  EXPECT_EQ(r2->fields[1].offset, 24U);
  EXPECT_EQ(r2->fields[1].type.size, 32U);
  EXPECT_EQ(r2->fields[1].type.element_size(), 16U);
  EXPECT_TRUE(r2->has_blobs());
  // Not fixed: error inside a record.
  expect_error(root(R"("x":)" + struct_of({{"a", array_of(u8)}})), errc::mt_schema_type,
               "/properties/x/properties/a");
  expect_error(root(R"("x":)" +
                    struct_of({{"a", R"({"type":"array","minItems":2,"maxItems":3,"items":)" + u8 + "}"}})),
               errc::mt_schema_type);
  expect_error(root(R"("x":)" + struct_of({{"a", fixed(0, u8)}})), errc::mt_schema_type);
  // JSON Schema integers may be written as 2.0.
  const auto r3 =
      record_of(struct_of({{"a", R"({"type":"array","minItems":2.0,"maxItems":2,"items":)" + u8 + "}"}}));
  EXPECT_EQ(r3->fields[0].type.shape, (std::vector<std::uint64_t>{2}));
  expect_error(root(R"("x":)" +
                    struct_of({{"a", R"({"type":"array","minItems":2.5,"maxItems":2,"items":)" + u8 + "}"}})),
               errc::mt_schema_type);
}

TEST(SchemaScalar, EverySizeInOneRecord) {
  const auto r = record_of(struct_of({{"bool", scalar("Bool", "boolean")},
                                      {"i64", scalar("Int64", "integer")},
                                      {"i8", scalar("Int8", "integer")},
                                      {"f16", scalar("Float16")},
                                      {"u8", u8},
                                      {"c64", R"({"type":"array","TypeDef:Complex64":true})"},
                                      {"i16", scalar("Int16", "integer")},
                                      {"f64", f64},
                                      {"u16", scalar("Uint16", "integer")},
                                      {"f32", f32},
                                      {"bf16", scalar("BFloat16")},
                                      {"u32", u32},
                                      {"e4m3", scalar("Float8E4M3")},
                                      {"i32", scalar("Int32", "integer")},
                                      {"u64", scalar("Uint64", "integer")},
                                      {"e5m2", scalar("Float8E5M2")},
                                      {"e8m0", scalar("Float8E8M0")},
                                      {"e4m3fnuz", scalar("Float8E4M3FNUZ")},
                                      {"e5m2fnuz", scalar("Float8E5M2FNUZ")}}));
  const std::vector<std::uint64_t> offsets{0,  8,  16, 18, 20, 24, 32, 40, 48, 52,
                                           56, 60, 64, 68, 72, 80, 81, 82, 83};
  const std::vector<dtype> types{dtype::boolean, dtype::i64,         dtype::i8,         dtype::f16,
                                 dtype::u8,      dtype::c64,         dtype::i16,        dtype::f64,
                                 dtype::u16,     dtype::f32,         dtype::bf16,       dtype::u32,
                                 dtype::f8_e4m3, dtype::i32,         dtype::u64,        dtype::f8_e5m2,
                                 dtype::f8_e8m0, dtype::f8_e4m3fnuz, dtype::f8_e5m2fnuz};
  ASSERT_EQ(r->fields.size(), offsets.size());
  for (std::size_t i = 0; i < offsets.size(); ++i) {
    EXPECT_EQ(r->fields[i].offset, offsets[i]) << r->fields[i].name;
    EXPECT_EQ(r->fields[i].type.scalar, types[i]) << r->fields[i].name;
  }
  EXPECT_EQ(r->size, 88U);
  EXPECT_EQ(r->align, 8U);
}

TEST(SchemaScalar, Complex64AlignsTo4) {
  const auto r = record_of(struct_of({{"a", u8}, {"c", R"({"TypeDef:Complex64":true})"}}));
  EXPECT_EQ(r->fields[1].offset, 4U);
  EXPECT_EQ(r->fields[1].type.size, 8U);
  EXPECT_EQ(r->fields[1].type.align, 4U);
  EXPECT_EQ(r->size, 12U);
  EXPECT_EQ(r->align, 4U);
  const auto s =
      mt::compile_schema_text(root(R"("z":)" + array_of(R"({"type":"array","TypeDef:Complex64":true})")));
  EXPECT_EQ(s.find("z")->flat_dtype, dtype::c64);
  EXPECT_EQ(s.find("z")->rank(), 1U);
  EXPECT_EQ(s.find("z")->primary_element_align(), 4U);
  expect_error(root(R"("z":)" + array_of(R"({"type":"number","TypeDef:Complex64":true})")),
               errc::mt_schema_type);
}

TEST(SchemaScalar, TypeAndValueRules) {
  EXPECT_NO_THROW((void)mt::compile_schema_text(root(R"("a":)" + array_of(scalar("Float32", "integer")))));
  EXPECT_NO_THROW(
      (void)mt::compile_schema_text(root(R"("a":{"type":["integer","number"],"TypeDef:Int16":true})")));
  expect_error(root(R"("a":)" + array_of(scalar("Bool", "number"))), errc::mt_schema_type,
               "/properties/a/items");
  expect_error(root(R"("a":)" + array_of(scalar("Float8E4M3", "integer"))), errc::mt_schema_type);
  expect_error(root(R"("a":{"type":["integer","string"],"TypeDef:Int16":true})"), errc::mt_schema_type);
  expect_error(root(R"("a":{"TypeDef:Int16":false})"), errc::mt_schema_type);
  expect_error(root(R"("a":{"TypeDef:Int16":true,"TypeDef:Int32":true})"), errc::mt_schema_type);
  expect_error(root(R"("a":{"TypeDef:Int16":true,"TypeDef:String":true})"), errc::mt_schema_type);
  expect_error(root(R"("a":{"TypeDef:Int16":true,"properties":{}})"), errc::mt_schema_type);
  expect_error(root(R"("a":{"type":"number","TypeDef:String":true})"), errc::mt_schema_type);
}

TEST(SchemaScalar, SubByte) {
  const auto s = mt::compile_schema_text(root(R"("f4":)" + array_of(scalar("Float4E2M1")) + R"(,"f6":)" +
                                              array_of(scalar("Float6E2M3")) + R"(,"g6":)" +
                                              array_of(scalar("Float6E3M2"))));
  EXPECT_EQ(s.find("f4")->flat_dtype, dtype::f4);
  EXPECT_EQ(s.find("f4")->primary_element_align(), 1U);
  EXPECT_EQ(s.find("f6")->flat_dtype, dtype::f6_e2m3);
  EXPECT_EQ(s.find("g6")->flat_dtype, dtype::f6_e3m2);
  expect_error(root(R"("x":)" + struct_of({{"a", scalar("Float4E2M1")}})), errc::mt_schema_type,
               "/properties/x/properties/a");
  expect_error(root(R"("x":)" + list_of(scalar("Float6E2M3"))), errc::mt_schema_type);
  expect_error(root(R"("x":)" + struct_of({{"a", fixed(2, scalar("Float6E3M2"))}})), errc::mt_schema_type);
}

TEST(SchemaBlob, StringsAndLists) {
  const auto s = mt::compile_schema_text(
      root(R"("s":)" + str + R"(,"rows":)" + array_of(list_of(f64)) + R"(,"recs":)" +
           array_of(list_of(struct_of({{"a", u8}, {"b", scalar("Uint16", "integer")}})))));
  const auto* st = s.find("s");
  EXPECT_EQ(st->kind, mt::tensor_kind::blob);
  EXPECT_EQ(st->rank(), 0U);
  EXPECT_EQ(st->heap_element_align(), 1U);
  const auto* rows = s.find("rows");
  EXPECT_EQ(rows->kind, mt::tensor_kind::blob);
  EXPECT_EQ(rows->item.type, mt::value_type::list);
  ASSERT_TRUE(rows->item.elem);
  EXPECT_EQ(rows->item.elem->scalar, dtype::f64);
  EXPECT_EQ(rows->heap_element_align(), 8U);
  EXPECT_EQ(rows->heap_placement(4), 8U);
  EXPECT_EQ(rows->heap_placement(64), 64U);
  const std::vector<std::string> present{"s", "rows", "recs"};
  EXPECT_EQ(mt::layout_table_json(s, present, 16), json::parse(R"({"tensors":{
    "s":{"kind":"blob","data":"s","heap":"s#heap","rank":0,"align":16,"item":{"type":"string"}},
    "rows":{"kind":"blob","data":"rows","heap":"rows#heap","rank":1,"align":16,
            "item":{"type":"list","elem":{"type":"F64","shape":[]}}},
    "recs":{"kind":"blob","data":"recs","heap":"recs#heap","rank":1,"align":16,
            "item":{"type":"list","elem":{"type":"struct","shape":[],"record":{"size":4,"align":2,"fields":[
               {"name":"a","offset":0,"type":"U8","shape":[]},{"name":"b","offset":2,"type":"U16","shape":[]}]}}}}}})"));
  // A List field in a record: `elem` in the field JSON, heap alignment from it.
  const auto s2 = mt::compile_schema_text(
      root(R"("x":)" + array_of(struct_of({{"a", u8}, {"l", list_of(fixed(2, u32))}}))));
  const auto* x = s2.find("x");
  EXPECT_TRUE(x->has_heap);
  EXPECT_EQ(x->heap_element_align(), 4U);
  EXPECT_EQ(
      mt::record_json(*x->record)["fields"][1],
      json::parse(R"({"name":"l","offset":8,"type":"list","shape":[],"elem":{"type":"U32","shape":[2]}})"));
}

TEST(SchemaBlob, ListElementsAreFixedSize) {
  expect_error(root(R"("x":)" + array_of(list_of(str))), errc::mt_schema_type, "/properties/x/items/items");
  expect_error(root(R"("x":)" + list_of(list_of(u8))), errc::mt_schema_type);
  expect_error(root(R"("x":)" + list_of(struct_of({{"a", u8}, {"s", str}}))), errc::mt_schema_type);
  expect_error(root(R"("x":)" + list_of(fixed(2, str))), errc::mt_schema_type);
  expect_error(root(R"("x":)" + list_of(array_of(u8))), errc::mt_schema_type);
  expect_error(root(R"("x":{"TypeDef:List":true,"items":true})"), errc::mt_schema_type);
  expect_error(root(R"("x":{"TypeDef:List":true})"), errc::mt_schema_type);
}

TEST(SchemaRoot, Rules) {
  expect_error(R"({"properties":{}})", errc::mt_schema_type, "");
  expect_error(R"({"type":"object"})", errc::mt_schema_type);
  expect_error(R"({"type":"object","properties":{},"TypeDef:Struct":true})", errc::mt_schema_type);
  expect_error(R"([])", errc::mt_schema_type);
  expect_error(R"({"type":"object","properties":{"a":)" + u8 + R"(},"required":["b"]})",
               errc::mt_schema_type);
  expect_error(root(R"("x":true)"), errc::mt_schema_type, "/properties/x");
  expect_error(root(R"("x":{"type":"array","items":true})"), errc::mt_schema_type, "/properties/x");
  expect_error(root(R"("x":{"type":"object"})"), errc::mt_schema_type, "/properties/x");
  const auto s = mt::compile_schema_text(R"({"type":"object","properties":{"a":)" + u8 + ",\"b\":" + u8 +
                                         R"(},"required":["a"]})");
  EXPECT_EQ(required_names(s), (std::vector<std::string>{"a"}));
  EXPECT_TRUE(s.is_required("a"));
  EXPECT_FALSE(s.is_required("b"));
  EXPECT_FALSE(s.is_required("c"));
  EXPECT_EQ(s.find("a")->rank(), 0U);
}

TEST(SchemaRoot, Names) {
  expect_error(root(R"("":)" + u8), errc::mt_schema_name);
  expect_error(root(R"("__x":)" + u8), errc::mt_schema_name);
  expect_error(root(R"("a#b":)" + u8), errc::mt_schema_name, "/properties/a#b");
  EXPECT_NO_THROW((void)mt::compile_schema_text(root(R"("_x":)" + u8 + R"(,"a/b~c":)" + u8)));
}

TEST(SchemaLimits, Rank) {
  std::string node = u8;
  for (int i = 0; i < 32; ++i) node = array_of(node);
  EXPECT_EQ(mt::compile_schema_text(root(R"("x":)" + node)).find("x")->rank(), 32U);
  try {
    (void)mt::compile_schema_text(root(R"("x":)" + array_of(node)));
    ADD_FAILURE() << "rank 33 accepted";
  } catch (const mt::error& e) {
    EXPECT_EQ(e.kind(), errc::mt_limit) << e.what();
    EXPECT_NE(std::string(e.what()).find("rank"), std::string::npos) << e.what();
  }
}

TEST(SchemaLimits, Depth) {
  // A $ref chain 70 deep.
  json doc = json::parse(root(R"("x":{"$ref":"#/$defs/d69"})"));
  doc["$defs"]["d0"] = json::parse(u8);
  for (int i = 1; i < 70; ++i) doc["$defs"][numbered("d", i)] = json{{"$ref", numbered("#/$defs/d", i - 1)}};
  try {
    (void)mt::compile_schema(doc);
    ADD_FAILURE() << "depth 70 accepted";
  } catch (const mt::error& e) {
    EXPECT_EQ(e.kind(), errc::mt_limit) << e.what();
  }
  // Plain nesting deeper than 64 schema levels.
  json deep = json::parse(u8);
  for (int i = 0; i < 70; ++i) deep = json{{"type", "array"}, {"items", deep}};
  json doc2 = json::parse(root(""));
  doc2["properties"]["x"] = deep;
  try {
    (void)mt::compile_schema(doc2);
    ADD_FAILURE() << "deep schema accepted";
  } catch (const mt::error& e) {
    EXPECT_EQ(e.kind(), errc::mt_limit) << e.what();
  }
}

TEST(SchemaLimits, RecordSize) {
  // Exactly 2^24 bytes is allowed; one element more is not.
  const auto r = record_of(struct_of({{"a", fixed(std::uint64_t{1} << 24, u8)}}));
  EXPECT_EQ(r->size, std::uint64_t{1} << 24);
  expect_error(root(R"("x":)" + struct_of({{"a", fixed((std::uint64_t{1} << 22) + 1, u32)}})),
               errc::mt_limit);
  expect_error(root(R"("x":)" + struct_of({{"a", fixed(std::uint64_t{1} << 24, u8)}, {"b", u8}})),
               errc::mt_limit);
  // 2^53 - 1 elements of a 48-byte record: no overflow, MT_LIMIT.
  expect_error(root(R"("x":)" + struct_of({{"a", fixed(9007199254740991ULL, fixed(6, f64))}})),
               errc::mt_limit);
  // Via alignment padding.
  expect_error(root(R"("x":)" + struct_of({{"a", fixed((std::uint64_t{1} << 24) - 1, u8)},
                                           {"b", R"({"TypeDef:Uint8":true,"TypeDef:Align":2})"}})),
               errc::mt_limit);
}

TEST(SchemaLimits, FieldCount) {
  std::vector<std::pair<std::string, std::string>> inner;
  for (int i = 0; i < 300; ++i) inner.emplace_back(numbered("f", i), u8);
  std::vector<std::pair<std::string, std::string>> outer;
  for (int i = 0; i < 300; ++i) outer.emplace_back(numbered("g", i), R"({"$ref":"#/$defs/In"})");
  // 300 + 300 * 300 fields counting nested ones.
  expect_error(root(R"("x":)" + struct_of(outer), R"("In":)" + struct_of(inner)), errc::mt_limit);
  outer.resize(200);  // 200 + 200 * 300 = 60,200
  const auto s = mt::compile_schema_text(root(R"("x":)" + struct_of(outer), R"("In":)" + struct_of(inner)));
  EXPECT_EQ(s.find("x")->record->size, 60000U);
  // The shared definition is compiled once.
  EXPECT_EQ(s.find("x")->record->fields[0].type.record, s.find("x")->record->fields[199].type.record);
}

TEST(SchemaLimits, LogicalTensorCount) {
  json doc = json::parse(root(""));
  json& props = doc["properties"];
  for (std::size_t i = 0; i <= mt::max_logical_tensors; ++i) props[numbered("t", i)] = true;
  try {
    (void)mt::compile_schema(std::move(doc));
    ADD_FAILURE() << "2^20 + 1 tensors accepted";
  } catch (const mt::error& e) {
    EXPECT_EQ(e.kind(), errc::mt_limit) << e.what();
  }
}

// Schema node pointers (§5.1, for diagnostics): built from the name when
// no `$ref` leads elsewhere, kept as compiled when one does.
TEST(LayoutPointers, ImplicitAndThroughReferences) {
  const auto s = mt::compile_schema_text(R"({"type":"object","$defs":{
    "Row":{"type":"array","maxItems":4,"items":{"type":"number","TypeDef:Float32":true}}},
   "properties":{
    "a/b~c":{"type":"array","items":{"type":"array","items":{"type":"integer","TypeDef:Int8":true}}},
    "grid":{"type":"array","items":{"$ref":"#/$defs/Row"}},
    "s":{"type":"boolean","TypeDef:Bool":true}}})");
  const auto* a = s.find("a/b~c");
  ASSERT_NE(a, nullptr);
  EXPECT_TRUE(a->node_pointers.empty());
  EXPECT_EQ(a->node_pointer(0), "/properties/a~1b~0c");
  EXPECT_EQ(a->node_pointer(1), "/properties/a~1b~0c/items");
  EXPECT_EQ(a->element_pointer(), "/properties/a~1b~0c/items/items");
  EXPECT_THROW((void)a->node_pointer(3), tensogram::invalid_arg_error);
  const auto* grid = s.find("grid");
  ASSERT_NE(grid, nullptr);
  EXPECT_EQ(grid->node_pointers,
            (std::vector<std::string>{"/properties/grid", "/$defs/Row", "/$defs/Row/items"}));
  EXPECT_EQ(grid->node_pointer(1), "/$defs/Row");
  EXPECT_EQ(grid->element_pointer(), "/$defs/Row/items");
  EXPECT_EQ(s.find("s")->element_pointer(), "/properties/s");
}
