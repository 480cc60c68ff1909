// Buffered message encoding (spec 01 §17, spec 02 §3.3, §13).
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "tensogram/message/descriptor.hpp"
#include "tensogram/message/metadata.hpp"
#include "tensogram/message/options.hpp"

namespace tensogram {

/// One object to encode: its descriptor and its raw bytes (in the
/// descriptor's byte order; encoder never swaps).
struct object_input {
  data_object_descriptor descriptor;
  std::span<const std::byte> data;
};

/// Encodes one message with the frames, order and bytes the reference emits
/// by default: header metadata, header index, header hash, data objects,
/// postamble; every frame 8-aligned; two-pass index.
///
/// Throws `metadata_error` for a client `_reserved_`, more `base` entries
/// than objects, an invalid descriptor or a data length that does not match
/// the shape; `encoding_error` for NaN/Inf input (unless allowed) or a
/// pipeline this build does not provide.
[[nodiscard]] std::vector<std::byte> encode(const global_metadata& metadata,
                                            std::span<const object_input> objects,
                                            const encode_options& options = {});

/// As `encode`, writing into `out` (resized to the message length). Reusing
/// one vector across calls avoids re-allocating and re-faulting its pages.
void encode_into(const global_metadata& metadata, std::span<const object_input> objects,
                 const encode_options& options, std::vector<std::byte>& out);

/// Payloads are already encoded per their descriptors and are stored
/// verbatim (no NaN scan, no masks, no parameter computation); descriptors
/// are still validated (spec 02 §13, pre-encoded mode).
[[nodiscard]] std::vector<std::byte> encode_pre_encoded(const global_metadata& metadata,
                                                        std::span<const object_input> objects,
                                                        const encode_options& options = {});

/// The `_reserved_`-enriched metadata the encoder writes for `descriptors`
/// (spec 02 §3.3 steps 1–5). Throws `metadata_error` on client `_reserved_`
/// or too many base entries.
[[nodiscard]] global_metadata enrich_metadata(const global_metadata& metadata,
                                              std::span<const data_object_descriptor> descriptors,
                                              const provenance& prov);

}  // namespace tensogram
