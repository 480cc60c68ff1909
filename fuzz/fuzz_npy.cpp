// libFuzzer target: the .npy reader of the command-line tools
// (tools/tensogram/npy.cpp: `tensogram convert-npy`, `metatensor from-npy`)
// and what `from-npy` does with a parsed array (tools/metatensor/
// npy_records.cpp: the schema a dtype implies, the records it writes).
//
// Accepted outcomes: `npy_error` from the reader, `tool_error` from the
// conversion (a dtype metatensor cannot hold) and `tensogram::error` from
// the metatensor writer. Properties checked:
// * a parsed array's data view is exactly element_count × itemsize bytes
//   inside the input;
// * a plain (non-structured, non-text) array written back by `serialize`
//   parses to the same dtype, shape and bytes (C order after
//   fortran_to_c_order).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include <metatensor.hpp>

#include "fuzz_common.hpp"
#include "tools/metatensor/npy_records.hpp"
#include "tools/tensogram/npy.hpp"
#include "tools/tensogram/tool_error.hpp"

namespace {

namespace npy = tensogram::cli::npy;

// Bounds the bytes the metatensor conversion writes for one input: a
// header may legitimately describe a large array of zero-size elements.
constexpr std::uint64_t k_max_converted_bytes = std::uint64_t{1} << 20;

void check_view(const npy::array& a, std::span<const std::byte> input) {
  if (a.data.size() != a.element_count * a.element.itemsize) __builtin_trap();
  if (a.data.data() < input.data() || a.data.data() + a.data.size() > input.data() + input.size())
    __builtin_trap();
}

void round_trip(const npy::array& a) {
  if (!a.hdr.fields.empty() || a.element.text != 0) return;
  std::vector<std::byte> c_order;
  std::span<const std::byte> data = a.data;
  if (a.hdr.fortran_order && a.hdr.shape.size() > 1) {
    c_order = npy::fortran_to_c_order(a.data, a.hdr.shape, a.element.itemsize);
    if (c_order.size() != a.data.size()) __builtin_trap();
    data = c_order;
  }
  // `|b1` reads as uint8 flagged bool; descr_for knows the uint8 only.
  const std::string descr = a.element.is_bool ? "|b1" : npy::descr_for(a.element.type, a.element.order);
  const std::vector<std::byte> file = npy::serialize(descr, a.hdr.shape, data);
  const npy::array back = npy::parse(file);
  if (back.hdr.shape != a.hdr.shape || back.hdr.fortran_order || back.element.type != a.element.type ||
      back.element.itemsize != a.element.itemsize || back.element.is_bool != a.element.is_bool)
    __builtin_trap();
  if (!std::equal(back.data.begin(), back.data.end(), data.begin(), data.end())) __builtin_trap();
}

void to_metatensor(const npy::array& a) {
  if (a.data.size() > k_max_converted_bytes) return;
  nlohmann::json schema = {{"$schema", "https://json-schema.org/draft/2020-12/schema"},
                           {"type", "object"},
                           {"properties", {{"x", metatensor::cli::npy_tensor_schema(a)}}},
                           {"required", {"x"}}};
  metatensor::file_builder builder(metatensor::compile_schema(schema));
  std::vector<std::byte> c_order;
  std::span<const std::byte> data = a.data;
  if (a.hdr.fortran_order && a.hdr.shape.size() > 1) {
    c_order = npy::fortran_to_c_order(a.data, a.hdr.shape, a.element.itemsize);
    data = c_order;
  }
  metatensor::cli::add_npy_tensor(builder, "x", a, data);
  const std::vector<std::byte> image = builder.serialize();
  // What the writer wrote must open (structural validation, spec 06 §8.1).
  try {
    const metatensor::file f = metatensor::file::from_buffer(tensogram::buffer::owned(image));
    f.check_all_blob_refs();
  } catch (const tensogram::error&) {
    __builtin_trap();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::byte> input = tensogram_fuzz::as_bytes(data, size);
  try {
    const npy::array a = npy::parse(input);
    check_view(a, input);
    round_trip(a);
  } catch (const npy::npy_error&) {
  }
  try {
    const npy::array a = npy::parse(input, npy::text_dtypes::accept);
    check_view(a, input);
    to_metatensor(a);
  } catch (const npy::npy_error&) {
  } catch (const tensogram::cli::tool_error&) {
  } catch (const tensogram::error&) {
  }
  return 0;
}
