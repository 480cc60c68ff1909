// Deferred BlobRef checks (spec 06 §8.1, §6.4): `file::open` and
// `file::from_buffer` read only the header; the BlobRef checks of a tensor
// run at its first access (views, logical values, deep validation) or in
// `check_all_blob_refs`, and a bad BlobRef is an error there, naming the
// tensor and element, never a wild read.
#include <gtest/gtest.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <metatensor/file.hpp>
#include <metatensor/writer.hpp>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "worked_file.hpp"

namespace mt = metatensor;
using mt::errc;
using namespace metatensor_test;  // worked_file, abs_offset, error_of

namespace {

mt::file open_bytes(const std::vector<std::byte>& bytes) {
  return mt::file::from_buffer(tensogram::buffer::owned(bytes));
}

void poke_u64(std::vector<std::byte>& bytes, std::size_t at, std::uint64_t v) {
  std::memcpy(bytes.data() + at, &v, 8);
}

// The worked file with the "name" BlobRef of record 1 of "particles" at an
// offset so large that offset + length overflows.
std::vector<std::byte> bad_particles() {
  auto bytes = worked_file();
  const auto valid = open_bytes(bytes);
  const auto& rec = *valid.layout("particles").record;
  const auto* name = rec.find("name");
  const std::size_t at = abs_offset(valid, valid.primary("particles")) + rec.size + name->offset;
  poke_u64(bytes, at, ~std::uint64_t{0});
  return bytes;
}

constexpr const char* labels_msg = "\"labels\" element 1: blob [offset 1000, length 5] exceeds the heap";

}  // namespace

TEST(FileDeferred, OpenSucceedsAndTheBlobTensorFailsAtAccess) {
  const auto f = open_bytes(metatensor_test::worked_file_bad_label());  // step 8 is not run at open
  // The other tensors are usable.
  EXPECT_EQ(f.flat("positions").as<float>()[3], 4.5f);
  EXPECT_EQ(f.records("particles")[1].string("name"), "beta");
  EXPECT_EQ(f.logical_value("particles")[0]["name"], "alpha");

  // Every access path to "labels" reports the bad BlobRef, every time.
  for (int round = 0; round < 2; ++round) {
    errc kind{};
    const std::string msg = error_of([&] { (void)f.blobs("labels"); }, &kind);
    EXPECT_EQ(kind, errc::mt_blob_bounds) << msg;
    EXPECT_NE(msg.find(labels_msg), std::string::npos) << msg;
  }
  errc kind{};
  EXPECT_NE(error_of([&] { (void)f.logical_value("labels"); }, &kind).find(labels_msg), std::string::npos);
  EXPECT_EQ(kind, errc::mt_blob_bounds);
  // Even element 0, whose own BlobRef is fine: the check covers the tensor.
  EXPECT_NE(error_of([&] { (void)f.logical_elements("labels", 0, 1); }, &kind).find(labels_msg),
            std::string::npos);
  EXPECT_NE(error_of([&] { (void)f.logical_value(); }, &kind).find(labels_msg), std::string::npos);
  EXPECT_NE(error_of([&] { f.check_blob_refs("labels"); }, &kind).find(labels_msg), std::string::npos);
  EXPECT_NE(error_of([&] { f.check_all_blob_refs(); }, &kind).find(labels_msg), std::string::npos);
  // §8.2: the structural BlobRef error precedes any deep check.
  EXPECT_NE(error_of([&] { f.validate_deep(); }, &kind).find(labels_msg), std::string::npos);
  EXPECT_EQ(kind, errc::mt_blob_bounds);
}

TEST(FileDeferred, RecordBlobRefsFailAtTheFirstRecordsView) {
  const auto f = open_bytes(bad_particles());
  EXPECT_EQ(f.blobs("labels").string(1), "green");
  errc kind{};
  const std::string msg = error_of([&] { (void)f.records("particles"); }, &kind);
  EXPECT_EQ(kind, errc::mt_blob_bounds);
  EXPECT_NE(msg.find("\"particles\" record 1 at byte 32: blob [offset 18446744073709551615"),
            std::string::npos)
      << msg;
  EXPECT_EQ(error_of([&] { (void)f.records("particles"); }), msg);  // not remembered as passed
  EXPECT_EQ(error_of([&] { f.check_all_blob_refs(); }), msg);
}

TEST(FileDeferred, ListBlobAlignmentIsCheckedAtAccess) {
  // A ragged F32 list tensor whose second blob starts at offset 2 (§6.4:
  // List blobs are aligned to their element).
  const auto schema = mt::compile_schema_text(
      R"({"type":"object","properties":{"rows":{"type":"array","items":{"type":"array",)"
      R"("TypeDef:List":true,"items":{"type":"number","TypeDef:Float32":true}}}}})");
  mt::file_builder b(schema);
  b.set_logical_value(nlohmann::json::parse(R"({"rows":[[1.0,2.0],[3.0]]})"));
  auto bytes = b.serialize();
  const auto valid = open_bytes(bytes);
  ASSERT_EQ(valid.blobs("rows").list<float>(1)[0], 3.0f);
  poke_u64(bytes, abs_offset(valid, valid.primary("rows")) + 16, 2);  // offset of element 1
  const auto f = open_bytes(bytes);
  errc kind{};
  const std::string msg = error_of([&] { (void)f.blobs("rows"); }, &kind);
  EXPECT_EQ(kind, errc::mt_blob_align) << msg;
  EXPECT_NE(msg.find("\"rows\" element 1: list blob offset 2"), std::string::npos) << msg;
}

TEST(FileDeferred, OpenFromPathDefersToo) {
  const auto path =
      std::filesystem::temp_directory_path() /
      ("mt_deferred_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + ".safetensors");
  {
    const auto bytes = metatensor_test::worked_file_bad_label();
    std::ofstream out(path, std::ios::binary);
    out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  }
  {
    const auto f = mt::file::open(path);
    errc kind{};
    EXPECT_NE(error_of([&] { (void)f.blobs("labels"); }, &kind).find(labels_msg), std::string::npos);
    EXPECT_EQ(kind, errc::mt_blob_bounds);
  }
  std::filesystem::remove(path);
}

TEST(FileDeferred, ValidFileChecksOnceAndViewsFromManyThreads) {
  const auto good = open_bytes(worked_file());
  const auto bad = open_bytes(metatensor_test::worked_file_bad_label());
  std::atomic<int> good_ok{0};
  std::atomic<int> bad_errors{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 50; ++i) {
        if (good.blobs("labels").string(2) == "blue" &&
            good.records("particles")[0].string("name") == "alpha")
          ++good_ok;
        try {
          (void)bad.blobs("labels");
        } catch (const mt::error& e) {
          if (e.kind() == errc::mt_blob_bounds) ++bad_errors;
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(good_ok.load(), 400);
  EXPECT_EQ(bad_errors.load(), 400);
  EXPECT_NO_THROW(good.check_all_blob_refs());
  EXPECT_NO_THROW(good.validate_deep());
}
