// An object's pipeline (encoding → filter → compression, spec 03 §1) built
// from a typed `pipeline_spec`, run in both directions.
//
// Each stage is an object behind a small interface, made by the stage
// tables from its typed parameters (src/codecs/compressor.hpp,
// src/codecs/transform_stage.hpp); the pipeline only strings them together:
// no stage names, no parameter keys, no per-codec branches. Descriptors are
// turned into pipelines by the message layer (`tensogram::build_pipeline`,
// tensogram/message/pipeline_params.hpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "tensogram/codecs/pipeline_spec.hpp"
#include "tensogram/core/buffer.hpp"
#include "tensogram/core/byte_order.hpp"
#include "tensogram/core/dtype.hpp"

namespace tensogram::codecs {

class encoding_stage;
class filter_stage;
class compressor;
struct compressor_entry;

/// How `pipeline::decode` runs and what it may return.
struct decode_settings {
  /// Splits simple_packing, shuffle and blosc2 blocks (same bytes).
  std::uint32_t threads = 0;
  /// The caller writes into the result (mask restoration): never return
  /// the payload itself.
  bool writable = false;
  /// Where the payload starts in its message, named by the size-gate
  /// error of an object stored as is (spec 01 §19 error 39).
  std::optional<std::uint64_t> payload_offset;
};

class pipeline {
 public:
  /// Makes every stage from its parameters, deriving what the stages before
  /// decide (szip bits per sample, blosc2 typesize; spec 03 §7.2, §8.4.1),
  /// and checks what the codecs check before running (szip's limits, §7.2):
  /// `encoding_error`s.
  explicit pipeline(pipeline_spec spec);
  ~pipeline();
  pipeline(pipeline&&) noexcept;
  pipeline& operator=(pipeline&&) noexcept;
  pipeline(const pipeline&) = delete;
  pipeline& operator=(const pipeline&) = delete;

  /// Stricter checks for writing (spec 03 §3.3, §7.6): rejects the
  /// combinations the reference accepts but that do not round-trip (zfp or
  /// sz3 after simple_packing or shuffle or on non-float64 data;
  /// simple_packing + szip with B ∉ {8, 16, 24, 32}).
  void check_encodable() const;

  /// Every stage `none`: the payload is the element bytes.
  [[nodiscard]] bool is_identity() const noexcept;
  /// "Intra-codec friendly" (spec 03 §13): zstd, blosc2, simple_packing or
  /// shuffle.
  [[nodiscard]] bool uses_intra_threads() const noexcept;

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
  /// element count (spec 03 §9). zfp and sz3 objects of any dtype and byte
  /// order give the reference decoder's bytes (spec 03 §3.3).
  ///
  /// An object that needs no decoding comes back as `payload` itself (a
  /// zero-copy view sharing its ownership) unless `writable`; anything else
  /// is a buffer of its own that the last stage wrote into (uninitialised
  /// memory, never zero-filled first, no copies between stages).
  [[nodiscard]] buffer decode(const buffer& payload, std::uint64_t n, byte_order declared,
                              byte_order out_order, const decode_settings& settings = {}) const;

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
  std::unique_ptr<const encoding_stage> encoding_;  // null: `none`
  std::string_view encoding_name_;                  // for the size-gate error text
  std::unique_ptr<const filter_stage> filter_;      // null: `none`
  const compressor_entry* compression_ = nullptr;   // the codec's row of the compressor table
  std::unique_ptr<const compressor> compressor_;
  bool uses_intra_threads_ = false;
};

}  // namespace tensogram::codecs
