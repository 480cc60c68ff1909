// The metatensor writer (spec 06 §3, §3.5, §5, §6.4, §6.6, §6.7, §7, §8.3,
// Appendix A). set_json's encodings and errors are in writer_set_json_test.cpp,
// the typed API's errors in writer_errors_test.cpp.
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

#include "writer_support.hpp"

using namespace metatensor_test::writer;  // NOLINT: test helpers

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
  const std::vector<std::vector<std::byte>> one{text_bytes("xyz")};
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
  b.set_flat_bytes("a", {3}, text_bytes("abc"));
  b.set_flat_bytes("z", {2}, text_bytes("zz"));
  const auto f = open_bytes(b.serialize());
  expect_entries(f, {
                        {"z", st::dtype::u8, {2}, 0, 2},
                        {"__pad__0", st::dtype::u8, {14}, 2, 16},
                        {"a", st::dtype::u8, {3}, 16, 19},
                    });
  EXPECT_EQ(f.data_offset() % 256, 0U);
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
