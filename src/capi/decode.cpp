// C ABI: decode functions and the decoded-message accessors (spec 04 §C.4,
// spec 07 C2.4 "Decode", "Message and object accessors").
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "capi.hpp"
#include "handles.hpp"
#include "tensogram/cbor/json.hpp"
#include "tensogram/core/buffer.hpp"
#include "tensogram/core/byte_order.hpp"
#include "tensogram/core/dtype.hpp"
#include "tensogram/core/hex.hpp"
#include "tensogram/message/decode.hpp"
#include "tensogram/message/options.hpp"

tgm_message_t::tgm_message_t(tensogram::message m) : msg(std::move(m)) {
  strings.reserve(msg.num_objects());
  for (const tensogram::decoded_object& o : msg.objects()) {
    strings.push_back(
        {o.dtype_string(), o.hash_value(), tensogram::cbor::to_json_text(o.descriptor().to_cbor())});
  }
}

namespace tensogram::capi {

tgm_message_t* new_message(message m) {
  return new tgm_message_t(std::move(m));
}

void copy_ranges(const std::vector<buffer>& parts, bool join, tgm_bytes_t* out, size_t* out_count) {
  if (join) {
    std::size_t total = 0;
    for (const auto& p : parts) total += p.size();
    tgm_bytes_t joined = allocate_bytes(total);
    std::size_t at = 0;
    for (const auto& p : parts) {
      if (!p.empty()) std::memcpy(joined.data + at, p.data(), p.size());
      at += p.size();
    }
    out[0] = joined;
    *out_count = 1;
    return;
  }
  std::size_t done = 0;
  try {
    for (; done < parts.size(); ++done) out[done] = make_bytes(parts[done].bytes());
  } catch (...) {
    for (std::size_t i = 0; i < done; ++i) {
      (void)release_bytes(out[i]);
      out[i] = {nullptr, 0};
    }
    throw;
  }
  *out_count = parts.size();
}

}  // namespace tensogram::capi

namespace {

namespace capi = tensogram::capi;
using capi::guarded;
using capi::guarded_value;
using capi::required;

// Decodes the message in the caller's buffer into a new handle. The
// owning-result C++ entry points copy what they keep, since the caller may
// free `buf` before the handle.
template <typename Decode>
tgm_error decode_to_handle(const char* fn, const uint8_t* buf, size_t len, tgm_message_t** out,
                           Decode decode) {
  return guarded([&] {
    required(fn, "out", out);
    const auto bytes = capi::bytes_arg(fn, "buf", buf, len);
    *out = capi::new_message(decode(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size()));
  });
}

// The object at `i` of a live handle, else nullptr (spec 07 C2.4: out of
// range or NULL handle → NULL / 0).
const tensogram::decoded_object* object_at(const char* fn, const tgm_message_t* msg, size_t i) noexcept {
  const tgm_message_t* h = capi::live_or_null(fn, capi::message_type, msg);
  if (h == nullptr || i >= h->msg.num_objects()) return nullptr;
  return &h->msg.objects()[i];
}

const tgm_message_t::object_strings* strings_at(const char* fn, const tgm_message_t* msg, size_t i) noexcept {
  return object_at(fn, msg, i) != nullptr ? &msg->strings[i] : nullptr;
}

}  // namespace

extern "C" {

tgm_error tgm_decode(const uint8_t* buf, size_t buf_len, int32_t native_byte_order, uint32_t threads,
                     int32_t verify_hash, tgm_message_t** out) {
  return decode_to_handle("tgm_decode", buf, buf_len, out, [&](const std::uint8_t* b, std::size_t n) {
    return tensogram::decode(b, n, capi::decode_opts(native_byte_order != 0, threads, verify_hash != 0));
  });
}

tgm_error tgm_decode_with_options(const uint8_t* buf, size_t buf_len, int32_t native_byte_order,
                                  uint32_t threads, int32_t verify_hash,
                                  const TgmDecodeMaskOptions* mask_options, tgm_message_t** out) {
  const bool restore = mask_options == nullptr || mask_options->restore_non_finite;
  return decode_to_handle(
      "tgm_decode_with_options", buf, buf_len, out, [&](const std::uint8_t* b, std::size_t n) {
        return tensogram::decode(
            b, n, capi::decode_opts(native_byte_order != 0, threads, verify_hash != 0, restore));
      });
}

tgm_error tgm_decode_metadata(const uint8_t* buf, size_t buf_len, tgm_metadata_t** out) {
  return guarded([&] {
    required("tgm_decode_metadata", "out", out);
    const auto bytes = capi::bytes_arg("tgm_decode_metadata", "buf", buf, buf_len);
    *out = capi::new_metadata(tensogram::decode_metadata(bytes).global());
  });
}

tgm_error tgm_decode_object(const uint8_t* buf, size_t buf_len, size_t index, int32_t native_byte_order,
                            uint32_t threads, int32_t verify_hash, tgm_message_t** out) {
  return decode_to_handle("tgm_decode_object", buf, buf_len, out, [&](const std::uint8_t* b, std::size_t n) {
    return tensogram::decode_object(b, n, index,
                                    capi::decode_opts(native_byte_order != 0, threads, verify_hash != 0));
  });
}

tgm_error tgm_decode_range(const uint8_t* buf, size_t buf_len, size_t object_index,
                           const uint64_t* ranges_offsets, const uint64_t* ranges_counts, size_t num_ranges,
                           int32_t native_byte_order, uint32_t threads, int32_t join, tgm_bytes_t* out,
                           size_t* out_count) {
  constexpr const char* fn = "tgm_decode_range";
  return guarded([&] {
    required(fn, "out_count", out_count);
    required(fn, "out", out);
    const auto bytes = capi::bytes_arg(fn, "buf", buf, buf_len);
    if (num_ranges > 0) {
      required(fn, "ranges_offsets", ranges_offsets);
      required(fn, "ranges_counts", ranges_counts);
    }
    std::vector<std::pair<std::uint64_t, std::uint64_t>> ranges;
    ranges.reserve(num_ranges);
    for (size_t i = 0; i < num_ranges; ++i) ranges.emplace_back(ranges_offsets[i], ranges_counts[i]);
    // The message is only read during the call: a borrowed view suffices.
    const auto parts = tensogram::decode_range(tensogram::buffer::borrowed(bytes), object_index, ranges,
                                               capi::decode_opts(native_byte_order != 0, threads, false));
    capi::copy_ranges(parts, join != 0, out, out_count);
  });
}

uint64_t tgm_message_version(const tgm_message_t* msg) {
  return capi::live_or_null("tgm_message_version", capi::message_type, msg) != nullptr ? TGM_WIRE_VERSION : 0;
}

size_t tgm_message_num_objects(const tgm_message_t* msg) {
  const tgm_message_t* h = capi::live_or_null("tgm_message_num_objects", capi::message_type, msg);
  return h != nullptr ? h->msg.num_objects() : 0;
}

size_t tgm_message_num_decoded(const tgm_message_t* msg) {
  const tgm_message_t* h = capi::live_or_null("tgm_message_num_decoded", capi::message_type, msg);
  return h != nullptr ? h->msg.num_objects() : 0;
}

uint64_t tgm_object_ndim(const tgm_message_t* msg, size_t index) {
  const auto* o = object_at("tgm_object_ndim", msg, index);
  return o != nullptr ? o->ndim() : 0;
}

const uint64_t* tgm_object_shape(const tgm_message_t* msg, size_t index) {
  const auto* o = object_at("tgm_object_shape", msg, index);
  return o != nullptr ? o->shape().data() : nullptr;
}

const uint64_t* tgm_object_strides(const tgm_message_t* msg, size_t index) {
  const auto* o = object_at("tgm_object_strides", msg, index);
  return o != nullptr ? o->strides().data() : nullptr;
}

const char* tgm_object_dtype(const tgm_message_t* msg, size_t index) {
  const auto* s = strings_at("tgm_object_dtype", msg, index);
  return s != nullptr ? s->dtype.c_str() : nullptr;
}

const char* tgm_object_descriptor_json(const tgm_message_t* msg, size_t index) {
  const auto* s = strings_at("tgm_object_descriptor_json", msg, index);
  return s != nullptr ? s->descriptor_json.c_str() : nullptr;
}

const uint8_t* tgm_object_data(const tgm_message_t* msg, size_t decoded_index, size_t* out_len) {
  const auto* o = object_at("tgm_object_data", msg, decoded_index);
  const uint8_t* data = o != nullptr ? o->data() : nullptr;
  if (out_len != nullptr) *out_len = data != nullptr ? o->data_size() : 0;
  return data;
}

const char* tgm_payload_encoding(const tgm_message_t* msg, size_t index) {
  const auto* o = object_at("tgm_payload_encoding", msg, index);
  return o != nullptr ? o->encoding().c_str() : nullptr;
}

int32_t tgm_payload_has_hash(const tgm_message_t* msg, size_t index) {
  const auto* o = object_at("tgm_payload_has_hash", msg, index);
  return o != nullptr && o->has_hash() ? 1 : 0;
}

tgm_error tgm_message_metadata(const tgm_message_t* msg, tgm_metadata_t** out) {
  return guarded([&] {
    required("tgm_message_metadata", "out", out);
    const tgm_message_t& m = capi::live("tgm_message_metadata", capi::message_type, msg);
    *out = capi::new_metadata(m.msg.global());
  });
}

const char* tgm_object_type(const tgm_message_t* msg, size_t index) {
  const auto* o = object_at("tgm_object_type", msg, index);
  return o != nullptr ? o->object_type().c_str() : nullptr;
}

const char* tgm_object_byte_order(const tgm_message_t* msg, size_t index) {
  const auto* o = object_at("tgm_object_byte_order", msg, index);
  // The descriptor's declared order, even when the bytes were converted to
  // the host's (spec 07 C2.4); the names are NUL-terminated literals.
  return o != nullptr ? tensogram::byte_order_name(o->descriptor().effective_byte_order()).data() : nullptr;
}

const char* tgm_object_filter(const tgm_message_t* msg, size_t index) {
  const auto* o = object_at("tgm_object_filter", msg, index);
  return o != nullptr ? o->filter().c_str() : nullptr;
}

const char* tgm_object_compression(const tgm_message_t* msg, size_t index) {
  const auto* o = object_at("tgm_object_compression", msg, index);
  return o != nullptr ? o->compression().c_str() : nullptr;
}

const char* tgm_object_hash_type(const tgm_message_t* msg, size_t index) {
  const auto* o = object_at("tgm_object_hash_type", msg, index);
  return o != nullptr && o->has_hash() ? "xxh3" : nullptr;
}

const char* tgm_object_hash_value(const tgm_message_t* msg, size_t index) {
  const auto* s = strings_at("tgm_object_hash_value", msg, index);
  return s != nullptr && !s->hash_value.empty() ? s->hash_value.c_str() : nullptr;
}

void tgm_message_free(tgm_message_t* msg) {
  capi::free_handle("tgm_message_free", capi::message_type, msg);
}

}  // extern "C"
