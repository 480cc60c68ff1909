// libFuzzer target: the C ABI's entry points that take untrusted bytes
// (<tensogram.h>, spec 04 Part C): tgm_scan, tgm_decode_metadata,
// tgm_decode, tgm_decode_object and tgm_decode_range, and the accessors of
// what they return.
//
// The C ABI must never let an exception or a crash escape: every call
// either returns TGM_ERROR_OK with a handle or an error code with
// tgm_last_error() set. A non-OK code without an error text, or an OK code
// without a handle, is a bug and traps. Everything handed out is freed, so
// LeakSanitizer checks the handles' ownership too.
#include <cstddef>
#include <cstdint>
#include <cstring>

#include <tensogram.h>

#include "fuzz_common.hpp"

namespace {

// A failed call must say why (spec 04 C.2: the thread's last error).
void check_failure(tgm_error rc) {
  if (rc == TGM_ERROR_OK) return;
  const char* text = tgm_last_error();
  if (text == nullptr || text[0] == '\0') __builtin_trap();
}

std::uint64_t touch_bytes(const std::uint8_t* p, std::size_t n) {
  std::uint64_t sum = 0;
  for (std::size_t i = 0; i < n; ++i) sum += p[i];
  return sum;
}

// Reads every accessor of a decoded message handle.
std::uint64_t touch_message(const tgm_message_t* m) {
  std::uint64_t sum = tgm_message_version(m) + tgm_message_num_objects(m);
  const std::size_t decoded = tgm_message_num_decoded(m);
  for (std::size_t i = 0; i < decoded; ++i) {
    const std::uint64_t ndim = tgm_object_ndim(m, i);
    const std::uint64_t* shape = tgm_object_shape(m, i);
    for (std::uint64_t d = 0; shape != nullptr && d < ndim; ++d) sum += shape[d];
    for (const char* s : {tgm_object_dtype(m, i), tgm_payload_encoding(m, i), tgm_object_type(m, i),
                          tgm_object_byte_order(m, i), tgm_object_filter(m, i), tgm_object_compression(m, i),
                          tgm_object_hash_type(m, i), tgm_object_hash_value(m, i)}) {
      if (s != nullptr) sum += std::strlen(s);
    }
    std::size_t len = 0;
    const std::uint8_t* data = tgm_object_data(m, i, &len);
    if (data != nullptr) sum += touch_bytes(data, len);
  }
  tgm_metadata_t* meta = nullptr;
  if (tgm_message_metadata(m, &meta) == TGM_ERROR_OK && meta != nullptr) {
    sum += tgm_metadata_num_objects(meta);
    tgm_metadata_free(meta);
  }
  return sum;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  volatile std::uint64_t sink = 0;

  tgm_scan_result_t* scan = nullptr;
  const tgm_error scan_rc = tgm_scan(data, size, &scan);
  check_failure(scan_rc);
  std::size_t first_offset = 0;
  std::size_t first_length = size;
  if (scan_rc == TGM_ERROR_OK) {
    if (scan == nullptr) __builtin_trap();
    const std::size_t n = tgm_scan_count(scan);
    for (std::size_t i = 0; i < n; ++i) {
      const tgm_scan_entry_t e = tgm_scan_entry(scan, i);
      if (e.offset > size || e.length > size - e.offset) __builtin_trap();
      if (i == 0) {
        first_offset = e.offset;
        first_length = e.length;
      }
    }
    const tgm_scan_entry_t past = tgm_scan_entry(scan, n);  // documented: {SIZE_MAX, 0}
    if (past.offset != SIZE_MAX || past.length != 0) __builtin_trap();
    tgm_scan_free(scan);
  }
  // The first message the scan found, or the whole input.
  const std::uint8_t* msg = data + first_offset;
  const std::size_t len = first_length;

  tgm_metadata_t* meta = nullptr;
  const tgm_error meta_rc = tgm_decode_metadata(msg, len, &meta);
  check_failure(meta_rc);
  if (meta_rc == TGM_ERROR_OK) {
    if (meta == nullptr) __builtin_trap();
    sink = sink + tgm_metadata_num_objects(meta) + tgm_metadata_version(meta);
    const char* json = tgm_metadata_to_json(meta);
    if (json != nullptr) sink = sink + std::strlen(json);
    tgm_metadata_free(meta);
  }

  for (const std::int32_t native : {0, 1}) {
    tgm_message_t* m = nullptr;
    const tgm_error rc = tgm_decode(msg, len, native, 0, /*verify_hash=*/native, &m);
    check_failure(rc);
    if (rc == TGM_ERROR_OK) {
      if (m == nullptr) __builtin_trap();
      sink = sink + touch_message(m);
      tgm_message_free(m);
    }
  }

  tgm_message_t* one = nullptr;
  const tgm_error one_rc = tgm_decode_object(msg, len, 0, 1, 0, 0, &one);
  check_failure(one_rc);
  if (one_rc == TGM_ERROR_OK) {
    sink = sink + touch_message(one);
    tgm_message_free(one);
  }

  // Two ranges of object 0, split and joined.
  const std::uint64_t offsets[2] = {0, 1};
  const std::uint64_t counts[2] = {1, 2};
  for (const std::int32_t join : {0, 1}) {
    tgm_bytes_t out[2] = {};
    std::size_t filled = 0;
    const tgm_error rc = tgm_decode_range(msg, len, 0, offsets, counts, 2, 1, 0, join, out, &filled);
    check_failure(rc);
    if (rc == TGM_ERROR_OK && filled > 2) __builtin_trap();
    for (std::size_t i = 0; rc == TGM_ERROR_OK && i < filled; ++i) {
      sink = sink + touch_bytes(out[i].data, out[i].len);
      tgm_bytes_free(out[i]);
    }
  }
  return 0;
}
