// Header schemas, "a model is one struct" (docs/metatensor.md "Header
// schemas"): a schema whose leaves are TensorRef objects validates the
// safetensors header grouped by dotted names, and the grouping gives typed
// access. The concept paper's TensorRef/Layer/Model example is used exactly
// as TypeBox emits it (data/typebox/concept_model.json, concept_module.json).
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <metatensor/file.hpp>
#include <metatensor/header_schema.hpp>
#include <metatensor/layout.hpp>
#include <metatensor/safetensors.hpp>
#include <metatensor/writer.hpp>
#include <nlohmann/json.hpp>
#include <numeric>
#include <string>
#include <vector>

#include "tensogram/core/error.hpp"

namespace {

using json = nlohmann::json;
namespace mt = metatensor;
namespace st = metatensor::safetensors;
using mt::errc;

json load(const std::string& name) {
  std::ifstream in(std::filesystem::path(MT_TYPEBOX_DATA) / name);
  EXPECT_TRUE(in.good()) << name;
  return json::parse(in);
}

struct tensor_spec {
  std::string name;
  st::dtype type = st::dtype::f32;
  std::vector<std::uint64_t> shape;
};

// The paper's model: two layers of weight, bias, running_mean, running_var.
std::vector<tensor_spec> concept_tensors() {
  std::vector<tensor_spec> out;
  for (const std::string layer : {"conv1", "conv2"}) {
    const std::uint64_t in = layer == "conv1" ? 1 : 20;
    out.push_back({layer + ".weight", st::dtype::f32, {20, in, 5, 5}});
    out.push_back({layer + ".bias", st::dtype::f32, {20}});
    out.push_back({layer + ".running_mean", st::dtype::f32, {20}});
    out.push_back({layer + ".running_var", st::dtype::f32, {20}});
  }
  return out;
}

std::uint64_t count(const std::vector<std::uint64_t>& shape) {
  return std::accumulate(shape.begin(), shape.end(), std::uint64_t{1}, std::multiplies<>());
}

// Element i of every tensor holds `seed(name) + i`, so views can be checked.
float seed(const std::string& name) {
  return static_cast<float>(std::hash<std::string>{}(name) % 1000);
}

// A metatensor file written by our writer: one flat logical tensor per entry.
std::vector<std::byte> write_metatensor(const std::vector<tensor_spec>& tensors) {
  json props = json::object();
  for (const auto& t : tensors) {
    json s = mt::scalar_schema(t.type);
    for (std::size_t d = 0; d < t.shape.size(); ++d) s = {{"type", "array"}, {"items", s}};
    props[t.name] = s;
  }
  mt::file_builder b(mt::compile_schema({{"type", "object"}, {"properties", props}}));
  for (const auto& t : tensors) {
    const std::uint64_t n = count(t.shape);
    if (t.type == st::dtype::f32) {
      std::vector<float> v(n);
      for (std::uint64_t i = 0; i < n; ++i) v[i] = seed(t.name) + static_cast<float>(i);
      b.set_flat<float>(t.name, t.shape, v);
    } else {
      std::vector<std::byte> raw(n * st::dtype_bits(t.type) / 8);
      b.set_flat_bytes(t.name, t.shape, raw);
    }
  }
  return b.serialize();
}

// A plain safetensors file.
std::vector<std::byte> write_plain(const std::vector<tensor_spec>& tensors) {
  std::vector<std::vector<std::byte>> data;
  std::vector<st::tensor_input> inputs;
  data.reserve(tensors.size());
  for (const auto& t : tensors) {
    data.emplace_back(count(t.shape) * st::dtype_bits(t.type) / 8);
    inputs.push_back({t.name, t.type, t.shape, data.back()});
  }
  return st::serialize(inputs);
}

st::file plain_file(const std::vector<tensor_spec>& tensors) {
  return st::file::from_buffer(tensogram::buffer::owned(write_plain(tensors)));
}

// The MT_HEADER_SCHEMA message of validating `tensors` against `schema`.
std::string failure(const std::vector<tensor_spec>& tensors, const mt::header_schema& schema) {
  try {
    (void)mt::validate_header(plain_file(tensors), schema);
  } catch (const mt::error& e) {
    EXPECT_EQ(e.kind(), errc::mt_header_schema) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "accepted";
  return {};
}

std::vector<tensor_spec> without(std::vector<tensor_spec> tensors, const std::string& name) {
  std::erase_if(tensors, [&](const tensor_spec& t) { return t.name == name; });
  return tensors;
}

std::vector<tensor_spec> with(std::vector<tensor_spec> tensors, const tensor_spec& changed) {
  std::erase_if(tensors, [&](const tensor_spec& t) { return t.name == changed.name; });
  tensors.push_back(changed);
  return tensors;
}

TEST(HeaderSchemaData, IsTheConceptExampleAsTypeBoxEmitsIt) {
  const json model = load("concept_model.json");
  EXPECT_EQ(model["additionalProperties"], false);
  const json& ref = model["properties"]["conv1"]["properties"]["weight"];
  EXPECT_EQ(ref["required"], json({"dtype", "shape", "data_offsets"}));
  EXPECT_TRUE(ref["properties"]["data_offsets"]["items"].is_array());  // draft-07 tuple
  EXPECT_TRUE(ref["properties"]["dtype"].contains("anyOf"));           // Union of Literals
  const json module = load("concept_module.json");
  EXPECT_EQ(module["$ref"], "Model");
}

// The paper's example validates a real file written from it, in both TypeBox
// renderings, as a metatensor file (padding tensors left out) and as plain
// safetensors.
TEST(HeaderSchema, ConceptModelValidatesAWrittenFile) {
  const auto image = write_metatensor(concept_tensors());
  const auto f = mt::file::from_buffer(tensogram::buffer::owned(image));
  bool padded = false;
  for (const auto& t : f.base().tensors()) padded = padded || t.name().starts_with("__pad__");
  ASSERT_TRUE(padded) << "the test wants a file with padding tensors";
  for (const char* name : {"concept_model.json", "concept_module.json"}) {
    SCOPED_TRACE(name);
    const mt::header_schema schema(load(name));
    const mt::tensor_group model = mt::validate_header(f, schema);
    EXPECT_EQ(model.members(), std::vector<std::string>({"conv1", "conv2"}));
    const mt::tensor_group w = model["conv1"]["weight"];
    EXPECT_TRUE(w.is_tensor());
    EXPECT_EQ(w.name(), "conv1.weight");
    EXPECT_EQ(&w.tensor(), &f.primary("conv1.weight"));
    const auto shape = w.tensor().shape();
    EXPECT_EQ(std::vector<std::uint64_t>(shape.begin(), shape.end()),
              std::vector<std::uint64_t>({20, 1, 5, 5}));
    const auto values = model["conv2"]["running_var"].as<float>();
    ASSERT_EQ(values.size(), 20u);
    EXPECT_EQ(values[7], seed("conv2.running_var") + 7.0f);
    EXPECT_EQ(values.data(), reinterpret_cast<const float*>(f.primary("conv2.running_var").bytes().data()));
    EXPECT_EQ(model["conv1"].tensors().size(), 4u);
    EXPECT_EQ(model.tensors().size(), 8u);
    // Plain safetensors, with an I16 tensor (the Union allows F32 and I16).
    EXPECT_NO_THROW((void)mt::validate_header(
        plain_file(with(concept_tensors(), {"conv1.bias", st::dtype::i16, {20}})), schema));
  }
}

TEST(HeaderSchema, FailuresNameTheTensorAndThePointer) {
  const mt::header_schema schema(load("concept_model.json"));
  const auto good = concept_tensors();
  ASSERT_NO_THROW((void)mt::validate_header(plain_file(good), schema));

  std::string m = failure(without(good, "conv2.running_var"), schema);
  EXPECT_NE(m.find("\"conv2.running_var\" is missing (/conv2)"), std::string::npos) << m;

  m = failure(without(without(without(without(good, "conv2.weight"), "conv2.bias"), "conv2.running_mean"),
                      "conv2.running_var"),
              schema);
  EXPECT_NE(m.find("\"conv2\" is missing (/)"), std::string::npos) << m;

  m = failure(with(good, {"conv1.bias", st::dtype::f64, {20}}), schema);
  EXPECT_NE(m.find("tensor \"conv1.bias\" (/conv1/bias/dtype)"), std::string::npos) << m;
  EXPECT_NE(m.find("anyOf"), std::string::npos) << m;

  // Model has additionalProperties: false; Layer does not.
  m = failure(with(good, {"conv3.weight", st::dtype::f32, {2}}), schema);
  EXPECT_NE(m.find("group \"conv3\" (/conv3)"), std::string::npos) << m;
  m = failure(with(good, {"head", st::dtype::f32, {2}}), schema);
  EXPECT_NE(m.find("tensor \"head\" (/head)"), std::string::npos) << m;
  EXPECT_NO_THROW(
      (void)mt::validate_header(plain_file(with(good, {"conv1.extra", st::dtype::f32, {2}})), schema));

  // A group where a TensorRef is expected: its entry members are missing.
  m = failure(with(without(good, "conv1.bias"), {"conv1.bias.x", st::dtype::f32, {2}}), schema);
  EXPECT_NE(m.find("\"conv1.bias.dtype\" is missing (/conv1/bias)"), std::string::npos) << m;
}

// Exact dtypes (const) and shapes (tuples of consts, bounded arrays).
TEST(HeaderSchema, ExactShapes) {
  const mt::header_schema schema(load("exact_model.json"));
  const std::vector<tensor_spec> good = {{"conv1.weight", st::dtype::f32, {20, 1, 5, 5}},
                                         {"conv1.bias", st::dtype::f32, {20}},
                                         {"fc.weight", st::dtype::f32, {10, 20}}};
  EXPECT_NO_THROW((void)mt::validate_header(plain_file(good), schema));
  EXPECT_NO_THROW(
      (void)mt::validate_header(plain_file(with(good, {"fc.bias", st::dtype::f32, {10}})), schema));

  std::string m = failure(with(good, {"conv1.weight", st::dtype::f32, {20, 1, 5, 4}}), schema);
  EXPECT_NE(m.find("tensor \"conv1.weight\" (/conv1/weight/shape/3)"), std::string::npos) << m;
  m = failure(with(good, {"conv1.weight", st::dtype::f32, {20, 1, 5}}), schema);
  EXPECT_NE(m.find("tensor \"conv1.weight\" (/conv1/weight/shape)"), std::string::npos) << m;
  m = failure(with(good, {"conv1.weight", st::dtype::f16, {20, 1, 5, 5}}), schema);
  EXPECT_NE(m.find("tensor \"conv1.weight\" (/conv1/weight/dtype)"), std::string::npos) << m;
  m = failure(with(good, {"fc.bias", st::dtype::f32, {12}}), schema);
  EXPECT_NE(m.find("tensor \"fc.bias\" (/fc/bias/shape/0)"), std::string::npos) << m;
  m = failure(with(good, {"conv1.extra", st::dtype::f32, {1}}), schema);
  EXPECT_NE(m.find("tensor \"conv1.extra\" (/conv1/extra)"), std::string::npos) << m;
}

TEST(HeaderSchema, GroupedHeader) {
  const auto f =
      plain_file({{"a.b", st::dtype::u8, {3}}, {"a.c.d", st::dtype::i16, {}}, {"e", st::dtype::f64, {0}}});
  const json g = mt::grouped_header(f);
  EXPECT_EQ(g["a"]["b"]["dtype"], "U8");
  EXPECT_EQ(g["a"]["b"]["shape"], json({3}));
  const auto& t = f.at("a.c.d");
  EXPECT_EQ(g["a"]["c"]["d"],
            json({{"dtype", "I16"}, {"shape", json::array()}, {"data_offsets", {t.begin(), t.end()}}}));
  EXPECT_EQ(g["e"]["shape"], json::array({0}));
  EXPECT_EQ(g.size(), 2u);
  const mt::tensor_group root = mt::group_tensors(f);
  EXPECT_TRUE(root.contains("a"));
  EXPECT_FALSE(root["a"].is_tensor());
  EXPECT_EQ(root["a"]["c"]["d"].name(), "a.c.d");
  EXPECT_THROW((void)root["a"]["x"], tensogram::invalid_arg_error);
  EXPECT_THROW((void)root["a"].tensor(), tensogram::invalid_arg_error);
  EXPECT_THROW((void)root["e"]["f"], tensogram::invalid_arg_error);
}

TEST(HeaderSchema, NamesThatAreBothTensorAndGroup) {
  for (const auto& tensors :
       {std::vector<tensor_spec>{{"a", st::dtype::u8, {1}}, {"a.b", st::dtype::u8, {1}}},
        std::vector<tensor_spec>{{"a.b", st::dtype::u8, {1}}, {"a", st::dtype::u8, {1}}}}) {
    try {
      (void)mt::group_tensors(plain_file(tensors));
      ADD_FAILURE() << "grouped";
    } catch (const mt::error& e) {
      EXPECT_EQ(e.kind(), errc::mt_header_schema);
      EXPECT_NE(std::string(e.what()).find("\"a\""), std::string::npos) << e.what();
    }
  }
}

TEST(HeaderSchema, SchemaErrors) {
  auto kind = [](const std::function<void()>& f) {
    try {
      f();
    } catch (const mt::error& e) {
      return e.kind();
    }
    return errc::mt_limit;
  };
  EXPECT_EQ(kind([] {
              (void)mt::header_schema(json{{"patternProperties", json::object()}});
            }),
            errc::mt_schema_dialect);
  EXPECT_EQ(kind([] { (void)mt::header_schema::from_text(R"({"type":"object","type":"object"})"); }),
            errc::mt_schema_json);
  EXPECT_EQ(kind([] { (void)mt::header_schema::from_text("{"); }), errc::mt_schema_json);
  const auto s = mt::header_schema::from_text(load("concept_module.json").dump());
  EXPECT_FALSE(s.document().contains("$ref"));  // the module root was read
}

}  // namespace
