// The `metatensor` command-line tool, run as a child process on files the
// tests write (.npy, schemas) and on the shared Tensogram fixtures; results
// are read back through the library.
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <metatensor.hpp>
#include <nlohmann/json.hpp>
#include <string>
#include <tensogram.hpp>

#include "test_support.hpp"

namespace {

using tensogram::cli::test::bytes_of;
using tensogram::cli::test::fixture;
using tensogram::cli::test::make_npy;
using tensogram::cli::test::npy_dict;
using tensogram::cli::test::read_file;
using tensogram::cli::test::run_program;
using tensogram::cli::test::run_result;
using tensogram::cli::test::scratch_dir;
using tensogram::cli::test::write_file;

run_result mt(const std::vector<std::string>& args) {
  return run_program(METATENSOR_CLI, args);
}

template <class T>
void append(std::vector<std::byte>& out, T v) {
  const auto* p = reinterpret_cast<const std::byte*>(&v);
  out.insert(out.end(), p, p + sizeof(T));
}

void append_be32(std::vector<std::byte>& out, std::uint32_t v) {
  for (int i = 3; i >= 0; --i) out.push_back(static_cast<std::byte>((v >> (8 * i)) & 0xFF));
}

void write_text(const std::filesystem::path& path, const std::string& text) {
  write_file(path, bytes_of(text));
}

TEST(MetatensorCli, FromNpyFlatArraysAnyByteOrder) {
  const scratch_dir dir;
  std::vector<std::byte> f32;
  for (int i = 0; i < 6; ++i) append(f32, 0.5f * static_cast<float>(i));
  write_file(dir / "w.npy", make_npy(npy_dict("<f4", {2, 3}), f32));
  std::vector<std::byte> i32be;
  for (std::uint32_t v : {1u, 0xFFFFFFFEu, 70000u}) append_be32(i32be, v);
  write_file(dir / "counts.npy", make_npy(npy_dict(">i4", {3}), i32be));
  write_file(dir / "mask.npy", make_npy(npy_dict("|b1", {2}), {std::byte{1}, std::byte{0}}));

  const auto r = mt({"from-npy", (dir / "w.npy").string(), (dir / "counts.npy").string(),
                     (dir / "mask.npy").string(), "-o", (dir / "out.mt").string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "Wrote 3 tensors to " + (dir / "out.mt").string() + "\n");

  const metatensor::file f = metatensor::file::open(dir / "out.mt");
  EXPECT_EQ(f.alignment(), 64u);
  EXPECT_EQ(f.tensor_names(), (std::vector<std::string>{"counts", "mask", "w"}));
  const auto w = f.flat("w");
  ASSERT_EQ(std::vector<std::uint64_t>(w.dims().begin(), w.dims().end()), (std::vector<std::uint64_t>{2, 3}));
  EXPECT_FLOAT_EQ(w.as<float>()[5], 2.5f);
  const auto counts = f.flat("counts").as<std::int32_t>();
  ASSERT_EQ(counts.size(), 3u);
  EXPECT_EQ(counts[0], 1);
  EXPECT_EQ(counts[1], -2);  // swapped from big-endian
  EXPECT_EQ(counts[2], 70000);
  EXPECT_EQ(f.flat("mask").type(), metatensor::dtype::boolean);
  EXPECT_NO_THROW(f.validate_deep());
}

TEST(MetatensorCli, FromNpyStructuredBecomesARecordTensor) {
  const scratch_dir dir;
  // NumPy's packed layout: id u4 @0, mass f8 @4, vel 3xf4 @12, name S8 @24 (32 bytes per record).
  std::vector<std::byte> data;
  const char* names[] = {"alpha", "beta"};
  for (int r = 0; r < 2; ++r) {
    append<std::uint32_t>(data, 10u + static_cast<std::uint32_t>(r));
    append<double>(data, 1.25 * (r + 1));
    for (int k = 0; k < 3; ++k) append<float>(data, static_cast<float>(r * 10 + k));
    char name[8] = {};
    std::memcpy(name, names[r], std::strlen(names[r]));
    for (char c : name) data.push_back(static_cast<std::byte>(c));
  }
  const std::string dict =
      "{'descr': [('id', '<u4'), ('mass', '<f8'), ('vel', '<f4', (3,)), ('name', '|S8')], "
      "'fortran_order': False, 'shape': (2,), }";
  write_file(dir / "particles.npy", make_npy(dict, data));
  const auto r = mt({"from-npy", (dir / "particles.npy").string(), "-o", (dir / "p.mt").string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;

  const metatensor::file f = metatensor::file::open(dir / "p.mt");
  const auto& layout = f.layout("particles");
  ASSERT_EQ(layout.kind, metatensor::tensor_kind::record);
  // The C layout of spec 06 §6.7's Particle record: 0, 8, 16, 32; 48 bytes.
  const auto& rec = *layout.record;
  EXPECT_EQ(rec.size, 48u);
  ASSERT_EQ(rec.fields.size(), 4u);
  EXPECT_EQ(rec.fields[1].offset, 8u);
  EXPECT_EQ(rec.fields[2].offset, 16u);
  EXPECT_EQ(rec.fields[3].offset, 32u);
  const auto recs = f.records("particles");
  ASSERT_EQ(recs.size(), 2u);
  EXPECT_EQ(recs[1].get<std::uint32_t>("id"), 11u);
  EXPECT_DOUBLE_EQ(recs[1].get<double>("mass"), 2.5);
  EXPECT_EQ(recs[0].string("name"), "alpha");
  EXPECT_EQ(recs[1].string("name"), "beta");
  const auto vel = recs.field("vel");
  ASSERT_EQ(vel.count(), 6u);
  EXPECT_FLOAT_EQ(vel.at<float>(5), 12.0f);
  EXPECT_NO_THROW(f.validate_deep());

  const auto v = mt({"validate", "--deep", (dir / "p.mt").string()});
  EXPECT_EQ(v.exit_code, 0) << v.err;
  EXPECT_EQ(v.out, (dir / "p.mt").string() + ": OK (deep)\n");
}

TEST(MetatensorCli, FromNpyAlignedPaddingAndUnicodeFields) {
  const scratch_dir dir;
  // NumPy align=True writes the padding as an unnamed void field.
  std::vector<std::byte> data;
  data.push_back(std::byte{7});
  for (int i = 0; i < 3; ++i) data.push_back(std::byte{0xAA});  // padding bytes, ignored
  append<std::int32_t>(data, -5);
  for (char32_t c : std::u32string(U"h\u00e9\u4e16\U0001F600")) append<std::uint32_t>(data, c);
  const std::string dict =
      "{'descr': [('a', '|u1'), ('', '|V3'), ('b', '<i4'), ('s', '<U4')], 'fortran_order': False, "
      "'shape': (1,), }";
  write_file(dir / "t.npy", make_npy(dict, data));
  const auto r = mt({"from-npy", (dir / "t.npy").string(), "-o", (dir / "t.mt").string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const metatensor::file f = metatensor::file::open(dir / "t.mt");
  const auto recs = f.records("t");
  ASSERT_EQ(recs.record().fields.size(), 3u);
  EXPECT_EQ(recs[0].get<std::uint8_t>("a"), 7u);
  EXPECT_EQ(recs[0].get<std::int32_t>("b"), -5);
  EXPECT_EQ(recs[0].string("s"), "h\xc3\xa9\xe4\xb8\x96\xf0\x9f\x98\x80");
  EXPECT_NO_THROW(f.validate_deep());  // record padding written as zero
}

TEST(MetatensorCli, FromNpyArraysOfRecordsAndOfStrings) {
  const scratch_dir dir;
  // Per record: pts = 2 x {x <f4, y <i2} (packed, 6 bytes each), tags = 2 x |S3.
  std::vector<std::byte> data;
  for (int r = 0; r < 2; ++r) {
    for (int k = 0; k < 2; ++k) {
      append<float>(data, static_cast<float>(r * 10 + k) + 0.5f);
      append<std::int16_t>(data, static_cast<std::int16_t>(-(r * 10 + k)));
    }
    for (const char* t : {"ab", "cde"}) {
      char s[3] = {};
      std::memcpy(s, t, std::strlen(t));
      for (char c : s) data.push_back(static_cast<std::byte>(c));
    }
  }
  const std::string dict =
      "{'descr': [('pts', [('x', '<f4'), ('y', '<i2')], (2,)), ('tags', '|S3', (2,))], "
      "'fortran_order': False, 'shape': (2,), }";
  write_file(dir / "shapes.npy", make_npy(dict, data));
  const auto r = mt({"from-npy", (dir / "shapes.npy").string(), "-o", (dir / "s.mt").string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const metatensor::file f = metatensor::file::open(dir / "s.mt");
  const auto v = f.logical_value("shapes");
  EXPECT_EQ(v[1]["pts"][1]["x"], 11.5);
  EXPECT_EQ(v[1]["pts"][0]["y"], -10);
  EXPECT_EQ(v[0]["tags"], nlohmann::json({"ab", "cde"}));
  EXPECT_EQ(f.records("shapes").field("tags").string(3), "cde");  // record 1, tag 1
  EXPECT_NO_THROW(f.validate_deep());
}

TEST(MetatensorCli, FromNpyErrorsKeepTheExistingOutput) {
  const scratch_dir dir;
  write_text(dir / "out.mt", "precious");
  write_file(dir / "c.npy", make_npy(npy_dict("<c16", {1}), std::vector<std::byte>(16)));
  auto r = mt({"from-npy", (dir / "c.npy").string(), "-o", (dir / "out.mt").string()});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("c.npy: dtype: dtype '<c16' has no safetensors equivalent"), std::string::npos)
      << r.err;
  EXPECT_EQ(read_file(dir / "out.mt"), bytes_of("precious"));

  write_file(dir / "__x.npy", make_npy(npy_dict("<f4", {1}), std::vector<std::byte>(4)));
  r = mt({"from-npy", (dir / "__x.npy").string(), "-o", (dir / "out.mt").string()});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("not allowed"), std::string::npos) << r.err;
  EXPECT_EQ(read_file(dir / "out.mt"), bytes_of("precious"));
}

TEST(MetatensorCli, TensogramRoundTripKeepsValuesAndMetadata) {
  const scratch_dir dir;
  const std::string src = fixture("multi_object.tgm");
  auto r = mt({"from-tgm", src, "-o", (dir / "x.mt").string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = mt({"validate", "--deep", (dir / "x.mt").string()});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;

  r = mt({"to-tgm", (dir / "x.mt").string(), "-o", (dir / "back.tgm").string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;

  tensogram::file original = tensogram::file::open(src);
  tensogram::file back = tensogram::file::open(dir / "back.tgm");
  ASSERT_EQ(back.message_count(), 1u);
  const tensogram::message b = back.decode_message(0);
  std::size_t k = 0;
  for (std::size_t i = 0; i < original.message_count(); ++i) {
    const tensogram::message m = original.decode_message(i);
    for (std::size_t j = 0; j < m.num_objects(); ++j, ++k) {
      ASSERT_LT(k, b.num_objects());
      const auto& a = m.object(j);
      const auto& c = b.object(k);
      EXPECT_EQ(a.shape(), c.shape());
      EXPECT_EQ(a.descriptor().dtype, c.descriptor().dtype);
      ASSERT_EQ(a.bytes().size(), c.bytes().size());
      EXPECT_EQ(0, std::memcmp(a.bytes().data(), c.bytes().data(), a.bytes().size())) << "object " << k;
      // Per-object metadata comes back (the library-managed `_reserved_` aside).
      nlohmann::json ma = nlohmann::json::parse(m.get_metadata().object_to_json(j));
      nlohmann::json mc = nlohmann::json::parse(b.get_metadata().object_to_json(k));
      ma.erase("_reserved_");
      mc.erase("_reserved_");
      EXPECT_EQ(ma, mc);
    }
  }
  EXPECT_EQ(k, b.num_objects());
}

TEST(MetatensorCli, ToTgmAppliesThePipelineAndAcceptsPlainSafetensors) {
  const scratch_dir dir;
  std::vector<double> values(1000);
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = 280.0 + 0.01 * static_cast<double>(i);
  const metatensor::safetensors::tensor_input t{
      "t2m", metatensor::dtype::f64, {10, 100}, std::as_bytes(std::span<const double>(values))};
  metatensor::safetensors::write_file(dir / "plain.safetensors", std::span(&t, 1), {{"source", "test"}});
  auto r = mt({"to-tgm", (dir / "plain.safetensors").string(), "-o", (dir / "p.tgm").string(),
               "--compression", "zstd"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  tensogram::file f = tensogram::file::open(dir / "p.tgm");
  const tensogram::message m = f.decode_message(0);
  ASSERT_EQ(m.num_objects(), 1u);
  EXPECT_EQ(m.object(0).compression(), "zstd");
  EXPECT_EQ(m.get_metadata().get_string_at(0, "name"), "t2m");
  EXPECT_EQ(m.get_metadata().get_string("source"), "test");
  ASSERT_EQ(m.object(0).bytes().size(), values.size() * sizeof(double));
  EXPECT_EQ(0, std::memcmp(m.object(0).bytes().data(), values.data(), values.size() * sizeof(double)));
}

TEST(MetatensorCli, ToTgmRefusesRecordTensorsByName) {
  const scratch_dir dir;
  std::vector<std::byte> data;
  append<std::uint32_t>(data, 1);
  write_file(dir / "recs.npy",
             make_npy("{'descr': [('id', '<u4')], 'fortran_order': False, 'shape': (1,), }", data));
  ASSERT_EQ(mt({"from-npy", (dir / "recs.npy").string(), "-o", (dir / "r.mt").string()}).exit_code, 0);
  const auto r = mt({"to-tgm", (dir / "r.mt").string(), "-o", (dir / "r.tgm").string()});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("tensor \"recs\" is a struct tensor; Tensogram objects are plain N-d arrays"),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir / "r.tgm"));
}

TEST(MetatensorCli, DiffClassifiesAndSetsTheExitCode) {
  const scratch_dir dir;
  const auto schema = [](const char* mass_type, bool with_charge) {
    nlohmann::json fields = {{"id", {{"type", "integer"}, {"TypeDef:Uint32", true}}},
                             {"mass", {{"type", "number"}, {mass_type, true}}}};
    nlohmann::json required = {"id", "mass"};
    if (with_charge) {
      fields["charge"] = {{"type", "number"}, {"TypeDef:Float32", true}, {"default", 0}};
      required.push_back("charge");
    }
    return nlohmann::json{{"type", "object"},
                          {"properties",
                           {{"p",
                             {{"type", "array"},
                              {"items",
                               {{"type", "object"},
                                {"TypeDef:Struct", true},
                                {"properties", fields},
                                {"required", required}}}}}}}}
        .dump();
  };
  write_text(dir / "v1.json", schema("TypeDef:Float32", false));
  write_text(dir / "v2.json", schema("TypeDef:Float64", true));
  auto r = mt({"diff", (dir / "v1.json").string(), (dir / "v2.json").string()});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("view-compatible    p.charge: field added with a default\n"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("convertible        p.mass: F32 -> F64 (widening)\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("verdict: convertible\n"), std::string::npos) << r.out;

  r = mt({"diff", "-j", (dir / "v2.json").string(), (dir / "v1.json").string()});
  EXPECT_EQ(r.exit_code, 1);
  const auto doc = nlohmann::json::parse(r.out);
  EXPECT_EQ(doc["verdict"], "incompatible");

  // A metatensor file stands for its embedded schema.
  std::vector<std::byte> data;
  append<std::uint32_t>(data, 1);
  append<float>(data, 2.0f);
  write_file(dir / "p.npy", make_npy("{'descr': [('id', '<u4'), ('mass', '<f4')], 'fortran_order': False, "
                                     "'shape': (1,), }",
                                     data));
  ASSERT_EQ(mt({"from-npy", (dir / "p.npy").string(), "-o", (dir / "p.mt").string()}).exit_code, 0);
  r = mt({"diff", (dir / "p.mt").string(), (dir / "v1.json").string()});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("verdict: identical layout\n"), std::string::npos) << r.out;
}

TEST(MetatensorCli, DiffWarnsWhenDimensionBoundsTighten) {
  const scratch_dir dir;
  const auto schema = [](const nlohmann::json& bounds) {
    nlohmann::json dim = {{"type", "array"}, {"items", {{"type", "number"}, {"TypeDef:Float32", true}}}};
    for (const auto& [k, v] : bounds.items()) dim[k] = v;
    return nlohmann::json{{"type", "object"}, {"properties", {{"w", dim}}}}.dump();
  };
  write_text(dir / "open.json", schema(nlohmann::json::object()));
  write_text(dir / "max8.json", schema({{"maxItems", 8}}));
  write_text(dir / "max4.json", schema({{"maxItems", 4}, {"minItems", 2}}));
  // Loosening (or keeping) bounds: no warning, exit 0.
  auto r = mt({"diff", (dir / "max8.json").string(), (dir / "open.json").string()});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(r.out.find("warning:"), std::string::npos) << r.out;
  // A maxItems shrinking: old files with 5..8 items no longer open. Exit 3.
  r = mt({"diff", (dir / "max8.json").string(), (dir / "max4.json").string()});
  EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
  EXPECT_NE(
      r.out.find("warning: w[dim 0] (/properties/w): maxItems 8 -> 4: files with more than 4 items fail "
                 "(MT_SHAPE)\n"),
      std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("warning: w[dim 0] (/properties/w): minItems 0 -> 2"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("verdict: identical layout\n"), std::string::npos) << r.out;
  // A bound where there was none, in JSON.
  r = mt({"diff", "-j", (dir / "open.json").string(), (dir / "max8.json").string()});
  EXPECT_EQ(r.exit_code, 3) << r.err;
  const auto doc = nlohmann::json::parse(r.out);
  ASSERT_EQ(doc["dimension_warnings"].size(), 1u);
  EXPECT_EQ(doc["dimension_warnings"][0]["pointer"], "/properties/w");
  EXPECT_EQ(doc["changes"][0]["pointer"], "/properties/w");
  EXPECT_EQ(doc["dimension_warnings"][0]["change"],
            "maxItems (none) -> 8: files with more than 8 items fail (MT_SHAPE)");
}

TEST(MetatensorCli, ValidateReportsTheSpecErrorName) {
  const scratch_dir dir;
  std::vector<std::byte> f32(16);
  write_file(dir / "w.npy", make_npy(npy_dict("<f4", {4}), f32));
  ASSERT_EQ(mt({"from-npy", (dir / "w.npy").string(), "-o", (dir / "w.mt").string()}).exit_code, 0);
  auto bytes = read_file(dir / "w.mt");
  // Change the declared alignment "64" to "48" (not a power of two).
  std::string text(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  const auto at = text.find("\"metatensor.alignment\":\"64\"");
  ASSERT_NE(at, std::string::npos);
  bytes[at + std::strlen("\"metatensor.alignment\":\"")] = std::byte{'4'};
  bytes[at + std::strlen("\"metatensor.alignment\":\"") + 1] = std::byte{'8'};
  write_file(dir / "bad.mt", bytes);
  auto r = mt({"validate", (dir / "w.mt").string(), (dir / "bad.mt").string()});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.out.find((dir / "w.mt").string() + ": OK (structural)\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find((dir / "bad.mt").string() + ": INVALID: "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("MT_ALIGNMENT_VALUE"), std::string::npos) << r.out;
  r = mt({"validate", "-j", (dir / "bad.mt").string()});
  const auto doc = nlohmann::json::parse(r.out);
  EXPECT_EQ(doc[0]["valid"], false);
  EXPECT_EQ(doc[0]["error"]["code"], "MT_ALIGNMENT_VALUE");
}

TEST(MetatensorCli, InfoDescribesMetatensorAndPlainSafetensors) {
  const scratch_dir dir;
  std::vector<std::byte> f32(24);
  write_file(dir / "w.npy", make_npy(npy_dict("<f4", {2, 3}), f32));
  ASSERT_EQ(mt({"from-npy", (dir / "w.npy").string(), "-o", (dir / "w.mt").string()}).exit_code, 0);
  auto r = mt({"info", (dir / "w.mt").string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("metatensor 1"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("alignment 64, 1 logical tensor (1 physical)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("w     flat    [2, 3]          F32, 24 B"), std::string::npos) << r.out;

  const std::vector<std::byte> ab = bytes_of("ab");
  const metatensor::safetensors::tensor_input t{"x", metatensor::dtype::u8, {2}, ab};
  metatensor::safetensors::write_file(dir / "plain.safetensors", std::span(&t, 1));
  r = mt({"info", "-j", (dir / "plain.safetensors").string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto doc = nlohmann::json::parse(r.out);
  EXPECT_EQ(doc[0]["format"], "safetensors");
  EXPECT_EQ(doc[0]["tensors"][0]["element"], "U8");
}

TEST(MetatensorCli, DumpShowsHeaderSchemaLayoutAndFirstValues) {
  const scratch_dir dir;
  std::vector<std::byte> data;
  for (std::uint32_t i = 0; i < 20; ++i) {
    append<std::uint32_t>(data, i);
    char s[4] = {'n', static_cast<char>('a' + i), 0, 0};
    for (char c : s) data.push_back(static_cast<std::byte>(c));
  }
  write_file(dir / "recs.npy", make_npy("{'descr': [('id', '<u4'), ('tag', '|S4')], 'fortran_order': False, "
                                        "'shape': (20,), }",
                                        data));
  ASSERT_EQ(mt({"from-npy", (dir / "recs.npy").string(), "-o", (dir / "r.mt").string()}).exit_code, 0);
  auto r = mt({"dump", (dir / "r.mt").string(), "-n", "3"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("  recs (struct [20], 20 elements)\n"
                       "    [0] {\"id\":0,\"tag\":\"na\"}\n"
                       "    [1] {\"id\":1,\"tag\":\"nb\"}\n"
                       "    [2] {\"id\":2,\"tag\":\"nc\"}\n"
                       "    ... 17 more\n"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("\"TypeDef:Struct\": true"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"kind\": \"struct\""), std::string::npos) << r.out;

  r = mt({"dump", "-j", "-n", "0", (dir / "r.mt").string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto doc = nlohmann::json::parse(r.out);
  ASSERT_EQ(doc["tensors"]["recs"]["values"].size(), 20u);
  EXPECT_EQ(doc["tensors"]["recs"]["values"][19]["tag"], "nt");

  r = mt({"dump", "-t", "nope", (dir / "r.mt").string()});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("no logical tensor \"nope\""), std::string::npos) << r.err;
}

// spec 06 §3.5: two conforming writers produce byte-identical files from the
// same schema and values. The second writer here is fuzz/metatensor_seeds.py,
// which builds Appendix A and the §6.7 worked example byte by byte from the
// spec's tables (it shares no code with the library).
TEST(MetatensorCli, IndependentWriterFromTheSpecIsByteIdentical) {
  const scratch_dir dir;
  const auto py =
      run_program("/usr/bin/python3", {std::string(TENSOGRAM_SOURCE_DIR) + "/fuzz/metatensor_seeds.py",
                                       (dir / "files").string(), (dir / "schemas").string()});
  ASSERT_EQ(py.exit_code, 0) << py.err;
  for (const std::string name : {"appendix_a", "worked_example"}) {
    const auto theirs = read_file(dir / "files" / (name + ".mt"));
    const metatensor::file f = metatensor::file::open(dir / "files" / (name + ".mt"));
    EXPECT_NO_THROW(f.validate_deep()) << name;
    metatensor::writer_options options;
    options.alignment = f.alignment();
    metatensor::file_builder b(f.schema(), options);
    b.set_logical_value(f.logical_value());
    const auto ours = b.serialize();
    EXPECT_EQ(ours, theirs) << name;
  }
}

// `validate --header-schema`: the concept paper's model, as TypeBox emits it
// (tests/metatensor/data/typebox/), against files written by from-npy (a
// metatensor file, with padding tensors) and by the safetensors writer.
TEST(MetatensorCli, ValidateHeaderSchema) {
  const scratch_dir dir;
  const std::string schema =
      std::string(TENSOGRAM_SOURCE_DIR) + "/tests/metatensor/data/typebox/concept_model.json";
  namespace st = metatensor::safetensors;
  auto write_model = [&](const std::string& name, const std::string& skip, st::dtype bias_type) {
    std::vector<std::vector<std::byte>> data;
    std::vector<st::tensor_input> inputs;
    data.reserve(8);
    for (const std::string layer : {"conv1", "conv2"}) {
      for (const std::string part : {"weight", "bias", "running_mean", "running_var"}) {
        if (layer + "." + part == skip) continue;
        const st::dtype t = part == "bias" ? bias_type : st::dtype::f32;
        data.emplace_back(20 * st::dtype_bits(t) / 8);
        inputs.push_back({layer + "." + part, t, {20}, data.back()});
      }
    }
    st::write_file(dir / name, inputs);
    return (dir / name).string();
  };
  const std::string good = write_model("good.safetensors", "", st::dtype::i16);
  auto r = mt({"validate", "--header-schema", schema, good});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find(good + ": OK (safetensors, header schema)"), std::string::npos) << r.out;
  // Without the header schema the same file is "valid, plain" (exit 3).
  EXPECT_EQ(mt({"validate", good}).exit_code, 3);

  const std::string missing = write_model("missing.safetensors", "conv2.running_var", st::dtype::f32);
  r = mt({"validate", "--header-schema", schema, good, missing});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.out.find("MT_HEADER_SCHEMA: " + missing + ": \"conv2.running_var\" is missing"),
            std::string::npos)
      << r.out;
  const std::string wrong = write_model("wrong.safetensors", "", st::dtype::f64);
  r = mt({"validate", "-j", "--header-schema", schema, wrong});
  EXPECT_EQ(r.exit_code, 1);
  const auto doc = nlohmann::json::parse(r.out);
  EXPECT_EQ(doc[0]["error"]["code"], "MT_HEADER_SCHEMA");
  EXPECT_NE(doc[0]["error"]["message"].get<std::string>().find("tensor \"conv1.bias\" (/conv1/bias/dtype)"),
            std::string::npos)
      << r.out;

  // A metatensor file (from-npy writes padding tensors between the tensors).
  std::vector<std::byte> f32(20 * 4);
  for (const std::string layer : {"conv1", "conv2"}) {
    for (const std::string part : {"weight", "bias", "running_mean", "running_var"}) {
      write_file(dir / (layer + "." + part + ".npy"), make_npy(npy_dict("<f4", {20}), f32));
    }
  }
  std::vector<std::string> args = {"from-npy"};
  for (const std::string layer : {"conv1", "conv2"}) {
    for (const std::string part : {"weight", "bias", "running_mean", "running_var"}) {
      args.push_back((dir / (layer + "." + part + ".npy")).string());
    }
  }
  args.insert(args.end(), {"-o", (dir / "model.mt").string()});
  ASSERT_EQ(mt(args).exit_code, 0);
  r = mt({"validate", "--deep", "--header-schema", schema, (dir / "model.mt").string()});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find(": OK (deep, header schema)"), std::string::npos) << r.out;

  // A header schema outside the dialect, or missing: a runtime error (exit 1) naming it.
  write_text(dir / "bad.json", R"({"type":"object","patternProperties":{}})");
  r = mt({"validate", "--header-schema", (dir / "bad.json").string(), good});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("MT_SCHEMA_DIALECT"), std::string::npos) << r.err;
  EXPECT_EQ(mt({"validate", "--header-schema", (dir / "none.json").string(), good}).exit_code, 1);
}

// `from-json`: every kind from a schema and a logical value; the library
// reads the file back to the same logical value, and the schema may come
// from an existing metatensor file.
TEST(MetatensorCli, FromJsonWritesEveryKindAndReadsBackTheSameValue) {
  const scratch_dir dir;
  const nlohmann::json schema = nlohmann::json::parse(R"({
    "type": "object", "required": ["rows", "names", "parts"],
    "properties": {
      "rows": {"type": "array", "items": {"type": "array", "TypeDef:List": true,
                                          "items": {"type": "number", "TypeDef:Float64": true}}},
      "names": {"type": "array", "items": {"type": "string", "TypeDef:String": true}},
      "parts": {"type": "array", "items": {"$ref": "#/$defs/P"}},
      "big": {"type": "array", "items": {"type": "integer", "TypeDef:Uint64": true}}
    },
    "$defs": {"P": {"type": "object", "TypeDef:Struct": true, "required": ["id", "at", "tags"],
      "properties": {"id": {"type": "integer", "TypeDef:Int16": true},
                     "at": {"type": "array", "minItems": 2, "maxItems": 2,
                            "items": {"type": "number", "TypeDef:Float32": true}},
                     "tags": {"type": "array", "TypeDef:List": true,
                              "items": {"type": "integer", "TypeDef:Uint8": true}}}}}
  })");
  const nlohmann::json values = nlohmann::json::parse(R"({
    "rows": [[1.5, -2], [], [3, 4, 5e300]],
    "names": ["a", "", "grüße ✓"],
    "parts": [{"id": -3, "at": [0.5, 1], "tags": [1, 2, 255]}, {"id": 7, "at": [2, -4], "tags": []}],
    "big": [18446744073709551615, 9007199254740993]
  })");
  write_text(dir / "s.json", schema.dump());
  write_text(dir / "v.json", values.dump());
  const auto r =
      mt({"from-json", (dir / "s.json").string(), (dir / "v.json").string(), "-o", (dir / "out.mt").string(),
          "--alignment", "16", "--metadata", "origin=test", "--metadata", "k=a=b", "--no-sync"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "Wrote 4 tensors to " + (dir / "out.mt").string() + "\n");
  const metatensor::file f = metatensor::file::open(dir / "out.mt");
  EXPECT_EQ(f.logical_value(), values);
  EXPECT_EQ(f.alignment(), 16u);
  EXPECT_EQ(f.user_metadata().at("origin"), "test");
  EXPECT_EQ(f.user_metadata().at("k"), "a=b");
  EXPECT_EQ(mt({"validate", "--deep", (dir / "out.mt").string()}).exit_code, 0);

  // The schema taken from that file; a subset of the tensors (all required ones).
  nlohmann::json fewer = values;
  fewer.erase("big");
  write_text(dir / "v2.json", fewer.dump());
  const auto again = mt({"from-json", (dir / "out.mt").string(), (dir / "v2.json").string(), "-o",
                         (dir / "again.mt").string()});
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(metatensor::file::open(dir / "again.mt").logical_value(), fewer);
}

TEST(MetatensorCli, FromJsonErrorsNameTheValueAndKeepTheOutput) {
  const scratch_dir dir;
  write_text(dir / "s.json", R"({"type": "object", "properties": {
    "x": {"type": "array", "items": {"type": "integer", "TypeDef:Uint8": true}}}})");
  write_text(dir / "out.mt", "existing");
  const auto run = [&](const std::string& values, std::vector<std::string> extra = {}) {
    write_text(dir / "v.json", values);
    std::vector<std::string> args = {"from-json", (dir / "s.json").string(), (dir / "v.json").string(), "-o",
                                     (dir / "out.mt").string()};
    args.insert(args.end(), extra.begin(), extra.end());
    return mt(args);
  };
  auto r = run(R"({"x": [1, 256]})");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("MT_VALUE"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("/x/1"), std::string::npos) << r.err;
  r = run(R"([1, 2])");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("must be a JSON object"), std::string::npos) << r.err;
  r = run(R"({"x": [1,)");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("not JSON"), std::string::npos) << r.err;
  r = run(R"({"y": [1]})");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("MT_TENSOR_SET"), std::string::npos) << r.err;
  r = run(R"({"x": [1]})", {"--metadata", "novalue"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("expected KEY=VALUE"), std::string::npos) << r.err;
  r = run(R"({"x": [1]})", {"--metadata", "metatensor.version=2"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("MT_UNKNOWN_KEY"), std::string::npos) << r.err;
  EXPECT_EQ(read_file(dir / "out.mt"), bytes_of("existing"));
}

TEST(MetatensorCli, UsageErrorsExitTwo) {
  EXPECT_EQ(mt({}).exit_code, 2);
  EXPECT_EQ(mt({"frobnicate"}).exit_code, 2);
  EXPECT_EQ(mt({"diff", "only-one"}).exit_code, 2);
  const auto h = mt({"--help"});
  EXPECT_EQ(h.exit_code, 0);
  EXPECT_NE(h.out.find("from-npy"), std::string::npos);
}

}  // namespace
