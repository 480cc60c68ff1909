// Helpers shared by the tests of the `tensogram` binary's rewriting
// subcommands (cli_rewrite_test.cpp, cli_restructure_test.cpp; spec 04
// §A.5): expected exits, the messages and objects of a file as stored on the
// wire, and a file written here with lossy, compressed and masked objects.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include <tensogram.hpp>
#include <tensogram/cbor/codec.hpp>
#include <tensogram/format/preamble.hpp>
#include <tensogram/format/wire.hpp>
#include <tensogram/io/file.hpp>

#include "message_edit.hpp"
#include "test_support.hpp"

namespace tensogram::cli::test {

namespace fs = std::filesystem;

inline void expect_success(const run_result& r, const std::string& out) {
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, out);
  EXPECT_EQ(r.err, "");
}

inline void expect_runtime_error(const run_result& r, const std::string& err, const std::string& out = "") {
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.out, out);
  EXPECT_EQ(r.err, err);
}

inline void expect_usage_error(const run_result& r) {
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err.rfind("error: ", 0), 0u) << r.err;
}

inline std::vector<std::byte> concat(const std::vector<std::vector<std::byte>>& parts) {
  std::vector<std::byte> out;
  for (const auto& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

// Each message's raw bytes, in file order.
inline std::vector<std::vector<std::byte>> messages_of(const fs::path& path) {
  tensogram::file f = tensogram::file::open(path);
  std::vector<std::vector<std::byte>> out;
  for (std::size_t i = 0; i < f.message_count(); ++i) {
    const buffer b = f.message_bytes(i);
    out.emplace_back(b.bytes().begin(), b.bytes().end());
  }
  return out;
}

inline global_metadata full_metadata(const std::vector<std::byte>& msg) {
  return decode(buffer::borrowed(msg)).global();
}

inline std::vector<std::string> dir_listing(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

inline std::string text_at(const global_metadata& g, std::size_t i, std::string_view path) {
  const cbor::value* v = g.get_at(i, path);
  if (v == nullptr) return "<missing>";
  if (const std::string* s = v->as_text()) return *s;
  return "<not text: " + display_text(*v) + ">";
}

inline std::string extra_text(const global_metadata& g, std::string_view path) {
  const cbor::value* v = lookup_path(g.extra, path);
  if (v == nullptr) return "<missing>";
  if (const std::string* s = v->as_text()) return *s;
  return "<not text: " + display_text(*v) + ">";
}

// One stored object (descriptor + payload bytes as on the wire) and its
// decoded bytes, for bit-for-bit comparisons across commands.
struct object_image {
  data_object_descriptor descriptor;
  std::vector<std::byte> stored;
  std::vector<std::byte> decoded;
};

inline std::vector<object_image> objects_of(const std::vector<std::byte>& msg) {
  const buffer b = buffer::borrowed(msg);
  const wire_message wm = read_wire_message(b, 0);
  const message decoded = decode(b);
  std::vector<object_image> out;
  for (std::size_t k = 0; k < wm.objects.size(); ++k) {
    const auto d = decoded.object(k).bytes();
    out.push_back({wm.objects[k].descriptor,
                   {wm.objects[k].payload.begin(), wm.objects[k].payload.end()},
                   {d.begin(), d.end()}});
  }
  return out;
}

inline std::vector<object_image> objects_of_file(const fs::path& path) {
  std::vector<object_image> out;
  for (const auto& m : messages_of(path)) {
    auto objs = objects_of(m);
    out.insert(out.end(), objs.begin(), objs.end());
  }
  return out;
}

inline void expect_same_objects(const std::vector<object_image>& a, const std::vector<object_image>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t k = 0; k < a.size(); ++k) {
    // Canonical bytes: map entry order does not matter.
    EXPECT_EQ(cbor::encode(a[k].descriptor.to_cbor()), cbor::encode(b[k].descriptor.to_cbor()))
        << "object " << k;
    EXPECT_TRUE(a[k].stored == b[k].stored) << "object " << k;
    EXPECT_TRUE(a[k].decoded == b[k].decoded) << "object " << k;
  }
}

inline void expect_all_hashed(const fs::path& path) {
  for (const auto& m : messages_of(path)) EXPECT_NO_THROW(verify_hashes(m)) << path;
}

// A scratch copy of a fixture, so commands that could write can be checked
// to leave their input alone.
inline fs::path copy_fixture(const scratch_dir& dir, const std::string& name) {
  const fs::path p = dir / name;
  fs::copy_file(fixture(name), p);
  return p;
}

// ---- a file written here with lossy, compressed and masked objects ----------

inline std::vector<std::byte> be_float32(const std::vector<float>& v) {
  std::vector<std::byte> out(v.size() * 4);
  for (std::size_t i = 0; i < v.size(); ++i) {
    const auto u = std::bit_cast<std::uint32_t>(v[i]);
    for (int b = 0; b < 4; ++b) out[i * 4 + b] = static_cast<std::byte>((u >> (8 * (3 - b))) & 0xFF);
  }
  return out;
}

template <typename T>
inline std::span<const std::byte> raw(const std::vector<T>& v) {
  return std::as_bytes(std::span(v));
}

// Message 0: simple_packing + szip float64 (lossy), zstd float32 stored
// big-endian and zfp float64 (lossy). Message 1: a float64 with NaNs (a NaN mask) and a
// shuffle + lz4 int16. Every message has base entries and `_extra_`.
inline std::vector<std::byte> codec_file() {
  std::vector<double> smooth(1000);
  for (std::size_t i = 0; i < smooth.size(); ++i) smooth[i] = 280.0 + 15.0 * std::sin(0.01 * double(i));
  std::vector<float> f32(64 * 8);
  for (std::size_t i = 0; i < f32.size(); ++i) f32[i] = static_cast<float>(i % 37) * 0.25f;
  const std::vector<std::byte> f32_be = be_float32(f32);
  std::vector<double> with_nan(50);
  for (std::size_t i = 0; i < with_nan.size(); ++i) {
    with_nan[i] = i % 7 == 3 ? std::numeric_limits<double>::quiet_NaN() : double(i) / 3.0;
  }
  std::vector<std::int16_t> i16(12);
  for (std::size_t i = 0; i < i16.size(); ++i) i16[i] = static_cast<std::int16_t>(1000 - 250 * int(i));

  data_object_descriptor sp = data_object_descriptor::contiguous(dtype::float64, {1000});
  sp.encoding = "simple_packing";
  sp.compression = "szip";
  sp.params.set("sp_bits_per_value", 16);
  sp.params.set("szip_rsi", 128);
  sp.params.set("szip_block_size", 16);
  sp.params.set("szip_flags", 8);
  data_object_descriptor zs = data_object_descriptor::contiguous(dtype::float32, {64, 8}, byte_order::big);
  zs.compression = "zstd";
  zs.params.set("zstd_level", 5);
  data_object_descriptor zfp = data_object_descriptor::contiguous(dtype::float64, {1000});
  zfp.compression = "zfp";
  zfp.params.set("zfp_mode", "fixed_precision");
  zfp.params.set("zfp_precision", 20);
  data_object_descriptor nan = data_object_descriptor::contiguous(dtype::float64, {50});
  data_object_descriptor sh = data_object_descriptor::contiguous(dtype::int16, {3, 4});
  sh.filter = "shuffle";
  sh.params.set("shuffle_element_size", 2);
  sh.compression = "lz4";

  global_metadata m0;
  m0.base = {cbor::value::make_map({{"name", "sp"}}), cbor::value::make_map({{"name", "zstd"}}),
             cbor::value::make_map({{"name", "zfp"}})};
  m0.extra.set("campaign", "rt");
  global_metadata m1;
  m1.base = {cbor::value::make_map({{"name", "nan"}}), cbor::value::make_map({{"name", "lz4"}})};
  m1.extra.set("campaign", "rt");
  m1.extra.set("second", 2);

  encode_options opts;
  opts.allow_nan = true;
  const std::vector<object_input> o0{{sp, raw(smooth)}, {zs, f32_be}, {zfp, raw(smooth)}};
  const std::vector<object_input> o1{{nan, raw(with_nan)}, {sh, raw(i16)}};
  return concat({encode(m0, o0, opts), encode(m1, o1, opts)});
}

}  // namespace tensogram::cli::test
