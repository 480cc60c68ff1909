// Conformance corpus (spec 06 §13), hostile input: every single-byte
// corruption, truncation and bit flip of the §6.7 worked example is refused
// with a metatensor::error or opens with views that stay inside the file
// (run under ASan/UBSan with TENSOGRAM_SANITIZE=ON).
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <metatensor.hpp>
#include <optional>
#include <span>
#include <vector>

#include "conformance_support.hpp"

namespace {

using namespace metatensor_test;               // NOLINT: test helpers
using namespace metatensor_test::conformance;  // NOLINT: test helpers

// Hostile input: every single-byte corruption of the example file is either
// valid or a metatensor::error; nothing else is thrown and nothing crashes
// (run under ASan/UBSan with TENSOGRAM_SANITIZE=ON).
TEST(ConformanceHostile, SingleByteCorruptionsNeverCrash) {
  const auto original = example().bytes();
  std::size_t valid = 0;
  for (std::size_t at = 0; at < original.size(); ++at) {
    for (const unsigned v : {0x00u, 0xFFu, 0x80u}) {
      auto bytes = original;
      if (bytes[at] == std::byte(v)) continue;
      bytes[at] = std::byte(v);
      try {
        const auto f = mt::file::from_buffer(tensogram::buffer::owned(bytes));
        for (const auto& name : f.tensor_names()) {
          if (f.layout(name).kind == mt::tensor_kind::blob) {
            const auto b = f.blobs(name);
            for (std::uint64_t i = 0; i < b.size(); ++i) (void)b.bytes(i);
          }
        }
        f.validate_deep();
        (void)f.logical_value();
        ++valid;
      } catch (const mt::error&) {
      } catch (const std::exception& e) {
        ADD_FAILURE() << "byte " << at << " = " << v << ": " << e.what();
      }
    }
  }
  EXPECT_GT(valid, 0u);  // e.g. changed float values
}

// Reads every byte every view of `f` can reach (flat data, each record, each
// String/List field and blob), so that AddressSanitizer checks the bounds
// structural validation promised (spec 06 §9: every address lies inside the
// file image).
std::uint64_t touch_all_views(const mt::file& f) {
  std::uint64_t sum = 0;
  const auto touch = [&](std::span<const std::byte> b) {
    for (std::byte x : b) sum += std::to_integer<unsigned>(x);
  };
  for (const auto& name : f.tensor_names()) {
    switch (f.layout(name).kind) {
      case mt::tensor_kind::flat: touch(f.flat(name).bytes()); break;
      case mt::tensor_kind::record: {
        const auto recs = f.records(name);
        for (std::uint64_t i = 0; i < recs.size(); ++i) {
          touch(recs[i].bytes());
          for (const auto& field : recs.record().fields) {
            const bool blob =
                field.type.type == mt::value_type::string || field.type.type == mt::value_type::list;
            if (blob && field.type.shape.empty()) touch(recs[i].blob(field.name));
          }
        }
        break;
      }
      case mt::tensor_kind::blob: {
        const auto b = f.blobs(name);
        for (std::uint64_t i = 0; i < b.size(); ++i) touch(b.bytes(i));
        break;
      }
    }
  }
  return sum;
}

// Truncation at every byte: never valid (the data section no longer ends at
// the file's end, or the header is cut), always a metatensor::error.
TEST(ConformanceHostile, TruncationAtEveryByte) {
  const auto original = example().bytes();
  for (std::size_t n = 0; n < original.size(); ++n) {
    const std::vector<std::byte> cut(original.begin(), original.begin() + static_cast<std::ptrdiff_t>(n));
    try {
      (void)mt::file::from_buffer(tensogram::buffer::owned(cut));
      ADD_FAILURE() << "truncated to " << n << " bytes opened";
    } catch (const mt::error&) {
    } catch (const std::exception& e) {
      ADD_FAILURE() << "truncated to " << n << ": " << e.what();
    }
  }
}

// Bit flips at every byte (bits 0, 3 and 7): a file that still opens hands out
// views that stay inside the image (checked by ASan in the sanitizer job).
TEST(ConformanceHostile, BitFlipSweepViewsStayInsideTheFile) {
  const auto original = example().bytes();
  std::size_t opened = 0;
  std::size_t refused = 0;
  std::size_t refused_at_access = 0;
  for (std::size_t at = 0; at < original.size(); ++at) {
    for (const unsigned bit : {0u, 3u, 7u}) {
      auto bytes = original;
      bytes[at] ^= std::byte(1u << bit);
      std::optional<mt::file> f;
      try {
        f.emplace(mt::file::from_buffer(tensogram::buffer::owned(bytes)));
      } catch (const mt::error&) {
        ++refused;
        continue;
      } catch (const std::exception& e) {
        ADD_FAILURE() << "byte " << at << " bit " << bit << ": " << e.what();
        continue;
      }
      ++opened;
      try {
        EXPECT_GE(touch_all_views(*f), 0u);
      } catch (const mt::error& e) {
        // A flipped BlobRef: open defers its check to the first access of
        // the tensor (§8.1), which refuses it instead of reading outside.
        ++refused_at_access;
        EXPECT_TRUE(e.kind() == mt::errc::mt_blob_bounds || e.kind() == mt::errc::mt_blob_align) << e.what();
      }
    }
  }
  EXPECT_GT(opened, 0u);             // flips inside tensor data keep the file structurally valid
  EXPECT_GT(refused, 0u);            // flips in the header do not
  EXPECT_GT(refused_at_access, 0u);  // nor do flips in BlobRefs, at access
}

}  // namespace
