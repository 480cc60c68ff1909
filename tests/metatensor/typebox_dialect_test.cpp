// The schema dialect reads what TypeBox emits (docs/metatensor.md "Schemas
// from TypeBox"; spec 06 §4.3 "Normalisation", §4.6): draft-07 tuples and
// `Type.Module(...).Import(...)` roots, for layout compilation, for writing
// files and for value validation. The schemas under data/typebox/ are
// TypeBox's own output (data/typebox/generate.cjs).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <metatensor/file.hpp>
#include <metatensor/json_schema.hpp>
#include <metatensor/layout.hpp>
#include <metatensor/writer.hpp>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

namespace {

using json = nlohmann::json;
namespace mt = metatensor;
using mt::errc;

json load(const std::string& name) {
  std::ifstream in(std::filesystem::path(MT_TYPEBOX_DATA) / name);
  EXPECT_TRUE(in.good()) << name;
  return json::parse(in);
}

errc compile_error(const json& doc, mt::schema_source source) {
  try {
    (void)mt::compile_schema(doc, source);
  } catch (const mt::error& e) {
    return e.kind();
  }
  ADD_FAILURE() << "compiled: " << doc.dump();
  return errc::mt_limit;
}

// Every object reachable in `doc` (any member, any depth).
void each_object(const json& doc, const std::function<void(const json&)>& f) {
  if (doc.is_object()) f(doc);
  if (doc.is_structured()) {
    for (const auto& v : doc) each_object(v, f);
  }
}

// What TypeBox emits is what the test data holds: the forms under test are there.
TEST(TypeBoxData, HoldsTheDraft07AndModuleForms) {
  const json particles = load("particles_tuple.json");
  const json& pos = particles["properties"]["particles"]["items"]["properties"]["pos"];
  EXPECT_TRUE(pos["items"].is_array());
  EXPECT_EQ(pos["additionalItems"], false);
  EXPECT_EQ(pos["minItems"], 3);
  EXPECT_EQ(pos["maxItems"], 3);
  const json module = load("module_particles.json");
  EXPECT_EQ(module["$ref"], "File");
  EXPECT_FALSE(module.contains("properties"));
  EXPECT_EQ(module["$defs"]["File"]["$id"], "File");
}

TEST(TypeBoxDialect, TupleRecordsCompile) {
  const json raw = load("particles_tuple.json");
  const mt::compiled_schema s = mt::compile_schema(raw);
  const mt::tensor_layout* p = s.find("particles");
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->kind, mt::tensor_kind::record);
  ASSERT_EQ(p->rank(), 1u);
  const mt::record_layout& r = *p->record;
  ASSERT_EQ(r.fields.size(), 4u);
  // C layout (§6.2): id u32 @0, pos {f32 x3} @4, span {i64, f32} @16 (align 8,
  // size 16), mass f32 @32; record size 40 (align 8).
  EXPECT_EQ(r.fields[0].name, "id");
  EXPECT_EQ(r.fields[1].name, "pos");
  EXPECT_EQ(r.fields[1].offset, 4u);
  ASSERT_EQ(r.fields[1].type.type, mt::value_type::record);
  EXPECT_TRUE(r.fields[1].type.record->tuple);
  EXPECT_EQ(r.fields[1].type.record->fields.size(), 3u);
  EXPECT_EQ(r.fields[2].offset, 16u);
  EXPECT_EQ(r.fields[2].type.record->fields[0].type.scalar, mt::dtype::i64);
  EXPECT_EQ(r.fields[2].type.record->fields[1].type.scalar, mt::dtype::f32);
  EXPECT_EQ(r.fields[3].offset, 32u);
  EXPECT_EQ(r.size, 40u);
  const mt::tensor_layout* g = s.find("grid");
  ASSERT_NE(g, nullptr);
  EXPECT_EQ(g->kind, mt::tensor_kind::flat);
  EXPECT_EQ(g->rank(), 2u);

  // The compiled document is 2020-12: no draft-07 tuple is left, annotations are.
  each_object(s.document(), [](const json& o) {
    EXPECT_FALSE(o.contains("additionalItems")) << o.dump();
    if (o.contains("items")) {
      EXPECT_FALSE(o["items"].is_array()) << o.dump();
    }
  });
  const json& pos = s.document()["properties"]["particles"]["items"]["properties"]["pos"];
  EXPECT_EQ(pos["prefixItems"].size(), 3u);
  EXPECT_EQ(pos["items"], false);
  EXPECT_EQ(pos["title"], "position");

  // A file's embedded schema is held to §4.3 exactly; the rewritten one passes.
  EXPECT_EQ(compile_error(raw, mt::schema_source::embedded), errc::mt_schema_dialect);
  const auto strict = mt::compile_schema(s.document(), mt::schema_source::embedded);
  EXPECT_EQ(mt::record_json(*strict.find("particles")->record), mt::record_json(r));
}

TEST(TypeBoxDialect, ModuleRootCompiles) {
  const json raw = load("module_particles.json");
  // Strictly, its draft-07 tuple (Vec3) is refused first; a module root alone
  // breaks §4.6 (the root must be an object schema with properties).
  EXPECT_EQ(compile_error(raw, mt::schema_source::embedded), errc::mt_schema_dialect);
  json tuples_rewritten = raw;
  tuples_rewritten["$defs"]["Vec3"] = mt::normalize_builder_schema(raw["$defs"]["Vec3"]);
  EXPECT_EQ(compile_error(tuples_rewritten, mt::schema_source::embedded), errc::mt_schema_type);
  const mt::compiled_schema s = mt::compile_schema(raw);
  ASSERT_EQ(s.tensors().size(), 1u);
  const mt::tensor_layout* p = s.find("particles");
  ASSERT_NE(p, nullptr);
  ASSERT_EQ(p->kind, mt::tensor_kind::record);
  const mt::record_layout& r = *p->record;
  ASSERT_EQ(r.fields.size(), 3u);
  EXPECT_EQ(r.fields[1].name, "pos");  // `$ref: "Vec3"`, a tuple definition
  ASSERT_EQ(r.fields[1].type.type, mt::value_type::record);
  EXPECT_TRUE(r.fields[1].type.record->tuple);
  EXPECT_EQ(r.size, 20u);
  // The root took the imported definition's members; the definition stays.
  EXPECT_FALSE(s.document().contains("$ref"));
  EXPECT_EQ(s.document()["additionalProperties"], false);
  EXPECT_EQ(s.document()["$defs"]["File"]["$id"], "File");
  EXPECT_FALSE(s.document().contains("$id"));
}

TEST(TypeBoxDialect, WrittenFilesEmbedThe202012FormAndValidate) {
  for (const char* name : {"particles_tuple.json", "module_particles.json"}) {
    SCOPED_TRACE(name);
    const bool module = std::string(name) == "module_particles.json";
    mt::file_builder b(mt::compile_schema(load(name)));
    json particles = json::array();
    if (module) {
      particles.push_back({{"id", 1}, {"pos", {1.0, 2.0, 3.0}}, {"mass", 0.5}});
    } else {
      particles.push_back({{"id", 1}, {"pos", {1.0, 2.0, 3.0}}, {"span", {-4, 2.5}}, {"mass", 0.5}});
      particles.push_back({{"id", 2}, {"pos", {4.0, 5.0, 6.0}}, {"span", {9, 0.0}}, {"mass", 1.0}});
      b.set_json("grid", json::array({{1.0, 2.0}, {3.0, 4.0}}));
    }
    b.set_json("particles", particles);
    const auto bytes = b.serialize();
    const auto f = mt::file::from_buffer(tensogram::buffer::owned(bytes));
    EXPECT_NO_THROW(f.validate_deep());
    EXPECT_EQ(f.logical_value("particles"), particles);
    // The embedded schema passes a strict reader (§4.3 "writers MUST rewrite").
    const json embedded = json::parse(f.base().metadata().at("metatensor.schema"));
    EXPECT_NO_THROW((void)mt::compile_schema(embedded, mt::schema_source::embedded));
  }
}

// Value validation reads the TypeBox document itself (no rewriting by hand).
TEST(TypeBoxDialect, EvaluatorReadsDraft07Tuples) {
  const json raw = load("particles_tuple.json");
  const mt::json_schema_evaluator ev(raw);
  auto value = [](json span) {
    return json{{"particles", {{{"id", 1}, {"pos", {1, 2, 3}}, {"span", std::move(span)}, {"mass", 1}}}},
                {"grid", json::array()}};
  };
  EXPECT_FALSE(ev.validate(value({1, 2})).has_value());
  auto v = ev.validate(value({1, -2}));  // span[1] has "minimum": 0
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(v->pointer, "/particles/0/span/1");
  EXPECT_EQ(v->keyword, "minimum");
  v = ev.validate(value({1, 2, 3}));  // additionalItems: false
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(v->pointer, "/particles/0/span");
  v = ev.validate(value({1}));  // minItems: 2
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(v->keyword, "minItems");
  EXPECT_EQ(ev.document(), mt::normalize_builder_schema(raw));
}

TEST(TypeBoxDialect, EvaluatorReadsModuleRoots) {
  const mt::json_schema_evaluator ev(load("module_particles.json"));
  const json good = {{"particles", {{{"id", 1}, {"pos", {1, 2, 3}}, {"mass", 0}}}}};
  EXPECT_FALSE(ev.validate(good).has_value());
  json bad = good;
  bad["particles"][0]["mass"] = -1;
  auto v = ev.validate(bad);
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(v->pointer, "/particles/0/mass");
  bad = good;
  bad["extra"] = 1;  // the imported File has additionalProperties: false
  v = ev.validate(bad);
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(v->keyword, "additionalProperties");
  bad = good;
  bad["particles"][0]["pos"] = {1, 2, 3, 4};
  v = ev.validate(bad);
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(v->pointer, "/particles/0/pos");
}

// The rewrite itself, case by case.
TEST(NormalizeBuilderSchema, DraftSevenTuples) {
  const json s = {{"type", "string"}};
  // Open tuple (no additionalItems): draft-07 allows further items.
  EXPECT_EQ(mt::normalize_builder_schema({{"items", {s}}}), json({{"prefixItems", {s}}}));
  EXPECT_EQ(mt::normalize_builder_schema({{"items", {s}}, {"additionalItems", true}}),
            json({{"prefixItems", {s}}}));
  EXPECT_EQ(mt::normalize_builder_schema({{"items", {s}}, {"additionalItems", false}}),
            json({{"prefixItems", {s}}, {"items", false}}));
  const json n = {{"type", "number"}};
  EXPECT_EQ(mt::normalize_builder_schema({{"items", {s}}, {"additionalItems", n}}),
            json({{"prefixItems", {s}}, {"items", n}}));
  EXPECT_EQ(mt::normalize_builder_schema({{"items", json::array()}, {"additionalItems", false}}),
            json({{"items", false}}));
  // Nested, in $defs and combinators.
  const json nested = {{"$defs", {{"T", {{"items", {s}}, {"additionalItems", false}}}}},
                       {"anyOf", {{{"items", {s}}}}},
                       {"properties", {{"p", {{"items", {{"items", {s}}, {"additionalItems", false}}}}}}}};
  const json out = mt::normalize_builder_schema(nested);
  EXPECT_EQ(out["$defs"]["T"], json({{"prefixItems", {s}}, {"items", false}}));
  EXPECT_EQ(out["anyOf"][0], json({{"prefixItems", {s}}}));
  EXPECT_EQ(out["properties"]["p"]["items"], json({{"prefixItems", {s}}, {"items", false}}));
  // Left alone: values that are not schemas, a node with both forms, a lone additionalItems.
  const json values = {
      {"const", {{"items", {1}}}}, {"default", {{"items", {s}}}}, {"x-note", {{"items", {s}}}}};
  EXPECT_EQ(mt::normalize_builder_schema(values), values);
  const json both = {{"prefixItems", {s}}, {"items", {s}}};
  EXPECT_EQ(mt::normalize_builder_schema(both), both);
  const json lone = {{"items", s}, {"additionalItems", false}};
  EXPECT_EQ(mt::normalize_builder_schema(lone), lone);
}

TEST(NormalizeBuilderSchema, RootReferences) {
  const json obj = {{"type", "object"}, {"properties", {{"x", {{"type", "number"}}}}}};
  json by_id = {{"$defs", {{"A", obj}}}, {"$ref", "A"}, {"title", "t"}};
  by_id["$defs"]["A"]["$id"] = "A";
  json out = mt::normalize_builder_schema(by_id);
  EXPECT_EQ(out["type"], "object");
  EXPECT_EQ(out["properties"], obj["properties"]);
  EXPECT_EQ(out["title"], "t");
  EXPECT_FALSE(out.contains("$ref"));
  EXPECT_FALSE(out.contains("$id"));
  EXPECT_EQ(out["$defs"]["A"]["$id"], "A");
  // A JSON Pointer fragment, and a chain of two references.
  const json by_pointer = {{"$defs", {{"A", obj}, {"B", {{"$ref", "#/$defs/A"}}}}}, {"$ref", "#/$defs/B"}};
  out = mt::normalize_builder_schema(by_pointer);
  EXPECT_EQ(out["properties"], obj["properties"]);
  EXPECT_FALSE(out.contains("$ref"));
  // Unresolvable, the root itself, or next to structure keywords: unchanged,
  // and the compiler reports the root as usual.
  for (const json& doc :
       {json{{"$ref", "Nowhere"}, {"$defs", {{"A", obj}}}}, json{{"$ref", "#"}, {"$defs", {{"A", obj}}}},
        json{{"$ref", "#/$defs/A"}, {"type", "object"}, {"$defs", {{"A", obj}}}}}) {
    SCOPED_TRACE(doc.dump());
    EXPECT_EQ(mt::normalize_builder_schema(doc), doc);
    EXPECT_THROW((void)mt::compile_schema(doc), mt::error);
  }
  // A chain ending in a cycle stops; the dialect check reports it.
  const json cycle = {{"$ref", "#/$defs/A"}, {"$defs", {{"A", {{"$ref", "#"}}}}}};
  EXPECT_THROW((void)mt::compile_schema(cycle), mt::error);
}

// The strict reader keeps refusing what §4.3 lists; the authored path takes
// the draft-07 tuple and judges the result.
TEST(TypeBoxDialect, OpenTuplesAreNotLaidOut) {
  const json f32 = {{"type", "number"}, {"TypeDef:Float32", true}};
  const json open = {{"type", "object"}, {"properties", {{"x", {{"type", "array"}, {"items", {f32, f32}}}}}}};
  EXPECT_EQ(compile_error(open, mt::schema_source::embedded), errc::mt_schema_dialect);
  EXPECT_EQ(compile_error(open, mt::schema_source::authored), errc::mt_schema_type);  // §4.5: not closed
  json closed = open;
  closed["properties"]["x"]["additionalItems"] = false;
  const auto s = mt::compile_schema(closed);
  EXPECT_EQ(s.find("x")->kind, mt::tensor_kind::record);
  EXPECT_EQ(s.find("x")->record->size, 8u);
}

}  // namespace
