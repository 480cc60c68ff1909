// libFuzzer target: the metatensor streaming protocol's parsers (spec 06
// §10.3): arbitrary bytes as one stream, split into frames by frame_reader
// (fed in two pieces, as a network delivers them) and every frame's JSON
// payload parsed; each must end in a result or a protocol_error.
#include <cstddef>
#include <cstdint>

#include <metatensor/stream_protocol.hpp>

#include "fuzz_common.hpp"

namespace {

namespace ms = metatensor::streaming;

void parse_payload(const ms::frame& f) {
  switch (f.type) {
    case ms::frame_type::open: (void)ms::parse_open(f.payload); break;
    case ms::frame_type::opened: (void)ms::parse_opened(f.payload); break;
    case ms::frame_type::get: (void)ms::parse_get(f.payload); break;
    case ms::frame_type::response: (void)ms::parse_response(f.payload); break;
    case ms::frame_type::priority_update: (void)ms::parse_priority_update(f.payload); break;
    case ms::frame_type::error: (void)ms::parse_error(f.payload); break;
    case ms::frame_type::goaway: (void)ms::parse_goaway(f.payload); break;
    case ms::frame_type::header:
    case ms::frame_type::data: break;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto bytes = tensogram_fuzz::as_bytes(data, size);
  const std::size_t cut = size == 0 ? 0 : data[0] % (size + 1);
  ms::frame_reader reader;
  // Binary frames up to 64 KiB (a fuzz input is no larger).
  reader.expect_payload_limit(std::uint64_t{1} << 16);
  try {
    reader.feed(bytes.first(cut));
    while (auto f = reader.next()) parse_payload(*f);
    reader.feed(bytes.subspan(cut));
    while (auto f = reader.next()) {
      parse_payload(*f);
      reader.expect_payload_limit(std::uint64_t{1} << 16);
    }
  } catch (const ms::protocol_error&) {
  }
  return 0;
}
