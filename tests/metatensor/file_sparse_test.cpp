// metatensor::file on a sparse image (spec 06 §8.1, §10.4 step 3, §10.7):
// `from_header_image` validates the header while the tensor data is still
// missing and never copies the image; `check_blob_refs` runs the deferred
// BlobRef checks of §6.4 per logical tensor once its bytes are in.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <metatensor/file.hpp>
#include <metatensor/writer.hpp>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <tensogram/core/buffer.hpp>
#include <tensogram/core/error.hpp>
#include <vector>

#include "worked_file.hpp"

namespace mt = metatensor;
using metatensor_test::abs_offset;
using metatensor_test::error_of;
using metatensor_test::worked_file;
using mt::errc;

namespace {

std::uint64_t header_size(const std::vector<std::byte>& bytes) {
  std::uint64_t n = 0;
  std::memcpy(&n, bytes.data(), 8);
  return 8 + n;
}

// A writable image of `size` bytes whose first byte sits `misalign` bytes
// past a 4096-byte boundary (what a remote client allocates), zero-filled.
struct image {
  tensogram::buffer storage;  // owns the memory
  std::byte* data = nullptr;  // writable first byte of the image
  tensogram::buffer view;     // the image as handed to the reader

  explicit image(std::size_t size, std::size_t misalign = 0) {
    constexpr std::size_t page = 4096;
    storage = tensogram::buffer::allocate(size + 2 * page);
    const auto addr = reinterpret_cast<std::uintptr_t>(storage.mutable_data());
    const std::size_t shift = (page - addr % page) % page + misalign;
    data = storage.mutable_data() + shift;
    std::memset(data, 0, size);
    view = storage.slice(shift, size);
  }
  void write(const std::vector<std::byte>& from, std::size_t begin, std::size_t end) {
    std::memcpy(data + begin, from.data() + begin, end - begin);
  }
};

// The header bytes [0, 8 + N) in place, the data section still zero.
image header_only(const std::vector<std::byte>& bytes, std::size_t misalign = 0) {
  image im(bytes.size(), misalign);
  im.write(bytes, 0, static_cast<std::size_t>(header_size(bytes)));
  return im;
}

}  // namespace

TEST(FileSparse, HeaderImageValidatesWithoutDataAndNeverCopies) {
  const auto bytes = worked_file();
  auto im = header_only(bytes);
  const auto f = mt::file::from_header_image(im.view);
  // Zero-copy: the validated image is the caller's memory.
  EXPECT_EQ(f.base().image().data(), im.data);
  EXPECT_EQ(f.base().image().size(), bytes.size());
  EXPECT_EQ(f.tensor_names(), (std::vector<std::string>{"labels", "particles", "positions"}));
  EXPECT_EQ(f.alignment(), 64u);

  // Views see the bytes written into the image after validation (§10.7).
  const auto& pos = f.primary("positions");
  const std::size_t at = abs_offset(f, pos);
  im.write(bytes, at, at + pos.bytes().size());
  const auto v = f.flat("positions").as<float>();
  ASSERT_EQ(v.size(), 6u);
  EXPECT_EQ(v[0], 1.0f);
  EXPECT_EQ(v[3], 4.5f);
  EXPECT_EQ(static_cast<const void*>(v.data()), static_cast<const void*>(im.data + at));

  // Then the blob tensor: index and heap in, BlobRefs checked, blobs read.
  for (const auto* t : {&f.primary("labels"), f.heap("labels")}) {
    ASSERT_NE(t, nullptr);
    const std::size_t b = abs_offset(f, *t);
    im.write(bytes, b, b + t->bytes().size());
  }
  EXPECT_NO_THROW(f.check_blob_refs("labels"));
  EXPECT_EQ(f.blobs("labels").string(1), "green");
  // A tensor without a heap has no BlobRefs.
  EXPECT_NO_THROW(f.check_blob_refs("positions"));
}

TEST(FileSparse, ZeroedDataHasValidEmptyBlobRefs) {
  // BlobRef {0, 0} is an empty blob (§6.4): an image whose data has not
  // arrived passes the checks too (the client must not rely on them to
  // detect missing data).
  const auto bytes = worked_file();
  auto im = header_only(bytes);
  const auto f = mt::file::from_header_image(im.view);
  EXPECT_NO_THROW(f.check_blob_refs("labels"));
  EXPECT_NO_THROW(f.check_blob_refs("particles"));
}

TEST(FileSparse, BlobRefChecksAreDeferredToCheckBlobRefs) {
  auto bytes = worked_file();
  const auto valid = mt::file::from_buffer(tensogram::buffer::owned(bytes));
  // Element 1 of "labels" points past its heap.
  const std::size_t ref1 = abs_offset(valid, valid.primary("labels")) + 16;
  const std::uint64_t far = 1000;
  std::memcpy(bytes.data() + ref1, &far, 8);

  errc open_kind{};
  const std::string open_msg = error_of(
      [&] { mt::file::from_buffer(tensogram::buffer::owned(bytes)).check_all_blob_refs(); }, &open_kind);
  EXPECT_EQ(open_kind, errc::mt_blob_bounds) << open_msg;

  image im(bytes.size());
  im.write(bytes, 0, bytes.size());
  const auto f = mt::file::from_header_image(im.view);  // step 8 deferred
  errc kind{};
  const std::string msg = error_of([&] { f.check_blob_refs("labels"); }, &kind);
  EXPECT_EQ(kind, errc::mt_blob_bounds);
  EXPECT_EQ(msg, open_msg);  // the same check, the same message
  EXPECT_NE(msg.find("\"labels\" element 1"), std::string::npos) << msg;
  // The other tensors are fine.
  EXPECT_NO_THROW(f.check_blob_refs("particles"));
  EXPECT_NO_THROW(f.check_blob_refs("positions"));
}

TEST(FileSparse, RecordBlobRefsCheckedPerTensor) {
  auto bytes = worked_file();
  const auto valid = mt::file::from_buffer(tensogram::buffer::owned(bytes));
  const auto& rec = *valid.layout("particles").record;
  const auto* name = rec.find("name");
  ASSERT_NE(name, nullptr);
  // Record 1's name: offset so large that offset + length overflows.
  const std::size_t at =
      abs_offset(valid, valid.primary("particles")) + static_cast<std::size_t>(rec.size + name->offset);
  const std::uint64_t huge = ~std::uint64_t{0};
  std::memcpy(bytes.data() + at, &huge, 8);

  errc open_kind{};
  const std::string open_msg = error_of(
      [&] { mt::file::from_buffer(tensogram::buffer::owned(bytes)).check_all_blob_refs(); }, &open_kind);
  EXPECT_EQ(open_kind, errc::mt_blob_bounds);

  image im(bytes.size());
  im.write(bytes, 0, bytes.size());
  const auto f = mt::file::from_header_image(im.view);
  EXPECT_NO_THROW(f.check_blob_refs("labels"));
  errc kind{};
  EXPECT_EQ(error_of([&] { f.check_blob_refs("particles"); }, &kind), open_msg);
  EXPECT_EQ(kind, errc::mt_blob_bounds);
}

TEST(FileSparse, InvalidHeaderStillFails) {
  const auto good = worked_file();
  // metatensor.version "1" -> "2" (same length: offsets unchanged).
  auto bytes = good;
  const std::string text(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  const auto pos = text.find(R"("metatensor.version":"1")");
  ASSERT_NE(pos, std::string::npos);
  bytes[pos + std::string_view(R"("metatensor.version":")").size()] = std::byte{'2'};
  auto im = header_only(bytes);
  errc kind{};
  const std::string msg = error_of([&] { (void)mt::file::from_header_image(im.view); }, &kind);
  EXPECT_EQ(kind, errc::mt_version) << msg;

  // An image shorter than the file the header describes (§2 rule 10).
  image shorter(good.size() - 1);
  shorter.write(good, 0, static_cast<std::size_t>(header_size(good)));
  errc want{};
  (void)error_of([&] { (void)mt::file::from_buffer(shorter.view); }, &want);
  EXPECT_EQ(error_of([&] { (void)mt::file::from_header_image(shorter.view); }, &kind),
            error_of([&] { (void)mt::file::from_buffer(shorter.view); }));
  EXPECT_EQ(kind, want);

  // Less than the 8 length bytes.
  image tiny(4);
  const std::string tiny_msg = error_of([&] { (void)mt::file::from_header_image(tiny.view); }, &kind);
  EXPECT_NE(tiny_msg.find("ST_HEADER_TOO_SMALL"), std::string::npos) << tiny_msg;
  EXPECT_EQ(kind, errc::st_header_too_small);
}

TEST(FileSparse, UnalignedImageIsRefusedNotCopied) {
  const auto bytes = worked_file();
  auto im = header_only(bytes, /*misalign=*/8);
  try {
    (void)mt::file::from_header_image(im.view);
    FAIL() << "an unaligned header image was accepted";
  } catch (const tensogram::invalid_arg_error& e) {
    EXPECT_NE(std::string(e.what()).find("not aligned to 64"), std::string::npos) << e.what();
  }
  // from_buffer copies the same image instead (§9).
  im.write(bytes, 0, bytes.size());
  const auto copied = mt::file::from_buffer(im.view);
  EXPECT_NE(copied.base().image().data(), im.data);
}

TEST(FileSparse, CheckBlobRefsOnOpenedFileAndUnknownName) {
  const auto f = mt::file::from_buffer(tensogram::buffer::owned(worked_file()));
  for (const auto& name : f.tensor_names()) EXPECT_NO_THROW(f.check_blob_refs(name)) << name;
  EXPECT_THROW(f.check_blob_refs("nope"), tensogram::invalid_arg_error);
  EXPECT_THROW(f.check_blob_refs("labels#heap"), tensogram::invalid_arg_error);  // physical, not logical
  const auto bytes = worked_file();
  auto im = header_only(bytes);
  const auto h = mt::file::from_header_image(im.view);
  EXPECT_THROW(h.check_blob_refs(""), tensogram::invalid_arg_error);
}

TEST(FileSparse, HeaderImageChecksAreNeverRememberedAsPassed) {
  // A pass on the zeros of a tensor whose bytes have not arrived must not
  // excuse the bytes that arrive later (files from `open` remember a pass,
  // header images do not, §8.1).
  const auto bytes = metatensor_test::worked_file_bad_label();
  auto im = header_only(bytes);
  const auto f = mt::file::from_header_image(im.view);
  EXPECT_NO_THROW(f.check_blob_refs("labels"));  // zeros: empty blobs
  EXPECT_NO_THROW(f.check_all_blob_refs());
  for (const auto* t : {&f.primary("labels"), f.heap("labels")}) {
    const std::size_t b = abs_offset(f, *t);
    im.write(bytes, b, b + t->bytes().size());
  }
  errc kind{};
  EXPECT_NE(error_of([&] { f.check_blob_refs("labels"); }, &kind).find("\"labels\" element 1"),
            std::string::npos);
  EXPECT_EQ(kind, errc::mt_blob_bounds);
  // Logical values check too (they follow BlobRefs), at every call.
  EXPECT_NE(error_of([&] { (void)f.logical_value("labels"); }).find("\"labels\" element 1"),
            std::string::npos);
}
