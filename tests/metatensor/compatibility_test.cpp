// Schema evolution (spec 06 §11): one test per row of the §11.3 change table.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "metatensor/compatibility.hpp"

namespace {

using metatensor::compatibility_class;
using nlohmann::json;

// A schema with one struct tensor `p` whose record is `fields` in `order`.
json struct_schema(const json& fields, const json& order, const json& extra_root = json::object()) {
  json s = {
      {"type", "object"},
      {"properties",
       {{"p",
         {{"type", "array"},
          {"items",
           {{"type", "object"}, {"TypeDef:Struct", true}, {"properties", fields}, {"required", order}}}}}}}};
  for (const auto& [k, v] : extra_root.items()) s["properties"][k] = v;
  return s;
}

json scalar(const char* keyword, const char* type = "number") {
  return {{"type", type}, {keyword, true}};
}

json base_fields() {
  return {{"id", scalar("TypeDef:Uint32", "integer")}, {"mass", scalar("TypeDef:Float32")}};
}

metatensor::compatibility_report diff(const json& old_schema, const json& new_schema) {
  return metatensor::compatibility(metatensor::compile_schema(old_schema),
                                   metatensor::compile_schema(new_schema));
}

compatibility_class verdict(const json& old_schema, const json& new_schema) {
  return diff(old_schema, new_schema).verdict;
}

const json kOrder = {"id", "mass"};

TEST(MetatensorCompatibility, UnchangedAndAnnotationsAreIdentical) {
  const json s = struct_schema(base_fields(), kOrder);
  const auto same = diff(s, s);
  EXPECT_EQ(same.verdict, compatibility_class::identical);
  ASSERT_EQ(same.changes.size(), 1u);
  EXPECT_EQ(same.changes[0].change, "unchanged");

  json annotated = s;
  annotated["properties"]["p"]["description"] = "particles";
  annotated["properties"]["p"]["items"]["properties"]["mass"]["title"] = "mass in kg";
  annotated["properties"]["p"]["items"]["properties"]["mass"]["minimum"] = 0;  // tightened constraint
  const auto r = diff(s, annotated);
  EXPECT_EQ(r.verdict, compatibility_class::identical);
  EXPECT_EQ(r.changes.at(0).change, "annotations, value constraints or $ref structure changed");
}

TEST(MetatensorCompatibility, DefsRestructuringWithSameTypesIsIdentical) {
  const json inline_schema = struct_schema(base_fields(), kOrder);
  json by_ref = {{"type", "object"},
                 {"$defs",
                  {{"Particle",
                    {{"type", "object"},
                     {"TypeDef:Struct", true},
                     {"properties", base_fields()},
                     {"required", kOrder}}}}},
                 {"properties", {{"p", {{"type", "array"}, {"items", {{"$ref", "#/$defs/Particle"}}}}}}}};
  EXPECT_EQ(verdict(inline_schema, by_ref), compatibility_class::identical);
}

TEST(MetatensorCompatibility, RootPropertiesAddedAndRemoved) {
  const json s = struct_schema(base_fields(), kOrder);
  const json extra = {{"w", {{"type", "array"}, {"items", scalar("TypeDef:Float64")}}}};
  const json with_w = struct_schema(base_fields(), kOrder, extra);
  EXPECT_EQ(verdict(s, with_w), compatibility_class::compatible);  // added, optional
  EXPECT_EQ(verdict(with_w, s), compatibility_class::compatible);  // removed
  json required_w = with_w;
  required_w["required"] = {"w"};
  const auto r = diff(s, required_w);
  EXPECT_EQ(r.verdict, compatibility_class::incompatible);  // added to required
  EXPECT_THROW(metatensor::require_compatible(r), metatensor::error);
  try {
    metatensor::require_compatible(r);
  } catch (const metatensor::error& e) {
    EXPECT_EQ(e.kind(), metatensor::errc::mt_schema_incompatible);
    EXPECT_NE(std::string(e.what()).find("w: root property added to required"), std::string::npos)
        << e.what();
  }
  EXPECT_EQ(verdict(with_w, required_w), compatibility_class::incompatible);  // optional became required
  EXPECT_EQ(verdict(required_w, with_w), compatibility_class::identical);     // required loosened
}

TEST(MetatensorCompatibility, FieldsAddedRemovedReordered) {
  const json s = struct_schema(base_fields(), kOrder);
  json with_default = base_fields();
  with_default["charge"] = scalar("TypeDef:Float32");
  with_default["charge"]["default"] = 0;
  EXPECT_EQ(verdict(s, struct_schema(with_default, {"charge", "id", "mass"})),
            compatibility_class::view_compatible);
  json without_default = base_fields();
  without_default["charge"] = scalar("TypeDef:Float32");
  const auto r = diff(s, struct_schema(without_default, {"id", "mass", "charge"}));
  EXPECT_EQ(r.verdict, compatibility_class::incompatible);
  bool named = false;
  for (const auto& c : r.changes)
    named |= c.path == "p.charge" && c.change == "field added without a default";
  EXPECT_TRUE(named);
  // Removing a field and reordering are view-compatible.
  EXPECT_EQ(verdict(s, struct_schema({{"mass", scalar("TypeDef:Float32")}}, {"mass"})),
            compatibility_class::view_compatible);
  EXPECT_EQ(verdict(s, struct_schema(base_fields(), {"mass", "id"})), compatibility_class::view_compatible);
}

TEST(MetatensorCompatibility, AlignmentChanges) {
  const json s = struct_schema(base_fields(), kOrder);
  json raised_field = base_fields();
  raised_field["mass"]["TypeDef:Align"] = 16;
  EXPECT_EQ(verdict(s, struct_schema(raised_field, kOrder)), compatibility_class::view_compatible);
  json raised_struct = s;
  raised_struct["properties"]["p"]["items"]["TypeDef:Struct"] = {{"align", 32}};
  EXPECT_EQ(verdict(s, raised_struct), compatibility_class::view_compatible);
  json root_align = s;
  root_align["properties"]["p"]["TypeDef:Align"] = 256;
  EXPECT_EQ(verdict(s, root_align), compatibility_class::identical);
}

TEST(MetatensorCompatibility, WideningIsConvertibleNarrowingIsNot) {
  const json s = struct_schema(base_fields(), kOrder);
  json wider = base_fields();
  wider["mass"] = scalar("TypeDef:Float64");
  const auto r = diff(s, struct_schema(wider, kOrder));
  EXPECT_EQ(r.verdict, compatibility_class::convertible);
  EXPECT_EQ(verdict(struct_schema(wider, kOrder), s), compatibility_class::incompatible);
  json to_int = base_fields();
  to_int["mass"] = scalar("TypeDef:Int64", "integer");
  EXPECT_EQ(verdict(s, struct_schema(to_int, kOrder)), compatibility_class::incompatible);

  // Flat tensors.
  const auto flat = [](const char* kw) {
    return json{{"type", "object"}, {"properties", {{"x", {{"type", "array"}, {"items", scalar(kw)}}}}}};
  };
  EXPECT_EQ(verdict(flat("TypeDef:Float16"), flat("TypeDef:Float32")), compatibility_class::convertible);
  EXPECT_EQ(verdict(flat("TypeDef:Uint8"), flat("TypeDef:Int16")), compatibility_class::convertible);
  EXPECT_EQ(verdict(flat("TypeDef:Int8"), flat("TypeDef:Uint16")), compatibility_class::incompatible);
  EXPECT_EQ(verdict(flat("TypeDef:Float64"), flat("TypeDef:Float32")), compatibility_class::incompatible);
}

TEST(MetatensorCompatibility, WideningTableOfSection11_4) {
  using metatensor::dtype;
  using metatensor::is_widening;
  EXPECT_TRUE(is_widening(dtype::i8, dtype::i64));  // composition
  EXPECT_TRUE(is_widening(dtype::u8, dtype::i64));  // U8 -> I16 -> I32 -> I64
  EXPECT_TRUE(is_widening(dtype::boolean, dtype::f64));
  EXPECT_TRUE(is_widening(dtype::bf16, dtype::f64));
  EXPECT_TRUE(is_widening(dtype::u32, dtype::f64));
  EXPECT_FALSE(is_widening(dtype::i32, dtype::f32));  // not exact
  EXPECT_FALSE(is_widening(dtype::i64, dtype::f64));
  EXPECT_FALSE(is_widening(dtype::u64, dtype::i64));
  EXPECT_FALSE(is_widening(dtype::i8, dtype::u8));
  EXPECT_FALSE(is_widening(dtype::f32, dtype::f32));
}

TEST(MetatensorCompatibility, KindRankShapeAndStringListChanges) {
  const json s = struct_schema(base_fields(), kOrder);
  const json flat = {{"type", "object"},
                     {"properties", {{"p", {{"type", "array"}, {"items", scalar("TypeDef:Float32")}}}}}};
  EXPECT_EQ(verdict(s, flat), compatibility_class::incompatible);
  const json rank2 = {
      {"type", "object"},
      {"properties",
       {{"p", {{"type", "array"}, {"items", {{"type", "array"}, {"items", scalar("TypeDef:Float32")}}}}}}}};
  EXPECT_EQ(verdict(flat, rank2), compatibility_class::incompatible);

  const auto vec = [](int n) {
    return json{{"type", "array"}, {"minItems", n}, {"maxItems", n}, {"items", scalar("TypeDef:Float32")}};
  };
  json three = base_fields();
  three["vel"] = vec(3);
  json four = base_fields();
  four["vel"] = vec(4);
  EXPECT_EQ(verdict(struct_schema(three, {"id", "mass", "vel"}), struct_schema(four, {"id", "mass", "vel"})),
            compatibility_class::incompatible);

  const json string_item = {{"type", "string"}, {"TypeDef:String", true}};
  const json bytes_item = {
      {"type", "array"}, {"TypeDef:List", true}, {"items", scalar("TypeDef:Uint8", "integer")}};
  const auto blob = [](const json& item) {
    return json{{"type", "object"}, {"properties", {{"b", {{"type", "array"}, {"items", item}}}}}};
  };
  const auto to_list = diff(blob(string_item), blob(bytes_item));
  EXPECT_EQ(to_list.verdict, compatibility_class::convertible);
  const auto to_string = diff(blob(bytes_item), blob(string_item));
  EXPECT_EQ(to_string.verdict, compatibility_class::convertible);
  EXPECT_NE(to_string.changes.at(0).change.find("UTF-8"), std::string::npos);
  const json float_list = {{"type", "array"}, {"TypeDef:List", true}, {"items", scalar("TypeDef:Float32")}};
  EXPECT_EQ(verdict(blob(string_item), blob(float_list)), compatibility_class::incompatible);
}

TEST(MetatensorCompatibility, TupleArityIsIncompatible) {
  const auto tuple = [](int n) {
    json items = json::array();
    for (int i = 0; i < n; ++i) items.push_back(scalar("TypeDef:Float32"));
    return json{
        {"type", "object"},
        {"properties",
         {{"t",
           {{"type", "array"}, {"items", {{"type", "array"}, {"prefixItems", items}, {"items", false}}}}}}}};
  };
  EXPECT_EQ(verdict(tuple(2), tuple(2)), compatibility_class::identical);
  EXPECT_EQ(verdict(tuple(2), tuple(3)), compatibility_class::incompatible);
}

TEST(MetatensorCompatibility, VerdictIsDeterministic) {
  const json a = struct_schema(base_fields(), kOrder);
  json b = base_fields();
  b["mass"] = scalar("TypeDef:Float64");
  b["extra"] = scalar("TypeDef:Int8", "integer");
  b["extra"]["default"] = 1;
  const auto r1 = diff(a, struct_schema(b, {"id", "extra", "mass"}));
  const auto r2 = diff(a, struct_schema(b, {"id", "extra", "mass"}));
  ASSERT_EQ(r1.changes.size(), r2.changes.size());
  for (std::size_t i = 0; i < r1.changes.size(); ++i) {
    EXPECT_EQ(r1.changes[i].path, r2.changes[i].path);
    EXPECT_EQ(r1.changes[i].change, r2.changes[i].change);
  }
  EXPECT_EQ(r1.verdict, compatibility_class::convertible);
}

}  // namespace
