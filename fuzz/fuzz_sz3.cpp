// libFuzzer target: the sz3 stream reader (spec 03 §8.7, docs/sz3-format.md)
// over arbitrary bytes. Every input is decoded whole, as float64 and as
// float32 (SZ3 decodes a stream into either type); it must end in a
// `tensogram::error` or a result.
//
// Its seeds are the SZ3 streams inside the reference's lossy fixtures
// (fuzz/run.sh). The encoder's error bound is fuzz_sz3_bound's property,
// kept apart so that this target's rate measures what a hostile stream
// costs the decoder (issue 28).
#include <cstddef>
#include <cstdint>

#include "fuzz_sz3_decode.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  tensogram_fuzz::sz3_decode_any(tensogram_fuzz::as_bytes(data, size));
  return 0;
}
