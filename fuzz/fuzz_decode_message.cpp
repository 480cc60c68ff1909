// libFuzzer target: full message decode over arbitrary bytes.
//
// Exercises the frame walk, metadata assembly, descriptor parsing, payload
// slicing, byte swapping, mask restoration, hash verification and the
// index-driven single-object path. Only `tensogram::error` is an accepted
// outcome: any other exception escapes and aborts the fuzzer, as does every
// sanitizer report, because both mean a bug in the library.
#include <cstddef>
#include <cstdint>

#include <tensogram.hpp>

#include "fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace tensogram;
  const std::span<const std::byte> bytes = tensogram_fuzz::as_bytes(data, size);
  // Borrowed: views returned by decode point straight into libFuzzer's
  // exactly-sized heap copy of the input, so any overrun is caught by ASan.
  const buffer msg = buffer::borrowed(bytes);
  volatile std::uint64_t sink = 0;

  try {
    const message m = decode(msg);
    sink = sink + tensogram_fuzz::touch(m) + m.get_metadata().num_objects();
  } catch (const tensogram::error&) {
  }
  try {
    decode_options verify;
    verify.verify_hash = true;
    const message m = decode(msg, verify);
    sink = sink + tensogram_fuzz::touch(m);
  } catch (const tensogram::error&) {
  }
  try {
    const message m = decode_object(msg, 0);
    sink = sink + tensogram_fuzz::touch(m);
  } catch (const tensogram::error&) {
  }
  try {
    const auto [meta, descriptors] = decode_descriptors(bytes);
    sink = sink + descriptors.size() + meta.num_objects();
  } catch (const tensogram::error&) {
  }
  return 0;
}
