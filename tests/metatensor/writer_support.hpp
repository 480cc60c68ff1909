// Helpers shared by the metatensor writer tests (spec 06 §3, §6, §7): the
// §6.7 worked example built through the typed API, byte loads from the
// written image, and checks on its safetensors entries and on errors.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <metatensor/file.hpp>
#include <metatensor/layout.hpp>
#include <metatensor/safetensors.hpp>
#include <metatensor/writer.hpp>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "spec_files.hpp"

namespace metatensor_test::writer {

namespace st = metatensor::safetensors;
using metatensor::errc;
using metatensor::file_builder;
using metatensor::writer_options;
using metatensor_test::text_bytes;

// §6.7 worked example (the schema of spec_files.hpp, which the reader tests
// build by hand).
inline const std::string worked_schema = metatensor_test::example_schema();

inline const nlohmann::json worked_value = metatensor_test::example_value();

template <class T>
inline T load(std::span<const std::byte> bytes, std::size_t at) {
  T v{};
  std::memcpy(&v, bytes.data() + at, sizeof(T));
  return v;
}

inline std::uint64_t load_u64(std::span<const std::byte> bytes, std::size_t at) {
  return load<std::uint64_t>(bytes, at);
}

inline std::string text_of(std::span<const std::byte> bytes) {
  return {reinterpret_cast<const char*>(bytes.data()), bytes.size()};
}

template <class T>
inline std::vector<std::byte> pack(std::initializer_list<T> values) {
  std::vector<std::byte> out(values.size() * sizeof(T));
  std::size_t i = 0;
  for (const T& v : values) std::memcpy(out.data() + (i++) * sizeof(T), &v, sizeof(T));
  return out;
}

// Sub-byte tensors have no element type: their bytes as integers.
inline std::vector<std::uint8_t> raw_u8(const st::tensor_view& t) {
  std::vector<std::uint8_t> out;
  for (auto b : t.bytes()) out.push_back(std::to_integer<std::uint8_t>(b));
  return out;
}

inline st::file open_bytes(const std::vector<std::byte>& bytes) {
  return st::file::from_buffer(tensogram::buffer::owned(bytes));
}

// The worked example built through the typed API.
inline file_builder worked_builder(writer_options options = {}) {
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

inline void expect_entries(const st::file& f, const std::vector<expected_entry>& want) {
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
inline void expect_error(errc kind, F&& f, std::string_view needle = {}) {
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
inline void expect_misuse(F&& f, std::string_view needle = {}) {
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
inline metatensor::compiled_schema schema_of(const std::vector<std::pair<std::string, std::string>>& props,
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

}  // namespace metatensor_test::writer
