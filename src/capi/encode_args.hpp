// Arguments shared by the C ABI's encode, file-append and streaming-encoder
// functions (spec 04 §C.3, spec 07 C2.3).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "tensogram.h"
#include "tensogram/message/encode.hpp"
#include "tensogram/message/json_encode.hpp"
#include "tensogram/message/options.hpp"

namespace tensogram::capi {

/// A parsed `metadata_json` with one input per data pointer. The inputs
/// borrow the caller's data for the duration of the call.
struct encode_request {
  json_message_spec spec;
  std::vector<object_input> inputs;
};

/// Checks the pointers (`data_ptrs`/`data_lens` may be NULL only when
/// `num_objects` is 0; a NULL data pointer needs length 0), parses the JSON
/// (`metadata_error` when malformed) and matches descriptors to objects
/// (`invalid_arg_error` on a count mismatch).
[[nodiscard]] encode_request parse_encode_request(const char* fn, const char* metadata_json,
                                                  const std::uint8_t* const* data_ptrs,
                                                  const std::size_t* data_lens, std::size_t num_objects);

/// Encode options from the C arguments: `hash_algo` as `hash_algo_arg`,
/// mask options NULL = NaN/Inf rejected; an unknown mask method is
/// `invalid_arg_error` (spec 07 C2.3).
[[nodiscard]] encode_options encode_opts(const char* fn, const char* hash_algo, std::uint32_t threads,
                                         const TgmEncodeMaskOptions* mask_options = nullptr);

}  // namespace tensogram::capi
