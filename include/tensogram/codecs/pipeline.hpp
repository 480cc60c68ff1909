// The stage registry: resolves an object's pipeline (encoding → filter →
// compression) from its descriptor, validates the combination in the
// reference's check order (spec 03 §3) and runs it in both directions.
//
// Stages this build provides: encoding none/simple_packing; filter
// none/shuffle; compression none/szip/zstd/lz4/blosc2/zfp/sz3/rle/roaring
// (all nine names of spec 02 §17).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "tensogram/codecs/blosc2.hpp"
#include "tensogram/codecs/simple_packing.hpp"
#include "tensogram/codecs/sz3.hpp"
#include "tensogram/codecs/szip.hpp"
#include "tensogram/codecs/zfp.hpp"
#include "tensogram/core/buffer.hpp"
#include "tensogram/message/descriptor.hpp"

namespace tensogram::codecs {

/// Stage names the wire format defines (spec 02 §17).
[[nodiscard]] bool is_known_encoding(std::string_view name) noexcept;
[[nodiscard]] bool is_known_filter(std::string_view name) noexcept;
[[nodiscard]] bool is_known_compression(std::string_view name) noexcept;

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

class pipeline {
 public:
  enum class compressor { none, szip, zstd, lz4, blosc2, zfp, sz3, rle, roaring };

  /// Resolves every stage and parameter (decode side and pre-encoded mode:
  /// all parameters must be present). Throws `encoding_error` for unknown or
  /// unsupported stages and illegal combinations, `metadata_error` for
  /// missing or ill-typed parameters.
  [[nodiscard]] static pipeline build(const data_object_descriptor& d);

  /// Stricter checks for writing (spec 03 §3.3, §7.6): rejects the
  /// combinations the reference accepts but that do not round-trip (zfp or
  /// sz3 after simple_packing or shuffle or on non-float64 data; simple_packing + szip
  /// with B ∉ {8, 16, 24, 32}).
  void check_encodable() const;

  [[nodiscard]] bool is_identity() const noexcept;
  /// "Intra-codec friendly" (spec 03 §13): zstd, blosc2, simple_packing or
  /// shuffle.
  [[nodiscard]] bool uses_intra_threads() const noexcept;
  [[nodiscard]] compressor compression() const noexcept { return compressor_; }

  /// Size of the encoding stage's output (the "X" of spec 03 §9.2).
  [[nodiscard]] std::uint64_t encoded_size(std::uint64_t n) const;
  /// Size of what `decode` returns for N elements: 8·N for simple_packing
  /// and for zfp (which decodes N doubles whatever the dtype, spec 03 §3.3),
  /// else `encoded_size`. Differs from N·W only for objects the reference
  /// wrote with zfp on a dtype that is not 8 bytes wide.
  [[nodiscard]] std::uint64_t decoded_size(std::uint64_t n) const;

  struct encoded {
    std::vector<std::byte> payload;
    /// For szip: RSI start bit offsets, to store as `szip_block_offsets`.
    std::optional<std::vector<std::uint64_t>> szip_block_offsets;
  };
  /// Runs encoding, filter and compression over `raw` (N elements in
  /// `declared` order). `threads` ≥ 1 splits simple_packing and shuffle into
  /// chunks (same bytes), gives zstd worker threads (different bytes, as in
  /// the reference, spec 03 §13) and blosc2 block threads (same bytes).
  [[nodiscard]] encoded encode(std::span<const std::byte> raw, std::uint64_t n, byte_order declared,
                               std::uint32_t threads = 0) const;

  /// Decodes a payload to N elements in `out_order` (float64 for
  /// simple_packing), `decoded_size(n)` bytes. Sizes are checked against the
  /// descriptor. zfp and sz3 objects of any dtype and byte order give the
  /// reference decoder's bytes (spec 03 §3.3). The result owns its bytes
  /// (buffers the last stage wrote into; never zero-filled first).
  [[nodiscard]] buffer decode(std::span<const std::byte> payload, std::uint64_t n, byte_order declared,
                              byte_order out_order, std::uint32_t threads = 0) const;

  /// Elements `[offset, offset + count)` only (spec 03 §10); for zfp and sz3
  /// the bytes `[offset·W, (offset + count)·W)` of the full decode. Throws
  /// `encoding_error` for filters, bitmask and codecs without range support,
  /// `compression_error` for szip without block offsets.
  [[nodiscard]] std::vector<std::byte> decode_range(std::span<const std::byte> payload, std::uint64_t n,
                                                    byte_order declared, byte_order out_order,
                                                    std::uint64_t offset, std::uint64_t count) const;

  /// Range decode restrictions that do not depend on the range (§10).
  void check_range_decode() const;

 private:
  dtype dtype_ = dtype::uint8;
  std::optional<simple_packing_params> packing_;
  std::optional<std::size_t> shuffle_size_;
  compressor compressor_ = compressor::none;
  szip_params szip_;
  std::optional<std::vector<std::uint64_t>> szip_offsets_;
  int zstd_level_ = 3;
  blosc2_params blosc2_;
  zfp_params zfp_;
  sz3_params sz3_;
};

}  // namespace tensogram::codecs
