// The metatensor writer's typed API refusing misuse and invalid options
// (spec 06 §3, §6), and raw bytes checked so the file stays deep-valid.
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
