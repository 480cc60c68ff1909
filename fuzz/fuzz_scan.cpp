// libFuzzer target: message scanning of a multi-message buffer.
//
// `scan` never throws; `decode_metadata` on the first entries and the last
// may only throw `tensogram::error`. Entries must lie inside the buffer, in increasing
// order and without overlap: a violation is a scan bug and traps.
#include <cstddef>
#include <cstdint>
#include <vector>

#include <tensogram.hpp>

#include "fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace tensogram;
  const std::span<const std::byte> bytes = tensogram_fuzz::as_bytes(data, size);
  volatile std::size_t sink = 0;

  const std::vector<scan_entry> entries = scan(bytes);
  std::size_t previous_end = 0;
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const scan_entry& e = entries[i];
    if (e.offset < previous_end || e.length > size || e.offset > size - e.length) __builtin_trap();
    previous_end = e.offset + e.length;
    if (i >= tensogram_fuzz::max_decoded_messages && i + 1 != entries.size()) continue;
    try {
      const metadata meta = decode_metadata(bytes.subspan(e.offset, e.length));
      sink = sink + meta.num_objects();
    } catch (const tensogram::error&) {
    }
  }
  return 0;
}
