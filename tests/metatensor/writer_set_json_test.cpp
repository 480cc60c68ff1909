// The metatensor writer's set_json (spec 06 §8.3): how JSON values are
// encoded into each dtype, and the values it refuses.
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
