// The canonical form of a metatensor file (spec 06 §3.5, §6.4–§6.6): heaps
// and BlobRefs built, physical tensors ordered by placement alignment and
// name, padding tensors where §6.6 needs them, and the §3.1 metadata keys.
// Not a public header.
#pragma once

#include <cstddef>
#include <list>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "metatensor/layout.hpp"
#include "metatensor/safetensors.hpp"
#include "metatensor/writer.hpp"
#include "tensor_values.hpp"

namespace metatensor::detail {

// Everything `safetensors::serialize`/`write_file` needs, with the storage
// that the spans point to.
struct prepared {
  std::list<std::vector<std::byte>> owned;  // built primaries and heaps (stable addresses)
  std::vector<std::byte> zeros;             // padding tensor content
  std::vector<safetensors::tensor_input> inputs;
  std::map<std::string, std::string> metadata;
  safetensors::write_options options;
};

/// Everything needed to write the file of `schema` with `options` holding
/// `tensors` (the values of every tensor set, sorted by name). Throws
/// MT_TENSOR_SET when a required tensor is missing, ST_OVERFLOW beyond
/// 2^53 - 1 bytes.
[[nodiscard]] prepared prepare(const compiled_schema& schema, const writer_options& options,
                               std::span<const tensor_values* const> tensors);

}  // namespace metatensor::detail
