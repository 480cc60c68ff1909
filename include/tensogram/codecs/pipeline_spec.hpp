// What an object's pipeline is made of (spec 03 §1): one stage of each kind —
// encoding, filter, compression — with its parameters as typed values.
//
// The message layer parses a descriptor's names and parameter keys into a
// `pipeline_spec` once (tensogram/message/pipeline_params.hpp: keys, types
// and defaults of spec 03 §2); the codecs layer builds and runs a pipeline
// from it and never sees a descriptor or a CBOR key. Stage names are looked
// up here, in the codecs' own tables (`select_*`), so that a name this build
// does not provide fails the same way wherever it is met.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <variant>
#include <vector>

#include "tensogram/codecs/blosc2.hpp"
#include "tensogram/codecs/simple_packing.hpp"
#include "tensogram/codecs/sz3.hpp"
#include "tensogram/codecs/zfp.hpp"
#include "tensogram/codecs/zstd.hpp"
#include "tensogram/core/dtype.hpp"

namespace tensogram::codecs {

// ---------------------------------------------------------------------------
// Stage 1: encoding (spec 03 §4).

/// `encoding = none`: the element bytes pass unchanged.
struct no_encoding {};

/// In the order of the encoding table (src/codecs/transform_stages.cpp).
using encoding_params = std::variant<no_encoding, simple_packing_params>;

// ---------------------------------------------------------------------------
// Stage 2: filter (spec 03 §5).

/// `filter = none`.
struct no_filter {};

/// `shuffle`: the byte transposition over elements of `element_size` bytes.
struct shuffle_params {
  std::size_t element_size = 0;
};

/// In the order of the filter table (src/codecs/transform_stages.cpp).
using filter_params = std::variant<no_filter, shuffle_params>;

// ---------------------------------------------------------------------------
// Stage 3: compression (spec 03 §6–§8).

/// `compression = none`: the stage-2 output is the payload (spec 03 §8.3).
struct no_compression {};

/// `szip` as an object states it (spec 03 §7.2). Bits per sample and the
/// MSB/3BYTE flags are not stated: the pipeline derives them from the
/// stages before.
struct szip_stage_params {
  std::uint32_t rsi = 0;
  std::uint32_t block_size = 0;
  /// libaec flags as stated (szip_flags in szip.hpp).
  std::uint32_t flags = 0;
  /// Bit offsets of the RSI starts, written by the encoder (spec 03 §7.4);
  /// range decode needs them.
  std::optional<std::vector<std::uint64_t>> block_offsets;
};

struct zstd_params {
  int level = zstd_default_level;
};

struct lz4_params {};

/// `blosc2` as an object states it (spec 03 §8.4.1): codec and level. The
/// typesize is derived from the stages before; filters and chunking are the
/// reference's fixed choices.
struct blosc2_stage_params {
  blosc2_codec codec = blosc2_codec::lz4;
  int clevel = 5;
};

struct rle_params {};
struct roaring_params {};

/// In the order of the compressor table (src/codecs/compressors.cpp).
using compression_params =
    std::variant<no_compression, szip_stage_params, zstd_params, lz4_params, blosc2_stage_params, zfp_params,
                 sz3_params, rle_params, roaring_params>;

/// One object's pipeline: the element type it runs over and its three stages.
struct pipeline_spec {
  dtype element_type = dtype::uint8;
  encoding_params encoding;
  filter_params filter;
  compression_params compression;
};

// ---------------------------------------------------------------------------
// Stage names (spec 02 §17; all nine compression names are built in).

[[nodiscard]] bool is_known_encoding(std::string_view name) noexcept;
[[nodiscard]] bool is_known_filter(std::string_view name) noexcept;
[[nodiscard]] bool is_known_compression(std::string_view name) noexcept;

/// The parameters of the stage `name`, with their defaults, for the caller
/// to fill in. Throws `encoding_error` "unknown encoding: X" and, for a dtype
/// the stage refuses (spec 03 §3.2), "X only supports float64 dtype; got Y".
[[nodiscard]] encoding_params select_encoding(std::string_view name, dtype element_type);
/// Throws `encoding_error` "unknown filter: X".
[[nodiscard]] filter_params select_filter(std::string_view name);
/// Throws `encoding_error` "unknown compression: X" and, for a dtype the
/// codec refuses, `compression "X" only supports dtype=Y, got dtype=Z`.
[[nodiscard]] compression_params select_compression(std::string_view name, dtype element_type);

}  // namespace tensogram::codecs
