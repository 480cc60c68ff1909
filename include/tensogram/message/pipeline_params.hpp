// A descriptor's pipeline (spec 02 §4.2, spec 03 §2): its stage names and
// flat parameter keys turned into a typed `codecs::pipeline_spec` — the one
// place that knows each key, its CBOR type, its default and its error texts
// — and the keys the encoder writes back.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "tensogram/codecs/pipeline.hpp"
#include "tensogram/codecs/pipeline_spec.hpp"
#include "tensogram/message/descriptor.hpp"

namespace tensogram {

/// The descriptor's pipeline as a typed spec, in the reference's check
/// order (spec 03 §3.1 step 4): encoding, filter, compression, each stage's
/// name (and the dtypes it takes) before its keys. Every parameter must be
/// present (decode side and pre-encoded mode). Missing, ill-typed or
/// out-of-range keys are `metadata_error`s with the texts of spec 03 §2;
/// unknown names, refused dtypes and values a stage rejects
/// (`sp_bits_per_value` > 64, an unknown `blosc2_codec`, `zfp_mode` or
/// `sz3_error_bound_mode`) `encoding_error`s.
[[nodiscard]] codecs::pipeline_spec read_pipeline_spec(const data_object_descriptor& d);

/// The descriptor's pipeline, built: `codecs::pipeline(read_pipeline_spec(d))`.
[[nodiscard]] codecs::pipeline build_pipeline(const data_object_descriptor& d);

/// Encode-time simple_packing parameter resolution (spec 03 §4.3): with
/// neither `sp_reference_value` nor `sp_binary_scale_factor`, computes all
/// four keys from `raw` (float64 in the declared order) and writes them into
/// `d.params`; with both, inserts `sp_decimal_scale_factor = 0` if absent;
/// with only one, throws `metadata_error`. No-op for other encodings.
/// Returns true when it computed the parameters, which also proves every
/// value finite (the computation rejects NaN/±Inf), so callers can skip a
/// separate non-finite scan. `threads` ≥ 2 splits the scan (same result).
bool resolve_simple_packing_params(data_object_descriptor& d, std::span<const std::byte> raw,
                                   std::uint32_t threads = 0);

/// Stores the RSI start offsets the szip encoder found as
/// `szip_block_offsets` (spec 03 §7.4).
void write_szip_block_offsets(data_object_descriptor& d, std::span<const std::uint64_t> offsets);

/// Checks caller-supplied `szip_block_offsets` of a pre-encoded payload of
/// `payload_len` bytes (spec 03 §12 item 4): only with szip, a non-empty
/// array of u64 starting at 0, strictly increasing, within 8·payload_len
/// bits. Throws `metadata_error`.
void check_pre_encoded_szip_offsets(const data_object_descriptor& d, std::size_t payload_len);

}  // namespace tensogram
