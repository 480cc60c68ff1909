// libFuzzer target: the metatensor streaming protocol's parsers (spec 06
// §10.3): arbitrary bytes as one stream, split into frames by frame_reader
// (fed in two pieces, as a network delivers them) and every frame's JSON
// payload parsed; each must end in a result or a protocol_error.  The same
// bytes then go, in the same two pieces, to a client's tensor_stream_receiver
// (§10.4), which must write only inside its destination.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "fuzz_common.hpp"
#include "src/metatensor/streaming/protocol/stream_protocol.hpp"

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
  // A request for bytes [3, 3 + n) of a 300-byte tensor at abs(t) 40, n from the input.
  const std::uint64_t n = size > 1 ? data[1] : 0;
  std::vector<std::byte> destination(static_cast<std::size_t>(n));
  try {
    ms::tensor_stream_receiver receiver(ms::get_payload{"t", ms::byte_range{3, 3 + n}, 3, false}, 40, 300,
                                        destination);
    receiver.feed(bytes.first(cut));
    receiver.feed(bytes.subspan(cut));
    receiver.finish();
  } catch (const ms::protocol_error&) {
  }
  return 0;
}
