// libFuzzer target: metatensor files (spec 06 §2–§9) over arbitrary bytes.
//
// Opening must end in a `tensogram::error` (metatensor errors are among them)
// or a file whose every view stays inside the image: each flat tensor, each
// record and every field of it, and every blob are read byte by byte so that
// AddressSanitizer checks the bounds structural validation promised. Deep
// validation and the logical-value projection of small tensors must also end
// in an error or a result. Seeds: small valid files made by run.sh.
#include <cstddef>
#include <cstdint>
#include <vector>

#include <metatensor.hpp>

#include "fuzz_common.hpp"

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

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto bytes = tensogram_fuzz::as_bytes(data, size);
  std::optional<metatensor::file> f;
  try {
    f.emplace(metatensor::file::from_buffer(tensogram::buffer::owned({bytes.begin(), bytes.end()})));
  } catch (const tensogram::error&) {
    return 0;
  }
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
