// libFuzzer target: metatensor files (spec 06 §2–§9) over arbitrary bytes.
//
// Opening must end in a `tensogram::error` (metatensor errors are among them)
// or a file whose every view stays inside the image: each flat tensor, each
// record and every field of it, and every blob are read byte by byte so that
// AddressSanitizer checks the bounds structural validation promised. Deep
// validation and the logical-value projection of small tensors must also end
// in an error or a result. Seeds: small valid files made by run.sh.
//
// The header's fast path (src/metatensor/fast_json.hpp: simdjson's stage 1
// and a walk of its structural index) is checked against the reference
// path on every input: whatever the fast path accepts, the reference must
// accept with the same entries and metadata; a disagreement aborts. So does
// an opened file whose layout table is not, as JSON, the recomputed one
// (§8.2 step 4 has three accept-only paths before the reference).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <vector>

#include <metatensor.hpp>
#include <tensogram/core/endian.hpp>

#include "fuzz_common.hpp"
#include "src/metatensor/fast_json.hpp"

namespace {

volatile std::uint64_t sink = 0;

void touch_record(const metatensor::record_ref& r, const metatensor::record_layout& layout) {
  for (const auto& field : layout.fields) {
    try {
      switch (field.type.type) {
        case metatensor::value_type::string:
        case metatensor::value_type::list:
          if (field.type.shape.empty()) sink = sink + tensogram_fuzz::touch(r.blob(field.name));
          break;
        case metatensor::value_type::record:
          if (field.type.shape.empty()) touch_record(r.sub(field.name), *field.type.record);
          break;
        case metatensor::value_type::scalar: break;
      }
    } catch (const tensogram::error&) {
    }
  }
}

[[noreturn]] void header_paths_disagree(const char* what) {
  std::fprintf(stderr, "header fast path and reference path disagree: %s\n", what);
  std::abort();
}

void check_header_fast_path(std::span<const std::byte> image) {
  if (image.size() < 8) return;
  const auto n = tensogram::load_le<std::uint64_t>(image.data());  // the header's length (§2)
  if (n > image.size() - 8) return;
  const auto fast = metatensor::detail::read_header_fast(image, n);
  if (!fast) return;
  std::map<std::string, std::string> metadata;
  bool has_metadata = false;
  std::vector<metatensor::detail::header_entry> entries;
  metatensor::detail::header_storage storage;
  try {
    metatensor::detail::read_header_reference(
        std::string_view(reinterpret_cast<const char*>(image.data()) + 8, static_cast<std::size_t>(n)),
        metadata, has_metadata, entries, storage);
  } catch (const tensogram::error&) {
    header_paths_disagree("the fast path accepts what the reference rejects");
  }
  if (fast->has_metadata != has_metadata ||
      std::map<std::string, std::string>(fast->metadata.begin(), fast->metadata.end()) != metadata) {
    header_paths_disagree("metadata");
  }
  if (fast->entries.size() != entries.size()) header_paths_disagree("entry count");
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const auto& a = fast->entries[i];
    const auto& b = entries[i];
    if (a.name != b.name || a.type != b.type || !std::ranges::equal(a.shape, b.shape) || a.begin != b.begin ||
        a.end != b.end) {
      header_paths_disagree("an entry");
    }
  }
}

// Step 4 of an opened file: whichever path found its layout table equal to
// the recomputed one (the writer's canonical text, the token walk of a table
// of flat tensors, simdjson's parse), the reference parse of the table must
// equal `layout_table_json` as JSON.
void check_layout_table(const metatensor::file& f) {
  const nlohmann::json* table = nullptr;
  try {
    table = &f.layout_table();
  } catch (const tensogram::error&) {
    std::fprintf(stderr, "an opened file's layout table fails the reference parse\n");
    std::abort();
  }
  if (*table != metatensor::layout_table_json(f.schema(), f.tensor_names(), f.alignment())) {
    std::fprintf(stderr, "an opened file's layout table differs from the recomputed one\n");
    std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto bytes = tensogram_fuzz::as_bytes(data, size);
  check_header_fast_path(bytes);
  std::optional<metatensor::file> f;
  try {
    f.emplace(metatensor::file::from_buffer(tensogram::buffer::owned({bytes.begin(), bytes.end()})));
  } catch (const tensogram::error&) {
    return 0;
  }
  check_layout_table(*f);
  for (const std::string& name : f->tensor_names()) {
    const metatensor::tensor_layout& l = f->layout(name);
    // The BlobRef checks run at the first records/blobs view (spec 06 §8.1:
    // deferred from open), which throws MT_BLOB_BOUNDS / MT_BLOB_ALIGN.
    try {
      switch (l.kind) {
        case metatensor::tensor_kind::flat: sink = sink + tensogram_fuzz::touch(f->flat(name).bytes()); break;
        case metatensor::tensor_kind::record: {
          const auto recs = f->records(name);
          for (std::uint64_t i = 0; i < recs.size() && i < 4096; ++i) {
            sink = sink + tensogram_fuzz::touch(recs[i].bytes());
            touch_record(recs[i], recs.record());
          }
          break;
        }
        case metatensor::tensor_kind::blob: {
          const auto blobs = f->blobs(name);
          for (std::uint64_t i = 0; i < blobs.size() && i < 4096; ++i)
            sink = sink + tensogram_fuzz::touch(blobs.bytes(i));
          break;
        }
      }
    } catch (const tensogram::error&) {
    }
    try {
      if (f->primary(name).bytes().size() <= 4096) sink = sink + f->logical_value(name).size();
    } catch (const tensogram::error&) {
    }
  }
  try {
    f->validate_deep();
  } catch (const tensogram::error&) {
  }
  return 0;
}
