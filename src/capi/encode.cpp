// C ABI: buffered encode (spec 04 §C.3–C.4, spec 07 C2.4 "Encode").
#include <span>
#include <string>
#include <vector>

#include "capi.hpp"
#include "encode_args.hpp"
#include "tensogram/core/error.hpp"
#include "tensogram/message/masks.hpp"

namespace tensogram::capi {

encode_request parse_encode_request(const char* fn, const char* metadata_json,
                                    const std::uint8_t* const* data_ptrs, const std::size_t* data_lens,
                                    std::size_t num_objects) {
  const std::string json = text_arg(fn, "metadata_json", metadata_json);
  if (num_objects > 0) {
    required(fn, "data_ptrs", data_ptrs);
    required(fn, "data_lens", data_lens);
  }
  encode_request r{parse_message_json(json), {}};
  if (r.spec.descriptors.size() != num_objects) {
    throw_invalid(fn, "metadata_json has " + std::to_string(r.spec.descriptors.size()) + " descriptors but " +
                          std::to_string(num_objects) + " objects were given");
  }
  r.inputs.reserve(num_objects);
  for (std::size_t i = 0; i < num_objects; ++i) {
    if (data_ptrs[i] == nullptr && data_lens[i] != 0) {
      throw_invalid(fn, "data_ptrs[" + std::to_string(i) + "] is NULL but data_lens[" + std::to_string(i) +
                            "] is " + std::to_string(data_lens[i]));
    }
    r.inputs.push_back(
        object_input{std::move(r.spec.descriptors[i]),
                     std::span<const std::byte>(reinterpret_cast<const std::byte*>(data_ptrs[i]),
                                                data_ptrs[i] != nullptr ? data_lens[i] : 0)});
  }
  return r;
}

encode_options encode_opts(const char* fn, const char* hash_algo, std::uint32_t threads,
                           const TgmEncodeMaskOptions* mask_options) {
  encode_options o;
  o.hash_algo = hash_algo_arg(fn, hash_algo);
  o.threads = threads;
  if (mask_options == nullptr) return o;  // reject NaN/Inf
  o.allow_nan = mask_options->allow_nan;
  o.allow_inf = mask_options->allow_inf;
  const auto method = [&](const char* name, const char* value) -> std::string {
    const std::optional<std::string> m = optional_text_arg(fn, name, value);
    if (!m) return {};  // default ("roaring")
    if (!is_known_mask_method(*m)) {
      throw_invalid(fn, std::string("unknown mask method '") + *m + "' for " + name +
                            " (expected none, rle, roaring, lz4, zstd or blosc2)");
    }
    return *m;
  };
  o.nan_mask_method = method("nan_mask_method", mask_options->nan_mask_method);
  o.pos_inf_mask_method = method("pos_inf_mask_method", mask_options->pos_inf_mask_method);
  o.neg_inf_mask_method = method("neg_inf_mask_method", mask_options->neg_inf_mask_method);
  o.small_mask_threshold_bytes =
      mask_options->small_mask_threshold_bytes < 0 ? -1 : mask_options->small_mask_threshold_bytes;
  return o;
}

}  // namespace tensogram::capi

namespace {

namespace capi = tensogram::capi;

tgm_error encode_to_bytes(const char* fn, const char* metadata_json, const uint8_t* const* data_ptrs,
                          const size_t* data_lens, size_t num_objects, const char* hash_algo,
                          uint32_t threads, const TgmEncodeMaskOptions* mask_options, bool pre_encoded,
                          tgm_bytes_t* out) {
  return capi::guarded([&] {
    capi::required(fn, "out", out);
    const tensogram::encode_options opts = capi::encode_opts(fn, hash_algo, threads, mask_options);
    const capi::encode_request r =
        capi::parse_encode_request(fn, metadata_json, data_ptrs, data_lens, num_objects);
    const std::vector<std::byte> bytes = pre_encoded
                                             ? tensogram::encode_pre_encoded(r.spec.metadata, r.inputs, opts)
                                             : tensogram::encode(r.spec.metadata, r.inputs, opts);
    *out = capi::make_bytes(bytes);
  });
}

}  // namespace

extern "C" {

tgm_error tgm_encode(const char* metadata_json, const uint8_t* const* data_ptrs, const size_t* data_lens,
                     size_t num_objects, const char* hash_algo, uint32_t threads, tgm_bytes_t* out) {
  return encode_to_bytes("tgm_encode", metadata_json, data_ptrs, data_lens, num_objects, hash_algo, threads,
                         nullptr, false, out);
}

tgm_error tgm_encode_with_options(const char* metadata_json, const uint8_t* const* data_ptrs,
                                  const size_t* data_lens, size_t num_objects, const char* hash_algo,
                                  uint32_t threads, const TgmEncodeMaskOptions* mask_options,
                                  tgm_bytes_t* out) {
  return encode_to_bytes("tgm_encode_with_options", metadata_json, data_ptrs, data_lens, num_objects,
                         hash_algo, threads, mask_options, false, out);
}

tgm_error tgm_encode_pre_encoded(const char* metadata_json, const uint8_t* const* data_ptrs,
                                 const size_t* data_lens, size_t num_objects, const char* hash_algo,
                                 uint32_t threads, tgm_bytes_t* out) {
  return encode_to_bytes("tgm_encode_pre_encoded", metadata_json, data_ptrs, data_lens, num_objects,
                         hash_algo, threads, nullptr, true, out);
}

}  // extern "C"
