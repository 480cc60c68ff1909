// libFuzzer target: `tensogram::file` over a byte source that is not a
// mapping, so the probe walkers of the bidirectional and forward scans, the
// chunked fallback search and the per-message layout reader (header and
// footer regions read separately) all parse the untrusted bytes.
//
// Only `tensogram::error` may escape; extents must lie inside the input, in
// increasing order and without overlap, and agree between both scan modes
// on the messages the forward scan of the whole buffer finds when the
// input is well formed (not checked here: garbage may legitimately differ).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include <tensogram.hpp>

#include "fuzz_common.hpp"

namespace {

// Serves reads as slices of the input without exposing it as a mapping.
class probe_source final : public tensogram::io::byte_source {
 public:
  explicit probe_source(std::span<const std::byte> bytes) : bytes_(bytes) {}
  std::uint64_t size() override { return bytes_.size(); }
  std::vector<tensogram::buffer> read(std::span<const tensogram::io::byte_range> ranges) override {
    std::vector<tensogram::buffer> out;
    for (const auto& r : ranges) {
      if (r.offset > bytes_.size() || r.length > bytes_.size() - r.offset)
        throw tensogram::io_error("past end");
      // A copy, so AddressSanitizer sees reads past a range's end.
      tensogram::buffer b = tensogram::buffer::allocate(static_cast<std::size_t>(r.length));
      if (r.length > 0)
        std::memcpy(b.mutable_data(), bytes_.data() + r.offset, static_cast<std::size_t>(r.length));
      out.push_back(std::move(b));
    }
    count(ranges.size(), 1, 0);
    return out;
  }
  std::string describe() const override { return "fuzz input"; }

 private:
  std::span<const std::byte> bytes_;
};

bool same_extent(const tensogram::scan_entry& a, const tensogram::scan_entry& b) {
  return a.offset == b.offset && a.length == b.length;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::byte> bytes = tensogram_fuzz::as_bytes(data, size);
  volatile std::uint64_t sink = 0;
  // Extents already decoded under the first scan mode. A message's layout
  // and decodes depend only on its bytes and its extent (the preamble flags
  // the scan records are read at the extent's offset), so the second mode
  // decodes only the messages its scan found differently: the same work
  // twice would halve the executions per second and reach no new code.
  std::vector<tensogram::scan_entry> decoded;
  for (tensogram::scan_mode mode : {tensogram::scan_mode::bidirectional, tensogram::scan_mode::forward}) {
    tensogram::file f = tensogram::file::from_source(std::make_unique<probe_source>(bytes), mode);
    const std::vector<tensogram::scan_entry> entries = f.message_extents();
    std::size_t previous_end = 0;
    for (const tensogram::scan_entry& e : entries) {
      if (e.offset < previous_end || e.length > size || e.offset > size - e.length) __builtin_trap();
      previous_end = e.offset + e.length;
    }
    const std::size_t first_mode_count = decoded.size();
    for (std::size_t i = 0; i < entries.size() && i < tensogram_fuzz::max_decoded_messages; ++i) {
      const auto seen = decoded.begin() + static_cast<std::ptrdiff_t>(first_mode_count);
      if (std::any_of(decoded.begin(), seen, [&](const auto& d) { return same_extent(d, entries[i]); }))
        continue;
      decoded.push_back(entries[i]);
      try {
        sink = sink + f.decode_metadata(i).num_objects();
        const tensogram::message m = f.decode_object(i, 0);
        sink = sink + tensogram_fuzz::touch(m);
        const std::pair<std::uint64_t, std::uint64_t> r[] = {{0, 1}};
        for (const tensogram::buffer& b : f.decode_range(i, 0, r))
          sink = sink + tensogram_fuzz::touch(b.bytes());
      } catch (const tensogram::error&) {
      }
    }
  }
  return 0;
}
