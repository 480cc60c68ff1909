// The metatensor writer (spec 06 §3, §3.5, §5, §6.4, §6.6, §6.7, §7, §8.3,
// Appendix A).
#include <gtest/gtest.h>

#include <unistd.h>

#include <array>
#include <bit>
#include <complex>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <map>
#include <metatensor/file.hpp>
#include <metatensor/layout.hpp>
#include <metatensor/safetensors.hpp>
#include <metatensor/writer.hpp>
#include <string>
#include <tuple>
#include <vector>

#include "spec_files.hpp"

namespace st = metatensor::safetensors;
using metatensor::errc;
using metatensor::file_builder;
using metatensor::writer_options;

namespace {

// §6.7 worked example.
constexpr std::string_view worked_schema = R"({
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "type": "object",
  "required": ["labels", "particles", "positions"],
  "additionalProperties": false,
  "$defs": {
    "Particle": {
      "type": "object", "TypeDef:Struct": true,
      "required": ["id", "mass", "vel", "name"],
      "properties": {
        "id": {"type": "integer", "TypeDef:Uint32": true},
        "mass": {"type": "number", "TypeDef:Float64": true, "minimum": 0},
        "vel": {"type": "array", "minItems": 3, "maxItems": 3, "items": {"type": "number", "TypeDef:Float32": true}},
        "name": {"type": "string", "TypeDef:String": true}
      }
    }
  },
  "properties": {
    "labels": {"type": "array", "items": {"type": "string", "TypeDef:String": true}},
    "particles": {"type": "array", "items": {"$ref": "#/$defs/Particle"}},
    "positions": {"type": "array", "items": {"type": "array", "minItems": 3, "maxItems": 3,
                                             "items": {"type": "number", "TypeDef:Float32": true}}}
  }
})";

const nlohmann::json worked_value = metatensor_test::example_value();

std::uint64_t load_u64(std::span<const std::byte> bytes, std::size_t at) {
  std::uint64_t v = 0;
  std::memcpy(&v, bytes.data() + at, 8);
  return v;
}

template <class T>
T load(std::span<const std::byte> bytes, std::size_t at) {
  T v{};
  std::memcpy(&v, bytes.data() + at, sizeof(T));
  return v;
}

std::string text_of(std::span<const std::byte> bytes) {
  return {reinterpret_cast<const char*>(bytes.data()), bytes.size()};
}

std::vector<std::byte> to_bytes(std::string_view s) {
  std::vector<std::byte> out(s.size());
  if (!s.empty()) std::memcpy(out.data(), s.data(), s.size());
  return out;
}

template <class T>
std::vector<std::byte> pack(std::initializer_list<T> values) {
  std::vector<std::byte> out(values.size() * sizeof(T));
  std::size_t i = 0;
  for (const T& v : values) std::memcpy(out.data() + (i++) * sizeof(T), &v, sizeof(T));
  return out;
}

// Sub-byte tensors have no element type: their bytes as integers.
std::vector<std::uint8_t> raw_u8(const st::tensor_view& t) {
  std::vector<std::uint8_t> out;
  for (auto b : t.bytes()) out.push_back(std::to_integer<std::uint8_t>(b));
  return out;
}

st::file open_bytes(const std::vector<std::byte>& bytes) {
  return st::file::from_buffer(tensogram::buffer::owned(bytes));
}

// The worked example built through the typed API.
file_builder worked_builder(writer_options options = {}) {
  file_builder b(metatensor::compile_schema_text(worked_schema), std::move(options));
  const std::vector<std::string> labels{"red", "green", "blue"};
  b.set_strings("labels", {3}, labels);
  auto& p = b.set_records("particles", {2});
  p.set<std::uint32_t>(0, "id", 7);
  p.set<double>(0, "mass", 1.5);
  p.set<float>(0, "vel[0]", 0.5F);
  p.set<float>(0, "vel[1]", -1.0F);
  p.set<float>(0, "vel[2]", 2.0F);
  p.set_string(0, "name", "alpha");
  p.set<std::uint32_t>(1, "id", 4000000000U);
  p.set_bytes(1, "vel", pack<float>({0.0F, 0.0F, 0.25F}));
  p.set_string(1, "name", "beta");
  const std::vector<float> pos{1, 2, 3, 4.5F, 5, 6};
  b.set_flat<float>("positions", {2, 3}, pos);
  return b;
}

struct expected_entry {
  std::string name;
  st::dtype type;
  std::vector<std::uint64_t> shape;
  std::uint64_t begin;
  std::uint64_t end;
};

void expect_entries(const st::file& f, const std::vector<expected_entry>& want) {
  ASSERT_EQ(f.tensors().size(), want.size());
  std::size_t last_pos = 0;
  for (std::size_t i = 0; i < want.size(); ++i) {
    const auto& t = f.tensors()[i];
    SCOPED_TRACE(want[i].name);
    EXPECT_EQ(t.name(), want[i].name);
    EXPECT_EQ(t.type(), want[i].type);
    EXPECT_EQ(std::vector<std::uint64_t>(t.shape().begin(), t.shape().end()), want[i].shape);
    EXPECT_EQ(t.begin(), want[i].begin);
    EXPECT_EQ(t.end(), want[i].end);
    // §3.5: entries listed in begin order.
    const std::size_t pos = f.header_text().find("\"" + want[i].name + "\":{\"dtype\"");
    ASSERT_NE(pos, std::string_view::npos);
    EXPECT_GT(pos, last_pos);
    last_pos = pos;
  }
}

template <class F>
void expect_error(errc kind, F&& f, std::string_view needle = {}) {
  try {
    f();
    ADD_FAILURE() << "no error thrown, expected " << metatensor::errc_name(kind);
  } catch (const metatensor::error& e) {
    EXPECT_EQ(e.kind(), kind) << e.what();
    if (!needle.empty()) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  }
}

template <class F>
void expect_misuse(F&& f, std::string_view needle = {}) {
  try {
    f();
    ADD_FAILURE() << "no error thrown";
  } catch (const metatensor::error& e) {
    ADD_FAILURE() << "metatensor::error instead of invalid_arg_error: " << e.what();
  } catch (const tensogram::invalid_arg_error& e) {
    if (!needle.empty()) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  }
}

// A schema with one root property per entry of `props` (name → schema text).
metatensor::compiled_schema schema_of(const std::vector<std::pair<std::string, std::string>>& props,
                                      bool all_required = false) {
  nlohmann::json doc = {{"type", "object"}, {"properties", nlohmann::json::object()}};
  nlohmann::json req = nlohmann::json::array();
  for (const auto& [name, text] : props) {
    doc["properties"][name] = nlohmann::json::parse(text);
    req.push_back(name);
  }
  if (all_required) doc["required"] = req;
  return metatensor::compile_schema(doc);
}

}  // namespace

// §6.7: the data section table, BlobRefs and heaps, exactly.
TEST(MetatensorWriter, WorkedExampleLayout) {
  const auto bytes = worked_builder().serialize();
  const auto f = open_bytes(bytes);
  EXPECT_EQ(f.data_offset() % 64, 0U);
  expect_entries(f, {
                        {"labels", st::dtype::u8, {3, 16}, 0, 48},
                        {"__pad__0", st::dtype::u8, {16}, 48, 64},
                        {"labels#heap", st::dtype::u8, {12}, 64, 76},
                        {"__pad__1", st::dtype::u8, {52}, 76, 128},
                        {"particles", st::dtype::u8, {2, 48}, 128, 224},
                        {"__pad__2", st::dtype::u8, {32}, 224, 256},
                        {"particles#heap", st::dtype::u8, {9}, 256, 265},
                        {"__pad__3", st::dtype::u8, {55}, 265, 320},
                        {"positions", st::dtype::f32, {2, 3}, 320, 344},
                    });
  const auto labels = f.at("labels").bytes();
  const std::array<std::pair<std::uint64_t, std::uint64_t>, 3> refs{{{0, 3}, {3, 5}, {8, 4}}};
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(load_u64(labels, 16 * i), refs[i].first);
    EXPECT_EQ(load_u64(labels, 16 * i + 8), refs[i].second);
  }
  EXPECT_EQ(text_of(f.at("labels#heap").bytes()), "redgreenblue");
  EXPECT_EQ(text_of(f.at("particles#heap").bytes()), "alphabeta");
  for (const auto* pad : {"__pad__0", "__pad__1", "__pad__2", "__pad__3"}) {
    for (auto b : f.at(pad).bytes()) EXPECT_EQ(b, std::byte{0});
  }
  const auto rec = f.at("particles").bytes();
  EXPECT_EQ(load<std::uint32_t>(rec, 0), 7U);
  EXPECT_EQ(load<std::uint32_t>(rec, 4), 0U);  // padding
  EXPECT_EQ(load<double>(rec, 8), 1.5);
  EXPECT_EQ(load<float>(rec, 16), 0.5F);
  EXPECT_EQ(load<float>(rec, 20), -1.0F);
  EXPECT_EQ(load<float>(rec, 24), 2.0F);
  EXPECT_EQ(load<std::uint32_t>(rec, 28), 0U);  // padding
  EXPECT_EQ(load_u64(rec, 32), 0U);
  EXPECT_EQ(load_u64(rec, 40), 5U);
  EXPECT_EQ(load<std::uint32_t>(rec, 48), 4000000000U);
  EXPECT_EQ(load<float>(rec, 48 + 24), 0.25F);
  EXPECT_EQ(load_u64(rec, 48 + 32), 5U);
  EXPECT_EQ(load_u64(rec, 48 + 40), 4U);
  const auto positions = f.at("positions").copy_as<float>();
  EXPECT_EQ(positions, (std::vector<float>{1, 2, 3, 4.5F, 5, 6}));
}

// §3.1, §3.5, §7: the metadata keys, sorted, first; layout table and schema
// compact.
TEST(MetatensorWriter, WorkedExampleMetadata) {
  writer_options o;
  o.user_metadata = {{"zeta", "last"}, {"author", "me"}};
  const auto b = worked_builder(o);
  const auto f = open_bytes(b.serialize());
  const auto& m = f.metadata();
  EXPECT_EQ(m.size(), 7U);
  EXPECT_EQ(m.at("metatensor.alignment"), "64");
  EXPECT_EQ(m.at("metatensor.endianness"), "little");
  EXPECT_EQ(m.at("metatensor.version"), "1");
  EXPECT_EQ(m.at("author"), "me");
  EXPECT_EQ(nlohmann::json::parse(m.at("metatensor.schema")), nlohmann::json::parse(worked_schema));
  EXPECT_EQ(m.at("metatensor.schema"), b.schema().document().dump());
  const std::vector<std::string> present{"labels", "particles", "positions"};
  EXPECT_EQ(m.at("metatensor.layout"), metatensor::layout_table_json(b.schema(), present, 64).dump());
  const auto header = f.header_text();
  EXPECT_TRUE(header.starts_with(R"({"__metadata__":{"author":"me","metatensor.alignment":"64",)")) << header;
  EXPECT_NE(header.find(R"("metatensor.version":"1","zeta":"last"},"labels":{)"), std::string_view::npos);
  // Padded with trailing spaces only.
  const auto close = header.find_last_of('}');
  EXPECT_EQ(header.find_first_not_of(' ', close + 1), std::string_view::npos);
  EXPECT_LT(header.size() - close - 1, 64U);
}

// §8.3: the same file from its logical value; the reader agrees.
TEST(MetatensorWriter, SetJsonMatchesTypedApi) {
  file_builder b(metatensor::compile_schema_text(worked_schema));
  b.set_logical_value(worked_value);
  const auto from_json = b.serialize();
  EXPECT_EQ(from_json, worked_builder().serialize());

  const auto mf = metatensor::file::from_buffer(tensogram::buffer::owned(from_json));
  EXPECT_NO_THROW(mf.validate_deep());
  EXPECT_EQ(mf.logical_value(), worked_value);
}

// Appendix A (A = 16): the complete header, byte for byte.
TEST(MetatensorWriter, AppendixA) {
  const std::string schema =
      R"({"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","required":["w"],)"
      R"("additionalProperties":false,"properties":{"w":{"type":"array","items":{"type":"number","TypeDef:Float32":true}}}})";
  writer_options o;
  o.alignment = 16;
  file_builder b(metatensor::compile_schema_text(schema), o);
  const std::vector<float> w{1.0F, -2.0F};
  b.set_flat<float>("w", {2}, w);
  const auto bytes = b.serialize();
  const auto layout = nlohmann::json::parse(
      R"({"tensors":{"w":{"kind":"flat","data":"w","rank":1,"align":16,"dtype":"F32"}}})");
  std::string header = R"({"__metadata__":{"metatensor.alignment":"16","metatensor.endianness":"little",)";
  header += "\"metatensor.layout\":" + nlohmann::json(layout.dump()).dump() + ",";
  header += "\"metatensor.schema\":" + nlohmann::json(nlohmann::json::parse(schema).dump()).dump() + ",";
  header += R"("metatensor.version":"1"},"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})";
  while ((8 + header.size()) % 16 != 0) header += ' ';
  ASSERT_EQ(bytes.size(), 8 + header.size() + 8);
  EXPECT_EQ(load_u64(bytes, 0), header.size());
  EXPECT_EQ(text_of(std::span(bytes).subspan(8, header.size())), header);
  EXPECT_EQ(load<float>(bytes, 8 + header.size()), 1.0F);
  EXPECT_EQ(load<float>(bytes, 8 + header.size() + 4), -2.0F);
  EXPECT_NO_THROW((void)metatensor::file::from_buffer(tensogram::buffer::owned(bytes)));
}

// Every scalar dtype as a flat tensor: dtype, shape, natural placement.
TEST(MetatensorWriter, EveryScalarDtypeFlat) {
  const std::vector<std::tuple<std::string, std::string, st::dtype>> types{
      {"Bool", "boolean", st::dtype::boolean},
      {"Int8", "integer", st::dtype::i8},
      {"Uint8", "integer", st::dtype::u8},
      {"Int16", "integer", st::dtype::i16},
      {"Uint16", "integer", st::dtype::u16},
      {"Int32", "integer", st::dtype::i32},
      {"Uint32", "integer", st::dtype::u32},
      {"Int64", "integer", st::dtype::i64},
      {"Uint64", "integer", st::dtype::u64},
      {"Float16", "number", st::dtype::f16},
      {"BFloat16", "number", st::dtype::bf16},
      {"Float32", "number", st::dtype::f32},
      {"Float64", "number", st::dtype::f64},
      {"Complex64", "array", st::dtype::c64},
      {"Float8E4M3", "number", st::dtype::f8_e4m3},
      {"Float8E5M2", "number", st::dtype::f8_e5m2},
      {"Float8E8M0", "number", st::dtype::f8_e8m0},
      {"Float8E4M3FNUZ", "number", st::dtype::f8_e4m3fnuz},
      {"Float8E5M2FNUZ", "number", st::dtype::f8_e5m2fnuz},
      {"Float4E2M1", "number", st::dtype::f4},
      {"Float6E2M3", "number", st::dtype::f6_e2m3},
      {"Float6E3M2", "number", st::dtype::f6_e3m2},
  };
  std::vector<std::pair<std::string, std::string>> props;
  for (const auto& [kw, type, dt] : types) {
    props.emplace_back("t_" + kw,
                       R"({"type":"array","items":{"type":")" + type + R"(","TypeDef:)" + kw + R"(":true}})");
  }
  writer_options o;
  o.alignment = 16;
  file_builder b(schema_of(props, true), o);
  std::map<std::string, std::vector<std::byte>> data;
  for (const auto& [kw, type, dt] : types) {
    const std::uint64_t n = 4;  // 4 elements: whole bytes for F4 and F6 too
    std::vector<std::byte> bytes(n * st::dtype_bits(dt) / 8);
    for (std::size_t i = 0; i < bytes.size(); ++i)
      bytes[i] = std::byte(dt == st::dtype::boolean ? i % 2 : i + 1);
    b.set_flat_bytes("t_" + kw, {n}, bytes);
    data["t_" + kw] = bytes;
  }
  const auto f = open_bytes(b.serialize());
  std::size_t pads = 0;
  for (const auto& t : f.tensors()) {
    if (t.name().starts_with("__pad__")) {
      ++pads;
      continue;
    }
    SCOPED_TRACE(t.name());
    EXPECT_EQ(t.begin() % 16, 0U);
    EXPECT_EQ(std::vector<std::byte>(t.bytes().begin(), t.bytes().end()), data.at(std::string(t.name())));
    const auto& [kw, type, dt] = *std::find_if(
        types.begin(), types.end(), [&](const auto& e) { return "t_" + std::get<0>(e) == t.name(); });
    EXPECT_EQ(t.type(), dt);
    EXPECT_EQ(std::vector<std::uint64_t>(t.shape().begin(), t.shape().end()), std::vector<std::uint64_t>{4});
  }
  EXPECT_EQ(f.tensors().size(), types.size() + pads);
  EXPECT_NO_THROW(metatensor::file::from_buffer(tensogram::buffer::owned(b.serialize())).validate_deep());

  // Typed setters check the C++ type against the dtype.
  const std::vector<std::int16_t> i16{1, -2, 3};
  b.set_flat<std::int16_t>("t_Int16", {3}, i16);
  const std::vector<std::complex<float>> c{{1, 2}};
  b.set_flat<std::complex<float>>("t_Complex64", {1}, c);
  const std::array<bool, 2> bools{true, false};
  b.set_flat<bool>("t_Bool", {2}, bools);
  expect_misuse(
      [&] {
        b.set_flat<std::uint16_t>("t_Int16", {3}, std::vector<std::uint16_t>{1, 2, 3});
      },
      "I16");
  expect_misuse([&] { b.set_flat<float>("t_Float64", {1}, std::vector<float>{1}); }, "F64");
  expect_misuse([&] { b.set_flat_bytes("t_Uint32", {2}, std::vector<std::byte>(7)); }, "7 bytes");
  expect_error(errc::mt_bool, [&] { b.set_flat_bytes("t_Bool", {1}, std::vector<std::byte>{std::byte{2}}); });
  expect_error(errc::st_subbyte, [&] { b.set_flat_bytes("t_Float4E2M1", {3}, std::vector<std::byte>(2)); });
}

namespace {

// A record with every scalar size, nested struct, tuple, fixed arrays,
// String, List and a fixed array of String.
constexpr std::string_view rich_schema = R"({
  "type": "object",
  "required": ["recs"],
  "$defs": {
    "Inner": {"type": "object", "TypeDef:Struct": true, "required": ["flag", "code", "tag"],
              "properties": {"flag": {"type": "boolean", "TypeDef:Bool": true},
                             "code": {"type": "integer", "TypeDef:Int16": true},
                             "tag": {"type": "string", "TypeDef:String": true}}},
    "Point": {"type": "object", "TypeDef:Struct": {"align": 16}, "required": ["x", "y"],
              "properties": {"x": {"type": "number", "TypeDef:Float32": true},
                             "y": {"type": "number", "TypeDef:Float32": true}}}
  },
  "properties": {
    "recs": {"type": "array", "items": {
      "type": "object", "TypeDef:Struct": true,
      "required": ["b", "u8", "i16", "u32", "i64", "f64", "inner", "pair", "m", "name", "vals", "tags", "pts", "al"],
      "properties": {
        "b": {"type": "boolean", "TypeDef:Bool": true},
        "u8": {"type": "integer", "TypeDef:Uint8": true},
        "i16": {"type": "integer", "TypeDef:Int16": true},
        "u32": {"type": "integer", "TypeDef:Uint32": true},
        "i64": {"type": "integer", "TypeDef:Int64": true},
        "f64": {"type": "number", "TypeDef:Float64": true},
        "inner": {"$ref": "#/$defs/Inner"},
        "pair": {"type": "array", "prefixItems": [{"type": "integer", "TypeDef:Uint8": true},
                                                  {"type": "number", "TypeDef:Float64": true}], "items": false},
        "m": {"type": "array", "minItems": 2, "maxItems": 2,
              "items": {"type": "array", "minItems": 3, "maxItems": 3, "items": {"type": "integer", "TypeDef:Uint16": true}}},
        "name": {"type": "string", "TypeDef:String": true},
        "vals": {"type": "array", "TypeDef:List": true, "items": {"type": "number", "TypeDef:Float64": true}},
        "tags": {"type": "array", "minItems": 2, "maxItems": 2, "items": {"type": "string", "TypeDef:String": true}},
        "pts": {"type": "array", "TypeDef:List": true, "items": {"$ref": "#/$defs/Point"}},
        "al": {"type": "integer", "TypeDef:Uint8": true, "TypeDef:Align": 8}
      }}}
  }
})";

const nlohmann::json rich_value = nlohmann::json::parse(R"({"recs": [
  {"b": true, "u8": 255, "i16": -300, "u32": 70000, "i64": -5000000000, "f64": 0.125,
   "inner": {"flag": false, "code": -1, "tag": "in0"},
   "pair": [9, 2.5], "m": [[1, 2, 3], [4, 5, 6]], "name": "abc", "vals": [1.5, -2.5],
   "tags": ["", "t1"], "pts": [{"x": 1, "y": 2}], "al": 3},
  {"b": false, "u8": 0, "i16": 32767, "u32": 0, "i64": 9223372036854775807, "f64": -0.0,
   "inner": {"flag": true, "code": 2, "tag": ""},
   "pair": [0, 0], "m": [[0, 0, 0], [0, 0, 65535]], "name": "", "vals": [],
   "tags": ["x", "yz"], "pts": [], "al": 0}
]})");

}  // namespace

// §6.2–§6.4: records with every kind of field, set through record_writer
// and through set_json; the heap order and List alignment of §6.4.
TEST(MetatensorWriter, RichRecords) {
  const auto schema = metatensor::compile_schema_text(rich_schema);
  const auto& rec = *schema.find("recs")->record;
  const auto off = [&](std::string_view n) { return rec.find(n)->offset; };

  file_builder typed(schema);
  auto& w = typed.set_records("recs", {2});
  EXPECT_EQ(w.size(), 2U);
  w.set<bool>(0, "b", true);
  w.set<std::uint8_t>(0, "u8", 255);
  w.set<std::int16_t>(0, "i16", -300);
  w.set<std::uint32_t>(0, "u32", 70000);
  w.set<std::int64_t>(0, "i64", -5000000000LL);
  w.set<double>(0, "f64", 0.125);
  w.set<std::int16_t>(0, "inner.code", -1);
  w.set_string(0, "inner.tag", "in0");
  w.set<std::uint8_t>(0, "pair.0", 9);
  w.set<double>(0, "pair.1", 2.5);
  w.set_bytes(0, "m[0]", pack<std::uint16_t>({1, 2, 3}));
  w.set_bytes(0, "m[1]", pack<std::uint16_t>({4, 5, 6}));
  w.set_string(0, "name", "abc");
  w.set_list_bytes(0, "vals", pack<double>({1.5, -2.5}));
  w.set_string(0, "tags[1]", "t1");
  std::vector<std::byte> pt(16);
  const float xy[2] = {1, 2};
  std::memcpy(pt.data(), xy, 8);
  w.set_list_bytes(0, "pts", pt);
  w.set<std::uint8_t>(0, "al", 3);
  // Record 1, set in another order.
  w.set_string(1, "tags[1]", "yz");
  w.set_string(1, "tags[0]", "x");
  w.set<std::uint16_t>(1, "m[1][2]", 65535);
  w.set<bool>(1, "inner.flag", true);
  w.set<std::int16_t>(1, "inner.code", 2);
  w.set<std::int64_t>(1, "i64", 9223372036854775807LL);
  w.set<std::int16_t>(1, "i16", 32767);
  w.set<double>(1, "f64", -0.0);
  const auto bytes = typed.serialize();

  file_builder from_json(schema);
  from_json.set_logical_value(rich_value);
  EXPECT_EQ(from_json.serialize(), bytes);

  const auto f = open_bytes(bytes);
  const auto r = f.at("recs").bytes();
  const std::uint64_t size = rec.size;
  ASSERT_EQ(r.size(), 2 * size);
  EXPECT_EQ(load<std::uint8_t>(r, off("b")), 1);
  EXPECT_EQ(load<std::uint8_t>(r, off("u8")), 255);
  EXPECT_EQ(load<std::int16_t>(r, off("i16")), -300);
  EXPECT_EQ(load<std::uint32_t>(r, off("u32")), 70000U);
  EXPECT_EQ(load<std::int64_t>(r, off("i64")), -5000000000LL);
  EXPECT_EQ(load<double>(r, off("f64")), 0.125);
  EXPECT_EQ(load<std::uint16_t>(r, off("m") + 2 * 5), 6);
  EXPECT_EQ(load<std::uint16_t>(r, size + off("m") + 2 * 5), 65535);
  EXPECT_EQ(load<std::int64_t>(r, size + off("i64")), 9223372036854775807LL);

  // Heap order: record 0: inner.tag, name, vals (aligned to 8), tags[0]
  // (empty), tags[1], pts (aligned to 16 by Point's align); record 1: ...
  const auto heap = f.at("recs#heap").bytes();
  const auto ref = [&](std::size_t record, std::uint64_t field_offset) {
    const std::size_t at = record * size + field_offset;
    return std::pair{load_u64(r, at), load_u64(r, at + 8)};
  };
  const auto inner_tag = off("inner") + rec.find("inner")->type.record->find("tag")->offset;
  EXPECT_EQ(ref(0, inner_tag), (std::pair<std::uint64_t, std::uint64_t>{0, 3}));
  EXPECT_EQ(ref(0, off("name")), (std::pair<std::uint64_t, std::uint64_t>{3, 3}));
  EXPECT_EQ(ref(0, off("vals")), (std::pair<std::uint64_t, std::uint64_t>{8, 16}));  // 6 → 8
  EXPECT_EQ(ref(0, off("tags")), (std::pair<std::uint64_t, std::uint64_t>{0, 0}));   // empty
  EXPECT_EQ(ref(0, off("tags") + 16), (std::pair<std::uint64_t, std::uint64_t>{24, 2}));
  EXPECT_EQ(ref(0, off("pts")), (std::pair<std::uint64_t, std::uint64_t>{32, 16}));  // 26 → 32
  EXPECT_EQ(ref(1, inner_tag), (std::pair<std::uint64_t, std::uint64_t>{0, 0}));
  EXPECT_EQ(ref(1, off("name")), (std::pair<std::uint64_t, std::uint64_t>{0, 0}));
  EXPECT_EQ(ref(1, off("vals")), (std::pair<std::uint64_t, std::uint64_t>{0, 0}));
  EXPECT_EQ(ref(1, off("tags")), (std::pair<std::uint64_t, std::uint64_t>{48, 1}));
  EXPECT_EQ(ref(1, off("tags") + 16), (std::pair<std::uint64_t, std::uint64_t>{49, 2}));
  EXPECT_EQ(ref(1, off("pts")), (std::pair<std::uint64_t, std::uint64_t>{0, 0}));
  ASSERT_EQ(heap.size(), 51U);
  EXPECT_EQ(text_of(heap.subspan(0, 6)), "in0abc");
  EXPECT_EQ(text_of(heap.subspan(6, 2)), std::string(2, '\0'));
  EXPECT_EQ(load<double>(heap, 8), 1.5);
  EXPECT_EQ(load<double>(heap, 16), -2.5);
  EXPECT_EQ(text_of(heap.subspan(24, 2)), "t1");
  EXPECT_EQ(text_of(heap.subspan(26, 6)), std::string(6, '\0'));
  EXPECT_EQ(load<float>(heap, 36), 2.0F);
  EXPECT_EQ(text_of(heap.subspan(48, 3)), "xyz");
  EXPECT_EQ(f.at("recs#heap").begin() % 64, 0U);

  const auto mf = metatensor::file::from_buffer(tensogram::buffer::owned(bytes));
  EXPECT_NO_THROW(mf.validate_deep());
  EXPECT_EQ(mf.logical_value(), rich_value);
}

// Blob tensors of Lists: alignment padding before each non-empty list.
TEST(MetatensorWriter, BlobListsAligned) {
  const auto schema = schema_of({{"rows", R"({"type":"array","items":{"type":"array","TypeDef:List":true,
      "items":{"type":"number","TypeDef:Float64":true}}})"},
                                 {"bytes", R"({"type":"array","TypeDef:List":true,
      "items":{"type":"integer","TypeDef:Uint8":true}})"}});
  file_builder b(schema);
  const std::vector<std::vector<std::byte>> rows{pack<double>({1}), {}, pack<double>({2, 3})};
  b.set_list_bytes("rows", {3}, rows);
  const std::vector<std::vector<std::byte>> one{to_bytes("xyz")};
  b.set_list_bytes("bytes", {}, one);  // rank 0: a single BlobRef
  const auto f = open_bytes(b.serialize());
  const auto idx = f.at("rows").bytes();
  EXPECT_EQ(load_u64(idx, 0), 0U);
  EXPECT_EQ(load_u64(idx, 8), 8U);
  EXPECT_EQ(load_u64(idx, 16), 0U);
  EXPECT_EQ(load_u64(idx, 24), 0U);
  EXPECT_EQ(load_u64(idx, 32), 8U);
  EXPECT_EQ(load_u64(idx, 40), 16U);
  EXPECT_EQ(f.at("rows#heap").bytes().size(), 24U);
  EXPECT_EQ(std::vector<std::uint64_t>(f.at("bytes").shape().begin(), f.at("bytes").shape().end()),
            std::vector<std::uint64_t>{16});
  EXPECT_EQ(text_of(f.at("bytes#heap").bytes()), "xyz");
  expect_misuse(
      [&] { b.set_list_bytes("rows", {1}, std::vector<std::vector<std::byte>>{std::vector<std::byte>(12)}); },
      "8-byte elements");
  expect_misuse([&] { b.set_list_bytes("rows", {2}, rows); }, "3 lists given");

  // After a 3-byte list in the same heap, an F64 list starts at 8.
  const auto s2 = schema_of({{"r", R"({"type":"array","items":{"type":"object","TypeDef:Struct":true,
      "required":["s","l"],"properties":{"s":{"type":"string","TypeDef:String":true},
      "l":{"type":"array","TypeDef:List":true,"items":{"type":"number","TypeDef:Float64":true}}}}})"}});
  file_builder b2(s2);
  b2.set_json("r", nlohmann::json::parse(R"([{"s":"abc","l":[1.0,2.0]}])"));
  const auto f2 = open_bytes(b2.serialize());
  EXPECT_EQ(load_u64(f2.at("r").bytes(), 16), 8U);
  EXPECT_EQ(load_u64(f2.at("r").bytes(), 24), 16U);
  EXPECT_EQ(f2.at("r#heap").bytes().size(), 24U);
}

// §6.6: zero-size tensors sit at the cursor, without padding.
TEST(MetatensorWriter, ZeroSizeTensors) {
  file_builder b(metatensor::compile_schema_text(worked_schema));
  b.set_strings("labels", {0}, {});
  auto& p = b.set_records("particles", {1});
  p.set<std::uint32_t>(0, "id", 1);
  b.set_flat<float>("positions", {0, 3}, {});
  const auto bytes = b.serialize();
  const auto f = open_bytes(bytes);
  expect_entries(f, {
                        {"labels", st::dtype::u8, {0, 16}, 0, 0},
                        {"labels#heap", st::dtype::u8, {0}, 0, 0},
                        {"particles", st::dtype::u8, {1, 48}, 0, 48},
                        {"particles#heap", st::dtype::u8, {0}, 48, 48},
                        {"positions", st::dtype::f32, {0, 3}, 48, 48},
                    });
  EXPECT_NO_THROW(metatensor::file::from_buffer(tensogram::buffer::owned(bytes)).validate_deep());

  // An empty tensor between two padded ones.
  b.set_strings("labels", {1}, std::vector<std::string>{"a"});
  b.set_flat<float>("positions", {1, 3}, std::vector<float>{1, 2, 3});
  expect_entries(open_bytes(b.serialize()), {
                                                {"labels", st::dtype::u8, {1, 16}, 0, 16},
                                                {"__pad__0", st::dtype::u8, {48}, 16, 64},
                                                {"labels#heap", st::dtype::u8, {1}, 64, 65},
                                                {"__pad__1", st::dtype::u8, {63}, 65, 128},
                                                {"particles", st::dtype::u8, {1, 48}, 128, 176},
                                                {"particles#heap", st::dtype::u8, {0}, 176, 176},
                                                {"__pad__2", st::dtype::u8, {16}, 176, 192},
                                                {"positions", st::dtype::f32, {1, 3}, 192, 204},
                                            });
}

// §6.5: R(t) above A (TypeDef:Align on a root property) orders first and
// sets the header padding.
TEST(MetatensorWriter, RootAlignAboveFileAlignment) {
  const auto schema = schema_of({{"a", R"({"type":"array","items":{"type":"integer","TypeDef:Uint8":true}})"},
                                 {"z", R"({"type":"array","TypeDef:Align":256,
                                     "items":{"type":"integer","TypeDef:Uint8":true}})"}});
  writer_options o;
  o.alignment = 16;
  file_builder b(schema, o);
  b.set_flat_bytes("a", {3}, to_bytes("abc"));
  b.set_flat_bytes("z", {2}, to_bytes("zz"));
  const auto f = open_bytes(b.serialize());
  expect_entries(f, {
                        {"z", st::dtype::u8, {2}, 0, 2},
                        {"__pad__0", st::dtype::u8, {14}, 2, 16},
                        {"a", st::dtype::u8, {3}, 16, 19},
                    });
  EXPECT_EQ(f.data_offset() % 256, 0U);
}

// §8.3 encodings of set_json: integers, small floats, C64, sub-byte packing.
TEST(MetatensorWriter, SetJsonScalars) {
  const auto leaf = [](std::string kw, std::string type) {
    return R"({"type":"array","items":{"type":")" + type + R"(","TypeDef:)" + kw + R"(":true}})";
  };
  const auto schema = schema_of({{"f16", leaf("Float16", "number")},
                                 {"bf16", leaf("BFloat16", "number")},
                                 {"e4m3", leaf("Float8E4M3", "number")},
                                 {"e5m2", leaf("Float8E5M2", "number")},
                                 {"e4m3fnuz", leaf("Float8E4M3FNUZ", "number")},
                                 {"e8m0", leaf("Float8E8M0", "number")},
                                 {"f4", leaf("Float4E2M1", "number")},
                                 {"f6", leaf("Float6E3M2", "number")},
                                 {"c64", leaf("Complex64", "array")},
                                 {"i8", leaf("Int8", "integer")},
                                 {"u64", leaf("Uint64", "integer")},
                                 {"f32", leaf("Float32", "number")}});
  file_builder b(schema);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  b.set_json("f16", nlohmann::json{1.0, 65504.0, -inf, nan, 0.1, 1e-8, -0.0, 5.960464477539063e-08});
  b.set_json("bf16", nlohmann::json{1.0, -2.0, 1.00390625});
  b.set_json("e4m3", nlohmann::json{448.0, 464.0, -0.5, nan, 0.001953125});
  b.set_json("e5m2", nlohmann::json{57344.0, inf, 1.5});
  b.set_json("e4m3fnuz", nlohmann::json{-0.0, 1.0, nan});
  b.set_json("e8m0", nlohmann::json{1.0, 0.25, 3.0, nan});
  b.set_json("f4", nlohmann::json{0.5, 6.0, -1.0, 0.0});
  b.set_json("f6", nlohmann::json{1.0, 28.0, -0.0625, 0.1875});
  b.set_json("c64", nlohmann::json{{1.5, -2.0}});
  b.set_json("i8", nlohmann::json{-128, 127, 3.0});
  b.set_json("u64", nlohmann::json{18446744073709551615ULL, 0});
  b.set_json("f32", nlohmann::json{0.1, inf});
  const auto f = open_bytes(b.serialize());
  EXPECT_EQ(f.at("f16").copy_as<std::uint16_t>(),
            (std::vector<std::uint16_t>{0x3C00, 0x7BFF, 0xFC00, 0x7E00, 0x2E66, 0x0000, 0x8000, 0x0001}));
  EXPECT_EQ(f.at("bf16").copy_as<std::uint16_t>(), (std::vector<std::uint16_t>{0x3F80, 0xC000, 0x3F80}));
  EXPECT_EQ(f.at("e4m3").copy_as<std::uint8_t>(), (std::vector<std::uint8_t>{0x7E, 0x7E, 0xB0, 0x7F, 0x01}));
  EXPECT_EQ(f.at("e5m2").copy_as<std::uint8_t>(), (std::vector<std::uint8_t>{0x7B, 0x7C, 0x3E}));
  EXPECT_EQ(f.at("e4m3fnuz").copy_as<std::uint8_t>(), (std::vector<std::uint8_t>{0x00, 0x40, 0x80}));
  EXPECT_EQ(f.at("e8m0").copy_as<std::uint8_t>(), (std::vector<std::uint8_t>{127, 125, 129, 0xFF}));
  // F4 codes 1, 7, 0xA, 0 packed LSB first: 0x71, 0x0A.
  EXPECT_EQ(raw_u8(f.at("f4")), (std::vector<std::uint8_t>{0x71, 0x0A}));
  // F6_E3M2 codes 0x0C, 0x1F, 0x21, 0x03 in a 24-bit little-endian stream.
  const std::uint32_t f6 = 0x0CU | (0x1FU << 6) | (0x21U << 12) | (0x03U << 18);
  EXPECT_EQ(raw_u8(f.at("f6")),
            (std::vector<std::uint8_t>{static_cast<std::uint8_t>(f6), static_cast<std::uint8_t>(f6 >> 8),
                                       static_cast<std::uint8_t>(f6 >> 16)}));
  EXPECT_EQ(f.at("c64").copy_as<std::complex<float>>(), (std::vector<std::complex<float>>{{1.5F, -2.0F}}));
  EXPECT_EQ(f.at("i8").copy_as<std::int8_t>(), (std::vector<std::int8_t>{-128, 127, 3}));
  EXPECT_EQ(f.at("u64").copy_as<std::uint64_t>(), (std::vector<std::uint64_t>{18446744073709551615ULL, 0}));
  EXPECT_EQ(f.at("f32").copy_as<float>()[0], 0.1F);

  expect_error(
      errc::mt_value, [&] { b.set_json("f16", nlohmann::json{1e5}); }, "/f16/0");
  expect_error(
      errc::mt_value,
      [&] {
        b.set_json("e4m3", nlohmann::json{1.0, 480.0});
      },
      "/e4m3/1");
  expect_error(
      errc::mt_value, [&] { b.set_json("e4m3", nlohmann::json{inf}); }, "no infinity");
  expect_error(
      errc::mt_value,
      [&] {
        b.set_json("f4", nlohmann::json{nan, 0.0});
      },
      "no NaN");
  expect_error(errc::mt_value, [&] { b.set_json("e8m0", nlohmann::json{0.0}); });
  expect_error(
      errc::mt_value, [&] { b.set_json("i8", nlohmann::json{128}); }, "out of the range of I8");
  expect_error(errc::mt_value, [&] { b.set_json("i8", nlohmann::json{-129}); });
  expect_error(
      errc::mt_value, [&] { b.set_json("i8", nlohmann::json{1.5}); }, "not an integer");
  expect_error(
      errc::mt_value, [&] { b.set_json("i8", nlohmann::json{"1"}); }, "expected an integer");
  expect_error(errc::mt_value, [&] { b.set_json("u64", nlohmann::json{-1}); });
  expect_error(
      errc::mt_value, [&] { b.set_json("f32", nlohmann::json{1e300}); }, "range of F32");
  expect_error(
      errc::mt_value, [&] { b.set_json("c64", nlohmann::json{{1.0}}); }, "[real, imaginary]");
  expect_error(errc::st_subbyte, [&] { b.set_json("f4", nlohmann::json{1.0}); });
}

TEST(MetatensorWriter, SetJsonErrors) {
  const auto schema =
      schema_of({{"r", R"({"type":"array","items":{"type":"object","TypeDef:Struct":true,
      "required":["small","s","m"],"properties":{"small":{"type":"integer","TypeDef:Uint8":true},
      "s":{"type":"string","TypeDef:String":true},
      "m":{"type":"array","minItems":2,"maxItems":2,"items":{"type":"boolean","TypeDef:Bool":true}}}}})"},
                 {"grid", R"({"type":"array","maxItems":2,"items":{"type":"array","minItems":2,
      "maxItems":2,"items":{"type":"number","TypeDef:Float32":true}}})"},
                 {"a~b/c", R"({"type":"integer","TypeDef:Int32":true})"}});
  file_builder b(schema);
  const auto rec = [](std::string_view small) {
    return nlohmann::json::parse(R"([{"small":1,"s":"a","m":[true,false]},{"small":)" + std::string(small) +
                                 R"(,"s":"b","m":[false,false]}])");
  };
  EXPECT_NO_THROW(b.set_json("r", rec("2")));
  expect_error(
      errc::mt_value, [&] { b.set_json("r", rec("300")); }, "/r/1/small: 300 is out of the range of U8");
  expect_error(
      errc::mt_value, [&] { b.set_json("r", rec("2.5")); }, "/r/1/small");
  expect_error(
      errc::mt_value, [&] { b.set_json("r", rec("true")); }, "/r/1/small");
  expect_error(
      errc::mt_value, [&] { b.set_json("r", nlohmann::json::parse(R"([{"small":1,"s":"a"}])")); },
      "/r/0: missing field \"m\"");
  expect_error(
      errc::mt_value,
      [&] { b.set_json("r", nlohmann::json::parse(R"([{"small":1,"s":"a","m":[true,false],"x":1}])")); },
      "unknown field \"x\"");
  expect_error(
      errc::mt_value, [&] { b.set_json("r", nlohmann::json::parse(R"([{"small":1,"s":"a","m":[true]}])")); },
      "/r/0/m: expected an array of 2 items");
  expect_error(
      errc::mt_value, [&] { b.set_json("r", nlohmann::json::parse(R"([{"small":1,"s":"a","m":[1,0]}])")); },
      "/r/0/m/0: expected true or false");
  expect_error(
      errc::mt_value, [&] { b.set_json("r", nlohmann::json::parse(R"([{"small":1,"s":5,"m":[1,0]}])")); },
      "/r/0/s: expected a string");
  expect_error(errc::mt_utf8, [&] {
    nlohmann::json v = nlohmann::json::parse(R"([{"small":1,"s":"","m":[true,true]}])");
    v[0]["s"] = std::string("\xC3\x28");
    b.set_json("r", v);
  });
  expect_error(
      errc::mt_value, [&] { b.set_json("r", nlohmann::json::object()); }, "/r: expected an array");
  expect_error(
      errc::mt_shape, [&] { b.set_json("grid", nlohmann::json::parse("[[1,2],[3]]")); }, "/grid/1");
  expect_error(
      errc::mt_shape, [&] { b.set_json("grid", nlohmann::json::parse("[[1,2,3]]")); }, "dimension 1");
  expect_error(errc::mt_shape, [&] { b.set_json("grid", nlohmann::json::parse("[[1,2],[3,4],[5,6]]")); });
  expect_error(
      errc::mt_value, [&] { b.set_json("a~b/c", nlohmann::json("x")); }, "/a~0b~1c");
  EXPECT_NO_THROW(b.set_json("a~b/c", -7));
  EXPECT_NO_THROW(b.set_json("grid", nlohmann::json::array()));  // [0, 2]
  expect_error(
      errc::mt_tensor_set, [&] { b.set_json("nope", 1); }, "\"nope\"");
  const auto f = open_bytes(b.serialize());
  EXPECT_EQ(std::vector<std::uint64_t>(f.at("grid").shape().begin(), f.at("grid").shape().end()),
            (std::vector<std::uint64_t>{0, 2}));
  EXPECT_EQ(f.at("a~b/c").copy_as<std::int32_t>(), std::vector<std::int32_t>{-7});
}

// API errors of the typed setters and of the options.
TEST(MetatensorWriter, Errors) {
  const auto schema = metatensor::compile_schema_text(worked_schema);
  // Options (§3.1).
  for (std::uint64_t a : {0ULL, 8ULL, 48ULL, 100ULL, 131072ULL}) {
    writer_options o;
    o.alignment = a;
    expect_error(errc::mt_alignment_value, [&] { file_builder b(schema, o); });
  }
  for (std::uint64_t a : {16ULL, 65536ULL}) {
    writer_options o;
    o.alignment = a;
    EXPECT_NO_THROW((void)file_builder(schema, o));
  }
  {
    writer_options o;
    o.user_metadata = {{"metatensor.extra", "x"}};
    expect_error(
        errc::mt_unknown_key, [&] { file_builder b(schema, o); }, "metatensor.extra");
    o.user_metadata = {{"k", std::string("\xFF")}};
    expect_error(errc::st_header_utf8, [&] { file_builder b(schema, o); });
  }
  file_builder b(schema);
  // Missing required (§4.6), unknown names.
  expect_error(
      errc::mt_tensor_set, [&] { (void)b.serialize(); }, "\"labels\"");
  b.set_strings("labels", {1}, std::vector<std::string>{"x"});
  b.set_records("particles", {0});
  expect_error(
      errc::mt_tensor_set, [&] { (void)b.serialize(); }, "\"positions\"");
  expect_error(errc::mt_tensor_set, [&] { b.set_flat<float>("velocity", {1}, std::vector<float>{1}); });
  // Dims (§5.1).
  expect_error(
      errc::mt_shape,
      [&] {
        b.set_flat<float>("positions", {2}, std::vector<float>{1, 2});
      },
      "rank 1");
  expect_error(
      errc::mt_shape,
      [&] {
        b.set_flat<float>("positions", {1, 2}, std::vector<float>{1, 2});
      },
      "dimension 1 is 2");
  expect_error(errc::mt_shape, [&] { b.set_records("particles", {1, 1}); });
  // Sizes (§2 rules 7–8): dimensions and byte counts at most 2^53 - 1.
  expect_error(
      errc::st_overflow, [&] { b.set_strings("labels", {1ULL << 53}, {}); }, "2^53-1");
  expect_error(
      errc::st_overflow, [&] { b.set_strings("labels", {1ULL << 50}, {}); }, "2^53-1");
  expect_error(
      errc::st_overflow, [&] { b.set_records("particles", {1ULL << 48}); }, "2^53-1");
  // Kinds and C++ types.
  expect_misuse([&] { b.set_records("positions", {1, 3}); }, "not a struct tensor");
  expect_misuse([&] { b.set_strings("particles", {0}, {}); }, "not a blob tensor of strings");
  expect_misuse([&] { b.set_flat<float>("labels", {0}, {}); }, "blob");
  expect_misuse([&] { b.set_strings("labels", {2}, std::vector<std::string>{"x"}); }, "1 strings given");
  // Invalid UTF-8.
  expect_error(errc::mt_utf8, [&] { b.set_strings("labels", {1}, std::vector<std::string>{"ok\xE2\x82"}); });
  auto& p = b.set_records("particles", {2});
  expect_error(
      errc::mt_utf8, [&] { p.set_string(1, "name", "\xED\xA0\x80"); }, "record 1");
  // Record writer misuse.
  expect_misuse([&] { p.set<float>(0, "id", 1.0F); }, "U32");
  expect_misuse([&] { p.set<std::int32_t>(0, "id", 1); }, "U32");
  expect_misuse([&] { p.set<float>(0, "vel", 1.0F); }, "not a scalar");
  expect_misuse([&] { p.set<float>(0, "vel[3]", 1.0F); }, "out of range");
  expect_misuse([&] { p.set<float>(0, "vel[0][0]", 1.0F); }, "too many indices");
  expect_misuse([&] { p.set<float>(0, "vel[x]", 1.0F); }, "malformed");
  expect_misuse([&] { p.set<double>(0, "masses", 1.0); }, "no field");
  expect_misuse([&] { p.set<double>(0, "mass.x", 1.0); }, "not a record");
  expect_misuse([&] { p.set<double>(2, "mass", 1.0); }, "record 2 out of range");
  expect_misuse([&] { p.set_string(0, "mass", "x"); }, "not a String");
  expect_misuse([&] { p.set_list_bytes(0, "name", {}); }, "not a List");
  expect_misuse([&] { p.set_bytes(0, "name", std::vector<std::byte>(16)); }, "String or List");
  expect_misuse([&] { p.set_bytes(0, "vel", std::vector<std::byte>(8)); }, "8 bytes given");
  EXPECT_NO_THROW(p.set_bytes(0, "vel[1]", pack<float>({1.0F})));
}

// BOOL bytes and record padding given raw must keep the file deep-valid.
TEST(MetatensorWriter, RawBytesChecked) {
  const auto schema = schema_of({{"r", R"({"type":"array","items":{"type":"object","TypeDef:Struct":true,
      "required":["in"],"properties":{"in":{"type":"object","TypeDef:Struct":true,"required":["b","x"],
      "properties":{"b":{"type":"boolean","TypeDef:Bool":true},"x":{"type":"integer","TypeDef:Uint32":true}}}}}})"}});
  file_builder b(schema);
  auto& w = b.set_records("r", {1});
  std::vector<std::byte> raw(8);
  raw[0] = std::byte{1};
  raw[4] = std::byte{9};
  EXPECT_NO_THROW(w.set_bytes(0, "in", raw));
  raw[1] = std::byte{1};
  expect_error(
      errc::mt_nonzero_padding, [&] { w.set_bytes(0, "in", raw); }, "padding before field \"x\"");
  raw[1] = std::byte{0};
  raw[0] = std::byte{2};
  expect_error(errc::mt_bool, [&] { w.set_bytes(0, "in", raw); });
  expect_error(errc::mt_bool, [&] { w.set<std::uint8_t>(0, "in.b", 2); });
  const auto f = open_bytes(b.serialize());
  EXPECT_EQ(load<std::uint8_t>(f.at("r").bytes(), 0), 1);
  EXPECT_EQ(load<std::uint32_t>(f.at("r").bytes(), 4), 9U);
}

// Reproducible output; reference stability after resetting a tensor.
TEST(MetatensorWriter, Reproducible) {
  const auto a = worked_builder().serialize();
  EXPECT_EQ(worked_builder().serialize(), a);
  file_builder b(metatensor::compile_schema_text(worked_schema));
  b.set_json("positions", worked_value["positions"]);
  b.set_json("particles", worked_value["particles"]);
  auto& p = b.set_records("particles", {1});
  b.set_json("labels", worked_value["labels"]);
  b.set_json("particles", worked_value["particles"]);  // resets what `p` refers to
  EXPECT_EQ(p.size(), 2U);
  EXPECT_EQ(b.serialize(), a);
  EXPECT_EQ(b.serialize(), b.serialize());
  EXPECT_TRUE(b.contains("labels"));
  b.erase("labels");
  EXPECT_FALSE(b.contains("labels"));
}

// Atomic write: the file appears complete, and a failing write leaves an
// existing file untouched.
TEST(MetatensorWriter, AtomicWrite) {
  const auto dir = std::filesystem::temp_directory_path() / ("mt_writer_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto path = dir / "out.mt";
  const auto b = worked_builder();
  b.write(path);
  const auto expected = b.serialize();
  const auto read_all = [&] {
    std::ifstream in(path, std::ios::binary);
    std::vector<char> chars{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    std::vector<std::byte> out(chars.size());
    if (!chars.empty()) std::memcpy(out.data(), chars.data(), chars.size());
    return out;
  };
  EXPECT_EQ(read_all(), expected);
  EXPECT_NO_THROW((void)metatensor::file::open(path));

  file_builder incomplete(metatensor::compile_schema_text(worked_schema));
  incomplete.set_strings("labels", {1}, std::vector<std::string>{"x"});
  expect_error(errc::mt_tensor_set, [&] { incomplete.write(path); });
  EXPECT_EQ(read_all(), expected);
  std::size_t entries = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    (void)e;
    ++entries;
  }
  EXPECT_EQ(entries, 1U);  // no temporary left behind
  std::filesystem::remove_all(dir);
}

// Exactly representable values survive set_json → reader projection (§8.3),
// sub-byte types included (both sides pack LSB first).
TEST(MetatensorWriter, SmallFloatsRoundTrip) {
  const std::vector<std::pair<std::string, nlohmann::json>> cases{
      {"Float16", {1.0, -65504.0, 5.960464477539063e-08, 0.0}},
      {"BFloat16", {1.0, -3.0, 1.2676506002282294e+30, 0.0}},
      {"Float8E4M3", {448.0, -0.001953125, 1.125, 0.0}},
      {"Float8E5M2", {57344.0, -1.5, 0.0000152587890625, 0.0}},
      {"Float8E4M3FNUZ", {240.0, -1.0, 0.0009765625, 0.0}},
      {"Float8E5M2FNUZ", {57344.0, -1.0, 0.00000762939453125, 0.0}},
      {"Float8E8M0", {1.0, 0.25, 1024.0, 2.0}},
      {"Float4E2M1", {0.5, 6.0, -1.5, 0.0}},
      {"Float6E2M3", {7.5, -0.125, 1.0, 0.0}},
      {"Float6E3M2", {28.0, -0.0625, 0.1875, 0.0}},
  };
  std::vector<std::pair<std::string, std::string>> props;
  for (const auto& [kw, values] : cases) {
    props.emplace_back(kw, R"({"type":"array","items":{"type":"number","TypeDef:)" + kw + R"(":true}})");
  }
  file_builder b(schema_of(props));
  nlohmann::json value = nlohmann::json::object();
  for (const auto& [kw, values] : cases) value[kw] = values;
  b.set_logical_value(value);
  const auto f = metatensor::file::from_buffer(tensogram::buffer::owned(b.serialize()));
  EXPECT_NO_THROW(f.validate_deep());
  EXPECT_EQ(f.logical_value(), value);
}
