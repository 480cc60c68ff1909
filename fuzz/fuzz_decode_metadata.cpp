// libFuzzer target: metadata decode, the CBOR reader and CBOR → JSON.
//
// Only `tensogram::error` is an accepted outcome; anything else (including
// nlohmann::json exceptions from the JSON conversion) escapes and aborts the
// fuzzer, as does every sanitizer report.
#include <cstddef>
#include <cstdint>
#include <string>

#include <tensogram.hpp>
#include <tensogram/cbor/json.hpp>
#include <tensogram/format/wire.hpp>

#include "fuzz_common.hpp"

namespace {

// Parses `bytes` as one CBOR item and runs everything that consumes a
// decoded value from untrusted input.
std::size_t exercise_cbor(std::span<const std::byte> bytes) {
  std::size_t n = 0;
  try {
    const tensogram::cbor::value v = tensogram::cbor::decode(bytes);
    n += tensogram::cbor::has_canonical_key_order(v) ? 1 : 0;
    n += tensogram::cbor::to_json_text(v).size();
    // The C API renders tags as null: a second, different walk.
    n += tensogram::cbor::to_json_text(v, 2, {.unwrap_tags = false}).size();
    n += tensogram::cbor::is_canonical_encoding(bytes) ? 1 : 0;
  } catch (const tensogram::error&) {
  }
  return n;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace tensogram;
  const std::span<const std::byte> bytes = tensogram_fuzz::as_bytes(data, size);
  volatile std::size_t sink = 0;

  try {
    const metadata meta = decode_metadata(bytes);
    std::size_t n = meta.to_json().size();
    for (std::size_t i = 0; i < meta.num_objects(); ++i) n += meta.object_to_json(i).size();
    n += meta.get_string("version").size() + meta.get_string("_reserved_.encoder.name").size();
    sink = sink + n;
  } catch (const tensogram::error&) {
  }

  // The whole input as CBOR: reaches the reader directly, without the
  // framing checks in front of it.
  sink = sink + exercise_cbor(bytes);
  // Seeds are whole messages, whose first frame body starts after the
  // preamble and the frame header; parsing from there lets mutations of the
  // seeds' metadata CBOR reach the reader too.
  constexpr std::size_t first_body = format::preamble_size + format::frame_header_size;
  if (size > first_body) sink = sink + exercise_cbor(bytes.subspan(first_body));
  return 0;
}
