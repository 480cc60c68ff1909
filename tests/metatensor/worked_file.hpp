// The §6.7 worked example written by the library, and small helpers for the
// reader tests that corrupt it (spec 06 §6.4, §8.1): shared by
// file_sparse_test and file_deferred_test.
#pragma once

#include <cstddef>
#include <metatensor/file.hpp>
#include <metatensor/writer.hpp>
#include <string>
#include <vector>

#include "spec_files.hpp"

namespace metatensor_test {

/// The §6.7 worked example (a String blob tensor "labels", a struct tensor
/// "particles" with a String field, both with heaps, and a flat tensor
/// "positions"), written by the library.
inline std::vector<std::byte> worked_file() {
  metatensor::file_builder b(metatensor::compile_schema_text(example_schema()));
  b.set_logical_value(example_value());
  return b.serialize();
}

/// Absolute offset of a physical tensor's first byte, from a validated file.
inline std::size_t abs_offset(const metatensor::file& f, const metatensor::safetensors::tensor_view& t) {
  return static_cast<std::size_t>(t.bytes().data() - f.base().image().data());
}

/// The worked example with BlobRef 1 of "labels" pointing past its heap
/// (offset 1000, length 5): MT_BLOB_BOUNDS, "\"labels\" element 1: ...".
inline std::vector<std::byte> worked_file_bad_label() {
  auto bytes = worked_file();
  const auto valid = metatensor::file::from_buffer(tensogram::buffer::owned(bytes));
  poke<std::uint64_t>(bytes, abs_offset(valid, valid.primary("labels")) + 16, 1000);
  return bytes;
}

/// The message of the `metatensor::error` that `f` throws (its kind in
/// `*kind`), or "no error".
template <class F>
std::string error_of(F&& f, metatensor::errc* kind = nullptr) {
  try {
    f();
  } catch (const metatensor::error& e) {
    if (kind != nullptr) *kind = e.kind();
    return e.what();
  }
  return "no error";
}

}  // namespace metatensor_test
