// Umbrella header of the tensogram C++ library.
//
//   #include <tensogram.hpp>
//
// brings in the typed API (descriptor structs, the CBOR value type, buffers
// and zero-copy decode) and the reference C++ wrapper's API (`encode` from
// JSON, `decode`, `message`, `decoded_object`, `metadata`, `meta_value`,
// the typed exceptions). CBOR ⇄ JSON helpers live in
// <tensogram/cbor/json.hpp> (they pull in nlohmann/json).
//
// Like the reference's tensogram.hpp it also brings in the C ABI
// <tensogram.h> (TGM_WIRE_VERSION, and the tgm_* functions the wrapper has
// no C++ form of, spec 07 D2.2: tgm_doctor_to_json,
// tgm_simple_packing_compute_params, tgm_message_num_decoded).
#pragma once

#include <cstdint>

#include "tensogram.h"
#include "tensogram/cbor/codec.hpp"
#include "tensogram/cbor/value.hpp"
#include "tensogram/codecs/pipeline.hpp"
#include "tensogram/core/buffer.hpp"
#include "tensogram/core/byte_order.hpp"
#include "tensogram/core/dtype.hpp"
#include "tensogram/core/error.hpp"
#include "tensogram/core/hex.hpp"
#include "tensogram/core/thread_pool.hpp"
#include "tensogram/doctor.hpp"
#include "tensogram/format/scan.hpp"
#include "tensogram/format/wire.hpp"
#include "tensogram/io/async.hpp"
#include "tensogram/io/byte_source.hpp"
#include "tensogram/io/file.hpp"
#include "tensogram/io/iterators.hpp"
#include "tensogram/io/source_scan.hpp"
#include "tensogram/message/decode.hpp"
#include "tensogram/message/descriptor.hpp"
#include "tensogram/message/encode.hpp"
#include "tensogram/message/json_encode.hpp"
#include "tensogram/message/metadata.hpp"
#include "tensogram/message/metadata_view.hpp"
#include "tensogram/message/non_finite.hpp"
#include "tensogram/message/options.hpp"
#include "tensogram/message/pipeline_params.hpp"
#include "tensogram/message/streaming_encoder.hpp"
#include "tensogram/message/validate.hpp"

namespace tensogram {
/// The wire-format version this library reads and writes (spec 07 D2.2).
inline constexpr std::uint16_t wire_version = TGM_WIRE_VERSION;
static_assert(wire_version == format::wire_version);
}  // namespace tensogram
