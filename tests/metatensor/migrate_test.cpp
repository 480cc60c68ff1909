// Schema migration: reading files through a newer compatible schema
// (docs/metatensor.md "Schema migration"): each kind of change, zero-copy
// views versus converted values, incompatible pairs naming the schema node,
// hostile schemas.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "metatensor/migrate.hpp"
#include "metatensor/writer.hpp"
#include "tensogram/core/buffer.hpp"

namespace {

using metatensor::compatibility_class;
using metatensor::compile_schema;
using metatensor::migrated_file;
using nlohmann::json;

json scalar(const char* keyword, const char* type = "number") {
  return {{"type", type}, {keyword, true}};
}

json record(const json& fields, const json& order) {
  return {{"type", "object"}, {"TypeDef:Struct", true}, {"properties", fields}, {"required", order}};
}

json root(const json& properties) {
  return {{"type", "object"}, {"properties", properties}};
}

json array_of(const json& items) {
  return {{"type", "array"}, {"items", items}};
}

// A file written with `schema` holding `value`, opened from memory.
metatensor::file write(const json& schema, const json& value) {
  metatensor::file_builder b(compile_schema(schema));
  b.set_logical_value(value);
  return metatensor::file::from_buffer(tensogram::buffer::owned(b.serialize()));
}

migrated_file migrate(const json& writer, const json& value, const json& reader) {
  return migrated_file::resolve(write(writer, value), compile_schema(reader));
}

const std::byte* begin_of(std::span<const std::byte> s) {
  return s.data();
}

// The old point schema: x (F32), y (F32), id (U16).
json old_points() {
  return root({{"points", array_of(record({{"x", scalar("TypeDef:Float32")},
                                           {"y", scalar("TypeDef:Float32")},
                                           {"id", scalar("TypeDef:Uint16", "integer")}},
                                          {"x", "y", "id"}))}});
}
const json kPoints = {
    {"points", {{{"x", 1.5}, {"y", -2.0}, {"id", 7}}, {{"x", 3.25}, {"y", 4.0}, {"id", 65535}}}}};

TEST(MetatensorMigrate, IdenticalLayoutIsTheFilesOwnBytes) {
  json reader = old_points();
  reader["properties"]["points"]["description"] = "annotations only";
  const auto m = migrate(old_points(), kPoints, reader);
  EXPECT_EQ(m.tensor_class("points"), compatibility_class::identical);
  EXPECT_TRUE(m.zero_copy("points"));
  EXPECT_EQ(begin_of(m.records("points").bytes()), begin_of(m.source().records("points").bytes()));
  EXPECT_EQ(m.field("points", "y").data(), m.source().records("points").field("y").data());
}

TEST(MetatensorMigrate, AddedFieldReadsItsDefaultAndKeptFieldsStayViews) {
  json reader = old_points();
  auto& rec = reader["properties"]["points"]["items"];
  rec["properties"]["w"] = scalar("TypeDef:Float64");
  rec["properties"]["w"]["default"] = 0.5;
  rec["properties"]["label"] = {{"type", "string"}, {"TypeDef:String", true}, {"default", "none"}};
  rec["required"] = {"x", "y", "id", "w", "label"};
  const auto m = migrate(old_points(), kPoints, reader);
  EXPECT_EQ(m.tensor_class("points"), compatibility_class::view_compatible);
  EXPECT_FALSE(m.zero_copy("points"));
  const auto recs = m.records("points");
  ASSERT_EQ(recs.size(), 2u);
  EXPECT_EQ(recs.record().size, m.layout("points").record->size);
  EXPECT_EQ(recs[1].get<double>("w"), 0.5);
  EXPECT_EQ(recs[0].string("label"), "none");
  EXPECT_EQ(recs[1].string("label"), "none");
  EXPECT_EQ(recs[1].get<std::uint16_t>("id"), 65535);
  EXPECT_EQ(recs[0].get<float>("x"), 1.5f);
  // x kept its type: a strided view into the file, not into the copy.
  EXPECT_TRUE(m.field_zero_copy("points", "x"));
  EXPECT_EQ(m.field("points", "x").data(), m.source().records("points").field("x").data());
  EXPECT_FALSE(m.field_zero_copy("points", "w"));
  EXPECT_EQ(m.field("points", "w").as<double>()[0], 0.5);
  // The converted records are owned: not inside the file image.
  const auto img = m.source().records("points").bytes();
  EXPECT_TRUE(recs.bytes().data() < img.data() || recs.bytes().data() >= img.data() + img.size());
}

TEST(MetatensorMigrate, ReorderedAndRemovedFieldsAreViews) {
  json reader = old_points();
  auto& rec = reader["properties"]["points"]["items"];
  rec["properties"].erase("y");
  rec["required"] = {"id", "x"};
  const auto m = migrate(old_points(), kPoints, reader);
  EXPECT_EQ(m.tensor_class("points"), compatibility_class::view_compatible);
  const auto recs = m.records("points");
  ASSERT_EQ(recs.record().fields.size(), 2u);
  EXPECT_EQ(recs.record().fields[0].name, "id");
  EXPECT_EQ(recs[0].get<std::uint16_t>("id"), 7);
  EXPECT_EQ(recs[1].get<float>("x"), 3.25f);
  EXPECT_THROW((void)recs.field("y"), tensogram::invalid_arg_error);  // removed: not exposed
  EXPECT_TRUE(m.field_zero_copy("points", "id"));
  EXPECT_EQ(m.field("points", "id").at<std::uint16_t>(1), 65535);
}

TEST(MetatensorMigrate, WidenedFieldsAreConvertedExactly) {
  json reader = old_points();
  auto& rec = reader["properties"]["points"]["items"];
  rec["properties"]["x"] = scalar("TypeDef:Float64");
  rec["properties"]["id"] = scalar("TypeDef:Int32", "integer");  // U16 -> I32
  const auto m = migrate(old_points(), kPoints, reader);
  EXPECT_EQ(m.tensor_class("points"), compatibility_class::convertible);
  const auto recs = m.records("points");
  EXPECT_EQ(recs[0].get<double>("x"), 1.5);
  EXPECT_EQ(recs[1].get<std::int32_t>("id"), 65535);
  EXPECT_FALSE(m.field_zero_copy("points", "x"));
  EXPECT_EQ(m.field("points", "x").at<double>(1), 3.25);
  // y is unchanged but moved (x grew): still a view into the file.
  EXPECT_TRUE(m.field_zero_copy("points", "y"));
  EXPECT_EQ(m.field("points", "y").at<float>(1), 4.0f);
}

TEST(MetatensorMigrate, FlatWideningAndEveryIntegerEdge) {
  struct edge {
    const char* from;
    const char* to;
    json value;
  };
  const edge edges[] = {{"TypeDef:Int8", "TypeDef:Int64", -128},
                        {"TypeDef:Uint8", "TypeDef:Int16", 255},
                        {"TypeDef:Uint32", "TypeDef:Int64", 4294967295u},
                        {"TypeDef:Int16", "TypeDef:Float32", -32768},
                        {"TypeDef:Int32", "TypeDef:Float64", -2147483647},
                        {"TypeDef:Float16", "TypeDef:Float64", 0.333251953125},
                        {"TypeDef:BFloat16", "TypeDef:Float32", -1.5},
                        {"TypeDef:Float32", "TypeDef:Float64", 0.1f}};
  for (const auto& e : edges) {
    SCOPED_TRACE(std::string(e.from) + " -> " + e.to);
    const json w = root({{"v", array_of(scalar(e.from))}});
    const json r = root({{"v", array_of(scalar(e.to))}});
    const auto m = migrate(w, {{"v", {e.value, 0}}}, r);
    EXPECT_EQ(m.tensor_class("v"), compatibility_class::convertible);
    EXPECT_FALSE(m.zero_copy("v"));
    const auto v = m.flat("v");
    EXPECT_EQ(v.type(), m.layout("v").flat_dtype);
    ASSERT_EQ(v.size(), 2u);
    // Oracle: the same values written directly with the reader schema.
    const auto direct_file = write(r, {{"v", {e.value, 0}}});  // the views live as long as the file
    const auto direct = direct_file.flat("v").bytes();
    ASSERT_EQ(v.bytes().size(), direct.size());
    EXPECT_EQ(std::memcmp(v.bytes().data(), direct.data(), direct.size()), 0);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(v.bytes().data()) %
                  metatensor::safetensors::dtype_alignment(v.type()),
              0u);
  }
}

TEST(MetatensorMigrate, NestedRecordsAndFixedArraysConvertRecursively) {
  const json inner_w =
      record({{"a", scalar("TypeDef:Int8", "integer")}, {"b", scalar("TypeDef:Float32")}}, {"a", "b"});
  json inner_r =
      record({{"b", scalar("TypeDef:Float64")}, {"a", scalar("TypeDef:Int16", "integer")}}, {"b", "a"});
  inner_r["properties"]["c"] = scalar("TypeDef:Uint8", "integer");
  inner_r["properties"]["c"]["default"] = 9;
  inner_r["required"] = {"b", "a", "c"};
  const auto fixed = [](const json& items) {
    return json{{"type", "array"}, {"minItems", 2}, {"maxItems", 2}, {"items", items}};
  };
  const json w =
      root({{"t", array_of(record({{"pair", fixed(inner_w)}, {"vel", fixed(scalar("TypeDef:Float32"))}},
                                  {"pair", "vel"}))}});
  const json r =
      root({{"t", array_of(record({{"vel", fixed(scalar("TypeDef:Float64"))}, {"pair", fixed(inner_r)}},
                                  {"vel", "pair"}))}});
  const json value = {
      {"t", {{{"pair", {{{"a", -3}, {"b", 0.25}}, {{"a", 4}, {"b", -8.5}}}}, {"vel", {1.0, 2.5}}}}}};
  const auto m = migrate(w, value, r);
  EXPECT_EQ(m.tensor_class("t"), compatibility_class::convertible);
  // Oracle: the reader's logical value is the writer's plus the default.
  json expected = value;
  for (auto& p : expected["t"][0]["pair"]) p["c"] = 9;
  metatensor::file_builder b(compile_schema(r));
  b.set_logical_value(expected);
  const auto direct = metatensor::file::from_buffer(tensogram::buffer::owned(b.serialize()));
  const auto got = m.records("t").bytes();
  const auto want = direct.records("t").bytes();
  ASSERT_EQ(got.size(), want.size());
  EXPECT_EQ(std::memcmp(got.data(), want.data(), got.size()), 0);
  EXPECT_EQ(m.field("t", "vel").at<double>(1), 2.5);
}

TEST(MetatensorMigrate, BlobTensorsAndBlobFields) {
  const json str = {{"type", "string"}, {"TypeDef:String", true}};
  const json bytes = {
      {"type", "array"}, {"TypeDef:List", true}, {"items", scalar("TypeDef:Uint8", "integer")}};
  const json f32s = {{"type", "array"}, {"TypeDef:List", true}, {"items", scalar("TypeDef:Float32")}};
  json f64s = f32s;
  f64s["items"] = scalar("TypeDef:Float64");
  const json w = root({{"names", array_of(str)},
                       {"raw", array_of(bytes)},
                       {"rows", array_of(f32s)},
                       {"recs", array_of(record({{"name", str}, {"vals", f32s}}, {"name", "vals"}))}});
  const json r = root({{"names", array_of(bytes)},
                       {"raw", array_of(str)},
                       {"rows", array_of(f64s)},
                       {"recs", array_of(record({{"vals", f64s}, {"name", str}}, {"vals", "name"}))}});
  const json value = {
      {"names", {"ab", "", "xyz"}},
      {"raw", {{104, 105}, json::array()}},
      {"rows", {{1.5, -2.0}, json::array(), {0.25}}},
      {"recs", {{{"name", "p"}, {"vals", {3.0}}}, {{"name", "qq"}, {"vals", json::array()}}}}};
  const auto m = migrate(w, value, r);
  // String -> List of Uint8: the same index and heap.
  EXPECT_TRUE(m.zero_copy("names"));
  const auto names = m.blobs("names");
  EXPECT_EQ(names.item().type, metatensor::value_type::list);
  EXPECT_EQ(begin_of(names.index()), begin_of(m.source().blobs("names").index()));
  EXPECT_EQ(names.list<std::uint8_t>(2).size(), 3u);
  // List of Uint8 -> String: checked and copied.
  EXPECT_FALSE(m.zero_copy("raw"));
  EXPECT_EQ(m.blobs("raw").string(0), "hi");
  EXPECT_EQ(m.blobs("raw").string(1), "");
  // List elements widened: a new index and heap.
  const auto rows = m.blobs("rows");
  ASSERT_EQ(rows.list<double>(0).size(), 2u);
  EXPECT_EQ(rows.list<double>(0)[1], -2.0);
  EXPECT_EQ(rows.list<double>(1).size(), 0u);
  EXPECT_EQ(rows.list<double>(2)[0], 0.25);
  const auto recs = m.records("recs");
  EXPECT_EQ(recs[1].string("name"), "qq");
  EXPECT_EQ(recs[0].list<double>("vals")[0], 3.0);
  EXPECT_TRUE(m.field_zero_copy("recs", "name"));
  EXPECT_EQ(m.field("recs", "name").string(1), "qq");
}

TEST(MetatensorMigrate, ListToStringNeedsUtf8) {
  const json bytes = {
      {"type", "array"}, {"TypeDef:List", true}, {"items", scalar("TypeDef:Uint8", "integer")}};
  const json w = root({{"raw", array_of(bytes)}});
  const json r = root({{"raw", array_of({{"type", "string"}, {"TypeDef:String", true}})}});
  const auto m = migrate(w, {{"raw", {{0xff, 0x41}}}}, r);
  for (int i = 0; i < 2; ++i) {  // reported at every access, never a half-made view
    try {
      (void)m.blobs("raw");
      ADD_FAILURE() << "expected MT_UTF8";
    } catch (const metatensor::error& e) {
      EXPECT_EQ(e.kind(), metatensor::errc::mt_utf8) << e.what();
      EXPECT_NE(std::string(e.what()).find("/raw/0"), std::string::npos) << e.what();
    }
  }
}

// The error of an incompatible pair: MT_SCHEMA_INCOMPATIBLE naming the node.
std::string incompatible(const json& w, const json& value, const json& r) {
  try {
    (void)migrate(w, value, r);
  } catch (const metatensor::error& e) {
    EXPECT_EQ(e.kind(), metatensor::errc::mt_schema_incompatible) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "expected MT_SCHEMA_INCOMPATIBLE";
  return {};
}

TEST(MetatensorMigrate, IncompatiblePairsNameTheSchemaNode) {
  json narrowed = old_points();
  narrowed["properties"]["points"]["items"]["properties"]["x"] = scalar("TypeDef:Float16");
  std::string what = incompatible(old_points(), kPoints, narrowed);
  EXPECT_NE(what.find("/properties/points/items/properties/x: points.x: F32 -> F16 (not a widening)"),
            std::string::npos)
      << what;

  json added = old_points();
  added["properties"]["points"]["items"]["properties"]["z"] = scalar("TypeDef:Float32");
  added["properties"]["points"]["items"]["required"].push_back("z");
  what = incompatible(old_points(), kPoints, added);
  EXPECT_NE(what.find("/properties/points/items/properties/z: points.z: field added without a default"),
            std::string::npos)
      << what;

  json signedness = old_points();
  signedness["properties"]["points"]["items"]["properties"]["id"] = scalar("TypeDef:Int16", "integer");
  what = incompatible(old_points(), kPoints, signedness);
  EXPECT_NE(what.find("U16 -> I16"), std::string::npos) << what;

  const json w = root({{"v", array_of(scalar("TypeDef:Float32"))}});
  what = incompatible(w, {{"v", {1.0}}}, root({{"v", array_of(scalar("TypeDef:Int64", "integer"))}}));
  EXPECT_NE(what.find("/properties/v/items: v: F32 -> I64"), std::string::npos) << what;
  what = incompatible(w, {{"v", {1.0}}}, root({{"v", array_of(array_of(scalar("TypeDef:Float32")))}}));
  EXPECT_NE(what.find("/properties/v: v: rank changed"), std::string::npos) << what;

  // Through $ref: the pointer is where the field is declared.
  json defs = {{"type", "object"},
               {"$defs", {{"P", record({{"x", scalar("TypeDef:Float64")}}, {"x"})}}},
               {"properties", {{"points", array_of({{"$ref", "#/$defs/P"}})}}}};
  json defs_narrow = defs;
  defs_narrow["$defs"]["P"]["properties"]["x"] = scalar("TypeDef:Float32");
  what = incompatible(defs, {{"points", {{{"x", 1.0}}}}}, defs_narrow);
  EXPECT_NE(what.find("/$defs/P/properties/x: points.x: F64 -> F32"), std::string::npos) << what;
}

TEST(MetatensorMigrate, RemovedTensorsAreNotExposedAndBoundsAreChecked) {
  json r = old_points();
  r["properties"]["other"] = array_of(scalar("TypeDef:Float32"));  // added, optional: absent here
  auto m = migrate(old_points(), kPoints, r);
  EXPECT_EQ(m.tensor_names(), std::vector<std::string>{"points"});
  EXPECT_THROW((void)m.records("other"), tensogram::invalid_arg_error);
  const json w2 =
      root({{"a", array_of(scalar("TypeDef:Float32"))}, {"b", array_of(scalar("TypeDef:Float32"))}});
  m = migrate(w2, {{"a", {1.0}}, {"b", {2.0}}}, root({{"b", array_of(scalar("TypeDef:Float32"))}}));
  EXPECT_EQ(m.tensor_names(), std::vector<std::string>{"b"});
  EXPECT_FALSE(m.contains("a"));
  EXPECT_EQ(m.source().tensor_names().size(), 2u);

  json bounded = old_points();
  bounded["properties"]["points"]["maxItems"] = 1;  // the file has 2 points
  try {
    (void)migrate(old_points(), kPoints, bounded);
    ADD_FAILURE() << "expected MT_SHAPE";
  } catch (const metatensor::error& e) {
    EXPECT_EQ(e.kind(), metatensor::errc::mt_shape);
    EXPECT_NE(std::string(e.what()).find("/properties/points: tensor \"points\" dimension 0 is 2"),
              std::string::npos)
        << e.what();
  }
  EXPECT_EQ(m.flat("b").as<float>()[0], 2.0f);
  EXPECT_THROW((void)m.records("b"), tensogram::invalid_arg_error);  // wrong kind
}

TEST(MetatensorMigrate, HostileReaderSchemasAreRejectedBeforeAnyData) {
  const auto f = write(old_points(), kPoints);
  // Not a schema of the dialect: compile_schema reports it, nothing is read.
  EXPECT_THROW((void)compile_schema(root({{"points", {{"$ref", "#/properties/points"}}}})),
               metatensor::error);
  // A default of the wrong type for its field: MT_VALUE naming the default.
  json bad_default = old_points();
  auto& rec = bad_default["properties"]["points"]["items"];
  rec["properties"]["w"] = scalar("TypeDef:Uint8", "integer");
  rec["properties"]["w"]["default"] = 300;
  rec["required"].push_back("w");
  try {
    (void)migrated_file::resolve(f, compile_schema(bad_default));
    ADD_FAILURE() << "expected MT_VALUE";
  } catch (const metatensor::error& e) {
    EXPECT_EQ(e.kind(), metatensor::errc::mt_value) << e.what();
    EXPECT_NE(std::string(e.what()).find("/points/w (default)"), std::string::npos) << e.what();
  }
  // The same inside a nested record, and a String default that is not text.
  json nested = root(
      {{"t", array_of(record({{"in", record({{"a", scalar("TypeDef:Int8", "integer")}}, {"a"})}}, {"in"}))}});
  json nested_bad = nested;
  auto& in = nested_bad["properties"]["t"]["items"]["properties"]["in"];
  in["properties"]["s"] = {{"type", "string"}, {"TypeDef:String", true}, {"default", 5}};
  in["required"].push_back("s");
  try {
    (void)migrate(nested, {{"t", {{{"in", {{"a", 1}}}}}}}, nested_bad);
    ADD_FAILURE() << "expected MT_VALUE";
  } catch (const metatensor::error& e) {
    EXPECT_EQ(e.kind(), metatensor::errc::mt_value) << e.what();
    EXPECT_NE(std::string(e.what()).find("/t/in/s (default)"), std::string::npos) << e.what();
  }
  // A huge record of defaults: limited by the schema limits (MT_LIMIT).
  json huge = old_points();
  huge["properties"]["points"]["items"]["properties"]["big"] = {{"type", "array"},
                                                                {"minItems", 1 << 25},
                                                                {"maxItems", 1 << 25},
                                                                {"items", scalar("TypeDef:Uint8", "integer")},
                                                                {"default", json::array()}};
  huge["properties"]["points"]["items"]["required"].push_back("big");
  EXPECT_THROW((void)compile_schema(huge), metatensor::error);
}

TEST(MetatensorMigrate, OpenFromDiskThroughFileOpen) {
  const auto dir = std::filesystem::temp_directory_path() / ("mt_migrate_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto path = dir / "old.mt";
  metatensor::file_builder b(compile_schema(old_points()));
  b.set_logical_value(kPoints);
  b.write(path);
  json reader = old_points();
  reader["properties"]["points"]["items"]["properties"]["x"] = scalar("TypeDef:Float64");
  const metatensor::migrated_file m = metatensor::file::open(path, compile_schema(reader));
  EXPECT_EQ(m.records("points")[1].get<double>("x"), 3.25);
  EXPECT_EQ(m.report().verdict, compatibility_class::convertible);
  std::filesystem::remove_all(dir);
}

}  // namespace
