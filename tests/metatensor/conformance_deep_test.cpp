// Conformance corpus (spec 06 §13), deep validation (§8.1 step 9, §8.3):
// BOOL bytes, UTF-8, padding and heap gaps, and the schema's value keywords
// evaluated on the projected logical value.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <metatensor.hpp>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "conformance_support.hpp"

namespace {

using namespace metatensor_test;               // NOLINT: test helpers
using namespace metatensor_test::conformance;  // NOLINT: test helpers

TEST(ConformanceDeep, FieldValueConstraint) {
  auto f = example();
  poke<double>(f.at("particles").data, 48 + 8, -1.0);
  EXPECT_EQ(verdict(f), "valid");
  EXPECT_EQ(verdict(f, true), "MT_VALUE");
  const auto msg = deep_message(f);
  EXPECT_NE(msg.find("/particles/1/mass"), std::string::npos) << msg;
  // NaN passes minimum (§8.3).
  poke<double>(f.at("particles").data, 48 + 8, std::numeric_limits<double>::quiet_NaN());
  EXPECT_EQ(verdict(f, true), "valid");
  poke<double>(f.at("particles").data, 48 + 8, -std::numeric_limits<double>::infinity());
  EXPECT_EQ(verdict(f, true), "MT_VALUE");
}

spec_file with_positions_items(const std::string& items, float value) {
  auto f = example();
  f.metadata["metatensor.schema"] = example_schema(R"(,"minimum":0)", items);
  poke<float>(f.at("positions").data, 4 * 4, value);  // positions[1][1]
  return f;
}

TEST(ConformanceDeep, FlatValueConstraintsAndNonFinite) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  const std::string num = R"("type":"number","TypeDef:Float32":true)";
  EXPECT_EQ(verdict(with_positions_items("{" + num + R"(,"maximum":10})", 11.f), true), "MT_VALUE");
  EXPECT_NE(deep_message(with_positions_items("{" + num + R"(,"maximum":10})", 11.f)).find("/positions/1/1"),
            std::string::npos);
  EXPECT_EQ(verdict(with_positions_items("{" + num + R"(,"maximum":10})", nan), true), "valid");
  EXPECT_EQ(verdict(with_positions_items("{" + num + R"(,"maximum":10})", inf), true), "MT_VALUE");
  EXPECT_EQ(verdict(with_positions_items("{" + num + R"(,"minimum":-10})", -inf), true), "MT_VALUE");
  EXPECT_EQ(verdict(with_positions_items("{" + num + R"(,"multipleOf":0.5})", 2.f), true), "valid");
  EXPECT_EQ(verdict(with_positions_items("{" + num + R"(,"multipleOf":0.5})", 2.25f), true), "MT_VALUE");
  EXPECT_EQ(verdict(with_positions_items("{" + num + R"(,"multipleOf":0.5})", nan), true), "MT_VALUE");
  EXPECT_EQ(verdict(with_positions_items("{" + num + R"(,"multipleOf":0.5})", inf), true), "MT_VALUE");
  EXPECT_EQ(verdict(with_positions_items("{" + num + R"(,"enum":[0.5,1.5,2.5,-1,-2,-3]})", nan), true),
            "MT_VALUE");
  EXPECT_EQ(verdict(with_positions_items("{" + num + R"(,"enum":[0.5,1.5,2.5,-1,-2,-3]})", -2.f), true),
            "valid");
  // "integer" on a float leaf is a value constraint (§4.4).
  EXPECT_EQ(verdict(with_positions_items(R"({"type":"integer","TypeDef:Float32":true})", 1.5f), true),
            "MT_VALUE");
}

TEST(ConformanceDeep, DimensionValueKeywordsProjectSubArrays) {
  // uniqueItems on the inner dimension: each row is projected and evaluated.
  auto f = example();
  auto schema = json::parse(example_schema());
  schema["properties"]["positions"]["items"]["uniqueItems"] = true;
  f.metadata["metatensor.schema"] = schema.dump();
  EXPECT_EQ(verdict(f, true), "valid");
  poke<float>(f.at("positions").data, 4 * 4, -1.f);  // row 1 = [-1, -1, -3]
  EXPECT_EQ(verdict(f, true), "MT_VALUE");
  EXPECT_NE(deep_message(f).find("/positions/1"), std::string::npos) << deep_message(f);
  // contains on the outer dimension: the whole tensor is projected.
  f = example();
  schema = json::parse(example_schema());
  schema["properties"]["labels"]["contains"] = json{{"const", "green"}};
  f.metadata["metatensor.schema"] = schema.dump();
  EXPECT_EQ(verdict(f, true), "valid");
  schema["properties"]["labels"]["contains"] = json{{"const", "purple"}};
  f.metadata["metatensor.schema"] = schema.dump();
  EXPECT_EQ(verdict(f, true), "MT_VALUE");
  // String keywords on a blob element.
  schema = json::parse(example_schema());
  schema["properties"]["labels"]["items"]["maxLength"] = 4;
  f.metadata["metatensor.schema"] = schema.dump();
  EXPECT_EQ(verdict(f, true), "MT_VALUE");
  EXPECT_NE(deep_message(f).find("/labels/1"), std::string::npos) << deep_message(f);
  // Root-level value keywords: the whole logical value is evaluated.
  schema = json::parse(example_schema());
  schema["allOf"] = json::array({json{{"type", "array"}}});
  f.metadata["metatensor.schema"] = schema.dump();
  EXPECT_EQ(verdict(f, true), "MT_VALUE");
}

TEST(ConformanceDeep, BoolUtf8AndRecordPadding) {
  // Non-0/1 BOOL in a flat tensor.
  spec_file b;
  b.metadata = mt_metadata(
      R"({"type":"object","properties":{"m":{"type":"array","items":{"type":"boolean","TypeDef:Bool":true}}}})",
      R"({"tensors":{"m":{"kind":"flat","data":"m","rank":1,"align":64,"dtype":"BOOL"}}})");
  b.tensors = {{"m", "BOOL", {3}, {std::byte{0}, std::byte{1}, std::byte{1}}}};
  EXPECT_EQ(verdict(b, true), "valid");
  b.tensors[0].data[2] = std::byte{2};
  EXPECT_EQ(verdict(b), "valid");
  EXPECT_EQ(verdict(b, true), "MT_BOOL");
  EXPECT_NE(deep_message(b).find("/m/2"), std::string::npos) << deep_message(b);

  // Invalid UTF-8 in a label and in a particle name.
  auto f = example();
  f.at("labels#heap").data[4] = std::byte{0xFF};
  EXPECT_EQ(verdict(f), "valid");
  EXPECT_EQ(verdict(f, true), "MT_UTF8");
  EXPECT_NE(deep_message(f).find("/labels/1"), std::string::npos) << deep_message(f);
  f = example();
  f.at("particles#heap").data[6] = std::byte{0xC0};
  EXPECT_EQ(verdict(f, true), "MT_UTF8");
  EXPECT_NE(deep_message(f).find("/particles/1/name"), std::string::npos) << deep_message(f);

  // BOOL comes before UTF-8, UTF-8 before padding, padding before values.
  f = example();
  f.at("labels#heap").data[4] = std::byte{0xFF};
  f.at("__pad__0").data[0] = std::byte{1};
  EXPECT_EQ(verdict(f, true), "MT_UTF8");
  f = example();
  f.at("particles").data[4] = std::byte{1};  // inner padding after id
  poke<double>(f.at("particles").data, 8, -1.0);
  EXPECT_EQ(verdict(f, true), "MT_NONZERO_PADDING");
  EXPECT_NE(deep_message(f).find("/particles/0"), std::string::npos) << deep_message(f);
  f = example();
  f.at("particles").data[48 + 29] = std::byte{1};  // padding after vel in record 1
  EXPECT_EQ(verdict(f, true), "MT_NONZERO_PADDING");
}

TEST(ConformanceDeep, HeapGapsMustBeZero) {
  auto f = example();
  // "alpha" + "beta" cover the heap; shrink "beta" to "bet": heap byte 8 uncovered.
  poke<std::uint64_t>(f.at("particles").data, 48 + 40, 3);
  EXPECT_EQ(verdict(f, true), "MT_NONZERO_PADDING");
  f.at("particles#heap").data[8] = std::byte{0};
  EXPECT_EQ(verdict(f, true), "valid");
  // Out-of-order blobs use the sorting path.
  f = example();
  poke<std::uint64_t>(f.at("labels").data, 0, 8);  // red -> "blu", listed before offset 3
  poke<std::uint64_t>(f.at("labels").data, 16, 3);
  poke<std::uint64_t>(f.at("labels").data, 32, 3);
  poke<std::uint64_t>(f.at("labels").data, 40, 5);  // bytes [0,3) uncovered: "red"
  EXPECT_EQ(verdict(f, true), "MT_NONZERO_PADDING");
}

// Deep validation of large tensors evaluates element by element.
TEST(ConformanceDeep, LargeFlatTensorWithValueKeyword) {
  const std::size_t n = 200'000;
  std::vector<std::byte> data;
  data.reserve(4 * n);
  for (std::size_t i = 0; i < n; ++i) put(data, static_cast<float>(i % 1000));
  spec_file f;
  f.metadata = mt_metadata(
      R"({"type":"object","properties":{"w":{"type":"array","items":{"type":"number","TypeDef:Float32":true,)"
      R"("minimum":0,"maximum":999}}}})",
      R"({"tensors":{"w":{"kind":"flat","data":"w","rank":1,"align":64,"dtype":"F32"}}})");
  f.tensors = {{"w", "F32", {n}, data}};
  EXPECT_EQ(verdict(f, true), "valid");
  poke<float>(f.at("w").data, 4 * (n - 1), 1000.f);
  EXPECT_EQ(deep_message(f).substr(0, 38), "framing error: MT_VALUE: /w/199999: ma");
}

// Deep validation's native path for numeric bounds on flat tensors must agree
// with the JSON Schema evaluator run on the projected logical value, for every
// dtype it covers, with NaN, infinities and values on each bound.
TEST(ConformanceDeep, NumericBoundsFastPathAgreesWithTheEvaluator) {
  const std::vector<std::pair<mt::dtype, const char*>> dtypes = {
      {mt::dtype::u8, "TypeDef:Uint8"},          {mt::dtype::i8, "TypeDef:Int8"},
      {mt::dtype::u16, "TypeDef:Uint16"},        {mt::dtype::i16, "TypeDef:Int16"},
      {mt::dtype::u32, "TypeDef:Uint32"},        {mt::dtype::i32, "TypeDef:Int32"},
      {mt::dtype::f16, "TypeDef:Float16"},       {mt::dtype::bf16, "TypeDef:BFloat16"},
      {mt::dtype::f32, "TypeDef:Float32"},       {mt::dtype::f64, "TypeDef:Float64"},
      {mt::dtype::f8_e5m2, "TypeDef:Float8E5M2"}};
  const std::vector<json> bound_sets = {
      {{"minimum", 0}, {"maximum", 100}},
      {{"exclusiveMinimum", -2.5}, {"exclusiveMaximum", 3}},
      {{"minimum", 1}},
      {{"maximum", -1}},
  };
  // Values as JSON (set_json rounds them to the dtype); NaN/inf only for floats.
  const std::vector<double> finite = {0, 1, -1, 3, 100, 101, -3, 2.5, 50, 7};
  std::size_t checked = 0;
  std::size_t failing = 0;
  for (const auto& [t, keyword] : dtypes) {
    const bool is_float = t == mt::dtype::f16 || t == mt::dtype::bf16 || t == mt::dtype::f32 ||
                          t == mt::dtype::f64 || t == mt::dtype::f8_e5m2;
    const bool is_unsigned = t == mt::dtype::u8 || t == mt::dtype::u16 || t == mt::dtype::u32;
    for (const json& bounds : bound_sets) {
      for (std::size_t k = 0; k < finite.size() + 3; ++k) {
        json leaf = {{"type", is_float ? "number" : "integer"}, {keyword, true}};
        for (const auto& [bk, bv] : bounds.items()) leaf[bk] = bv;
        const json schema = {{"type", "object"},
                             {"properties", {{"x", {{"type", "array"}, {"items", leaf}}}}}};
        json values = json::array();
        for (double v : finite) {
          if (is_unsigned && v < 0) v = -v;
          if (!is_float && v != std::floor(v)) v = std::floor(v);
          values.push_back(v);
        }
        // Vary one position: a value outside or on the bounds, NaN, +inf, -inf.
        if (k < finite.size()) {
          values[k] = is_unsigned ? 200.0 : -200.0;
        } else if (is_float) {
          const double special[] = {std::numeric_limits<double>::quiet_NaN(),
                                    std::numeric_limits<double>::infinity(),
                                    -std::numeric_limits<double>::infinity()};
          values[k % 3] = special[k - finite.size()];
        }
        if (t == mt::dtype::u8 || t == mt::dtype::i8) {
          for (auto& v : values)
            if (v.is_number() && std::isfinite(v.get<double>()) && std::abs(v.get<double>()) > 100) v = 101;
        }
        mt::file_builder b(mt::compile_schema(schema));
        b.set_json("x", values);
        const auto f = mt::file::from_buffer(tensogram::buffer::owned(b.serialize()));
        const mt::json_schema_evaluator ev(f.schema().document());
        const auto oracle = ev.validate(f.logical_value());
        std::optional<std::string> ours;
        try {
          f.validate_deep();
        } catch (const mt::error& e) {
          EXPECT_EQ(e.kind(), mt::errc::mt_value);
          ours = e.what();
        }
        ++checked;
        ASSERT_EQ(ours.has_value(), oracle.has_value())
            << keyword << " " << bounds.dump() << " values " << f.logical_value().dump();
        if (oracle) {
          ++failing;
          EXPECT_NE(ours->find(oracle->pointer), std::string::npos) << *ours << " vs " << oracle->pointer;
        }
      }
    }
  }
  EXPECT_GT(failing, checked / 4);  // both verdicts occur often
  EXPECT_LT(failing, checked);
}

}  // namespace
