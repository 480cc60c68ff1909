// Stage 3 behind one interface (spec 03 §6): every compressor compresses,
// decompresses to the size the element count implies, and optionally serves
// byte ranges of its decompressed stream. The nine codecs and what each can
// do are rows of one table (compressors.cpp), indexed by the alternative of
// `compression_params` an object's spec holds.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tensogram/codecs/pipeline.hpp"
#include "tensogram/codecs/pipeline_spec.hpp"
#include "tensogram/core/buffer.hpp"
#include "tensogram/core/byte_order.hpp"
#include "tensogram/core/dtype.hpp"

namespace tensogram::codecs {

/// What stage 3 receives, as the reference describes it to the codec
/// (spec 03 §7.2 bits per sample, §8.4.1 typesize).
struct compressor_input {
  dtype element_type = dtype::uint8;
  /// Bits per element of the stage input: B after simple_packing, else 8
  /// after shuffle, else 8·W (the dtype's width; 0 for bitmask).
  std::uint32_t sample_bits = 8;
  /// simple_packing precedes: the input is an MSB-first bit stream.
  bool bit_packed = false;
};

struct compress_context {
  /// Byte order of the original elements (zfp and sz3 compress host-order
  /// doubles, spec 03 §8.6).
  byte_order declared = byte_order::little;
  std::uint32_t threads = 0;
};

struct decompress_context {
  std::uint64_t count = 0;   ///< N, the object's element count
  std::size_t expected = 0;  ///< X bytes (spec 03 §9.2)
  byte_order declared = byte_order::little;
  std::size_t swap_unit = 1;  ///< of the dtype (spec 03 §1.2)
  bool last_stage = true;     ///< no filter or encoding reads the output
  std::uint32_t threads = 0;
};

struct decompressed {
  /// A buffer of the compressor's own (writable) or, for `none`, the
  /// payload itself.
  buffer bytes;
  /// The order the bytes are in: the declared one, except where a codec of
  /// host-order doubles left them in host order (see compressors.cpp).
  byte_order order = byte_order::little;
};

/// Writes stage-input bytes [offset, offset + out.size()) to `out`.
using chunk_fill = std::function<void(std::uint64_t offset, std::span<std::byte> out)>;
/// Takes decompressed bytes [offset, offset + bytes.size()).
using chunk_sink = std::function<void(std::uint64_t offset, std::span<const std::byte> bytes)>;

class compressor {
 public:
  virtual ~compressor() = default;

  /// The compressed stream of `in` (the stage-2 output).
  [[nodiscard]] virtual pipeline::encoded compress(std::span<const std::byte> in,
                                                   const compress_context& context) const = 0;

  /// The decompressed stream, `context.expected` bytes (zfp: 8·N), in a
  /// buffer allocated for it and decompressed into directly where the codec
  /// allows. Sizes are checked before anything is allocated from a claim.
  [[nodiscard]] virtual decompressed decompress(const buffer& payload,
                                                const decompress_context& context) const = 0;

  /// Decompressed bytes [byte_pos, byte_pos + byte_size) of a stream that
  /// decompresses to `total` bytes (spec 03 §10), for the codecs whose row
  /// says `range_decode::byte_range`.
  [[nodiscard]] virtual std::vector<std::byte> decompress_range(std::span<const std::byte> payload,
                                                                std::uint64_t byte_pos,
                                                                std::uint64_t byte_size,
                                                                std::uint64_t total) const;

  /// Whether the codec takes its input and gives its output in pieces
  /// (compress_chunked, decompress_chunked), so that the stage before it
  /// produces, and the stage after it consumes, pieces that stay in cache
  /// instead of a buffer of the whole stream.
  [[nodiscard]] virtual bool chunked() const noexcept { return false; }

  /// Whether the chunked calls use `threads` themselves (calling `fill` and
  /// `sink` concurrently for different pieces); otherwise a caller with
  /// threads splits the stages instead.
  [[nodiscard]] virtual bool chunked_threads() const noexcept { return false; }

  /// For a chunked codec: compresses the `size` bytes of a stage input that
  /// `fill` produces in pieces (multiples of `unit` bytes) as the codec asks
  /// for them. Same output as `compress` over the whole input, whatever
  /// `threads`.
  [[nodiscard]] virtual pipeline::encoded compress_chunked(std::uint64_t size, std::size_t unit,
                                                           const chunk_fill& fill,
                                                           std::uint32_t threads) const;

  /// For a chunked codec: decompresses `expected` bytes and hands them to
  /// `sink` in pieces (multiples of `unit` bytes): in order when `threads`
  /// <= 1, else possibly concurrently.
  virtual void decompress_chunked(const buffer& payload, std::size_t expected, std::size_t unit,
                                  const chunk_sink& sink, std::uint32_t threads) const;

  /// For a `whole_then_slice` codec decoding N host-order doubles (zfp): the
  /// doubles [first, first + count) of the N, host order, equal to the same
  /// slice of a full decode, when the codec can produce them without one
  /// (zfp fixed-rate seeks, spec 03 §8.6); std::nullopt otherwise.
  [[nodiscard]] virtual std::optional<std::vector<std::byte>> decompress_doubles_range(
      std::span<const std::byte> /*payload*/, std::uint64_t /*n*/, std::uint64_t /*first*/,
      std::uint64_t /*count*/) const {
    return std::nullopt;
  }

  /// Range-decode refusals that depend on the parameters (szip without block
  /// offsets), checked before any range is read.
  virtual void check_range_decode() const {}

  /// Refusals at writing that depend on the parameters (spec 03 §7.6).
  virtual void check_encodable() const {}
};

/// How a codec serves `decode_range` (spec 03 §10).
enum class range_decode : std::uint8_t {
  unsupported,       ///< "range decode not supported for this compressor"
  byte_range,        ///< `decompress_range` over the decompressed stream
  whole_then_slice,  ///< the full decode, sliced (spec 03 §8.6)
};

/// What a codec is, beyond its interface.
struct compressor_traits {
  /// The only dtype the codec takes (spec 03 §3.2), when it is restricted.
  std::optional<dtype> only_dtype;
  range_decode range = range_decode::unsupported;
  /// "Intra-codec friendly" (spec 03 §13).
  bool uses_threads = false;
  /// `none`: the stage-2 output is the payload.
  bool stores_input = false;
  /// Compresses host-order float64: written only directly over float64
  /// data (spec 03 §3.3).
  bool float64_only = false;
  /// Decodes N doubles (8·N bytes) whatever the dtype (spec 03 §3.3, §8.6).
  bool decodes_n_doubles = false;
};

struct compressor_entry {
  std::string_view name;
  std::size_t params_index = 0;  ///< its alternative of `compression_params`
  compression_params (*defaults)() = nullptr;
  std::unique_ptr<const compressor> (*make)(compression_params&&, const compressor_input&) = nullptr;
  compressor_traits traits;
};

/// The row of the codec whose parameters `params` holds.
[[nodiscard]] const compressor_entry& compressor_entry_of(const compression_params& params) noexcept;

/// Throws the `encoding_error` of spec 03 §3.2 when the codec does not take
/// `element_type` (`compression "rle" only supports dtype=bitmask, …`).
void check_element_type(const compressor_entry& e, dtype element_type);

/// "descriptor claims X decoded byte(s) but frame payload is Y byte(s)"
/// (spec 03 §9.1), the start of the size-gate error texts.
[[nodiscard]] std::string payload_size_mismatch(std::uint64_t claimed, std::size_t payload_size);

}  // namespace tensogram::codecs
