// C ABI: message boundaries in a buffer (spec 04 §C.4, spec 07 C2.4 "Scan").
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "capi.hpp"
#include "tensogram/core/error.hpp"
#include "tensogram/message/decode.hpp"

struct tgm_scan_result_t : tensogram::capi::handle_tag<0x7467'6d73'6361'6e72> {  // "tgmscanr"
  std::vector<tensogram::scan_entry> entries;
};

namespace {
namespace capi = tensogram::capi;
constexpr const char* scan_type = "tgm_scan_result_t";
}  // namespace

extern "C" {

tgm_error tgm_scan(const uint8_t* buf, size_t buf_len, tgm_scan_result_t** out) {
  return capi::guarded([&] {
    capi::required("tgm_scan", "out", out);
    // Content never fails: bytes that are not messages are skipped.
    const auto bytes = capi::bytes_arg("tgm_scan", "buf", buf, buf_len);
    auto result = std::make_unique<tgm_scan_result_t>();
    result->entries = tensogram::scan(bytes);
    *out = result.release();
  });
}

size_t tgm_scan_count(const tgm_scan_result_t* result) {
  const tgm_scan_result_t* r = capi::live_or_null("tgm_scan_count", scan_type, result);
  return r != nullptr ? r->entries.size() : 0;
}

tgm_scan_entry_t tgm_scan_entry(const tgm_scan_result_t* result, size_t index) {
  constexpr tgm_scan_entry_t bad{SIZE_MAX, 0};
  return capi::guarded_value(bad, [&] {
    const tgm_scan_result_t& r =
        capi::live("tgm_scan_entry", scan_type, const_cast<tgm_scan_result_t*>(result));
    // The one accessor that records a last error, as the reference's does.
    if (index >= r.entries.size()) {
      capi::throw_invalid("tgm_scan_entry", "index " + std::to_string(index) + " out of range (count=" +
                                                std::to_string(r.entries.size()) + ")");
    }
    const tensogram::scan_entry& e = r.entries[index];
    return tgm_scan_entry_t{e.offset, e.length};
  });
}

void tgm_scan_free(tgm_scan_result_t* result) {
  capi::free_handle("tgm_scan_free", scan_type, result);
}

}  // extern "C"
