// Whole-file validation shared by `metatensor validate` and Python
// (metatensor/validate.hpp).
#include "metatensor/validate.hpp"

#include "metatensor/file.hpp"
#include "metatensor/safetensors.hpp"

namespace metatensor {

std::string_view file_format_name(file_format f) noexcept {
  return f == file_format::metatensor ? "metatensor" : "safetensors";
}

file_format validate_image(const tensogram::buffer& image, bool deep) {
  const safetensors::file base = safetensors::file::from_buffer(image);  // §2, in full
  if (base.metadata().count("metatensor.version") == 0) {
    if (deep) {
      // §8.1's deep checks that apply without a schema: BOOL bytes.
      for (const auto& t : base.tensors()) {
        if (t.type() == dtype::boolean) (void)flat_elements(t, 0, t.element_count());
      }
    }
    return file_format::safetensors;
  }
  const file f = file::from_buffer(image);
  // Structural validation ends with the BlobRefs, which opening defers (§8.1).
  f.check_all_blob_refs();
  if (deep) f.validate_deep();
  return file_format::metatensor;
}

}  // namespace metatensor
