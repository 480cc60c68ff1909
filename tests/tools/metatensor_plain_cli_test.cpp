// The `metatensor` tool on plain safetensors files (every metatensor file is
// one, and the tool reads theirs too): `validate`'s own verdict and exit code
// 3, `dump`, `to-tgm` / `from-tgm` for every safetensors dtype and for files
// without tensors; and `from-npy` on NumPy text arrays.
#include <gtest/gtest.h>

#include <cstring>
#include <metatensor.hpp>
#include <nlohmann/json.hpp>
#include <string>
#include <tensogram.hpp>
#include <tensogram/cbor/json.hpp>
#include <vector>

#include "test_support.hpp"

namespace {

namespace st = metatensor::safetensors;
using namespace tensogram::cli::test;  // make_npy, run_program, scratch_dir, ...

run_result mt(const std::vector<std::string>& args) {
  return run_program(METATENSOR_CLI, args);
}

std::vector<std::byte> floats(std::initializer_list<float> v) {
  std::vector<std::byte> out(v.size() * sizeof(float));
  std::memcpy(out.data(), std::data(v), out.size());
  return out;
}

// A plain safetensors file: "w" F32 [2, 3] = 0, 0.5, ..., 2.5; "mask" BOOL
// [2] = `mask`; metadata {"author": "x"}.
std::filesystem::path write_plain(const scratch_dir& dir, const std::string& name,
                                  std::vector<std::byte> mask = {std::byte{1}, std::byte{0}}) {
  static const std::vector<std::byte> w = floats({0.f, 0.5f, 1.f, 1.5f, 2.f, 2.5f});
  const std::vector<st::tensor_input> tensors = {{"w", metatensor::dtype::f32, {2, 3}, w},
                                                 {"mask", metatensor::dtype::boolean, {2}, mask}};
  const auto path = dir / name;
  st::write_file(path, tensors, {{"author", "x"}});
  return path;
}

std::filesystem::path write_metatensor(const scratch_dir& dir) {
  metatensor::file_builder b(metatensor::compile_schema_text(
      R"({"type":"object","properties":{"v":{"type":"array","items":{"type":"number","TypeDef:Float32":true}}}})"));
  const std::vector<float> v = {1.f, 2.f};
  b.set_flat<float>("v", {2}, v);
  const auto path = dir / "m.mt";
  b.write(path);
  return path;
}

}  // namespace

TEST(MetatensorPlainCli, ValidateSaysValidSafetensorsWithItsOwnExitCode) {
  const scratch_dir dir;
  const auto plain = write_plain(dir, "p.safetensors").string();
  const auto meta = write_metatensor(dir).string();

  auto r = mt({"validate", plain});
  EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
  EXPECT_EQ(r.out, plain + ": valid safetensors, no metatensor schema (safetensors)\n");
  r = mt({"validate", meta});
  EXPECT_EQ(r.exit_code, 0) << r.out;
  r = mt({"validate", meta, plain});  // all valid, one plain: 3
  EXPECT_EQ(r.exit_code, 3) << r.out;
  EXPECT_NE(r.out.find(meta + ": OK (structural)\n"), std::string::npos) << r.out;

  r = mt({"validate", "-j", plain});
  EXPECT_EQ(r.exit_code, 3);
  const auto doc = nlohmann::json::parse(r.out);
  EXPECT_EQ(doc[0]["valid"], true);
  EXPECT_EQ(doc[0]["format"], "safetensors");
  r = mt({"validate", "-j", meta});
  EXPECT_EQ(nlohmann::json::parse(r.out)[0]["format"], "metatensor");

  // The base layer is checked in full: a truncated file is invalid (exit 1,
  // also next to a valid plain file), with the base layer's error name.
  auto bytes = read_file(plain);
  bytes.pop_back();
  write_file(dir / "short.safetensors", bytes);
  r = mt({"validate", plain, (dir / "short.safetensors").string()});
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find((dir / "short.safetensors").string() + ": INVALID: "), std::string::npos) << r.out;
  r = mt({"validate", "-j", (dir / "short.safetensors").string()});
  EXPECT_EQ(nlohmann::json::parse(r.out)[0]["error"]["code"].get<std::string>().substr(0, 3), "ST_") << r.out;

  // --deep checks what needs no schema: BOOL bytes.
  const auto bad_bool = write_plain(dir, "b.safetensors", {std::byte{1}, std::byte{2}}).string();
  EXPECT_EQ(mt({"validate", bad_bool}).exit_code, 3);
  r = mt({"validate", "--deep", bad_bool});
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find("MT_BOOL"), std::string::npos) << r.out;
  r = mt({"validate", "--deep", plain});
  EXPECT_EQ(r.exit_code, 3) << r.out;
  EXPECT_EQ(r.out, plain + ": valid safetensors, no metatensor schema (safetensors, deep)\n");
}

TEST(MetatensorPlainCli, DumpShowsMetadataAndValues) {
  const scratch_dir dir;
  const auto plain = write_plain(dir, "p.safetensors").string();
  auto r = mt({"dump", plain, "-n", "4"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("(safetensors, no metatensor schema, "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("  author = x\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("  w (F32 [2,3], 6 elements)\n    [0] 0.0\n    [1] 0.5\n"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("    ... 2 more\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("  mask (BOOL [2], 2 elements)\n    [0] true\n    [1] false\n"), std::string::npos)
      << r.out;

  r = mt({"dump", "-j", "-n", "0", "-t", "w", plain});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto doc = nlohmann::json::parse(r.out);
  EXPECT_EQ(doc["format"], "safetensors");
  EXPECT_EQ(doc["user_metadata"]["author"], "x");
  EXPECT_EQ(doc["tensors"]["w"]["values"], nlohmann::json::parse("[0.0, 0.5, 1.0, 1.5, 2.0, 2.5]"));
  EXPECT_FALSE(doc["tensors"].contains("mask"));

  r = mt({"dump", "-t", "nope", plain});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("no tensor \"nope\""), std::string::npos) << r.err;
}

TEST(MetatensorPlainCli, ToTgmAndBackKeepsEveryDtypeExactly) {
  const scratch_dir dir;
  // One tensor of shape [2, 4] per safetensors dtype (8 elements: whole
  // bytes for F4 and F6 too), bytes 1, 2, 3, ... (BOOL: 0/1), named after
  // the dtype.
  std::vector<std::vector<std::byte>> data;
  std::vector<st::tensor_input> tensors;
  for (std::size_t i = 0; i < st::dtype_count; ++i) {
    const auto t = static_cast<metatensor::dtype>(i);
    const std::size_t bytes = 8 * st::dtype_bits(t) / 8;
    std::vector<std::byte> d(bytes);
    for (std::size_t k = 0; k < bytes; ++k)
      d[k] = static_cast<std::byte>(t == metatensor::dtype::boolean ? k % 2 : k + 1);
    data.push_back(std::move(d));
  }
  for (std::size_t i = 0; i < st::dtype_count; ++i) {
    const auto t = static_cast<metatensor::dtype>(i);
    tensors.push_back({std::string(st::dtype_name(t)), t, {2, 4}, data[i]});
  }
  st::write_file(dir / "all.safetensors", tensors);

  auto r = mt({"to-tgm", (dir / "all.safetensors").string(), "-o", (dir / "all.tgm").string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  tensogram::file tgm = tensogram::file::open(dir / "all.tgm");
  const tensogram::message m = tgm.decode_message(0);
  ASSERT_EQ(m.num_objects(), st::dtype_count);
  for (std::size_t j = 0; j < m.num_objects(); ++j) {
    const auto name = m.get_metadata().get_string_at(j, "name");
    const auto t = *st::parse_dtype(name);
    if (st::to_tensogram(t)) {
      EXPECT_EQ(m.get_metadata().object_to_json(j).find("\"safetensors\""), std::string::npos) << name;
      continue;
    }
    // Raw bytes, the original dtype and shape recorded.
    EXPECT_EQ(m.object(j).descriptor().dtype, tensogram::dtype::uint8) << name;
    const auto meta = nlohmann::json::parse(m.get_metadata().object_to_json(j));
    EXPECT_EQ(meta["safetensors"], (nlohmann::json{{"dtype", name}, {"shape", {2, 4}}})) << name;
  }

  r = mt({"from-tgm", (dir / "all.tgm").string(), "--name-key", "name", "-o", (dir / "back.mt").string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const metatensor::file back = metatensor::file::open(dir / "back.mt");
  ASSERT_EQ(back.tensor_names().size(), st::dtype_count);
  for (std::size_t i = 0; i < st::dtype_count; ++i) {
    const auto& t = back.primary(tensors[i].name);
    EXPECT_EQ(t.type(), tensors[i].type) << tensors[i].name;
    EXPECT_EQ(std::vector<std::uint64_t>(t.shape().begin(), t.shape().end()), tensors[i].shape);
    ASSERT_EQ(t.bytes().size(), data[i].size()) << tensors[i].name;
    EXPECT_EQ(0, std::memcmp(t.bytes().data(), data[i].data(), data[i].size())) << tensors[i].name;
  }
  EXPECT_NO_THROW(back.validate_deep());  // BOOL bytes 0/1 came back as BOOL
}

TEST(MetatensorPlainCli, FromTgmRefusesARecordedDtypeThatDoesNotFit) {
  const scratch_dir dir;
  // 4 bytes claiming to be F4 [5] (3 bytes).
  const std::vector<std::byte> raw(4);
  tensogram::global_metadata meta;
  meta.base.push_back(tensogram::cbor::from_json(
      nlohmann::json::parse(R"({"name":"x","safetensors":{"dtype":"F4","shape":[5]}})")));
  const std::vector<tensogram::object_input> objects = {
      {tensogram::data_object_descriptor::contiguous(tensogram::dtype::uint8, {4},
                                                     tensogram::byte_order::little),
       raw}};
  tensogram::write_file_atomically(dir / "bad.tgm", tensogram::encode(meta, objects));
  const auto r = mt({"from-tgm", (dir / "bad.tgm").string(), "-o", (dir / "bad.mt").string()});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(
      r.err.find("object 0 of message 0: metadata \"safetensors\" says F4 [5] (3 bytes), but the object is "
                 "uint8 of 4 bytes"),
      std::string::npos)
      << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir / "bad.mt"));
}

TEST(MetatensorPlainCli, FilesWithoutTensorsConvert) {
  const scratch_dir dir;
  st::write_file(dir / "empty.safetensors", std::span<const st::tensor_input>(), {{"note", "nothing here"}});
  auto r = mt({"to-tgm", (dir / "empty.safetensors").string(), "-o", (dir / "e.tgm").string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "Wrote 0 objects to " + (dir / "e.tgm").string() + "\n");
  tensogram::file tgm = tensogram::file::open(dir / "e.tgm");
  ASSERT_EQ(tgm.message_count(), 1u);
  const tensogram::message m = tgm.decode_message(0);
  EXPECT_EQ(m.num_objects(), 0u);
  EXPECT_EQ(m.get_metadata().get_string("note"), "nothing here");

  r = mt({"from-tgm", (dir / "e.tgm").string(), "-o", (dir / "e.mt").string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const metatensor::file back = metatensor::file::open(dir / "e.mt");
  EXPECT_TRUE(back.tensor_names().empty());
  EXPECT_EQ(mt({"validate", "--deep", (dir / "e.mt").string()}).exit_code, 0);
  r = mt({"validate", (dir / "empty.safetensors").string()});
  EXPECT_EQ(r.exit_code, 3) << r.out;
}

TEST(MetatensorPlainCli, FromNpyTakesTextArraysAsStringTensors) {
  const scratch_dir dir;
  // S4 [2, 2]: "ab", "", "cdef" (no NUL: full width), "é" (UTF-8 bytes).
  std::vector<std::byte> s(16);
  std::memcpy(s.data(), "ab\0\0\0\0\0\0cdef\xc3\xa9\0\0", 16);
  write_file(dir / "tags.npy", make_npy(npy_dict("|S4", {2, 2}), s));
  // >U2 [2] big-endian UTF-32: "hé", "€" (U+20AC).
  const unsigned char u[] = {0, 0, 0, 'h', 0, 0, 0, 0xE9, 0, 0, 0x20, 0xAC, 0, 0, 0, 0};
  write_file(dir / "names.npy", make_npy(npy_dict(">U2", {2}),
                                         std::vector<std::byte>(reinterpret_cast<const std::byte*>(u),
                                                                reinterpret_cast<const std::byte*>(u) + 16)));
  auto r = mt(
      {"from-npy", (dir / "tags.npy").string(), (dir / "names.npy").string(), "-o", (dir / "t.mt").string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const metatensor::file f = metatensor::file::open(dir / "t.mt");
  const auto tags = f.blobs("tags");
  EXPECT_EQ(f.layout("tags").kind, metatensor::tensor_kind::blob);
  EXPECT_EQ(std::vector<std::uint64_t>(tags.dims().begin(), tags.dims().end()),
            (std::vector<std::uint64_t>{2, 2}));
  EXPECT_EQ(tags.string(0), "ab");
  EXPECT_EQ(tags.string(1), "");
  EXPECT_EQ(tags.string(2), "cdef");
  EXPECT_EQ(tags.string(3), "\xc3\xa9");
  const auto names = f.blobs("names");
  EXPECT_EQ(names.string(0), "h\xc3\xa9");
  EXPECT_EQ(names.string(1), "\xe2\x82\xac");
  EXPECT_NO_THROW(f.validate_deep());

  // S bytes that are not UTF-8 cannot be a String (spec 06 §6.4).
  std::vector<std::byte> bad(2);
  bad[0] = std::byte{0xFF};
  write_file(dir / "bad.npy", make_npy(npy_dict("|S2", {1}), bad));
  r = mt({"from-npy", (dir / "bad.npy").string(), "-o", (dir / "b.mt").string()});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_FALSE(std::filesystem::exists(dir / "b.mt"));
  // The Tensogram tool still refuses text arrays.
  EXPECT_NE(
      run_program(TENSOGRAM_CLI, {"convert-npy", (dir / "tags.npy").string(), "-o", (dir / "t.tgm").string()})
          .exit_code,
      0);
}
