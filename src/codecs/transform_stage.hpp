// Stages 1 and 2 behind small interfaces (spec 03 §4, §5): an encoding maps
// N elements to a stream whose size depends only on N, and serves element
// ranges of it; a filter permutes bytes (same size in and out). `none` is no
// stage at all: the pipeline passes the bytes on without touching them.
// Each kind has one table (transform_stages.cpp), indexed by the
// alternative of its parameter variant.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string_view>

#include "tensogram/codecs/pipeline_spec.hpp"
#include "tensogram/core/byte_order.hpp"
#include "tensogram/core/dtype.hpp"

namespace tensogram::codecs {

/// Where elements [offset, offset + count) lie in an encoded stream: whole
/// bytes, and the bit of the first byte at which they start.
struct stream_range {
  std::uint64_t byte_start = 0;
  std::uint64_t byte_size = 0;
  std::uint64_t first_bit = 0;
};

class encoding_stage {
 public:
  virtual ~encoding_stage() = default;

  /// Bytes of the encoded stream of N elements (the "X" of spec 03 §9.2).
  [[nodiscard]] virtual std::uint64_t encoded_size(std::uint64_t n) const = 0;
  /// Bytes of one decoded element.
  [[nodiscard]] virtual std::size_t decoded_width() const noexcept = 0;

  /// Throws when `in` is not N elements this stage encodes (before any
  /// output is allocated).
  virtual void check_input(std::span<const std::byte> in, std::uint64_t n) const = 0;
  /// Writes `encoded_size(n)` bytes to `out`.
  virtual void encode(std::span<const std::byte> in, std::uint64_t n, byte_order declared,
                      std::span<std::byte> out, std::uint32_t threads) const = 0;
  /// Bytes of whole elements at which the encoded stream may be cut so
  /// that its pieces are encoded apart (encode_part) and decoded apart
  /// (decode_located from bit 0); 0 when it may not.
  [[nodiscard]] virtual std::size_t chunk_unit() const noexcept { return 0; }
  /// Writes the encoded-stream bytes [offset, offset + out.size()) of the
  /// N elements of `in` to `out`; offset and (but for the last piece) size
  /// are multiples of chunk_unit().
  virtual void encode_part(std::span<const std::byte> /*in*/, std::uint64_t /*offset*/,
                           byte_order /*declared*/, std::span<std::byte> /*out*/) const {}
  /// Writes N decoded elements to `out` in `out_order`.
  virtual void decode(std::span<const std::byte> in, std::uint64_t n, byte_order out_order,
                      std::span<std::byte> out, std::uint32_t threads) const = 0;

  /// Range decode (spec 03 §10): where the elements lie in the stream …
  [[nodiscard]] virtual stream_range locate(std::uint64_t offset, std::uint64_t count) const noexcept = 0;
  /// … and their decoding from those bytes.
  virtual void decode_located(std::span<const std::byte> in, std::uint64_t first_bit, std::uint64_t count,
                              byte_order out_order, std::span<std::byte> out) const = 0;
};

class filter_stage {
 public:
  virtual ~filter_stage() = default;

  /// `out` has the size of `in`.
  virtual void apply(std::span<const std::byte> in, std::span<std::byte> out,
                     std::uint32_t threads) const = 0;
  virtual void undo(std::span<const std::byte> in, std::span<std::byte> out, std::uint32_t threads) const = 0;
};

struct encoding_entry {
  std::string_view name;
  std::size_t params_index = 0;  ///< its alternative of `encoding_params`
  encoding_params (*defaults)() = nullptr;
  /// Null for `none`.
  std::unique_ptr<const encoding_stage> (*make)(encoding_params&&) = nullptr;
  /// The only dtype the encoding takes (spec 03 §3.2), when restricted.
  std::optional<dtype> only_dtype;
  /// "Intra-codec friendly" (spec 03 §13).
  bool uses_threads = false;
};

struct filter_entry {
  std::string_view name;
  std::size_t params_index = 0;  ///< its alternative of `filter_params`
  filter_params (*defaults)() = nullptr;
  /// Null for `none`.
  std::unique_ptr<const filter_stage> (*make)(filter_params&&) = nullptr;
  bool uses_threads = false;
};

[[nodiscard]] const encoding_entry& encoding_entry_of(const encoding_params& params) noexcept;
[[nodiscard]] const filter_entry& filter_entry_of(const filter_params& params) noexcept;

/// Throws the `encoding_error` of spec 03 §3.2 when the encoding does not
/// take `element_type` ("simple_packing only supports float64 dtype; got X").
void check_element_type(const encoding_entry& e, dtype element_type);

/// n · width; throws `metadata_error` "element count overflows usize".
[[nodiscard]] std::uint64_t checked_element_bytes(std::uint64_t n, std::uint64_t width);

}  // namespace tensogram::codecs
