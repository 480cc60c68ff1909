// Helpers of the io tests: temporary directories, generated messages and
// message comparison.
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "test_support.hpp"

namespace tgtest {

/// A fresh directory under the system temp dir, removed with its contents.
class temp_dir {
 public:
  temp_dir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "tensogram-io-XXXXXX").string();
    if (::mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = tmpl;
  }
  temp_dir(const temp_dir&) = delete;
  temp_dir& operator=(const temp_dir&) = delete;
  ~temp_dir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  [[nodiscard]] const std::filesystem::path& path() const noexcept { return path_; }
  [[nodiscard]] std::filesystem::path operator/(const std::string& name) const { return path_ / name; }

 private:
  std::filesystem::path path_;
};

inline void write_bytes(const std::filesystem::path& p, std::span<const std::byte> b) {
  std::ofstream f(p, std::ios::binary | std::ios::trunc);
  f.write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
  if (!f) throw std::runtime_error("cannot write " + p.string());
}

inline bytes read_bytes(const std::filesystem::path& p) {
  std::ifstream f(p, std::ios::binary);
  const std::vector<char> c((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  bytes out(c.size());
  if (!c.empty()) std::memcpy(out.data(), c.data(), c.size());
  return out;
}

/// One encoded message: `objects` float32 tensors of `elements` values each,
/// values derived from `seed` (object k element e = seed * 1000 + k * 100 + e
/// modulo float precision), a "step" key per message, fixed provenance.
inline bytes make_message(std::uint64_t seed, std::size_t objects = 1, std::size_t elements = 4,
                          const tensogram::encode_options& base_options = {}) {
  tensogram::global_metadata meta;
  meta.extra.set("step", tensogram::cbor::value(seed));
  std::vector<std::vector<float>> values(objects);
  std::vector<tensogram::object_input> inputs;
  for (std::size_t k = 0; k < objects; ++k) {
    values[k].resize(elements);
    for (std::size_t e = 0; e < elements; ++e) values[k][e] = static_cast<float>(seed * 1000 + k * 100 + e);
    tensogram::object_input in;
    in.descriptor = tensogram::data_object_descriptor::contiguous(tensogram::dtype::float32, {elements});
    in.data = std::as_bytes(std::span<const float>(values[k]));
    inputs.push_back(std::move(in));
  }
  tensogram::encode_options o = base_options;
  o.fixed_provenance = test_provenance();
  return tensogram::encode(meta, inputs, o);
}

/// Value of element `e` of object `k` of `make_message(seed, ...)`.
inline float expected_value(std::uint64_t seed, std::size_t k, std::size_t e) {
  return static_cast<float>(seed * 1000 + k * 100 + e);
}

inline void expect_same_object(const tensogram::decoded_object& a, const tensogram::decoded_object& b) {
  EXPECT_EQ(a.descriptor(), b.descriptor());
  EXPECT_EQ(a.data_byte_order(), b.data_byte_order());
  EXPECT_EQ(a.hash_slot(), b.hash_slot());
  ASSERT_EQ(a.data_size(), b.data_size());
  EXPECT_EQ(0, a.data_size() == 0 ? 0 : std::memcmp(a.data(), b.data(), a.data_size()));
}

inline void expect_same_message(const tensogram::message& a, const tensogram::message& b) {
  EXPECT_EQ(a.global(), b.global());
  ASSERT_EQ(a.num_objects(), b.num_objects());
  for (std::size_t k = 0; k < a.num_objects(); ++k) expect_same_object(a.object(k), b.object(k));
}

}  // namespace tgtest
