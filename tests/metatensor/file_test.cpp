// metatensor::file: open, structural validation, views and the logical value
// (spec 06 §3, §5–§9). Files are built byte by byte here (header text and
// data offsets written by the test), independent of the metatensor writer.
#include <gtest/gtest.h>

#include <unistd.h>
#include <array>
#include <cmath>
#include <complex>
#include <cstring>
#include <filesystem>
#include <limits>
#include <metatensor/file.hpp>
#include <nlohmann/json.hpp>
#include <string>
#include <tensogram/core/error.hpp>
#include <thread>
#include <vector>

#include "spec_files.hpp"

namespace mt = metatensor;
using json = nlohmann::json;
using mt::errc;

namespace {

using namespace metatensor_test;  // NOLINT: test helpers

mt::file open_bytes(const std::vector<std::byte>& bytes) {
  return mt::file::from_buffer(tensogram::buffer::owned(bytes));
}

std::string verdict(const std::vector<std::byte>& bytes, bool deep = false) {
  try {
    const auto f = open_bytes(bytes);
    f.check_all_blob_refs();  // open defers step 8 (§8.1)
    if (deep) f.validate_deep();
    return "valid";
  } catch (const mt::error& e) {
    return std::string(mt::errc_name(e.kind()));
  }
}

// --- The worked example of §6.7 -------------------------------------------

const std::string example_layout = example_layout_text;

std::vector<phys> example_tensors() {
  auto particles = particle(7, 1.5, {1.f, 2.f, 3.f}, 0, 5);
  const auto p2 = particle(9, 2.5, {4.f, 5.f, 6.f}, 5, 4);
  particles.insert(particles.end(), p2.begin(), p2.end());
  std::vector<std::byte> positions;
  for (float v : {0.5f, 1.5f, 2.5f, -1.f, -2.f, -3.f}) put(positions, v);
  return example_physical_tensors(particles, positions);
}

std::vector<std::byte> example_file() {
  auto md = mt_metadata(example_schema(), example_layout);
  md["author"] = "h3";
  return build(md, example_tensors());
}

TEST(MetatensorFileExample, DataSectionMatchesSpecTable) {
  const auto f = open_bytes(example_file());
  const std::vector<std::tuple<std::string, std::uint64_t, std::uint64_t>> expected = {
      {"labels", 0, 48},       {"__pad__0", 48, 64},   {"labels#heap", 64, 76},      {"__pad__1", 76, 128},
      {"particles", 128, 224}, {"__pad__2", 224, 256}, {"particles#heap", 256, 265}, {"__pad__3", 265, 320},
      {"positions", 320, 344}};
  const auto ts = f.base().tensors();
  ASSERT_EQ(ts.size(), expected.size());
  for (std::size_t i = 0; i < ts.size(); ++i) {
    EXPECT_EQ(ts[i].name(), std::get<0>(expected[i]));
    EXPECT_EQ(ts[i].begin(), std::get<1>(expected[i]));
    EXPECT_EQ(ts[i].end(), std::get<2>(expected[i]));
  }
  EXPECT_EQ(f.base().data_offset() % 64, 0u);
  EXPECT_EQ(f.alignment(), 64u);
  EXPECT_EQ(f.tensor_names(), (std::vector<std::string>{"labels", "particles", "positions"}));
  EXPECT_TRUE(f.contains("labels"));
  EXPECT_FALSE(f.contains("labels#heap"));
  EXPECT_FALSE(f.contains("__pad__0"));
  EXPECT_EQ(f.user_metadata(), (std::map<std::string, std::string>{{"author", "h3"}}));
  EXPECT_EQ(f.layout_table(), json::parse(example_layout));
  EXPECT_EQ(f.layout("particles").kind, mt::tensor_kind::record);
  EXPECT_THROW((void)f.layout("nope"), tensogram::invalid_arg_error);
  f.validate_deep();
}

TEST(MetatensorFileExample, BlobViewOfLabels) {
  const auto f = open_bytes(example_file());
  const auto labels = f.blobs("labels");
  EXPECT_EQ(labels.size(), 3u);
  EXPECT_EQ(std::vector<std::uint64_t>(labels.dims().begin(), labels.dims().end()),
            std::vector<std::uint64_t>{3});
  EXPECT_EQ(labels.item().type, mt::value_type::string);
  EXPECT_EQ(labels.string(0), "red");
  EXPECT_EQ(labels.string(1), "green");
  EXPECT_EQ(labels.string(2), "blue");
  EXPECT_EQ(labels.ref(2).offset, 8u);
  EXPECT_EQ(labels.ref(2).length, 4u);
  EXPECT_EQ(labels.bytes(1).size(), 5u);
  EXPECT_THROW((void)labels.string(3), tensogram::invalid_arg_error);
  EXPECT_THROW((void)labels.list<float>(0), tensogram::invalid_arg_error);
  EXPECT_THROW((void)f.flat("labels"), tensogram::invalid_arg_error);
  EXPECT_THROW((void)f.records("labels"), tensogram::invalid_arg_error);
  EXPECT_EQ(f.dims("labels")[0], 3u);
}

struct host_particle {
  std::uint32_t id;
  double mass;
  float vel[3];
  std::uint64_t name_offset;
  std::uint64_t name_length;
};
static_assert(sizeof(host_particle) == 48 && alignof(host_particle) == 8);

TEST(MetatensorFileExample, RecordViewOfParticles) {
  const auto f = open_bytes(example_file());
  const auto ps = f.records("particles");
  ASSERT_EQ(ps.size(), 2u);
  EXPECT_EQ(ps.record().size, 48u);
  EXPECT_EQ(ps.record().align, 8u);
  EXPECT_EQ(ps[0].get<std::uint32_t>("id"), 7u);
  EXPECT_EQ(ps[1].get<std::uint32_t>("id"), 9u);
  EXPECT_EQ(ps[0].get<double>("mass"), 1.5);
  EXPECT_EQ(ps[1].get<double>("mass"), 2.5);
  EXPECT_EQ(ps[0].string("name"), "alpha");
  EXPECT_EQ(ps[1].string("name"), "beta");
  EXPECT_EQ(ps[1].blob("name").size(), 4u);
  EXPECT_THROW((void)ps[0].get<float>("mass"), tensogram::invalid_arg_error);
  EXPECT_THROW((void)ps[0].get<float>("vel"), tensogram::invalid_arg_error);  // fixed array
  EXPECT_THROW((void)ps[0].get<double>("nope"), tensogram::invalid_arg_error);
  EXPECT_THROW((void)ps[0].string("id"), tensogram::invalid_arg_error);
  EXPECT_THROW((void)ps[0].sub("id"), tensogram::invalid_arg_error);
  EXPECT_THROW((void)ps[2], tensogram::invalid_arg_error);

  const auto vel = ps.field("vel");
  EXPECT_EQ(std::vector<std::uint64_t>(vel.dims().begin(), vel.dims().end()),
            (std::vector<std::uint64_t>{2, 3}));
  EXPECT_EQ(std::vector<std::uint64_t>(vel.strides().begin(), vel.strides().end()),
            (std::vector<std::uint64_t>{48, 4}));
  ASSERT_EQ(vel.count(), 6u);
  const float want[] = {1, 2, 3, 4, 5, 6};
  for (std::uint64_t i = 0; i < 6; ++i) EXPECT_EQ(vel.at<float>(i), want[i]) << i;
  EXPECT_THROW((void)vel.at<float>(6), tensogram::invalid_arg_error);
  EXPECT_THROW((void)vel.at<double>(0), tensogram::invalid_arg_error);
  EXPECT_EQ(vel.data(), ps.bytes().data() + 16);
  const auto names = ps.field("name");
  EXPECT_EQ(names.string(0), "alpha");
  EXPECT_EQ(names.string(1), "beta");
  EXPECT_EQ(ps.field("mass").at<double>(1), 2.5);

  const auto typed = ps.as<host_particle>();
  ASSERT_EQ(typed.size(), 2u);
  EXPECT_EQ(typed[1].id, 9u);
  EXPECT_EQ(typed[1].vel[2], 6.f);
  EXPECT_EQ(typed[1].name_offset, 5u);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(typed.data()) % 64, 0u);
  EXPECT_THROW((void)ps.as<std::uint64_t>(), tensogram::invalid_arg_error);
}

TEST(MetatensorFileExample, FlatViewOfPositions) {
  const auto f = open_bytes(example_file());
  const auto pos = f.flat("positions");
  EXPECT_EQ(pos.type(), mt::dtype::f32);
  EXPECT_EQ(std::vector<std::uint64_t>(pos.dims().begin(), pos.dims().end()),
            (std::vector<std::uint64_t>{2, 3}));
  const auto v = pos.as<float>();
  EXPECT_EQ(std::vector<float>(v.begin(), v.end()), (std::vector<float>{0.5f, 1.5f, 2.5f, -1.f, -2.f, -3.f}));
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(v.data()) % 64, 0u);
  EXPECT_THROW((void)pos.as<double>(), tensogram::invalid_arg_error);
  EXPECT_EQ(pos.bytes().size(), 24u);
}

TEST(MetatensorFileExample, LogicalValue) {
  const auto f = open_bytes(example_file());
  EXPECT_EQ(f.logical_value("labels"), json::parse(R"(["red","green","blue"])"));
  EXPECT_EQ(f.logical_value("positions"), json::parse(R"([[0.5,1.5,2.5],[-1,-2,-3]])"));
  EXPECT_EQ(f.logical_value("particles"), json::parse(R"([{"id":7,"mass":1.5,"vel":[1,2,3],"name":"alpha"},)"
                                                      R"({"id":9,"mass":2.5,"vel":[4,5,6],"name":"beta"}])"));
  EXPECT_EQ(f.logical_value().size(), 3u);
  EXPECT_EQ(f.logical_elements("positions", 2, 3), json::parse("[2.5,-1,-2]"));
  EXPECT_EQ(f.logical_elements("labels", 3, 0), json::array());
  EXPECT_EQ(f.logical_elements("particles", 1, 1)[0]["name"], "beta");
  EXPECT_THROW((void)f.logical_elements("positions", 5, 2), tensogram::invalid_arg_error);
  EXPECT_THROW((void)f.logical_elements("positions", 7, 0), tensogram::invalid_arg_error);
  EXPECT_THROW((void)f.logical_value("nope"), tensogram::invalid_arg_error);
}

TEST(MetatensorFileExample, OpenFromDiskAndUnalignedBuffer) {
  const auto bytes = example_file();
  const auto path =
      std::filesystem::temp_directory_path() / ("h3_example_" + std::to_string(::getpid()) + ".mt");
  {
    std::FILE* out = std::fopen(path.c_str(), "wb");
    ASSERT_NE(out, nullptr);
    ASSERT_EQ(std::fwrite(bytes.data(), 1, bytes.size(), out), bytes.size());
    std::fclose(out);
  }
  {
    const auto f = mt::file::open(path);
    EXPECT_EQ(f.records("particles")[1].string("name"), "beta");
  }
  std::filesystem::remove(path);
  EXPECT_THROW((void)mt::file::open(path), tensogram::io_error);

  // A caller's buffer at an odd address is copied into an aligned one (§9).
  std::vector<std::byte> storage(bytes.size() + 64 + 3);
  auto addr = reinterpret_cast<std::uintptr_t>(storage.data());
  const std::size_t shift = static_cast<std::size_t>((64 - addr % 64) % 64 + 3);
  std::memcpy(storage.data() + shift, bytes.data(), bytes.size());
  const auto f =
      mt::file::from_buffer(tensogram::buffer::borrowed(std::span(storage).subspan(shift, bytes.size())));
  const auto v = f.flat("positions").as<float>();
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(v.data()) % 64, 0u);
  EXPECT_EQ(v[1], 1.5f);
  const auto copy = f;  // copies share the image: views stay valid
  EXPECT_EQ(copy.blobs("labels").string(2), "blue");
}

// --- Appendix A ------------------------------------------------------------

const std::string appendix_schema =
    R"({"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object",)"
    R"("required":["w"],"additionalProperties":false,)"
    R"("properties":{"w":{"type":"array","items":{"type":"number","TypeDef:Float32":true}}}})";
const std::string appendix_layout =
    R"({"tensors":{"w":{"kind":"flat","data":"w","rank":1,"align":16,"dtype":"F32"}}})";

std::vector<std::byte> appendix_file(std::vector<float> w = {1.f, 2.f}) {
  std::vector<std::byte> data;
  for (float v : w) put(data, v);
  return build(mt_metadata(appendix_schema, appendix_layout, "16"), {{"w", "F32", {w.size()}, data}}, 16);
}

TEST(MetatensorFileAppendixA, MinimalHeader) {
  const auto bytes = appendix_file();
  const auto f = open_bytes(bytes);
  EXPECT_EQ(f.alignment(), 16u);
  EXPECT_EQ(f.base().data_offset() % 16, 0u);
  const auto w = f.flat("w").as<float>();
  ASSERT_EQ(w.size(), 2u);
  EXPECT_EQ(w[0], 1.f);
  EXPECT_EQ(w[1], 2.f);
  EXPECT_TRUE(f.user_metadata().empty());
  f.validate_deep();
  EXPECT_EQ(f.logical_value(), json::parse(R"({"w":[1,2]})"));
}

// The appendix schema is all flat tensors: opening compiles it on the fast
// path and builds its document, schema table and the layout table's value
// on first use. Threads that all ask at once get the same values.
TEST(MetatensorFileAppendixA, DocumentsBuiltOnFirstUseByManyThreads) {
  const auto bytes = appendix_file({1.f, 2.f, 3.f});
  const auto f = open_bytes(bytes);
  std::vector<const json*> documents(8, nullptr);
  std::vector<const json*> tables(8, nullptr);
  std::vector<std::thread> threads;
  for (std::size_t i = 0; i < documents.size(); ++i) {
    threads.emplace_back([&, i, copy = f] {
      documents[i] = &copy.schema().document();
      tables[i] = &copy.layout_table();
      copy.validate_deep();  // the evaluator reads the table
    });
  }
  for (auto& t : threads) t.join();
  for (std::size_t i = 0; i < documents.size(); ++i) {
    EXPECT_EQ(documents[i], documents[0]);  // one value, shared by the copies
    EXPECT_EQ(tables[i], tables[0]);
  }
  EXPECT_EQ(*documents[0], json::parse(appendix_schema));
  EXPECT_EQ(*tables[0], json::parse(appendix_layout));
  EXPECT_EQ(f.schema().property_schema("w"), json::parse(appendix_schema)["properties"]["w"]);
}

// --- Other kinds ------------------------------------------------------------

std::string root_schema(const std::string& props, const std::string& required = "") {
  return R"({"type":"object","properties":{)" + props + "}" +
         (required.empty() ? std::string() : R"(,"required":[)" + required + "]") + "}";
}

TEST(MetatensorFileKinds, RaggedListTensor) {
  // Rows of F32 of varying length: blob tensor with List items (§5.2).
  const std::string schema = root_schema(
      R"("rows":{"type":"array","items":{"type":"array","TypeDef:List":true,"items":{"type":"number","TypeDef:Float32":true}}})");
  const std::string layout =
      R"({"tensors":{"rows":{"kind":"blob","data":"rows","heap":"rows#heap","rank":1,"align":64,)"
      R"("item":{"type":"list","elem":{"type":"F32","shape":[]}}}}})";
  std::vector<std::byte> index;
  for (auto [o, l] : {std::pair<std::uint64_t, std::uint64_t>{0, 8}, {8, 0}, {8, 4}}) {
    put(index, o);
    put(index, l);
  }
  std::vector<std::byte> heap;
  for (float v : {1.f, 2.f, 3.f}) put(heap, v);
  const auto bytes = build(
      mt_metadata(schema, layout),
      {{"rows", "U8", {3, 16}, index}, {"__pad__0", "U8", {16}, zeros(16)}, {"rows#heap", "U8", {12}, heap}});
  const auto f = open_bytes(bytes);
  const auto rows = f.blobs("rows");
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows.list<float>(0).size(), 2u);
  EXPECT_EQ(rows.list<float>(0)[1], 2.f);
  EXPECT_TRUE(rows.list<float>(1).empty());
  EXPECT_EQ(rows.list<float>(2)[0], 3.f);
  EXPECT_THROW((void)rows.list<double>(0), tensogram::invalid_arg_error);
  EXPECT_THROW((void)rows.string(0), tensogram::invalid_arg_error);
  EXPECT_EQ(f.logical_value("rows"), json::parse("[[1,2],[],[3]]"));
  f.validate_deep();
}

TEST(MetatensorFileKinds, NestedRecordsTuplesAndScalarRank0) {
  // struct Outer { u8 tag; Inner in; [u16, i8] pair; }  Inner { f32 x; bool ok; }
  const std::string inner =
      R"({"type":"object","TypeDef:Struct":true,"required":["x","ok"],"properties":{)"
      R"("x":{"type":"number","TypeDef:Float32":true},"ok":{"type":"boolean","TypeDef:Bool":true}}})";
  const std::string outer =
      R"({"type":"object","TypeDef:Struct":true,"required":["tag","in","pair"],"properties":{)"
      R"("tag":{"type":"integer","TypeDef:Uint8":true},"in":)" +
      inner +
      R"(,"pair":{"type":"array","prefixItems":[{"type":"integer","TypeDef:Uint16":true},)"
      R"({"type":"integer","TypeDef:Int8":true}],"items":false}}})";
  const std::string schema = root_schema(R"("o":)" + outer);
  // Layout: tag@0 (1), in@4 {x@0, ok@4; size 8 align 4}, pair@12 {0@0 u16, 1@2 i8; size 4 align 2}; size 16
  // align 4.
  const std::string layout =
      R"({"tensors":{"o":{"kind":"struct","data":"o","rank":0,"align":64,"record":{"size":16,"align":4,"fields":[)"
      R"({"name":"tag","offset":0,"type":"U8","shape":[]},)"
      R"({"name":"in","offset":4,"type":"struct","shape":[],"record":{"size":8,"align":4,"fields":[)"
      R"({"name":"x","offset":0,"type":"F32","shape":[]},{"name":"ok","offset":4,"type":"BOOL","shape":[]}]}},)"
      R"({"name":"pair","offset":12,"type":"struct","shape":[],"record":{"size":4,"align":2,"fields":[)"
      R"({"name":"0","offset":0,"type":"U16","shape":[]},{"name":"1","offset":2,"type":"I8","shape":[]}]}}]}}}})";
  std::vector<std::byte> rec(16);
  rec[0] = std::byte{5};
  const float x = 2.25f;
  std::memcpy(rec.data() + 4, &x, 4);
  rec[8] = std::byte{1};
  const std::uint16_t a = 700;
  std::memcpy(rec.data() + 12, &a, 2);
  rec[14] = std::byte{0xFE};  // -2
  const auto bytes = build(mt_metadata(schema, layout), {{"o", "U8", {16}, rec}});
  const auto f = open_bytes(bytes);
  const auto o = f.records("o");
  ASSERT_EQ(o.size(), 1u);
  EXPECT_TRUE(o.dims().empty());
  EXPECT_EQ(o[0].get<std::uint8_t>("tag"), 5u);
  EXPECT_EQ(o[0].get<float>("in.x"), 2.25f);
  EXPECT_EQ(o[0].sub("in").get<std::uint8_t>("ok"), 1u);
  EXPECT_EQ(o[0].get<std::uint16_t>("pair.0"), 700u);
  EXPECT_EQ(o[0].get<std::int8_t>("pair.1"), -2);
  EXPECT_EQ(o.field("in.x").at<float>(0), 2.25f);
  EXPECT_EQ(f.logical_value("o"), json::parse(R"({"tag":5,"in":{"x":2.25,"ok":true},"pair":[700,-2]})"));
  f.validate_deep();

  auto bad = rec;
  bad[8] = std::byte{2};
  EXPECT_EQ(verdict(build(mt_metadata(schema, layout), {{"o", "U8", {16}, bad}}), true), "MT_BOOL");
  bad = rec;
  bad[1] = std::byte{1};  // inner padding after tag
  EXPECT_EQ(verdict(build(mt_metadata(schema, layout), {{"o", "U8", {16}, bad}}), true),
            "MT_NONZERO_PADDING");
  bad = rec;
  bad[10] = std::byte{1};  // tail padding of the nested record "in"
  EXPECT_EQ(verdict(build(mt_metadata(schema, layout), {{"o", "U8", {16}, bad}}), true),
            "MT_NONZERO_PADDING");
  bad = rec;
  bad[15] = std::byte{1};  // tail padding of the tuple
  try {
    open_bytes(build(mt_metadata(schema, layout), {{"o", "U8", {16}, bad}})).validate_deep();
    FAIL();
  } catch (const mt::error& e) {
    EXPECT_EQ(e.kind(), errc::mt_nonzero_padding);
    EXPECT_NE(std::string(e.what()).find("/o/pair"), std::string::npos) << e.what();
  }
}

TEST(MetatensorFileDecode, MinifloatsAndComplex) {
  const auto one = [](const std::string& kw, const std::string& dtype, std::vector<std::byte> data,
                      std::vector<std::uint64_t> shape) {
    const std::string schema = root_schema(R"("t":{"type":"array","items":{"TypeDef:)" + kw + R"(":true}})");
    const std::string layout =
        R"({"tensors":{"t":{"kind":"flat","data":"t","rank":1,"align":64,"dtype":")" + dtype + R"("}}})";
    return open_bytes(build(mt_metadata(schema, layout), {{"t", dtype, shape, std::move(data)}}))
        .logical_value("t");
  };
  const auto bytes = [](std::initializer_list<unsigned> v) {
    std::vector<std::byte> out;
    for (auto b : v) out.push_back(static_cast<std::byte>(b));
    return out;
  };
  // F16: 1.0, -2.0, +inf, smallest subnormal 2^-24.
  auto v = one("Float16", "F16", bytes({0x00, 0x3C, 0x00, 0xC0, 0x00, 0x7C, 0x01, 0x00}), {4});
  EXPECT_EQ(v[0], 1.0);
  EXPECT_EQ(v[1], -2.0);
  EXPECT_TRUE(std::isinf(v[2].get<double>()));
  EXPECT_EQ(v[3], std::ldexp(1.0, -24));
  // BF16: 0x3FC0 = 1.5.
  EXPECT_EQ(one("BFloat16", "BF16", bytes({0xC0, 0x3F}), {1})[0], 1.5);
  // F8 E4M3FN: 0x7E = 448, 0x7F = NaN, 0x01 = 2^-9.
  v = one("Float8E4M3", "F8_E4M3", bytes({0x7E, 0x7F, 0x01}), {3});
  EXPECT_EQ(v[0], 448.0);
  EXPECT_TRUE(std::isnan(v[1].get<double>()));
  EXPECT_EQ(v[2], std::ldexp(1.0, -9));
  // F8 E5M2: 0x7B = 57344 (max), 0x7C = inf.
  v = one("Float8E5M2", "F8_E5M2", bytes({0x7B, 0x7C}), {2});
  EXPECT_EQ(v[0], 57344.0);
  EXPECT_TRUE(std::isinf(v[1].get<double>()));
  // F8 E8M0: 127 = 1, 0xFF = NaN.
  v = one("Float8E8M0", "F8_E8M0", bytes({127, 0xFF}), {2});
  EXPECT_EQ(v[0], 1.0);
  EXPECT_TRUE(std::isnan(v[1].get<double>()));
  // FNUZ: 0x80 = NaN; E4M3FNUZ 0x40 = 2^(8-8) = 1; E5M2FNUZ 0x40 = 2^(16-16) = 1.
  v = one("Float8E4M3FNUZ", "F8_E4M3FNUZ", bytes({0x40, 0x80}), {2});
  EXPECT_EQ(v[0], 1.0);
  EXPECT_TRUE(std::isnan(v[1].get<double>()));
  EXPECT_EQ(one("Float8E5M2FNUZ", "F8_E5M2FNUZ", bytes({0x40}), {1})[0], 1.0);
  // F4 E2M1, two per byte, low nibble first: 0x71 -> [0.5, 6].
  EXPECT_EQ(one("Float4E2M1", "F4", bytes({0x71}), {2}), json::parse("[0.5,6]"));
  // F6 E2M3: 4 values in 3 bytes, LSB first: 0x08 = 1.0, 0x1F = 7.5, 0x20|0x01 = -0.125, 0 = 0.
  {
    const std::uint32_t packed = 0x08u | (0x1Fu << 6) | (0x21u << 12);
    v = one("Float6E2M3", "F6_E2M3", bytes({packed & 0xFF, (packed >> 8) & 0xFF, (packed >> 16) & 0xFF}),
            {4});
    EXPECT_EQ(v, json::parse("[1.0,7.5,-0.125,0]"));
  }
  // F6 E3M2: 0x0C = 1.0 (e=3, bias 3), 0x1F = 28.
  {
    const std::uint32_t packed = 0x0Cu | (0x1Fu << 6);
    v = one("Float6E3M2", "F6_E3M2", bytes({packed & 0xFF, (packed >> 8) & 0xFF, (packed >> 16) & 0xFF}),
            {4});
    EXPECT_EQ(v[0], 1.0);
    EXPECT_EQ(v[1], 28.0);
  }
  // C64 -> [re, im].
  std::vector<std::byte> c;
  put(c, 1.5f);
  put(c, -2.f);
  EXPECT_EQ(one("Complex64", "C64", c, {1}), json::parse("[[1.5,-2]]"));
}

// BlobRefs in fixed arrays and List elements that are records (§6.4, §8.1).
struct host_point {
  std::uint8_t a;
  float b;
};

struct items_case {
  std::string schema = root_schema(
      R"("items":{"type":"array","items":{"type":"object","TypeDef:Struct":true,"required":["id","tags","pts"],)"
      R"("properties":{"id":{"type":"integer","TypeDef:Uint16":true},)"
      R"("tags":{"type":"array","minItems":2,"maxItems":2,"items":{"type":"string","TypeDef:String":true}},)"
      R"("pts":{"type":"array","TypeDef:List":true,"items":{"type":"object","TypeDef:Struct":true,)"
      R"("required":["a","b"],"properties":{"a":{"type":"integer","TypeDef:Uint8":true},)"
      R"("b":{"type":"number","TypeDef:Float32":true}}}}}}})");
  std::string layout =
      R"({"tensors":{"items":{"kind":"struct","data":"items","heap":"items#heap","rank":1,"align":64,)"
      R"("record":{"size":56,"align":8,"fields":[{"name":"id","offset":0,"type":"U16","shape":[]},)"
      R"({"name":"tags","offset":8,"type":"string","shape":[2]},)"
      R"({"name":"pts","offset":40,"type":"list","shape":[],"elem":{"type":"struct","shape":[],)"
      R"("record":{"size":8,"align":4,"fields":[{"name":"a","offset":0,"type":"U8","shape":[]},)"
      R"({"name":"b","offset":4,"type":"F32","shape":[]}]}}}]}}}})";
  std::vector<std::byte> record;
  std::vector<std::byte> heap;

  items_case() {
    put<std::uint16_t>(record, 3);
    record.resize(8);
    for (auto [o, l] : {std::pair<std::uint64_t, std::uint64_t>{0, 1}, {1, 2}, {4, 16}}) {
      put(record, o);
      put(record, l);
    }
    heap = text_bytes("xyz");
    heap.push_back(std::byte{0});
    for (auto [a, b] : {std::pair<std::uint8_t, float>{1, 0.5f}, {2, 1.5f}}) {
      put(heap, a);
      heap.resize(heap.size() + 3);
      put(heap, b);
    }
  }
  [[nodiscard]] std::vector<std::byte> bytes() const {
    return build(mt_metadata(schema, layout), {{"items", "U8", {1, 56}, record},
                                               {"__pad__0", "U8", {8}, zeros(8)},
                                               {"items#heap", "U8", {heap.size()}, heap}});
  }
};

TEST(MetatensorFileKinds, BlobRefsInFixedArraysAndListsOfRecords) {
  const items_case c;
  const auto f = open_bytes(c.bytes());
  const auto items = f.records("items");
  ASSERT_EQ(items.size(), 1u);
  EXPECT_EQ(items[0].get<std::uint16_t>("id"), 3u);
  EXPECT_THROW((void)items[0].string("tags"), tensogram::invalid_arg_error);  // a fixed array: use field()
  const auto tags = items.field("tags");
  EXPECT_EQ(tags.count(), 2u);
  EXPECT_EQ(tags.string(0), "x");
  EXPECT_EQ(tags.string(1), "yz");
  EXPECT_THROW((void)tags.string(2), tensogram::invalid_arg_error);
  const auto pts = items[0].list<host_point>("pts");
  ASSERT_EQ(pts.size(), 2u);
  EXPECT_EQ(pts[1].a, 2u);
  EXPECT_EQ(pts[1].b, 1.5f);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(pts.data()) % 4, 0u);
  EXPECT_THROW((void)items[0].list<float>("pts"), tensogram::invalid_arg_error);
  EXPECT_EQ(items[0].blob("pts").size(), 16u);
  EXPECT_EQ(f.logical_value("items"),
            json::parse(R"([{"id":3,"tags":["x","yz"],"pts":[{"a":1,"b":0.5},{"a":2,"b":1.5}]}])"));
  f.validate_deep();

  auto bad = c;
  std::memcpy(bad.record.data() + 24 + 8, "\x64\0\0\0\0\0\0\0", 8);  // tags[1] length 100
  EXPECT_EQ(verdict(bad.bytes()), "MT_BLOB_BOUNDS");
  bad = c;
  bad.record[40] = std::byte{2};  // pts offset 2: misaligned for align 4
  EXPECT_EQ(verdict(bad.bytes()), "MT_BLOB_ALIGN");
  bad = c;
  bad.record[48] = std::byte{12};  // pts length 12: not a multiple of 8
  EXPECT_EQ(verdict(bad.bytes()), "MT_BLOB_ALIGN");
  bad = c;
  bad.heap[5] = std::byte{1};  // padding inside pts[0]
  try {
    open_bytes(bad.bytes()).validate_deep();
    FAIL();
  } catch (const mt::error& e) {
    EXPECT_EQ(e.kind(), errc::mt_nonzero_padding);
    EXPECT_NE(std::string(e.what()).find("/items/0/pts/0"), std::string::npos) << e.what();
  }
  bad = c;
  bad.heap[3] = std::byte{1};  // heap gap before the aligned List blob
  EXPECT_EQ(verdict(bad.bytes(), true), "MT_NONZERO_PADDING");
  bad = c;
  bad.heap[1] = std::byte{0xFF};  // tags[1] invalid UTF-8
  try {
    open_bytes(bad.bytes()).validate_deep();
    FAIL();
  } catch (const mt::error& e) {
    EXPECT_EQ(e.kind(), errc::mt_utf8);
    EXPECT_NE(std::string(e.what()).find("/items/0/tags/1"), std::string::npos) << e.what();
  }
}

}  // namespace
