// Pieces of the buffered encoder (encode.cpp) that the streaming encoder
// (streaming_encoder.cpp) shares, so that both modes validate objects, run
// pipelines and lay out data-object frames with one implementation: spec 01
// §18 requires streaming data frames to be byte-identical to buffered ones.
// Internal: not installed, not part of the public API.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "tensogram/format/frame.hpp"
#include "tensogram/message/descriptor.hpp"
#include "tensogram/message/encode.hpp"
#include "tensogram/message/metadata.hpp"
#include "tensogram/message/options.hpp"

namespace tensogram::detail {

/// Payloads from this size on may use the thread budget (spec 02 §13
/// `parallel_threshold_bytes` default).
inline constexpr std::uint64_t parallel_threshold_bytes = 65536;

/// One object ready to be framed: final descriptor (pipeline parameters and
/// masks filled in), its canonical CBOR and the payload region.
struct prepared_object {
  data_object_descriptor descriptor;
  std::vector<std::byte> cbor;
  /// Encoded payload region when the pipeline or masks produced new bytes.
  std::vector<std::byte> owned;
  /// The payload region to write: `owned`, or the caller's bytes verbatim.
  std::span<const std::byte> payload;
  /// The payload is the caller's float bytes stored verbatim and must still
  /// be screened for NaN / ±Inf (the strict check, spec 02 §9) while it is
  /// copied into the frame.
  bool scan_nan = false;
  bool scan_inf = false;
  /// Frame `total_length` (spec 01 §4.1), without padding.
  std::uint64_t frame_length = 0;
};

/// Validates one object (spec 02 §13 encode-time validation), runs its
/// pipeline (raw mode) or checks it (pre-encoded mode), and serialises the
/// final descriptor. `index` only appears in error messages; `intra` is the
/// thread budget the codec may use. Throws `metadata_error` /
/// `encoding_error`.
[[nodiscard]] prepared_object prepare_object(const object_input& in, std::size_t index,
                                             const encode_options& options, bool pre_encoded,
                                             std::uint32_t intra);

/// The thread budget of spec 03 §13: `options.threads` if > 0, else the
/// `TENSOGRAM_THREADS` environment variable (blank = 0). Throws
/// `encoding_error` for an unparseable value.
[[nodiscard]] std::uint32_t thread_budget(const encode_options& options);

/// Checks the mask methods of `options` (spec 02 §13); throws
/// `metadata_error` for an unknown one.
void validate_mask_options(const encode_options& options);

/// The client-metadata rules of spec 02 §3.3 steps 1–2, in the buffered
/// encoder's order: no message-level `_reserved_`; with `object_count`, no
/// more `base` entries than objects; every `base[i]` a map without a
/// top-level `_reserved_`. Throws `metadata_error`.
void validate_client_metadata(const global_metadata& metadata,
                              std::optional<std::size_t> object_count = std::nullopt);

/// Header of `obj`'s data-object frame (CBOR-after layout, spec 01 §13.1):
/// flags `0x0001 | (0x0002 if hashing)`.
[[nodiscard]] format::frame_header data_frame_header(const prepared_object& obj, bool hashing) noexcept;

/// The 20-byte footer `[cbor_offset][hash][ENDF]` of `obj`'s data frame.
[[nodiscard]] std::array<std::byte, format::data_footer_size> data_frame_footer(
    const prepared_object& obj, std::uint64_t digest) noexcept;

/// Writes `obj`'s whole data-object frame (`obj.frame_length` bytes) at
/// `dst` and returns its slot digest (0 without hashing). The payload is
/// copied, screened and hashed block by block in one pass. Throws
/// `encoding_error` when the screen finds a NaN / ±Inf the options forbid.
std::uint64_t write_data_frame(std::byte* dst, const prepared_object& obj, bool hashing);

/// The descriptor fields `_reserved_.tensor` is built from (spec 02 §3.3
/// step 4) and nothing else: what the streaming encoder keeps per object
/// until `finish()` (codec parameters such as `szip_block_offsets` can be
/// large and are not needed there).
[[nodiscard]] data_object_descriptor tensor_fields(const data_object_descriptor& d);

}  // namespace tensogram::detail
